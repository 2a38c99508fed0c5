"""Forward passes over many inputs: sorted by length, batched, with a progress bar.

The one batching loop of the model layer: word-vector extraction and every sentence scorer run
their forward passes through :func:`run_batches`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import torch
from tqdm.auto import tqdm

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
) -> tuple[np.ndarray, int]:
    """``compute`` over batches of ``items`` of similar length; results in ``items`` order.

    ``compute`` returns one row (or value) per item of its batch. Sorting by length keeps the
    padding small. Returns the stacked results and the number of batches; running out of
    accelerator memory is a one-line WeatkitError naming ``--batch-size`` (``action`` says what
    was being done: ``scoring``, ``encoding``).
    """
    order = sorted(range(len(items)), key=lambda i: length(items[i]))
    parts: list[np.ndarray] = []
    n_batches = 0
    with tqdm(
        total=len(items),
        desc=desc,
        unit=unit,
        disable=None if show_progress is None else not show_progress,
    ) as bar:
        for start in range(0, len(order), batch_size):
            batch = [items[i] for i in order[start : start + batch_size]]
            try:
                parts.append(np.asarray(compute(batch)))
            except torch.OutOfMemoryError as err:
                raise WeatkitError(
                    f"out of memory on {device} {action} with {model_name} at --batch-size "
                    f"{batch_size} ({len(batch)} {unit}s of up to "
                    f"{max(length(b) for b in batch)} tokens); "
                    "try a smaller --batch-size or --dtype float16"
                ) from err
            n_batches += 1
            bar.update(len(batch))
    if not parts:
        return np.zeros(0), 0
    stacked = np.concatenate(parts)
    out = np.empty_like(stacked)
    out[order] = stacked
    return out, n_batches
