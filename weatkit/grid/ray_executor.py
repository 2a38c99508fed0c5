"""Run a study's jobs as Ray tasks, on one machine or a cluster (``pip install 'weatkit[ray]'``).

One Ray task per job (a grid's, a comparison's), with its resource needs: ``cpus_per_job`` CPUs,
and GPUs by the job's ``gpus`` (:func:`weatkit.grid.jobs.model_gpus`): none for static vectors,
an ``openai:`` model or a model on the CPU; ``gpus_per_model_job`` for a model (default: one
where the cluster has GPUs, else none); k for a model whose layers ``device_map`` shards over the
k GPUs of its ``max_memory``. Ray sets ``CUDA_VISIBLE_DEVICES`` and ``--device auto`` picks the
task's GPUs; a job without a GPU sees none and runs on the CPU. Each Ray worker process keeps
the models it has loaded and reuses them for the later jobs it runs (tasks are declared with
``max_calls=0``, so Ray does not retire GPU workers after one task). A task that raises or whose
worker dies is retried ``retries`` times by Ray itself (``max_retries``, ``retry_exceptions``);
after that the job is reported as failed with its error and the rest of the study goes on.

Workers read the inputs themselves: on a cluster of several machines, the vector files, models,
lists and the cache must be at the same paths on every node (a shared file system), and
weatkit must be installed there. ``WEATKIT_*``, ``HF_*`` and ``TRANSFORMERS_*`` variables of the
driver are passed to the workers. Records come back to the driver, which alone writes files.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from weatkit.embeddings.contextual import ExtractorPool
from weatkit.errors import WeatkitError
from weatkit.grid.execute import JobFunction
from weatkit.grid.executors import JobOutcome, job_function, timed_job
from weatkit.grid.jobs import RunnableJob

#: Environment variables the workers get from the driver (data, cache, offline switches).
FORWARDED_PREFIXES = ("WEATKIT_", "HF_", "TRANSFORMERS_")

_worker_extractors: ExtractorPool | None = None  # the models of this worker process


@dataclass
class RayExecutor:
    """Runs jobs as Ray tasks.

    Attributes:
        address: the cluster to join (``auto``: the one started with ``ray start`` on this
            machine; ``HOST:PORT`` or ``ray://HOST:PORT``: a remote one, checked reachable
            first). None: use the Ray already initialised in this process, else start a local
            instance for the run and stop it after.
        num_cpus: CPUs of a local instance started here (None: all).
        retries: how many times Ray retries a failing job before it is reported as failed.
        cpus_per_job: CPUs each job reserves.
        gpus_per_model_job: GPUs each job of a model needing one reserves (fractions share a
            GPU). None: 1 when the cluster has a GPU, else 0.
        execute: the function that runs one job (None: the runner's; a grid's is
            :func:`weatkit.grid.execute.execute_job`).
    """

    address: str | None = None
    num_cpus: int | None = None
    retries: int = 2
    cpus_per_job: float = 1.0
    gpus_per_model_job: float | None = None
    execute: JobFunction | None = None
    _models: dict[tuple[str, int], list[dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise WeatkitError(f"retries must be 0 or more, got {self.retries}")
        if self.cpus_per_job <= 0:
            raise WeatkitError(f"CPUs per job must be positive, got {self.cpus_per_job}")
        if self.gpus_per_model_job is not None and self.gpus_per_model_job < 0:
            raise WeatkitError(f"GPUs per job must be 0 or more, got {self.gpus_per_model_job}")
        if self.address is not None and self.num_cpus is not None:
            raise WeatkitError("the number of CPUs is set by the cluster when joining one")

    def run(
        self, config: Any, jobs: list[RunnableJob], execute: JobFunction | None = None
    ) -> Iterator[JobOutcome]:
        ray = import_ray()
        started_here = self._connect(ray)
        pending: dict[Any, RunnableJob] = {}
        function = job_function(self.execute, execute)
        try:
            task = ray.remote(max_calls=0)(_run_job)
            config_ref = ray.put(config)
            model_gpus, cluster_gpus = self._model_gpus(ray)
            for job in jobs:
                options = {
                    "num_cpus": self.cpus_per_job,
                    "num_gpus": _job_gpus(job, model_gpus, cluster_gpus),
                    "max_retries": self.retries,
                    "retry_exceptions": True,
                }
                pending[task.options(**options).remote(config_ref, job, function)] = job
            while pending:
                (ref,), _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(ref)
                try:
                    record, worker, models = ray.get(ref)
                except ray.exceptions.RayError as err:
                    attempts = self.retries + 1
                    plural = "s" if attempts > 1 else ""
                    error = f"{_reason(err)} (after {attempts} attempt{plural})"
                    yield JobOutcome(job, error=error)
                else:
                    self._models[worker["host"], worker["pid"]] = models
                    yield JobOutcome(job, record=record, worker=worker)
        finally:
            for ref in pending:
                ray.cancel(ref)
            if started_here:
                ray.shutdown()

    def contextual_models(self) -> list[dict[str, Any]]:
        return [
            {**model, "worker": {"host": host, "pid": pid}}
            for (host, pid), models in self._models.items()
            for model in models
        ]

    def _connect(self, ray: ModuleType) -> bool:
        """Join or start Ray; True when this call started it (and must stop it)."""
        if self.address is not None:
            check_reachable(self.address)
        if ray.is_initialized():
            return False
        env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}
        options: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": logging.WARNING,
            "runtime_env": {"env_vars": env},
        }
        try:
            if self.address is not None:
                ray.init(address=self.address, **options)
            else:
                ray.init(num_cpus=self.num_cpus, **options)
        except (ConnectionError, RuntimeError, ValueError) as err:
            where = f"at {self.address}" if self.address else "on this machine"
            raise WeatkitError(f"cannot start or join Ray {where}: {_first_line(err)}") from err
        return True

    def _model_gpus(self, ray: ModuleType) -> tuple[float, float]:
        """The GPUs of a job of one model (``gpus`` 1), and the cluster's GPUs."""
        resources = ray.cluster_resources()
        cpus, gpus = resources.get("CPU", 0.0), resources.get("GPU", 0.0)
        if self.cpus_per_job > cpus:
            raise WeatkitError(
                f"each job asks for {self.cpus_per_job:g} CPUs; the Ray cluster has {cpus:g}"
            )
        wanted = self.gpus_per_model_job
        if wanted is None:
            return (1.0 if gpus >= 1 else 0.0), gpus
        if wanted > gpus:
            raise WeatkitError(
                f"each model job asks for {wanted:g} GPUs; the Ray cluster has {gpus:g}"
            )
        return wanted, gpus


def _job_gpus(job: RunnableJob, model_gpus: float, cluster_gpus: float) -> float:
    """The GPUs a task reserves: none for ``gpus`` 0, one model's share for 1, and the k GPUs
    of a sharded model (none where the cluster has no GPU: it runs on the CPU as it would here).

    Raises:
        WeatkitError: a sharded model needs more GPUs than the cluster has.
    """
    if job.gpus <= 1:
        return model_gpus * job.gpus
    if cluster_gpus == 0:
        return 0.0
    if job.gpus > cluster_gpus:
        raise WeatkitError(
            f"job {job.id} shards its model over {job.gpus} GPUs (max_memory); the Ray cluster "
            f"has {cluster_gpus:g}"
        )
    return float(job.gpus)


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast when nothing listens at a ``HOST:PORT`` or ``ray://HOST:PORT`` address (Ray
    itself retries for minutes); ``auto`` is left to Ray, which answers at once."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise WeatkitError(f"Ray address {address!r}: give auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise WeatkitError(f"cannot reach the Ray cluster at {address}: {reason}") from err


def import_ray() -> ModuleType:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError as err:
        raise WeatkitError("the ray executor needs Ray: pip install 'weatkit[ray]'") from err
    return ray


def _run_job(
    config: Any, job: RunnableJob, execute: JobFunction
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The Ray task: run ``job`` with this worker's models; return its record, the worker and
    what the worker's models have done so far."""
    global _worker_extractors
    if _worker_extractors is None:
        _worker_extractors = ExtractorPool()
    record, worker = timed_job(execute, config, job, _worker_extractors)
    return record, worker, _worker_extractors.describe()


def _reason(err: Exception) -> str:
    """One line for a failed task: the job's own error where it raised one."""
    cause = getattr(err, "cause", None)
    if isinstance(cause, WeatkitError):
        return str(cause)
    if isinstance(cause, Exception):
        return f"{type(cause).__name__}: {_first_line(cause)}"
    return f"{type(err).__name__}: {_first_line(err)}"


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__
