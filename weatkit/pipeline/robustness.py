"""The robustness tables of a run: the null baselines of d (``engine.null``), every item's
influence on d (``engine.influence``) and the layers pooled across (``pool``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.spec import HF_PREFIX, EmbeddingsSpec, load_embeddings
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.influence import influence_rows
from weatkit.engine.null import (
    NO_NULL,
    candidates_from_words,
    null_d_of,
    null_samples,
    summarize_null,
    wordfreq_candidates,
)
from weatkit.engine.weat import EngineOptions, WeatResult
from weatkit.errors import WeatkitError
from weatkit.pipeline.jobs import Job, Source, job_label, row_keys
from weatkit.pipeline.run_config import RunConfig
from weatkit.report.tables import INFLUENCE_COLUMNS, NULL_COLUMNS


def influence_table(jobs: Sequence[Job], results: Sequence[WeatResult]) -> pd.DataFrame:
    """The influence rows of every test (:data:`~weatkit.report.tables.INFLUENCE_COLUMNS`)."""
    rows = []
    for job, res in zip(jobs, results, strict=True):
        assert res.influence is not None
        keys = tuple(row_keys(job.source.name, job.covered.test).values())
        items = influence_rows(res.influence, res.effect_size, job.covered.items)
        rows += [(*keys, *row) for row in items]
    return pd.DataFrame(rows, columns=INFLUENCE_COLUMNS)


def null_baselines(
    spec: Source,
    wv: WordVectors,
    jobs: dict[int, Job],
    config: RunConfig,
    extractors: ExtractorPool,
    nulls: dict[int, np.ndarray],
    report: list[str],
) -> list[dict[str, object]]:
    """The null d's of the tests of one loaded space (``engine.null``), per language, into
    ``nulls`` (with ``weat``), their draws into the jobs (for the association metrics); what
    the manifest records of each candidate vocabulary."""
    by_lang: dict[str, dict[int, Job]] = defaultdict(dict)
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
        tests = [(job_label(j), j.covered.items) for j in group.values()]
        drawn = null_samples(tests, candidates, embed, n_draws=engine.null, seed=engine.seed)
        if "weat" in config.metrics:
            samples = [
                (sample, job.covered.vectors["A"], job.covered.vectors["B"])
                for job, sample in zip(group.values(), drawn, strict=True)
            ]
            null_d = null_d_of(
                samples, metric=engine.metric, csls_k=engine.csls_k, ddof=engine.ddof,
                device=engine.device,
            )
            nulls.update(zip(group, null_d, strict=True))
        for job, sample in zip(group.values(), drawn, strict=True):
            job.null = sample if config.association_metrics else None
        spaces.append({"embeddings": spec.name, "lang": lang, **candidates.describe()})
    return spaces


def null_columns(
    null_d: np.ndarray | None, res: WeatResult, engine: EngineOptions
) -> dict[str, float]:
    """``null_mean`` ... ``null_k`` of one test (NaN without a null baseline)."""
    if null_d is None:
        return dict(NO_NULL)
    return summarize_null(null_d, res.effect_size, engine.alternative).columns()


def null_table(jobs: Sequence[Job], nulls: dict[int, np.ndarray]) -> pd.DataFrame:
    """Every null d (:data:`~weatkit.report.tables.NULL_COLUMNS`), draws numbered from 1."""
    if not nulls:
        return pd.DataFrame(columns=NULL_COLUMNS)
    order = sorted(nulls)
    sizes = [len(nulls[i]) for i in order]
    keys = [row_keys(jobs[i].source.name, jobs[i].covered.test) for i in order]
    columns: dict[str, object] = {
        name: np.repeat(np.array([k[name] for k in keys], dtype=object), sizes)
        for name in keys[0]
    }
    columns["draw"] = np.concatenate([np.arange(1, n + 1) for n in sizes])
    columns["d"] = np.concatenate([nulls[i] for i in order])
    return pd.DataFrame(columns)[NULL_COLUMNS]


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
