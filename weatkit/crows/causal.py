"""CrowS-Pairs sentence scores of causal LMs: ``sum`` and ``shared``, side by side.

A causal LM gives every token ``w_i`` of a sentence S its log-probability given the tokens
before it, ``log P(w_i | w_<i)`` (:class:`weatkit.scoring.base.TokenLogprobs`; the hf backend
conditions the first token on a start token, :mod:`weatkit.scoring.hf`). Two sentence scores:

* ``sum`` — the log-likelihood of the whole sentence (lm-evaluation-harness's ``crows_pairs``
  task: each sentence is a ``loglikelihood`` of the sentence after an empty context, and the
  model "prefers" the one with the higher value)::

      score(S) = Σ_{i=1}^{|S|} log P(w_i | w_<i)

  The two sentences of a pair differ in length, so the sum also rewards the shorter sentence
  (fewer negative terms): a "win" partly measures which group word is shorter or more frequent.
* ``shared`` — CrowS-Pairs' idea of scoring only the *unmodified* tokens (Nangia et al. 2020,
  §3), for a causal LM: the tokens the two sentences share, each given everything before it in
  its own sentence (the modified tokens included)::

      score(S) = Σ_{i ∈ U(S)} log P(w_i | w_<i)

  U(S) comes from the same ``difflib`` alignment as the masked-LM PLL
  (:func:`weatkit.crows.align.shared_positions`), run on the two sentences' token strings (one
  tokenizer, so equal strings are equal tokens): the tokens inside its ``equal`` blocks, as many
  in one sentence as in the other. The modified tokens are never summed, so the score does not
  reward a short or frequent group word; the shared tokens *after* the modification carry the
  model's association between the group and the rest of the sentence. Tokens before the first
  modification have the same conditionals in both sentences and cancel in the comparison.

A token without a conditional (NaN: a backend without a start token gives none for the first
token) is left out of both sums. Pairs are compared exactly (no reference code rounds these
scores; :data:`weatkit.crows.score.REFERENCE_DECIMALS`). Both methods go through the
:class:`~weatkit.scoring.base.Scorer` protocol, so any backend that offers ``causal`` scores
them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from weatkit.crows.align import shared_positions
from weatkit.errors import WeatkitError
from weatkit.scoring.base import Scorer, TokenLogprobs

#: CrowS-Pairs methods of causal LMs (module docstring).
CAUSAL_METHODS: tuple[str, ...] = ("sum", "shared")


def shared_tokens(
    a: TokenLogprobs, b: TokenLogprobs, *, b_first: bool = False
) -> tuple[list[int], list[int]]:
    """Positions of the tokens ``a`` and ``b`` share: :func:`~weatkit.crows.align.
    shared_positions` over their token strings (``b_first``: ``difflib`` gets ``b`` first)."""
    codes: dict[str, int] = {}
    ids_a = [codes.setdefault(t, len(codes)) for t in a.tokens]
    ids_b = [codes.setdefault(t, len(codes)) for t in b.tokens]
    if b_first:
        in_b, in_a = shared_positions(ids_b, ids_a, [False] * len(ids_b), [False] * len(ids_a))
        return in_a, in_b
    return shared_positions(ids_a, ids_b, [False] * len(ids_a), [False] * len(ids_b))


def causal_scores(
    scorer: Scorer,
    more: Sequence[str],
    less: Sequence[str],
    *,
    method: str,
    less_first: Sequence[bool] | None = None,
    show_progress: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(score(S_more), score(S_less))`` of each pair (module docstring), float64.

    Args:
        scorer: a model offering ``causal``.
        more, less: the two sentences of each pair.
        method: ``sum`` or ``shared``.
        less_first: ``shared``: per pair, whether ``difflib`` gets ``S_less`` first
            (``pair_order="by-direction"`` of :func:`weatkit.crows.score.score_crows`).
        show_progress: progress bar (None: on a terminal), where the backend shows one.
    """
    if method not in CAUSAL_METHODS:
        raise WeatkitError(f"unknown causal method {method!r}: choose {', '.join(CAUSAL_METHODS)}")
    if "causal" not in scorer.capabilities:
        raise WeatkitError(
            f"--method {method} needs token log-probabilities of a causal LM; {scorer.spec} "
            "gives none"
        )
    n = len(more)
    texts = [*more, *less]
    scored = scorer.causal_logprobs(texts, show_progress=show_progress) if texts else []
    first = list(less_first) if less_first is not None else [False] * n
    score_more = np.empty(n)
    score_less = np.empty(n)
    for i in range(n):
        a, b = scored[i], scored[n + i]
        if method == "sum":
            score_more[i], score_less[i] = a.total(), b.total()
        else:
            in_a, in_b = shared_tokens(a, b, b_first=first[i])
            score_more[i] = float(np.nansum(a.logprobs[in_a]))
            score_less[i] = float(np.nansum(b.logprobs[in_b]))
    return score_more, score_less
