"""The report page: the sections rendered with Jinja2 into one HTML file, written atomically.

The template (``templates/report.html.j2``) inlines its style sheet and script
(``report.css``, ``report.js``) and every figure's SVG, so the page needs nothing but itself:
no network, no other file. Every value is HTML-escaped (Jinja2's autoescape); only the SVG of
weatkit's own figures goes in as markup.
"""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

import weatkit
from weatkit._io.atomic import write_file
from weatkit._io.paths import check_writable
from weatkit.report.html.sections import DOCS_PAGES, DOCS_URL, Section, docs_link
from weatkit.report.html.source import ReportSource

TEMPLATE = "report.html.j2"


def render_page(source: ReportSource, sections: list[Section], *, docs_url: str = DOCS_URL) -> str:
    """The page of ``sections`` of ``source``, as HTML text."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("weatkit.report.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(TEMPLATE).render(
        source=source,
        sections=sections,
        pages=DOCS_PAGES,
        docs_link=lambda key: docs_link(DOCS_PAGES[key], docs_url),
        weatkit_version=weatkit.__version__,
    )


def write_page(html: str, out: str | os.PathLike) -> Path:
    """Write ``html`` to ``out`` atomically (all of it or nothing); the path written."""
    target = check_writable(out)
    return write_file(target, html.encode("utf-8"))
