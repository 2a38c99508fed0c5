"""Experiment grids: embeddings × languages from one YAML/TOML file, resumable, with baselines.

See :mod:`weatkit.grid.config` (the file format), :mod:`weatkit.grid.jobs` (jobs and their
keys), :mod:`weatkit.grid.runner` (running and collating), :mod:`weatkit.grid.executors` and
:mod:`weatkit.grid.ray_executor` (where jobs run) and :mod:`weatkit.grid.compare` (paired
differences to a baseline). :func:`grid` is the entry point.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from weatkit.grid.config import GridConfig, load_grid_config
from weatkit.grid.executors import Executor, LocalExecutor
from weatkit.grid.ray_executor import RayExecutor
from weatkit.grid.runner import GridResult, plan, run_grid


def grid(
    experiment: str | os.PathLike | GridConfig,
    *,
    output: str | os.PathLike | None = None,
    force: bool = False,
    fail_fast: bool = False,
    show_progress: bool | None = None,
    executor: Executor | None = None,
) -> GridResult:
    """Run an experiment grid: one job per embeddings × language, resumable.

    Every job is a :func:`weatkit.run` of the file's run options on one embeddings source and
    one language; finished jobs are kept in ``OUTPUT/jobs/`` and reused while their options
    and inputs are unchanged (keyed by their SHA-256), so an interrupted grid resumes. The
    collated tables (``results``, ``summary``, and when configured ``isomorphism``,
    ``correlations``, ``comparisons`` — paired bootstrap differences to a baseline — and
    ``asymmetry``) are written into the output directory and returned. Summary rows are the
    CA-WEAT medians over a language's lists with their order-statistic intervals
    (España-Bonet & Barrón-Cedeño, EMNLP 2022).

    Args:
        experiment: an experiment file (``.yaml``/``.toml``, see :mod:`weatkit.grid.config`)
            or a :class:`GridConfig` already loaded.
        output: overrides the experiment's ``output`` directory.
        force: recompute every job.
        fail_fast: stop at the first failing job (else record it and finish the others).
        show_progress: progress bar (None: only on a terminal).
        executor: where jobs run (default :class:`LocalExecutor`; :class:`RayExecutor`).

    Example:
        >>> from weatkit import grid
        >>> result = grid("examples/glove-english.yaml", output="glove-run")  # doctest: +SKIP
        >>> result.summary[["embeddings", "test", "effect_size"]]              # doctest: +SKIP
    """
    if isinstance(experiment, GridConfig):
        config = experiment
        if output is not None:
            config = replace(config, output=Path(output))
    else:
        config = load_grid_config(experiment, None if output is None else os.fspath(output))
    return run_grid(
        config,
        force=force,
        fail_fast=fail_fast,
        show_progress=show_progress,
        executor=executor,
    )


__all__ = [
    "GridConfig",
    "GridResult",
    "LocalExecutor",
    "RayExecutor",
    "grid",
    "load_grid_config",
    "plan",
    "run_grid",
]
