"""``weatkit report DIR``: one self-contained HTML page of a run, grid, compare, sentence or
measure plugin's directory (its sections made by the plugin's ``report``,
:mod:`weatkit.measures.plugins`)."""

from __future__ import annotations

import os
from pathlib import Path

from weatkit._io.paths import check_not_input, check_writable
from weatkit.measures.plugins import load
from weatkit.report.html.render import render_page, write_page
from weatkit.report.html.sections import (
    DOCS_URL,
    compare_sections,
    run_sections,
    sentence_sections,
)
from weatkit.report.html.source import read_source

#: The report's file name in the directory when no ``out`` is given.
DEFAULT_NAME = "report.html"


def write_report(
    run_dir: str | os.PathLike, out: str | os.PathLike | None = None, *, docs_url: str = DOCS_URL
) -> Path:
    """Write the HTML report of a run, grid, compare, sentence or measure plugin's directory;
    the path written.

    The page holds the directory's summary and results tables (sortable and filterable, each
    number with its interval and the interval's kind), every figure the directory supports
    (weatkit's matplotlib figures as inline SVG), the multiplicity-adjusted and pooled tables,
    the reliability and validity tables, the per-item log (``items.parquet`` or ``items.csv``),
    the skip report and the manifest (versions, seeds, inputs with their SHA-256). Each section
    says in one line how to read it and links to its page of the documentation at
    ``docs_url``. Everything is inline: the page opens without network.

    Args:
        run_dir: written by ``weatkit run --out``, ``weatkit grid``, ``weatkit compare``,
            ``weatkit gest|crows|stereoset|mbe --out`` or a measure plugin's command with
            ``--out`` (each table, the per-item log and the manifest).
        out: the HTML file (default ``run_dir/report.html``), written atomically.
        docs_url: where the documentation site is served (default: ``mkdocs serve``'s).

    Raises:
        WeatkitError: ``out`` cannot be written, ``run_dir`` is not a weatkit run, grid,
            compare, sentence or measure plugin's directory or was
            written by another minor version (:mod:`weatkit.report.html.source`), or one of its
            tables is malformed; nothing is written then.

    Example:
        >>> from weatkit.report.html import write_report
        >>> write_report("out")                              # doctest: +SKIP
        PosixPath('out/report.html')
    """
    default = Path(run_dir) / DEFAULT_NAME
    target = check_writable(default if out is None else out)
    # the page may go in the directory (its default), never over one of its tables
    check_not_input([target], read_dirs=[run_dir], allowed=[default])
    source = read_source(run_dir)
    if source.plugin is not None and source.plugin.report is not None:
        make = load(source.plugin.report)
    else:
        make = {"compare": compare_sections, "sentence": sentence_sections}.get(
            source.kind, run_sections
        )
    sections = make(source)
    return write_page(render_page(source, sections, docs_url=docs_url), target)
