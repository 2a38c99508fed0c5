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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch

import weatkit
from weatkit._io.fingerprint import content_fingerprint
from weatkit.association.options import (
    ASSOCIATION_KEYS,
    COMPAT,
    DEFAULT_METRICS,
    AssociationOptions,
    check_metrics,
    check_robustness,
)
from weatkit.association.query import Query, measure_query
from weatkit.compat_report import preset_report
from weatkit.embeddings.contextual import ContextualOptions, ExtractorPool
from weatkit.embeddings.coverage import EQUALIZE_MODES, CoverageError, CoveredTest, cover_test
from weatkit.embeddings.run_cache import LoadedFiles
from weatkit.embeddings.spec import (
    HF_PREFIX,
    EmbeddingsSpec,
    load_embeddings,
    parse_embeddings_specs,
)
from weatkit.embeddings.static import detect_format
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.compat import COMPAT_PRESETS, ENGINE_KEYS
from weatkit.engine.device import resolve_device
from weatkit.engine.influence import influence_rows
from weatkit.engine.null import (
    N_BANDS,
    N_CANDIDATES,
    NO_NULL,
    NullSample,
    candidates_from_words,
    null_d_of,
    null_samples,
    summarize_null,
    wordfreq_candidates,
)
from weatkit.engine.weat import EngineOptions, WeatInput, WeatResult, run_weat
from weatkit.errors import ConfigError, WeatkitError
from weatkit.isomorphism.across_languages import (
    correlation_table,
    isomorphism_to_reference,
    with_isomorphism,
)
from weatkit.isomorphism.measures import IsoOptions
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.normalize import IDENTICAL_TARGETS, Normalization, check_choice
from weatkit.lists.sources import select_lists
from weatkit.progress import progress
from weatkit.report.tables import (
    ASSOCIATION_INFLUENCE_COLUMNS,
    INFLUENCE_COLUMNS,
    KEY_COLUMNS,
    NULL_COLUMNS,
    POOL_LEVELS,
    association_frames,
    association_pooled_frame,
    pooled_frame,
    results_frame,
    summary_frame,
)

if TYPE_CHECKING:  # pragma: no cover
    from gensim.models import KeyedVectors

#: Added to a coverage error when the embeddings are a fastText ``.bin`` read without
#: ``fasttext_oov``: its sub-words would give the missing items vectors.
FASTTEXT_OOV_HINT = (
    "the embeddings are a fastText .bin, which builds vectors of out-of-vocabulary items from "
    "their sub-words: add --fasttext-oov (fasttext_oov: true in a file)"
)


@dataclass(frozen=True)
class RunConfig:
    """Everything a run depends on (recorded in the manifest).

    Attributes:
        lists: list-set names or list files (``ca-weat``, ``ca-weat:v3``, ``x-weat``, ``weat``,
            ``caliskan``, ``my.yaml``).
        langs: languages or list ids to keep (None: all in the sets).
        tests: test ids to keep (None: all).
        embeddings: ``NAME=PATH`` specs (``{lang}`` allowed), ``glove-6b-50d``, transformer
            models ``NAME=hf:MODEL@LAYERS``, embeddings APIs ``NAME=openai:BASE_URL#MODEL``,
            parsed :class:`EmbeddingsSpec`, or vectors already
            in memory (:class:`WordVectors` or a gensim ``KeyedVectors``).
        lower: lower-case items; None = only for uncased embeddings (the GloVe default).
        strip_accents: remove diacritics from items (how: ``accent_removal``).
        min_coverage: per-set fraction of items that must be in the vocabulary.
        equalize: ``none``, ``truncate`` or ``subsample`` (set sizes after OOV removal).
        strict: stop at the first test with too low coverage instead of skipping it.
        allow_pickle: permit pickle-based formats (gensim ``.kv``).
        fasttext_oov: build vectors for OOV words from fastText ``.bin`` sub-words.
        accent_removal: ``marks`` (drop combining marks) or ``transliterate`` (``unidecode``,
            the CA-WEAT code): how ``strip_accents`` removes accents.
        duplicates: ``drop`` an item repeated within a set (first occurrence kept) or ``keep``
            every occurrence (the CA-WEAT and XWEAT code).
        invisible: ``drop`` or ``keep`` invisible marks such as U+200E (the CA-WEAT code keeps).
        compat: the reference tool whose conventions the builder applied
            (:func:`weatkit.config.run.with_compat`); the manifest and the CLI report its values
            and the options given instead.
        engine: statistics options (ddof, resamples, seed, device, ...).
        contextual: how ``hf:`` models are encoded (pooling, template, dtype, device, ...).
        isomorphism: a reference language (e.g. ``"en"``): add the isomorphism measures of
            every language's space to it (summary columns ``iso_<measure>``) and their
            correlation with effect sizes across languages.
        iso: which isomorphism measures, on how many words.
        iso_words: word-list path with ``{lang}`` (each language's vocabulary), needed for
            spaces shared by all languages (joint multilingual files, contextual models).
        pool: levels of a random-effects pooling of d (``lists``, ``languages``, ``layers``:
            :func:`weatkit.report.tables.pooled_frame`), written as the ``pooled`` table, and
            of the association metrics (``association_pooled``); needs the bootstrap (each
            statistic's variance is its bootstrap SE squared). ``pool``, ``engine.influence``
            and ``engine.null`` apply to the metrics that take them
            (:data:`weatkit.association.options.CANNOT_TAKE`).
        metrics: what is computed on every test (:data:`weatkit.association.options.METRICS`):
            ``weat`` (the engine: ``results``, ``summary``) and the association metrics
            (``association``, ``association_items``: :mod:`weatkit.association.query`).
        association: how the association metrics are computed (the papers' conventions, or
            WEFE's with ``compat="wefe"``).
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
    accent_removal: str = "marks"
    duplicates: str = "drop"
    invisible: str = "drop"
    compat: str | None = None
    engine: EngineOptions = field(default_factory=EngineOptions)
    contextual: ContextualOptions = field(default_factory=ContextualOptions)
    isomorphism: str | None = None
    iso: IsoOptions = field(default_factory=IsoOptions)
    iso_words: str | None = None
    pool: tuple[str, ...] = ()
    metrics: tuple[str, ...] = DEFAULT_METRICS
    association: AssociationOptions = field(default_factory=AssociationOptions)

    def __post_init__(self) -> None:
        """:class:`ConfigError` naming the field of a coverage, equalisation, pooling or metric
        that cannot be."""
        if isinstance(self.min_coverage, bool) or not 0.0 <= self.min_coverage <= 1.0:
            raise ConfigError(
                f"must be between 0 and 1, got {self.min_coverage!r}", field="min_coverage"
            )
        if self.equalize not in EQUALIZE_MODES:
            raise ConfigError(
                f"must be one of {', '.join(EQUALIZE_MODES)}, got {self.equalize!r}",
                field="equalize",
            )
        self.normalization(lower=False, join_phrases=None)  # checks the normalisation fields
        if self.compat is not None:
            check_choice("compat", self.compat, tuple(COMPAT_PRESETS))
        for level in self.pool:
            if level not in POOL_LEVELS:
                raise ConfigError(
                    f"must be some of {', '.join(POOL_LEVELS)}, got {level!r}", field="pool"
                )
        if len(set(self.pool)) != len(self.pool):
            raise ConfigError(f"a level is given twice: {', '.join(self.pool)}", field="pool")
        if self.pool and self.engine.n_bootstrap == 0:
            raise ConfigError(
                "needs the bootstrap (each d's variance is its bootstrap SE squared); "
                "set n_bootstrap > 0",
                field="pool",
            )
        check_metrics(self.metrics)
        if "weat" not in self.metrics and self.isomorphism:
            raise ConfigError("isomorphism needs WEAT's d: add weat to them", field="metrics")
        for option in self.robustness:
            check_robustness(self.metrics, option)

    def compat_summary(self) -> dict[str, Any]:
        """What the ``compat`` preset set, for the manifest.

        Returns:
            ``{"preset": NAME, "applied": {option: value}, "given": {option: {"value": v,
            "preset": p}}, "line": "compat NAME: ..."}``: ``applied`` has the preset's options
            whose value the run uses, ``given`` those the user set to another value.
        """
        if self.compat is None:
            raise ValueError("config has no compat preset")
        preset = dict(COMPAT_PRESETS[self.compat])
        if self.association_metrics:  # their options, when the run computes them
            preset.update(COMPAT.get(self.compat, {}))

        def value_of(key: str) -> Any:
            if key in ENGINE_KEYS:
                return getattr(self.engine, key)
            return getattr(self.association if key in ASSOCIATION_KEYS else self, key)

        return preset_report(self.compat, preset, value_of)

    @property
    def robustness(self) -> tuple[str, ...]:
        """The robustness options the run asks for: some of ``influence``, ``null``, ``pool``
        (which metrics take each: :data:`weatkit.association.options.CANNOT_TAKE`)."""
        wanted = (self.engine.influence, self.engine.null, self.pool)
        return tuple(o for o, w in zip(("influence", "null", "pool"), wanted, strict=True) if w)

    @property
    def association_metrics(self) -> tuple[str, ...]:
        """The association metrics of :attr:`metrics` (all but ``weat``)."""
        return tuple(m for m in self.metrics if m != "weat")

    def normalization(self, *, lower: bool, join_phrases: str | None) -> Normalization:
        """The list normalisation of this run, with the case and phrase joining of one source."""
        return Normalization(
            lower=lower,
            strip_accents=self.strip_accents,
            join_phrases=join_phrases,
            accent_removal=self.accent_removal,
            duplicates=self.duplicates,
            invisible=self.invisible,
        )


@dataclass
class RunResult:
    """Tables and provenance of a run.

    Attributes:
        results: one row per embeddings × list × test (columns: see
            :data:`weatkit.report.tables.RESULT_COLUMNS`).
        summary: one row per embeddings × language × list set × test (CA-WEAT medians).
        skipped: tests not run: their keys, the reason (a set's coverage below
            ``min_coverage``, or ``cause`` ``"lists"``: two identical target sets) and every
            out-of-vocabulary item (``oov_items``).
        report: normalisation and list-selection notes.
        manifest: versions, configuration, seeds, input fingerprints, timings.
        isomorphism: measures per embeddings and language against the reference language
            (empty unless ``RunConfig.isomorphism``).
        correlations: effect size vs each measure across languages (see
            :func:`weatkit.isomorphism.across_languages.correlation_table`).
        pooled: random-effects pooling of d (empty unless ``RunConfig.pool``; see
            :func:`weatkit.report.tables.pooled_frame`).
        influence: every item's jackknife influence on d, one row per embeddings × list ×
            test × item (empty unless ``RunConfig.engine.influence``; columns
            :data:`weatkit.report.tables.INFLUENCE_COLUMNS`, :mod:`weatkit.engine.influence`).
        null: the null distributions of d, one row per embeddings × list × test × draw
            (empty unless ``RunConfig.engine.null``; columns
            :data:`weatkit.report.tables.NULL_COLUMNS`, :mod:`weatkit.engine.null`).
        association, association_items: the association metrics of ``RunConfig.metrics`` on
            every test (columns :data:`weatkit.report.tables.ASSOCIATION_COLUMNS` and
            :data:`~weatkit.report.tables.ASSOCIATION_ITEM_COLUMNS`; empty without them).
        skipped_metrics: the metrics not computed on a test: its keys, ``metric``, ``reason``
            (one line naming the metric and the test) and ``cause`` (the reason without the
            test).
        association_influence: every word's leave-one-out influence on each association row
            (empty unless ``RunConfig.engine.influence``; columns
            :data:`weatkit.report.tables.ASSOCIATION_INFLUENCE_COLUMNS`,
            :mod:`weatkit.association.influence`). With ``RunConfig.engine.null`` the
            ``association`` rows have their null's summary (:mod:`weatkit.association.null`).
        association_pooled: random-effects pooling of the association metrics' statistics
            (empty unless ``RunConfig.pool``; see
            :func:`weatkit.report.tables.association_pooled_frame`).
    """

    results: pd.DataFrame
    summary: pd.DataFrame
    skipped: list[dict[str, str]]
    report: list[str]
    manifest: dict[str, object]
    isomorphism: pd.DataFrame = field(default_factory=pd.DataFrame)
    correlations: pd.DataFrame = field(default_factory=pd.DataFrame)
    pooled: pd.DataFrame = field(default_factory=pd.DataFrame)
    influence: pd.DataFrame = field(default_factory=pd.DataFrame)
    null: pd.DataFrame = field(default_factory=pd.DataFrame)
    association: pd.DataFrame = field(default_factory=pd.DataFrame)
    association_items: pd.DataFrame = field(default_factory=pd.DataFrame)
    skipped_metrics: list[dict[str, str]] = field(default_factory=list)
    association_influence: pd.DataFrame = field(default_factory=pd.DataFrame)
    association_pooled: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_tests_run(self) -> int:
        """The tests that ran: the rows of ``results``, or the tests measured by the association
        metrics alone when the run has no ``weat``."""
        if len(self.results):
            return len(self.results)
        keys = [*self.association.to_dict("records"), *self.skipped_metrics]
        return len({tuple(str(k[c]) for c in KEY_COLUMNS) for k in keys})

    def skipped_by_language(self) -> list[str]:
        """The skipped tests counted per embeddings × language (:func:`skipped_by_language`)."""
        config = self.manifest.get("config", {})
        min_coverage = config.get("min_coverage") if isinstance(config, dict) else None
        return skipped_by_language(self.results, self.skipped, min_coverage)


def skipped_by_language(
    results: pd.DataFrame,
    skipped: Sequence[Mapping[str, str]],
    min_coverage: float | None,
) -> list[str]:
    """Skipped tests counted per embeddings × language and reason, one line each (sorted).

    E.g. ``glove-6b-50d/en: 3 of 10 tests (2 of 5 lists), coverage below 80%`` (the tests of
    that language that were skipped, out of all its selected tests: those in ``results`` and
    those in ``skipped``, and the lists they belong to) or
    ``glove-6b-50d/de: all 48 tests (24 lists), coverage below 80%``. A test is skipped when a
    set's coverage is below ``min_coverage`` (``None``: "low coverage") or when its two target
    sets are identical (``cause`` ``lists``; counted on a line of its own, e.g.
    ``glove-6b-50d/en: 2 of 40 tests (1 of 3 lists), identical target sets``); every reason is
    in ``skipped`` and in the manifest. Used by ``weatkit run`` and ``weatkit grid``.

    Args:
        results: the tests that ran (``embeddings``, ``lang``, ``list_set``, ``list_id``,
            ``test``).
        skipped: the skipped tests, each with the same keys, a ``reason`` and maybe a ``cause``.
        min_coverage: the run's coverage threshold.
    """
    if not skipped:
        return []
    cause = (
        f"coverage below {100 * float(min_coverage):.0f}%"
        if min_coverage is not None
        else "low coverage"
    )
    ran: dict[tuple[str, str], set[tuple[str, str, str]]] = defaultdict(set)
    lists: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for row in results.itertuples(index=False):
        key = (str(row.embeddings), str(row.lang))
        ran[key].add((str(row.list_set), str(row.list_id), str(row.test)))
        lists[key].add((str(row.list_set), str(row.list_id)))
    by_reason: dict[tuple[str, str, str], list[Mapping[str, str]]] = defaultdict(list)
    n_skipped: dict[tuple[str, str], int] = defaultdict(int)
    for skip in skipped:
        key = (str(skip["embeddings"]), str(skip["lang"]))
        why = IDENTICAL_TARGETS if skip.get("cause") == "lists" else cause
        by_reason[(*key, why)].append(skip)
        n_skipped[key] += 1
        lists[key].add((str(skip["list_set"]), str(skip["list_id"])))
    lines = []
    for embeddings, lang, why in sorted(by_reason):
        key = (embeddings, lang)
        group = by_reason[(embeddings, lang, why)]
        n_lists = len({(s["list_set"], s["list_id"]) for s in group})
        if ran[key] or len(group) < n_skipped[key]:
            count = f"{len(group)} of {n_skipped[key] + len(ran[key])} tests"
            count += f" ({n_lists} of {len(lists[key])} lists)"
        else:
            count = f"all {len(group)} tests ({n_lists} list{'s' * (n_lists != 1)})"
        lines.append(f"{embeddings}/{lang}: {count}, {why}")
    return lines


def skipped_metric_lines(skipped: Sequence[Mapping[str, str]], verbose: bool = False) -> list[str]:
    """The metrics skipped on tests (:attr:`RunResult.skipped_metrics`), one line per metric and
    cause (``ripa on 10 test(s): no definitional pairs (...)``), or every reason with
    ``verbose``."""
    if verbose:
        return [s["reason"] for s in skipped]
    tests: dict[tuple[str, str], set[tuple[str, ...]]] = defaultdict(set)
    for s in skipped:
        tests[(s["metric"], s["cause"])].add(tuple(str(s[c]) for c in KEY_COLUMNS))
    return [f"{metric} on {len(keys)} test(s): {cause}" for (metric, cause), keys in tests.items()]


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

    def fasttext_bin(self, lang: str) -> bool:
        """Whether the file of ``lang`` is a fastText ``.bin`` model (sub-word vectors)."""
        if self.spec is None or self.contextual or self.spec.is_default:
            return False
        return detect_format(self.spec.path_for(lang), self.spec.fmt) == "fasttext-bin"

    def load(
        self,
        lang: str,
        words: set[str],
        config: RunConfig,
        extractors: ExtractorPool,
        files: LoadedFiles,
        show_progress: bool | None,
        first_n: int = 0,
    ) -> WordVectors:
        if self.vectors is not None:
            return self.vectors
        assert self.spec is not None
        return files.load(
            self.spec,
            lang,
            words=sorted(words),
            first_n=0 if self.contextual else first_n,
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
            info["fingerprint"] = {"path": wv.source, **content_fingerprint(wv.source)}
        return info


@dataclass
class _Job:
    source: _Source
    covered: CoveredTest
    vectors: WordVectors | None = None  # the loaded space, for the association metrics
    null: NullSample | None = None  # the null's draws, for the association metrics' null


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
        allow_empty: return empty tables instead of raising when every test is skipped.

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
    nulls: dict[int, np.ndarray] = {}  # job position -> null d's (engine.null)
    null_spaces: list[dict[str, object]] = []
    unrunnable: dict[Normalization, list[tuple[AssociationTest, str]]] = {}
    extractors = extractors or ExtractorPool()
    files = LoadedFiles()  # a file named by several entries is read once
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
        report += _casing_notes(spec, config)
        skipped += [
            {**_keys(spec.name, test), "reason": reason, "oov_items": "", "cause": "lists"}
            for test, reason in unrunnable[norm]
        ]
        t0 = time.perf_counter()
        loaded = _load_for_tests(spec, selections[norm], config, extractors, files, show_progress)
        for wv, tests in loaded:
            inputs.append(spec.describe(wv))
            first_job = len(jobs)
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
                    if not config.fasttext_oov and spec.fasttext_bin(test.lang):
                        err = CoverageError(f"{err}; {FASTTEXT_OOV_HINT}")
                        hint = f"{spec.name}: tests below coverage; {FASTTEXT_OOV_HINT}"
                        report += [hint] if hint not in report else []
                    if config.strict:
                        raise err from None
                    skipped.append(
                        {**_keys(spec.name, test), "reason": str(err), "oov_items": _oov(test, wv)}
                    )
                    continue
                jobs.append(_Job(spec, covered, wv if config.association_metrics else None))
            if config.engine.null:
                t1 = time.perf_counter()
                new = dict(enumerate(jobs[first_job:], start=first_job))
                null_spaces += _null_baselines(spec, wv, new, config, extractors, nulls, report)
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
            WeatInput(*(j.covered.vectors[k] for k in SET_KEYS), label=_label(j)) for j in jobs
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
            _association_tables(jobs, config, show_progress)
        )
        timings["association"] = round(time.perf_counter() - t0, 3)
        report += [
            f"{option}: not for {why}"
            for option in config.robustness
            for why in check_robustness(config.metrics, option)
        ]

    rows = [
        {**_result_row(j, r), **_null_columns(nulls.get(i), r, config.engine)}
        for i, (j, r) in enumerate(zip(jobs if results else [], results, strict=True))
    ]
    results_df = results_frame(rows)
    influence_df = pd.DataFrame()
    if config.engine.influence and results:
        influence_df = _influence_table(jobs, results)
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
    timings["total"] = round(time.perf_counter() - started, 3)
    manifest = _manifest(config, device, sources, inputs, skipped, report, timings)
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
        influence_df, _null_table(jobs, nulls), association, association_items, skipped_metrics,
        association_influence, association_pooled,
    )


def layer_models(specs: Iterable[EmbeddingsSpec]) -> dict[str, tuple[str, int]]:
    """Embeddings name → (model, layer) for the layers of ``hf:`` models, the ``layers`` level
    of :func:`weatkit.report.tables.pooled_frame`.

    The specs of one model are those with the same location and extraction options; the model
    is named by the names' common part before ``@LAYER`` (``XLM-R`` for ``XLM-R@0`` and
    ``XLM-R@-2``), else by its location without ``hf:``.
    """
    groups: dict[tuple[str, object], list[EmbeddingsSpec]] = defaultdict(list)
    for spec in specs:
        if spec.is_contextual and spec.layer is not None:
            groups[(spec.location, spec.contextual)].append(spec)
    out: dict[str, tuple[str, int]] = {}
    for (location, _), members in groups.items():
        bases = {m.name.removesuffix(f"@{m.layer}") for m in members}
        suffixed = all(m.name.endswith(f"@{m.layer}") for m in members)
        model = bases.pop() if suffixed and len(bases) == 1 else location.removeprefix(HF_PREFIX)
        out.update({m.name: (model, int(m.layer)) for m in members if m.layer is not None})
    return out


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
    files: LoadedFiles,
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
        first_n = N_CANDIDATES if config.engine.null else 0  # the null's candidate rows
        wv = spec.load(
            lang or group[0].lang, words, config, extractors, files, show_progress, first_n
        )
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


def _oov(test: AssociationTest, wv: WordVectors) -> str:
    """Every out-of-vocabulary item of ``test`` as ``SET:item`` (the ``oov_items`` format of
    ``results.csv``): a skipped test's reason names only the first few."""
    sets = test.sets()
    return " ".join(
        f"{k}:{w}" for k in SET_KEYS for w in dict.fromkeys(sets[k]) if w not in wv
    )


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
        "effect_size_se": np.nan if res.effect_size_se is None else res.effect_size_se,
        "p_value": np.nan if res.pvalue is None else res.pvalue,
        "sign_stability": np.nan if res.sign_stability is None else res.sign_stability,
        "permutation_method": res.permutation_method or "",
        "n_permutations": res.n_permutations,
        "oov_items": " ".join(missing),
    }


def _association_tables(
    jobs: Sequence[_Job], config: RunConfig, show_progress: bool | None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[dict[str, str]]]:
    """The association metrics of ``config.metrics`` on every test
    (:func:`weatkit.association.query.measure_query`): the ``association``,
    ``association_items`` and ``association_influence`` tables and the metrics skipped, with
    the tests' keys."""
    rows: list[dict[str, object]] = []
    items: list[dict[str, object]] = []
    influence: list[dict[str, object]] = []
    skipped: list[dict[str, str]] = []
    bar = progress(total=len(jobs), desc="association metrics", unit="test", show=show_progress)
    with bar:
        for job in jobs:
            assert job.vectors is not None
            covered = job.covered
            keys = _keys(job.source.name, covered.test)
            t = covered.test
            query = Query(
                label=f"{t.test} ({t.list_set}, list {t.list_id}, {t.lang}) on {job.source.name}",
                sets=covered.items,
                pairs=t.pairs,
                vectors=job.vectors,
                min_coverage=config.min_coverage,
                null=job.null,
            )
            measured = measure_query(query, config.metrics, config.association, config.engine)
            rows += [{**keys, **row} for row in measured.rows]
            items += [{**keys, **item} for item in measured.items]
            influence += [{**keys, **row} for row in measured.influence]
            skipped += [
                {**keys, "metric": s.metric, "reason": s.reason, "cause": s.cause}
                for s in measured.skipped
            ]
            bar.update(1)
    table, item_table = association_frames(rows, items)
    influence_table = pd.DataFrame(influence, columns=ASSOCIATION_INFLUENCE_COLUMNS)
    return table, item_table, influence_table, skipped


def _influence_table(jobs: Sequence[_Job], results: Sequence[WeatResult]) -> pd.DataFrame:
    """The influence rows of every test (:data:`~weatkit.report.tables.INFLUENCE_COLUMNS`)."""
    rows = []
    for job, res in zip(jobs, results, strict=True):
        assert res.influence is not None
        keys = tuple(_keys(job.source.name, job.covered.test).values())
        items = influence_rows(res.influence, res.effect_size, job.covered.items)
        rows += [(*keys, *row) for row in items]
    return pd.DataFrame(rows, columns=INFLUENCE_COLUMNS)


def _casing_notes(spec: _Source, config: RunConfig) -> list[str]:
    """The note on how items of ``spec``'s uncased vocabulary are cased, if it is uncased."""
    if not spec.uncased:
        return []
    if config.lower is None:
        note = f"{spec.name}: items lower-cased because the embeddings are uncased"
        if config.compat:
            note += f" (compat {config.compat} leaves casing to the embeddings)"
        return [note]
    if not config.lower:
        return [
            f"{spec.name}: items looked up as written (lower=false) but the embeddings are "
            "uncased: capitalised items such as names are missing; --lower lower-cases them"
        ]
    return []


def _null_baselines(
    spec: _Source,
    wv: WordVectors,
    jobs: dict[int, _Job],
    config: RunConfig,
    extractors: ExtractorPool,
    nulls: dict[int, np.ndarray],
    report: list[str],
) -> list[dict[str, object]]:
    """The null d's of the tests of one loaded space (``engine.null``), per language, into
    ``nulls`` (with ``weat``), their draws into the jobs (for the association metrics); what
    the manifest records of each candidate vocabulary."""
    by_lang: dict[str, dict[int, _Job]] = defaultdict(dict)
    for i, job in jobs.items():
        by_lang[job.covered.test.lang][i] = job
    spaces = []
    engine = config.engine
    for lang, group in sorted(by_lang.items()):
        try:
            if spec.contextual:
                assert spec.spec is not None
                candidates = wordfreq_candidates(lang)

                def embed(words: list[str], lang: str = lang) -> WordVectors:
                    assert spec.spec is not None
                    return load_embeddings(spec.spec, lang, words=words, extractors=extractors)
            else:
                candidates = candidates_from_words(wv.words, lang)

                def embed(words: list[str]) -> WordVectors:
                    return wv
        except WeatkitError as err:
            report.append(f"null baseline: {spec.name}/{lang}: not computed: {err}")
            continue
        tests = [(_label(j), j.covered.items) for j in group.values()]
        drawn = null_samples(tests, candidates, embed, n_draws=engine.null, seed=engine.seed)
        for (i, job), sample in zip(group.items(), drawn, strict=True):
            A, B = job.covered.vectors["A"], job.covered.vectors["B"]
            if "weat" in config.metrics:
                nulls[i] = null_d_of(
                    sample, A, B, metric=engine.metric, csls_k=engine.csls_k, ddof=engine.ddof,
                    device=engine.device,
                )
            job.null = sample if config.association_metrics else None
        spaces.append({"embeddings": spec.name, "lang": lang, **candidates.describe()})
    return spaces


def _null_columns(
    null_d: np.ndarray | None, res: WeatResult, engine: EngineOptions
) -> dict[str, float]:
    """``null_mean`` ... ``null_k`` of one test (NaN without a null baseline)."""
    if null_d is None:
        return dict(NO_NULL)
    return summarize_null(null_d, res.effect_size, engine.alternative).columns()


def _null_table(jobs: Sequence[_Job], nulls: dict[int, np.ndarray]) -> pd.DataFrame:
    """Every null d (:data:`~weatkit.report.tables.NULL_COLUMNS`), draws numbered from 1."""
    frames = []
    for i, null_d in sorted(nulls.items()):
        keys = _keys(jobs[i].source.name, jobs[i].covered.test)
        frame = pd.DataFrame({"draw": np.arange(1, len(null_d) + 1), "d": null_d})
        frames.append(frame.assign(**keys))
    if not frames:
        return pd.DataFrame(columns=NULL_COLUMNS)
    return pd.concat(frames, ignore_index=True)[NULL_COLUMNS]


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
