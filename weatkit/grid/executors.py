"""Where a grid's jobs run: in this process (:class:`LocalExecutor`) or on Ray (``ray_executor``).

An executor takes the jobs still to run and yields one :class:`JobOutcome` per job as each
finishes, in any order. It never writes: the runner saves each record as it arrives, so a run
interrupted on any executor resumes the same way, and the tables do not depend on where or in
which order jobs ran.
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
from weatkit.grid.config import GridConfig
from weatkit.grid.execute import JobFunction, execute_job
from weatkit.grid.jobs import Job


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

    job: Job
    record: dict[str, Any] | None = None
    error: str | None = None
    worker: dict[str, Any] = field(default_factory=dict)


class Executor(Protocol):
    """Runs jobs and yields their outcomes as they finish."""

    def run(self, config: GridConfig, jobs: list[Job]) -> Iterator[JobOutcome]:
        """Run ``jobs`` of ``config``; yield one outcome per job. Closing the iterator (or an
        exception in the caller) cancels the jobs not yet finished."""
        ...

    def contextual_models(self) -> list[dict[str, Any]]:
        """What the models used so far loaded and computed, for the manifest."""
        ...


def timed_job(
    execute: JobFunction, config: GridConfig, job: Job, extractors: ExtractorPool
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
        execute: the function that runs one job (:func:`weatkit.grid.execute.execute_job`).
        extractors: the transformer models loaded so far, reused by every later job.
    """

    execute: JobFunction = execute_job
    extractors: ExtractorPool = field(default_factory=ExtractorPool)

    def run(self, config: GridConfig, jobs: list[Job]) -> Iterator[JobOutcome]:
        for job in jobs:
            try:
                record, worker = timed_job(self.execute, config, job, self.extractors)
            except Exception as err:  # any failure of one job is recorded, the rest go on
                yield JobOutcome(job, error=one_line(err))
            else:
                yield JobOutcome(job, record=record, worker=worker)

    def contextual_models(self) -> list[dict[str, Any]]:
        return self.extractors.describe()
