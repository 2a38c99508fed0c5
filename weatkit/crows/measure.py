"""CrowS-Pairs (Nangia et al. 2020; AUL/AULA: Kaneko & Bollegala 2022; PLL-word-l2r: Kauf &
Ivanova 2023) as registered measures: ``crows:pll``, ``crows:pll-word-l2r``, ``crows:aul``,
``crows:aula`` of masked LMs and ``crows:sum``, ``crows:shared`` of causal LMs."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from weatkit.crows.data import CORRECTION_COLUMNS, OVERALL
from weatkit.crows.score import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_SEED,
    METHODS,
    crows_metric,
)
from weatkit.errors import WeatkitError
from weatkit.measures.compat import apply_preset
from weatkit.measures.result import MeasureResult, on_convention, on_sample
from weatkit.scoring.conventions import recording, summarize

if TYPE_CHECKING:
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.stats.sampling import ItemSample


@dataclass(frozen=True)
class CrowsResult:
    """What :func:`crows` computed.

    Attributes:
        pairs: one row per pair (:data:`weatkit.crows.score.PAIR_SCORE_COLUMNS` from a model,
            else the given table).
        summary: the native table of :func:`weatkit.crows.score.crows_metric`, ``overall``
            then each bias type.
        measures: ``crows:METHOD`` over all pairs (:func:`crows_measures`).
        corrections: what the loader corrected or dropped in the shipped pairs
            (:func:`weatkit.crows.data.crows_corrections`; empty for your own pairs or scores).
        controls: with ``controls=True``, the original and control scores per control kind and
            the "control as biased" flag (:func:`weatkit.crows.controls.control_summary`), else
            None.
        control_pairs: with ``controls=True``, the per-pair scores of the original pairs and
            then of the control pairs (a ``side`` column: ``original``/``control``), else None.
        sample: with ``limit``, the sample of pairs scored
            (:class:`~weatkit.stats.sampling.ItemSample`), else None.
        scoring_conventions: what a causal LM's scores included (``{model spec:
            {"first_token": "included" | "excluded" | …}}``, :mod:`weatkit.scoring.
            conventions`; a server's echo gives the first token none, so its ``sum`` is another
            measure than an ``hf:`` model's, and ``measures`` say so); empty otherwise.
    """

    pairs: pd.DataFrame
    summary: pd.DataFrame
    measures: list[MeasureResult] = field(default_factory=list)
    corrections: pd.DataFrame = field(default_factory=pd.DataFrame)
    controls: pd.DataFrame | None = None
    control_pairs: pd.DataFrame | None = None
    sample: ItemSample | None = None
    scoring_conventions: dict[str, dict[str, str]] = field(default_factory=dict)


def crows_measures(
    summary: pd.DataFrame,
    *,
    source: str,
    lang: str,
    method: str,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> list[MeasureResult]:
    """``crows:METHOD``: the ``overall`` row of a :func:`~weatkit.crows.score.crows_metric`
    table (metric, its bootstrap CI at ``confidence_level``, scored pairs)."""
    if method not in METHODS:
        raise WeatkitError(f"unknown CrowS-Pairs method {method!r}: choose {', '.join(METHODS)}")
    overall = summary[summary["bias_type"] == OVERALL].iloc[0]
    low, high = float(overall["ci_low"]), float(overall["ci_high"])
    has_ci = not (math.isnan(low) or math.isnan(high))
    return [
        MeasureResult(
            f"crows:{method}",
            source,
            lang,
            float(overall["metric"]),
            low,
            high,
            confidence_level if has_ci else math.nan,
            int(overall["n"]),
            "percentile bootstrap over pairs" if has_ci else "",
        )
    ]


def crows(
    model: str | None = None,
    *,
    pairs: pd.DataFrame | str | os.PathLike[str] | None = None,
    lang: str = "en",
    data: str | os.PathLike[str] = "original",
    controls: bool = False,
    method: str | None = None,
    decimals: int | str | None = "reference",
    pair_order: str | None = None,
    sum_dtype: str | None = None,
    compat: str | None = None,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
    name: str | None = None,
    limit: int | None = None,
) -> CrowsResult:
    """CrowS-Pairs metric of a masked or causal LM, or of per-pair scores.

    Each pair (S_more, S_less) is a "win" when score(S_more) > score(S_less), the score being
    PLL(S) = Σ_{shared tokens} log P(w | S with w masked) (Nangia et al. 2020), its within-word
    variant (Kauf & Ivanova 2023), or AUL / AULA (Kaneko & Bollegala 2022) for a masked LM; the
    sum of the token log-probabilities Σ_i log P(w_i | w_<i) of the whole sentence or of its
    shared tokens for a causal LM (:mod:`weatkit.crows.causal`); over the N scored pairs::

        metric = 100 · #wins / N        (50 = no preference; > 50 stereotypical)

    with a percentile bootstrap CI over pairs
    (:func:`weatkit.stats.resampling.one_sample_bootstrap`). Details:
    :mod:`weatkit.crows.score`.

    Args:
        model: a model spec (:mod:`weatkit.scoring.spec`; a hub id or local directory is an
            ``hf`` model) of a masked LM, or of a causal LM with ``method`` ``sum`` or
            ``shared``. Give ``model`` or ``pairs``.
        pairs: per-pair scores instead: a table with ``bias_type, direction, score_more,
            score_less`` (or ``win, neutral``) or a CSV of them
            (:func:`weatkit.crows.data.read_pair_scores`).
        lang: ``en`` (all bias types), ``fr`` (French CrowS-Pairs, Névéol et al. 2022), ``ja``
            or ``ru`` (MBE's gender pairs); with ``model``.
        data: ``original`` or ``revised`` (the revised English pairs of Pikuliak et al. 2023),
            or the path of a pairs file of your own; with ``model``. Known label errors of the
            shipped files are corrected and listed in :attr:`CrowsResult.corrections`.
        controls: also score the negated and anti-stereotype control pairs of Pikuliak et al.
            (2023) and flag a control scored as biased as its originals
            (:mod:`weatkit.crows.controls`); English, with ``model``.
        method: ``pll`` (the default), ``pll-word-l2r``, ``aul`` or ``aula`` (masked LMs);
            ``sum`` or ``shared`` (causal LMs). A method of the other kind of model is an
            error naming both.
        decimals, pair_order, sum_dtype: how pairs are compared and the PLL computed
            (:func:`weatkit.crows.score.score_crows`; defaults ``"reference"``, ``more-first``,
            ``float64``).
        compat: a preset of :data:`weatkit.measures.compat.SENTENCE_PRESETS` ``["crows"]``
            (``crows-pairs``, ``bias-eval-mlm``) for the options not given (``decimals`` counts
            as given when it is not ``"reference"``).
        n_bootstrap, seed, confidence_level: the percentile bootstrap (0: no interval).
        options: model loading options.
        show_progress: progress bar (None: when on a terminal).
        name: the source name in :attr:`CrowsResult.measures` (default ``model`` or
            ``"pairs"``).
        limit: score a sample of this many pairs, stratified by bias type and drawn with
            ``seed`` (:func:`weatkit.crows.data.sample_pairs`); with ``model``. The control
            pairs are scored in full.

    Citation:
        Nangia, Vania, Bhalerao & Bowman (2020), EMNLP; Kaneko & Bollegala (2022), AAAI.

    Example:
        >>> import pandas as pd
        >>> table = pd.DataFrame({"bias_type": ["gender"] * 4,
        ...                       "direction": ["stereo", "stereo", "antistereo", "stereo"],
        ...                       "score_more": [-1.0, -2.0, -3.0, -1.5],
        ...                       "score_less": [-2.0, -1.0, -4.0, -2.5]})
        >>> crows(pairs=table, n_bootstrap=0).measures[0].value   # 3 wins of 4
        75.0
    """
    if (model is None) == (pairs is None):
        raise WeatkitError("give a model or a pairs table, not both or neither")
    given = {"method": method, "pair_order": pair_order, "sum_dtype": sum_dtype}
    explicit = {k for k, v in given.items() if v is not None}
    if decimals != "reference":
        explicit.add("decimals")
    defaults = {"method": "pll", "pair_order": "more-first", "sum_dtype": "float64"}
    scoring = {k: defaults[k] if v is None else v for k, v in given.items()}
    scoring = apply_preset("crows", compat, explicit, {**scoring, "decimals": decimals})
    method = scoring["method"]
    if model is None and (controls or str(data) != "original" or limit is not None):
        raise WeatkitError(
            "data, controls and limit are for a model; pairs are scores already computed"
        )
    corrections = pd.DataFrame(columns=CORRECTION_COLUMNS)
    control_table = control_pairs = sample = None
    conventions: dict[str, dict[str, str]] = {}
    if model is not None:
        from weatkit.crows.controls import (
    control_summary,
    load_controls,
    score_controls,
    stack_control_pairs,
)
        from weatkit.crows.data import crows_pairs, sample_pairs
        from weatkit.crows.score import score_crows
        from weatkit.sentence.lm import sentence_lm

        if controls and lang != "en":
            raise WeatkitError(f"controls exist for English only (Pikuliak et al.), not {lang!r}")
        shipped, corrections = crows_pairs(lang, data)
        shipped, sample = sample_pairs(shipped, limit, seed)
        control_rows = load_controls() if controls else None
        lm = sentence_lm(f"crows:{method}", model, options)
        with recording() as seen:
            table = score_crows(lm, shipped, **scoring, show_progress=show_progress)
            if control_rows is not None:
                originals, scored = score_controls(
                    lm, control_rows, **scoring, show_progress=show_progress
                )
        conventions = summarize(seen)
        if control_rows is not None:
            control_table = control_summary(
                originals, scored, n_bootstrap=n_bootstrap, seed=seed,
                confidence_level=confidence_level,
            )  # fmt: skip
            control_pairs = stack_control_pairs(originals, scored)
    elif isinstance(pairs, pd.DataFrame):
        table = pairs
    else:
        from weatkit.crows.data import read_pair_scores

        table = read_pair_scores(pairs)
    summary = crows_metric(
        table, n_bootstrap=n_bootstrap, seed=seed, confidence_level=confidence_level
    )
    source = name or (str(model) if model is not None else "pairs")
    measures = crows_measures(
        summary, source=source, lang=lang, method=method, confidence_level=confidence_level
    )
    return CrowsResult(
        table,
        summary,
        on_convention(on_sample(measures, sample), conventions),
        corrections,
        control_table,
        control_pairs,
        sample,
        conventions,
    )
