"""EuroGEST per-item masculine rates r from causal (GLM) and masked (MLM) language models.

Rowe et al. (EMNLP 2025, arXiv:2506.03867) score the whole masculine and feminine strings of an
item (``eurogest/SOURCE.md``, "How the scores are computed"). Each string is tokenised with the
tokenizer's default special tokens, ``t_0 … t_{n−1}``, and gets per-token log-probabilities

* **causal LMs** (upstream): ``ℓ_j = ln P(t_j | t_0 … t_{j−1})`` for j ≥ 1, from one forward pass;
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

Inputs are batched right-padded with an attention mask, sorted by length; causal sums are
cached per (token ids, first scored position) and masked terms per (token ids, position) on disk
(:func:`weatkit.models.cache.score_cache`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from weatkit.embeddings.contextual import ContextualOptions
from weatkit.gest.eurogest import check_code
from weatkit.models.batching import run_batches
from weatkit.models.cache import cached_rows, score_cache
from weatkit.models.handle import padded
from weatkit.models.pool import get_model

SCORING_VERSION = 1
SCORE_COLUMNS = ["score_m", "score_f", "r", "skipped"]


def first_difference(a: Sequence[int], b: Sequence[int]) -> int | None:
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


def _glm_start(ids: list[int], other: list[int], code: str) -> int:
    if code != "2026-04":
        return 1
    d = first_difference(ids, other)
    return 1 if d is None else max(d, 1)


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
    handle = get_model(str(model), options)
    kind = handle.lm_kind(kind)
    tok = handle.tokenizer
    limit = handle.max_length
    masc = [str(s) for s in items["masculine"]]
    fem = [str(s) for s in items["feminine"]]
    enc_m = tok(masc, return_special_tokens_mask=True)
    enc_f = tok(fem, return_special_tokens_mask=True)
    plans: list[tuple[Any, Any] | str] = []
    for i in range(len(masc)):
        ids_m, ids_f = list(enc_m["input_ids"][i]), list(enc_f["input_ids"][i])
        if limit is not None and max(len(ids_m), len(ids_f)) > limit:
            plans.append(f"longer than the model's {limit} tokens")
            continue
        if ids_m == ids_f and not keep_identical:
            plans.append("the masculine and feminine strings tokenise identically")
            continue
        if kind == "glm":
            if min(len(ids_m), len(ids_f)) < 2:
                plans.append("a string has fewer than 2 tokens")
                continue
            plans.append(
                (
                    (ids_m, _glm_start(ids_m, ids_f, code)),
                    (ids_f, _glm_start(ids_f, ids_m, code)),
                )
            )
        else:
            sp_m, sp_f = (
                list(enc_m["special_tokens_mask"][i]),
                list(enc_f["special_tokens_mask"][i]),
            )
            pos_m = _mlm_positions(sp_m, ids_m, ids_f, code)
            pos_f = _mlm_positions(sp_f, ids_f, ids_m, code)
            if not pos_m or not pos_f:
                plans.append("a string has no token besides special ones")
                continue
            plans.append(((ids_m, sp_m, pos_m), (ids_f, sp_f, pos_f)))
    if kind == "glm":
        terms = _glm_terms(handle, options, plans, show_progress)
    else:
        terms = _mlm_terms(model, options, plans, show_progress)
    out = items.copy()
    s_m, s_f, rates, reasons = [], [], [], []
    for plan, term in zip(plans, terms, strict=True):
        if isinstance(plan, str):
            s_m.append(math.nan), s_f.append(math.nan), rates.append(math.nan)
            reasons.append(plan)
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


Terms = tuple[tuple[float, int, int], tuple[float, int, int]] | None


def _glm_terms(
    handle: Any, options: ContextualOptions, plans: list[Any], show_progress: bool | None
) -> list[Terms]:
    """Per plan, ((Σℓ, count, n_ids) masculine, (…) feminine) from causal forward passes."""
    wanted: dict[str, tuple[list[int], int]] = {}
    for plan in plans:
        if not isinstance(plan, str):
            for ids, start in plan:
                wanted[json.dumps([ids, start])] = (ids, start)
    cache = None
    if options.cache:
        cache = score_cache("gest", "eurogest-glm", SCORING_VERSION, handle.identity, options)

    def compute(keys: list[str]) -> np.ndarray:
        handle.network("glm")
        values, _ = run_batches(
            [wanted[k] for k in keys],
            lambda batch: _glm_batch(handle, batch),
            length=lambda e: len(e[0]),
            batch_size=options.batch_size,
            desc=f"EuroGEST glm with {handle.short_name}",
            model_name=handle.model_name,
            device=handle.device,
            unit="string",
            show_progress=show_progress,
        )
        return values

    rows, _ = cached_rows(cache, list(wanted), compute)
    out: list[Terms] = []
    for plan in plans:
        if isinstance(plan, str):
            out.append(None)
            continue
        pair = []
        for ids, start in plan:
            total = float(rows[json.dumps([ids, start])][0])
            pair.append((total, len(ids) - start, len(ids)))
        out.append((pair[0], pair[1]))
    return out


def _glm_batch(handle: Any, batch: Sequence[tuple[list[int], int]]) -> np.ndarray:
    """Σ_{j ≥ start} ln P(t_j | t_<j) of each (ids, start), one right-padded causal pass."""
    ids, mask = padded([e[0] for e in batch], handle.pad_id)
    rows: list[int] = []
    cols: list[int] = []
    targets: list[int] = []
    for r, (seq, start) in enumerate(batch):
        for j in range(start, len(seq)):
            rows.append(r)
            cols.append(j - 1)
            targets.append(seq[j])
    logp = handle.log_probs("glm", input_ids=ids, attention_mask=mask, rows=rows, cols=cols)
    with torch.inference_mode():
        picked = logp.gather(1, torch.tensor(targets, device=handle.device)[:, None])[:, 0]
    values = picked.cpu().double().numpy()
    return np.bincount(np.asarray(rows, dtype=np.int64), weights=values, minlength=len(batch))


def _mlm_terms(
    model: str, options: ContextualOptions, plans: list[Any], show_progress: bool | None
) -> list[Terms]:
    """Per plan, the masked-LM terms through :class:`weatkit.sentence.masked_lm.MaskedLM`."""
    from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence

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
            out.append(None)
            continue
        pair = []
        for ids, _, pos in plan:
            pair.append((float(values[k].sum()), len(pos), len(ids)))
            k += 1
        out.append((pair[0], pair[1]))
    return out
