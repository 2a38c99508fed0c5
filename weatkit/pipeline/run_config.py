"""The options of a run (:class:`RunConfig`), checked when built."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from weatkit.association.options import (
    ASSOCIATION_KEYS,
    COMPAT,
    DEFAULT_METRICS,
    AssociationOptions,
    check_metrics,
    check_robustness,
)
from weatkit.compat_report import preset_report
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.coverage import EQUALIZE_MODES
from weatkit.embeddings.spec import EmbeddingsSpec
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.compat import COMPAT_PRESETS, CONTEXTUAL_KEYS, ENGINE_KEYS
from weatkit.engine.weat import EngineOptions
from weatkit.errors import ConfigError
from weatkit.isomorphism.measures import IsoOptions
from weatkit.lists.normalize import Normalization, check_choice
from weatkit.report.tables import POOL_LEVELS

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
        reliability: the ``reliability`` table across the parallel lists of each language
            (:mod:`weatkit.pipeline.reliability`); off by default (its bootstrap over the
            embeddings costs about 0.5 s per language × test of the CA-WEAT paper grid).
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
    reliability: bool = False
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
            if key in CONTEXTUAL_KEYS:
                return getattr(self.contextual, key)
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
