"""The heat map of a run: effect size d per embeddings and language.

:func:`heatmap_plot`: d as an embeddings × language grid per (list set, test), annotated, on
ColorBrewer's colour-blind-safe diverging ``RdBu`` colour map centred at 0 (shared by all
panels).
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from weatkit.report.figures import STYLE, new_figure
from weatkit.report.plot_style import D_LABEL, Filter, run_style, set_panel_title, title_of
from weatkit.report.run_dir import RunTables, filter_rows, lang_order


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
            set_panel_title(axes[i, j], f"{title_of(test)} ({list_set})", panel_width)
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
