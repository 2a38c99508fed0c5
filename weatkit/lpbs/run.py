"""LPBS on the tests of list sets: :func:`run_lpbs`, with the tables ``weatkit lpbs`` prints and
writes (``summary.csv``: one row per test; ``scores.csv``: b(a, t) per template and attribute;
``words.csv``: the log-probabilities per target word)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from weatkit.lists.sources import select_lists
from weatkit.lpbs.measure import LpbsResult, lpbs

if TYPE_CHECKING:
    from weatkit.embeddings.contextual import ContextualOptions

#: Columns of :attr:`LpbsRun.summary`.
SUMMARY_COLUMNS = [
    "model", "list_set", "lang", "list_id", "test", "masked", "inserted", "unit", "templates",
    "n_a", "n_b", "statistic", "statistic_low", "statistic_high", "effect_size",
    "effect_size_low", "effect_size_high", "confidence_level", "pvalue", "permutation_method",
    "n_permutations",
]  # fmt: skip


@dataclass(frozen=True)
class LpbsRun:
    """The results of :func:`run_lpbs`, one per test, and the report lines of the list
    selection."""

    model: str
    results: list[LpbsResult]
    confidence_level: float
    report: list[str] = field(default_factory=list)
    sources: list[dict[str, str]] = field(default_factory=list)

    @property
    def summary(self) -> pd.DataFrame:
        rows = []
        for r in self.results:
            t = r.test
            x, y, a, b = t.names
            masked, inserted = ((a, b), (x, y)) if r.swap else ((x, y), (a, b))
            s_ci = r.statistic_ci or (float("nan"),) * 2
            d_ci = r.effect_size_ci or (float("nan"),) * 2
            rows.append(
                [self.model, t.list_set, t.lang, t.list_id, t.test, "/".join(masked),
                 "/".join(inserted), r.unit, len(r.templates), r.n_a, r.n_b, r.statistic,
                 *s_ci, r.effect_size, *d_ci, self.confidence_level, r.pvalue,
                 r.permutation_method, r.n_permutations]
            )  # fmt: skip
        return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)

    def _stacked(self, name: str) -> pd.DataFrame:
        frames = [
            getattr(r, name).assign(list_set=r.test.list_set, lang=r.test.lang,
                                    list_id=r.test.list_id, test=r.test.test)
            for r in self.results
        ]  # fmt: skip
        table = pd.concat(frames, ignore_index=True)
        keys = ["list_set", "lang", "list_id", "test"]
        return table[[*keys, *(c for c in table.columns if c not in keys)]]

    @property
    def scores(self) -> pd.DataFrame:
        """b(a, t) of every test (``scores.csv``)."""
        return self._stacked("scores")

    @property
    def words(self) -> pd.DataFrame:
        """The log-probabilities of every test (``words.csv``)."""
        return self._stacked("words")


def run_lpbs(
    model: str,
    lists: Sequence[str],
    *,
    langs: Sequence[str] | None = None,
    tests: Sequence[str] | None = None,
    confidence_level: float = 0.95,
    options: ContextualOptions | None = None,
    **settings: Any,
) -> LpbsRun:
    """:func:`~weatkit.lpbs.measure.lpbs` of ``model`` on each test the list sets or files
    ``lists`` hold (kept by ``langs`` and ``tests``, :func:`weatkit.lists.sources.select_lists`);
    ``settings`` are :func:`~weatkit.lpbs.measure.lpbs`'s keyword arguments."""
    selection = select_lists(list(lists), langs, tests=tests)
    results = [
        lpbs(model, test, confidence_level=confidence_level, options=options, **settings)
        for test in selection.tests
    ]
    return LpbsRun(str(model), results, confidence_level, selection.report, selection.sources)
