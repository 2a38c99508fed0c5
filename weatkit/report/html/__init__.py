"""An HTML report of a run, grid, compare or sentence directory (``weatkit report DIR``).

:func:`write_report` reads the directory (:mod:`weatkit.report.html.source`), lays out its
sections (:mod:`weatkit.report.html.sections`: tables by :mod:`weatkit.report.html.table`,
figures by :mod:`weatkit.report.html.svg`) and renders them with Jinja2 into one file
(:mod:`weatkit.report.html.render`).
"""

from __future__ import annotations

from weatkit.report.html.build import DEFAULT_NAME, write_report

__all__ = ["DEFAULT_NAME", "write_report"]
