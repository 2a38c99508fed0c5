"""CrowS-Pairs in ``weatkit compare``: a ``crows`` section of a comparison file, and its rows.

::

    crows: {method: pll, limit: 200}     # en, fr (all bias types); ja, ru (gender, MBE's);
                                         # causal LMs: method sum or shared

One column ``crows:METHOD`` per model and language, valued the metric (the % of pairs whose
more stereotypical sentence the model prefers) over all pairs of the language, with its
bootstrap interval over the pairs (``weatkit crows``' own; the resamples, seed and level are the
``scores`` section's) and the exact binomial p of #wins of N as the neutral test. ``limit``
scores a seeded sample of the pairs stratified as ``weatkit crows --limit`` does (the
``scores`` section's seed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from weatkit.config.declare import Source
from weatkit.config.files import dataclass_from
from weatkit.crows.data import load_crows, sample_pairs
from weatkit.crows.measure import crows_measures
from weatkit.crows.score import crows_metric, score_crows


@dataclass(frozen=True)
class CrowsSection:
    """A comparison file's ``crows`` section: the scoring method and the sample's size."""

    method: str = "pll"
    limit: int | None = None

    def validate(self) -> None:
        from weatkit.crossmethod.sections import check_method

        check_method("crows", self.method)


def read_section(
    values: dict[str, Any], base: Path, source: Source, contextual: Any
) -> CrowsSection:
    """The ``crows`` section of a comparison file; errors name the file and the key."""
    from weatkit.crossmethod.sections import read_limit

    limit = read_limit(values, source)
    return replace(dataclass_from(CrowsSection, values, str(source)), limit=limit)


def crows_rows(entry: Any, kind: str, lang: str, section: CrowsSection, ctx: Any) -> list[dict]:
    """CrowS-Pairs metric (Nangia et al. 2020) over all pairs of the language, with its
    bootstrap CI over pairs (``weatkit crows``' own) and the exact binomial p of #wins of N."""
    from weatkit.crossmethod.methods import check_applicable, score_rows
    from weatkit.crossmethod.uncertainty import binomial_p
    from weatkit.items.log import crows_items

    check_applicable(f"crows:{section.method}", entry, kind, lang)
    lm = ctx.language_model(entry, kind, "CrowS-Pairs")
    pairs, sample = sample_pairs(load_crows(lang=lang), section.limit, ctx.scores.seed)
    per_pair = score_crows(lm, pairs, method=section.method, show_progress=ctx.show_progress)
    summary = crows_metric(per_pair, **ctx.plan)
    ctx.log(lambda: crows_items(per_pair, model=entry.name, method=section.method, language=lang))
    results = crows_measures(
        summary,
        source=entry.name,
        lang=lang,
        method=section.method,
        confidence_level=ctx.scores.confidence_level,
    )
    results = ctx.record("crows", entry, lang, results, sample)
    overall = results[0]
    n = int(overall.n or 0)
    wins = round(overall.value * n / 100.0) if n else 0  # metric = 100 · #wins / N
    return score_rows(results, {overall.column: binomial_p(wins, n)})
