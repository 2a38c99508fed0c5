"""GEST (Pikuliak et al. 2023) and EuroGEST (Rowe et al. 2025) as registered measures:
``gest:g_s`` (English) and ``eurogest:g_s`` (29 European languages; a different g_s formula)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_SEED,
    GestSummary,
    aggregate_by_template,
)
from weatkit.measures.result import MeasureResult, on_sample

if TYPE_CHECKING:
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.stats.sampling import ItemSample


@dataclass(frozen=True)
class GestResult:
    """What :func:`gest` computed.

    Attributes:
        scores: one row per (template, sample) scored: ``sample_id, template`` (from a model),
            ``sentence, stereotype, score, skipped``.
        summary: the native :class:`~weatkit.gest.aggregate.GestSummary`, one row per template
            (a leading ``template`` column when the scores have one).
        measures: ``gest:g_s`` (EuroGEST: ``eurogest:g_s``) as one
            :class:`~weatkit.measures.result.MeasureResult` (:func:`gest_measures`).
        notes: what a user must know about the data (EuroGEST: the coinciding forms handled).
        sample: with ``limit``, the sample of samples (EuroGEST: items) scored
            (:class:`~weatkit.stats.sampling.ItemSample`), else None.
    """

    scores: pd.DataFrame
    summary: GestSummary
    measures: list[MeasureResult] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    sample: ItemSample | None = None


def gest_measures(summary: GestSummary, *, source: str, lang: str = "en") -> list[MeasureResult]:
    """``gest:g_s`` of a (per-template) GEST summary.

    With several templates the value is the mean of their g_s, without an interval; with one
    template it is that template's g_s and its bootstrap interval. ``n`` is the number of
    scored samples over all templates.
    """
    table = summary.summary
    if table.empty:
        raise WeatkitError(f"{source}: no GEST template scored")
    g_s = float(np.mean(table["g_s"].to_numpy(dtype=np.float64)))
    n = int(sum(int(v) for v in table["n_samples"]))
    single = len(table) == 1
    row = table.iloc[0]
    low, high = (float(row["g_s_ci_low"]), float(row["g_s_ci_high"])) if single else (np.nan,) * 2
    has_ci = not (math.isnan(low) or math.isnan(high))
    if "template" in table.columns:
        templates = ", ".join(str(t) for t in table["template"])
        method = f"template {templates}" if single else f"mean over templates {templates}"
    else:
        method = "scores"
    if has_ci:
        method += "; percentile bootstrap per stereotype"
    return [
        MeasureResult(
            "gest:g_s",
            source,
            lang,
            g_s,
            low,
            high,
            float(row["ci_level"]) if has_ci else math.nan,
            n,
            method,
        )
    ]


def gest(
    model: str | None = None,
    *,
    scores: pd.DataFrame | str | os.PathLike[str] | None = None,
    kind: str | None = None,
    templates: Sequence[int] | None = None,
    version: str = "1.0",
    log_base: str = "10",
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
    name: str | None = None,
    lang: str = "en",
    code: str = "2025-12",
    coinciding: str = "other",
    limit: int | None = None,
) -> GestResult:
    """GEST stereotype rate of a language model, or of per-sample scores.

    For sample j of stereotype i under template t (Pikuliak et al. 2023, §4.2)::

        s_j = log_b P(w_m | t(s_j)) − log_b P(w_f | t(s_j))
        q_i = exp(mean_{j ∈ i} s_j)
        g_s = q_m / q_f,  q_f = (Π_{i=1..7} q_i)^{1/7},  q_m = (Π_{i=8..16} q_i)^{1/9}

    g_s = 1 is neutral; g_s > 1: the male stereotypes are more masculine than the female ones
    (stereotypical). Per-template summaries come from
    :func:`weatkit.gest.aggregate.aggregate_by_template` (percentile bootstrap per
    stereotype); the measure is their mean (:func:`gest_measures`).

    Args:
        model: hub id or local directory of a masked or causal LM (scores every template, or
            ``templates``). Give ``model`` or ``scores``.
        scores: per-sample scores instead: a table with ``stereotype`` and ``score`` (optional
            ``template``, ``sentence``), or a scores CSV or upstream prediction file
            (:func:`weatkit.gest.data.read_scores`).
        kind: ``"mlm"`` or ``"glm"``; None decides from the model's config.
        templates: template ids (paper Table 2) to score; None: all of the kind's.
        version: GEST data version.
        log_base: ``"10"`` (upstream convention) or ``"e"``.
        n_bootstrap, seed, confidence_level: the percentile bootstrap (0: no interval).
        options: model loading options.
        show_progress: progress bar (None: when on a terminal).
        name: the source name in :attr:`GestResult.measures` (default ``model`` or
            ``"scores"``).
        lang: ``"en"`` (GEST) or an ISO code of the 29 EuroGEST languages (Rowe et al. 2025;
            :func:`eurogest`): then ``model`` is required and ``templates``, ``version`` and
            ``log_base`` do not apply.
        code: EuroGEST upstream code version (``2025-12`` default, ``2026-04``, ``2025-08``;
            :data:`weatkit.gest.eurogest.CODE`).
        coinciding: EuroGEST items whose masculine and feminine strings coincide: ``other``
            (the language's other template), ``refuse`` (error) or ``keep`` (r = 0.5).
        limit: score a sample of this many samples (EuroGEST: items), stratified by stereotype
            and drawn with ``seed`` (:func:`weatkit.gest.data.sample_gest`); with ``model``.

    Citation:
        Pikuliak, Hrckova, Oresko & Simko (2023), arXiv:2311.18711.

    Example:
        >>> import pandas as pd
        >>> table = pd.DataFrame({"stereotype": [i for i in range(1, 17) for _ in (0, 1)],
        ...                       "score": [0.0, 0.2] * 7 + [0.3, 0.5] * 9})
        >>> round(gest(scores=table, n_bootstrap=0).measures[0].value, 4)  # exp(0.4 − 0.1)
        1.3499
    """
    if (model is None) == (scores is None):
        raise WeatkitError("give a model or a scores table, not both or neither")
    if model is None and limit is not None:
        raise WeatkitError("limit is for a model; scores are already computed")
    if str(lang).strip().lower() != "en":
        if model is None:
            raise WeatkitError(f"EuroGEST ({lang}) scores a model: give model, not scores")
        return eurogest(
            model,
            lang=lang,
            code=code,
            coinciding=coinciding,
            kind=kind,
            n_bootstrap=n_bootstrap,
            seed=seed,
            confidence_level=confidence_level,
            options=options,
            show_progress=show_progress,
            name=name,
            limit=limit,
        )
    sample = None
    if model is not None:
        from weatkit.gest.data import load_gest, sample_gest
        from weatkit.gest.scoring import score_gest

        samples, sample = sample_gest(load_gest(version), limit, seed)
        table = score_gest(
            model,
            samples,
            kind=kind,
            templates=templates,
            log_base=log_base,
            options=options,
            show_progress=show_progress,
        )
    elif isinstance(scores, pd.DataFrame):
        table = scores
    else:
        from weatkit.gest.data import read_scores

        table = read_scores(scores, version)
    summary = aggregate_by_template(
        table,
        log_base=log_base,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence_level=confidence_level,
    )
    source = name or (str(model) if model is not None else "scores")
    measures = on_sample(gest_measures(summary, source=source), sample)
    return GestResult(table, summary, measures, sample=sample)


def eurogest(
    model: str,
    *,
    lang: str,
    code: str = "2025-12",
    coinciding: str = "other",
    kind: str | None = None,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
    name: str | None = None,
    limit: int | None = None,
) -> GestResult:
    """EuroGEST stereotype rate of a language model in one of 29 languages (Rowe et al. 2025)::

        r_j = exp(S_m) / (exp(S_m) + exp(S_f)),   R_s = mean_{j ∈ s} r_j
        g_s = mean(R_8 … R_16) / mean(R_1 … R_7)

    S is the sequence score of the masculine / feminine string as the upstream ``code`` version
    normalises it (:mod:`weatkit.gest.eurogest_scoring`); items, templates and the coinciding
    forms: :mod:`weatkit.gest.eurogest`; metrics and bootstrap:
    :mod:`weatkit.gest.eurogest_metrics`. The measure is ``eurogest:g_s`` in ``lang`` (not
    ``gest:g_s``: the formula differs, :mod:`weatkit.measures.registry`). ``limit``: a sample
    of that many items stratified by stereotype, drawn with ``seed``, each stereotype keeping
    the items the code version needs (:func:`weatkit.gest.eurogest_metrics.least_items`).

    Citation:
        Rowe, Klimaszewski, Guillou, Vallor & Birch (2025), EuroGEST, EMNLP 2025,
        arXiv:2506.03867.
    """
    from weatkit.gest.eurogest import eurogest_items
    from weatkit.gest.eurogest_metrics import eurogest_summary, least_items
    from weatkit.gest.eurogest_scoring import score_items
    from weatkit.stats.sampling import sample_rows

    built = eurogest_items(lang, code, coinciding)
    items, sample = sample_rows(
        built.items, limit, seed, id_column="sample_id", stratum_column="stereotype",
        by="stereotype", unit="items", least=least_items(code),
    )  # fmt: skip
    scored = score_items(
        model,
        items,
        code=code,
        kind=kind,
        options=options,
        show_progress=show_progress,
        keep_identical=coinciding == "keep",
    )
    summary = eurogest_summary(
        scored,
        lang=built.lang,
        code=code,
        n_coinciding=built.n_coinciding,
        coinciding=coinciding,
        n_bootstrap=n_bootstrap,
        seed=seed,
        confidence_level=confidence_level,
    )
    row = summary.summary.iloc[0]
    low, high = float(row["g_s_ci_low"]), float(row["g_s_ci_high"])
    has_ci = not (math.isnan(low) or math.isnan(high))
    method = f"EuroGEST code {code}"
    if has_ci:
        method += "; percentile bootstrap per stereotype"
    measure = MeasureResult(
        "eurogest:g_s",
        name or str(model),
        built.lang,
        float(row["g_s"]),
        low,
        high,
        confidence_level if has_ci else math.nan,
        int(row["n_items"]),
        method,
    )
    notes = (built.note,) if built.note else ()
    return GestResult(scored, summary, on_sample([measure], sample), notes, sample)
