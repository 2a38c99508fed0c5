"""GEST and EuroGEST in ``weatkit compare``: a ``gest`` section of a comparison file, and its rows.

::

    gest: {mlm_templates: [0, 1, 2, 3], glm_templates: [0, 1]}   # English; g_s averaged
                                         # EuroGEST in its 29 languages (eurogest: false: off)
                                         # also: eurogest_code: 2025-12, coinciding: other

The section scores English GEST (``gest:g_s``) in ``en`` and EuroGEST (``eurogest:g_s``, Rowe et
al. 2025; :func:`weatkit.measures.gest` with ``lang``) in each of its 29 languages, with
``eurogest_code`` (upstream code version) and ``coinciding`` (items whose masculine and feminine
strings coincide) as in ``weatkit gest --lang``; the templates apply to English only. Each
column has its percentile bootstrap interval (the ``scores`` section's resamples, seed and
level) and its neutral test, whether the interval excludes 1. ``limit`` scores a seeded sample
of the items stratified as ``weatkit gest --limit`` does (the ``scores`` section's seed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from weatkit.config.declare import Source
from weatkit.config.files import dataclass_from, describe
from weatkit.errors import ConfigError, WeatkitError
from weatkit.gest.aggregate import aggregate_by_template
from weatkit.gest.data import load_gest, sample_gest
from weatkit.gest.eurogest import CODE, COINCIDING, DEFAULT_CODE
from weatkit.gest.measure import gest, gest_measures
from weatkit.gest.scoring import score_gest


@dataclass(frozen=True)
class GestSection:
    """English GEST: template ids (GEST paper Table 2) for masked and for causal LMs (None: all
    of them). EuroGEST in its languages unless ``eurogest`` is False, with the upstream code
    version ``eurogest_code`` and the handling of coinciding forms ``coinciding``
    (:func:`weatkit.measures.gest`)."""

    mlm_templates: tuple[int, ...] | None = None
    glm_templates: tuple[int, ...] | None = None
    eurogest: bool = True
    eurogest_code: str = DEFAULT_CODE
    coinciding: str = "other"
    limit: int | None = None

    def validate(self) -> None:
        if self.eurogest_code not in CODE:
            raise ConfigError(
                f"choose {', '.join(CODE)}, not {self.eurogest_code!r}", field="eurogest_code"
            )
        if self.coinciding not in COINCIDING:
            raise ConfigError(
                f"choose {', '.join(COINCIDING)}, not {self.coinciding!r}", field="coinciding"
            )

    def templates(self, kind: str) -> tuple[int, ...] | None:
        return self.mlm_templates if kind == "mlm" else self.glm_templates


def read_section(
    values: dict[str, Any], base: Path, source: Source, contextual: Any
) -> GestSection:
    """The ``gest`` section of a comparison file; errors name the file and the key."""
    from weatkit.crossmethod.sections import read_limit

    limit = read_limit(values, source)
    chosen = {
        key: _integers(values.pop(key), source.key(key))
        for key in ("mlm_templates", "glm_templates")
        if values.get(key) is not None
    }
    return replace(dataclass_from(GestSection, values, str(source)), **chosen, limit=limit)


def _integers(value: Any, where: str) -> tuple[int, ...]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        raise ConfigError(f"{where}: expected a non-empty list of integers, got {describe(value)}")
    return tuple(value)


def gest_rows(entry: Any, kind: str, lang: str, section: GestSection, ctx: Any) -> list[dict]:
    """GEST g_s (Pikuliak et al. 2023) in English: the mean over the chosen templates, with
    a percentile bootstrap CI over the samples
    (:func:`~weatkit.crossmethod.uncertainty.gest_template_mean_interval`); in the EuroGEST
    languages (unless ``section.eurogest`` is False) EuroGEST's g_s (:func:`eurogest_rows`)."""
    from weatkit.crossmethod.methods import NotApplicable, check_applicable, score_rows, with_ci
    from weatkit.crossmethod.uncertainty import gest_template_mean_interval
    from weatkit.items.log import gest_items
    from weatkit.measures.registry import get_measure

    if lang != "en" and section.eurogest:
        if lang not in (get_measure("eurogest:g_s").languages or ()):
            raise NotApplicable(f"GEST is English only and EuroGEST has no {lang}")
        return eurogest_rows(entry, kind, lang, section, ctx)
    check_applicable("gest:g_s", entry, kind, lang)
    name = entry.name
    samples, sample = sample_gest(load_gest("1.0"), section.limit, ctx.scores.seed)
    scores = score_gest(
        entry.model,
        samples,
        kind=kind,
        templates=section.templates(kind),
        options=ctx.options,
        show_progress=ctx.show_progress,
    )
    if scores.empty:
        raise WeatkitError(f"{name}: no GEST template scored")
    summary = aggregate_by_template(scores, n_bootstrap=0)
    ctx.log(lambda: gest_items(scores, model=name, language=lang))
    _, low, high = gest_template_mean_interval(scores, **ctx.plan)
    how = "percentile bootstrap over samples within stereotype"
    results = gest_measures(summary, source=name, lang=lang)
    results = ctx.record("gest", entry, lang, results, sample)
    level = ctx.scores.confidence_level
    return score_rows([with_ci(m, low, high, how, level) for m in results])


def eurogest_rows(entry: Any, kind: str, lang: str, section: GestSection, ctx: Any) -> list[dict]:
    """EuroGEST g_s (Rowe et al. 2025) of the model in ``lang``, ``weatkit gest --lang``'s
    computation (:func:`weatkit.measures.gest` with ``lang``; ``eurogest:g_s``)::

        r_j = exp(S_m) / (exp(S_m) + exp(S_f)),   R_s = mean_{j ∈ s} r_j
        g_s = mean(R_8 … R_16) / mean(R_1 … R_7)

    with its percentile bootstrap CI over the items within each stereotype, drawn with the
    ``scores`` section's resamples, seed and level (the plan of ``weatkit gest --lang``); the
    upstream code version and the coinciding forms as the section says. The neutral test is
    whether the CI excludes 1 (no binomial p: g_s is not a count)."""
    from weatkit.crossmethod.methods import check_applicable, score_rows
    from weatkit.items.log import eurogest_items

    check_applicable("eurogest:g_s", entry, kind, lang)
    result = gest(
        entry.model,
        lang=lang,
        code=section.eurogest_code,
        coinciding=section.coinciding,
        kind=kind,
        options=ctx.options,
        show_progress=ctx.show_progress,
        name=entry.name,
        limit=section.limit,
        **ctx.plan,
    )
    code = section.eurogest_code
    ctx.log(lambda: eurogest_items(result.scores, model=entry.name, language=lang, code=code))
    return score_rows(ctx.record("gest", entry, lang, result.measures, result.sample))
