"""The jobs of a comparison: one per model × method × language, and the key of each.

:func:`plan_compare` reads each model's kind (masked or causal LM, from its config; static word
vectors) once, here, and expands the comparison file to one :class:`CompareJob` per unit (a
model, or one checkpoint) × method × language, in the file's order: units, then methods, then
languages. A unit whose kind cannot be read is not expanded: every method of it is recorded as
``failed`` in every language (``lang`` ``*``), as before any job runs.

A job's key is the SHA-256 (:func:`weatkit.grid.jobs.job_key`) of everything its rows depend
on: the weatkit version (which pins the data sets it downloads by their SHA-256,
:mod:`weatkit.data.registry`), the method, language, unit name and model kind, the model's
identity (a local directory's content hash, a hub id with its revision, the word-vector file's
fingerprint; :func:`weatkit.grid.jobs.source_identity`), the loading options but the device and
the cache (and, for a model behind a server, what its probe computes: :func:`_served`), the
method's section (the ``weat`` run options but the engine's device), the
``scores`` section, and the job's own inputs: the SHA-256 of the word lists read (``weat``),
what a measure package declares (:attr:`weatkit.measures.plugins.Compare.inputs`: a corpus's
fingerprint, the lists' SHA-256); with ``log_items``, that a sentence-level job's record
keeps its per-item log (so a comparison that asks for the logs reruns the jobs kept without
them; the format enters no key, and without ``log_items`` the keys are those of earlier
versions). A finished job whose key is unchanged is reused
(:class:`weatkit.grid.store.JobStore`); the ``correlation`` section enters no key (the
correlations are computed from the records on every run).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import weatkit
from weatkit.crossmethod.config import CompareConfig, ModelEntry, compare_plugins
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.errors import WeatkitError, one_line
from weatkit.grid.jobs import (
    association_inputs,
    job_key,
    model_gpus,
    model_input,
    record_file_name,
    source_identity,
    without_runtime,
)
from weatkit.lists.sources import has_language, lists_identity
from weatkit.measures.plugins import load


@dataclass(frozen=True)
class CompareJob:
    """One method on one unit in one language (a :class:`weatkit.grid.jobs.RunnableJob`).

    Attributes:
        method: the method (:func:`~weatkit.crossmethod.config.all_methods`).
        entry: the unit (a model, a checkpoint ``NAME#k``, or static word vectors).
        model_kind: ``mlm``, ``glm`` or ``static``.
        lang: the language.
        key: SHA-256 of the job's inputs (see the module docstring).
        gpus: the GPUs its model needs (:func:`weatkit.grid.jobs.model_gpus`; 0 for vectors).
    """

    method: str
    entry: ModelEntry
    model_kind: str
    lang: str
    key: str
    gpus: int = 0

    @property
    def kind(self) -> str:
        return self.method

    @property
    def id(self) -> str:
        """``METHOD:MODEL:LANG``, as the manifest's ``timings_s``, ``cache`` and ``samples``."""
        return f"{self.method}:{self.entry.name}:{self.lang}"

    @property
    def file_name(self) -> str:
        return record_file_name(self.kind, self.id)


@dataclass
class ComparePlan:
    """The jobs of a comparison, and the units whose kind could not be read.

    Attributes:
        jobs: every job, in the file's order (units, methods, languages).
        failed_units: unit name -> why its kind could not be read (one line).
    """

    jobs: list[CompareJob] = field(default_factory=list)
    failed_units: dict[str, str] = field(default_factory=dict)


def plan_compare(config: CompareConfig) -> ComparePlan:
    """Every job of ``config`` with its key (see the module docstring)."""
    plan = ComparePlan()
    shared = {
        "weatkit": weatkit.__version__,
        "contextual": without_runtime(asdict(config.contextual)),
        "scores": asdict(config.scores),
    }
    sections = {method: _section_inputs(config.section(method)) for method in config.methods}
    logged = {"log_items": True} if config.log_items is not None else {}
    for entry in config.units:
        try:
            kind = entry.kind or _kind(entry.model, config.contextual)
            causal = not entry.vectors and set(config.methods) != {"weat"}
            served = _served(entry.model, config.contextual) if causal else {}
        except Exception as err:  # WeatkitError, or a library's error on this model's config
            plan.failed_units[entry.name] = one_line(err)
            continue
        unit = {"unit": entry.name, "model_kind": kind}
        if not entry.vectors:
            unit["model"] = {**model_input(entry.model, config.contextual), **served}
        gpus = 0 if entry.vectors else model_gpus(entry.model, config.contextual)
        for method in config.methods:
            for lang in config.languages:
                inputs = {
                    **shared,
                    **unit,
                    "method": method,
                    "lang": lang,
                    "section": sections[method],
                    "data": _data_inputs(config, method, lang),
                    **(logged if method != "weat" else {}),
                }
                if entry.vectors:
                    inputs["model"] = _vectors_input(entry, lang, config.contextual)
                plan.jobs.append(CompareJob(method, entry, kind, lang, job_key(inputs), gpus))
    return plan


def _served(model: str, options: ContextualOptions) -> dict[str, str]:
    """What a server computes, for the key of its jobs (with a sentence-level method, which
    scores through its completions): its identity and its probe's
    fingerprint (:func:`weatkit.scoring.probe.probe_server`), so a job scored by a server that
    since changed its model or flags on the same URL is run again, not reused; ``{}`` for a
    model that is not behind a server. A server that is down or fails the probe fails here
    (its unit is recorded as failed)."""
    from weatkit.scoring.spec import parse_model_spec

    spec = parse_model_spec(model)
    if spec.backend != "openai":
        return {}
    from weatkit.scoring.registry import get_scorer

    scorer = get_scorer(spec, options)
    return {"server": scorer.identity, "probe": scorer.probe().fingerprint}


def _kind(model: str, options: ContextualOptions) -> str:
    """``mlm`` or ``glm`` of a model spec: an ``hf`` model's from its config, a server's or
    vLLM's ``glm`` (:func:`weatkit.scoring.registry.model_kind`)."""
    from weatkit.scoring.registry import model_kind

    return model_kind(model, options)


def _section_inputs(section: Any) -> dict[str, Any]:
    """What of a method's section changes its rows: all of it, but for ``weat`` the run options
    a unit and language set (embeddings, languages, loading options: in the key apart) and the
    engine's device; its metrics only when they are not the default (``weat`` alone: earlier
    jobs keep their keys)."""
    data = asdict(section)
    run = data.get("run")
    if run is not None:
        skip = {"embeddings", "langs", "contextual", "metrics", "association"}
        data["run"] = {
            **{k: v for k, v in run.items() if k not in skip},
            "engine": without_runtime(run["engine"]),
            **association_inputs(section.run),
        }
    return data


def _data_inputs(config: CompareConfig, method: str, lang: str) -> object:
    """The job's own input files: the word lists (their SHA-256) of ``weat``, what a measure
    package's section declares (:attr:`weatkit.measures.plugins.Compare.inputs`); None for the
    data sets the version pins."""
    plugin = compare_plugins().get(method)
    if plugin is not None:
        assert plugin.compare is not None
        if plugin.compare.inputs is None:
            return None
        return load(plugin.compare.inputs)(config.section(method), lang)
    if method == "weat":
        section = config.weat
        assert section is not None
        try:
            if not has_language(section.lists, lang):
                return None  # not applicable
        except WeatkitError as err:
            return {"error": str(err)}  # the job reports it when it runs
        return lists_identity(section.lists, lang, section.tests)
    return None


def _vectors_input(entry: ModelEntry, lang: str, options: ContextualOptions) -> object:
    """The identity of a unit's static word vectors in ``lang`` (the file's fingerprint)."""
    (spec,) = parse_embeddings_specs(f"{entry.name}={entry.vectors}", options)
    return source_identity(spec, lang)["input"]
