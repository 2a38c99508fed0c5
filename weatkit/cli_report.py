"""``weatkit export`` and ``weatkit plot``: tables and figures of a run directory.

Both read what ``weatkit run --out DIR`` (or ``weatkit grid``) wrote, through
:func:`weatkit.report.run_dir.read_run_dir`; from Python the same is
``read_run_dir(DIR)`` followed by :func:`weatkit.report.tables.render`,
:func:`weatkit.report.latex.latex_tables` or :func:`weatkit.report.plots.plot` and
:func:`weatkit.report.plots.save_figure`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from weatkit.cli_common import err_console, friendly, split_values
from weatkit.errors import WeatkitError
from weatkit.report.latex import VALUES, latex_tables
from weatkit.report.plots import PLOT_KINDS, figure_format, plot, save_figure
from weatkit.report.run_dir import TABLE_NAMES, RunTables, filter_rows, read_run_dir
from weatkit.report.tables import FORMATS, render, write_outputs

#: Formats of ``weatkit export``.
EXPORT_FORMATS = (*FORMATS, "latex")
_DEFAULT_DIGITS = 1

_FILTER_OPTIONS = [
    click.option("--test", "tests", multiple=True, help="Tests to keep, e.g. weat1."),
    click.option(
        "--list-set", "list_sets", multiple=True, help="List sets to keep, e.g. ca-weat:v1."
    ),
    click.option("--embeddings", "embeddings", multiple=True, help="Embeddings to keep."),
    click.option(
        "--lang",
        "langs",
        multiple=True,
        help="Languages to keep, in this order in tables and plots.",
    ),
]


def _filter_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--test, --list-set, --embeddings, --lang (repeatable or comma-separated)."""
    for option in reversed(_FILTER_OPTIONS):
        func = option(func)
    return func


def _filters(opts: dict[str, Any]) -> dict[str, tuple[str, ...] | None]:
    keys = ("tests", "list_sets", "embeddings", "langs")
    return {key: split_values(opts[key]) or None for key in keys}


@click.command("export")
@click.argument("run_dir")
@click.option(
    "--format",
    "fmt",
    required=True,
    help=f"Output format: {', '.join(EXPORT_FORMATS)} (latex: the paper's tables).",
)
@click.option(
    "--table",
    help=f"Which table: {', '.join(TABLE_NAMES)} [default: results; latex: summary].",
)
@click.option("--out", "out_path", help="File to write (default: stdout; parquet needs it).")
@_filter_options
@click.option(
    "--digits", type=int, help=f"LaTeX: decimals of every number [default: {_DEFAULT_DIGITS}]."
)
@click.option("--value", help=f"LaTeX: {' or '.join(VALUES)} [default: effect_size].")
@friendly
def export_command(**opts: Any) -> None:
    """Export a table of RUN_DIR (written by weatkit run --out) as CSV, JSON, Parquet,
    Markdown or LaTeX (one booktabs table per list set and test, as in the CA-WEAT paper)."""
    fmt = opts["fmt"]
    if fmt not in EXPORT_FORMATS:
        raise WeatkitError(f"unknown format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    if fmt == "parquet" and not opts["out_path"]:
        raise WeatkitError("parquet is a binary format: give --out FILE")
    if fmt != "latex" and (opts["digits"] is not None or opts["value"] is not None):
        raise WeatkitError("--digits and --value are for --format latex")
    tables = read_run_dir(opts["run_dir"])
    data = _export_bytes(tables, fmt, opts)
    if opts["out_path"]:
        out = Path(opts["out_path"])
        (written,) = write_outputs(out.parent, {out.name: data})
        err_console.print(f"wrote {written}", highlight=False, soft_wrap=True)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()


def _export_bytes(tables: RunTables, fmt: str, opts: dict[str, Any]) -> bytes:
    """The chosen table, filtered, in ``fmt``."""
    if fmt == "latex":
        if opts["table"] not in (None, "summary"):
            raise WeatkitError("--format latex is made from the summary table (--table summary)")
        text = latex_tables(
            tables.table("summary"),
            value=opts["value"] or "effect_size",
            digits=_DEFAULT_DIGITS if opts["digits"] is None else opts["digits"],
            confidence=_confidence(tables),
            **_filters(opts),
        )
        return text.encode()
    name = opts["table"] or "results"
    frame = filter_rows(tables.table(name), table=f"{name}.csv", **_filters(opts))
    return render(frame, fmt)


def _confidence(tables: RunTables) -> float:
    """The run's nominal CI level (manifest ``config.engine.confidence_level``; else 0.95)."""
    config = tables.manifest.get("config")
    engine = config.get("engine") if isinstance(config, dict) else None
    level = engine.get("confidence_level") if isinstance(engine, dict) else None
    return float(level) if isinstance(level, int | float) else 0.95


@click.command("plot")
@click.argument("run_dir")
@click.option("--kind", required=True, help=f"Which figure: {', '.join(PLOT_KINDS)}.")
@click.option("--out", "out_path", required=True, help="Figure file: .png, .pdf or .svg.")
@click.option(
    "--x",
    "x",
    help="Scatter x axis: iso_ev, iso_gh, ... (a run with --isomorphism) or count_difference "
    "(asymmetry.csv) [default: iso_gh].",
)
@_filter_options
@click.option("--dpi", type=float, default=150, show_default=True, help="Resolution (PNG).")
@friendly
def plot_command(**opts: Any) -> None:
    """Plot RUN_DIR: forest (effect sizes with CIs per language and embeddings), scatter
    (effect size against an isomorphism measure or a count difference, with R²) or heatmap."""
    figure_format(opts["out_path"])  # a bad suffix fails before any work
    tables = read_run_dir(opts["run_dir"])
    fig = plot(tables, opts["kind"], x=opts["x"], **_filters(opts))
    written = save_figure(fig, opts["out_path"], dpi=opts["dpi"])
    err_console.print(f"wrote {written}", highlight=False, soft_wrap=True)
