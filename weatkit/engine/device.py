"""Choosing the torch device: ``auto`` prefers CUDA, then Apple MPS, then the CPU."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch

from weatkit.errors import WeatkitError


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
