"""The scatter plot of a run (CA-WEAT paper, Figures 3 and 4).

:func:`scatter_plot`: d against an isomorphism measure (``iso_ev``, ``iso_gh``, ... from the
summary of a ``--isomorphism`` run; one point per embeddings and language, labelled with its
language) or against ``count_difference`` (``asymmetry.csv``; one point per list), with one
least-squares line per embeddings space (:func:`least_squares`, over its points of every list
set, in the space's colour) and each line's R² in a legend under the panel.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from weatkit.errors import WeatkitError
from weatkit.measures.registry import get_measure
from weatkit.report.figures import STYLE, new_figure
from weatkit.report.plot_style import (
    D_LABEL,
    LISTS_LABEL,
    Filter,
    RunStyle,
    legend_below,
    list_set_handles,
    run_style,
    set_panel_title,
    space_handles,
    title_of,
)
from weatkit.report.run_dir import RunTables, filter_rows

#: What ``--x`` may be besides ``iso_<measure>``.
COUNT_X = "count_difference"
#: Axis labels of the x columns (other ``iso_<measure>``: the measure's name in capitals).
_X_LABELS = {
    "iso_ev": "eigenvector similarity (EV)",
    "iso_gh": "Gromov-Hausdorff distance (GH)",
    "iso_gw": "Gromov-Wasserstein discrepancy (GW)",
    COUNT_X: "count(A) − count(B)",
}


def scatter_plot(
    tables: RunTables,
    *,
    x: str = "iso_gh",
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Effect size against ``x`` with a least-squares line and its R² per space (paper Fig. 3–4).

    ``x`` is an ``iso_<measure>`` column of the summary (points: embeddings × language, each
    labelled with its language) or ``count_difference`` from ``asymmetry.csv`` (points: lists).
    One panel per test; in a panel, each embeddings space gets its own line, fitted to its
    points of every list set (for ``count_difference`` the ``all`` row of
    ``asymmetry_correlations.csv``), in the space's colour, its R² in the legend under the panel.
    """
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    style = run_style(tables)
    points = _scatter_points(tables, x, filters)
    models = style.order(points["embeddings"])
    per_list = x == COUNT_X  # one point per list
    list_sets = list(points["list_set"].unique())
    labels = {s: f"{s}: {LISTS_LABEL}" for s in list_sets} if per_list else None
    panels = list(points["test"].unique())
    with mpl.rc_context(STYLE):
        fig = new_figure(1.2 + 3.6 * len(panels) + 2.4, 3.8 + 0.18 * len(models))
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        for ax, test in zip(axes, panels, strict=True):
            _scatter_panel(ax, points[points["test"] == test], x, style, langs=not per_list)
            set_panel_title(ax, title_of(test), 3.6)
            ax.set_xlabel(_x_label(tables, x))
        axes[0].set_ylabel(D_LABEL)
        handles = [*space_handles(style, models), *list_set_handles(style, list_sets, labels)]
        fig.legend(handles=handles, loc="outside right upper")
    return fig


def _scatter_points(tables: RunTables, x: str, filters: dict[str, Filter]) -> pd.DataFrame:
    """Rows with both ``x`` and ``effect_size``, from the summary or ``asymmetry.csv``."""
    if x == COUNT_X:
        name, frame = "asymmetry.csv", tables.table("asymmetry")
    elif x.startswith("iso_"):
        name, frame = "summary.csv", tables.table("summary")
        if x not in frame.columns:
            available = [c for c in frame.columns if c.startswith("iso_")]
            have = f" (it has {', '.join(available)})" if available else ""
            measure = x.removeprefix("iso_")
            raise WeatkitError(
                f"summary.csv has no {x} column{have}: it needs a run with --isomorphism LANG "
                f"--iso-measures {measure}"
            )
    else:
        raise WeatkitError(
            f"unknown --x {x!r}: use iso_<measure> (iso_ev, iso_gh, iso_gw) or {COUNT_X}"
        )
    points = filter_rows(frame, table=name, **filters).dropna(subset=[x, "effect_size"])
    if points.empty:
        raise WeatkitError(f"no rows of {name} have both effect_size and {x} for these filters")
    return points


def _scatter_panel(ax: Axes, points: pd.DataFrame, x: str, style: RunStyle, *, langs: bool) -> None:
    """The points of one test in their space's colour and marker and their list set's face
    (labelled with their language when ``langs``), and per space the least-squares line, its
    R² in the legend under the panel."""
    fits = []
    for model in style.order(points["embeddings"]):
        space = style.spaces[model]
        own = points[points["embeddings"] == model]
        for list_set, group in own.groupby("list_set", sort=False):
            ax.plot(
                group[x],
                group["effect_size"],
                ls="none",
                marker=space.marker,
                ms=5.5,
                color=space.colour,
                **style.face(list_set, space.colour),
                alpha=0.9,
                label=model,
                zorder=2,
            )
        if langs:
            for row in own.itertuples():
                ax.annotate(
                    row.lang,
                    (getattr(row, x), row.effect_size),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=7,
                    color=space.colour,
                )
        xs, ds = own[x].to_numpy(float), own["effect_size"].to_numpy(float)
        fit = least_squares(xs, ds)
        if fit is not None:
            slope, intercept, r2 = fit
            grid = np.linspace(xs.min(), xs.max(), 50)
            fits += ax.plot(
                grid,
                intercept + slope * grid,
                color=space.colour,
                lw=1.2,
                label=f"{model}: least squares, R² = {r2:.3f}",
                zorder=3,
            )
    if fits:
        legend_below(ax, fits)
    ax.axhline(get_measure("weat").neutral, color="0.25", lw=0.8, ls="--", zorder=0)


def least_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float] | None:
    """Slope, intercept and R² = 1 − SS_res / SS_tot of the least-squares line of y on x.

    None with fewer than two points or when x or y is constant (no line or no R²).
    """
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (intercept + slope * x)
    r2 = 1.0 - float(residual @ residual) / float(((y - y.mean()) ** 2).sum())
    return float(slope), float(intercept), r2


def _x_label(tables: RunTables, x: str) -> str:
    label = _X_LABELS.get(x, x.removeprefix("iso_").upper())
    reference = tables.reference_lang
    if x.startswith("iso_") and reference:
        label += f" to {reference}"
    if x == COUNT_X and "counts_source" in tables.asymmetry.columns:
        sources = set(tables.asymmetry["counts_source"].dropna())
        wordfreq = sources and all(str(s).startswith("wordfreq") for s in sources)
        label += " (wordfreq, per million words)" if wordfreq else " in the training corpus"
    return label
