"""``weatkit compare``: word-level and sentence-level bias measures of the same models, joined."""

from __future__ import annotations

import sys
from typing import Any

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import format_option, out_option, progress_option
from weatkit.crossmethod import load_compare_config, run_compare, write_compare
from weatkit.crossmethod.runner import CompareResult
from weatkit.report.tables import render


@click.command("compare")
@click.argument("config_file", metavar="CONFIG", type=click.Path(dir_okay=False))
@out_option("Output directory (overrides the file's `output`).", dest="output")
@click.option("--plot/--no-plot", default=True, show_default=True, help="Write correlations.png.")
@format_option("Print the joined table to stdout in this format instead of the readable tables.")
@progress_option()
@friendly
def compare_command(**opts: Any) -> None:
    """Compute WEAT/CA-WEAT, GEST, StereoSet, CrowS-Pairs and MBE for the models in CONFIG.

    CONFIG (.yaml or .toml) lists models, languages and methods (see the README). Writes
    scores.csv (long), table.csv (one row per model × language), correlations.csv (Spearman and
    Kendall between measures across models, bootstrap CIs), skipped.csv, manifest.json and
    correlations.png into the output directory. Exits 1 when a method failed for some model.
    """
    config = load_compare_config(opts["config_file"], opts["output"])
    result = run_compare(config, show_progress=opts["progress"])  # steps: the bar's postfix
    for path in write_compare(result, config.output, plot=opts["plot"]):
        err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(result.table, opts["fmt"]))
        sys.stdout.flush()
    else:
        _print(result)
    n_na = int((result.skipped["status"] == "not applicable").sum())
    if n_na:
        note(f"{n_na} model × language × method combination(s) not applicable (skipped.csv)")
    if result.n_failed:
        failed = result.skipped[result.skipped["status"] == "failed"].iloc[0]
        err_console.print(
            f"weatkit: {result.n_failed} method run(s) failed, e.g. {failed['method']} for "
            f"{failed['model']} ({failed['lang']}): {failed['reason']}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        sys.exit(1)


def _print(result: CompareResult) -> None:
    console = Console()
    table = result.table
    measures = [c for c in table.columns if c not in ("model", "lang")]
    view = Table(title="Bias measures per model and language")
    for col in ("model", "lang", *measures):
        view.add_column(col, justify="left" if col in ("model", "lang") else "right")
    for row in table.itertuples(index=False):
        values = [_fmt(v) for v in row[2:]]
        view.add_row(str(row.model), str(row.lang), *values)
    console.print(view)
    corr = result.correlations
    if corr.empty:
        note("no correlations: each pair of measures needs 3 model × language units with both")
        return
    view = Table(title="Agreement between methods across models (bootstrap CIs)")
    for col in ("scope", "measure x", "measure y", "n", "Spearman ρ [CI]", "Kendall τ_b [CI]"):
        view.add_column(col, justify="right" if col in ("n",) or "[" in col else "left")
    for r in corr.itertuples(index=False):
        view.add_row(
            str(r.scope),
            str(r.measure_x),
            str(r.measure_y),
            str(r.n),
            f"{_fmt(r.spearman)} [{_fmt(r.spearman_ci_low)}, {_fmt(r.spearman_ci_high)}]",
            f"{_fmt(r.kendall)} [{_fmt(r.kendall_ci_low)}, {_fmt(r.kendall_ci_high)}]",
        )
    console.print(view)


def _fmt(value: Any) -> str:
    return "" if pd.isna(value) else f"{float(value):.3f}"
