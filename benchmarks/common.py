"""What every benchmark prints: the machine it ran on and one table of figures.

Each row is one figure: what weatkit measured, the baseline measured in the same run (or none),
and the ratio, always oriented so that above 1 means weatkit is faster.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def machine() -> str:
    """CPU cores, memory, GPU and versions, in one line."""
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    gpu = (
        ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        if torch.cuda.is_available()
        else "no GPU"
    )
    return (
        f"{platform.machine()}, nproc {os.cpu_count()}, {pages / 2**30:.0f} GiB memory, {gpu}; "
        f"Python {platform.python_version()}, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads)"
    )


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn: Callable[[], object], repeat: int = 1) -> tuple[object, float]:
    """The result of ``fn`` and its best wall time over ``repeat`` runs (GPU work included)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        synchronize()
        t0 = time.perf_counter()
        out = fn()
        synchronize()
        best = min(best, time.perf_counter() - t0)
    return out, best


@dataclass
class Figure:
    """One row: ``value`` of weatkit and of the ``baseline`` in ``unit``.

    ``higher_is_better`` for rates (words/s, MB/s); times otherwise. ``ratio`` is the speed-up
    of weatkit over the baseline.
    """

    what: str
    value: float
    unit: str = "s"
    baseline_name: str = ""
    baseline: float | None = None
    note: str = ""
    higher_is_better: bool = False

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.value == 0 or self.baseline == 0:
            return None
        return self.value / self.baseline if self.higher_is_better else self.baseline / self.value


def _number(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def print_table(title: str, figures: list[Figure]) -> None:
    """The machine line, then a Markdown table (pasteable into BENCHMARKS.md)."""
    print(f"\n### {title}\n\nmachine: {machine()}\n")
    print("| figure | weatkit | baseline | baseline value | ratio | note |")
    print("|---|---|---|---|---|---|")
    for f in figures:
        ours = f"{_number(f.value)} {f.unit}"
        base = f"{_number(f.baseline)} {f.unit}" if f.baseline is not None else "—"
        ratio = f"{f.ratio:,.1f}×" if f.ratio is not None else "—"
        print(f"| {f.what} | {ours} | {f.baseline_name or '—'} | {base} | {ratio} | {f.note} |")
    sys.stdout.flush()
