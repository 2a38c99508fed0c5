"""``weatkit export``: a table of a run directory as CSV, JSON, Parquet, Markdown or LaTeX.

It reads what ``weatkit run --out DIR`` (or ``weatkit grid``) wrote, through
:func:`weatkit.report.run_dir.read_run_dir`; from Python the same is ``read_run_dir(DIR)``
followed by :func:`weatkit.report.tables.render` or :func:`weatkit.report.latex.latex_tables`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from weatkit._io.atomic import write_file
from weatkit._io.paths import check_not_input, check_writable
from weatkit.cli.errors import err_console, friendly
from weatkit.cli.options import (
    check_stdout_format,
    filter_options,
    filters,
    format_option,
    out_option,
)
from weatkit.errors import WeatkitError
from weatkit.report.latex import DEFAULT_DIGITS, VALUES, latex_tables
from weatkit.report.run_dir import TABLE_NAMES, RunTables, filter_rows, read_run_dir
from weatkit.report.tables import FORMATS, render

#: Formats of ``weatkit export``.
EXPORT_FORMATS = (*FORMATS, "latex")


@click.command("export")
@click.argument("run_dir")
@format_option(
    "Output format (latex: the paper's tables, one per list set and test).",
    extra=("latex",),
    required=True,
    checked_by_command=True,
)
@click.option(
    "--table",
    help=f"Which table: {', '.join(TABLE_NAMES)} [default: results; latex: summary].",
)
@out_option(
    "File to write (default: stdout; parquet only when redirected).", dest="out_path", file=True
)
@filter_options
@click.option(
    "--digits", type=int, help=f"LaTeX: decimals of every number [default: {DEFAULT_DIGITS}]."
)
@click.option("--value", help=f"LaTeX: {' or '.join(VALUES)} [default: effect_size].")
@friendly
def export_command(**opts: Any) -> None:
    """Export a table of RUN_DIR (written by weatkit run --out) as CSV, JSON, Parquet,
    Markdown or LaTeX (one booktabs table per list set and test, as in the CA-WEAT paper)."""
    fmt = opts["fmt"]
    if fmt not in EXPORT_FORMATS:
        raise WeatkitError(f"unknown format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    if not opts["out_path"]:
        check_stdout_format(fmt)
    if fmt != "latex" and (opts["digits"] is not None or opts["value"] is not None):
        raise WeatkitError("--digits and --value are for --format latex")
    if opts["out_path"]:
        check_writable(opts["out_path"])
        check_not_input([opts["out_path"]], read_dirs=[opts["run_dir"]])
    tables = read_run_dir(opts["run_dir"])
    data = _export_bytes(tables, fmt, opts)
    if opts["out_path"]:
        written = write_file(opts["out_path"], data)
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
            digits=DEFAULT_DIGITS if opts["digits"] is None else opts["digits"],
            confidence=_confidence(tables),
            source=str(Path(opts["run_dir"]) / "summary.csv"),
            **filters(opts),
        )
        return text.encode()
    name = opts["table"] or "results"
    frame = filter_rows(tables.table(name), table=f"{name}.csv", **filters(opts))
    return render(frame, fmt)


def _confidence(tables: RunTables) -> float:
    """The run's nominal CI level (manifest ``config.engine.confidence_level``; else 0.95)."""
    config = tables.manifest.get("config")
    engine = config.get("engine") if isinstance(config, dict) else None
    level = engine.get("confidence_level") if isinstance(engine, dict) else None
    return float(level) if isinstance(level, int | float) else 0.95
