"""Causal-LM word comparison of GEST (:mod:`weatkit.gest.scoring`).

The prefix and the word, joined by a space, are one text ``t = prefix + " " + w``, scored by the
model's :class:`~weatkit.scoring.base.Scorer`; the word's log-probability is the sum over the
tokens inside its characters, the space before it included
(:meth:`~weatkit.scoring.base.TokenLogprobs.within`):

    log P(w | prefix) = Σ_{k ∈ W} log P(t_k | t_<k)

A sample is skipped, with the reason, when a word shares a token with the prefix or the prefix
tokenises differently before the two words.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from weatkit.errors import WeatkitError
from weatkit.gest.templates import GestTemplate
from weatkit.scoring.base import TokenLogprobs


def leading_space_token_id(tokenizer: Any, word: str) -> int:
    """First token of ``word`` encoded without special tokens by a tokenizer loaded with
    ``add_prefix_space=True`` (so ``he`` → ``Ġhe`` for byte-level BPE); WeatkitError when the
    word gives no token or the unknown token (how a causal template's words are checked)."""
    ids = list(tokenizer(word, add_special_tokens=False)["input_ids"])
    unk = tokenizer.unk_token_id
    if not ids or (unk is not None and ids[0] == unk):
        raise WeatkitError(
            f"the tokenizer cannot encode {word!r}: it gives "
            f"{'no token' if not ids else 'the unknown token'}"
        )
    return int(ids[0])


def word_difference(
    masculine: TokenLogprobs, feminine: TokenLogprobs, end: int, template: GestTemplate
) -> float | str:
    """``log P(w_m | prefix) − log P(w_f | prefix)`` (natural log) from the two texts
    ``prefix + " " + w``: the sum of the log-probabilities of the tokens after the prefix's
    ``end`` (character), each text's own; or the reason the two cannot be compared (a word that
    shares a token with the prefix, or a prefix tokenised differently before the two words)."""
    totals = []
    contexts = []
    for scored, word in ((masculine, template.masculine), (feminine, template.feminine)):
        inside = scored.within(end, len(scored.text))
        before = np.array([b <= end for _, b in scored.offsets], dtype=bool)
        if not inside.any() or not (inside | before).all():
            return f"{word!r} shares a token with the prefix"
        totals.append(float(np.sum(scored.logprobs[inside])))
        contexts.append(tuple(t for t, keep in zip(scored.tokens, before, strict=True) if keep))
    if contexts[0] != contexts[1]:
        return (
            f"the prefix tokenises differently before {template.masculine!r} and "
            f"{template.feminine!r}"
        )
    return totals[0] - totals[1]
