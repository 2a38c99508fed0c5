"""``weatkit run`` as a library call: lists × embeddings → engine → tidy tables.

Data flows one way: list sets are selected and normalised (:mod:`weatkit.lists`), each
embeddings source is loaded once per file with only the words the tests need
(:mod:`weatkit.embeddings`), out-of-vocabulary items are dropped per set, and all tests of all
embeddings go through the batched engine together (:mod:`weatkit.engine`). The CLI only parses
options into a :class:`RunConfig` and calls :func:`run`.
"""

from __future__ import annotations

import platform
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

import weatkit
from weatkit._io.fingerprint import file_fingerprint
from weatkit.embeddings.contextual import ContextualOptions, ExtractorPool
from weatkit.embeddings.coverage import EQUALIZE_MODES, CoverageError, CoveredTest, cover_test
from weatkit.embeddings.spec import EmbeddingsSpec, load_embeddings, parse_embeddings_specs
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.device import resolve_device
from weatkit.engine.weat import EngineOptions, WeatInput, WeatResult, run_weat
from weatkit.errors import ConfigError, WeatkitError
from weatkit.isomorphism.across_languages import (
    correlation_table,
    isomorphism_to_reference,
    with_isomorphism,
)
from weatkit.isomorphism.measures import IsoOptions
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.progress import progress
from weatkit.report.tables import results_frame, summary_frame

if TYPE_CHECKING:  # pragma: no cover
    from gensim.models import KeyedVectors


@dataclass(frozen=True)
class RunConfig:
    """Everything a run depends on (recorded in the manifest).

    Attributes:
        lists: list-set names or list files (``ca-weat``, ``ca-weat:v3``, ``x-weat``, ``weat``,
            ``caliskan``, ``my.yaml``).
        langs: languages or list ids to keep (None: all in the sets).
        tests: test ids to keep (None: all).
        embeddings: ``NAME=PATH`` specs (``{lang}`` allowed), ``glove-6b-50d``, transformer
            models ``NAME=hf:MODEL@LAYERS``, parsed :class:`EmbeddingsSpec`, or vectors already
            in memory (:class:`WordVectors` or a gensim ``KeyedVectors``).
        lower: lower-case items; None = only for uncased embeddings (the GloVe default).
        strip_accents: remove diacritics from items.
        min_coverage: per-set fraction of items that must be in the vocabulary.
        equalize: ``none``, ``truncate`` or ``subsample`` (set sizes after OOV removal).
        strict: stop at the first test with too low coverage instead of skipping it.
        allow_pickle: permit pickle-based formats (gensim ``.kv``).
        fasttext_oov: build vectors for OOV words from fastText ``.bin`` sub-words.
        engine: statistics options (ddof, resamples, seed, device, ...).
        contextual: how ``hf:`` models are encoded (pooling, template, dtype, device, ...).
        isomorphism: a reference language (e.g. ``"en"``): add the isomorphism measures of
            every language's space to it (summary columns ``iso_<measure>``) and their
            correlation with effect sizes across languages.
        iso: which isomorphism measures, on how many words.
        iso_words: word-list path with ``{lang}`` (each language's vocabulary), needed for
            spaces shared by all languages (joint multilingual files, contextual models).
    """

    lists: tuple[str, ...] = ("ca-weat",)
    langs: tuple[str, ...] | None = None
    tests: tuple[str, ...] | None = None
    embeddings: tuple[str | EmbeddingsSpec | WordVectors | KeyedVectors, ...] = ("glove-6b-50d",)
    lower: bool | None = None
    strip_accents: bool = False
    min_coverage: float = 0.8
    equalize: str = "none"
    strict: bool = False
    allow_pickle: bool = False
    fasttext_oov: bool = False
    engine: EngineOptions = field(default_factory=EngineOptions)
    contextual: ContextualOptions = field(default_factory=ContextualOptions)
    isomorphism: str | None = None
    iso: IsoOptions = field(default_factory=IsoOptions)
    iso_words: str | None = None

    def __post_init__(self) -> None:
        """:class:`ConfigError` naming the field of a coverage or equalisation that cannot be."""
        if isinstance(self.min_coverage, bool) or not 0.0 <= self.min_coverage <= 1.0:
            raise ConfigError(
                f"must be between 0 and 1, got {self.min_coverage!r}", field="min_coverage"
            )
        if self.equalize not in EQUALIZE_MODES:
            raise ConfigError(
                f"must be one of {', '.join(EQUALIZE_MODES)}, got {self.equalize!r}",
                field="equalize",
            )


@dataclass
class RunResult:
    """Tables and provenance of a run.

    Attributes:
        results: one row per embeddings × list × test (columns: see
            :data:`weatkit.report.tables.RESULT_COLUMNS`).
        summary: one row per embeddings × language × list set × test (CA-WEAT medians).
        skipped: tests not run, with the reason (e.g. low coverage).
        report: normalisation and list-selection notes.
        manifest: versions, configuration, seeds, input fingerprints, timings.
        isomorphism: measures per embeddings and language against the reference language
            (empty unless ``RunConfig.isomorphism``).
        correlations: effect size vs each measure across languages (see
            :func:`weatkit.isomorphism.across_languages.correlation_table`).
    """

    results: pd.DataFrame
    summary: pd.DataFrame
    skipped: list[dict[str, str]]
    report: list[str]
    manifest: dict[str, object]
    isomorphism: pd.DataFrame = field(default_factory=pd.DataFrame)
    correlations: pd.DataFrame = field(default_factory=pd.DataFrame)


@dataclass(frozen=True)
class _Source:
    """One embeddings source: a spec to load per file, or vectors already in memory."""

    name: str
    spec: EmbeddingsSpec | None = None
    vectors: WordVectors | None = None

    @classmethod
    def expand(
        cls, entry: str | EmbeddingsSpec | WordVectors | KeyedVectors, contextual: ContextualOptions
    ) -> list[_Source]:
        """The sources of one ``embeddings`` entry (an ``hf:`` spec gives one per layer)."""
        if isinstance(entry, str):
            return [cls(spec.name, spec=spec) for spec in parse_embeddings_specs(entry, contextual)]
        if isinstance(entry, EmbeddingsSpec):
            return [cls(entry.name, spec=entry)]
        if isinstance(entry, WordVectors):
            return [cls(entry.name, vectors=entry)]
        if hasattr(entry, "index_to_key"):  # a gensim KeyedVectors
            return [cls("keyed-vectors", vectors=WordVectors.from_keyed_vectors(entry))]
        raise WeatkitError(f"embeddings must be a spec string or vectors, not {type(entry)}")

    @property
    def per_language(self) -> bool:
        return self.spec is not None and self.spec.per_language

    @property
    def uncased(self) -> bool:
        return self.spec is not None and self.spec.uncased

    @property
    def contextual(self) -> bool:
        return self.spec is not None and self.spec.is_contextual

    def load(
        self,
        lang: str,
        words: set[str],
        config: RunConfig,
        extractors: ExtractorPool,
        show_progress: bool | None,
    ) -> WordVectors:
        if self.vectors is not None:
            return self.vectors
        assert self.spec is not None
        return load_embeddings(
            self.spec,
            lang,
            words=sorted(words),
            allow_pickle=config.allow_pickle,
            fasttext_oov=config.fasttext_oov,
            extractors=extractors,
            show_progress=show_progress,
        )

    def describe(self, wv: WordVectors) -> dict[str, object]:
        info: dict[str, object] = {
            "embeddings": self.name,
            "location": wv.source,
            "dim": wv.dim,
            "rows_loaded": len(wv),
            "rows_in_source": wv.n_rows_in_source,
        }
        if self.contextual:
            assert self.spec is not None
            info["layer"] = self.spec.layer
        elif self.spec is not None and not self.spec.is_default:
            info["fingerprint"] = file_fingerprint(wv.source)
        return info


@dataclass
class _Job:
    source: _Source
    covered: CoveredTest


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
    2017), then the CA-WEAT median per language (España-Bonet & Barrón-Cedeño 2022).

    Args:
        config: what to run.
        show_progress: progress bars (None: only on a terminal).
        extractors: loaded transformer models to reuse (a grid shares them across jobs).
        allow_empty: return empty tables instead of raising when every test is skipped.

    Returns:
        :class:`RunResult`: ``results`` (one row per test), ``summary`` (one row per list set,
        language and test), ``skipped``, ``report`` and ``manifest``.

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
        source for entry in config.embeddings for source in _Source.expand(entry, config.contextual)
    ]
    _check_unique_names(specs)

    report: list[str] = []
    sources: list[dict[str, str]] = []
    inputs: list[dict[str, object]] = []
    skipped: list[dict[str, str]] = []
    jobs: list[_Job] = []
    timings: dict[str, float] = {}
    selections: dict[Normalization, list[AssociationTest]] = {}
    extractors = extractors or ExtractorPool()
    for spec in specs:
        lower = spec.uncased if config.lower is None else config.lower
        norm = Normalization(
            lower=lower,
            strip_accents=config.strip_accents,
            join_phrases=None if spec.contextual else "_",  # models read phrases as text
        )
        if norm not in selections:  # each normalisation is selected (and reported) once
            selection = select_lists(
                config.lists, config.langs, normalization=norm, tests=config.tests
            )
            selections[norm] = selection.tests
            report += selection.report
            sources += [s for s in selection.sources if s not in sources]
        if lower and config.lower is None:
            report.append(f"{spec.name}: items lower-cased because the embeddings are uncased")
        t0 = time.perf_counter()
        loaded = _load_for_tests(spec, selections[norm], config, extractors, show_progress)
        for wv, tests in loaded:
            inputs.append(spec.describe(wv))
            for test in tests:
                try:
                    covered = cover_test(
                        test,
                        wv,
                        min_coverage=config.min_coverage,
                        equalize=config.equalize,
                        seed=config.engine.seed,
                    )
                except CoverageError as err:
                    if config.strict:
                        raise
                    skipped.append({**_keys(spec.name, test), "reason": str(err)})
                    continue
                jobs.append(_Job(spec, covered))
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

    t0 = time.perf_counter()
    weat_inputs = [
        WeatInput(*(j.covered.vectors[k] for k in SET_KEYS), label=_label(j)) for j in jobs
    ]
    bar = progress(total=len(jobs), desc="association tests", unit="test", show=show_progress)
    with bar:
        results = run_weat(weat_inputs, config.engine, progress=bar.update)
    timings["engine"] = round(time.perf_counter() - t0, 3)

    rows = [_result_row(j, r) for j, r in zip(jobs, results, strict=True)]
    results_df = results_frame(rows)
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
        correlations = correlation_table(summary_df)
        timings["isomorphism"] = round(time.perf_counter() - t0, 3)
    timings["total"] = round(time.perf_counter() - started, 3)
    manifest = _manifest(config, device, sources, inputs, skipped, report, timings)
    manifest["contextual_models"] = extractors.describe()
    return RunResult(results_df, summary_df, skipped, report, manifest, iso_df, correlations)


def _check_unique_names(specs: Sequence[_Source]) -> None:
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ConfigError(
                f"two are named {spec.name!r}: give them distinct names (NAME=PATH)",
                field="embeddings",
            )
        seen.add(spec.name)


def _load_for_tests(
    spec: _Source,
    tests: Sequence[AssociationTest],
    config: RunConfig,
    extractors: ExtractorPool,
    show_progress: bool | None,
) -> list[tuple[WordVectors, list[AssociationTest]]]:
    """Load each file once with the vocabulary of the tests that use it."""
    by_lang: dict[str, list[AssociationTest]] = defaultdict(list)
    for test in tests:
        by_lang[test.lang if spec.per_language else ""].append(test)
    loaded = []
    for lang, group in progress(
        sorted(by_lang.items()), desc=f"loading {spec.name}", unit="file", show=show_progress
    ):
        words = set().union(*(t.vocabulary() for t in group))
        wv = spec.load(lang or group[0].lang, words, config, extractors, show_progress)
        loaded.append((wv, group))
    return loaded


def _keys(name: str, test: AssociationTest) -> dict[str, str]:
    return {
        "embeddings": name,
        "lang": test.lang,
        "list_set": test.list_set,
        "list_id": test.list_id,
        "test": test.test,
    }


def _label(job: _Job) -> str:
    t = job.covered.test
    return f"{job.source.name} {t.list_set} {t.list_id} {t.test}"


def _result_row(job: _Job, res: WeatResult) -> dict[str, object]:
    covered = job.covered
    missing = [f"{k}:{w}" for k in SET_KEYS for w in covered.missing[k]]
    stat_ci = res.statistic_ci or (np.nan, np.nan)
    eff_ci = res.effect_size_ci or (np.nan, np.nan)
    return {
        **_keys(job.source.name, covered.test),
        "n_x": res.n_x,
        "n_y": res.n_y,
        "n_a": res.n_a,
        "n_b": res.n_b,
        "n_oov": covered.n_oov,
        "coverage": min(covered.coverage.values()),
        "statistic": res.statistic,
        "statistic_ci_low": stat_ci[0],
        "statistic_ci_high": stat_ci[1],
        "effect_size": res.effect_size,
        "effect_size_ci_low": eff_ci[0],
        "effect_size_ci_high": eff_ci[1],
        "p_value": np.nan if res.pvalue is None else res.pvalue,
        "permutation_method": res.permutation_method or "",
        "n_permutations": res.n_permutations,
        "oov_items": " ".join(missing),
    }


def _entry_label(entry: str | EmbeddingsSpec | WordVectors | KeyedVectors) -> str:
    if isinstance(entry, EmbeddingsSpec):
        return f"{entry.name}={entry.location}" + (
            f"@{entry.layer}" if entry.layer is not None else ""
        )
    return entry if isinstance(entry, str) else f"<in-memory {type(entry).__name__}>"


def environment() -> dict[str, object]:
    """Versions, platform and command line, for manifests."""
    return {
        "weatkit_version": weatkit.__version__,
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "command": sys.argv,
    }


def _manifest(
    config: RunConfig,
    device: torch.device,
    sources: list[dict[str, str]],
    inputs: list[dict[str, object]],
    skipped: list[dict[str, str]],
    report: list[str],
    timings: dict[str, float],
) -> dict[str, object]:
    return {
        **environment(),
        "device": str(device),
        "config": asdict(replace(config, embeddings=tuple(map(_entry_label, config.embeddings)))),
        "seed": config.engine.seed,
        "list_sources": sources,
        "embeddings": inputs,
        "skipped": skipped,
        "report": report,
        "timings_s": timings,
    }
