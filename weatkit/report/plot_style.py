"""How the figures of a run look: one colour, marker and face per space and list set, one line
style per kind of interval, panel titles and legends.

Every figure of a run draws an embeddings space in the same colour and marker: :func:`run_style`
assigns them once from the run's sorted space names (all its tables, before any filter), so
filters and plot kinds do not change them. A list set has one marker face in every figure
(:data:`MEDIAN_FACES` for a set with several lists per language, :data:`SINGLE_FACES` for one
with one list: filled and open for the first of each), so no two list sets of a run look alike.
Every interval is drawn in the style of its kind and level and named in the legend
(:func:`interval_label`). Panel titles name the test's sets
(:func:`weatkit.lists.sources.title_of`, e.g. ``WEAT 1: flowers/insects vs
pleasant/unpleasant``; :func:`panel_title` for the per-test panels of the influence and null
figures, which :func:`per_test_panels` selects); legends sit outside the panels, never on the
data or a title (:func:`legend_below`). Colours are the Okabe–Ito colour-blind-safe palette.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

from weatkit.errors import WeatkitError
from weatkit.lists.sources import title_of
from weatkit.report.run_dir import RunTables, filter_rows
from weatkit.report.tables import KEY_COLUMNS

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
#: Legend label of the individual lists (forest and scatter plots).
LISTS_LABEL = "individual lists"
#: Axis label of the effect size.
D_LABEL = "effect size d"
#: How far under a panel's bottom edge its own legend starts: below the tick labels and the
#: x label.
BELOW_AXES_PT = 34

#: A filter of a run's rows (None: all).
Filter = Sequence[str] | None


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

    Built by :func:`run_style`; every figure of the run draws with it.
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


# ---------------------------------------------------------------------------------------------
# titles, panels and legends


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


def set_panel_title(ax: Axes, title: str, width_in: float) -> None:
    """The panel's title, wrapped at spaces to about the panel's width."""
    chars = max(16, int(width_in * 12))  # about 6 pt per character at 11 pt
    ax.set_title(textwrap.fill(title, chars, break_on_hyphens=False))


def _set_label(list_set: str, median: bool) -> str:
    return f"{list_set}: median of lists" if median else f"{list_set}: single list"


def space_handles(style: RunStyle, models: list[str]) -> list[Line2D]:
    """Legend entries of the spaces: their colour and marker."""
    return [
        Line2D([], [], marker=s.marker, color=s.colour, ls="none", label=m)
        for m, s in ((m, style.spaces[m]) for m in models)
    ]


def list_set_handles(
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


def legend_below(ax: Axes, handles: Sequence[Line2D]) -> None:
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
