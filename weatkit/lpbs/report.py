"""The HTML report of a ``weatkit lpbs --out DIR`` directory (``weatkit report DIR``;
:data:`weatkit.lpbs.plugin.PLUGIN`'s ``report``): the summary with the intervals of S and d, the
forest plot (:mod:`weatkit.lpbs.plots`), the scores b(a, t), the words' log-probabilities, the
per-item log and the manifest, each section linked to ``docs/measures/lpbs.md``."""

from __future__ import annotations

from weatkit.lpbs.plots import bootstrap_interval, forest, summary
from weatkit.lpbs.plugin import MEASURE
from weatkit.report.html.sections import Section, manifest_section
from weatkit.report.html.source import ReportSource, plugin_table, read_items
from weatkit.report.html.svg import FigureSet
from weatkit.report.html.table import html_table

#: The docs key (:data:`weatkit.report.html.sections.DOCS_PAGES`) of every section.
DOCS = "weatkit lpbs"
#: ``summary.csv``'s intervals, renamed as the report's tables pair an estimate with its
#: ``_ci_low``/``_ci_high`` (:mod:`weatkit.report.html.table`).
_INTERVALS = {
    f"{name}_{end}": f"{name}_ci_{end}" for name in ("statistic", "effect_size")
    for end in ("low", "high")
}  # fmt: skip


def sections(source: ReportSource) -> list[Section]:
    """The sections of a ``weatkit lpbs --out`` directory (module docstring)."""
    table = summary(source)
    view = table.rename(columns=_INTERVALS)
    view.insert(view.columns.get_loc("effect_size") + 1, "neutral", MEASURE.neutral)
    out = [
        Section(
            "summary",
            "Summary",
            "One row per test: S = mean(U_A) − mean(U_B) of the units' bias scores and the "
            "effect size d = S / std(U_A ∪ U_B) (> 0: X goes with A, Y with B) with their "
            "intervals, the permutation p, the masked and inserted sets and the units.",
            DOCS,
            tables=[
                html_table(
                    view, id="t-summary", source="summary.csv", interval=bootstrap_interval(table)
                )
            ],
        ),
    ]
    figures = FigureSet()
    figures.add("fig-forest", "Forest plot: d per test", lambda: forest(source))
    out.append(
        Section(
            "figures",
            "Figures",
            "forest: each test's effect size d with its interval, the dashed line at 0 no "
            "bias; as weatkit plot --kind forest draws it.",
            DOCS,
            figures=figures.figures,
            notes=figures.notes,
        )
    )
    out.append(
        Section(
            "scores",
            "Scores b(a, t)",
            "One row per test, template and attribute: the groups' increased log-probability "
            "scores s_1, s_2 and the bias b = s_1 − s_2 (> 0: the attribute raises the first "
            "masked group more); the units are their means per attribute or the rows (unit).",
            DOCS,
            tables=[html_table(plugin_table(source, "scores"), id="t-scores",
                               source="scores.csv")],
        )
    )  # fmt: skip
    out.append(
        Section(
            "words",
            "Log-probabilities of the target words",
            "One row per test, template, target word and attribute: log p_tgt, the word at its "
            "mask with the attribute in place, and log p_prior, with the attribute masked too.",
            DOCS,
            tables=[html_table(plugin_table(source, "words"), id="t-words",
                               source="words.csv")],
        )
    )  # fmt: skip
    source.items, source.items_file = read_items(source.path, source.manifest)
    if source.items is not None:
        out.append(
            Section(
                "items",
                "Per-item log",
                "One row per test, attribute set, template and attribute (--log-items): the "
                "template with the attribute in place, both groups' scores, the group it raises "
                "more (outcome) and its leave-one-out influence on S.",
                DOCS,
                tables=[html_table(source.items, id="t-items", source=str(source.items_file))],
            )
        )
    manifest = manifest_section(source)
    manifest.docs = DOCS  # what the command writes: its page
    return [*out, manifest]
