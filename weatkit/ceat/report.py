"""The HTML report of a ``weatkit ceat --out DIR`` directory (``weatkit report DIR``;
:data:`weatkit.ceat.plugin.PLUGIN`'s ``report``): the results with CES's interval, the figures
of :mod:`weatkit.ceat.plots`, the words' contexts, the draws log and the manifest, each section
linked to ``docs/measures/ceat.md``."""

from __future__ import annotations

from weatkit.ceat.plots import ces_interval, draws, draws_log, forest
from weatkit.ceat.plugin import MEASURE
from weatkit.ceat.run import RESULT_COLUMNS
from weatkit.report.html.sections import Section, manifest_section
from weatkit.report.html.source import ReportSource, plugin_table
from weatkit.report.html.svg import FigureSet
from weatkit.report.html.table import html_table

#: The docs key (:data:`weatkit.report.html.sections.DOCS_PAGES`) of every section.
DOCS = "weatkit ceat"
#: The draws the page shows of each test and layer (10,000 each would make a page of tens of
#: MB; the histograms show them all, the log file holds them all).
SHOWN_DRAWS = 200


def sections(source: ReportSource) -> list[Section]:
    """The sections of a ``weatkit ceat --out`` directory (module docstring)."""
    table = plugin_table(source, "results", RESULT_COLUMNS)
    level = float(source.manifest.get("confidence_level", 0.95))
    # CES's interval shown with it, as ``ces [CI]`` around the measure's neutral value
    view = table.rename(columns={"ci_low": "ces_ci_low", "ci_high": "ces_ci_high"})
    view.insert(view.columns.get_loc("ces") + 1, "neutral", MEASURE.neutral)
    found = Section(
        "results",
        "Results",
        "One row per test and layer: the combined effect size CES of the N draws (> 0: X goes "
        "with A, Y with B) with its interval and p-value, σ²_between (tau2), Q, I², and the "
        "draws' mean, sd and quantiles (their spread is the distribution of biases).",
        DOCS,
        tables=[html_table(view, id="t-results", source="results.csv",
                           interval=ces_interval(level))],
    )  # fmt: skip
    log = draws_log(source)
    figures = FigureSet()
    figures.add("fig-forest", "Forest plot: CES per test and layer", lambda: forest(source))
    if log is None:
        figures.missing("Histograms of the draws", "draws.parquet or draws.csv",
                        "weatkit ceat --log-items parquet")  # fmt: skip
    else:
        groups = table[["list_set", "lang", "test"]].drop_duplicates()
        for n, (list_set, lang, test) in enumerate(groups.itertuples(index=False)):
            figures.add(
                f"fig-draws-{n}",
                f"Draws: {test}, {lang}, {list_set}",
                lambda s=list_set, la=lang, t=test: draws(
                    source, tests=[t], list_sets=[s], langs=[la]
                ),
            )
    shown = Section(
        "figures",
        "Figures",
        "forest: CES with its interval per test (rows) and layer (colours), the dashed line at "
        "0 no bias; draws: per test and layer the histogram of the draws' effect sizes, CES "
        "marked; as weatkit plot --kind forest|draws draws them.",
        DOCS,
        figures=figures.figures,
        notes=figures.notes,
    )
    contexts = Section(
        "contexts",
        "Contexts",
        "One row per word of the tests: found, its occurrences in the corpus; kept, the "
        "contexts its draws take one of (at most --contexts-per-word); the notes name the tests "
        "skipped or run without some words for want of contexts (--min-contexts).",
        DOCS,
        tables=[html_table(plugin_table(source, "contexts", ["word", "found", "kept"]),
                           id="t-contexts", source="contexts.csv")],
        notes=[str(line) for key in ("skipped", "dropped") for line in
               source.manifest.get(key) or []],
    )  # fmt: skip
    out = [found, shown, contexts]
    if log is not None:
        keys = ["list_set", "lang", "list_id", "test", "layer"]
        head = log.groupby(keys, sort=False).head(SHOWN_DRAWS)
        cut = [] if len(head) == len(log) else [
            f"The first {SHOWN_DRAWS} draws of each test and layer: {len(head):,} of "
            f"{len(log):,}; every draw is in {source.items_file}."
        ]  # fmt: skip
        out.append(
            Section(
                "draws",
                "Draws (per-item log)",
                "The draws of each test and layer (--log-items): its effect size ES_i and the "
                "variance V_i of its association scores, which CES pools with weights "
                "1 / (V_i + σ²_between).",
                DOCS,
                tables=[html_table(head, id="t-draws", source=str(source.items_file))],
                notes=cut,
            )
        )
    manifest = manifest_section(source)
    manifest.docs = DOCS  # what the command writes: its page
    return [*out, manifest]
