"""``weatkit plot RUN_DIR --kind influence``: which words drive the effect, as bars.

One panel per test (embeddings × language × list × test) of ``influence.csv`` (``weatkit run
--influence``): a horizontal bar per item, its length ``delta = d_without − d`` (the change of
the effect size d when the item is left out; :mod:`weatkit.engine.influence`, after Antoniak &
Mimno 2021), coloured by the item's set (X, Y, A, B), items sorted by delta. A panel shows at
most :data:`MAX_ITEMS` items, those with the largest |delta|; items whose delta is undefined
(NaN) are left out. Panel titles name the test's sets, space, language and list
(:func:`~weatkit.report.plot_style.panel_title`); the legend of the sets' colours sits above the
panels.
"""

from __future__ import annotations

import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from weatkit.report.figures import STYLE, new_figure
from weatkit.report.plot_style import PALETTE, Filter, panel_title, per_test_panels
from weatkit.report.run_dir import RunTables

#: Items per panel at most (the largest |delta|).
MAX_ITEMS = 30
#: Colour of each set's bars.
SET_COLOURS = dict(zip("XYAB", PALETTE, strict=False))
DELTA_LABEL = "delta = d without the item − d"


def influence_plot(
    tables: RunTables,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Bars of every item's influence on d, one panel per test (module docstring).

    Raises:
        WeatkitError: see :func:`~weatkit.report.plot_style.per_test_panels`.
    """
    panels = per_test_panels(
        tables, "influence", tests=tests, list_sets=list_sets, embeddings=embeddings, langs=langs
    )
    shown = [_shown_items(group) for _, group in panels]
    n_rows = max(len(items) for items in shown)
    columns = min(len(panels), 4)
    grid_rows = -(-len(panels) // columns)
    with mpl.rc_context(STYLE):
        fig = new_figure(3.6 * columns + 0.6, 0.5 + grid_rows * (1.1 + 0.2 * n_rows))
        axes = fig.subplots(grid_rows, columns, squeeze=False).ravel()
        for ax, (keys, group), items in zip(axes, panels, shown, strict=False):
            _panel(ax, items, title=panel_title(keys), total=len(group))
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        handles = [Patch(color=c, label=k) for k, c in SET_COLOURS.items()]
        fig.legend(handles=handles, title="set", loc="outside upper center", ncols=len(handles))
    return fig


def _shown_items(group: pd.DataFrame) -> pd.DataFrame:
    """The panel's items with a defined delta, at most MAX_ITEMS of the largest |delta|,
    sorted by delta."""
    defined = group.dropna(subset=["delta"])
    order = defined["delta"].abs().sort_values(ascending=False, kind="stable").index
    return defined.loc[order[:MAX_ITEMS]].sort_values("delta", kind="stable")


def _panel(ax: mpl.axes.Axes, items: pd.DataFrame, *, title: str, total: int) -> None:
    labels = [f"{s}: {i}" for s, i in zip(items["set"], items["item"], strict=True)]
    colours = [SET_COLOURS.get(s, "0.5") for s in items["set"]]
    ax.barh(range(len(items)), items["delta"].to_numpy(float), color=colours)
    ax.set_yticks(range(len(items)), labels, fontsize=7)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.set_xlabel(DELTA_LABEL)
    if len(items) < total:
        title += f"\n({len(items)} of {total} items: largest |delta|)"
    ax.set_title(title, fontsize=9)
