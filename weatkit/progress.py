"""Progress of long loops: a tqdm bar on a terminal, a plain line now and then elsewhere.

Every long loop of weatkit (forward passes in :func:`weatkit.models.batching.run_batches`,
loading and association tests in :func:`weatkit.run`, grid jobs, ``compare`` steps, training)
reports through :func:`progress`, which takes the one ``show`` setting of the ``--progress /
--no-progress`` option (:func:`weatkit.cli.options.progress_option`):

* ``show=False``: silent.
* stderr is a terminal (``show`` None or True): tqdm's bar (``tqdm.auto``).
* stderr is not a terminal (CI logs, ``nohup``, pipes, notebooks): a plain line at most every
  :data:`LOG_EVERY_S` seconds, e.g. ``PLL with bert-base-uncased: 320/1508 passes (21%), 2m10s
  elapsed, ~8m left``, and a last line with the totals when at least one line was printed. Work
  that ends within :data:`LOG_EVERY_S` prints nothing. The time left is the mean time per unit
  so far times the units left (no smoothing).

The log lines are tqdm itself (:class:`_LogLines` overrides only how a state is displayed), so
counts and times come from the same bookkeeping as the bar.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import Any

from tqdm.auto import tqdm as _bar
from tqdm.std import tqdm as _std

#: Seconds between two log lines when stderr is not a terminal; also the least estimated
#: duration of model scoring that gets the up-front estimate line (:mod:`weatkit.models.batching`).
LOG_EVERY_S = 30.0

_PLURALS = {"corpus": "corpora", "pass": "passes"}


def on_terminal() -> bool:
    """Whether stderr is a terminal (where bars are drawn)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str,
    unit: str,
    show: bool | None,
) -> _std:
    """A tqdm object for a loop of ``total`` units (module docstring for what it shows).

    Use it as tqdm: iterate over it, or ``with progress(total=n, ...) as bar: bar.update(k)``.

    Args:
        iterable: what to iterate over (its length is the total unless ``total`` is given).
        total: the number of units.
        desc: what is being done, e.g. ``"association tests"``.
        unit: one unit, singular (``"test"``, ``"pass"``).
        show: the ``--progress`` setting: False silent, True or None shown (a bar on a
            terminal, log lines elsewhere).
    """
    if show is False:
        return _std(iterable, total=total, desc=desc, unit=unit, disable=True)
    if on_terminal():
        return _bar(iterable, total=total, desc=desc, unit=unit, disable=False)
    return _LogLines(iterable, total=total, desc=desc, unit=unit, file=sys.stderr)


def note(text: str) -> None:
    """One line on stderr that does not break a bar drawn there."""
    if on_terminal():
        _bar.write(text, file=sys.stderr)
    else:
        print(text, file=sys.stderr, flush=True)


def duration(seconds: float) -> str:
    """``45s``, ``2m10s``, ``1h05m``: a duration for a log line."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def plural(unit: str) -> str:
    """``test`` -> ``tests``, ``pass`` -> ``passes``, ``corpus`` -> ``corpora``."""
    return _PLURALS.get(unit, unit if unit.endswith("s") else unit + "s")


def progress_line(desc: str, n: int, total: int | None, unit: str, elapsed: float) -> str:
    """``desc: n/total units (p%), E elapsed, ~L left`` (``n units, E elapsed`` without a
    total); L = elapsed / n · (total − n)."""
    if not total:
        return f"{desc}: {n} {plural(unit)}, {duration(elapsed)} elapsed"
    text = f"{desc}: {n}/{total} {plural(unit)} ({100 * n // total}%), {duration(elapsed)} elapsed"
    if 0 < n < total:
        text += f", ~{duration(elapsed / n * (total - n))} left"
    return text


class _LogLines(_std):  # type: ignore[misc]
    """tqdm whose display is a whole line, at most every :data:`LOG_EVERY_S` seconds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._every = LOG_EVERY_S
        self._line_n = 0
        self._line_t = time.time()
        kwargs.update(mininterval=self._every, miniters=1, disable=False, leave=False)
        super().__init__(*args, **kwargs)
        self._line_t = self.start_t

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if msg is not None:  # tqdm clearing the bar: nothing to clear in a log
            return False
        now = self._time()
        if self.n <= self._line_n or now - self._line_t < self._every:
            return False
        self._write(now)
        return True

    def clear(self, nolock: bool = False) -> None:  # no bar to clear
        return None

    def close(self) -> None:
        if not self.disable and self._line_n and self.n > self._line_n:
            self._write(self._time())  # the totals, after earlier lines
        super().close()

    def _write(self, now: float) -> None:
        desc = self.desc.rstrip(": ") or "progress"
        line = progress_line(desc, int(self.n), self.total, self.unit, now - self.start_t)
        if self.postfix:
            line += f" ({self.postfix.lstrip(', ')})"
        self.fp.write(line + "\n")
        self.fp.flush()
        self._line_n, self._line_t = self.n, now


__all__ = ["LOG_EVERY_S", "duration", "note", "on_terminal", "plural", "progress", "progress_line"]
