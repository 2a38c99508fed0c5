"""How an in-process backend (``hf``, ``vllm``) turns texts into the token ids it scores.

A text is tokenised by the model's fast Hugging Face tokenizer (``return_offsets_mapping`` gives
each token's character span) and put after its start (``start``,
:data:`weatkit.scoring.base.STARTS`):

* ``bos-or-eos``: the text is tokenised *without* special tokens and one start token ``s`` is
  put in front of it: the one the tokenizer itself puts in front of a text where it puts one
  (Llama's ``<s>``, XGLM's ``</s>``: the context the model was trained with), else its BOS, else
  its EOS (GPT-2's and Qwen2's ``<|endoftext|>``; lm-evaluation-harness's prefix token for a
  ``loglikelihood`` with an empty context), else none (the first token then has no
  conditional: NaN);
* ``tokenizer``: the text as the tokenizer encodes it with its own special tokens (GEST's and
  EuroGEST's reference convention): the special tokens before the text (a BOS) are the start,
  those after it (an EOS some tokenizers append) are dropped;
* ``none``: the text tokenised *without* special tokens and nothing put in front of it (the
  first token has no conditional: NaN).

:func:`encode_causal` gives, per text, the ids with the start tokens, the character spans of
the text's own tokens and the number of start tokens; a text longer than the model takes is a
:class:`~weatkit.errors.TextTooLongError` naming every such text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from weatkit.errors import ModelError, TextTooLongError
from weatkit.scoring.base import DEFAULT_START, NO_START, STARTS

#: ``(ids with the start tokens, spans of the text's tokens, number of start tokens)``.
Encoded = tuple[list[int], list[tuple[int, int]], int]


def check_texts(texts: Sequence[str]) -> None:
    """A one-line :class:`~weatkit.errors.ModelError` for one string instead of a list, or an
    empty or non-text item (named by its index)."""
    if isinstance(texts, str):
        raise ModelError("give a list of texts, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ModelError(f"text {i} is empty or not text: {text!r}")


def fast_tokenizer(tokenizer: Any, model: str) -> Any:
    """``tokenizer`` when it is fast (it gives offsets), else a one-line ModelError."""
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"{model}: token spans need a fast tokenizer (offsets); this one is slow")
    return tokenizer


def start_token_id(tokenizer: Any) -> int | None:
    """The start token of ``bos-or-eos``: the one special token the tokenizer puts in front of
    a text, else BOS, else EOS, else None."""
    enc = tokenizer("a", add_special_tokens=True, return_special_tokens_mask=True)
    ids, special = enc["input_ids"], enc["special_tokens_mask"]
    if len(ids) > 1 and special[0] and not special[1]:
        return int(ids[0])
    for candidate in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return int(candidate)
    return None


def encode_causal(
    tokenizer: Any,
    texts: Sequence[str],
    start: str = DEFAULT_START,
    *,
    model: str,
    limit: int | None,
) -> list[Encoded]:
    """Each text's :data:`Encoded` under ``start`` (module docstring), length-checked against
    ``limit`` tokens (None: no limit); ``model`` names the model in errors."""
    check_texts(texts)
    if start not in STARTS:
        raise ModelError(f"unknown start {start!r}: choose {', '.join(STARTS)}")
    if not texts:
        return []
    tok = fast_tokenizer(tokenizer, model)
    own = start == "tokenizer"
    enc = tok(list(texts), add_special_tokens=own, return_offsets_mapping=True,
              return_special_tokens_mask=own)  # fmt: skip
    first = start_token_id(tok)
    lead = [] if own or start == NO_START or first is None else [first]
    out = []
    for i, (ids, spans) in enumerate(zip(enc["input_ids"], enc["offset_mapping"], strict=True)):
        special = enc["special_tokens_mask"][i] if own else [0] * len(ids)
        n_lead = next((j for j, flag in enumerate(special) if not flag), len(ids))
        content = [j for j in range(n_lead, len(ids)) if not special[j]]
        if not content:
            raise ModelError(f"text {i} gives no token: {texts[i]!r}")
        full = lead + [int(x) for x in ids[:n_lead]] + [int(ids[j]) for j in content]
        out.append((full, [(int(spans[j][0]), int(spans[j][1])) for j in content],
                    len(lead) + n_lead))  # fmt: skip
    long = [i for i, (full, _, _) in enumerate(out) if limit is not None and len(full) > limit]
    if long:
        i = long[0]
        more = f" (and {len(long) - 1} more)" if len(long) > 1 else ""
        raise TextTooLongError(
            f"text {i} is {len(out[i][0])} tokens long; {model} takes {limit}: "
            f"{texts[i][:60]!r}{more}",
            texts=tuple(texts[j] for j in long),
            limit=int(limit),
        )
    return out
