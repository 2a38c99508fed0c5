"""Run one grid job in this process and return its record (what :class:`JobStore` saves).

This is the unit every executor runs: :class:`weatkit.grid.executors.LocalExecutor` calls it in
turn, :class:`weatkit.grid.ray_executor.RayExecutor` calls it inside Ray tasks. It reads its
inputs itself (vector files, models) and writes nothing, so it may run on any machine that sees
the same files.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from weatkit.embeddings.contextual import ExtractorPool
from weatkit.grid.compare import paired_differences
from weatkit.grid.config import GridConfig
from weatkit.grid.jobs import Job
from weatkit.pipeline import run as run_tests

#: The signature of :func:`execute_job`: ``(config, job, the worker's models) -> record``;
#: executors run another one to wrap it, or the jobs of another study (``weatkit compare``).
JobFunction = Callable[[Any, Any, ExtractorPool], dict[str, Any]]


def execute_job(config: GridConfig, job: Job, extractors: ExtractorPool) -> dict[str, Any]:
    """The record of ``job``: its tables as JSON records, skipped tests, report and timings.

    Args:
        config: the experiment.
        job: a ``weat`` or ``compare`` job of ``config``.
        extractors: loaded transformer models, reused across the jobs of one process.

    Raises:
        WeatkitError: the job's inputs cannot be read or none of its tests can run.
    """
    source = config.source(job.source)
    if job.kind == "compare":
        assert job.baseline is not None
        t0 = time.perf_counter()
        table, skipped = paired_differences(
            source.spec, config.source(job.baseline).spec, job.lang, config.run, extractors
        )
        return {
            "comparisons": _records(table),
            "skipped": skipped,
            "timings_s": {"compare": round(time.perf_counter() - t0, 3)},
        }
    run_config = replace(config.run, embeddings=(source.spec,), langs=(job.lang,))
    result = run_tests(run_config, show_progress=False, extractors=extractors, allow_empty=True)
    return {
        "results": _records(result.results),
        "isomorphism": _records(result.isomorphism),
        "influence": _records(result.influence),
        "null": _records(result.null),
        "association": _records(result.association),
        "association_items": _records(result.association_items),
        "association_influence": _records(result.association_influence),
        "skipped_metrics": result.skipped_metrics,
        "skipped": result.skipped,
        "report": result.report,
        "embeddings": result.manifest["embeddings"],
        "list_sources": result.manifest["list_sources"],
        "timings_s": dict(result.manifest["timings_s"]),  # type: ignore[arg-type]
    }


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}
        for row in table.to_dict(orient="records")
    ]
