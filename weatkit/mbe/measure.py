"""MBE (Kaneko et al. 2022) as registered measures: ``mbe:aula``, ``mbe:aul`` of masked LMs and
``mbe:mean-ll`` of causal LMs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from weatkit.errors import WeatkitError
from weatkit.measures.result import MeasureResult, on_convention, on_sample
from weatkit.scoring.conventions import recording, summarize

if TYPE_CHECKING:
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.mbe.run import MbeRun
    from weatkit.mbe.score import MbeResult

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class MbeMeasure:
    """What :func:`mbe` computed.

    Attributes:
        run: the native :class:`~weatkit.mbe.run.MbeRun` (score, McNemar test, sentences).
        measures: ``mbe:METHOD`` (:func:`mbe_measures`).
        scoring_conventions: what a causal LM's ``mean-ll`` included (``{model spec:
            {"first_token": ...}}``, :mod:`weatkit.scoring.conventions`); empty for a masked LM.
    """

    run: MbeRun
    measures: list[MeasureResult] = field(default_factory=list)
    scoring_conventions: dict[str, dict[str, str]] = field(default_factory=dict)


def mbe_measures(result: MbeResult, *, source: str, lang: str) -> list[MeasureResult]:
    """``mbe:METHOD`` of an :class:`~weatkit.mbe.score.MbeResult`: its score, no interval, ``n``
    = male + female sentences."""
    return [
        MeasureResult(
            f"mbe:{result.method}",
            source,
            lang,
            float(result.score),
            n=int(result.n_male + result.n_female),
            method=f"{result.weight}-weighted",
        )
    ]


def mbe(
    model: str,
    *,
    corpus: PathLike | tuple[PathLike, PathLike] | None = None,
    mbe_set: str | None = None,
    lang: str,
    method: str = "aula",
    weight: str = "cosine",
    seed: int = 0,
    max_sentences: int | None = None,
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
    name: str | None = None,
    limit: int | None = None,
) -> MbeMeasure:
    """The MBE score of a masked or causal LM in one language.

    The target-language sentences whose English side is male (𝒯_m) or female (𝒯_f) are
    scored with A = AULA (or AUL) and compared pairwise (Kaneko et al. 2022, Eq. 2)::

        MBE = 100 · Σ_{m,f} C(m, f) · I(A(m) > A(f)) / Σ_{m,f} C(m, f)

    with C the cosine similarity of the sentence embeddings. 50 = no preference; > 50 the
    male sentences are more likely. A causal LM scores A = mean token log-likelihood
    (``method="mean-ll"``, the causal analogue of AUL). Details: :mod:`weatkit.mbe.score`.

    Args:
        model: a model spec (:mod:`weatkit.scoring.spec`; a hub id or local directory is an
            ``hf`` model): a masked LM, or a causal LM with ``method="mean-ll"``.
        corpus: an ``English<TAB>target`` file or an ``(english, target)`` pair of aligned text
            files (:func:`weatkit.mbe.run.run_mbe_parallel`). Give ``corpus`` or ``mbe_set``.
        mbe_set: the name of a shipped token-id set of ``lang``
            (:func:`weatkit.mbe.run.run_mbe_set`).
        lang: the target language.
        method, weight, seed, max_sentences, limit: as in :func:`weatkit.mbe.run.run_mbe`
            (``limit``: a sample of that many sentences stratified by gender, drawn with
            ``seed``; :attr:`MbeRun.sample <weatkit.mbe.run.MbeRun.sample>`).
        options: model loading options.
        show_progress: progress bar (None: when on a terminal).
        name: the source name in the measures (default ``model``).

    Citation:
        Kaneko, Imankulova, Bollegala & Okazaki (2022), NAACL.

    Example:
        >>> result = mbe("bert-base-multilingual-cased", corpus="en-de.tsv", lang="de")
        ... # doctest: +SKIP
        >>> result.measures[0].value  # doctest: +SKIP
    """
    from weatkit.mbe.run import run_mbe_parallel, run_mbe_set
    from weatkit.sentence.lm import sentence_lm

    if (corpus is None) == (mbe_set is None):
        raise WeatkitError("give a parallel corpus or an MBE set, not both or neither")
    lm = sentence_lm(f"mbe:{method}", model, options)
    common = {
        "method": method,
        "weight": weight,
        "seed": seed,
        "max_sentences": max_sentences,
        "show_progress": show_progress,
        "limit": limit,
    }
    with recording() as seen:
        if corpus is not None:
            run = run_mbe_parallel(lm, corpus, **common)
        else:
            run = run_mbe_set(lm, lang, str(mbe_set), **common)
    conventions = summarize(seen)
    measures = mbe_measures(run.result, source=name or str(model), lang=lang)
    return MbeMeasure(run, on_convention(on_sample(measures, run.sample), conventions),
                      conventions)  # fmt: skip
