"""The jobs of a grid and the key that says whether a finished job is still valid.

A grid expands to one ``weat`` job per embeddings source × language and one ``compare`` job per
(source with a ``baseline``) × language. A job's key is the SHA-256 of everything its numbers
depend on: the options that change results (not the device or cache; a model's batch size is in
the key, since padded batches change a vector's last bits), the SHA-256 of every list file read,
the fingerprint of the embeddings file for that language
(:func:`weatkit._io.fingerprint.file_fingerprint`) or the model's identity (content hash of a local
model directory, hub id + revision otherwise), the isomorphism word lists, and the weatkit
version. A rerun reuses a finished job exactly when its key is unchanged.

Executors (:mod:`weatkit.grid.executors`) and the record store (:mod:`weatkit.grid.store`) run
and keep any job that has what :class:`RunnableJob` names (``weatkit compare``'s jobs too); a
job's ``gpus`` follow one rule, :func:`model_gpus`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import weatkit
from weatkit._io.fingerprint import content_fingerprint
from weatkit.association.options import DEFAULT_METRICS
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.default import DEFAULT_EMBEDDINGS
from weatkit.embeddings.spec import HF_PREFIX, EmbeddingsSpec
from weatkit.errors import WeatkitError
from weatkit.grid.config import GridConfig, GridSource
from weatkit.lists.sources import select_lists
from weatkit.models.hub import is_local, model_identity
from weatkit.models.options import parse_max_memory
from weatkit.pipeline import RunConfig
from weatkit.scoring.spec import parse_model_spec

#: Options that change where or how fast a number is computed, never the number (and how an
#: ``openai:`` server is asked). A model's ``batch_size`` is not one of them: padded batches
#: change a vector's last bits.
_NOT_IN_KEY = {"device", "cache", "tensor_parallel", "timeout", "max_retries", "concurrency"}


class RunnableJob(Protocol):
    """What an executor and the record store need of a job (a grid's :class:`Job`, a
    comparison's :class:`weatkit.crossmethod.jobs.CompareJob`).

    Attributes:
        id: unique within its study (``NAME/LANG``), named in manifests and errors.
        kind: what the job computes (``weat``, ``compare``; a comparison's method).
        key: SHA-256 of its inputs: a record with another key is recomputed.
        file_name: its record's file in ``OUTPUT/jobs/`` (:func:`record_file_name`).
        gpus: the GPUs its model needs (:func:`model_gpus`): 0, 1 or a sharded model's count.
    """

    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def file_name(self) -> str: ...

    @property
    def gpus(self) -> int: ...


def record_file_name(kind: str, job_id: str) -> str:
    """A safe, unique file name for the record of job ``job_id`` of ``kind``: the id with
    unsafe characters replaced, and 8 hex digits of the SHA-256 of kind and id."""
    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", job_id.replace("/", "__"))
    digest = hashlib.sha256(f"{kind}\0{job_id}".encode()).hexdigest()[:8]
    return f"{slug}.{digest}.json"


def model_gpus(model: str, options: Any = None) -> int:
    """The GPUs a job of ``model`` (a model spec: ``hf:`` or bare id or directory, ``vllm:``,
    ``openai:``) loaded with ``options`` (``ContextualOptions``) needs::

        openai:                                   0  (a server computes)
        device cpu or mps                         0
        device_map with max_memory naming k GPUs  k  (its layers sharded over k GPUs)
        otherwise (hf, vllm)                      1

    Static word vectors need none (they are no model). An executor gives 1 as one model's share
    (``--gpus-per-job``; 0 where the cluster has no GPU).
    """
    if parse_model_spec(model).backend == "openai":
        return 0
    device = str(getattr(options, "device", "auto")).split(":")[0]
    if device in ("cpu", "mps"):
        return 0
    max_memory = getattr(options, "max_memory", None)
    if getattr(options, "device_map", None) and max_memory:
        return max(1, sum(isinstance(d, int) for d in parse_max_memory(max_memory)))
    return 1


@dataclass(frozen=True)
class Job:
    """One unit of work of a grid.

    Attributes:
        kind: ``weat`` (every selected test of one language on one source) or ``compare``
            (paired differences of ``source`` against its ``baseline``).
        source: the embeddings source's name.
        lang: the language.
        baseline: the baseline's name (``compare`` jobs).
        n_tests: tests selected for the language (before coverage checks).
        key: SHA-256 of the job's inputs (see the module docstring).
        gpus: the GPUs its model needs (:func:`model_gpus`; 0 for static vectors).
    """

    kind: str
    source: str
    lang: str
    baseline: str | None
    n_tests: int
    key: str
    gpus: int = 0

    @property
    def id(self) -> str:
        """``NAME/LANG`` or ``NAME-vs-BASELINE/LANG``."""
        name = self.source if self.baseline is None else f"{self.source}-vs-{self.baseline}"
        return f"{name}/{self.lang}"

    @property
    def file_name(self) -> str:
        """A safe, unique file name for the job's record (:func:`record_file_name`)."""
        return record_file_name(self.kind, self.id)


def plan_jobs(config: GridConfig) -> list[Job]:
    """Every job of the grid, ``weat`` jobs first, in the experiment's order.

    Raises:
        WeatkitError: a language without any selected list, or an unreadable input.
    """
    run = config.run
    shared = {
        "weatkit": weatkit.__version__,
        "lists": run.lists,
        "tests": run.tests,
        "lower": run.lower,
        "strip_accents": run.strip_accents,
        "min_coverage": run.min_coverage,
        "equalize": run.equalize,
        "fasttext_oov": run.fasttext_oov,
        "engine": {
            k: v
            for k, v in without_runtime(asdict(run.engine)).items()
            if not (k == "permutation_count" and v == "ge")  # as before the option existed
        },
        # issue 18's options enter a job's identity only when set (earlier jobs keep their keys)
        **{
            key: getattr(run, key)
            for key, default in _FIDELITY_DEFAULTS.items()
            if getattr(run, key) != default
        },
        **association_inputs(run),
    }
    jobs: list[Job] = []
    pairs: list[tuple[GridSource, str, dict[str, object]]] = []
    for lang in config.languages:
        selection = select_lists(run.lists, (lang,), tests=run.tests)
        lists = {"sources": [s.get("sha256", s.get("path")) for s in selection.sources]}
        for source in config.sources:
            inputs = {**shared, **lists, "embeddings": source_identity(source.spec, lang)}
            if run.isomorphism and lang != run.isomorphism:
                inputs["isomorphism"] = _iso_inputs(config, source.spec, lang)
            n_tests, key = len(selection.tests), job_key(inputs)
            jobs.append(Job("weat", source.name, lang, None, n_tests, key, spec_gpus(source.spec)))
            pairs.append((source, lang, {**shared, **lists}))
    for source, lang, inputs in pairs:
        if source.baseline is None:
            continue
        baseline = config.source(source.baseline)
        if source.spec.is_contextual != baseline.spec.is_contextual:
            raise WeatkitError(
                f"embeddings {source.name!r}: its baseline {baseline.name!r} must also be "
                f"{'a model' if source.spec.is_contextual else 'static vectors'} "
                "(items are normalised differently)"
            )
        n_tests = next(j.n_tests for j in jobs if j.lang == lang)
        both = {
            **inputs,
            "embeddings": source_identity(source.spec, lang),
            "baseline": source_identity(baseline.spec, lang),
        }
        gpus = spec_gpus(source.spec)
        jobs.append(Job("compare", source.name, lang, baseline.name, n_tests, job_key(both), gpus))
    return jobs


def association_inputs(run: RunConfig) -> dict[str, object]:
    """The metrics of a run and their options, as they enter a job's key: nothing for the
    default (``weat`` alone), so that earlier jobs keep their keys."""
    if run.metrics == DEFAULT_METRICS:
        return {}
    return {"metrics": list(run.metrics), "association": asdict(run.association)}


def spec_gpus(spec: EmbeddingsSpec) -> int:
    """The GPUs a job of an embeddings source needs: :func:`model_gpus` of a model, 0 for
    static vectors."""
    return model_gpus(spec.location, spec.contextual) if spec.is_contextual else 0


def job_key(inputs: dict[str, object]) -> str:
    """SHA-256 of ``inputs`` as sorted JSON: a job's key."""
    text = json.dumps(inputs, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


#: Normalisation options that enter a job's identity only when they differ from these.
_FIDELITY_DEFAULTS = {"accent_removal": "marks", "duplicates": "drop", "invisible": "drop"}


def without_runtime(options: dict[str, object]) -> dict[str, object]:
    """``options`` without those that change where or how fast a number is computed (device,
    cache): what of them enters a key."""
    return {k: v for k, v in options.items() if k not in _NOT_IN_KEY}


def source_identity(spec: EmbeddingsSpec, lang: str) -> dict[str, object]:
    """What identifies the vectors a source gives for ``lang``."""
    info: dict[str, object] = {"name": spec.name, "format": spec.fmt, "layer": spec.layer}
    if spec.is_default:
        info["input"] = DEFAULT_EMBEDDINGS
    elif spec.api_model is not None:
        info["input"] = str(spec.api_model)
    elif spec.is_contextual:
        assert spec.contextual is not None
        info["input"] = model_input(spec.path_for(lang).removeprefix(HF_PREFIX), spec.contextual)
        info["options"] = without_runtime(asdict(spec.contextual))
    else:
        info["input"] = file_identity(spec.path_for(lang))
    return info


def model_input(model: str, options: ContextualOptions) -> dict[str, object]:
    """What identifies a model: a local directory's content hash
    (:func:`weatkit.models.hub.model_identity`), a hub id with its revision."""
    if is_local(model):
        return model_identity(model, None, options)
    return {"model": model, "revision": options.revision or "main"}


def _iso_inputs(config: GridConfig, spec: EmbeddingsSpec, lang: str) -> dict[str, object]:
    run = config.run
    assert run.isomorphism is not None
    inputs: dict[str, object] = {
        "reference": run.isomorphism,
        "options": without_runtime(asdict(run.iso)),
        "reference_input": source_identity(spec, run.isomorphism)["input"],
    }
    if run.iso_words:
        inputs["words"] = [
            file_identity(run.iso_words.replace("{lang}", code)) for code in (lang, run.isomorphism)
        ]
    return inputs


def file_identity(path: str) -> dict[str, object]:
    """A file's fingerprint (:func:`weatkit._io.fingerprint.content_fingerprint`), or that it is
    missing."""
    if not Path(path).exists():
        return {"path": path, "missing": True}  # the job reports the error when it runs
    return content_fingerprint(path)
