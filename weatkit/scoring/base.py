"""What every model backend offers: :class:`Scorer` and the shape of its answers.

A causal LM scores a text ``t`` split by its own tokenizer into tokens ``w_1 … w_n`` as

.. math:: \\log P(t) = \\sum_{i=1}^{n} \\log P(w_i \\mid w_{<i}),

each term one entry of :attr:`TokenLogprobs.logprobs`. A backend that conditions the first token
on a beginning-of-sequence token gives its log-probability; one that cannot (no BOS, or a server
that returns ``null`` for the first prompt token) gives NaN there, and measures sum with
``nansum`` over the tokens they read (lm-evaluation-harness's ``loglikelihood`` does the same:
the first token of a context is never scored).

Where a text starts is the caller's ``start`` (:data:`STARTS`):

* ``bos-or-eos`` (the default): after one start token, the tokenizer's BOS, else its EOS
  (lm-evaluation-harness's ``loglikelihood`` of a text after an empty context), so every token
  has a conditional where the backend can put one there (CrowS-Pairs, MBE);
* ``tokenizer``: as the model's tokenizer encodes the text on its own, with the special tokens
  it puts in front (Llama's BOS; none for GPT-2, whose first token then has no conditional);
  the convention of GEST's and EuroGEST's reference code;
* ``none`` (:data:`NO_START`): the text's own tokens only, no start token in front, so token
  ``i ≥ 2`` is scored as ``log P(w_i | w_1 … w_{i−1})`` and the first token has no conditional:
  NaN, as a server's first token (StereoSet's reference ``eval_generative_models.py`` scores the
  later tokens of a sentence this way).

A server encodes a text prompt the ``tokenizer`` way whatever ``start`` says (its tokenizer adds
the BOS its model asks for), and the OpenAI completions API has no way to leave that BOS out,
so the ``openai`` backend refuses ``none``; ``start`` is part of the cache key all the same.

Backends differ in tokenisation, so token strings and character offsets come with the numbers:
a measure that scores only some tokens of a text (CrowS-Pairs' shared tokens, the continuation
of a GEST template) selects them by character span, never by a token index of another tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from weatkit.errors import TextTooLongError
from weatkit.scoring.spec import ModelSpec

#: What a backend can be asked: ``causal`` (:meth:`Scorer.causal_logprobs`) and ``embed``
#: (:meth:`Scorer.embed`).
CAPABILITIES = ("causal", "embed")
#: Where a scored text starts (module docstring): after BOS else EOS, as the tokenizer encodes
#: it, or with no start token.
STARTS = ("bos-or-eos", "tokenizer", "none")
DEFAULT_START = "bos-or-eos"
#: The start with no start token: the first token of a text has no log-probability (NaN).
NO_START = "none"


@dataclass(frozen=True)
class TokenLogprobs:
    """The tokens of one text and the log-probability of each given the ones before it.

    Attributes:
        text: the text scored.
        tokens: the tokens as the backend's tokenizer wrote them (display only).
        offsets: ``(start, end)`` character span of each token in ``text`` (a token that adds
            text, such as BOS, has an empty span ``(0, 0)`` and is not listed).
        logprobs: float64 array, ``log P(w_i | w_<i)`` in nats, NaN where the backend gives no
            conditional (the first token without BOS, or scored with ``start="none"``).
    """

    text: str
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    logprobs: np.ndarray

    def __post_init__(self) -> None:
        if not len(self.tokens) == len(self.offsets) == len(self.logprobs):
            raise ValueError(
                f"{len(self.tokens)} tokens, {len(self.offsets)} offsets and "
                f"{len(self.logprobs)} log-probabilities for {self.text!r}"
            )

    def total(self) -> float:
        """``Σ_i log P(w_i | w_<i)`` over the tokens that have a conditional (NaN skipped)."""
        return float(np.nansum(self.logprobs))

    def within(self, start: int, end: int) -> np.ndarray:
        """A boolean mask of the tokens whose span lies inside ``[start, end)`` of the text."""
        spans = np.asarray(self.offsets, dtype=np.int64).reshape(-1, 2)
        return (spans[:, 0] >= start) & (spans[:, 1] <= end) & (spans[:, 1] > spans[:, 0])


#: What :meth:`Scorer.causal_logprobs` calls as its results arrive: ``(indices into the texts,
#: their results)``, once per batch or request (the on-disk cache writes them as they come).
OnScored = Callable[[list[int], list[TokenLogprobs]], None]


@runtime_checkable
class Scorer(Protocol):
    """One model reached through one backend.

    Attributes:
        spec: the model spec it was made from.
        identity: what cache keys use: the commit of a hub revision, a content hash of a local
            directory, or the server's base URL with the model name (never an API key).
        capabilities: the subset of :data:`CAPABILITIES` this model offers.
    """

    spec: ModelSpec
    identity: str
    capabilities: frozenset[str]

    def causal_logprobs(
        self,
        texts: Sequence[str],
        *,
        show_progress: bool | None = None,
        start: str = DEFAULT_START,
        read_from: Sequence[int] | None = None,
        on_scored: OnScored | None = None,
    ) -> list[TokenLogprobs]:
        """Per-token log-probabilities of each text under a causal LM, in the input order
        (``show_progress``: a progress bar where the backend has one; None: on a terminal;
        ``start``: one of :data:`STARTS`, module docstring). A backend that knows its model's
        length raises :class:`~weatkit.errors.TextTooLongError` naming every text too long.

        ``read_from``: per text, a character offset; the caller reads only the tokens whose
        span ends after it (GEST's word after its prefix), and a backend may give NaN for the
        others (the hf backend then runs its LM head at the positions read only; a server
        scores every token all the same). None: every token.

        ``on_scored``: called in the calling thread with ``(indices, results)`` as soon as a
        batch of texts (a forward pass, a request, an engine call) is done, before the call
        returns; every index of ``texts`` is in exactly one call (a text no batch needs, such as
        an empty one, in a call of its own). What it was given stays valid when the call then
        fails, so a caller keeps what was scored before the failure
        (:class:`weatkit.scoring.cache.CachedScorer`)."""
        ...

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """One float32 vector per text, shape ``(len(texts), dim)``, in the input order."""
        ...


def logprobs_by_text(
    scorer: Scorer,
    texts: Sequence[str],
    *,
    start: str = DEFAULT_START,
    show_progress: bool | None = None,
    read_from: Mapping[str, int] | None = None,
) -> tuple[dict[str, TokenLogprobs], dict[str, str]]:
    """``{text: TokenLogprobs}`` of the distinct ``texts``, and ``{text: reason}`` of those the
    model cannot take (``longer than the model's N tokens``, from a
    :class:`~weatkit.errors.TextTooLongError`), which are left out instead of failing the call.
    ``read_from``: ``{text: character offset}``, the :meth:`Scorer.causal_logprobs` argument of
    each text (None: every token is read)."""
    todo = list(dict.fromkeys(texts))
    skipped: dict[str, str] = {}

    def score(todo: list[str]) -> list[TokenLogprobs]:
        since = {} if read_from is None else {"read_from": [read_from[text] for text in todo]}
        return scorer.causal_logprobs(todo, show_progress=show_progress, start=start, **since)

    try:
        scored = score(todo)
    except TextTooLongError as err:
        skipped = dict.fromkeys(err.texts, f"longer than the model's {err.limit} tokens")
        todo = [text for text in todo if text not in skipped]
        scored = score(todo)
    return dict(zip(todo, scored, strict=True)), skipped
