"""Readable rich tables of the summary, correlation and comparison tables (for the terminal)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from rich.markup import escape
from rich.table import Table

from weatkit.lists.sources import title_of
from weatkit.measures.registry import MEASURES
from weatkit.report.numbers import format_estimate
from weatkit.report.numbers import format_p as fmt_p
from weatkit.stats.correlation import is_significant


def fmt(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


#: What a table shows where a row has no value (no correlation below 3 units).
NO_VALUE = "—"


def ci_header(name: str, level: float, *bounds: object) -> str:
    """``name [95% CI]``, or ``name`` alone when no row has an interval (``--bootstrap 0``):
    ``bounds`` are the interval columns (or values) of the rows shown."""
    shown = any(bool(pd.Series(b, dtype=float).notna().any()) for b in bounds)
    return f"{name} [{percent(level)} CI]" if shown else name


def percent(level: float) -> str:
    """A confidence level as a percentage without spurious decimals: 0.95 -> ``95%``,
    0.975 -> ``97.5%``."""
    return f"{round(100 * level, 2):g}%"


def rich_summary(summary: pd.DataFrame, level: float, *, results: pd.DataFrame) -> Table:
    """The summary table; every row states the level of its intervals and its significance.

    A row is one list's S and d with their bootstrap CI at the requested ``level`` and the
    permutation p-value, or (CA-WEAT) the median over a language's lists with the
    order-statistic CI, whose coverage ``ci_level`` is the smallest >= ``level`` that the number
    of lists allows, or that of [min, max] below it (marked "< level"). A median has no p-value:
    its row gives instead ``sig k/n``, the number k of its n lists (with a p-value, taken from
    ``results``) whose permutation p < α = 1 − ``level``.
    """
    alpha = 1.0 - level
    intervals = bool(summary["effect_size_ci_low"].notna().any())
    caption = [
        STATISTICS_LINE,
        *sets_lines(summary["test"]),
        *(_interval_lines(summary, level) if intervals else []),
        f"sig k/n: k of the n lists have permutation p < {alpha:.3g}.",
    ]
    table = Table(
        title="WEAT summary: S and Cohen's d (medians over a language's lists)",
        caption=escape("\n".join(caption)),
        caption_justify="left",
    )
    ci = ("S [CI]", "d [CI]", "CI") if intervals else ("S", "d")  # none with --bootstrap 0
    for col in ("embeddings", "lang", "list set", "test", "lists", *ci,
                f"p or sig (p < {alpha:.3g})"):  # fmt: skip
        table.add_column(col, justify="right" if col == "lists" or col.startswith("p") else "left")
    p_values = results.groupby(["embeddings", "lang", "list_set", "test"], sort=False)["p_value"]
    for row in summary.itertuples(index=False):
        median = row.ci_method == "median-order-statistic"
        if median:
            p = pd.to_numeric(
                p_values.get_group((row.embeddings, row.lang, row.list_set, row.test)),
                errors="coerce",
            ).dropna()
            significance = f"sig {int((p < alpha).sum())}/{len(p)}" if len(p) else ""
        else:
            significance = fmt_p(row.p_value)
        cells = [
            with_ci(row.statistic, row.statistic_ci_low, row.statistic_ci_high),
            with_ci(row.effect_size, row.effect_size_ci_low, row.effect_size_ci_high),
        ]
        if intervals:
            cells.append(_ci_label(median, row.ci_level, level))
        table.add_row(
            row.embeddings, row.lang, row.list_set, row.test, str(row.n_lists), *cells, significance
        )
    return table


#: The footer line that defines S and d (every table that shows them).
STATISTICS_LINE = (
    "S = Σ_X s(x) − Σ_Y s(y), s(w) = mean_A cos(w, a) − mean_B cos(w, b) (Caliskan et al.'s "
    "test statistic); d = (mean_X s − mean_Y s) / std_{X∪Y} s (its effect size, Cohen's d); "
    "both 0 without association, > 0: X goes with A and Y with B."
)


def sets_lines(tests: Iterable[object]) -> list[str]:
    """One footer line naming the sets X/Y vs A/B of the tests shown (those with known names:
    :func:`weatkit.lists.sources.title_of`), as the figures' panel titles do: ``Sets X/Y vs
    A/B: weat1 flowers/insects vs pleasant/unpleasant.``"""
    named = []
    for test in dict.fromkeys(map(str, tests)):
        title = title_of(test)
        if ": " in title:
            named.append(f"{test} {title.split(': ', 1)[1]}")
    return [f"Sets X/Y vs A/B: {'; '.join(named)}."] if named else []


def _interval_lines(summary: pd.DataFrame, level: float) -> list[str]:
    """What each kind of interval of the CI column is: the bootstrap CI of one list, the
    order-statistic interval of a median over n lists (with why its level is not round)."""
    lines = [f"{percent(level)} bootstrap: percentile bootstrap CI of one list's S and d."]
    if (summary["ci_method"] == "median-order-statistic").any():
        lines.append(
            "P% median: the interval [x_(j), x_(n−j+1)] of the order statistics of the median "
            "over the n lists; its exact coverage P = 1 − 2·P(Bin(n, ½) < j) is the smallest at "
            f"or above {percent(level)} that n lists allow (e.g. [min, max] of 6 lists: "
            "1 − 2/2⁶ ≈ 96.9%); "
            f"marked < {percent(level)}: even [min, max] of so few lists covers less."
        )
    return lines


def rich_pooled(pooled: pd.DataFrame, level: float) -> Table:
    """The ``pooled`` table: pooled d with its normal CI, heterogeneity (τ², I², Q and its p)
    and how many units, per level."""
    caption = [
        f"d [{percent(level)} CI]: the pooled effect size with its normal CI; τ², I², Q: the "
        "heterogeneity of the pooled units.",
        *sets_lines(pooled["test"]),
    ]
    table = Table(
        title="Random-effects pooled d (DerSimonian-Laird)",
        caption=escape("\n".join(caption)),
        caption_justify="left",
    )
    for col in ("level", "embeddings", "lang", "list set", "test", "k",
                f"d [{percent(level)} CI]", "τ²", "I²", "Q (p)"):  # fmt: skip
        table.add_column(col, justify="right" if col in ("k", "τ²", "I²") else "left")
    for row in pooled.itertuples(index=False):
        table.add_row(
            row.level,
            row.embeddings,
            fmt(row.lang),
            row.list_set,
            row.test,
            str(row.k),
            with_ci(row.effect_size, row.effect_size_ci_low, row.effect_size_ci_high),
            fmt(row.tau2),
            f"{100 * row.i2:.0f}%",
            f"{fmt(row.q, 2)} ({fmt_p(row.q_pvalue)})",
        )
    return table


def rich_association(association: pd.DataFrame, level: float) -> Table:
    """The ``association`` table (:data:`weatkit.report.tables.ASSOCIATION_COLUMNS`): each
    metric's value with its bootstrap CI and p, per test and set; SC-WEAT's per-word rows are
    counted in the caption (``association.csv`` has them)."""
    words = association["metric"] == "sc_weat"
    shown = association[~words]
    header = ci_header("value", level, shown["ci_low"], shown["ci_high"])
    caption = f"sc_weat: {int(words.sum())} per-word rows in association.csv"
    table = Table(title="Association metrics", caption=caption if words.any() else None)
    for col in ("embeddings", "lang", "list set", "list", "test", "metric", "set", header, "p"):
        table.add_column(col)
    for row in shown.itertuples(index=False):
        table.add_row(
            row.embeddings, row.lang, row.list_set, row.list_id, row.test, row.metric, row.set,
            with_ci(row.statistic, row.ci_low, row.ci_high, _neutral(row.metric)),
            fmt_p(row.p_value),
        )  # fmt: skip
    return table


def _neutral(metric: str) -> float | None:
    """The registry's neutral value of an association metric (``sc_weat`` is ``sc-weat``)."""
    measure = MEASURES.get(metric.replace("_", "-"))
    return None if measure is None else measure.neutral


def _ci_label(median: bool, ci_level: float, level: float) -> str:
    """``95% bootstrap``, ``96.9% median`` or ``75% median (< 95%)``; empty without a CI."""
    if np.isnan(ci_level):
        return ""
    if not median:
        return f"{percent(ci_level)} bootstrap"
    below = f" (< {percent(level)})" if ci_level < level - 1e-9 else ""
    return f"{percent(ci_level)} median{below}"


def rich_correlations(correlations: pd.DataFrame, confidence_level: float = 0.95) -> Table:
    """Effect size vs isomorphism across languages (``correlations.csv``), in the layout of
    :func:`rich_correlation_table`."""
    return rich_correlation_table(
        correlations,
        title="Effect size vs isomorphism across languages",
        keys={
            "embeddings": "embeddings",
            "list set": "list_set",
            "test": "test",
            "measure": "measure",
        },
        n=("langs", "n_languages"),
        units="languages",
        confidence_level=confidence_level,
    )


def rich_correlation_table(
    correlations: pd.DataFrame,
    *,
    title: str,
    keys: dict[str, str],
    n: tuple[str, str],
    units: str,
    confidence_level: float = 0.95,
) -> Table:
    """A correlation table (:func:`weatkit.stats.correlation.pearson_spearman` rows): the
    ``keys`` columns (header: column), the number of units ``n`` (header, column), r and ρ with
    their permutation p (:func:`fmt_p`), and R². ``*`` marks a significant correlation by the
    one rule (:func:`weatkit.stats.correlation.is_significant`: p ≤ α = 1 − ``confidence_level``,
    the row not flagged; these tables have no intervals). A row with a ``flag``
    (:func:`weatkit.stats.correlation.small_sample_flag`: too few ``units``) is marked † after
    its n and the reason given under the table; a row without a correlation shows —."""
    table = Table(title=title)
    for col in (*keys, n[0], "Pearson r (p)", "Spearman ρ (p)", "R²"):
        table.add_column(col, justify="right" if col in (n[0], "R²") else "left")
    reasons: dict[str, None] = {}
    starred = False
    for row in correlations.itertuples(index=False):
        flag = getattr(row, "flag", "")
        flag = flag if isinstance(flag, str) else ""
        if flag:
            reasons[flag] = None
        cells = []
        for value, p in ((row.pearson_r, row.pearson_p), (row.spearman_rho, row.spearman_p)):
            star = "*" if is_significant(p, flag, confidence_level) else ""
            starred = starred or bool(star)
            cells.append(_with_p(value, p, star))
        table.add_row(
            *(str(getattr(row, column)) for column in keys.values()),
            str(getattr(row, n[1])) + (" †" if flag else ""),
            *cells,
            fmt(row.r2, 2) or NO_VALUE,
        )
    caption = [f"p: two-sided permutation p (exact over all n! orders up to 8 {units})"]
    if starred:
        caption.append(f"* p ≤ {1 - confidence_level:.2g} (never on a † row)")
    caption += [f"† {reason}" for reason in reasons]
    table.caption = "\n".join(caption)
    table.caption_justify = "left"
    return table


def _with_p(value: float, p: float, star: str) -> str:
    """``0.52* (0.0310)``; ``0.52`` without a p; — without a value."""
    if pd.isna(value):
        return NO_VALUE
    text = f"{fmt(float(value), 2)}{star}"
    return f"{text} ({fmt_p(p)})" if not pd.isna(p) else text


def with_ci(value: float, low: float, high: float, neutral: float | None = 0.0) -> str:
    """:func:`weatkit.report.numbers.format_estimate` at 2 decimals (S, d and Δd: neutral 0)."""
    return format_estimate(value, low, high, neutral=neutral, decimals=2)


def rich_comparisons(comparisons: pd.DataFrame) -> Table:
    """Paired differences to the baseline, per language, list set and test: the median Δ over
    the lists (CA-WEAT) with the share of lists whose CI excludes 0."""
    table = Table(title="Δd to the baseline (paired bootstrap)")
    for col in ("embeddings", "baseline", "lang", "list set", "test", "lists", "median Δd",
                "CI excludes 0"):  # fmt: skip
        table.add_column(col, justify="right" if col in ("lists", "median Δd") else "left")
    keys = ["embeddings", "baseline", "lang", "list_set", "test"]
    for key, group in comparisons.groupby(keys, sort=False):
        excludes = ((group.difference_ci_low > 0) | (group.difference_ci_high < 0)).sum()
        if len(group) == 1:
            row = group.iloc[0]
            delta = with_ci(row.difference, row.difference_ci_low, row.difference_ci_high)
        else:
            delta = fmt(float(group.difference.median()), 2)
        table.add_row(*key, str(len(group)), delta, f"{excludes}/{len(group)}")
    return table


def rich_controls(controls: pd.DataFrame, level: float, *, title: str, unit: str) -> Table:
    """A controls summary (:data:`weatkit.measures.controls.CONTROL_SUMMARY_COLUMNS`): per
    control kind the matched originals' and the control's score with their CIs, and the flag
    (:func:`weatkit.measures.controls.as_biased`); ``unit`` names the counted items. Scores
    are percentages, 50 the neutral value."""

    def cell(value: float, low: float, high: float) -> str:
        return with_ci(value, low, high, neutral=50.0)

    view = Table(title=title)
    original = ci_header("original", level, controls["original_ci_low"])
    control = ci_header("control", level, controls["ci_low"])
    for col in ("control", unit, original, control, "control as biased"):
        view.add_column(col, justify="left" if col == "control" else "right")
    for row in controls.itertuples(index=False):
        view.add_row(
            str(row.control),
            str(row.n),
            cell(row.original, row.original_ci_low, row.original_ci_high),
            cell(row.metric, row.ci_low, row.ci_high),
            "YES" if row.as_biased else "no",
        )
    return view
