"""The forest plot of a run (CA-WEAT paper, Figures 1 and 2).

:func:`forest_plot`: effect size d with its interval per language (y axis) and embeddings
(offset within a language's band), one panel per test, every panel on one x axis. A list set
with several lists per language (CA-WEAT) shows the median (filled marker) with its
order-statistic interval and every list as a small grey point; a set with one list (WEAT,
X-WEAT) shows that list's value (open marker) and bootstrap CI. Every interval is drawn in the
style of its kind and level and named in the legend (``95% bootstrap CI (percentile)``, ``75%
median interval (order statistics)``, ``≥ 95% median interval (order statistics)`` where a
median's interval reaches the run's confidence level;
:func:`~weatkit.report.plot_style.interval_label`). When the run directory has ``pooled.csv``
(``weatkit run --pool ... languages``, a grid's ``pool``), each panel gets a last row,
``pooled``: per embeddings and list set, the random-effects estimate of d over the languages
(DerSimonian & Laird 1986; the ``languages`` level of
:func:`weatkit.report.tables.pooled_frame`) as a diamond in the space's colour, its centre at
the pooled d and its tips at the ends of its CI, labelled ``pooled (random effects, I² =
x%)``. The ``lists`` level (one pooled d per language, beside the median) is not drawn: the
language rows already show the median and every list. The row is left out when ``langs``
filters the languages, since the estimate pools all the run's languages.

:func:`estimate_forest` draws any table of estimates with their intervals in the same look, one
panel: the figures of the measure plugins (:mod:`weatkit.measures.plugins`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon

from weatkit.errors import WeatkitError
from weatkit.measures.registry import get_measure
from weatkit.report.figures import STYLE, new_figure
from weatkit.report.plot_style import (
    CI_LW,
    D_LABEL,
    LISTS_LABEL,
    MARKERS,
    SPACE_COLOURS,
    Filter,
    IntervalStyle,
    RunStyle,
    SpaceStyle,
    list_set_handles,
    run_style,
    set_panel_title,
    space_handles,
    title_of,
)
from weatkit.report.run_dir import RunTables, filter_rows, lang_order

#: Colour of individual lists in forest plots.
LIST_GREY = "0.6"
_Slot = TypeVar("_Slot", bound=Hashable)


def forest_plot(
    tables: RunTables,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Effect sizes with intervals per language and embeddings, one panel per test, all panels
    on one x axis (paper Fig. 1–2)."""
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    style = run_style(tables)
    summary = filter_rows(tables.table("summary"), table="summary.csv", **filters)
    summary = summary.dropna(subset=["effect_size"])
    if summary.empty:
        raise WeatkitError("summary.csv has no effect sizes for these filters")
    lists = _individual_lists(tables.results, summary)
    models = style.order(summary["embeddings"])
    list_sets = list(summary["list_set"].unique())
    slots = [(m, s) for m in models for s in list_sets]
    band, offsets = _offsets(slots)
    # The rows of every panel, top to bottom: the languages, then the pooled estimate over
    # them (with pooled.csv), drawn in the panel loop below.
    rows = lang_order(summary, langs)
    pooled = _pooled_over_languages(tables, summary, langs)
    if not pooled.empty:
        rows = [*rows, POOLED_ROW]
    y_of = {label: i for i, label in enumerate(rows)}
    panels = list(summary["test"].unique())
    height = 1.4 + len(rows) * float(np.clip(0.15 * len(slots), 0.45, 1.8))
    with mpl.rc_context(STYLE):
        fig = new_figure(1.6 + 3.4 * len(panels) + 3.0, height)
        axes = fig.subplots(1, len(panels), sharex=True, sharey=True, squeeze=False)[0]
        for ax, test in zip(axes, panels, strict=True):
            panel = summary[summary["test"] == test]
            _forest_lists(ax, lists[lists["test"] == test], y_of, offsets)
            _forest_panel(ax, panel, y_of, offsets, style)
            if not pooled.empty:
                half = 0.25 if len(slots) == 1 else 0.45 * band / len(slots)
                _forest_pooled(ax, pooled[pooled["test"] == test], y_of, offsets, style, half)
            set_panel_title(ax, title_of(test), 3.4)
        axes[0].set_yticks(range(len(rows)), rows)
        axes[0].set_ylim(len(rows) - 0.5, -0.5)
        axes[0].set_ylabel("language")
        bounded = summary.dropna(subset=["effect_size_ci_low", "effect_size_ci_high"])
        intervals = [
            style.interval(getattr(r, "ci_method", None), getattr(r, "ci_level", None))
            for r in bounded.itertuples()
        ]
        shown = [i for i in style.intervals.values() if i in intervals]
        handles = [*space_handles(style, models), *list_set_handles(style, list_sets)]
        handles += [
            Line2D([], [], color="0.3", lw=i.linewidth, ls=i.linestyle, label=i.label)
            for i in shown
        ]
        if not lists.empty:
            handles.append(
                Line2D([], [], marker="o", ms=4, color=LIST_GREY, ls="none", label=LISTS_LABEL)
            )
        if not pooled.empty:
            level = float(pooled["ci_level"].iloc[0])
            label = f"pooled over languages (random effects, {100 * level:g}% CI)"
            handles.append(Line2D([], [], marker="D", ms=5, color="0.3", ls="none", label=label))
        fig.legend(handles=handles, loc="outside right upper")
    return fig


#: The y label of the forest plot's row of pooled estimates.
POOLED_ROW = "pooled"


def pooled_label(i2: float) -> str:
    """The label of a pooled diamond: ``pooled (random effects, I² = 41%)``."""
    share = "n/a" if not np.isfinite(i2) else f"{100 * i2:.0f}%"
    return f"pooled (random effects, I² = {share})"


def _pooled_over_languages(tables: RunTables, summary: pd.DataFrame, langs: Filter) -> pd.DataFrame:
    """The ``languages`` rows of ``pooled.csv`` for the panels' tests and slots (none without
    pooled.csv, or when ``langs`` filters the languages)."""
    pooled = tables.pooled
    if langs is not None or pooled.empty or "level" not in pooled.columns:
        return pd.DataFrame()
    keys = ["embeddings", "list_set", "test"]
    shown = summary[keys].drop_duplicates().astype(str)
    rows = pooled[pooled["level"] == "languages"].dropna(
        subset=["effect_size", "effect_size_ci_low", "effect_size_ci_high"]
    )
    return rows.astype({k: str for k in keys}).merge(shown, on=keys)


def _forest_pooled(
    ax: Axes,
    pooled: pd.DataFrame,
    y_of: dict[str, int],
    offsets: dict[tuple[str, str], float],
    style: RunStyle,
    half: float,
) -> None:
    """One test's pooled estimates over languages: a diamond per embeddings and list set,
    (low, y), (d, y − half), (high, y), (d, y + half), with its label beside it."""
    for row in pooled.itertuples():
        y = y_of[POOLED_ROW] + offsets[(row.embeddings, row.list_set)]
        colour = style.spaces[row.embeddings].colour
        d, low, high = row.effect_size, row.effect_size_ci_low, row.effect_size_ci_high
        label = pooled_label(float(row.i2))
        ax.add_patch(
            Polygon(
                [(low, y), (d, y - half), (high, y), (d, y + half)],
                closed=True,
                facecolor=colour,
                edgecolor=colour,
                label=label,
                zorder=3,
            )
        )
        ax.annotate(
            label.removeprefix("pooled ").strip("()").removeprefix("random effects, "),
            (high, y),
            xytext=(3, 0),
            textcoords="offset points",
            fontsize=6.5,
            va="center",
            color=colour,
        )


def _individual_lists(results: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The results rows behind the summary rows that are medians over several lists."""
    keys = ["embeddings", "lang", "list_set", "test"]
    medians = summary.loc[summary["n_lists"] > 1, keys]
    if results.empty or medians.empty:
        return pd.DataFrame(columns=[*keys, "effect_size"])
    return results.merge(medians, on=keys).dropna(subset=["effect_size"])


def _forest_lists(
    ax: Axes,
    lists: pd.DataFrame,
    y_of: dict[str, int],
    offsets: dict[tuple[str, str], float],
) -> None:
    """The individual lists of one test as small grey points."""
    if not lists.empty:
        ys = [y_of[r.lang] + offsets[(r.embeddings, r.list_set)] for r in lists.itertuples()]
        ax.scatter(lists["effect_size"], ys, s=10, color=LIST_GREY, zorder=1, label=LISTS_LABEL)


def _forest_panel(
    ax: Axes,
    rows: pd.DataFrame,
    y_of: dict[str, int],
    offsets: dict[tuple[str, str], float],
    style: RunStyle,
) -> None:
    """One test: each summary row's interval (labelled with its level) and marker (labelled
    with its space), and x = 0."""
    for row in rows.itertuples():
        y = y_of[row.lang] + offsets[(row.embeddings, row.list_set)]
        space = style.spaces[row.embeddings]
        interval = style.interval(getattr(row, "ci_method", None), getattr(row, "ci_level", None))
        if interval is not None:
            ax.hlines(
                y,
                row.effect_size_ci_low,
                row.effect_size_ci_high,
                color=space.colour,
                lw=interval.linewidth,
                linestyles=[interval.linestyle],
                label=interval.label,
                zorder=2,
            )
        ax.plot(
            [row.effect_size],
            [y],
            marker=space.marker,
            ms=6.5 if style.median(row.list_set) else 5.5,
            color=space.colour,
            **style.face(row.list_set, space.colour),
            ls="none",
            label=row.embeddings,
            zorder=3,
        )
    _neutral_axis(ax, get_measure("weat").neutral, D_LABEL)


def _neutral_axis(ax: Axes, neutral: float, xlabel: str) -> None:
    """A panel's dashed line at the neutral value, its x label and grid."""
    ax.axvline(neutral, color="0.25", lw=0.8, ls="--", zorder=0)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", color="0.92", lw=0.6)


def _offsets(slots: Sequence[_Slot]) -> tuple[float, dict[_Slot, float]]:
    """The band of a row and each slot's offset in it (``slots`` in their order)."""
    band = min(0.8, 0.2 * len(slots))
    return band, {s: (i - (len(slots) - 1) / 2) * band / len(slots) for i, s in enumerate(slots)}


def label_of_test(row: Mapping[str, object]) -> str:
    """A test's label in a measure's figures, ``list/test, lang`` (``gender/career, en``), the
    list left out when it is the list set's own name (``weat6, en`` of ``caliskan``)."""
    test = row["test"] if row["list_id"] == row["list_set"] else f"{row['list_id']}/{row['test']}"
    return f"{test}, {row['lang']}"


def estimate_forest(
    frame: pd.DataFrame,
    *,
    row: str,
    slot: str,
    estimate: str,
    low: str,
    high: str,
    interval: str,
    neutral: float,
    xlabel: str,
    title: str,
) -> Figure:
    """One panel of estimates with their intervals, in :func:`forest_plot`'s look.

    Each row r of ``frame`` is a marker at ``r[estimate]`` and a line from ``r[low]`` to
    ``r[high]`` (the legend's ``interval``) on the y row labelled ``r[row]`` (top to bottom in
    ``frame``'s order), offset within the row's band by ``r[slot]``: slot i (in ``frame``'s
    order) gets colour ``SPACE_COLOURS[i mod 7]`` and marker ``MARKERS[i mod 8]``, as the spaces
    of a run; a dashed line marks ``neutral``. A row without an estimate is left out, one without
    an interval drawn without its line.

    Raises:
        WeatkitError: no row has an estimate.
    """
    shown = frame.dropna(subset=[estimate])
    if shown.empty:
        raise WeatkitError(f"no {estimate} to draw for these filters")
    rows = list(dict.fromkeys(shown[row].astype(str)))
    slots = list(dict.fromkeys(shown[slot].astype(str)))
    style = RunStyle(
        spaces={
            s: SpaceStyle(SPACE_COLOURS[i % len(SPACE_COLOURS)], MARKERS[i % len(MARKERS)])
            for i, s in enumerate(slots)
        },
        intervals={interval: IntervalStyle(interval, CI_LW)},
    )
    _, offsets = _offsets(slots)
    height = 1.4 + len(rows) * float(np.clip(0.15 * len(slots), 0.45, 1.8))
    with mpl.rc_context(STYLE):
        fig = new_figure(8.0, height)
        ax = fig.subplots()
        for r in shown.to_dict("records"):
            y = rows.index(str(r[row])) + offsets[str(r[slot])]
            look = style.spaces[str(r[slot])]
            if not (pd.isna(r[low]) or pd.isna(r[high])):
                ax.hlines(y, r[low], r[high], color=look.colour, lw=CI_LW, label=interval,
                          zorder=2)  # fmt: skip
            ax.plot([r[estimate]], [y], marker=look.marker, ms=5.5, color=look.colour,
                    ls="none", label=str(r[slot]), zorder=3)  # fmt: skip
        _neutral_axis(ax, neutral, xlabel)
        set_panel_title(ax, title, 5.0)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        handles = space_handles(style, slots)
        handles.append(Line2D([], [], color="0.3", lw=CI_LW, label=interval))
        fig.legend(handles=handles, loc="outside right upper")
    return fig
