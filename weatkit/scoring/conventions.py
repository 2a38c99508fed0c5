"""What a model's scores actually include, recorded as they are served, so the output can say it.

A sentence's log-likelihood ``Σ_{i=1}^{n} log P(w_i | s, w_<i)`` has a first term,
``log P(w_1 | s)``, that only a backend which conditions the first token on a start token ``s``
can give. The ``hf`` and ``vllm`` backends put one in front (``start="bos-or-eos"``,
:mod:`weatkit.scoring.base`); an OpenAI-compatible server's echo gives the first token of a
prompt no value (``null``: llama.cpp's server always, vLLM's for a model without BOS), so the
measures sum without it. The two are **different measures**: on 30 CrowS-Pairs pairs with
SmolLM2-135M a sentence's sum moves by up to 18 nats and the likelihood difference from 6.04 to
5.17.

Every causal request that reads a text's first token (no ``read_from`` offset, a start other
than ``none``) is recorded here by :class:`weatkit.scoring.cache.CachedScorer`, cached or not:

``first_token``  ``included`` (every text's first token had a value), ``excluded`` (none had),
                 or ``excluded for K of N texts``.

``embedding``    how a model's embeddings pool a text: :data:`TEXT_TOKENS` for ``hf`` models
                 (start and special tokens left out), the server's own pooling for ``openai``
                 (llama.cpp's mean pooling averages every position, its BOS included), which
                 changes MBE's similarity weights.

:func:`recording` gives the conventions of one block (a command's scoring, a ``compare``
job), :func:`summarize` them per model spec for the manifests (``scoring_conventions``),
:func:`notes` one line per model that differs from ``hf:`` models, and ``compare`` checks that
no method's models differ in their first token (:func:`check_same_convention`): a correlation
across them would mix two measures.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from weatkit.errors import WeatkitError
from weatkit.scoring.base import NO_START, TokenLogprobs

INCLUDED = "included"
EXCLUDED = "excluded"

#: ``spec -> {"texts": texts read from their first token, "missing": of which without a first
#: value, "embedding": how its embeddings pool}``.
Counts = dict[str, dict[str, Any]]

#: How each backend's embeddings pool a text (:attr:`Scorer.embedding_pooling`, when a backend
#: says; ``hf`` models average the text's own tokens, start and special tokens left out).
TEXT_TOKENS = "mean of the text's tokens"

_OPEN: ContextVar[tuple[Counts, ...]] = ContextVar("weatkit_scoring_conventions", default=())


def record(spec: str, start: str, scored: Sequence[TokenLogprobs]) -> None:
    """Count the texts of ``scored`` (one call of ``causal_logprobs`` of model ``spec`` with
    ``start``, no ``read_from``) and those whose first token has no value (NaN)."""
    if start == NO_START:
        return
    texts = [s for s in scored if len(s.logprobs)]
    if not texts:
        return
    missing = sum(1 for s in texts if np.isnan(s.logprobs[0]))
    for counts in _OPEN.get():
        seen = counts.setdefault(spec, {})
        seen["texts"] = seen.get("texts", 0) + len(texts)
        seen["missing"] = seen.get("missing", 0) + missing


def record_embedding(spec: str, pooling: str) -> None:
    """Record how model ``spec``'s embeddings pool a text (``pooling``: :data:`TEXT_TOKENS`, or
    what a server says of its own)."""
    for counts in _OPEN.get():
        counts.setdefault(spec, {})["embedding"] = pooling


def first_token(n_texts: int, n_missing: int) -> str:
    """``included``, ``excluded`` or ``excluded for K of N texts`` (module docstring)."""
    if n_missing == 0:
        return INCLUDED
    if n_missing == n_texts:
        return EXCLUDED
    return f"{EXCLUDED} for {n_missing:,} of {n_texts:,} texts"


def summarize(counts: Counts) -> dict[str, dict[str, str]]:
    """``{spec: {"first_token": ..., "embedding": ...}}`` of recorded counts (each key where
    recorded)."""
    out: dict[str, dict[str, str]] = {}
    for spec, seen in sorted(counts.items()):
        entry = out.setdefault(spec, {})
        if "texts" in seen:
            entry["first_token"] = first_token(seen["texts"], seen["missing"])
        if "embedding" in seen:
            entry["embedding"] = seen["embedding"]
    return out


def notes(found: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per model of ``found`` (:func:`summarize`) whose scores left a term out or
    whose embeddings pool otherwise than ``hf:`` models' (to print after ``note:``)."""
    lines = []
    for spec, seen in found.items():
        if seen.get("first_token", INCLUDED) != INCLUDED:
            lines.append(
                f"{spec} gave no log-probability for the first token ({seen['first_token']}): "
                "sentence sums leave out log P(w_1 | start), which hf: and vllm: models "
                "include, so the two are different measures (manifest: scoring_conventions)"
            )
        if seen.get("embedding", TEXT_TOKENS) != TEXT_TOKENS:
            lines.append(
                f"{spec}'s embeddings are {seen['embedding']}, not the {TEXT_TOKENS} of hf: "
                "models, so MBE's similarity weights differ (manifest: scoring_conventions)"
            )
    return lines


@contextmanager
def recording() -> Iterator[Counts]:
    """The counts (:data:`Counts`) recorded inside the block."""
    counts: Counts = {}
    token = _OPEN.set((*_OPEN.get(), counts))
    try:
        yield counts
    finally:
        _OPEN.reset(token)


def check_same_convention(method: str, by_model: Mapping[str, str]) -> None:
    """A one-line :class:`WeatkitError` when the models of one method (``{model:
    first_token}``) were scored under different conventions (module docstring)."""
    kinds = {value if value in (INCLUDED, EXCLUDED) else "mixed" for value in by_model.values()}
    if len(kinds) <= 1:
        return
    listed = ", ".join(f"{model} (first token {value})" for model, value in by_model.items())
    raise WeatkitError(
        f"{method}: the models' sentence scores are different measures: {listed}; score them "
        "through backends that agree (docs/guides/backends.md, 'One number whatever the path')"
    )
