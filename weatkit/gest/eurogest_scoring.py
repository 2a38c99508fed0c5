"""EuroGEST per-item masculine rates r from causal (GLM) and masked (MLM) language models.

Rowe et al. (EMNLP 2025, arXiv:2506.03867) score the whole masculine and feminine strings of an
item (``eurogest/SOURCE.md``, "How the scores are computed"). Each string is tokenised with the
tokenizer's default special tokens, ``t_0 … t_{n−1}``, and gets per-token log-probabilities

* **causal LMs** (upstream): ``ℓ_j = ln P(t_j | t_0 … t_{j−1})`` for j ≥ 1, from the model's
  :class:`~weatkit.scoring.base.Scorer` (any backend offering ``causal``) with
  ``start="tokenizer"``: the string as its tokenizer encodes it, so ``t_0`` is the BOS where the
  tokenizer adds one (Llama) and the first word's token otherwise (GPT-2). The Scorer lists the
  string's own tokens; a BOS is not listed, and the first listed token has a value exactly when
  one came before it, so n = the listed tokens + 1 when the first has a value (special tokens a
  tokenizer appends after the string are not scored);
* **masked LMs** (weatkit's extension; upstream scores causal LMs only): the pseudo-log-likelihood
  terms ``ℓ_j = ln P(t_j | the string with t_j masked)`` (Salazar et al., ACL 2020) for the
  non-special positions j.

The sequence score S of a string and the rate follow the upstream code version:

* ``2025-12`` (version A, default) and ``2025-08``: S = Σ_j ℓ_j − ln(n), n = number of input ids
  (the probability divided by the token count, upstream's ``norm_masc_prob``);
* ``2026-04`` (version B): S = mean of ℓ_j over the span from the first position d where the
  masculine and feminine token sequences differ (if neither differs but the lengths do, d = the
  last position of the shorter; identical sequences: every scored position); for causal LMs
  j ≥ max(d, 1); for masked LMs the non-special j ≥ d (the last non-special token if none).

Then ``r = exp(S_m) / (exp(S_m) + exp(S_f))``, computed as ``1 / (1 + exp(S_f − S_m))``.

A causal LM's token log-probabilities are cached per string by the scoring layer
(:mod:`weatkit.scoring.cache`); masked-LM inputs are batched right-padded with an attention mask,
sorted by length, and their terms cached per (token ids, position)
(:func:`weatkit.models.cache.score_cache`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from weatkit.embeddings.contextual import ContextualOptions
from weatkit.gest.eurogest import check_code
from weatkit.gest.scoring import language_model_kind
from weatkit.models.pool import get_model
from weatkit.scoring.base import TokenLogprobs, logprobs_by_text
from weatkit.scoring.registry import get_scorer
from weatkit.scoring.spec import parse_model_spec

SCORE_COLUMNS = ["score_m", "score_f", "r", "skipped"]


def first_difference(a: Sequence[Any], b: Sequence[Any]) -> int | None:
    """Version B's start d: first position where ``a`` and ``b`` differ; if one is a prefix of the
    other, the last position of the shorter; None for identical sequences."""
    for j, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return j
    if len(a) == len(b):
        return None
    return min(len(a), len(b)) - 1


def sequence_score(total: float, count: int, n_ids: int, code: str) -> float:
    """S of one string from the sum ``total`` of its ``count`` scored terms ℓ_j: the mean
    Σ ℓ / count (2026-04) or Σ ℓ − ln(n_ids) (2025-12, 2025-08)."""
    if code == "2026-04":
        return total / count
    return total - math.log(n_ids)


def masculine_rate(score_m: float, score_f: float) -> float:
    """r = exp(S_m) / (exp(S_m) + exp(S_f))."""
    return 1.0 / (1.0 + math.exp(score_f - score_m))


def _mlm_positions(special: list[int], ids: list[int], other: list[int], code: str) -> list[int]:
    content = [j for j, s in enumerate(special) if not s]
    if code != "2026-04":
        return content
    d = first_difference(ids, other)
    if d is None:
        return content
    span = [j for j in content if j >= d]
    return span or content[-1:]


def score_items(
    model: str,
    items: pd.DataFrame,
    *,
    code: str = "2025-12",
    kind: str | None = None,
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
    keep_identical: bool = False,
) -> pd.DataFrame:
    """``items`` (with ``masculine``, ``feminine``) plus ``score_m``, ``score_f`` (S, natural
    log), ``r`` and ``skipped`` ("" or why the item has no score, e.g. too long).

    An item whose two strings give the same token ids (e.g. the differing words both become
    the unknown token) would score r = 0.5 whatever the model; it is skipped with that reason
    unless ``keep_identical``."""
    code = check_code(code)
    options = options or ContextualOptions()
    options.validate()
    spec = parse_model_spec(str(model))
    kind = language_model_kind(spec, kind, options)
    masc = [str(s) for s in items["masculine"]]
    fem = [str(s) for s in items["feminine"]]
    if kind == "glm":
        terms = _glm_terms(spec, options, masc, fem, code, keep_identical, show_progress)
    else:
        terms = _mlm_terms(spec.model, options, masc, fem, code, keep_identical, show_progress)
    out = items.copy()
    s_m, s_f, rates, reasons = [], [], [], []
    for term in terms:
        if isinstance(term, str):
            s_m.append(math.nan), s_f.append(math.nan), rates.append(math.nan)
            reasons.append(term)
            continue
        (sum_m, cnt_m, n_m), (sum_f, cnt_f, n_f) = term
        a = sequence_score(sum_m, cnt_m, n_m, code)
        b = sequence_score(sum_f, cnt_f, n_f, code)
        s_m.append(a), s_f.append(b), rates.append(masculine_rate(a, b)), reasons.append("")
    out["score_m"] = np.asarray(s_m, dtype=np.float64)
    out["score_f"] = np.asarray(s_f, dtype=np.float64)
    out["r"] = np.asarray(rates, dtype=np.float64)
    out["skipped"] = reasons
    return out


#: Per item, ((Σℓ, count, n_ids) masculine, (…) feminine), or why the item has no score.
Terms = tuple[tuple[float, int, int], tuple[float, int, int]] | str

_IDENTICAL = "the masculine and feminine strings tokenise identically"


def _glm_terms(
    spec: Any,
    options: ContextualOptions,
    masc: list[str],
    fem: list[str],
    code: str,
    keep_identical: bool,
    show_progress: bool | None,
) -> list[Terms]:
    """Per item, the causal terms of its two strings from the model's Scorer (module
    docstring)."""
    scorer = get_scorer(spec, options)
    scored, too_long = logprobs_by_text(
        scorer, [*masc, *fem], start="tokenizer", show_progress=show_progress
    )
    out: list[Terms] = []
    for m, f in zip(masc, fem, strict=True):
        reason = too_long.get(m) or too_long.get(f)
        if reason:
            out.append(reason)
            continue
        a, b = scored[m], scored[f]
        if a.tokens == b.tokens and not keep_identical:
            out.append(_IDENTICAL)
        elif min(_n_ids(a), _n_ids(b)) < 2:
            out.append("a string has fewer than 2 tokens")
        else:
            out.append((_glm_sum(a, b, code), _glm_sum(b, a, code)))
    return out


def _n_ids(scored: TokenLogprobs) -> int:
    """The input ids of a string as its tokenizer encodes it: its tokens, and one start token
    where the first has a value."""
    has_start = len(scored.logprobs) > 0 and not np.isnan(scored.logprobs[0])
    return len(scored.tokens) + int(has_start)


def _glm_sum(scored: TokenLogprobs, other: TokenLogprobs, code: str) -> tuple[float, int, int]:
    """(Σℓ_j, count, n) over j ≥ 1 (2025-12, 2025-08) or j ≥ max(d, 1) (2026-04): the listed
    tokens from the first difference d of the two token sequences on, those with a value."""
    d = first_difference(scored.tokens, other.tokens) if code == "2026-04" else None
    values = scored.logprobs[d or 0 :]
    return float(np.nansum(values)), int(np.count_nonzero(~np.isnan(values))), _n_ids(scored)


def _mlm_terms(
    model: str,
    options: ContextualOptions,
    masc: list[str],
    fem: list[str],
    code: str,
    keep_identical: bool,
    show_progress: bool | None,
) -> list[Terms]:
    """Per item, the masked-LM terms through :class:`weatkit.sentence.masked_lm.MaskedLM`."""
    from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence

    handle = get_model(model, options)
    tok = handle.tokenizer
    limit = handle.max_length
    enc_m = tok(masc, return_special_tokens_mask=True)
    enc_f = tok(fem, return_special_tokens_mask=True)
    plans: list[Any] = []
    for i in range(len(masc)):
        ids_m, ids_f = list(enc_m["input_ids"][i]), list(enc_f["input_ids"][i])
        if limit is not None and max(len(ids_m), len(ids_f)) > limit:
            plans.append(f"longer than the model's {limit} tokens")
            continue
        if ids_m == ids_f and not keep_identical:
            plans.append(_IDENTICAL)
            continue
        sp_m = list(enc_m["special_tokens_mask"][i])
        sp_f = list(enc_f["special_tokens_mask"][i])
        pos_m = _mlm_positions(sp_m, ids_m, ids_f, code)
        pos_f = _mlm_positions(sp_f, ids_f, ids_m, code)
        if not pos_m or not pos_f:
            plans.append("a string has no token besides special ones")
            continue
        plans.append(((ids_m, sp_m, pos_m), (ids_f, sp_f, pos_f)))
    lm = MaskedLM(str(model), options)
    sentences, positions = [], []
    for plan in plans:
        if not isinstance(plan, str):
            for ids, special, pos in plan:
                sentences.append(TokenizedSentence(tuple(ids), tuple(bool(s) for s in special)))
                positions.append(pos)
    values = lm.masked_log_probs(sentences, positions, show_progress=show_progress)
    out: list[Terms] = []
    k = 0
    for plan in plans:
        if isinstance(plan, str):
            out.append(plan)
            continue
        pair = []
        for ids, _, pos in plan:
            pair.append((float(values[k].sum()), len(pos), len(ids)))
            k += 1
        out.append((pair[0], pair[1]))
    return out
