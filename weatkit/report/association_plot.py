"""``weatkit plot RUN_DIR --kind METRIC``: the association metrics of a run, one panel per test.

One figure kind per metric where one reads well (a run with ``--metrics``;
:mod:`weatkit.association.query` says which sets each metric takes):

* ``ripa``, ``rnd``, ``direct_bias``, ``mac`` — a horizontal bar per word of
  ``association_items.csv`` (RIPA's β(w) and RND's δ(v) = ‖v − m_X‖ − ‖v − m_Y‖ of the words of
  A and B, DirectBias's cos(w, g) of the words of A and B, MAC's mean cosine distance of the
  words of X and Y), coloured by the word's set, words sorted by value, the metric's value per
  set (``association.csv``) in the panel's title; at most :data:`MAX_ITEMS` words, those
  farthest from 0;
* ``sc_weat`` — each target word's SC-WEAT effect size with its bootstrap interval
  (``association.csv``), coloured by its set (X, Y);
* ``rnsb`` — RNSB's distribution over the target sets, P_k = q_k / Σ_j q_j with q_k the mean
  negative probability of set k's words (``association_items.csv``), against the uniform 1/m a
  test without bias has; the title gives RNSB = KL(P ‖ U) (with the run's ``rnsb_over: words``
  the KL is over the words, the bars still over the sets);
* ``ect`` — ECT's two similarity vectors as a scatter, one point per attribute word a at
  (cos(m_X, a), cos(m_Y, a)) (``association_items.csv``), coloured by its attribute set (A, B);
  the title gives each set's Spearman ρ with its interval and p (``association.csv``): ρ near 1
  when the points rise together, whatever their slope.

Panel titles name the test's sets, space, language and list
(:func:`~weatkit.report.plot_style.panel_title`), as the other per-test figures (influence,
null); the legend of the sets' colours sits above the panels.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from weatkit.errors import WeatkitError
from weatkit.report.figures import STYLE, new_figure
from weatkit.report.influence_plot import SET_COLOURS
from weatkit.report.plot_style import Filter, panel_title, per_test_panels
from weatkit.report.run_dir import RunTables
from weatkit.report.tables import KEY_COLUMNS

#: The figure kinds of the association metrics (module docstring).
ASSOCIATION_PLOTS = ("ripa", "rnd", "direct_bias", "mac", "sc_weat", "rnsb", "ect")
#: Words per panel at most (the farthest from 0).
MAX_ITEMS = 30
#: What the bars of each word-bar kind are.
VALUE_LABELS = {
    "ripa": "RIPA β(w) = ⟨w, b⟩",
    "rnd": "RND δ(v) = ‖v − m_X‖ − ‖v − m_Y‖",
    "direct_bias": "cos(w, g) (DirectBias averages |cos|^c)",
    "mac": "mean cosine distance to A and B",
    "sc_weat": "SC-WEAT effect size of the word",
}


def association_plot(
    tables: RunTables,
    metric: str,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """The figure of ``metric`` (one of :data:`ASSOCIATION_PLOTS`), one panel per test.

    Raises:
        WeatkitError: an unknown metric, a run without it (or without ``--metrics``), or the
            errors of :func:`~weatkit.report.plot_style.per_test_panels`.
    """
    if metric not in ASSOCIATION_PLOTS:
        raise WeatkitError(f"no figure of {metric!r}: choose one of {', '.join(ASSOCIATION_PLOTS)}")
    table = "association" if metric == "sc_weat" else "association_items"
    frame = tables.table(table)
    frame = frame[frame["metric"] == metric]
    if frame.empty:
        raise WeatkitError(f"{tables.path} has no {metric} rows: run with --metrics {metric}")
    only = RunTables(tables.path, **{table: frame})  # type: ignore[arg-type]
    panels = per_test_panels(
        only, table, tests=tests, list_sets=list_sets, embeddings=embeddings, langs=langs
    )
    values = _values(tables, metric)
    if metric == "rnsb":
        return _figure(panels, lambda ax, keys, g: _rnsb_panel(ax, keys, g, values), rows=8)
    if metric == "ect":
        pairs = [(keys, _ect_points(group)) for keys, group in panels]
        return _figure(pairs, lambda ax, keys, g: _ect_panel(ax, keys, g, values), rows=12)
    shown = [_shown(group) for _, group in panels]
    n_rows = max(len(items) for items in shown)
    panels = [(keys, items) for (keys, _), items in zip(panels, shown, strict=True)]

    def draw(ax: mpl.axes.Axes, keys: tuple, items: pd.DataFrame) -> None:
        _bars_panel(ax, keys, items, metric, values)

    return _figure(panels, draw, rows=n_rows)


def _values(tables: RunTables, metric: str) -> dict[tuple, str]:
    """The metric's value per test, for the titles: ``A 0.64 [0.24, 1.02]; B −0.90`` (and
    ``, p = 0.012`` after a value that has a p)."""
    association = tables.association
    if association.empty:
        return {}
    whole = association["item"].fillna("") == ""  # not a word's row (SC-WEAT)
    rows = association[(association["metric"] == metric) & whole]
    out: dict[tuple, list[str]] = {}
    for row in rows.itertuples(index=False):
        keys = tuple(getattr(row, c) for c in KEY_COLUMNS)
        text = f"{row.statistic:.3g}"
        if pd.notna(row.ci_low):
            text += f" [{row.ci_low:.3g}, {row.ci_high:.3g}]"
        if pd.notna(row.p_value):
            text += f", p = {row.p_value:.2g}"
        out.setdefault(keys, []).append(text if row.set == "all" else f"{row.set} {text}")
    return {keys: "; ".join(parts) for keys, parts in out.items()}


def _shown(group: pd.DataFrame) -> pd.DataFrame:
    """The panel's words with a defined value, at most :data:`MAX_ITEMS` of the farthest from
    0, sorted by value (SC-WEAT's ``statistic`` is its value)."""
    items = group.rename(columns={"statistic": "value"}).dropna(subset=["value"])
    order = items["value"].abs().sort_values(ascending=False, kind="stable").index
    return items.loc[order[:MAX_ITEMS]].sort_values("value", kind="stable")


def _figure(panels: list, draw: object, *, rows: int) -> Figure:
    columns = min(len(panels), 3)
    grid_rows = -(-len(panels) // columns)
    with mpl.rc_context(STYLE):
        fig = new_figure(4.2 * columns + 0.6, 0.6 + grid_rows * (1.3 + 0.2 * rows))
        axes = fig.subplots(grid_rows, columns, squeeze=False).ravel()
        for ax, (keys, group) in zip(axes, panels, strict=False):
            draw(ax, keys, group)  # type: ignore[operator]
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        sets = sorted({s for _, g in panels for s in g["set"]})
        handles = [Patch(color=SET_COLOURS.get(s, "0.5"), label=s) for s in sets]
        fig.legend(handles=handles, title="set", loc="outside upper center", ncols=len(handles))
    return fig


def _bars_panel(
    ax: mpl.axes.Axes, keys: tuple, items: pd.DataFrame, metric: str, values: dict[tuple, str]
) -> None:
    positions = np.arange(len(items))
    value = items["value"].to_numpy(float)
    colours = [SET_COLOURS.get(s, "0.5") for s in items["set"]]
    ax.barh(positions, value, color=colours)
    if metric == "sc_weat" and "ci_low" in items:
        low, high = items["ci_low"].to_numpy(float), items["ci_high"].to_numpy(float)
        errors = np.vstack([value - low, high - value])
        if np.isfinite(errors).any():
            ax.errorbar(value, positions, xerr=errors, fmt="none", ecolor="0.2", elinewidth=0.8)
    labels = [f"{s}: {w}" for s, w in zip(items["set"], items["item"], strict=True)]
    ax.set_yticks(positions, labels)
    ax.tick_params(axis="y", labelsize=7)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.set_xlabel(VALUE_LABELS[metric])
    title = panel_title(keys)
    if keys in values:
        title += f"\n{metric}: {values[keys]}"
    ax.set_title(title, fontsize=9)


def _rnsb_panel(
    ax: mpl.axes.Axes, keys: tuple, items: pd.DataFrame, values: dict[tuple, str]
) -> None:
    sets = list(dict.fromkeys(items["set"]))
    q = np.array([items.loc[items["set"] == s, "value"].mean() for s in sets])
    share = q / q.sum()
    ax.bar(range(len(sets)), share, color=[SET_COLOURS.get(s, "0.5") for s in sets])
    ax.axhline(1 / len(sets), color="black", linewidth=0.8, linestyle="--", label="uniform")
    ax.set_xticks(range(len(sets)), sets)
    ax.set_ylim(0, max(1.0, float(share.max()) * 1.1))
    ax.set_ylabel("P_k = q_k / Σ_j q_j")
    title = panel_title(keys)
    if keys in values:
        title += f"\nRNSB = {values[keys]}"
    ax.set_title(title, fontsize=9)


def _ect_points(group: pd.DataFrame) -> pd.DataFrame:
    """ECT's items of one test as one row per attribute word: ``set`` (A or B), ``item``, ``x``
    = cos(m_X, a) and ``y`` = cos(m_Y, a)."""
    parts = group["set"].str.split(":", n=1, expand=True)
    long = group.assign(set=parts[0], mean=parts[1])
    wide = long.pivot_table(index=["set", "item"], columns="mean", values="value", sort=False)
    return wide.rename(columns={"X": "x", "Y": "y"}).reset_index()[["set", "item", "x", "y"]]


def _ect_panel(
    ax: mpl.axes.Axes, keys: tuple, points: pd.DataFrame, values: dict[tuple, str]
) -> None:
    for name, group in points.groupby("set", sort=True):
        ax.scatter(group["x"], group["y"], s=14, color=SET_COLOURS.get(name, "0.5"), label=name)
        for row in group.itertuples(index=False):
            ax.annotate(
                row.item, (row.x, row.y), fontsize=6, xytext=(2, 2), textcoords="offset points"
            )
    ax.set_xlabel("cos(m_X, a)")
    ax.set_ylabel("cos(m_Y, a)")
    ax.xaxis.set_major_locator(MaxNLocator(4))
    title = panel_title(keys)
    if keys in values:
        title += f"\nECT ρ: {values[keys]}"
    ax.set_title(title, fontsize=9)
