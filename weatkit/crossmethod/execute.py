"""Run one job of a comparison in this process and return its record.

:func:`execute_compare_job` is the job function the executors run for ``weatkit compare``
(:mod:`weatkit.grid.executors`: in this process; :mod:`weatkit.grid.ray_executor`: in Ray
workers). It reads its inputs itself and writes nothing. A method that does not apply gives a
record with a ``not applicable`` row; any other exception propagates, and the executor reports
the job as failed (its record is not kept, so a rerun tries it again).

Models. A process holds the model of its current job only: a job of another model first
releases the models the earlier jobs of this process obtained, with their word-vector
extractors (:func:`holding`), and keeps its own for the next job. Jobs are planned unit by unit
and executors start them in that order, so one process (the local executor, a Ray worker) loads
a model once for all the jobs of it that it runs. Models that were in the process's pool before
(:mod:`weatkit.models.pool`) are never released, and the executor's own extractors (a grid's)
are not used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from weatkit.crossmethod.config import CompareConfig, compare_plugins
from weatkit.crossmethod.jobs import CompareJob
from weatkit.crossmethod.methods import MethodContext, NotApplicable, weat_rows
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.items.log import concat_items
from weatkit.measures.plugins import load
from weatkit.models.cache import counting
from weatkit.models.handle import ModelHandle
from weatkit.models.hub import UntrainedHeadError
from weatkit.models.pool import handles, release
from weatkit.scoring.conventions import recording, summarize

#: The model handles this process's compare jobs obtained, by the model they ran.
_HELD: dict[str, list[ModelHandle]] = {}
#: The word-vector extractors of this process's ``weat`` jobs.
_EXTRACTORS = ExtractorPool()


def execute_compare_job(
    config: CompareConfig,
    job: CompareJob,
    executor_extractors: ExtractorPool,
    *,
    show_progress: bool | None = False,
) -> dict[str, Any]:
    """The record of ``job``: ``rows`` (:data:`~weatkit.crossmethod.methods.SCORE_COLUMNS`),
    ``skipped`` (its ``not applicable`` row), ``samples`` (a section's ``limit``), ``cache`` (the
    scores it reused and computed), ``weights_loaded`` (times it read model weights) and, with
    the file's ``log_items``, ``items``: its per-item log (:func:`items_record`).

    Args:
        config: the comparison.
        job: one of its jobs (:func:`weatkit.crossmethod.jobs.plan_compare`).
        executor_extractors: the executor's extractors, unused (the process's own are released
            model by model: :func:`holding`).
        show_progress: the methods' progress bars.

    Raises:
        Exception: whatever the method raised but :class:`NotApplicable` (a failed job).
    """
    entry = job.entry
    ctx = MethodContext(
        config.contextual,
        show_progress,
        extractors=_EXTRACTORS,
        scores=config.scores,
        log_items=config.log_items is not None,
    )
    runner = weat_rows if job.method == "weat" else _plugged_rows(job.method)
    section = config.section(job.method)
    skipped: list[dict[str, str]] = []
    rows: list[dict[str, Any]] = []
    with holding(entry.model or entry.vectors):
        loads = {id(h): h.n_loads for h in handles()}
        with counting() as count, recording() as seen:
            try:
                rows = runner(entry, job.model_kind, job.lang, section, ctx)
            except (NotApplicable, UntrainedHeadError) as err:  # an encoder without an LM head
                skipped.append(skip_row(entry.name, job.lang, job.method, "not applicable", err))
        loaded = sum(h.n_loads - loads.get(id(h), 0) for h in handles())
    record = {
        "rows": [{k: _plain(v) for k, v in row.items()} for row in rows],
        "skipped": skipped,
        "samples": {key: asdict(sample) for key, sample in ctx.samples.items()},
        "cache": asdict(count) if count.cached or count.computed else None,
        "weights_loaded": loaded,
        "scoring_conventions": summarize(seen),
    }
    if ctx.log_items:
        record["items"] = items_record(ctx.items)
    return record


def _plugged_rows(method: str) -> Callable[..., list[dict[str, Any]]]:
    """The rows function a measure package declares for its section
    (:attr:`weatkit.measures.plugins.Compare.rows`)."""
    compare = compare_plugins()[method].compare
    assert compare is not None
    return load(compare.rows)


def items_record(frames: list[pd.DataFrame]) -> dict[str, list]:
    """Per-item logs as JSON: ``{"columns": [...], "data": [[...], ...]}`` of their
    :func:`~weatkit.items.log.concat_items` (Python numbers; NaN as JSON's NaN)."""
    table = concat_items(frames)
    return {
        "columns": list(table.columns),
        "data": [[_plain(v) for v in row] for row in table.itertuples(index=False)],
    }


def skip_row(model: str, lang: str, method: str, status: str, reason: object) -> dict[str, str]:
    """A row of ``skipped.csv``."""
    return {"model": model, "lang": lang, "method": method, "status": status, "reason": str(reason)}


@contextmanager
def holding(model: str) -> Iterator[None]:
    """Run a job of ``model`` holding no other model that compare's jobs obtained in this
    process: those are released first, with their extractors; the models first obtained inside
    the block are kept for the next job."""
    released = [h for other in [m for m in _HELD if m != model] for h in _HELD.pop(other)]
    for handle in released:
        release(handle)
    for key, extractor in list(_EXTRACTORS.extractors.items()):
        if any(extractor.handle is handle for handle in released):
            del _EXTRACTORS.extractors[key]
    before = {id(h) for h in handles()}
    try:
        yield
    finally:
        _HELD.setdefault(model, []).extend(h for h in handles() if id(h) not in before)


def release_held() -> None:
    """Release every model compare's jobs obtained in this process (after a local run)."""
    for held in _HELD.values():
        for handle in held:
            release(handle)
    _HELD.clear()
    _EXTRACTORS.extractors.clear()


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (records are JSON)."""
    return value.item() if isinstance(value, np.generic) else value
