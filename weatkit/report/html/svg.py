"""The figures of a report: weatkit's own matplotlib figures, drawn as inline SVG.

Each figure a directory supports is drawn by the function ``weatkit plot`` uses
(:mod:`weatkit.report.plots`, :mod:`weatkit.report.influence_plot`, :mod:`weatkit.report.
null_plot`, :mod:`weatkit.report.association_plot`, :func:`weatkit.crossmethod.plot.
correlation_heatmap`) and saved as SVG by :func:`weatkit.report.figures.figure_bytes`, text as
text (``svg.fonttype: none``: smaller, selectable, searchable). The SVG goes into the page as it
is, less its XML prolog, its ids prefixed with the figure's own so that two figures never share
one. A figure whose table the directory lacks is not drawn, and the report says so in one line
(:attr:`FigureSet.notes`); one whose drawing fails on the data (e.g. too many panels for one
figure) too, with the reason.

The per-test figures (influence, null, association metrics) are drawn once per embeddings ×
language × list set, as ``weatkit plot --embeddings E --lang L --list-set S`` would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import matplotlib as mpl
from matplotlib.figure import Figure

from weatkit.errors import WeatkitError
from weatkit.report.figures import figure_bytes
from weatkit.report.html.source import ReportSource

_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
#: Settings the report's SVG figures are saved with, on top of weatkit's figure style.
SVG_STYLE = {"svg.fonttype": "none"}


@dataclass(frozen=True)
class SvgFigure:
    """One figure of a report: its title and its SVG markup."""

    id: str
    title: str
    svg: str


@dataclass
class FigureSet:
    """The figures of a report and one line per figure not drawn (and why)."""

    figures: list[SvgFigure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, id: str, title: str, draw: Callable[[], Figure]) -> None:
        """Draw a figure; a :class:`WeatkitError` of the drawing becomes a note."""
        try:
            fig = draw()
        except WeatkitError as err:
            self.notes.append(f"{title}: not drawn: {err}")
            return
        self.figures.append(SvgFigure(id, title, inline_svg(fig, id)))

    def missing(self, title: str, table: str, written_by: str) -> None:
        """A note for a figure whose input table is absent."""
        self.notes.append(f"{title}: not drawn: no {table} (written by {written_by})")


def inline_svg(fig: Figure, prefix: str) -> str:
    """``fig`` as SVG markup to put in a page: no XML prolog, every id prefixed."""
    with mpl.rc_context(SVG_STYLE):
        text = figure_bytes(fig, "svg").decode("utf-8")
    text = _PROLOG.sub("", text, count=1)
    ids = set(_ID.findall(text))
    if not ids:
        return text

    def rename(match: re.Match[str]) -> str:
        name = match.group(2)
        return f"{match.group(1)}{prefix}-{name}" if name in ids else match.group(0)

    return re.sub(r'(\bid="|url\(#|href="#)([^")]+)', rename, text)


def run_figures(source: ReportSource) -> FigureSet:
    """Every figure of a run or grid directory (module docstring)."""
    from weatkit.report.association_plot import ASSOCIATION_PLOTS, association_plot
    from weatkit.report.forest_plot import forest_plot
    from weatkit.report.heatmap_plot import heatmap_plot
    from weatkit.report.influence_plot import influence_plot
    from weatkit.report.null_plot import null_plot
    from weatkit.report.scatter_plot import scatter_plot

    tables = source.run
    assert tables is not None
    present = source.tables
    out = FigureSet()
    if "summary" in present:
        out.add(
            "fig-forest",
            "Forest plot: effect sizes with their intervals",
            lambda: forest_plot(tables),
        )
        out.add(
            "fig-heatmap",
            "Heatmap: effect size per embeddings and language",
            lambda: heatmap_plot(tables),
        )
    else:
        out.missing("Forest plot and heatmap", "summary.csv", "weatkit run --out DIR")
    iso = [c for c in tables.summary.columns if str(c).startswith("iso_")]
    for column in iso:
        out.add(
            f"fig-scatter-{column}",
            f"Scatter: effect size against {column}",
            lambda x=column: scatter_plot(tables, x=x),
        )
    if not iso:
        out.missing(
            "Scatter against isomorphism",
            "iso_* column in summary.csv",
            "weatkit run --isomorphism LANG",
        )
    if "asymmetry" in present:
        out.add(
            "fig-scatter-count",
            "Scatter: effect size against the count difference",
            lambda: scatter_plot(tables, x="count_difference"),
        )
    per_test = [
        ("influence", "Influence of each item", influence_plot, "weatkit run --influence"),
        ("null", "Null distribution of d", null_plot, "weatkit run --null K"),
    ]
    for table, title, draw, written_by in per_test:
        if table not in present:
            out.missing(title, f"{table}.csv", written_by)
            continue
        _per_group(
            out,
            tables.table(table),
            f"fig-{table}",
            title,
            lambda tables=tables, draw=draw, **f: draw(tables, **f),
        )
    if "association" in present:
        metrics = [m for m in ASSOCIATION_PLOTS if m in set(tables.association["metric"])]
        for metric in metrics:
            _per_group(
                out,
                tables.association[tables.association["metric"] == metric],
                f"fig-{metric}",
                f"{metric}",
                lambda metric=metric, **f: association_plot(tables, metric, **f),
            )
    return out


def _per_group(out: FigureSet, frame, prefix: str, title: str, draw: Callable[..., Figure]) -> None:
    """One figure per embeddings × language × list set of ``frame``'s rows."""
    groups = frame[["embeddings", "lang", "list_set"]].drop_duplicates()
    for n, (emb, lang, list_set) in enumerate(groups.itertuples(index=False)):
        out.add(
            f"{prefix}-{n}",
            f"{title}: {emb}, {lang}, {list_set}",
            lambda e=emb, la=lang, s=list_set: draw(embeddings=[e], langs=[la], list_sets=[s]),
        )


def compare_figures(source: ReportSource) -> FigureSet:
    """The correlation heatmap of a compare directory, per scope (``all`` and each language)."""
    from weatkit.crossmethod.plot import correlation_heatmap

    out = FigureSet()
    correlations = source.tables.get("correlations")
    if correlations is None:
        out.missing("Correlation heatmap", "correlations.csv", "weatkit compare")
        return out
    level = source.manifest.get("correlation", {}).get("confidence_level", 0.95)
    for n, scope in enumerate(dict.fromkeys(correlations["scope"])):
        out.add(
            f"fig-correlations-{n}",
            f"Rank correlations between measures ({scope})",
            lambda s=scope: correlation_heatmap(correlations, scope=s, confidence_level=level),
        )
    if correlations.empty:
        out.notes.append("Correlation heatmap: not drawn: correlations.csv has no rows")
    return out
