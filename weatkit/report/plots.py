"""Figures of a run directory in the style of the CA-WEAT paper (matplotlib, no display needed).

* :func:`forest_plot` (Figures 1 and 2): effect size d with its interval per language (y axis)
  and embeddings (offset within a language's band), one panel per test, every panel on one x
  axis. A list set with several lists per language (CA-WEAT) shows the median (filled marker)
  with its order-statistic interval and every list as a small grey point; a set with one list
  (WEAT, X-WEAT) shows that list's value (open marker) and bootstrap CI. Every interval is
  drawn in the style of its kind and level and named in the legend (``95% bootstrap CI
  (percentile)``, ``75% median interval (order statistics)``, ``≥ 95% median interval (order
  statistics)`` where a median's interval reaches the run's confidence level). When the run
  directory has ``pooled.csv`` (``weatkit run --pool ... languages``, a grid's ``pool``), each
  panel gets a last row, ``pooled``: per embeddings and list set, the random-effects estimate
  of d over the languages (DerSimonian & Laird 1986; the ``languages`` level of
  :func:`weatkit.report.tables.pooled_frame`) as a diamond in the space's colour, its centre at
  the pooled d and its tips at the ends of its CI, labelled ``pooled (random effects, I² =
  x%)``. The ``lists`` level (one pooled d per language, beside the median) is not drawn: the
  language rows already show the median and every list. The row is left out when ``langs``
  filters the languages, since the estimate pools all the run's languages.
* :func:`scatter_plot` (Figures 3 and 4): d against an isomorphism measure (``iso_ev``,
  ``iso_gh``, ... from the summary of a ``--isomorphism`` run; one point per embeddings and
  language, labelled with its language) or against ``count_difference`` (``asymmetry.csv``; one
  point per list), with one least-squares line per embeddings space (over its points of every
  list set, in the space's colour) and each line's R² in a legend under the panel.
* :func:`heatmap_plot`: d as an embeddings × language grid per (list set, test), annotated,
  on a diverging colour map centred at 0 (shared by all panels).

Every figure of a run draws an embeddings space in the same colour and marker: :func:`run_style`
assigns them once from the run's sorted space names (all its tables, before any filter), so
filters and plot kinds do not change them. A list set has one marker face in every figure
(:data:`MEDIAN_FACES` for a set with several lists per language, :data:`SINGLE_FACES` for one
with one list: filled and open for the first of each), so no two list sets of a run look alike.
Panel titles name the test's sets (:func:`title_of`, e.g. ``WEAT 1: flowers/insects vs
pleasant/unpleasant``); legends sit outside the panels, never on the data or a title.

Every function takes the :class:`~weatkit.report.run_dir.RunTables` of a run and the filters
``tests``, ``list_sets``, ``embeddings``, ``langs`` (None: all; ``langs`` also sets the order of
the languages), and returns a :class:`matplotlib.figure.Figure` that is not registered with
pyplot: nothing is shown, and it is garbage-collected like any object. :func:`save_figure`
writes it atomically in the format given by the file's suffix. Colours are the Okabe–Ito
colour-blind-safe palette; the heat map uses ColorBrewer's colour-blind-safe ``RdBu``.
"""

from __future__ import annotations

import io
import math
import os
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon
from matplotlib.transforms import offset_copy

from weatkit._io.paths import check_writable
from weatkit.errors import WeatkitError
from weatkit.lists.files import CAWEAT_TESTS
from weatkit.lists.sources import CALISKAN_ROLES
from weatkit.measures.registry import get_measure
from weatkit.report.run_dir import RunTables, filter_rows, lang_order
from weatkit.report.tables import KEY_COLUMNS, write_outputs

#: The kinds of plot :func:`plot` makes.
PLOT_KINDS = ("forest", "scatter", "heatmap")
#: Figure formats by file suffix.
FIGURE_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
#: Okabe & Ito (2008) colours, black last (it is the colour of fit lines and reference marks).
PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442", "#000000")
#: Colours of the embeddings spaces: the palette without black.
SPACE_COLOURS = PALETTE[:-1]
#: Markers of the embeddings spaces (with 7 colours, the first 56 spaces differ in one or both).
MARKERS = ("o", "D", "s", "^", "v", "P", "X", "*")
#: Marker faces (a matplotlib fill style; ``none`` is an open, white marker) of the list sets
#: with several lists per language (CA-WEAT: medians) and of those with one list, in the order
#: the run's sorted sets of each kind get them (cycling).
MEDIAN_FACES = ("full", "left", "bottom")
SINGLE_FACES = ("none", "right", "top")
#: Interval line widths: the median's order-statistic interval, the others (bootstrap CIs).
MEDIAN_LW, CI_LW = 2.4, 1.2
#: Dash patterns of the levels of one kind of interval, highest level first (solid).
DASHES: tuple[tuple[float, ...], ...] = ((), (6, 2), (3, 2), (1, 1.5), (6, 2, 1, 2), (1, 3))
MEDIAN_METHOD = "median-order-statistic"
#: The tables whose rows belong to one embeddings space (correlation tables also pool them).
SPACE_TABLES = ("results", "summary", "isomorphism", "comparisons", "asymmetry")
#: Colour of individual lists in forest plots.
LIST_GREY = "0.6"
#: Legend label of the individual lists in forest plots.
LISTS_LABEL = "individual lists"
#: What ``--x`` may be besides ``iso_<measure>``.
COUNT_X = "count_difference"
D_LABEL = "effect size d"
#: How far under a panel's bottom edge its own legend starts: below the tick labels and the
#: x label.
BELOW_AXES_PT = 34

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


#: Panels (tests) a per-test figure (influence, null) shows at most; more must be narrowed down.
MAX_PANELS = 12


def per_test_panels(
    tables: RunTables,
    table: str,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> list[tuple[tuple, pd.DataFrame]]:
    """The rows of run table ``table`` (``influence``, ``null``) after the filters, grouped by
    test (:data:`~weatkit.report.tables.KEY_COLUMNS`), at most :data:`MAX_PANELS` groups.

    Raises:
        WeatkitError: the run has no such table, the filters leave no row, or more than
            :data:`MAX_PANELS` tests are left (the message says how to narrow them down).
    """
    name = f"{table}.csv"
    frame = filter_rows(
        tables.table(table),
        table=name,
        tests=tests,
        list_sets=list_sets,
        embeddings=embeddings,
        langs=langs,
    )
    panels = list(frame.groupby(KEY_COLUMNS, sort=False))
    if len(panels) > MAX_PANELS:
        raise WeatkitError(
            f"{name} has {len(panels)} tests for these filters; a figure shows at most "
            f"{MAX_PANELS}: choose with --test, --lang, --embeddings or --list-set"
        )
    return panels


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
# one style per run


@dataclass(frozen=True)
class SpaceStyle:
    """How one embeddings space is drawn in every figure of a run."""

    colour: str
    marker: str


@dataclass(frozen=True)
class IntervalStyle:
    """How one kind of interval is drawn, and its legend label (which states its level)."""

    label: str
    linewidth: float
    dashes: tuple[float, ...] = ()

    @property
    def linestyle(self) -> str | tuple[float, tuple[float, ...]]:
        """A matplotlib line style: ``solid`` or an (offset, dash pattern) pair."""
        return (0, self.dashes) if self.dashes else "solid"


@dataclass(frozen=True)
class RunStyle:
    """The styles of one run: a colour and marker per space, a line style per interval kind.

    Built by :func:`run_style`; every plot function of this module draws with it.
    """

    spaces: Mapping[str, SpaceStyle]
    intervals: Mapping[str, IntervalStyle]
    confidence_level: float = 0.95
    #: The marker face of each list set (:data:`MEDIAN_FACES`, :data:`SINGLE_FACES`).
    faces: Mapping[str, str] = field(default_factory=dict)

    def order(self, names: Iterable[str]) -> list[str]:
        """The distinct ``names`` in the run's (sorted) order of spaces."""
        present = set(names)
        return [name for name in self.spaces if name in present]

    def median(self, list_set: str) -> bool:
        """Whether the list set has several lists per language (its rows are medians)."""
        return self.faces.get(list_set, "none") in MEDIAN_FACES

    def face(self, list_set: str, colour: str) -> dict[str, str]:
        """The ``Line2D`` keyword arguments of the list set's marker face in ``colour``."""
        face = self.faces.get(list_set, "none")
        if face == "none":
            return {"fillstyle": "full", "markerfacecolor": "white"}
        return {"fillstyle": face, "markerfacecolor": colour, "markerfacecoloralt": "white"}

    def interval(self, method: object, level: object) -> IntervalStyle | None:
        """The style of an interval from a summary row's ``ci_method`` and ``ci_level``; None
        when the run has no such interval (a row without one)."""
        return self.intervals.get(interval_label(method, level, self.confidence_level))


def run_style(tables: RunTables) -> RunStyle:
    """The one style map of a run, from its sorted space names and its summary's intervals.

    Space ``i`` of the sorted names in the ``embeddings`` (and ``baseline``) columns of
    :data:`SPACE_TABLES` gets colour ``SPACE_COLOURS[i mod 7]`` and marker ``MARKERS[i mod 8]``;
    filters and plot kinds therefore never change a space's look. Each interval kind
    (:func:`interval_label`) of the summary gets a line: median intervals thick, bootstrap CIs
    thin; within a kind the highest level is solid and lower levels have sparser dashes
    (:data:`DASHES`). The summary's list sets get their faces: those with more than one list
    for some language the faces of :data:`MEDIAN_FACES` in sorted order, the others those of
    :data:`SINGLE_FACES`."""
    names: set[str] = set()
    for name in SPACE_TABLES:
        frame = getattr(tables, name)
        for column in ("embeddings", "baseline"):
            if column in frame.columns:
                names.update(str(v) for v in frame[column].dropna())
    spaces = {
        name: SpaceStyle(SPACE_COLOURS[i % len(SPACE_COLOURS)], MARKERS[i % len(MARKERS)])
        for i, name in enumerate(sorted(names))
    }
    config = tables.manifest.get("config", {})
    engine = config.get("engine", {}) if isinstance(config, dict) else {}
    nominal = float(engine.get("confidence_level", 0.95))
    kinds: dict[str, tuple[bool, float]] = {}
    summary = tables.summary
    if {"effect_size_ci_low", "effect_size_ci_high"} <= set(summary.columns):
        bounded = summary.dropna(subset=["effect_size_ci_low", "effect_size_ci_high"])
        unknown = pd.Series(np.nan, index=bounded.index)
        methods, levels = (bounded.get(c, unknown) for c in ("ci_method", "ci_level"))
        for method, level in zip(methods, levels, strict=True):
            label = interval_label(method, level, nominal)
            shown = nominal if label.startswith("≥") else float(level)
            kinds[label] = (method == MEDIAN_METHOD, 0.0 if math.isnan(shown) else shown)
    intervals: dict[str, IntervalStyle] = {}
    for median in (True, False):
        ranked = sorted(
            (label for label, kind in kinds.items() if kind[0] == median),
            key=lambda label: (-kinds[label][1], label),
        )
        for i, label in enumerate(ranked):
            width = MEDIAN_LW if median else CI_LW
            intervals[label] = IntervalStyle(label, width, DASHES[i % len(DASHES)])
    faces: dict[str, str] = {}
    if {"list_set", "n_lists"} <= set(summary.columns):
        several = summary.groupby("list_set")["n_lists"].max() > 1
        for kind, names in ((MEDIAN_FACES, several[several]), (SINGLE_FACES, several[~several])):
            for i, name in enumerate(sorted(map(str, names.index))):
                faces[name] = kind[i % len(kind)]
    return RunStyle(spaces=spaces, intervals=intervals, confidence_level=nominal, faces=faces)


def interval_label(method: object, level: object, confidence_level: float = 0.95) -> str:
    """The legend label of an interval of a summary row, stating its level.

    ``95% bootstrap CI (percentile)`` or ``(BCa)``; for the median of several lists (CA-WEAT
    paper §5) ``75% median interval (order statistics)`` with the interval's actual coverage
    when it is below the run's ``confidence_level``, else ``≥ 95% median interval (order
    statistics)``; ``interval`` when neither method nor level is known.
    """
    method = method if isinstance(method, str) else ""
    try:
        value = float(level)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = math.nan
    level = value if math.isfinite(value) else None
    if method == MEDIAN_METHOD:
        if level is None:
            return "median interval (order statistics)"
        if level >= confidence_level - 1e-9:
            return f"≥ {_percent(confidence_level)} median interval (order statistics)"
        return f"{_percent(level)} median interval (order statistics)"
    if method.startswith("bootstrap-"):
        kind = method.removeprefix("bootstrap-")
        name = {"percentile": "percentile", "bca": "BCa"}.get(kind, kind)
        prefix = f"{_percent(level)} " if level is not None else ""
        return f"{prefix}bootstrap CI ({name})"
    return f"{_percent(level)} interval" if level is not None else "interval"


def _percent(level: float) -> str:
    """``0.95`` -> ``95%``, ``0.875`` -> ``87.5%``, ``0.9375`` -> ``93.8%``."""
    return f"{100 * level:.3g}%"


def title_of(test: str) -> str:
    """A test's title with its sets' names: ``weat1`` -> ``WEAT 1: flowers/insects vs
    pleasant/unpleasant``.

    The names are the concepts of :data:`weatkit.lists.files.CAWEAT_TESTS` (WEAT1, WEAT2), else
    Caliskan et al.'s roles of :data:`weatkit.lists.sources.CALISKAN_ROLES` (WEAT3-WEAT10); a
    test id known to neither is its own title.
    """
    match = re.fullmatch(r"weat(\d+)", test, flags=re.IGNORECASE)
    if match is None:
        return test
    if test.lower() in CAWEAT_TESTS:
        names = [name.lower() for name in CAWEAT_TESTS[test.lower()]]
    elif test.upper() in CALISKAN_ROLES:
        names = [_words(name) for name in CALISKAN_ROLES[test.upper()]]
    else:
        return test
    x, y, a, b = names
    return f"WEAT {int(match.group(1))}: {x}/{y} vs {a}/{b}"



def panel_title(keys: Sequence[object], width: int = 44) -> str:
    """The title of a per-test panel (influence, null) from its key
    (:data:`~weatkit.report.tables.KEY_COLUMNS`): the test's sets (:func:`title_of`, wrapped at
    ``width`` characters), then its space, language and list, e.g. ``WEAT 1: flowers/insects vs
    pleasant/unpleasant`` and ``glove-6b-50d, en, weat``; a list of a set with several lists
    (CA-WEAT) is named: ``MiniLM@0, de, ca-weat:v1 list de1``."""
    embeddings, lang, list_set, list_id, test = map(str, keys)
    where = list_set if list_id in (list_set, test) else f"{list_set} list {list_id}"
    heading = textwrap.fill(title_of(test), width, break_on_hyphens=False)
    return f"{heading}\n{embeddings}, {lang}, {where}"

_PROPER = {"European", "African", "American"}


def _words(name: str) -> str:
    """``EuropeanAmericanNames`` -> ``European American names``, ``MaleTerms`` -> ``male
    terms``."""
    words = re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)
    return " ".join(w if w in _PROPER else w.lower() for w in words)


def _set_title(ax: Axes, title: str, width_in: float) -> None:
    """The panel's title, wrapped at spaces to about the panel's width."""
    chars = max(16, int(width_in * 12))  # about 6 pt per character at 11 pt
    ax.set_title(textwrap.fill(title, chars, break_on_hyphens=False))


def _set_label(list_set: str, median: bool) -> str:
    return f"{list_set}: median of lists" if median else f"{list_set}: single list"


def _space_handles(style: RunStyle, models: list[str]) -> list[Line2D]:
    """Legend entries of the spaces: their colour and marker."""
    return [
        Line2D([], [], marker=s.marker, color=s.colour, ls="none", label=m)
        for m, s in ((m, style.spaces[m]) for m in models)
    ]


def _set_handles(
    style: RunStyle, list_sets: Iterable[str], labels: Mapping[str, str] | None = None
) -> list[Line2D]:
    """Legend entries of the list sets: a grey circle with the set's face (filled: medians,
    open: single lists)."""
    return [
        Line2D(
            [],
            [],
            marker="o",
            color="0.3",
            ls="none",
            label=(labels or {}).get(list_set, _set_label(list_set, style.median(list_set))),
            **style.face(list_set, "0.3"),
        )
        for list_set in list_sets
    ]


def _legend_below(ax: Axes, handles: Sequence[Line2D]) -> None:
    """A legend of the panel under its x label, outside the data and every title."""
    below = offset_copy(ax.transAxes, fig=ax.figure, y=-BELOW_AXES_PT, units="points")
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=below,
        fontsize=8,
        frameon=False,
    )


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
    band = min(0.8, 0.2 * len(slots))
    offsets = {slot: (i - (len(slots) - 1) / 2) * band / len(slots) for i, slot in enumerate(slots)}
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
            _set_title(ax, title_of(test), 3.4)
        axes[0].set_yticks(range(len(rows)), rows)
        axes[0].set_ylim(len(rows) - 0.5, -0.5)
        axes[0].set_ylabel("language")
        bounded = summary.dropna(subset=["effect_size_ci_low", "effect_size_ci_high"])
        intervals = [
            style.interval(getattr(r, "ci_method", None), getattr(r, "ci_level", None))
            for r in bounded.itertuples()
        ]
        shown = [i for i in style.intervals.values() if i in intervals]
        handles = [*_space_handles(style, models), *_set_handles(style, list_sets)]
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


def _pooled_over_languages(
    tables: RunTables, summary: pd.DataFrame, langs: Filter
) -> pd.DataFrame:
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
    ax.axvline(get_measure("weat").neutral, color="0.25", lw=0.8, ls="--", zorder=0)
    ax.set_xlabel(D_LABEL)
    ax.grid(axis="x", color="0.92", lw=0.6)


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
            _set_title(ax, title_of(test), 3.6)
            ax.set_xlabel(_x_label(tables, x))
        axes[0].set_ylabel(D_LABEL)
        handles = [*_space_handles(style, models), *_set_handles(style, list_sets, labels)]
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
        _legend_below(ax, fits)
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
    models = run_style(tables).order(summary["embeddings"])
    langs_shown = lang_order(summary, langs)
    sets, panel_tests = list(summary["list_set"].unique()), list(summary["test"].unique())
    limit = float(np.nanmax(np.abs(summary["effect_size"].to_numpy(float)), initial=0.0)) or 1.0
    norm = Normalize(-limit, limit)
    panel_width = 1.0 + 0.62 * len(langs_shown)
    width = 1.8 + len(panel_tests) * panel_width + 1.0
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
            _set_title(axes[i, j], f"{title_of(test)} ({list_set})", panel_width)
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

