"""Masked-LM inputs and forward passes of GEST (:mod:`weatkit.gest.scoring`).

Both variants of a template are tokenised with the model's special tokens; the word's tokens
(found by character offsets) are replaced by as many mask tokens, and one forward pass of the
masked sentence gives, for a word of ``k`` tokens ``w_1 … w_k`` at masked positions
``p_1 … p_k``,

    log P(w | t(s)) = (1/k) Σ_i log softmax(logits[p_i])[w_i]

A Slavic sentence pair (masculine, feminine) is masked at the one token position where the two
tokenisations differ. Inputs that cannot be compared are the reason they are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from weatkit.gest.templates import GestTemplate, fill
from weatkit.models.handle import ModelHandle, padded


@dataclass
class MaskedItem:
    """One row of a masked LM's forward pass: the input and where the two words are read."""

    key: str  # the cache item: the sample (or the JSON of a pair)
    ids: list[int]  # the masked sentence
    positions: list[int]  # positions whose distributions give the words' log-probabilities
    masculine: list[int]  # token of w_m at each position
    feminine: list[int]  # token of w_f at each position


def forward_scores(handle: ModelHandle, batch: Sequence[MaskedItem], pad_id: int) -> np.ndarray:
    """One right-padded forward pass of the masked LM; per item, the mean over its masked
    positions ``p`` of ``log softmax(logits[p])[w_m] − log softmax(logits[p])[w_f]`` (natural
    log, float32)."""
    n = len(batch)
    ids, mask = padded([e.ids for e in batch], pad_id)
    rows: list[int] = []
    cols: list[int] = []
    masc: list[int] = []
    fem: list[int] = []
    for r, e in enumerate(batch):
        rows += [r] * len(e.positions)
        cols += e.positions
        masc += e.masculine
        fem += e.feminine
    device = handle.device
    row_t = torch.tensor(rows, device=device)
    logp = handle.log_probs("mlm", input_ids=ids, attention_mask=mask, rows=row_t, cols=cols)
    with torch.inference_mode():
        diff = (
            logp.gather(1, torch.tensor(masc, device=device)[:, None])
            - logp.gather(1, torch.tensor(fem, device=device)[:, None])
        )[:, 0]
        total = torch.zeros(n, device=device).index_add_(0, row_t, diff)
        count = torch.bincount(row_t, minlength=n).float()
        return (total / count).cpu().numpy()


def encode_mlm(
    tok: Any, template: GestTemplate, sentences: list[str], mask: int, limit: int | None
) -> dict[str, MaskedItem | str]:
    """Masked inputs of the samples under ``template`` (or the reason a sample is skipped)."""
    m_filled = [fill(template.text, template.masculine, s) for s in sentences]
    f_filled = [fill(template.text, template.feminine, s) for s in sentences]
    kwargs = {"return_offsets_mapping": True, "return_special_tokens_mask": True}
    enc_m = tok([x[0] for x in m_filled], **kwargs)
    enc_f = tok([x[0] for x in f_filled], **kwargs)
    out: dict[str, MaskedItem | str] = {}
    for i, s in enumerate(sentences):
        ids_m, pos_m = _word_positions(enc_m, i, m_filled[i][1:])
        ids_f, pos_f = _word_positions(enc_f, i, f_filled[i][1:])
        if limit is not None and max(len(ids_m), len(ids_f)) > limit:
            out[s] = f"longer than the model's {limit} tokens"
        elif len(pos_m) != len(pos_f):
            out[s] = (
                f"{template.masculine!r} and {template.feminine!r} are {len(pos_m)} and "
                f"{len(pos_f)} tokens here"
            )
        elif not pos_m or pos_m != pos_f or _without(ids_m, pos_m) != _without(ids_f, pos_f):
            out[s] = f"the context tokenises differently with {template.masculine!r}"
        else:
            masked = [mask if j in pos_m else t for j, t in enumerate(ids_m)]
            out[s] = MaskedItem(
                s, masked, pos_m, [ids_m[p] for p in pos_m], [ids_f[p] for p in pos_f]
            )
    return out


def _word_positions(enc: Any, i: int, span: tuple[int, int]) -> tuple[list[int], list[int]]:
    """Token ids of row ``i`` and the positions of the tokens that overlap the char ``span``."""
    ids = list(enc["input_ids"][i])
    start, end = span
    positions = [
        j
        for j, ((a, b), special) in enumerate(
            zip(enc["offset_mapping"][i], enc["special_tokens_mask"][i], strict=True)
        )
        if not special and a < end and b > start
    ]
    return ids, positions


def _without(ids: list[int], positions: list[int]) -> list[int]:
    return [t for j, t in enumerate(ids) if j not in positions]


def encode_pair(tok: Any, key: str, mask: int, limit: int | None) -> MaskedItem | str:
    """The masked input of a (masculine, feminine) pair, or the reason it is skipped."""
    masc, fem = json.loads(key)
    ids_m = list(tok(masc)["input_ids"])
    ids_f = list(tok(fem)["input_ids"])
    if limit is not None and max(len(ids_m), len(ids_f)) > limit:
        return f"longer than the model's {limit} tokens"
    if len(ids_m) != len(ids_f):
        return f"the sentences are {len(ids_m)} and {len(ids_f)} tokens long"
    diff = [j for j, (a, b) in enumerate(zip(ids_m, ids_f, strict=True)) if a != b]
    if len(diff) != 1:
        return f"the sentences differ in {len(diff)} token positions, not 1"
    p = diff[0]
    if tok.unk_token_id is not None and tok.unk_token_id in (ids_m[p], ids_f[p]):
        return "the differing token is the unknown token"
    masked = [*ids_m[:p], mask, *ids_m[p + 1 :]]
    return MaskedItem(key, masked, [p], [ids_m[p]], [ids_f[p]])


def item_results(
    encoded: dict[str, MaskedItem | str], scores: dict[str, float]
) -> dict[str, float | str]:
    """Each encoded key's natural-log score, or the reason it was skipped."""
    return {k: scores[e.key] if isinstance(e, MaskedItem) else e for k, e in encoded.items()}
