"""The run loop: every embeddings source's tests covered, run by the engine and the association
metrics, then assembled into a :class:`~weatkit.pipeline.result.RunResult`."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from weatkit.association.options import check_robustness
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.coverage import CoverageError
from weatkit.embeddings.run_cache import LoadedFiles
from weatkit.engine.device import resolve_device
from weatkit.engine.null import N_BANDS
from weatkit.engine.weat import WeatInput, WeatResult, run_weat
from weatkit.errors import WeatkitError
from weatkit.isomorphism.across_languages import (
    correlation_table,
    isomorphism_to_reference,
    with_isomorphism,
)
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.pipeline.jobs import (
    CoverOnce,
    Job,
    Source,
    casing_notes,
    check_unique_names,
    job_label,
    load_for_tests,
    oov_items,
    result_row,
    row_keys,
)
from weatkit.pipeline.manifest import run_manifest
from weatkit.pipeline.metrics import association_tables
from weatkit.pipeline.reliability import reliability_frame
from weatkit.pipeline.result import RunResult, skipped_metric_lines
from weatkit.pipeline.robustness import (
    influence_table,
    layer_models,
    null_baselines,
    null_columns,
    null_table,
)
from weatkit.pipeline.run_config import RunConfig
from weatkit.progress import progress
from weatkit.report.tables import (
    association_pooled_frame,
    pooled_frame,
    results_frame,
    summary_frame,
)

#: Added to a coverage error when the embeddings are a fastText ``.bin`` read without
#: ``fasttext_oov``: its sub-words would give the missing items vectors.
FASTTEXT_OOV_HINT = (
    "the embeddings are a fastText .bin, which builds vectors of out-of-vocabulary items from "
    "their sub-words: add --fasttext-oov (fasttext_oov: true in a file)"
)


def run(
    config: RunConfig,
    *,
    show_progress: bool | None = None,
    extractors: ExtractorPool | None = None,
    allow_empty: bool = False,
) -> RunResult:
    """Run every selected test on every embeddings source. See :class:`RunConfig`.

    For each (embeddings, list, test) the WEAT statistic S(X, Y, A, B) = Σ_x s(x, A, B) −
    Σ_y s(y, A, B), the effect size d = (mean_x s − mean_y s) / std_{w∈X∪Y} s(w, A, B), their
    bootstrap CIs and the permutation p-value (:func:`weatkit.engine.weat.weat`; Caliskan et al.
    2017), then the CA-WEAT median per language (España-Bonet & Barrón-Cedeño 2022); and the
    association metrics ``config.metrics`` names besides ``weat`` (RND, RNSB, MAC, ECT, RIPA,
    SC-WEAT, DirectBias: :mod:`weatkit.association.query`) on every test.

    Args:
        config: what to run.
        show_progress: progress bars (None: only on a terminal).
        extractors: loaded transformer models to reuse (a grid shares them across jobs).
        allow_empty: return empty tables instead of raising when every test is skipped, or
            when no metric could be computed on any test (``--metrics ripa`` on lists without
            definitional pairs).

    Returns:
        :class:`RunResult`: ``results`` (one row per test), ``summary`` (one row per list set,
        language and test), ``association`` and ``association_items`` (with association
        metrics), ``skipped``, ``skipped_metrics``, ``report`` and ``manifest``.

    Example:
        >>> import weatkit
        >>> out = weatkit.run(weatkit.RunConfig(lists=("weat",), langs=("en",)))
        >>> out.results[["test", "effect_size"]].round(2).to_dict("records")  # doctest: +SKIP
        [{'test': 'weat1', 'effect_size': 1.08}, {'test': 'weat2', 'effect_size': 1.54}]
    """
    started = time.perf_counter()
    config.engine.validate()
    device = resolve_device(config.engine.device)
    specs = [
        source for entry in config.embeddings for source in Source.expand(entry, config.contextual)
    ]
    check_unique_names(specs)

    report: list[str] = []
    sources: list[dict[str, str]] = []
    inputs: list[dict[str, object]] = []
    skipped: list[dict[str, str]] = []
    jobs: list[Job] = []
    timings: dict[str, float] = {}
    selections: dict[Normalization, list[AssociationTest]] = {}
    nulls: dict[int, np.ndarray] = {}  # job position -> null d's (engine.null)
    null_spaces: list[dict[str, object]] = []
    unrunnable: dict[Normalization, list[tuple[AssociationTest, str]]] = {}
    extractors = extractors or ExtractorPool()
    files = LoadedFiles()  # a file named by several entries is read once
    coverage = CoverOnce()  # and its tests covered once
    for spec in specs:
        lower = spec.uncased if config.lower is None else config.lower
        # models read phrases as text
        norm = config.normalization(lower=lower, join_phrases=None if spec.contextual else "_")
        if norm not in selections:  # each normalisation is selected (and reported) once
            selection = select_lists(
                config.lists, config.langs, normalization=norm, tests=config.tests
            )
            selections[norm] = selection.tests
            unrunnable[norm] = selection.skipped
            report += selection.report
            sources += [s for s in selection.sources if s not in sources]
        report += casing_notes(spec, config)
        skipped += [
            {**row_keys(spec.name, test), "reason": reason, "oov_items": "", "cause": "lists"}
            for test, reason in unrunnable[norm]
        ]
        t0 = time.perf_counter()
        loaded = load_for_tests(spec, selections[norm], config, extractors, files, show_progress)
        for wv, tests in loaded:
            inputs.append(spec.describe(wv))
            first_job = len(jobs)
            for test in tests:
                try:
                    covered = coverage.cover(
                        test,
                        wv,
                        min_coverage=config.min_coverage,
                        equalize=config.equalize,
                        seed=config.engine.seed,
                    )
                except CoverageError as err:
                    if not config.fasttext_oov and spec.fasttext_bin(test.lang):
                        err = CoverageError(f"{err}; {FASTTEXT_OOV_HINT}")
                        hint = f"{spec.name}: tests below coverage; {FASTTEXT_OOV_HINT}"
                        report += [hint] if hint not in report else []
                    if config.strict:
                        raise err from None
                    skipped.append(
                        {
                            **row_keys(spec.name, test),
                            "reason": str(err),
                            "oov_items": oov_items(test, wv),
                        }
                    )
                    continue
                jobs.append(Job(spec, covered, wv if config.association_metrics else None))
            if config.engine.null:
                t1 = time.perf_counter()
                new = dict(enumerate(jobs[first_job:], start=first_job))
                null_spaces += null_baselines(spec, wv, new, config, extractors, nulls, report)
                timings["null"] = round(timings.get("null", 0.0) + time.perf_counter() - t1, 3)
        timings[f"load:{spec.name}"] = round(time.perf_counter() - t0, 3)
    for extractor in extractors.extractors.values():
        report += [n for n in extractor.notes if n not in report]
        st = extractor.stats
        report.append(
            f"{extractor.model_name}: {st.n_computed} item(s) encoded in {st.n_batches} "
            f"batch(es), {st.n_cached} from the cache"
        )
    if not jobs and not allow_empty:
        reason = skipped[0]["reason"] if skipped else "no tests selected"
        raise WeatkitError(f"nothing to run: {reason}")

    results: list[WeatResult] = []
    if "weat" in config.metrics:
        t0 = time.perf_counter()
        weat_inputs = [
            WeatInput(*(j.covered.vectors[k] for k in SET_KEYS), label=job_label(j)) for j in jobs
        ]
        bar = progress(total=len(jobs), desc="association tests", unit="test", show=show_progress)
        with bar:
            results = run_weat(weat_inputs, config.engine, progress=bar.update)
        timings["engine"] = round(time.perf_counter() - t0, 3)
    association, association_items, skipped_metrics = pd.DataFrame(), pd.DataFrame(), []
    association_influence = pd.DataFrame()
    if config.association_metrics:
        t0 = time.perf_counter()
        association, association_items, association_influence, skipped_metrics = (
            association_tables(jobs, config, show_progress)
        )
        timings["association"] = round(time.perf_counter() - t0, 3)
        if not results and association.empty and not allow_empty:
            why = "; ".join(skipped_metric_lines(skipped_metrics))
            raise WeatkitError(f"nothing computed: {why}")
        report += [
            f"{option}: not for {why}"
            for option in config.robustness
            for why in check_robustness(config.metrics, option)
        ]

    rows = [
        {**result_row(j, r), **null_columns(nulls.get(i), r, config.engine)}
        for i, (j, r) in enumerate(zip(jobs if results else [], results, strict=True))
    ]
    results_df = results_frame(rows)
    influence_df = pd.DataFrame()
    if config.engine.influence and results:
        influence_df = influence_table(jobs, results)
    summary_df = summary_frame(results_df, config.engine)
    iso_df, correlations = pd.DataFrame(), pd.DataFrame()
    if config.isomorphism:
        t0 = time.perf_counter()
        iso_df, notes = isomorphism_to_reference(
            [spec.spec for spec in specs if spec.spec is not None],
            sorted(results_df["lang"].unique()),
            config.isomorphism,
            config.iso,
            words_template=config.iso_words,
            extractors=extractors,
            allow_pickle=config.allow_pickle,
        )
        report += notes
        report += [f"isomorphism: {s.name} is in memory; not measured" for s in specs if s.vectors]
        summary_df = with_isomorphism(summary_df, iso_df)
        correlations = correlation_table(
            summary_df,
            confidence_level=config.engine.confidence_level,
            seed=config.engine.seed,
        )
        timings["isomorphism"] = round(time.perf_counter() - t0, 3)
    pooled, association_pooled = pd.DataFrame(), pd.DataFrame()
    if config.pool:
        layers = layer_models(spec.spec for spec in specs if spec.spec is not None)
        level = config.engine.confidence_level
        pooled = pooled_frame(results_df, config.pool, level, layers)
        if config.association_metrics:
            association_pooled = association_pooled_frame(association, config.pool, level, layers)
    reliability = pd.DataFrame()
    if config.reliability:
        t0 = time.perf_counter()
        reliability, notes = reliability_frame(results_df, config.engine)
        report += notes
        timings["reliability"] = round(time.perf_counter() - t0, 3)
    timings["total"] = round(time.perf_counter() - started, 3)
    manifest = run_manifest(config, device, sources, inputs, skipped, report, timings)
    if config.association_metrics:
        manifest["skipped_metrics"] = skipped_metrics
    if config.engine.null:
        manifest["null"] = {
            "n_draws": config.engine.null,
            "seed": config.engine.seed,
            "bands": N_BANDS,
            "spaces": null_spaces,
        }
    if config.compat is not None:
        manifest["compat"] = config.compat_summary()
    manifest["contextual_models"] = extractors.describe()
    return RunResult(
        results_df, summary_df, skipped, report, manifest, iso_df, correlations, pooled,
        influence_df, null_table(jobs, nulls), association, association_items, skipped_metrics,
        association_influence, association_pooled, reliability,
    )
