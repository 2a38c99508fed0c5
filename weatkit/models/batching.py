"""Forward passes over many inputs: sorted by length, batched, with progress and an estimate.

The one batching loop of the model layer: word-vector extraction and every sentence scorer run
their forward passes through :func:`run_batches`. Each item is one sequence of one forward pass
(a masked-LM PLL term, i.e. one masked token, is one item), so the number of items is the
number of forward passes.

**Up-front estimate** (on CPU, unless progress is off): after the first batch, one line with
the number of forward passes, what they are for, the device, the batch size and a rough
duration, extrapolated from the first batch by padded size::

    T ≈ t_1 · Σ_b |b| · L_b / (|b_1| · L_{b_1})

(|b| items of at most L_b tokens in batch b; the first batch holds the shortest inputs, and
attention cost grows faster than length, so long inputs can take longer than this). It is
printed only when T ≥ :data:`weatkit.progress.LOG_EVERY_S` (long work).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import torch

from weatkit import progress as _progress
from weatkit.errors import WeatkitError

T = TypeVar("T")


def run_batches(
    items: Sequence[T],
    compute: Callable[[list[T]], np.ndarray],
    *,
    length: Callable[[T], int],
    batch_size: int,
    desc: str,
    model_name: str,
    device: object,
    unit: str = "input",
    action: str = "scoring",
    show_progress: bool | None = None,
    inputs: str = "",
) -> tuple[np.ndarray, int]:
    """``compute`` over batches of ``items`` of similar length; results in ``items`` order.

    ``compute`` returns one row (or value) per item of its batch. Sorting by length keeps the
    padding small. Returns the stacked results and the number of batches; running out of
    accelerator memory is a one-line WeatkitError naming ``--batch-size`` (``action`` says what
    was being done: ``scoring``, ``encoding``). Progress goes through
    :func:`weatkit.progress.progress` (``show_progress`` as there); ``inputs`` says what the
    forward passes are for in the estimate line (e.g. ``"of 3016 sentences"``).
    """
    order = sorted(range(len(items)), key=lambda i: length(items[i]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    parts: list[np.ndarray] = []
    with _progress.progress(total=len(items), desc=desc, unit=unit, show=show_progress) as bar:
        for k, indices in enumerate(batches):
            batch = [items[i] for i in indices]
            started = time.perf_counter()
            try:
                parts.append(np.asarray(compute(batch)))
            except torch.OutOfMemoryError as err:
                raise WeatkitError(
                    f"out of memory on {device} {action} with {model_name} at --batch-size "
                    f"{batch_size} ({len(batch)} {_progress.plural(unit)} of up to "
                    f"{max(length(b) for b in batch)} tokens); "
                    "try a smaller --batch-size or --dtype float16"
                ) from err
            if k == 0 and show_progress is not False and _on_cpu(device):
                sizes = [(len(b), max(length(items[i]) for i in b)) for b in batches]
                line = estimate_line(
                    desc, sizes, time.perf_counter() - started, device, batch_size, inputs
                )
                if line:
                    _progress.note(line)
            bar.update(len(batch))
    if not parts:
        return np.zeros(0), 0
    stacked = np.concatenate(parts)
    out = np.empty_like(stacked)
    out[order] = stacked
    return out, len(batches)


def estimate_line(
    desc: str,
    sizes: Sequence[tuple[int, int]],
    first_s: float,
    device: object,
    batch_size: int,
    inputs: str = "",
) -> str:
    """The estimate line (module docstring), or "" when the estimate is under
    :data:`weatkit.progress.LOG_EVERY_S`.

    Args:
        sizes: ``(items, longest input in tokens)`` of each batch, the first one timed.
        first_s: seconds the first batch took.
    """
    n_items = sum(n for n, _ in sizes)
    cost = sum(n * longest for n, longest in sizes)
    first = sizes[0][0] * sizes[0][1]
    estimate = first_s * cost / first if first else 0.0
    if estimate < _progress.LOG_EVERY_S:
        return ""
    what = f" {inputs}" if inputs else ""
    return (
        f"{desc}: {n_items} forward passes{what} on {device}, batch size {batch_size} "
        f"({len(sizes)} batches); first batch {first_s:.1f}s, roughly "
        f"{_progress.duration(estimate)} in all"
    )


def _on_cpu(device: object) -> bool:
    return str(device).split(":")[0] == "cpu"
