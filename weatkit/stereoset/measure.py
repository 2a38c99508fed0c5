"""StereoSet (Nadeem et al. 2021) as registered measures: ``stereoset:ss_term``,
``stereoset:lms_term``, ``stereoset:icat_term`` (StereoSet's official per-target-term
convention) and ``stereoset:ss_pooled``, ``stereoset:lms_pooled``, ``stereoset:icat_pooled``
(pooled over examples); formulas in :mod:`weatkit.stereoset.metrics`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.measures.result import MeasureResult, on_convention, on_sample
from weatkit.scoring.conventions import recording, summarize
from weatkit.stereoset.metrics import OVERALL, evaluate

if TYPE_CHECKING:
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.stats.sampling import ItemSample
    from weatkit.stereoset.scoring import StereosetScoring

#: The aggregation conventions (:mod:`weatkit.stereoset.metrics`): ``term`` = StereoSet's
#: ``evaluation.py`` (means over target terms; the ICAT of the means), ``pooled`` = over examples.
CONVENTIONS: tuple[str, ...] = ("term", "pooled")
#: The registered StereoSet measures and the :func:`~weatkit.stereoset.metrics.evaluate`
#: column each takes: ``stereoset:M_C`` is column ``M_C`` (M = ss, lms, icat; C a convention).
STEREOSET_COLUMNS: dict[str, str] = {
    f"stereoset:{metric}_{convention}": f"{metric}_{convention}"
    for convention in CONVENTIONS
    for metric in ("ss", "lms", "icat")
}
_METHODS = {"term": "per target term", "pooled": "pooled over examples"}


@dataclass(frozen=True)
class StereosetResult:
    """What :func:`stereoset` computed.

    Attributes:
        table: the native table of :func:`weatkit.stereoset.metrics.evaluate` (every split ×
            bias type, both conventions).
        measures: SS, LMS and ICAT of one split, all bias types, in both conventions
            (:func:`stereoset_measures`).
        controls: with ``controls``, SS of the matched originals and of the gender-swapped
            items per control kind and the "control as biased" flag
            (:func:`weatkit.stereoset.controls.control_summary`), else None.
        control_items: with ``controls``, the per-item scores of the originals and then of the
            gender-swapped items (``side`` = ``original``/``control``;
            :func:`weatkit.stereoset.controls.score_genderswap`), else None.
        sample: with ``limit``, the sample of intrasentence examples scored
            (:class:`~weatkit.stats.sampling.ItemSample`), else None.
        scoring_conventions: what a causal LM's scores included (``{model spec:
            {"first_token": ...}}``, :mod:`weatkit.scoring.conventions`); empty for a masked LM
            or predictions.
    """

    table: pd.DataFrame
    measures: list[MeasureResult] = field(default_factory=list)
    controls: pd.DataFrame | None = None
    control_items: pd.DataFrame | None = None
    sample: ItemSample | None = None
    scoring_conventions: dict[str, dict[str, str]] = field(default_factory=dict)


def stereoset_measures(
    table: pd.DataFrame,
    *,
    source: str,
    lang: str,
    split: str | None = None,
    conventions: Sequence[str] = CONVENTIONS,
) -> list[MeasureResult]:
    """SS, LMS and ICAT of ``split``'s ``overall`` row of an
    :func:`~weatkit.stereoset.metrics.evaluate` table, per convention in ``conventions``
    (``term``: StereoSet's official scores ``stereoset:ss_term`` ...; ``pooled``:
    ``stereoset:ss_pooled`` ...; :data:`STEREOSET_COLUMNS`).

    ``split`` defaults to the table's last split: ``overall`` when both splits are scored,
    else the scored one. ``n`` is the number of examples.
    """
    unknown = [c for c in conventions if c not in CONVENTIONS]
    if unknown:
        raise WeatkitError(
            f"unknown StereoSet convention {unknown[0]!r}: choose from {', '.join(CONVENTIONS)}"
        )
    if split is None:
        split = str(table["split"].iloc[-1])
    rows = table[(table["split"] == split) & (table["bias_type"] == OVERALL)]
    if rows.empty:
        raise WeatkitError(f"{source}: no StereoSet {split} examples scored")
    row = rows.iloc[0]
    return [
        MeasureResult(
            name,
            source,
            lang,
            float(row[column]),
            n=int(row["n"]),
            method=f"{split}, {_METHODS[column.rsplit('_', 1)[1]]}",
        )
        for name, column in STEREOSET_COLUMNS.items()
        if column.rsplit("_", 1)[1] in conventions
    ]


def stereoset(
    model: str | None = None,
    *,
    predictions: Mapping | str | os.PathLike[str] | None = None,
    lang: str = "en",
    kind: str | None = None,
    split: str | None = None,
    controls: bool | str | Sequence[str] = False,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence_level: float = 0.95,
    options: ContextualOptions | None = None,
    scoring: StereosetScoring | None = None,
    show_progress: bool | None = None,
    name: str | None = None,
    limit: int | None = None,
) -> StereosetResult:
    """StereoSet SS, LMS and ICAT of a language model, or of a predictions file.

    Each example has a stereotypical, an anti-stereotypical and an unrelated sentence, scored by
    the model (higher = preferred). StereoSet's official scores (``*_term``; Nadeem et al. 2021,
    §6; ``evaluation.py``) average over the target terms t, each with N_t examples::

        SS_t   = 100 · #(s_stereo > s_anti) / N_t          (50 = unbiased; > 50 stereotypical)
        LMS_t  = 100 · #(meaningful > unrelated) / (2 N_t)  (ideal 100)
        ss_term = mean_t SS_t,  lms_term = mean_t LMS_t,
        icat_term = lms_term · min(ss_term, 100 − ss_term) / 50

    ``*_pooled`` are the same formulas with the counts summed over all N examples (the
    multilingual reference's ``LM/SS/ICAT Score``). Details: :mod:`weatkit.stereoset.metrics`.

    Args:
        model: a masked LM (hub id or local directory) or a causal LM (also a model spec of any
            backend offering causal scores, ``openai:BASE_URL#MODEL``; :mod:`weatkit.scoring`)
            scoring the intrasentence split. Give ``model`` or ``predictions``.
        predictions: ``{split: {sentence_id: score}}`` or a predictions JSON file
            (:func:`weatkit.stereoset.data.read_predictions`).
        lang: ``en``, ``de``, ``fr``, ``es`` or ``tr``.
        kind: ``"mlm"`` or ``"glm"``; None decides from the model's config.
        split: the split of :attr:`StereosetResult.measures` (both conventions; default: see
            :func:`stereoset_measures`).
        controls: also score the gender-swapped control items of Pikuliak et al. (2023) and
            flag a control scored as biased as its originals (:mod:`weatkit.stereoset.controls`):
            True = ``genderswap`` and ``genderswap-filtered``, or the kinds to score; English,
            with ``model``. The race and profession controls cannot be built (an error).
        n_bootstrap, seed, confidence_level: the paired percentile bootstrap of the controls'
            SS over items (0: no interval).
        options: model loading options.
        scoring: the scoring conventions of ``model``
            (:class:`~weatkit.stereoset.scoring.StereosetScoring`; the reference's:
            ``StereosetScoring(blanks="all", bos_pass="separate")``, the ``--compat stereoset``
            preset).
        show_progress: progress bar (None: when on a terminal).
        name: the source name in the measures (default ``model`` or ``"predictions"``).
        limit: score a sample of this many intrasentence examples, stratified by bias type and
            drawn with ``seed`` (:func:`weatkit.stereoset.data.sample_examples`); with
            ``model``. The control items are scored in full.

    Citation:
        Nadeem, Bethke & Reddy (2021), ACL; Öztürk et al. (multilingual StereoSet).

    Example:
        >>> result = stereoset(predictions="predictions.json")  # doctest: +SKIP
        >>> [(m.measure, round(m.value, 2)) for m in result.measures]  # doctest: +SKIP
    """
    from weatkit.stereoset.data import load_stereoset, read_predictions, sample_examples

    if (model is None) == (predictions is None):
        raise WeatkitError("give a model or predictions, not both or neither")
    if model is None and limit is not None:
        raise WeatkitError("limit is for a model; predictions are scores already computed")
    kinds: tuple[str, ...] = ()
    if not (isinstance(controls, bool) and not controls):
        from weatkit.stereoset.controls import control_kinds

        if model is None:
            raise WeatkitError("controls are for a model; predictions are scores already computed")
        if lang != "en":
            raise WeatkitError(f"controls exist for English only (Pikuliak et al.), not {lang!r}")
        kinds = control_kinds(controls)
    dataset, sample = sample_examples(load_stereoset(lang), limit, seed)
    control_table = control_items = None
    conventions: dict[str, dict[str, str]] = {}
    if model is not None:
        from weatkit.stereoset.scoring import IntrasentenceScorer

        items = None
        if kinds:
            from weatkit.stereoset.controls import load_genderswap

            items = load_genderswap(kinds)  # read (and checked) before any scoring
        scorer = IntrasentenceScorer(model, kind=kind, options=options, scoring=scoring)
        with recording() as seen:
            preds: Mapping = {"intrasentence": scorer.score(dataset, show_progress)}
            if items is not None:
                from weatkit.stereoset.controls import score_genderswap

                control_items = score_genderswap(scorer, items, show_progress)
        conventions = summarize(seen)
        if control_items is not None:
            from weatkit.stereoset.controls import control_summary

            control_table = control_summary(
                control_items, n_bootstrap=n_bootstrap, seed=seed,
                confidence_level=confidence_level,
            )  # fmt: skip
    elif isinstance(predictions, Mapping):
        preds = predictions
    else:
        preds = read_predictions(predictions)
    table = evaluate(dataset, preds)
    source = name or (str(model) if model is not None else "predictions")
    measures = stereoset_measures(table, source=source, lang=lang, split=split)
    return StereosetResult(
        table,
        on_convention(on_sample(measures, sample), conventions),
        control_table,
        control_items,
        sample,
        conventions,
    )
