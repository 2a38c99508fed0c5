"""``weatkit plot RUN_DIR --kind null``: the null distribution of d with the observed d marked.

One panel per test (embeddings × language × list × test) of ``null.csv`` (``weatkit run --null
K``): a histogram of the K null effect sizes d_k of frequency-matched random target lists
(:mod:`weatkit.engine.null`, after Dobrzeniecka & Urbaniak 2024 and Valentini et al. 2022), a
vertical line at the test's observed d (from ``results.csv``) and, in the title, its
percentile in the null and p_null. Draws whose d is undefined (NaN) are left out.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from weatkit.report.plots import PALETTE, STYLE, Filter, per_test_panels
from weatkit.report.run_dir import RunTables
from weatkit.report.tables import KEY_COLUMNS

#: Histogram bins per panel.
BINS = 30


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
        WeatkitError: see :func:`~weatkit.report.plots.per_test_panels`.
    """
    panels = per_test_panels(
        tables, "null", tests=tests, list_sets=list_sets, embeddings=embeddings, langs=langs
    )
    observed = tables.results.set_index(KEY_COLUMNS) if not tables.results.empty else None
    columns = min(len(panels), 4)
    grid_rows = -(-len(panels) // columns)
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(3.6 * columns + 0.4, 2.8 * grid_rows), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(grid_rows, columns, squeeze=False).ravel()
        for ax, (keys, group) in zip(axes, panels, strict=False):
            row = _observed_row(observed, keys)
            _panel(ax, group["d"].to_numpy(float), row, title=" ".join(map(str, keys)))
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
    return fig


def _observed_row(observed: pd.DataFrame | None, keys: tuple) -> pd.Series | None:
    if observed is None or keys not in observed.index:
        return None
    row = observed.loc[keys]
    return row.iloc[0] if isinstance(row, pd.DataFrame) else row


def _panel(ax: mpl.axes.Axes, null_d: np.ndarray, row: pd.Series | None, *, title: str) -> None:
    values = null_d[~np.isnan(null_d)]
    ax.hist(values, bins=BINS, color=PALETTE[0], alpha=0.8, label=f"null d (K = {len(values)})")
    if row is not None:
        d = float(row["effect_size"])
        ax.axvline(d, color=PALETTE[1], linewidth=1.6, label=f"observed d = {d:.2f}")
        percentile = pd.to_numeric(row.get("null_percentile"), errors="coerce")
        p_null = pd.to_numeric(row.get("p_null"), errors="coerce")
        if pd.notna(percentile) and pd.notna(p_null):
            title += f"\npercentile {percentile:.1f}, p_null {p_null:.3g}"
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel("effect size d")
    ax.set_ylabel("draws")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(title, fontsize=9)
