"""Choosing the torch device: ``auto`` prefers CUDA, then Apple MPS, then the CPU."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

import torch

from weatkit.errors import WeatkitError

T = TypeVar("T")
R = TypeVar("R")


def resolve_device(spec: str | torch.device = "auto") -> torch.device:
    """Turn ``auto|cpu|cuda|cuda:N|mps`` into a usable ``torch.device``.

    ``auto`` picks ``cuda`` when available, else ``mps``, else ``cpu``. Asking for a device that is
    not available is an error rather than a silent fallback.
    """
    if isinstance(spec, torch.device):
        return spec
    text = str(spec).strip().lower()
    if text == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(text)
    except RuntimeError as err:
        raise WeatkitError(f"unknown device {spec!r}: use auto, cpu, cuda, cuda:N or mps") from err
    if device.type == "cuda" and not torch.cuda.is_available():
        raise WeatkitError(
            f"device {spec!r} requested but CUDA is not available; use --device auto"
        )
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise WeatkitError(f"device {spec!r} requested but MPS is not available; use --device auto")
    return device


def engine_dtype(device: torch.device) -> torch.dtype:
    """float64 everywhere except MPS (which has none): the same numbers on CPU and CUDA."""
    return torch.float32 if device.type == "mps" else torch.float64


def one_thread() -> AbstractContextManager[Any]:
    """BLAS and OpenMP (NumPy's, torch's, every pool loaded) held to one thread, restored on exit.

    The engine's bootstrap blocks and the association metrics' products are small (tens of
    words by thousands of resamples): on the CPU, threads do not pay for their start, and on
    cores shared with other processes OpenMP's spinning threads made the paper grid up to 20×
    slower with two threads than with one (BENCHMARKS.md). It lists the loaded pools on entry
    (about 2 ms): take it once around a whole computation, not per item.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def cpu_threads(device: torch.device) -> AbstractContextManager[Any]:
    """:func:`one_thread` on the CPU; nothing on an accelerator."""
    return one_thread() if device.type == "cpu" else nullcontext()


def cpu_workers(device: torch.device) -> int:
    """Threads the engine's blocks are spread over: torch's thread count on the CPU (its cores
    unless ``torch.set_num_threads`` or ``OMP_NUM_THREADS`` says otherwise), 1 on an
    accelerator. Read it before :func:`one_thread`."""
    return max(1, torch.get_num_threads()) if device.type == "cpu" else 1


def in_threads(fn: Callable[[T], R], items: Iterable[T], workers: int) -> list[R]:
    """``[fn(x) for x in items]``, the items shared out over ``workers`` Python threads.

    Each thread runs under :func:`one_thread` and takes the next item when it is done with one,
    so ``workers`` cores work without any OpenMP thread spinning: torch and NumPy release the
    GIL inside their kernels, and on cores shared with other processes a thread that waits
    costs nothing. A thread that gets less than half a core (its CPU time over its wall time,
    after 50 ms) stops taking items while another one is left: on cores busy with other
    processes, threads that wait for the cores and for each other's GIL are slower than one.
    The results are those of the plain loop (each item is computed alone, by the same
    single-threaded kernels), in the order of ``items``. The first exception raised by ``fn``
    stops the other threads (after their current item) and is raised here.
    """
    todo = list(enumerate(items))
    if workers <= 1 or len(todo) <= 1:
        return [fn(x) for _, x in todo]
    results: list[Any] = [None] * len(todo)
    errors: list[BaseException] = []
    lock = threading.Lock()
    pending = iter(todo)
    threads = [threading.Thread(target=lambda: work()) for _ in range(min(workers, len(todo)))]
    active = [len(threads)]

    def starved(wall: float, cpu: float) -> bool:
        """Under half a core with another thread still working: this one stops."""
        if wall < 0.05 or cpu >= 0.5 * wall:
            return False
        with lock:
            if active[0] > 1:
                active[0] -= 1
                return True
        return False

    def work() -> None:
        torch.get_num_threads()  # torch's own set-up of a new thread first: it would undo the limit
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        with one_thread():
            while not errors:
                with lock:
                    nxt = next(pending, None)
                if nxt is None:
                    return
                try:
                    results[nxt[0]] = fn(nxt[1])
                except BaseException as err:  # re-raised in the calling thread
                    errors.append(err)
                if starved(time.perf_counter() - wall0, time.thread_time() - cpu0):
                    return

    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException as err:  # an interrupt: the threads stop after their current item
        errors.append(err)
        raise
    if errors:
        raise errors[0]
    return results
