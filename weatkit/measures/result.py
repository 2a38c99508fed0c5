"""The one result shape every bias measure returns: :class:`MeasureResult`, and its tidy table.

A measure computed on one source (a language model, or word embeddings) in one language gives
one value with, where the measure has one, a confidence interval and its level, the number of
units it was computed on, and how it was computed. :func:`to_frame` turns a list of them into a
table with the stable columns :data:`RESULT_COLUMNS`; ``weatkit compare`` joins these rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass, fields, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from weatkit.stats.sampling import ItemSample


@dataclass(frozen=True)
class MeasureResult:
    """One measure on one source in one language.

    Attributes:
        measure: the registered name (:data:`weatkit.measures.registry.MEASURES`), e.g.
            ``"gest:g_s"``, ``"stereoset:ss_term"``, ``"crows:pll"``, ``"weat"``.
        source: the model or embeddings name.
        lang: language code.
        value: the measure's value (its ``statistic``).
        ci_low, ci_high: confidence interval (NaN without one).
        confidence_level: the interval's level (for CA-WEAT medians its actual coverage;
            NaN without an interval).
        n: units the value is computed on (samples, pairs, examples, sentences, lists), or
            None.
        method: how it was computed (interval method, convention, templates...).
        test: the test within the measure when it has several (WEAT: ``LIST_SET:TEST``, with
            ``@LAYER`` for a model's layer, e.g. ``"ca-weat:v1:weat1@-2"``); empty otherwise.
    """

    measure: str
    source: str
    lang: str
    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    confidence_level: float = math.nan
    n: int | None = None
    method: str = ""
    test: str = ""

    @property
    def statistic(self) -> float:
        """The value (``scipy.stats`` name)."""
        return self.value

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)``."""
        return (self.ci_low, self.ci_high)

    @property
    def column(self) -> str:
        """The column name of this measure in ``weatkit compare``'s joined table: ``test``
        when there is one, else ``measure``."""
        return self.test or self.measure


def on_sample(results: list[MeasureResult], sample: ItemSample | None) -> list[MeasureResult]:
    """``results`` with ``method`` saying they were computed on ``sample`` (``--limit``:
    ``...; sample of 100 of 1,508 pairs, stratified by bias type (seed 0)``); unchanged
    without a sample."""
    if sample is None:
        return results
    return [
        replace(r, method=f"{r.method}; {sample.describe()}" if r.method else sample.describe())
        for r in results
    ]


def on_convention(
    results: list[MeasureResult], conventions: Mapping[str, Mapping[str, str]]
) -> list[MeasureResult]:
    """``results`` with ``method`` saying a model's scores left a term out (``conventions``:
    :func:`weatkit.scoring.conventions.summarize` of the scoring; ``...; first token excluded``,
    :mod:`weatkit.scoring.conventions`); unchanged when every term was included."""
    left_out = sorted({c["first_token"] for c in conventions.values()} - {"included"})
    if not left_out:
        return results
    said = "; ".join(f"first token {value}" for value in left_out)
    return [replace(r, method=f"{r.method}; {said}" if r.method else said) for r in results]


#: Columns of :func:`to_frame`, in order (the fields of :class:`MeasureResult`).
RESULT_COLUMNS: list[str] = [f.name for f in fields(MeasureResult)]


def to_frame(results: Iterable[MeasureResult]) -> pd.DataFrame:
    """One row per result, columns :data:`RESULT_COLUMNS` (``n`` as nullable integers).

    Example:
        >>> to_frame([MeasureResult("gest:g_s", "bert", "en", 1.2, n=3)])[["measure", "n"]]
            measure  n
        0  gest:g_s  3
    """
    import pandas as pd

    frame = pd.DataFrame([astuple(r) for r in results], columns=RESULT_COLUMNS)
    frame["n"] = frame["n"].astype("Int64")
    return frame
