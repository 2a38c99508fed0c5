"""One bias measure per method, model and language, as rows of the long score table: what every
method shares, and the rows of the built-in ``weat`` section (:func:`weat_rows`).

Every method's rows function (:func:`weat_rows`; a measure package's
:attr:`~weatkit.measures.plugins.Compare.rows`) computes its method's native result for one model
in one language, converts it with the measure's own conversion to
:class:`~weatkit.measures.result.MeasureResult` (:mod:`weatkit.measures`) and returns rows
``{model, lang, method, measure, value, ci_low, ci_high, n, ci_level, neutral,
ci_excludes_neutral, p_value_neutral}`` (see :data:`SCORE_COLUMNS`; ``measure`` is the result's
:attr:`~weatkit.measures.result.MeasureResult.column`). It raises :class:`NotApplicable` when
the method has nothing to measure for that model or language: the registry
(:mod:`weatkit.measures.registry`) decides from the model kind and the language, the method's
section from its data (word lists, parallel corpora).

Measures, their neutral values and stereotypical sides: :data:`weatkit.measures.registry.
MEASURES`. WEAT columns are ``SET:TEST@L`` (effect size d of the word vectors at layer L, e.g.
``ca-weat:v1:weat1@-2``), those of the association metrics a ``weat`` section's ``metrics``
names ``METRIC:SET:TEST:PART@L`` (``rnd:weat:weat6:A@-2``, ``mac:weat:weat6@-2``); a package's
``compare`` module tells its columns. Every sentence-level score has a percentile bootstrap CI
over its items (the file's ``scores`` section, :class:`~weatkit.crossmethod.config.
ScoreOptions`) and, where it has a neutral value, a test of it
(:mod:`weatkit.crossmethod.uncertainty`). A section's ``limit`` scores a seeded, stratified
sample of its items (:mod:`weatkit.stats.sampling`, the seed of the ``scores`` section, or the
section's own), recorded in :attr:`MethodContext.samples` (:func:`MethodContext.record`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from weatkit.crossmethod.config import ModelEntry, ScoreOptions, WeatSection
from weatkit.embeddings.contextual import ContextualOptions, ExtractorPool
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.lists.sources import has_language
from weatkit.measures import MeasureResult, association_measures, get_measure, weat_measures
from weatkit.measures.result import on_sample
from weatkit.pipeline import run
from weatkit.scoring import Scorer, get_scorer
from weatkit.sentence import MaskedLM
from weatkit.stats.sampling import ItemSample

SCORE_COLUMNS = [
    "model", "lang", "method", "measure", "value", "ci_low", "ci_high", "n",
    "ci_level", "neutral", "ci_excludes_neutral", "p_value_neutral",
]  # fmt: skip


class NotApplicable(Exception):
    """The method does not apply to this model or language (the reason is the message)."""


@dataclass
class MethodContext:
    """What every method shares: loading options, progress bars, the bootstrap of the scores'
    CIs (the file's ``scores`` section), loaded masked LMs, the samples of the sections
    with a ``limit`` (``samples``: ``METHOD:MODEL:LANG`` -> the sample scored), and, with
    ``log_items`` (the file's ``log_items``), the per-item logs of the sentence-level methods
    (``items``: :mod:`weatkit.items.log`)."""

    options: ContextualOptions
    show_progress: bool | None = None
    masked: dict[str, MaskedLM] = field(default_factory=dict)
    causal: dict[str, Scorer] = field(default_factory=dict)
    extractors: ExtractorPool = field(default_factory=ExtractorPool)
    scores: ScoreOptions = field(default_factory=ScoreOptions)
    samples: dict[str, ItemSample] = field(default_factory=dict)
    log_items: bool = False
    items: list[pd.DataFrame] = field(default_factory=list)

    def log(self, build: Callable[[], pd.DataFrame]) -> None:
        """Keep the per-item log ``build()`` makes, with ``log_items`` (else nothing)."""
        if self.log_items:
            self.items.append(build())

    def record(
        self,
        method: str,
        entry: ModelEntry,
        lang: str,
        results: list[MeasureResult],
        sample: ItemSample | None,
    ) -> list[MeasureResult]:
        """``results`` computed on ``sample`` (:func:`~weatkit.measures.result.on_sample`), the
        sample kept in :attr:`samples` (nothing without one)."""
        if sample is not None:
            self.samples[f"{method}:{entry.name}:{lang}"] = sample
        return on_sample(results, sample)

    @property
    def plan(self) -> dict[str, Any]:
        """``n_bootstrap``, ``seed``, ``confidence_level`` of the scores' CIs, as keywords."""
        return asdict(self.scores)

    def masked_lm(self, entry: ModelEntry, kind: str, method: str) -> MaskedLM:
        """The entry's model as a :class:`MaskedLM` (loaded once per model)."""
        if kind != "mlm":
            raise NotApplicable(f"{method} needs a masked LM; {entry.name} is a causal LM")
        if entry.model not in self.masked:
            self.masked[entry.model] = MaskedLM(entry.model, self.options)
        return self.masked[entry.model]

    def language_model(self, entry: ModelEntry, kind: str, method: str) -> MaskedLM | Scorer:
        """The entry's model for a sentence measure: a :class:`MaskedLM` for a masked LM, the
        Scorer of its spec (:func:`weatkit.scoring.get_scorer`) for a causal LM (each loaded
        once per model)."""
        if kind == "mlm":
            return self.masked_lm(entry, kind, method)
        if entry.model not in self.causal:
            self.causal[entry.model] = get_scorer(entry.model, self.options)
        return self.causal[entry.model]


def check_applicable(measure: str, entry: ModelEntry, kind: str, lang: str) -> None:
    """Raise :class:`NotApplicable` with the registry's reason when ``measure`` does not apply
    to ``entry`` (of ``kind``) in ``lang``."""
    reason = get_measure(measure).not_applicable(kind, lang, entry.name)
    if reason is not None:
        raise NotApplicable(reason)


def check_lists(specs: tuple[str, ...], lang: str) -> None:
    """Raise :class:`NotApplicable` when no list set or file of ``specs`` has ``lang``."""
    if not has_language(specs, lang):
        raise NotApplicable(f"no lists for {lang} in {', '.join(specs)}")


def list_test_keys(table: pd.DataFrame) -> list[str]:
    """Each row's test in a measure's column name: ``SET:TEST``, or ``SET:LIST:TEST`` when a
    list set holds a test in several lists (CA-WEAT's per-language lists)."""
    several = table.groupby(["list_set", "test"])["list_id"].nunique().max() > 1
    return [
        f"{s}:{i}:{t}" if several else f"{s}:{t}"
        for s, i, t in zip(table["list_set"], table["list_id"], table["test"], strict=True)
    ]


def score_rows(
    results: list[MeasureResult], p_values: dict[str, float] | None = None
) -> list[dict[str, Any]]:
    """:data:`SCORE_COLUMNS` rows of measure results (``method``: the measure's family).

    ``neutral`` is the registry's neutral value (NaN for a measure without one);
    ``ci_excludes_neutral`` whether ``[ci_low, ci_high]`` excludes it (empty without a CI or a
    neutral value); ``p_value_neutral`` the exact binomial p of ``p_values`` (by column name)
    for indicator scores, NaN otherwise.
    """
    rows = []
    for r in results:
        measure = get_measure(r.measure)
        neutral = math.nan if measure.neutral is None else float(measure.neutral)
        has_ci = not (math.isnan(r.ci_low) or math.isnan(r.ci_high) or math.isnan(neutral))
        rows.append(
            {
                "model": r.source,
                "lang": r.lang,
                "method": measure.family,
                "measure": r.column,
                "value": r.value,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "n": np.nan if r.n is None else r.n,
                "ci_level": r.confidence_level,
                "neutral": neutral,
                "ci_excludes_neutral": (
                    bool(not r.ci_low <= neutral <= r.ci_high) if has_ci else None
                ),
                "p_value_neutral": (p_values or {}).get(r.column, math.nan),
            }
        )
    return rows


def with_ci(
    result: MeasureResult, low: float, high: float, how: str, level: float
) -> MeasureResult:
    """``result`` with the interval ``[low, high]`` at ``level``, its method naming ``how`` (as
    it is without one: NaN bounds)."""
    has_ci = not (math.isnan(low) or math.isnan(high))
    return replace(
        result,
        ci_low=low,
        ci_high=high,
        confidence_level=level if has_ci else math.nan,
        method=f"{result.method}; {how}" if has_ci else result.method,
    )


def weat_rows(
    entry: ModelEntry, kind: str, lang: str, section: WeatSection, ctx: MethodContext
) -> list[dict[str, Any]]:
    """Effect sizes of the model's word vectors at each layer (of a ``path`` entry's static
    word vectors) in one language, and the association metrics the section's ``metrics`` name
    (:func:`~weatkit.measures.association_measures`)."""
    check_applicable("weat", entry, kind, lang)
    check_lists(section.lists, lang)
    name = entry.name
    layers = ",".join(str(x) for x in section.layers)
    location = entry.vectors or f"hf:{entry.model}@{layers}"  # word vectors, or the layers
    specs = parse_embeddings_specs(f"{name}={location}", ctx.options)
    config = replace(section.run, langs=(lang,), embeddings=tuple(specs), contextual=ctx.options)
    result = run(
        config, show_progress=ctx.show_progress, extractors=ctx.extractors, allow_empty=True
    )
    # one layer: the embeddings are named without "@LAYER"; word vectors have no layer
    layer = section.layers[0] if len(section.layers) == 1 and not entry.vectors else None
    results = weat_measures(result.summary, source=name, layer=layer)
    if len(result.association):
        level = section.engine.confidence_level
        results += association_measures(result.association, level, source=name, layer=layer)
    return score_rows(results)
