"""The figure of ``weatkit compare``: rank correlations between bias measures across models."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from weatkit.errors import WeatkitError
from weatkit.report.figures import STYLE, new_figure
from weatkit.report.plot_style import interval_label
from weatkit.stats.correlation import is_significant


def correlation_heatmap(
    correlations: pd.DataFrame,
    *,
    scope: str = "all",
    statistic: str = "spearman",
    confidence_level: float = 0.95,
) -> Figure:
    """Lower-triangle heatmap of ``statistic`` (``spearman`` or ``kendall``) between measures.

    Each cell shows the coefficient and the number of units; a ``*`` marks a significant
    correlation by the one rule (:func:`weatkit.stats.correlation.is_significant`): the
    percentile bootstrap interval at ``confidence_level`` (the one the correlations were
    computed with) excludes 0, the permutation p ≤ α = 1 − ``confidence_level`` and the row is
    not flagged (too few units, a degenerate interval), as the title says. Colours run from
    −1 (blue) to +1 (red).
    """
    if statistic not in ("spearman", "kendall"):
        raise WeatkitError(f"unknown statistic {statistic!r}: choose spearman or kendall")
    rows = correlations[correlations["scope"] == scope]
    if rows.empty:
        raise WeatkitError(
            f"no correlations in scope {scope!r}: each pair of measures needs at least 3 "
            "model × language units with both values"
        )
    measures = list(dict.fromkeys([*rows["measure_x"], *rows["measure_y"]]))
    k = len(measures)
    values = np.full((k, k), np.nan)
    labels: dict[tuple[int, int], str] = {}
    for r in rows.itertuples(index=False):
        i, j = sorted((measures.index(r.measure_x), measures.index(r.measure_y)), reverse=True)
        value = getattr(r, statistic)
        low, high = getattr(r, f"{statistic}_ci_low"), getattr(r, f"{statistic}_ci_high")
        values[i, j] = value
        p = getattr(r, f"{statistic}_p")
        flag = getattr(r, "flag", "")
        star = "*" if is_significant(p, flag, confidence_level, (low, high)) else ""
        labels[(i, j)] = f"{value:.2f}{star}\nn={r.n}"
    size = 1.6 + 0.9 * k
    with mpl.rc_context(STYLE):
        fig = new_figure(size + 1.2, size)
        ax = fig.subplots()
        image = ax.imshow(
            np.ma.masked_invalid(values), cmap="RdBu_r", norm=Normalize(-1, 1), aspect="equal"
        )
        ax.set_xticks(range(k), measures, rotation=45, ha="right")
        ax.set_yticks(range(k), measures)
        ax.spines[:].set_visible(False)
        for (i, j), text in labels.items():
            dark = abs(values[i, j]) > 0.6
            color = "white" if dark else "black"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
        name = "Spearman ρ" if statistic == "spearman" else "Kendall τ_b"
        ci = interval_label("bootstrap-percentile", confidence_level)
        alpha = f"{1 - confidence_level:.2g}"
        ax.set_title(
            f"{name} across models ({scope})\n* = {ci} excludes 0, p ≤ {alpha}, not flagged"
        )
        fig.colorbar(image, ax=ax, label=name, shrink=0.8)
    return fig
