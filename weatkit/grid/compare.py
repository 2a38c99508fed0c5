"""Paired differences in effect size between embeddings and their monolingual baseline.

For an aligned or jointly trained space E declared with ``baseline: B`` (CA-WEAT paper §5,
Figures 1–2: how multilinguality changes the measured bias), every test of a language is run on
both spaces **with the same items**: the items covered by both (in the list's order, then
equalised as configured). Both tests then have the same set sizes, so the engine draws the same
resamples for them (resample plans depend only on the seed and the set sizes), and the bootstrap
distribution of the difference is the per-resample difference:

    Δ = d_E − d_B,    Δ*_r = d*_E,r − d*_B,r  (r = 1..R, same item indices in both),

with the percentile interval of Δ* at the engine's confidence level. ``comparisons`` table
columns:

==================================  =====================================================
embeddings, baseline                the compared space and its baseline
lang, list_set, list_id, test       the test
n_x, n_y, n_a, n_b                  set sizes (items in both spaces)
effect_size, baseline_effect_size   d in each space on those items
difference                          Δ = effect_size − baseline_effect_size
difference_ci_low/high              percentile bootstrap CI of Δ (paired resamples)
==================================  =====================================================
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.coverage import CoverageError, CoveredTest, cover_test
from weatkit.embeddings.spec import EmbeddingsSpec, load_embeddings
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.weat import WeatInput, run_weat
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.sources import select_lists
from weatkit.pipeline import RunConfig
from weatkit.stats.intervals import percentile_interval

COMPARISON_COLUMNS = [
    "embeddings",
    "baseline",
    "lang",
    "list_set",
    "list_id",
    "test",
    "n_x",
    "n_y",
    "n_a",
    "n_b",
    "effect_size",
    "baseline_effect_size",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
]


def paired_differences(
    spec: EmbeddingsSpec,
    baseline: EmbeddingsSpec,
    lang: str,
    config: RunConfig,
    extractors: ExtractorPool | None = None,
) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """Δ = d(spec) − d(baseline) with a paired bootstrap CI, for every test of ``lang``.

    Returns:
        The ``comparisons`` rows (:data:`COMPARISON_COLUMNS`) and the skipped tests with reasons.
    """
    lower = spec.uncased or baseline.uncased if config.lower is None else config.lower
    norm = config.normalization(lower=lower, join_phrases=None if spec.is_contextual else "_")
    tests = select_lists(config.lists, (lang,), normalization=norm, tests=config.tests).tests
    words = sorted(set().union(*(t.vocabulary() for t in tests)))
    pool = extractors or ExtractorPool()
    spaces = [
        load_embeddings(
            s,
            lang,
            words=words,
            allow_pickle=config.allow_pickle,
            fasttext_oov=config.fasttext_oov,
            extractors=pool,
            show_progress=False,
        )
        for s in (spec, baseline)
    ]
    pairs: list[tuple[CoveredTest, CoveredTest]] = []
    skipped: list[dict[str, str]] = []
    for test in tests:
        try:
            pairs.append(_common_items(test, spaces[0], spaces[1], config))
        except CoverageError as err:
            skipped.append(
                {
                    "embeddings": spec.name,
                    "baseline": baseline.name,
                    "lang": test.lang,
                    "list_set": test.list_set,
                    "list_id": test.list_id,
                    "test": test.test,
                    "reason": str(err),
                }
            )
    rows = _differences(pairs, spec.name, baseline.name, config)
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS), skipped


def _common_items(
    test: AssociationTest, space: WordVectors, base: WordVectors, config: RunConfig
) -> tuple[CoveredTest, CoveredTest]:
    """The test covered in both spaces with the same items (coverage checked in each)."""
    covered = [
        cover_test(test, wv, min_coverage=config.min_coverage, equalize="none")
        for wv in (space, base)
    ]
    in_base = {k: set(covered[1].items[k]) for k in SET_KEYS}
    common = {k: tuple(w for w in covered[0].items[k] if w in in_base[k]) for k in SET_KEYS}
    shared = cover_test(
        replace(test, **common),
        space,
        min_coverage=1.0,
        equalize=config.equalize,
        seed=config.engine.seed,
    )
    kept = replace(test, **shared.items)
    return shared, cover_test(kept, base, min_coverage=1.0, equalize="none")


def _differences(
    pairs: list[tuple[CoveredTest, CoveredTest]], name: str, baseline: str, config: RunConfig
) -> list[dict[str, object]]:
    if not pairs:
        return []
    options = replace(config.engine, keep_distributions=True, n_permutations=0)
    inputs = [
        WeatInput(*(covered.vectors[k] for k in SET_KEYS)) for pair in pairs for covered in pair
    ]
    results = run_weat(inputs, options)
    rows = []
    for i, (covered, _) in enumerate(pairs):
        res, base = results[2 * i], results[2 * i + 1]
        low = high = np.nan
        if res.bootstrap_effect_size is not None and base.bootstrap_effect_size is not None:
            delta = res.bootstrap_effect_size - base.bootstrap_effect_size
            ci = percentile_interval(delta[None, :], options.confidence_level)
            low, high = float(ci[0][0]), float(ci[1][0])
        test = covered.test
        rows.append(
            {
                "embeddings": name,
                "baseline": baseline,
                "lang": test.lang,
                "list_set": test.list_set,
                "list_id": test.list_id,
                "test": test.test,
                "n_x": res.n_x,
                "n_y": res.n_y,
                "n_a": res.n_a,
                "n_b": res.n_b,
                "effect_size": res.effect_size,
                "baseline_effect_size": base.effect_size,
                "difference": res.effect_size - base.effect_size,
                "difference_ci_low": low,
                "difference_ci_high": high,
            }
        )
    return rows
