"""LPBS scores from a masked LM: one masked-token log-probability per (template, target word,
attribute), read through :meth:`weatkit.sentence.masked_lm.MaskedLM.masked_candidates`.

For template t, target word w and attribute a (Kurita et al. 2019, §3):

    log p_tgt(w, a, t)   = log P([MASK] = w | t with [TARGET] masked, [ATTRIBUTE] = a)
    log p_prior(w, t)    = log P([MASK] = w | t with [TARGET] and [ATTRIBUTE] masked)

The sentence ``t(w, a)`` is tokenised once; the tokens covering w (by character offsets, which
needs a fast tokenizer) become one token, and for the prior the tokens covering a become one
mask token, as the reference code writes a single ``[MASK]`` for each slot. A target of several
tokens is refused (``subtokens="refuse"``) or read as its first token (``"first"``: the
reference's ``accept_wordpiece=True``). Probabilities are the softmax over the whole vocabulary
at the mask (natural logarithms, float64). The target's slot being one mask token, the masked
input of (t, a) is the same for every target word whose text around tokenizes alike (it does
when the slot is set off by spaces or punctuation), and the prior's, both slots masked, the
same for every attribute too: one forward pass reads every target word's token there,
templates × (attributes + 1) passes per test instead of 2 × templates × attributes × words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.lpbs.templates import Filled, Template
from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence

#: How a target word of several tokens is read.
SUBTOKENS = ("refuse", "first")
#: The columns of :func:`score_words`.
WORD_COLUMNS = ["template", "group", "target", "attribute", "log_p_target", "log_p_prior"]


def score_words(
    lm: MaskedLM,
    templates: Sequence[Template],
    groups: Mapping[str, Sequence[str]],
    attributes: Sequence[str],
    *,
    subtokens: str = "refuse",
    show_progress: bool | None = None,
) -> pd.DataFrame:
    """One row per (template, group, target word, attribute): :data:`WORD_COLUMNS`.

    Raises:
        WeatkitError: the model has no mask token or no fast tokenizer; a word the tokenizer
            maps to its unknown token, or that gives no token; with ``subtokens="refuse"``, a
            target of several tokens (naming the word and its tokens).
    """
    if subtokens not in SUBTOKENS:
        raise WeatkitError(f"unknown subtokens {subtokens!r}: choose {', '.join(SUBTOKENS)}")
    mask = lm.mask_id
    tok = lm.tokenizer
    if not getattr(tok, "is_fast", False):
        raise WeatkitError(
            f"{lm.model_name}: LPBS locates the words by character offsets, which needs a fast "
            "tokenizer; this one is slow"
        )
    combos = [
        (t, g, w, a) for t in templates for g, words in groups.items() for w in words
        for a in attributes
    ]  # fmt: skip
    filled = [t.fill(w, a) for t, _, w, a in combos]
    enc = tok(
        [f.text for f in filled], return_offsets_mapping=True, return_special_tokens_mask=True
    )
    # one masked input per (template, attribute, target or prior), reading every target there
    inputs: dict[tuple[tuple[int, ...], int], int] = {}
    sentences: list[TokenizedSentence] = []
    positions: list[int] = []
    candidates: list[list[int]] = []
    where: list[tuple[int, int]] = []
    for i, f in enumerate(filled):
        row = _Encoded(enc["input_ids"][i], enc["offset_mapping"][i], enc["special_tokens_mask"][i])
        target = _word_tokens(lm, row, f, f.target, combos[i][2], "target")
        attribute = _word_tokens(lm, row, f, f.attribute, combos[i][3], "attribute")
        pieces = row.ids[target[0] : target[1]]
        if len(pieces) > 1 and subtokens == "refuse":
            shown = " ".join(tok.convert_ids_to_tokens(pieces))
            raise WeatkitError(
                f"target word {combos[i][2]!r} is {len(pieces)} tokens of {lm.model_name} "
                f"({shown}); LPBS predicts a target at one mask: use single-token targets, or "
                "subtokens='first' (--subtokens first) to read its first token as the reference "
                "code does"
            )
        for edits in ([(*target, mask)], [(*target, mask), (*attribute, mask)]):
            sentence, position = _replaced(row, edits, target[0])
            n = inputs.setdefault((sentence.ids, position), len(inputs))
            if n == len(sentences):
                sentences.append(sentence)
                positions.append(position)
                candidates.append([])
            where.append((n, len(candidates[n])))
            candidates[n].append(pieces[0])
    values = lm.masked_candidates(sentences, positions, candidates, show_progress=show_progress)
    logp = np.array([values[n][k] for n, k in where], dtype=np.float64).reshape(-1, 2)
    return pd.DataFrame(
        {
            "template": [t.text for t, *_ in combos],
            "group": [g for _, g, _, _ in combos],
            "target": [w for _, _, w, _ in combos],
            "attribute": [a for *_, a in combos],
            "log_p_target": logp[:, 0],
            "log_p_prior": logp[:, 1],
        },
        columns=WORD_COLUMNS,
    )


class _Encoded:
    """One tokenised sentence: ids, character offsets and special-token flags."""

    def __init__(self, ids: list[int], offsets: list[tuple[int, int]], special: list[int]):
        self.ids = list(ids)
        self.offsets = [tuple(o) for o in offsets]
        self.special = [bool(s) for s in special]


def _word_tokens(
    lm: MaskedLM, row: _Encoded, filled: Filled, span: tuple[int, int], word: str, role: str
) -> tuple[int, int]:
    """``[first, last + 1)`` of the tokens covering ``span``; one-line errors for a word that
    gives no token, an unknown one, or tokens shared with the text around it."""
    start, end = span
    covering = [
        j
        for j, (a, b) in enumerate(row.offsets)
        if not row.special[j] and b > a and a < end and b > start
    ]
    if not covering:
        raise WeatkitError(f"{role} word {word!r} gives no token of {lm.model_name}")
    first, last = covering[0], covering[-1] + 1
    unk = lm.tokenizer.unk_token_id
    if unk is not None and unk in row.ids[first:last]:
        raise WeatkitError(
            f"{role} word {word!r} is unknown to {lm.model_name} (it gives "
            f"{lm.tokenizer.unk_token})"
        )
    if row.offsets[first][0] < start or row.offsets[last - 1][1] > end:
        raise WeatkitError(
            f"{role} word {word!r} shares a token with the text around it in "
            f"{filled.text!r} ({lm.model_name}): put a space or punctuation next to it"
        )
    return first, last


def _replaced(
    row: _Encoded, edits: list[tuple[int, int, int]], keep: int
) -> tuple[TokenizedSentence, int]:
    """The sentence with each token range ``[start, end)`` of ``edits`` replaced by one token,
    and the new position of the range that started at ``keep``."""
    ids: list[int] = []
    special: list[bool] = []
    position = -1
    done = 0
    for start, end, new in sorted(edits):
        ids += row.ids[done:start]
        special += row.special[done:start]
        if start == keep:
            position = len(ids)
        ids.append(int(new))
        special.append(False)
        done = end
    ids += row.ids[done:]
    special += row.special[done:]
    return TokenizedSentence(tuple(ids), tuple(special)), position
