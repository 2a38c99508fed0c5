"""Where a study's jobs run: in this process (:class:`LocalExecutor`) or on Ray (``ray_executor``).

An executor takes the jobs still to run and yields one :class:`JobOutcome` per job as each
finishes, in any order. It never writes: the runner saves each record as it arrives, so a run
interrupted on any executor resumes the same way, and the tables do not depend on where or in
which order jobs ran.

Jobs are a grid's (:class:`~weatkit.grid.jobs.Job`, run by
:func:`~weatkit.grid.execute.execute_job`) or any other study's that has what
:class:`~weatkit.grid.jobs.RunnableJob` names, run by the job function its runner gives
(``weatkit compare``: :func:`weatkit.crossmethod.execute.execute_compare_job`).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from weatkit.embeddings.contextual import ExtractorPool
from weatkit.errors import one_line
from weatkit.grid.execute import JobFunction, execute_job
from weatkit.grid.jobs import RunnableJob


@dataclass
class JobOutcome:
    """One finished job.

    Attributes:
        job: the job.
        record: its record (None when it failed); ``record["timings_s"]["job"]`` is its time.
        error: why it failed, one line (None when it ran).
        worker: where it last ran: ``host``, ``pid``, ``models_loaded`` (networks that process
            had loaded when the job ended; a process keeps its models for its later jobs).
    """

    job: RunnableJob
    record: dict[str, Any] | None = None
    error: str | None = None
    worker: dict[str, Any] = field(default_factory=dict)


class Executor(Protocol):
    """Runs jobs and yields their outcomes as they finish."""

    def run(
        self, config: Any, jobs: list[RunnableJob], execute: JobFunction | None = None
    ) -> Iterator[JobOutcome]:
        """Run ``jobs`` of ``config`` (a grid's or another study's); yield one outcome per job.
        Each job runs through the executor's own job function if it has one, else ``execute``,
        else :func:`~weatkit.grid.execute.execute_job`. Closing the iterator (or an exception
        in the caller) cancels the jobs not yet finished."""
        ...

    def contextual_models(self) -> list[dict[str, Any]]:
        """What the models used so far loaded and computed, for the manifest."""
        ...


def job_function(own: JobFunction | None, given: JobFunction | None) -> JobFunction:
    """The function an executor runs jobs with: its ``own``, else the runner's ``given``, else a
    grid's :func:`~weatkit.grid.execute.execute_job`."""
    return own or given or execute_job


def timed_job(
    execute: JobFunction, config: Any, job: RunnableJob, extractors: ExtractorPool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``execute`` with the job's wall time added to its record, and where it ran."""
    t0 = time.perf_counter()
    record = execute(config, job, extractors)
    record.setdefault("timings_s", {})["job"] = round(time.perf_counter() - t0, 3)
    worker = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "models_loaded": extractors.models_loaded,
    }
    return record, worker


@dataclass
class LocalExecutor:
    """Runs jobs one after another in this process, sharing loaded models across them.

    Attributes:
        execute: the function that runs one job (None: the runner's; a grid's is
            :func:`weatkit.grid.execute.execute_job`).
        extractors: the transformer models loaded so far, reused by every later job.
    """

    execute: JobFunction | None = None
    extractors: ExtractorPool = field(default_factory=ExtractorPool)

    def run(
        self, config: Any, jobs: list[RunnableJob], execute: JobFunction | None = None
    ) -> Iterator[JobOutcome]:
        function = job_function(self.execute, execute)
        for job in jobs:
            try:
                record, worker = timed_job(function, config, job, self.extractors)
            except Exception as err:  # any failure of one job is recorded, the rest go on
                yield JobOutcome(job, error=one_line(err))
            else:
                yield JobOutcome(job, record=record, worker=worker)

    def contextual_models(self) -> list[dict[str, Any]]:
        return self.extractors.describe()
