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

**Token budget** (``row_tokens``): a batch of ``B`` rows (the batch size) also holds at most
``B · row_tokens`` padded tokens (its rows × its longest input), so a batch of long inputs has
fewer rows and the memory of a forward pass (activations ∝ rows × length, attention ∝ rows ×
length²) stays flat as sentences grow, instead of growing with them at a fixed row count.

**``--batch-size auto``**: the largest batch that fits. The first batch has :data:`AUTO_START`
items; a batch that runs out of accelerator memory (``torch.OutOfMemoryError``, or a
``RuntimeError`` saying "out of memory") is retried at half the size, down to 1, and the
batches after it keep the size that ran. That size is remembered per model and device, so the
next call starts there, and reported for the manifest (:func:`auto_batch_sizes`). The numbers
are those of a fixed batch size up to the last bits that padding changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import torch

from weatkit import progress as _progress
from weatkit.errors import ConfigError, WeatkitError

T = TypeVar("T")

#: ``--batch-size auto``: the size of the first batch, halved on each out-of-memory.
AUTO_START = 256
#: The padded length a batch of ``batch_size`` rows is sized for by the scorers that chunk by
#: tokens: longer inputs go in fewer rows per batch (module docstring).
ROW_TOKENS = 64
#: The ``auto`` batch size that last ran, per (model, device): where the next call starts.
_FITTED: dict[tuple[str, str], int] = {}


def check_batch_size(value: object) -> None:
    """:class:`ConfigError` (``field="batch_size"``) unless ``value`` is a positive integer or
    ``"auto"``."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return
    raise ConfigError(f"must be a positive integer or auto, got {value!r}", field="batch_size")


def auto_batch_sizes() -> dict[str, int]:
    """``{model: batch size}`` of the ``--batch-size auto`` runs of this process: the size
    each model's forward passes last ran at (for the manifest)."""
    return {model: size for (model, _), size in _FITTED.items()}


def _out_of_memory(err: BaseException) -> bool:
    return isinstance(err, torch.OutOfMemoryError) or (
        isinstance(err, RuntimeError) and "out of memory" in str(err).lower()
    )


def run_batches(
    items: Sequence[T],
    compute: Callable[[list[T]], np.ndarray],
    *,
    length: Callable[[T], int],
    batch_size: int | str,
    desc: str,
    model_name: str,
    device: object,
    unit: str = "input",
    action: str = "scoring",
    show_progress: bool | None = None,
    inputs: str = "",
    row_tokens: int | None = None,
    on_batch: Callable[[list[int], np.ndarray], None] | None = None,
) -> tuple[np.ndarray, int]:
    """``compute`` over batches of ``items`` of similar length; results in ``items`` order.

    ``compute`` returns one row (or value) per item of its batch. Sorting by length keeps the
    padding small. Returns the stacked results and the number of batches. ``batch_size``
    ``"auto"`` finds the largest size that fits (module docstring); with a fixed size, running
    out of accelerator memory is a one-line WeatkitError naming ``--batch-size`` (``action``
    says what was being done: ``scoring``, ``encoding``). Progress goes through
    :func:`weatkit.progress.progress` (``show_progress`` as there); ``inputs`` says what the
    forward passes are for in the estimate line (e.g. ``"of 3016 sentences"``). With
    ``row_tokens`` a batch also holds at most ``batch size × row_tokens`` padded tokens (module
    docstring); the results do not depend on it. ``on_batch``: called after each batch with
    the indices of its items in ``items`` and ``compute``'s result (a caller that keeps them,
    such as the causal-score cache, loses no finished batch when a later one fails).
    """
    check_batch_size(batch_size)
    auto = batch_size == "auto"
    fitted = (model_name, str(device))
    size = _FITTED.get(fitted, AUTO_START) if auto else int(batch_size)
    order = sorted(range(len(items)), key=lambda i: length(items[i]))
    lengths = [length(items[i]) for i in order]
    parts: list[np.ndarray] = []
    start = n_batches = 0
    with _progress.progress(total=len(items), desc=desc, unit=unit, show=show_progress) as bar:
        while start < len(order):
            end = batch_end(lengths, start, size, row_tokens)
            batch = [items[i] for i in order[start:end]]
            started = time.perf_counter()
            try:
                result = np.asarray(compute(batch))
            except RuntimeError as err:  # torch.OutOfMemoryError is one
                if not _out_of_memory(err):
                    raise
                if not auto or size == 1:
                    raise WeatkitError(
                        _oom_message(batch, batch_size, length, device, action, model_name, unit)
                    ) from err
                failed = True
            else:
                failed = False
            if failed:  # retried outside the handler, so the failed batch's memory is free
                size //= 2
                _free_accelerator_memory()
                continue
            parts.append(result)
            if n_batches == 0 and show_progress is not False and _on_cpu(device):
                sizes = batch_sizes(lengths, size, row_tokens)
                line = estimate_line(
                    desc, sizes, time.perf_counter() - started, device, size, inputs
                )
                if line:
                    _progress.note(line)
            if on_batch is not None:
                on_batch(order[start:end], result)
            start += len(batch)
            n_batches += 1
            bar.update(len(batch))
    if auto and n_batches:
        _FITTED[fitted] = size
    if not parts:
        return np.zeros(0), 0
    stacked = np.concatenate(parts)
    out = np.empty_like(stacked)
    out[order] = stacked
    return out, n_batches


def batch_end(lengths: Sequence[int], start: int, size: int, row_tokens: int | None) -> int:
    """Where the batch that begins at ``start`` of the ascending ``lengths`` ends: at most
    ``size`` rows and, with ``row_tokens``, at most ``size · row_tokens`` padded tokens (one
    row at least)."""
    end = min(start + size, len(lengths))
    if row_tokens is None:
        return end
    budget = size * row_tokens
    stop = start + 1
    while stop < end and (stop + 1 - start) * lengths[stop] <= budget:
        stop += 1
    return stop


def batch_sizes(lengths: Sequence[int], size: int, row_tokens: int | None) -> list[tuple[int, int]]:
    """``(rows, longest)`` of each batch of the ascending ``lengths`` (:func:`batch_end`)."""
    sizes = []
    start = 0
    while start < len(lengths):
        end = batch_end(lengths, start, size, row_tokens)
        sizes.append((end - start, lengths[end - 1]))
        start = end
    return sizes


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


def _oom_message(
    batch: list[T],
    batch_size: int | str,
    length: Callable[[T], int],
    device: object,
    action: str,
    model_name: str,
    unit: str,
) -> str:
    what = f"{len(batch)} {_progress.plural(unit)} of up to {max(map(length, batch))} tokens"
    if batch_size == "auto":
        return (
            f"out of memory on {device} {action} with {model_name} even at batch size 1 "
            f"(--batch-size auto; {what}); try --dtype float16, --quantization 8bit or "
            "--device-map auto"
        )
    return (
        f"out of memory on {device} {action} with {model_name} at --batch-size {batch_size} "
        f"({what}); try a smaller --batch-size (or auto) or --dtype float16"
    )


def _free_accelerator_memory() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _on_cpu(device: object) -> bool:
    return str(device).split(":")[0] == "cpu"
