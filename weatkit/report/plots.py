"""Figures of a run directory in the style of the CA-WEAT paper (matplotlib, no display needed).

* :func:`forest_plot` (Figures 1 and 2): effect size d with its CI per language (y axis) and
  embeddings (colour, offset within a language's band), one panel per test. Each list set has
  its own marker: a set with several lists per language (CA-WEAT) shows the median with its
  order-statistic CI (filled marker, thick line) and every list as a small grey point; a set
  with one list (WEAT, X-WEAT) shows that list's value and bootstrap CI (open marker).
* :func:`scatter_plot` (Figures 3 and 4): d against an isomorphism measure (``iso_ev``,
  ``iso_gh``, ... from the summary of a ``--isomorphism`` run; one point per embeddings and
  language) or against ``count_difference`` (``asymmetry.csv``; one point per list), with the
  least-squares line over all points of the panel and its R² in the panel's legend.
* :func:`heatmap_plot`: d as an embeddings × language grid per (list set, test), annotated,
  on a diverging colour map centred at 0 (shared by all panels).

Every function takes the :class:`~weatkit.report.run_dir.RunTables` of a run and the filters
``tests``, ``list_sets``, ``embeddings``, ``langs`` (None: all; ``langs`` also sets the order of
the languages), and returns a :class:`matplotlib.figure.Figure` that is not registered with
pyplot: nothing is shown, and it is garbage-collected like any object. :func:`save_figure`
writes it atomically in the format given by the file's suffix. Colours are the Okabe–Ito
colour-blind-safe palette; the heat map uses ColorBrewer's colour-blind-safe ``RdBu``.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from weatkit._io.paths import check_writable
from weatkit.errors import WeatkitError
from weatkit.measures.registry import get_measure
from weatkit.report.run_dir import RunTables, filter_rows, lang_order
from weatkit.report.tables import write_outputs

#: The kinds of plot :func:`plot` makes.
PLOT_KINDS = ("forest", "scatter", "heatmap")
#: Figure formats by file suffix.
FIGURE_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
#: Okabe & Ito (2008) colours, black last (it is the colour of fit lines and reference marks).
PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000")
#: Markers of the list sets, in order of appearance.
MARKERS = ("o", "D", "s", "^", "v", "P", "X", "*")
#: Colour of individual lists in forest plots.
LIST_GREY = "0.6"
#: Legend label of the individual lists in forest plots.
LISTS_LABEL = "individual lists"
#: What ``--x`` may be besides ``iso_<measure>``.
COUNT_X = "count_difference"
D_LABEL = "effect size d"

STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "weatkit",  # stable ids in SVG files
}
# No creation dates in PDF/SVG files, so the same run gives the same bytes.
_METADATA: dict[str, dict[str, None]] = {
    "png": {},
    "pdf": {"CreationDate": None},
    "svg": {"Date": None},
}
_X_LABELS = {
    "iso_ev": "eigenvector similarity (EV)",
    "iso_gh": "Gromov-Hausdorff distance (GH)",
    "iso_gw": "Gromov-Wasserstein discrepancy (GW)",
    COUNT_X: "count(A) − count(B)",
}
Filter = Sequence[str] | None


def plot(
    tables: RunTables,
    kind: str,
    *,
    x: str | None = None,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """The figure of one of :data:`PLOT_KINDS`; ``x`` is for ``scatter`` only (default ``iso_gh``).

    Raises:
        WeatkitError: an unknown kind, ``x`` with another kind, or the errors of the plot.
    """
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    if kind not in PLOT_KINDS:
        raise WeatkitError(f"unknown plot kind {kind!r}: choose one of {', '.join(PLOT_KINDS)}")
    if kind == "scatter":
        return scatter_plot(tables, x=x or "iso_gh", **filters)
    if x is not None:
        raise WeatkitError(f"--x is for --kind scatter, not {kind}")
    return forest_plot(tables, **filters) if kind == "forest" else heatmap_plot(tables, **filters)


def figure_format(path: str | os.PathLike) -> str:
    """The format (``png``, ``pdf``, ``svg``) of a figure file, from its suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise WeatkitError(
            f"cannot tell the figure format of {path}: give a file ending in "
            f"{', '.join(FIGURE_FORMATS)}"
        )
    return FIGURE_FORMATS[suffix]


def figure_bytes(fig: Figure, fmt: str, dpi: float = 150) -> bytes:
    """The figure rendered as ``png``, ``pdf`` or ``svg`` bytes at ``dpi``."""
    if dpi <= 0:
        raise WeatkitError(f"--dpi must be positive, not {dpi}")
    buffer = io.BytesIO()
    with mpl.rc_context(STYLE):
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
    return buffer.getvalue()


def save_figure(fig: Figure, path: str | os.PathLike, dpi: float = 150) -> Path:
    """Write the figure atomically to ``path``, in the format of its suffix; returns the path."""
    target = check_writable(path)
    data = figure_bytes(fig, figure_format(target), dpi)
    (written,) = write_outputs(target.parent, {target.name: data})
    return written


# ---------------------------------------------------------------------------------------------
# forest


def forest_plot(
    tables: RunTables,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Effect sizes with CIs per language and embeddings, one panel per test (paper Fig. 1–2)."""
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    summary = filter_rows(tables.table("summary"), table="summary.csv", **filters)
    summary = summary.dropna(subset=["effect_size"])
    if summary.empty:
        raise WeatkitError("summary.csv has no effect sizes for these filters")
    lists = _individual_lists(tables.results, summary)
    models = list(summary["embeddings"].unique())
    sets = list(summary["list_set"].unique())
    multi = {s: bool((summary.loc[summary["list_set"] == s, "n_lists"] > 1).any()) for s in sets}
    langs_shown = lang_order(summary, langs)
    slots = [(m, s) for m in models for s in sets]
    band = min(0.8, 0.2 * len(slots))
    offsets = {slot: (i - (len(slots) - 1) / 2) * band / len(slots) for i, slot in enumerate(slots)}
    panels = list(summary["test"].unique())
    height = 1.4 + len(langs_shown) * float(np.clip(0.15 * len(slots), 0.45, 1.8))
    with mpl.rc_context(STYLE):
        fig = new_figure(1.6 + 3.4 * len(panels) + 2.0, height)
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        for ax, test in zip(axes, panels, strict=True):
            y_of = {lang: i for i, lang in enumerate(langs_shown)}
            _forest_panel(ax, summary[summary["test"] == test], lists, y_of, offsets, multi, models)
            ax.set_title(test)
        axes[0].set_yticks(range(len(langs_shown)), langs_shown)
        axes[0].set_ylim(len(langs_shown) - 0.5, -0.5)
        axes[0].set_ylabel("language")
        fig.legend(
            handles=_forest_handles(models, sets, multi, not lists.empty), loc="outside right upper"
        )
    return fig


def _individual_lists(results: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The results rows behind the summary rows that are medians over several lists."""
    keys = ["embeddings", "lang", "list_set", "test"]
    medians = summary.loc[summary["n_lists"] > 1, keys]
    if results.empty or medians.empty:
        return pd.DataFrame(columns=[*keys, "effect_size"])
    return results.merge(medians, on=keys).dropna(subset=["effect_size"])


def _forest_panel(
    ax: Axes,
    rows: pd.DataFrame,
    lists: pd.DataFrame,
    y_of: dict[str, int],
    offsets: dict[tuple[str, str], float],
    multi: dict[str, bool],
    models: list[str],
) -> None:
    """One test: grey list points, then each summary row's CI line and marker, and x = 0."""
    panel_lists = lists[lists["test"] == rows["test"].iloc[0]]
    if not panel_lists.empty:
        ys = [y_of[r.lang] + offsets[(r.embeddings, r.list_set)] for r in panel_lists.itertuples()]
        ax.scatter(
            panel_lists["effect_size"], ys, s=10, color=LIST_GREY, zorder=1, label=LISTS_LABEL
        )
    markers = dict(zip(multi, MARKERS * len(multi), strict=False))
    for row in rows.itertuples():
        y = y_of[row.lang] + offsets[(row.embeddings, row.list_set)]
        colour = _colour(models, row.embeddings)
        filled = multi[row.list_set]
        ax.hlines(
            y,
            row.effect_size_ci_low,
            row.effect_size_ci_high,
            color=colour,
            lw=2.2 if filled else 1.2,
            zorder=2,
        )
        ax.plot(
            [row.effect_size],
            [y],
            marker=markers[row.list_set],
            ms=6.5 if filled else 5.5,
            color=colour,
            mfc=colour if filled else "white",
            ls="none",
            zorder=3,
        )
    ax.axvline(get_measure("weat").neutral, color="0.25", lw=0.8, ls="--", zorder=0)
    ax.set_xlabel(D_LABEL)
    ax.grid(axis="x", color="0.92", lw=0.6)


def _forest_handles(
    models: list[str], sets: list[str], multi: dict[str, bool], with_lists: bool
) -> list[Line2D]:
    """Legend entries: one colour per embeddings, one marker per list set, the grey lists."""
    handles = [Line2D([], [], color=_colour(models, m), lw=2.2, label=m) for m in models]
    for marker, list_set in zip(MARKERS * len(sets), sets, strict=False):
        filled = multi[list_set]
        label = f"{list_set}: median of lists" if filled else f"{list_set}: single list"
        face = "0.2" if filled else "white"
        handles.append(Line2D([], [], marker=marker, color="0.2", mfc=face, ls="none", label=label))
    if with_lists:
        handles.append(
            Line2D([], [], marker="o", ms=4, color=LIST_GREY, ls="none", label=LISTS_LABEL)
        )
    return handles


# ---------------------------------------------------------------------------------------------
# scatter


def scatter_plot(
    tables: RunTables,
    *,
    x: str = "iso_gh",
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Effect size against ``x`` with the least-squares line and its R² (paper Fig. 3–4).

    ``x`` is an ``iso_<measure>`` column of the summary (points: embeddings × language) or
    ``count_difference`` from ``asymmetry.csv`` (points: lists). One panel per test; the fit
    pools all the panel's points (every embeddings and list set), as in Figure 4.
    """
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    points = _scatter_points(tables, x, filters)
    models = list(points["embeddings"].unique())
    sets = list(points["list_set"].unique())
    markers = dict(zip(sets, MARKERS * len(sets), strict=False))
    panels = list(points["test"].unique())
    with mpl.rc_context(STYLE):
        fig = new_figure(1.2 + 3.6 * len(panels) + 2.0, 3.6)
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        for ax, test in zip(axes, panels, strict=True):
            _scatter_panel(ax, points[points["test"] == test], x, models, markers)
            ax.set_title(test)
            ax.set_xlabel(_x_label(tables, x))
        axes[0].set_ylabel(D_LABEL)
        handles = [
            Line2D([], [], marker="o", color=_colour(models, m), ls="none", label=m) for m in models
        ] + [Line2D([], [], marker=markers[s], color="0.3", ls="none", label=s) for s in sets]
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


def _scatter_panel(
    ax: Axes, points: pd.DataFrame, x: str, models: list[str], markers: dict[str, str]
) -> None:
    """The points of one test, coloured by embeddings, and the least-squares line with R²."""
    for (model, list_set), group in points.groupby(["embeddings", "list_set"], sort=False):
        ax.scatter(
            group[x],
            group["effect_size"],
            color=_colour(models, model),
            marker=markers[list_set],
            s=28,
            alpha=0.9,
            zorder=2,
        )
    xs, ds = points[x].to_numpy(float), points["effect_size"].to_numpy(float)
    fit = least_squares(xs, ds)
    if fit is not None:
        slope, intercept, r2 = fit
        grid = np.linspace(xs.min(), xs.max(), 50)
        ax.plot(
            grid,
            intercept + slope * grid,
            color="0.15",
            lw=1.2,
            label=f"least squares, R² = {r2:.3f}",
            zorder=3,
        )
        ax.legend(loc="best")
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


# ---------------------------------------------------------------------------------------------
# heat map


def heatmap_plot(
    tables: RunTables,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Effect size per embeddings (rows) and language (columns), one panel per list set and test.

    Cells are annotated with d; missing cells are blank. Panels share one colour scale,
    symmetric around 0.
    """
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    summary = filter_rows(tables.table("summary"), table="summary.csv", **filters)
    models = list(summary["embeddings"].unique())
    langs_shown = lang_order(summary, langs)
    sets, panel_tests = list(summary["list_set"].unique()), list(summary["test"].unique())
    limit = float(np.nanmax(np.abs(summary["effect_size"].to_numpy(float)), initial=0.0)) or 1.0
    norm = Normalize(-limit, limit)
    width = 1.8 + len(panel_tests) * (1.0 + 0.62 * len(langs_shown)) + 1.0
    height = 0.8 + len(sets) * (0.9 + 0.42 * len(models))
    with mpl.rc_context(STYLE):
        fig = new_figure(width, height)
        axes = fig.subplots(len(sets), len(panel_tests), squeeze=False)
        image = None
        for (i, list_set), (j, test) in (
            (a, b) for a in enumerate(sets) for b in enumerate(panel_tests)
        ):
            rows = summary[(summary["list_set"] == list_set) & (summary["test"] == test)]
            grid = rows.pivot_table(
                index="embeddings",
                columns="lang",
                values="effect_size",
                aggfunc="first",
                dropna=False,
            )
            grid = grid.reindex(index=models, columns=langs_shown)
            image = _heat_panel(axes[i, j], grid, norm)
            axes[i, j].set_title(f"{list_set} {test}")
        for ax in axes.flat:
            ax.label_outer()  # axis labels and tick labels on the outer panels only
        fig.colorbar(image, ax=axes, label=D_LABEL, shrink=0.9)
    return fig


def _heat_panel(ax: Axes, grid: pd.DataFrame, norm: Normalize) -> mpl.image.AxesImage:
    """One annotated grid; NaN cells are left blank on a light grey background."""
    values = grid.to_numpy(float)
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdBu_r", norm=norm, aspect="auto")
    ax.set_facecolor("0.93")
    ax.set_xticks(range(grid.shape[1]), grid.columns)
    ax.set_yticks(range(grid.shape[0]), grid.index)
    ax.set_xlabel("language")
    ax.set_ylabel("embeddings")
    ax.spines[:].set_visible(False)
    for (r, c), v in np.ndenumerate(values):
        if not np.isnan(v):
            dark = abs(v) > 0.6 * norm.vmax
            ax.text(
                c,
                r,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
            )
    return image


# ---------------------------------------------------------------------------------------------
# shared


def new_figure(width: float, height: float) -> Figure:
    """A figure with constrained layout and an Agg canvas, not registered with pyplot."""
    fig = Figure(figsize=(round(width, 2), round(height, 2)), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _colour(models: list[str], model: str) -> str:
    return PALETTE[models.index(model) % len(PALETTE)]
