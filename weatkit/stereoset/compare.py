"""StereoSet in ``weatkit compare``: a ``stereoset`` section of a comparison file, and its rows.

::

    stereoset: {}                        # en, de, fr, es, tr
    stereoset: {limit: 500}              # a seeded sample of the examples (as --limit)

Three columns per model and language: the intrasentence SS, LMS and ICAT over all bias types in
StereoSet's official per-term convention (``stereoset:ss_term``, ``stereoset:lms_term``,
``stereoset:icat_term``; the pooled ones would be near-duplicate columns), with percentile
bootstrap intervals over the examples within term (the ``scores`` section's resamples, seed and
level) and, for SS, the exact binomial p of Σ pro of N examples as the neutral test.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from weatkit.config.declare import Source
from weatkit.config.files import dataclass_from
from weatkit.stereoset.data import load_stereoset, sample_examples
from weatkit.stereoset.measure import stereoset_measures
from weatkit.stereoset.metrics import evaluate, outcomes
from weatkit.stereoset.scoring import score_intrasentence


@dataclass(frozen=True)
class StereosetSection:
    """A comparison file's ``stereoset`` section: the sample's size."""

    limit: int | None = None


def read_section(
    values: dict[str, Any], base: Path, source: Source, contextual: Any
) -> StereosetSection:
    """The ``stereoset`` section of a comparison file; errors name the file and the key."""
    from weatkit.crossmethod.sections import read_limit

    limit = read_limit(values, source)
    return replace(dataclass_from(StereosetSection, values, str(source)), limit=limit)


def stereoset_rows(
    entry: Any, kind: str, lang: str, section: StereosetSection, ctx: Any
) -> list[dict]:
    """StereoSet intrasentence SS, LMS and ICAT over all bias types in StereoSet's official
    per-term convention, with bootstrap CIs over the examples within term
    (:func:`~weatkit.crossmethod.uncertainty.stereoset_term_intervals`) and, for SS, the exact
    binomial p of Σ pro of N examples."""
    from weatkit.crossmethod.methods import check_applicable, score_rows, with_ci
    from weatkit.crossmethod.uncertainty import binomial_p, stereoset_term_intervals
    from weatkit.items.log import stereoset_items

    check_applicable("stereoset:ss_term", entry, kind, lang)
    dataset, sample = sample_examples(load_stereoset(lang), section.limit, ctx.scores.seed)
    scores = score_intrasentence(
        entry.model, dataset, kind=kind, options=ctx.options, show_progress=ctx.show_progress
    )
    predictions = {"intrasentence": scores}
    table = evaluate(dataset, predictions)
    ctx.log(lambda: stereoset_items(
        dataset, predictions, model=entry.name, language=lang, splits=["intrasentence"]
    ))  # fmt: skip
    results = stereoset_measures(
        table, source=entry.name, lang=lang, split="intrasentence", conventions=("term",)
    )
    results = ctx.record("stereoset", entry, lang, results, sample)
    per_example = outcomes(dataset, predictions, ["intrasentence"])
    cis = stereoset_term_intervals(per_example, **ctx.plan)
    how = "percentile bootstrap over examples within term"
    level = ctx.scores.confidence_level
    results = [with_ci(r, *cis[r.measure.split(":")[1]], how, level) for r in results]
    p = binomial_p(int(per_example["pro"].sum()), len(per_example))
    return score_rows(results, {"stereoset:ss_term": p})
