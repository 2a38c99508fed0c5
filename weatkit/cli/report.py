"""``weatkit report``: one self-contained HTML page of a run, grid, compare or sentence
directory.

From Python the same is :func:`weatkit.report.html.write_report` (``weatkit.write_report``).
"""

from __future__ import annotations

from typing import Any

import click

from weatkit.cli.errors import err_console, friendly
from weatkit.cli.options import out_option


@click.command("report")
@click.argument("run_dir")
@out_option("HTML file to write [default: RUN_DIR/report.html].", dest="out_path", file=True)
@click.option("--open", "open_page", is_flag=True, help="Open the report in a web browser.")
@click.option(
    "--docs-url",
    metavar="URL",
    help="Where the weatkit documentation is served, for the links of each section "
    "[default: the published site, https://weatkit.github.io/weatkit/; "
    "http://127.0.0.1:8000/ for mkdocs serve].",
)
@friendly
def report_command(**opts: Any) -> None:
    """Write an HTML report of RUN_DIR (weatkit run --out, weatkit grid, weatkit compare, or
    weatkit gest|crows|stereoset|mbe --out).

    One file with everything inline (it opens without network): the summary and results tables,
    sortable and filterable, with each number's interval and its kind; every figure the
    directory supports; the multiplicity-adjusted and pooled tables; reliability and validity;
    the per-item log (items.parquet or items.csv); the skip report; the manifest (versions,
    seeds, inputs and their SHA-256). A directory written by another minor version of weatkit
    is refused."""
    from weatkit.report.html import write_report
    from weatkit.report.html.sections import DOCS_URL

    written = write_report(opts["run_dir"], opts["out_path"], docs_url=opts["docs_url"] or DOCS_URL)
    err_console.print(f"wrote {written}", highlight=False, soft_wrap=True)
    if opts["open_page"]:
        import webbrowser

        if not webbrowser.open(written.resolve().as_uri()):
            err_console.print(
                f"note: no web browser to open it; open {written} yourself",
                highlight=False,
                soft_wrap=True,
            )
