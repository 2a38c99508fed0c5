"""Forward passes over many inputs: sorted by length, batched, with progress and an estimate.

The one batching loop of the model layer: word-vector extraction and every sentence scorer run
their forward passes through :func:`run_batches`. Each item is one sequence of one forward pass
(a masked-LM PLL term, i.e. one masked token, is one item), so the number of items is the
number of forward passes.

**Estimate** (on CPU, unless progress is off): one line with the number of forward passes,
what they are for, the device, the batch size and a rough duration, once the pace of the
batches has settled. The first batch is never timed for it: it pays for the model's warm-up
(allocations, kernel choices, the LM head's first check), and a duration extrapolated from it
alone was 24 times the real one (13m29s for a run of 34 s); on a loaded machine the next
seconds can be slow too. So, once the batches after the first have run for
:data:`ESTIMATE_AFTER_S` seconds, the time left is extrapolated from the later half of them,
and only when their pace is within a factor :data:`SETTLED` of that of all of them (else it is
checked again after each batch, and no line is printed if the pace never settles).

A batch costs a fixed part and a part per padded token, and which one dominates depends on the
model and the machine (a tiny model: the fixed part; a large one: the tokens), so the time
left is the geometric mean of the two extrapolations::

    T ≈ t_done + √(t_w / k_w · k_left  ·  t_w / c_w · c_left)

(t_w seconds of the k_w batches timed, c_w their padded tokens Σ |b| · L_b for |b| items of at
most L_b tokens; k_left and c_left those of the batches left; t_done the seconds so far).
Batches run shortest first, so the later ones are larger by a factor r (2–3 on sentence data)
and the estimate is within √r of either extreme. It is printed only when T ≥
:data:`weatkit.progress.LOG_EVERY_S` (long work).

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

import math
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import torch

from weatkit import progress as _progress
from weatkit.errors import ConfigError, WeatkitError

T = TypeVar("T")

#: Seconds the batches after the first must have run before the estimate line is made from
#: their pace (module docstring).
ESTIMATE_AFTER_S = 5.0
#: How far the pace of the later half of the timed batches may be from that of all of them for
#: the estimate line to be printed (module docstring).
SETTLED = 1.5
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
    show_pace = show_progress is not False and _on_cpu(device)
    pace = _Pace(desc, device, inputs, lengths, row_tokens, show_pace)
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
            pace.batch_done(start, end, size, time.perf_counter() - started)
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


class _Pace:
    """The estimate line of one :func:`run_batches` call over the ascending ``lengths``
    (module docstring), printed once when ``show``."""

    def __init__(
        self,
        desc: str,
        device: object,
        inputs: str,
        lengths: Sequence[int],
        row_tokens: int | None,
        show: bool,
    ) -> None:
        self.desc, self.device, self.inputs = desc, device, inputs
        self.lengths, self.row_tokens, self.show = lengths, row_tokens, show
        self.done: list[tuple[int, int, float]] = []  # (items, longest, seconds) per batch

    def batch_done(self, start: int, end: int, size: int, seconds: float) -> None:
        """Record the batch ``lengths[start:end]`` of batch size ``size`` that took
        ``seconds``; print the line when it is due."""
        if not self.show:
            return
        self.done.append((end - start, self.lengths[end - 1], seconds))
        if end == len(self.lengths):
            self.show = False
        elif sum(t for _, _, t in self.done[1:]) >= ESTIMATE_AFTER_S:
            todo = batch_sizes(self.lengths[end:], size, self.row_tokens)
            line = estimate_line(self.desc, self.done, todo, self.device, size, self.inputs)
            if line is not None:
                if line:
                    _progress.note(line)
                self.show = False


def time_left(timed: Sequence[tuple[int, int, float]], todo: Sequence[tuple[int, int]]) -> float:
    """``√(t / k · k_left · t / c · c_left)`` (module docstring): seconds for the batches
    ``todo`` (``(items, longest)`` each) at the pace of the ``timed`` ones (``(items, longest,
    seconds)`` each)."""
    seconds = sum(t for _, _, t in timed)
    per_batch = seconds / len(timed) * len(todo)
    per_token = seconds / sum(n * longest for n, longest, _ in timed)
    return math.sqrt(per_batch * per_token * sum(n * longest for n, longest in todo))


def estimate_line(
    desc: str,
    done: Sequence[tuple[int, int, float]],
    todo: Sequence[tuple[int, int]],
    device: object,
    batch_size: int,
    inputs: str = "",
) -> str | None:
    """The estimate line (module docstring): None while the pace has not settled (fewer than
    two batches after the first, or the later half's pace more than :data:`SETTLED` times off
    that of all of them), "" when the estimate is under :data:`weatkit.progress.LOG_EVERY_S`.

    Args:
        done: ``(items, longest input in tokens, seconds)`` of each batch run, in order.
        todo: ``(items, longest input in tokens)`` of each batch still to run (one at least).
    """
    warm = done[1:]
    if len(warm) < 2:
        return None
    later = warm[len(warm) // 2 :]
    left = time_left(later, todo)
    if not left / SETTLED <= time_left(warm, todo) <= left * SETTLED:
        return None
    estimate = sum(t for _, _, t in done) + left
    if estimate < _progress.LOG_EVERY_S:
        return ""
    n_items = sum(n for n, _, _ in done) + sum(n for n, _ in todo)
    n_batches = len(done) + len(todo)
    what = f" {inputs}" if inputs else ""
    return (
        f"{desc}: {n_items} forward passes{what} on {device}, batch size {batch_size} "
        f"({n_batches} batches); {len(done)} done in "
        f"{_progress.duration(sum(t for _, _, t in done))}, roughly "
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
