"""What ``weatkit compare`` prints by default: a short summary, the rest with ``-v``.

The summary is the headline agreements between measures (Spearman ρ across the model × language
units with its CI and flags; unflagged pairs first, then pairs of different methods, then by
|ρ|; at most :data:`MAX_PAIRS`), the scores whose CI excludes their neutral value (at most
:data:`MAX_SCORES`), how many pairs are flagged, the validity verdicts' counts, and where the
full tables are: the output files and ``weatkit report``. ``-v`` prints every table
(:func:`weatkit.cli.compare.print_compare`). The marks and the legend of a correlation are those
of the full tables (:func:`correlation_cell`, :func:`correlation_legend`).
"""
from __future__ import annotations

from math import factorial
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from weatkit.cli.tables import fmt_p, percent, sets_lines
from weatkit.crossmethod.runner import CompareResult
from weatkit.report.numbers import format_estimate
from weatkit.stats.correlation import (
    EXACT_MAX_UNITS,
    N_PERMUTATIONS,
    degenerate_interval,
    excludes_zero,
    is_significant,
)

#: The most pairs of measures and flagged scores the summary lists (the files have them all).
MAX_PAIRS = 8
MAX_SCORES = 8


def abbreviations(measures: list[str], *, budget: int) -> dict[str, str]:
    """Each measure's printed name: itself, or ``M1``, ``M2``, ... when longer than ``budget``."""
    codes: dict[str, str] = {}
    n_long = 0
    for m in measures:
        if len(m) > budget:
            n_long += 1
        codes[m] = m if len(m) <= budget else f"M{n_long}"
    return codes


def correlation_cell(row: Any, name: str, level: float) -> tuple[str, str, str]:
    """The value cell of statistic ``name`` (``spearman``, ``kendall``) of a correlations row:
    ``(ρ [CI] with the digits of its distance from 0, "*" when significant, the marks)``. Marks:
    † fewer units than ``n_min``, ‡ a degenerate CI, § a CI excluding 0 with p > α."""
    low, high = getattr(row, f"{name}_ci_low"), getattr(row, f"{name}_ci_high")
    p = getattr(row, f"{name}_p")
    marks = "†" if row.n < row.n_min else ""
    marks += "‡" if degenerate_interval(low, high) else ""
    marks += "§" if excludes_zero(low, high) and p > 1.0 - level + 1e-12 else ""
    star = "*" if is_significant(p, row.flag, level, (low, high)) else ""
    return format_estimate(getattr(row, name), low, high, neutral=0.0) + star, star, marks


def correlation_legend(
    used: set[str], corr: pd.DataFrame, level: float, intervals: bool
) -> list[str]:
    """One line on what ρ, τ_b, their CI and p are, then one per mark in ``used``."""
    alpha = 1.0 - level
    ci = f"{percent(level)} CI"
    legend = [
        "ρ, τ_b across model × language units; CI: percentile bootstrap over the units; p: "
        "two-sided permutation p (exact over all n! pairings up to "
        f"{EXACT_MAX_UNITS} units, else {N_PERMUTATIONS:,} seeded pairings)."
    ]
    if "*" in used:
        legend.append(
            f"* {f'the {ci} excludes 0 and ' if intervals else ''}p ≤ {alpha:g} (never "
            "on a flagged row: †, ‡, §)."
        )
    if "†" in used:
        n_min = int(corr["n_min"].iloc[0])
        n = int(corr.loc[corr["n"] < corr["n_min"], "n"].max())
        legend.append(
            f"† fewer than {n_min} units: the exact p of n units is at least 2/n! (2/{n}! = "
            f"{2 / factorial(n):.3f}), so no association can reach p ≤ {alpha:g}; the row is "
            "no evidence either way."
        )
    if "‡" in used:
        legend.append(
            "‡ degenerate CI: every bootstrap resample gives the same value (e.g. ρ = 1 with "
            "3 units); it says nothing about uncertainty."
        )
    if "§" in used:
        legend.append(
            f"§ the {ci} excludes 0 but p > {alpha:g}: with few units or ties the "
            "percentile bootstrap is too narrow; the permutation p decides, so no star on "
            "the row."
        )
    return legend


def print_summary(result: CompareResult, console: Console, output: Path) -> None:
    """The short summary (module docstring) at ``console``'s width."""
    table = result.table
    measures = [c for c in table.columns if c not in ("model", "lang")]
    short = abbreviations(measures, budget=max(12, console.width // 3))
    n_models, n_langs = table["model"].nunique(), table["lang"].nunique()
    console.print(
        f"{n_models} model(s) × {n_langs} language(s), {len(measures)} measures.",
        highlight=False,
        markup=False,
    )
    used = _print_agreements(result, console, short)
    _print_flagged_scores(result, console, short)
    legend = [f"  {short[m]} = {m}" for m in measures if short[m] != m]
    if legend:
        console.print("Measures:", *legend, sep="\n", highlight=False, markup=False)
    tests = [m.split(":")[-1].split("@")[0] for m in measures if ":" in m and _weat(m)]
    for line in sets_lines(tests):
        console.print(line, highlight=False, markup=False)
    if not result.validity.empty:
        console.print(
            f"Validity (validity.csv): {validity_line(result.validity)}",
            highlight=False,
            markup=False,
        )
    corr = result.correlations
    if len(corr):
        level = _level(result)
        for line in correlation_legend(used, corr, level, _bootstrap(corr)):
            console.print(line, highlight=False, markup=False)
    console.print(
        f"Every table: {output}/table.csv (model × language), scores.csv (each score with its "
        "CI), correlations.csv (every pair and scope); `weatkit report "
        f"{output}` puts them on one HTML page; -v prints them all here.",
        highlight=False,
        markup=False,
        soft_wrap=True,  # paths whole, never cut at a hyphen (the terminal wraps the line)
    )


def validity_line(pairs: pd.DataFrame) -> str:
    """How many convergent correlations of the MTMM matrix (``validity.csv``) are significant
    and above every discriminant one, and how many discriminant ones are below."""
    convergent = pairs[pairs["kind"] == "convergent"]
    verdicts = convergent["verdict"]
    valid = int((verdicts.str.contains(", significant;") & verdicts.str.contains("; above")).sum())
    discriminant = pairs[pairs["kind"].str.startswith("heterotrait")]
    below = int(discriminant["verdict"].str.contains("; below every convergent").sum())
    return (
        f"{valid} of {len(convergent)} convergent correlation(s) significant and above every "
        f"discriminant one of their row and column; {below} of {len(discriminant)} "
        "discriminant correlation(s) (different traits) below every convergent one of their "
        "measures."
    )


def _level(result: CompareResult) -> float:
    return float(result.manifest.get("correlation", {}).get("confidence_level", 0.95))


def _bootstrap(corr: pd.DataFrame) -> bool:
    return bool(corr[["spearman_ci_low", "kendall_ci_low"]].notna().to_numpy().any())


def _weat(measure: str) -> bool:
    """A WEAT-family measure (``weat:weat1@0``, ``ca-weat:weat2``, ...), named after its test."""
    return _method(measure).endswith("weat")


def _method(measure: str) -> str:
    return measure.split(":", 1)[0]


def _print_agreements(result: CompareResult, console: Console, short: dict[str, str]) -> set[str]:
    """The headline pairs of measures over all units; returns the marks shown."""
    corr = result.correlations
    if corr.empty:
        console.print(
            "No correlations: each pair of measures needs 3 model × language units with both.",
            highlight=False,
            markup=False,
        )
        return set()
    level = _level(result)
    rows = corr[corr["scope"] == "all"] if (corr["scope"] == "all").any() else corr
    cells = [correlation_cell(r, "spearman", level) for r in rows.itertuples(index=False)]
    order = sorted(
        range(len(rows)),
        key=lambda i: (
            bool(cells[i][2]),
            _method(rows.iloc[i]["measure_x"]) == _method(rows.iloc[i]["measure_y"]),
            -abs(float(rows.iloc[i]["spearman"])) if pd.notna(rows.iloc[i]["spearman"]) else 0.0,
        ),
    )
    shown = order[:MAX_PAIRS]
    ci = f" [{percent(level)} CI]" if _bootstrap(corr) else ""
    more = f"; {len(rows) - len(shown)} more in correlations.csv" if len(rows) > len(shown) else ""
    view = Table(
        title=f"Agreement between measures: {len(shown)} of {len(rows)} pairs{more}",
        title_justify="left",
    )
    for col in ("measures", "n", f"Spearman ρ{ci}", "p", "note"):
        right = col in ("n", "p")
        view.add_column(col, justify="right" if right else "left", no_wrap=col != "measures")
    used: set[str] = set()
    for i in shown:
        r = rows.iloc[i]
        value, star, marks = cells[i]
        used.update(star + marks)
        pair = f"{short[r['measure_x']]} ~ {short[r['measure_y']]}"
        view.add_row(pair, str(r["n"]), value, fmt_p(r["spearman_p"]), marks)
    console.print(view)
    flagged = sum(bool(c[2]) for c in cells)
    if flagged:
        console.print(
            f"{flagged} of {len(rows)} pairs flagged (†, ‡ or §: no evidence either way).",
            highlight=False,
            markup=False,
        )
    return used


def _print_flagged_scores(result: CompareResult, console: Console, short: dict[str, str]) -> None:
    """The scores whose CI excludes their measure's neutral value."""
    scores = result.scores
    if scores.empty or "ci_excludes_neutral" not in scores.columns:
        return
    tested = scores[scores["ci_excludes_neutral"].notna()]
    excluded = tested[tested["ci_excludes_neutral"].astype(bool)]
    level = percent(float(scores["ci_level"].dropna().iloc[0])) if len(tested) else ""
    head = f"Scores whose {level} CI excludes the neutral value: {len(excluded)} of {len(tested)}"
    if excluded.empty:
        console.print(head + ".", highlight=False, markup=False)
        return
    view = Table(title=head, title_justify="left")
    for col in ("model", "lang", "measure", "value [CI]", "neutral"):
        right = col == "neutral"
        view.add_column(col, justify="right" if right else "left", no_wrap=col == "value [CI]")
    for r in excluded.head(MAX_SCORES).itertuples(index=False):
        value = format_estimate(r.value, r.ci_low, r.ci_high, neutral=float(r.neutral))
        measure = short.get(r.measure, r.measure)
        view.add_row(str(r.model), str(r.lang), measure, value, f"{r.neutral:g}")
    console.print(view)
    if len(excluded) > MAX_SCORES:
        console.print(
            f"... and {len(excluded) - MAX_SCORES} more (scores.csv: ci_excludes_neutral).",
            highlight=False,
            markup=False,
        )
