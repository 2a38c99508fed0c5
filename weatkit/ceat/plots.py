"""The figures of a ``weatkit ceat --out DIR`` directory (``weatkit plot DIR --kind K`` and the
report; :data:`weatkit.ceat.plugin.PLUGIN`'s ``plots``), and its tables read back, checked.

* ``forest`` (:func:`forest`): CES with its interval, one row per test, a colour and marker per
  layer, a dashed line at 0 (:func:`weatkit.report.forest_plot.estimate_forest`);
* ``draws`` (:func:`draws`): per test and layer, the histogram of the N draws' effect sizes ES_i
  (``draws.parquet`` or ``draws.csv``, written with ``--log-items``) with CES marked: CES is the
  random-effects mean of the ES_i (:mod:`weatkit.ceat.draws`), not their median.

Both take the directory as :func:`weatkit.report.html.source.read_source` reads it and the
filters ``tests``, ``list_sets``, ``langs`` (None: all), as ``weatkit plot --test --list-set
--lang``.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from weatkit.ceat.plugin import MEASURE
from weatkit.ceat.run import RESULT_COLUMNS
from weatkit.errors import WeatkitError
from weatkit.report.figures import STYLE, new_figure
from weatkit.report.forest_plot import estimate_forest, label_of_test
from weatkit.report.html.source import ReportSource, plugin_table, read_items
from weatkit.report.null_plot import BINS
from weatkit.report.plot_style import MAX_PANELS, PALETTE, Filter
from weatkit.report.run_dir import filter_rows

#: The keys of a test in results.csv and the draws log.
TEST_KEYS = ["list_set", "lang", "list_id", "test"]
#: Colours of the draws' histogram and of CES (those of the null figure's null and observed d).
DRAWS_COLOUR, CES_COLOUR = PALETTE[0], PALETTE[1]
DRAWS_LABEL = "effect sizes ES_i of the draws"
CES_LABEL = "CES (random-effects mean)"
CES_AXIS = "combined effect size CES"


def draws_log(source: ReportSource) -> pd.DataFrame | None:
    """The draws log of ``source`` (``draws.parquet`` or ``draws.csv``), read once; None when
    the run was written without ``--log-items``.

    Raises:
        WeatkitError: the log the manifest names is missing or malformed.
    """
    if source.items is None:
        source.items, source.items_file = read_items(source.path, source.manifest, "draws")
    if source.items is not None:
        missing = [c for c in [*TEST_KEYS, "layer", "effect_size"] if c not in source.items]
        if missing:
            path = source.path / str(source.items_file)
            raise WeatkitError(f"{path} lacks the column(s) {', '.join(missing)}")
    return source.items


def ces_interval(level: float) -> str:
    """The legend of CES's interval: ``95% normal CI (CES ± z·SE)``."""
    return f"{100 * level:g}% normal CI (CES ± z·SE)"


def forest(
    source: ReportSource,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    langs: Filter = None,
) -> Figure:
    """CES with its interval per test (rows) and layer (colours), a dashed line at 0."""
    rows = filter_rows(
        plugin_table(source, "results", RESULT_COLUMNS),
        table="results.csv",
        tests=tests,
        list_sets=list_sets,
        langs=langs,
    )
    frame = rows.assign(
        label=[label_of_test(r) for r in rows.to_dict("records")],
        slot=[f"layer {layer}" for layer in rows["layer"]],
    )
    return estimate_forest(
        frame,
        row="label",
        slot="slot",
        estimate="ces",
        low="ci_low",
        high="ci_high",
        interval=ces_interval(float(source.manifest.get("confidence_level", 0.95))),
        neutral=MEASURE.neutral,
        xlabel=CES_AXIS,
        title=f"CEAT of {rows['model'].iloc[0]}: CES per test and layer",
    )


def draws(
    source: ReportSource,
    *,
    tests: Filter = None,
    list_sets: Filter = None,
    langs: Filter = None,
) -> Figure:
    """Per test and layer (at most :data:`~weatkit.report.plot_style.MAX_PANELS`), the
    histogram of the draws' effect sizes (:data:`~weatkit.report.null_plot.BINS` bins) with CES
    marked.

    Raises:
        WeatkitError: no draws log (rerun with ``--log-items``), no rows for the filters, or
            more panels than one figure shows.
    """
    log = draws_log(source)
    if log is None:
        raise WeatkitError(
            f"{source.path} has no draws.parquet or draws.csv: rerun weatkit ceat with "
            "--log-items parquet (or csv) to write every draw's effect size"
        )
    rows = filter_rows(
        plugin_table(source, "results", RESULT_COLUMNS),
        table="results.csv",
        tests=tests,
        list_sets=list_sets,
        langs=langs,
    )
    if len(rows) > MAX_PANELS:
        raise WeatkitError(
            f"results.csv has {len(rows)} tests and layers for these filters; a figure shows at "
            f"most {MAX_PANELS}: choose with --test, --lang or --list-set"
        )
    keys = [*TEST_KEYS, "layer"]
    groups = {k: g["effect_size"].to_numpy(float) for k, g in log.groupby(keys, sort=False)}
    columns = min(len(rows), 4)
    grid_rows = -(-len(rows) // columns)
    with mpl.rc_context(STYLE):
        fig = new_figure(3.6 * columns + 0.4, 0.4 + 3.2 * grid_rows)
        axes = fig.subplots(grid_rows, columns, squeeze=False).ravel()
        for ax, row in zip(axes, rows.to_dict("records"), strict=False):
            key = tuple(row[k] for k in keys)
            if key not in groups:
                raise WeatkitError(
                    f"{source.items_file} has no draws of {label_of_test(row)}, layer "
                    f"{row['layer']}: it is not this run's log"
                )
            _panel(ax, groups[key], row)
        for ax in axes[len(rows) :]:
            ax.set_visible(False)
        handles = [
            Patch(color=DRAWS_COLOUR, alpha=0.8, label=DRAWS_LABEL),
            Line2D([], [], color=CES_COLOUR, linewidth=1.6, label=CES_LABEL),
        ]
        fig.legend(handles=handles, loc="outside upper center", ncols=len(handles))
    return fig


def _panel(ax: mpl.axes.Axes, effect_sizes: np.ndarray, row: dict) -> None:
    values = effect_sizes[~np.isnan(effect_sizes)]
    ax.hist(values, bins=BINS, color=DRAWS_COLOUR, alpha=0.8, label=DRAWS_LABEL)
    ax.axvline(row["ces"], color=CES_COLOUR, linewidth=1.6, label=CES_LABEL)
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel("effect size ES_i")
    ax.set_ylabel("draws")
    ax.set_title(
        f"{label_of_test(row)}, layer {row['layer']}\nCES = {row['ces']:.2f}, N = {len(values)}",
        fontsize=9,
    )
