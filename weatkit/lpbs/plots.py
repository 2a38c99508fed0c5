"""The figure of a ``weatkit lpbs --out DIR`` directory (``weatkit plot DIR --kind forest`` and
the report; :data:`weatkit.lpbs.plugin.PLUGIN`'s ``plots``): the effect size d of each test
with its percentile bootstrap interval, a dashed line at 0
(:func:`weatkit.report.forest_plot.estimate_forest`), from ``summary.csv``."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from weatkit.lpbs.plugin import MEASURE
from weatkit.lpbs.run import SUMMARY_COLUMNS
from weatkit.report.forest_plot import estimate_forest, label_of_test
from weatkit.report.html.source import ReportSource, plugin_table
from weatkit.report.plot_style import D_LABEL, Filter, interval_label
from weatkit.report.run_dir import filter_rows


def summary(source: ReportSource) -> pd.DataFrame:
    """``summary.csv`` of ``source``, checked."""
    return plugin_table(source, "summary", SUMMARY_COLUMNS)


def bootstrap_interval(table: pd.DataFrame) -> str:
    """The intervals of ``summary.csv``: ``95% bootstrap CI (percentile)``."""
    level = float(table["confidence_level"].iloc[0]) if len(table) else 0.95
    return interval_label("bootstrap-percentile", level, level)


def forest(
    source: ReportSource,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    langs: Filter = None,
) -> Figure:
    """d with its interval per test (rows; filtered as ``weatkit plot --test --list-set
    --lang``), a dashed line at 0."""
    rows = filter_rows(
        summary(source), table="summary.csv", tests=tests, list_sets=list_sets, langs=langs
    )
    return estimate_forest(
        rows.assign(label=[label_of_test(r) for r in rows.to_dict("records")]),
        row="label",
        slot="model",
        estimate="effect_size",
        low="effect_size_low",
        high="effect_size_high",
        interval=bootstrap_interval(rows),
        neutral=MEASURE.neutral,
        xlabel=D_LABEL,
        title=f"LPBS of {rows['model'].iloc[0]}: effect size d per test",
    )
