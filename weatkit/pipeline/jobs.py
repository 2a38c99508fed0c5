"""Embeddings sources and the test jobs a run makes of them: one :class:`Job` per embeddings ×
list × test that passed coverage, with its keys and its ``results`` row."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from weatkit._io.fingerprint import content_fingerprint
from weatkit.embeddings.contextual import ContextualOptions, ExtractorPool
from weatkit.embeddings.coverage import CoveredTest, cover_test
from weatkit.embeddings.run_cache import LoadedFiles
from weatkit.embeddings.spec import EmbeddingsSpec, parse_embeddings_specs
from weatkit.embeddings.static import detect_format
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.null import N_CANDIDATES, NullSample
from weatkit.engine.weat import WeatResult
from weatkit.errors import ConfigError, WeatkitError
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.pipeline.run_config import RunConfig
from weatkit.progress import progress

if TYPE_CHECKING:  # pragma: no cover
    from gensim.models import KeyedVectors


@dataclass(frozen=True)
class Source:
    """One embeddings source: a spec to load per file, or vectors already in memory."""

    name: str
    spec: EmbeddingsSpec | None = None
    vectors: WordVectors | None = None

    @classmethod
    def expand(
        cls, entry: str | EmbeddingsSpec | WordVectors | KeyedVectors, contextual: ContextualOptions
    ) -> list[Source]:
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
        """Whether the source has one file per language (``{lang}`` in its path)."""
        return self.spec is not None and self.spec.per_language

    @property
    def uncased(self) -> bool:
        """Whether the source's vocabulary is lower-cased."""
        return self.spec is not None and self.spec.uncased

    @property
    def contextual(self) -> bool:
        """Whether the source is a transformer model (``hf:``)."""
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
        """The vectors of ``words`` in the file of ``lang`` (and its first ``first_n`` rows), or
        the vectors in memory."""
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
        """What the manifest records of the loaded ``wv`` (``embeddings`` entries)."""
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
class Job:
    """One test of one source that passed coverage, run by the engine and the metrics."""

    source: Source
    covered: CoveredTest
    vectors: WordVectors | None = None  # the loaded space, for the association metrics
    null: NullSample | None = None  # the null's draws, for the association metrics' null


@dataclass
class CoverOnce:
    """:func:`~weatkit.embeddings.coverage.cover_test` once per test and loaded vectors of a run.

    Entries naming the same file get the same vectors (:class:`LoadedFiles`), so their tests
    are covered alike: the first covering is kept (with the vectors and test it was made of,
    which keeps their ids from being reused) and each later one gets a copy of its rows. A test
    below coverage is covered again each time (its error names the entry).
    """

    done: dict[tuple[int, int], tuple[CoveredTest, WordVectors, AssociationTest]] = field(
        default_factory=dict
    )

    def cover(
        self,
        test: AssociationTest,
        wv: WordVectors,
        *,
        min_coverage: float,
        equalize: str,
        seed: int,
    ) -> CoveredTest:
        """``cover_test(test, wv, ...)``; the options are the run's, the same at every call."""
        key = (id(wv.vectors), id(test))
        if key in self.done and self.done[key][1].words is wv.words:
            covered = self.done[key][0]
            return replace(covered, vectors={k: v.copy() for k, v in covered.vectors.items()})
        covered = cover_test(test, wv, min_coverage=min_coverage, equalize=equalize, seed=seed)
        self.done[key] = (covered, wv, test)
        return covered


def check_unique_names(specs: Sequence[Source]) -> None:
    """:class:`ConfigError` when two sources have the same name."""
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise ConfigError(
                f"two are named {spec.name!r}: give them distinct names (NAME=PATH)",
                field="embeddings",
            )
        seen.add(spec.name)


def load_for_tests(
    spec: Source,
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


def row_keys(name: str, test: AssociationTest) -> dict[str, str]:
    """The key columns of a row of ``test`` on the embeddings ``name``."""
    return {
        "embeddings": name,
        "lang": test.lang,
        "list_set": test.list_set,
        "list_id": test.list_id,
        "test": test.test,
    }


def oov_items(test: AssociationTest, wv: WordVectors) -> str:
    """Every out-of-vocabulary item of ``test`` as ``SET:item`` (the ``oov_items`` format of
    ``results.csv``): a skipped test's reason names only the first few."""
    sets = test.sets()
    return " ".join(
        f"{k}:{w}" for k in SET_KEYS for w in dict.fromkeys(sets[k]) if w not in wv
    )


def job_label(job: Job) -> str:
    """``NAME LIST_SET LIST_ID TEST``: how errors and the engine name a job."""
    t = job.covered.test
    return f"{job.source.name} {t.list_set} {t.list_id} {t.test}"


def result_row(job: Job, res: WeatResult) -> dict[str, object]:
    """The ``results`` row of one job (without the null's columns)."""
    covered = job.covered
    missing = [f"{k}:{w}" for k in SET_KEYS for w in covered.missing[k]]
    stat_ci = res.statistic_ci or (np.nan, np.nan)
    eff_ci = res.effect_size_ci or (np.nan, np.nan)
    return {
        **row_keys(job.source.name, covered.test),
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


def casing_notes(spec: Source, config: RunConfig) -> list[str]:
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
