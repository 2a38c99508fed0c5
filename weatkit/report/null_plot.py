"""``weatkit plot RUN_DIR --kind null``: the null distribution of d with the observed d marked.

One panel per test (embeddings × language × list × test) of ``null.csv`` (``weatkit run --null
K``): a histogram of the K null effect sizes d_k of frequency-matched random target lists
(:mod:`weatkit.engine.null`, after Dobrzeniecka & Urbaniak 2024 and Valentini et al. 2022), a
vertical line at the test's observed d (from ``results.csv``) and, in the title, the test's
sets, space, language and list (:func:`~weatkit.report.plot_style.panel_title`), the observed d, its
percentile in the null, p_null and K. Draws whose d is undefined (NaN) are left out. The legend
sits above the panels.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from weatkit.report.figures import STYLE
from weatkit.report.plot_style import PALETTE, Filter, panel_title, per_test_panels
from weatkit.report.run_dir import RunTables
from weatkit.report.tables import KEY_COLUMNS

#: Histogram bins per panel.
BINS = 30
#: Colours of the histogram and of the observed d.
NULL_COLOUR, OBSERVED_COLOUR = PALETTE[0], PALETTE[1]
NULL_LABEL = "null d: frequency-matched random X, Y"
OBSERVED_LABEL = "observed d"


def null_plot(
    tables: RunTables,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Histograms of the null d per test, the observed d marked (module docstring).

    Raises:
        WeatkitError: see :func:`~weatkit.report.plot_style.per_test_panels`.
    """
    panels = per_test_panels(
        tables, "null", tests=tests, list_sets=list_sets, embeddings=embeddings, langs=langs
    )
    observed = tables.results.set_index(KEY_COLUMNS) if not tables.results.empty else None
    columns = min(len(panels), 4)
    grid_rows = -(-len(panels) // columns)
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(3.6 * columns + 0.4, 0.4 + 3.2 * grid_rows), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(grid_rows, columns, squeeze=False).ravel()
        for ax, (keys, group) in zip(axes, panels, strict=False):
            row = _observed_row(observed, keys)
            _panel(ax, group["d"].to_numpy(float), row, title=panel_title(keys))
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        handles = [
            Patch(color=NULL_COLOUR, alpha=0.8, label=NULL_LABEL),
            Line2D([], [], color=OBSERVED_COLOUR, linewidth=1.6, label=OBSERVED_LABEL),
        ]
        fig.legend(handles=handles, loc="outside upper center", ncols=len(handles))
    return fig


def _observed_row(observed: pd.DataFrame | None, keys: tuple) -> pd.Series | None:
    if observed is None or keys not in observed.index:
        return None
    row = observed.loc[keys]
    return row.iloc[0] if isinstance(row, pd.DataFrame) else row


def _panel(ax: mpl.axes.Axes, null_d: np.ndarray, row: pd.Series | None, *, title: str) -> None:
    values = null_d[~np.isnan(null_d)]
    ax.hist(values, bins=BINS, color=NULL_COLOUR, alpha=0.8, label=NULL_LABEL)
    shown = [f"K = {len(values)}"]
    if row is not None:
        d = float(row["effect_size"])
        ax.axvline(d, color=OBSERVED_COLOUR, linewidth=1.6, label=OBSERVED_LABEL)
        percentile = pd.to_numeric(row.get("null_percentile"), errors="coerce")
        p_null = pd.to_numeric(row.get("p_null"), errors="coerce")
        if pd.notna(percentile) and pd.notna(p_null):
            shown = [f"percentile {percentile:.1f}", f"p_null {p_null:.3g}", *shown]
        shown = [f"d = {d:.2f}", *shown]
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel("effect size d")
    ax.set_ylabel("draws")
    ax.set_title(f"{title}\n{', '.join(shown)}", fontsize=9)
