"""How a run's tests are laid out for the WEAT engine: padded batches, runs of one shape, blocks.

A test of shape ``(n_x, n_y, n_a, n_b)`` has ``(n_x + n_y)(n_a + n_b)`` similarities
(:func:`cells`). The engine (:mod:`weatkit.engine.weat`) orders tests by that count and cuts
them into consecutive batches (:func:`batches`) whose padded similarities and bootstrap
distributions fit :data:`BATCH_BUDGET` elements and where padding at most doubles a test's
similarities; in a batch every set is padded to its largest size (:func:`padded_widths`).
Inside a batch, tests of one shape are consecutive (:func:`shape_segments`), and the bootstrap
goes through them in blocks of tests (:func:`resample_blocks`): a shape with enough tests gets
blocks of its own, smaller shapes share. Only sizes are read here, never vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from weatkit.engine.weat_types import EngineOptions
    from weatkit.stats.resampling import Sizes

#: float64 elements of a batch's padded similarities and bootstrap distributions (128 MiB).
BATCH_BUDGET = 2**24


def padded_widths(sizes: Sequence[Sizes]) -> Sizes:
    """The padded width of each set in a batch of tests of these shapes: its largest size."""
    return tuple(max(s[k] for s in sizes) for k in range(4))  # type: ignore[return-value]


def cells(sizes: Sizes) -> int:
    """Similarities of a test: (n_x + n_y)(n_a + n_b)."""
    return (sizes[0] + sizes[1]) * (sizes[2] + sizes[3])


def batches(sizes: Sequence[Sizes], options: EngineOptions) -> list[slice]:
    """Consecutive runs of tests (ordered by :func:`cells`) whose padded similarities and
    bootstrap distributions fit :data:`BATCH_BUDGET` elements, and where padding at most doubles
    a test's similarities."""
    out: list[slice] = []
    start, widths = 0, sizes[0] if sizes else (0, 0, 0, 0)
    per_resample = 2 * max(options.n_bootstrap, 1)
    for i, shape in enumerate(sizes):
        grown = tuple(max(a, b) for a, b in zip(widths, shape, strict=True))
        n = i - start + 1
        if i > start and (
            n * (cells(grown) + per_resample) > BATCH_BUDGET
            or 2 * cells(sizes[start]) < cells(grown)  # type: ignore[arg-type]
        ):
            out.append(slice(start, i))
            start, grown = i, shape
        widths = grown
    if sizes:
        out.append(slice(start, len(sizes)))
    return out


def shape_segments(sizes: Sequence[Sizes]) -> list[tuple[int, int, Sizes]]:
    """``(start, stop, shape)`` of each run of consecutive tests of one shape."""
    out: list[tuple[int, int, Sizes]] = []
    for i, shape in enumerate(sizes):
        if out and out[-1][2] == shape:
            out[-1] = (out[-1][0], i + 1, shape)
        else:
            out.append((i, i + 1, shape))
    return out


def resample_blocks(
    segments: Sequence[tuple[int, int, Sizes]], n_tests: int
) -> list[tuple[int, int]]:
    """Runs of at most ``n_tests`` consecutive tests of a padded batch: a shape with at least
    half as many tests gets blocks of its own (its tests share each resample's weights: one
    matrix product); smaller shapes share blocks (each test's weights gathered)."""
    out: list[tuple[int, int]] = []
    pending: int | None = None  # start of a block of small shapes
    for a, b, _ in segments:
        if b - a >= max(n_tests // 2, 1):
            if pending is not None:
                out.append((pending, a))
                pending = None
            out.extend((t0, min(t0 + n_tests, b)) for t0 in range(a, b, n_tests))
            continue
        if pending is not None and b - pending > n_tests:
            out.append((pending, a))
            pending = None
        if pending is None:
            pending = a
    if pending is not None:
        out.append((pending, segments[-1][1]))
    return out
