"""The jobs of a grid and the key that says whether a finished job is still valid.

A grid expands to one ``weat`` job per embeddings source × language and one ``compare`` job per
(source with a ``baseline``) × language. A job's key is the SHA-256 of everything its numbers
depend on: the options that change results (not the device or cache; a model's batch size is in
the key, since padded batches change a vector's last bits), the SHA-256 of every list file read,
the fingerprint of the embeddings file for that language
(:func:`weatkit._io.fingerprint.file_fingerprint`) or the model's identity (content hash of a local
model directory, hub id + revision otherwise), the isomorphism word lists, and the weatkit
version. A rerun reuses a finished job exactly when its key is unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

import weatkit
from weatkit._io.fingerprint import file_fingerprint
from weatkit.embeddings.default import DEFAULT_EMBEDDINGS
from weatkit.embeddings.spec import HF_PREFIX, EmbeddingsSpec
from weatkit.errors import WeatkitError
from weatkit.grid.config import GridConfig, GridSource
from weatkit.lists.sources import select_lists
from weatkit.models.hub import is_local, model_identity

#: Options that change where or how fast a number is computed, never the number (and how an
#: ``openai:`` server is asked). A model's ``batch_size`` is not one of them: padded batches
#: change a vector's last bits.
_NOT_IN_KEY = {"device", "cache", "tensor_parallel", "timeout", "max_retries", "concurrency"}


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
    """

    kind: str
    source: str
    lang: str
    baseline: str | None
    n_tests: int
    key: str

    @property
    def id(self) -> str:
        """``NAME/LANG`` or ``NAME-vs-BASELINE/LANG``."""
        name = self.source if self.baseline is None else f"{self.source}-vs-{self.baseline}"
        return f"{name}/{self.lang}"

    @property
    def file_name(self) -> str:
        """A safe, unique file name for the job's record."""
        slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", self.id.replace("/", "__"))
        digest = hashlib.sha256(f"{self.kind}\0{self.id}".encode()).hexdigest()[:8]
        return f"{slug}.{digest}.json"


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
            for k, v in _without_runtime(asdict(run.engine)).items()
            if not (k == "permutation_count" and v == "ge")  # as before the option existed
        },
        # issue 18's options enter a job's identity only when set (earlier jobs keep their keys)
        **{
            key: getattr(run, key)
            for key, default in _FIDELITY_DEFAULTS.items()
            if getattr(run, key) != default
        },
    }
    jobs: list[Job] = []
    pairs: list[tuple[GridSource, str, dict[str, object]]] = []
    for lang in config.languages:
        selection = select_lists(run.lists, (lang,), tests=run.tests)
        lists = {"sources": [s.get("sha256", s.get("path")) for s in selection.sources]}
        for source in config.sources:
            inputs = {**shared, **lists, "embeddings": _source_identity(source.spec, lang)}
            if run.isomorphism and lang != run.isomorphism:
                inputs["isomorphism"] = _iso_inputs(config, source.spec, lang)
            jobs.append(Job("weat", source.name, lang, None, len(selection.tests), _key(inputs)))
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
            "embeddings": _source_identity(source.spec, lang),
            "baseline": _source_identity(baseline.spec, lang),
        }
        jobs.append(Job("compare", source.name, lang, baseline.name, n_tests, _key(both)))
    return jobs


def _key(inputs: dict[str, object]) -> str:
    text = json.dumps(inputs, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


#: Normalisation options that enter a job's identity only when they differ from these.
_FIDELITY_DEFAULTS = {"accent_removal": "marks", "duplicates": "drop", "invisible": "drop"}


def _without_runtime(options: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in options.items() if k not in _NOT_IN_KEY}


def _source_identity(spec: EmbeddingsSpec, lang: str) -> dict[str, object]:
    """What identifies the vectors a source gives for ``lang``."""
    info: dict[str, object] = {"name": spec.name, "format": spec.fmt, "layer": spec.layer}
    if spec.is_default:
        info["input"] = DEFAULT_EMBEDDINGS
    elif spec.api_model is not None:
        info["input"] = str(spec.api_model)
    elif spec.is_contextual:
        assert spec.contextual is not None
        info["input"] = _model_identity(spec.path_for(lang).removeprefix(HF_PREFIX), spec)
        info["options"] = _without_runtime(asdict(spec.contextual))
    else:
        info["input"] = _file_identity(spec.path_for(lang))
    return info


def _model_identity(model: str, spec: EmbeddingsSpec) -> dict[str, object]:
    assert spec.contextual is not None
    if is_local(model):
        return model_identity(model, None, spec.contextual)
    return {"model": model, "revision": spec.contextual.revision or "main"}


def _iso_inputs(config: GridConfig, spec: EmbeddingsSpec, lang: str) -> dict[str, object]:
    run = config.run
    assert run.isomorphism is not None
    inputs: dict[str, object] = {
        "reference": run.isomorphism,
        "options": _without_runtime(asdict(run.iso)),
        "reference_input": _source_identity(spec, run.isomorphism)["input"],
    }
    if run.iso_words:
        inputs["words"] = [
            _file_identity(run.iso_words.replace("{lang}", code))
            for code in (lang, run.isomorphism)
        ]
    return inputs


def _file_identity(path: str) -> dict[str, object]:
    p = Path(path)
    if not p.exists():
        return {"path": path, "missing": True}  # the job reports the error when it runs
    stat = p.stat()
    return _cached_fingerprint(str(p.resolve()), stat.st_size, stat.st_mtime_ns)


@cache
def _cached_fingerprint(path: str, size: int, mtime_ns: int) -> dict[str, object]:
    """Fingerprint once per planning for a file unchanged since (size and mtime in the key)."""
    fingerprint = file_fingerprint(path)
    return {k: v for k, v in fingerprint.items() if k != "path"}
