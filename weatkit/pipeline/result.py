"""The tables of a run (:class:`RunResult`) and the lines that count what it skipped."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from weatkit.lists.normalize import IDENTICAL_TARGETS
from weatkit.report.tables import KEY_COLUMNS


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
        reliability: split-half r_SB and ICC(2,1)/ICC(2,k) across the parallel lists of each
            language × list set × test, the embeddings as units (empty unless some test has
            2 lists scored by 3 embeddings; :mod:`weatkit.pipeline.reliability`, columns
            :data:`weatkit.validity.RELIABILITY_COLUMNS`).
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
    reliability: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_tests_run(self) -> int:
        """The tests that ran: the rows of ``results``, or, when the run has no ``weat``, the
        tests on which some association metric was computed."""
        if len(self.results):
            return len(self.results)
        return len(_tests(self.association.to_dict("records")))

    @property
    def n_tests_skipped(self) -> int:
        """The tests that did not run: those of ``skipped`` and, when the run has no ``weat``,
        those on which every association metric was skipped (``skipped_metrics``)."""
        unmeasured = set() if len(self.results) else _tests(self.skipped_metrics)
        unmeasured -= _tests(self.association.to_dict("records"))
        return len(self.skipped) + len(unmeasured)

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


def _tests(rows: Sequence[Mapping[str, object]]) -> set[tuple[str, ...]]:
    """The tests rows belong to (their :data:`~weatkit.report.tables.KEY_COLUMNS`)."""
    return {tuple(str(row[c]) for c in KEY_COLUMNS) for row in rows}


def skipped_metric_lines(skipped: Sequence[Mapping[str, str]], verbose: bool = False) -> list[str]:
    """The metrics skipped on tests (:attr:`RunResult.skipped_metrics`), one line per metric and
    cause (``ripa on 10 test(s): no definitional pairs (...)``), or every reason with
    ``verbose``."""
    if verbose:
        return [s["reason"] for s in skipped]
    tests: dict[tuple[str, str], set[tuple[str, ...]]] = defaultdict(set)
    for s in skipped:
        tests[(s["metric"], s["cause"])] |= _tests([s])
    return [f"{metric} on {len(keys)} test(s): {cause}" for (metric, cause), keys in tests.items()]
