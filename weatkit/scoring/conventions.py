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

:func:`conventions` gives them per model spec for the manifests (``scoring_conventions``),
:func:`notes` one line per model whose first token was left out, and :func:`recording` the
conventions of one block (a ``compare`` job's record), which ``compare`` checks so that no
correlation mixes the two measures (:func:`check_same_convention`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from weatkit.errors import WeatkitError
from weatkit.scoring.base import NO_START, TokenLogprobs

INCLUDED = "included"
EXCLUDED = "excluded"

#: ``spec -> [texts read from their first token, of which without a first value]``.
Counts = dict[str, list[int]]

_PROCESS: Counts = {}
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
    for counts in (_PROCESS, *_OPEN.get()):
        seen = counts.setdefault(spec, [0, 0])
        seen[0] += len(texts)
        seen[1] += missing


def first_token(n_texts: int, n_missing: int) -> str:
    """``included``, ``excluded`` or ``excluded for K of N texts`` (module docstring)."""
    if n_missing == 0:
        return INCLUDED
    if n_missing == n_texts:
        return EXCLUDED
    return f"{EXCLUDED} for {n_missing:,} of {n_texts:,} texts"


def summarize(counts: Mapping[str, Sequence[int]]) -> dict[str, dict[str, str]]:
    """``{spec: {"first_token": ...}}`` of recorded counts."""
    return {spec: {"first_token": first_token(*seen)} for spec, seen in sorted(counts.items())}


def conventions() -> dict[str, dict[str, str]]:
    """What every model scored in this process gave (:func:`summarize`)."""
    return summarize(_PROCESS)


def notes(found: Mapping[str, Mapping[str, str]] | None = None) -> list[str]:
    """One line per model of ``found`` (default: :func:`conventions`) whose first token was
    left out (to print after ``note:``)."""
    found = conventions() if found is None else found
    return [
        f"{spec} gave no log-probability for the first token ({seen['first_token']}): "
        "sentence sums leave out log P(w_1 | start), which hf: and vllm: models include, so "
        "the two are different measures (manifest: scoring_conventions)"
        for spec, seen in found.items()
        if seen.get("first_token", INCLUDED) != INCLUDED
    ]


@contextmanager
def recording() -> Iterator[Counts]:
    """The counts (``spec -> [texts, without a first value]``) recorded inside the block."""
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
