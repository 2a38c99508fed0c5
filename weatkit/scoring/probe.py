"""What a server computes, checked before it scores anything: the probe of the ``openai`` backend.

A server's echoed log-probabilities (``/v1/completions`` with ``echo=true, logprobs=1``) are only
usable if every token is paired with *its own* conditional. llama-cpp-python 0.3's server, for a
model that adds no BOS, pairs each echoed token with the log-probability of the token after it
(its ``_create_completion`` reads score row ``i`` for token ``i`` and drops only a BOS it finds):
the numbers look like log-probabilities and are wrong. Nothing in ``/v1/models`` tells the two
apart, so :func:`probe_server` asks the server three questions about one fixed text ``p``
(:data:`PROBE_TEXT`) and checks the invariants any causal LM's echo satisfies:

1. **generated = echoed.** Request A generates one token ``g`` after ``p`` (``echo=false``,
   greedy) and gives ``a = log P(g | p)``; request B echoes ``p + g``. The echoed value ``b`` of
   the token at ``len(p)`` must equal ``a``: both are ``log P(g | p)``. A server that pairs a
   token with the next one's value echoes ``log P(g | p, g)`` instead. Tolerance
   :data:`ALIGN_TOLERANCE` nats (kernels differ between one forward pass over ``p`` and one
   over ``p + g``; a misaligned value differs by nats).
2. **Appending text changes no earlier value.** Request C echoes ``p`` alone; its values must
   equal B's for the same tokens (:data:`PREFIX_TOLERANCE`).
3. **Spans tile the prompt.** Each echoed token starts where the one before ends, from 0 up to
   the end of the prompt.

A server that fails is refused with one line naming the likely cause and the fix. Where B's
tokens do not split at ``len(p)`` (a tokenizer that merges ``g`` with the text before it),
check 1 cannot be made and is reported as ``not checked``, not passed.

The probe also says what the server measures, for the scores' manifest and the cache key:

* ``first_token``: ``excluded`` when C's first token has no value (``null``, as the OpenAI API
  and llama.cpp's echo give it), else ``included``;
* ``fingerprint``: a hash of C's and B's token strings and of their values rounded to
  :data:`FINGERPRINT_DECIMALS` decimals, so a server that changed its model, quantization or
  flags on the same URL and model name gets other cache entries (rounding keeps a server's
  entries across runs whose kernels differ in the last bits; a value near a rounding edge can
  give a new fingerprint, which costs a rescoring, never another server's numbers).

It costs three short requests per scorer (measured in BENCHMARKS.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from weatkit.errors import ModelError

#: The text every server is probed with: short, common words, a continuation most models agree
#: on, no leading space.
PROBE_TEXT = "The capital of France is"
#: Largest difference (nats) between the generated and the echoed log P(g | p) of an aligned
#: server (measured on llama.cpp with SmolLM2: below 1e-4; a misaligned server: several nats).
ALIGN_TOLERANCE = 0.05
#: Largest difference (nats) of a token's value with and without text appended after it.
PREFIX_TOLERANCE = 0.05
#: Decimals of the values hashed into the fingerprint.
FINGERPRINT_DECIMALS = 2
#: What the docs say about starting llama.cpp's server so its echo is aligned.
FIX = (
    "llama.cpp's server pairs each echoed token with the next token's log-probability when the "
    "model adds no BOS: start it with --kv_overrides tokenizer.ggml.add_bos_token=bool:true "
    "(docs/guides/backends.md, 'Servers')"
)

#: ``complete(prompt, echo)`` -> the ``logprobs`` object of the answer's one choice (``tokens``,
#: ``text_offset``, ``token_logprobs``), with ``max_tokens=1``, ``logprobs=1``, greedy.
Complete = Callable[[str, bool], Any]


@dataclass(frozen=True)
class Echo:
    """The prompt's part of one echoed ``logprobs`` object: each token, its character span
    (from its offset to the next token's, the last to the prompt's end) and its value (None for
    ``null``); the generated token (at the prompt's end) and empty-span tokens (BOS) left out.
    The ``openai`` backend reads every answer this way."""

    tokens: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    values: tuple[float | None, ...]

    @classmethod
    def of(cls, prompt: str, logprobs: Any) -> Echo:
        offsets = list(getattr(logprobs, "text_offset", None) or [])
        values = getattr(logprobs, "token_logprobs", None) or []
        tokens = getattr(logprobs, "tokens", None) or []
        n = sum(1 for start in offsets if start < len(prompt))
        ends = [*offsets[1:n], len(prompt)]
        keep = [i for i in range(n) if ends[i] > offsets[i]]
        return cls(
            tuple(tokens[i] for i in keep),
            tuple((offsets[i], ends[i]) for i in keep),
            tuple(values[i] if i < len(values) else None for i in keep),
        )

    @property
    def offsets(self) -> tuple[int, ...]:
        """Where each token starts."""
        return tuple(start for start, _ in self.spans)

    def tiles(self) -> bool:
        """Whether the spans start at 0 and each starts after the one before."""
        starts = list(self.offsets)
        return bool(starts) and starts[0] == 0 and starts == sorted(set(starts))


@dataclass(frozen=True)
class ServerProbe:
    """What :func:`probe_server` found.

    Attributes:
        first_token: ``included`` or ``excluded`` (the server gives no value for a text's
            first token).
        fingerprint: 12 hex digits of what the server computed for the probe.
        aligned: ``checked`` or ``not checked`` (the generated token merged with the text).
        seconds: what the probe took.
    """

    first_token: str
    fingerprint: str
    aligned: str
    seconds: float


def probe_server(name: str, complete: Complete) -> ServerProbe:
    """Probe the server behind ``complete`` (module docstring); ``name`` (the model spec) starts
    every error. Raises a one-line :class:`ModelError` when an invariant fails."""
    began = time.perf_counter()
    alone = Echo.of(PROBE_TEXT, complete(PROBE_TEXT, True))
    generated = complete(PROBE_TEXT, False)
    tokens = list(getattr(generated, "tokens", None) or [])
    values = list(getattr(generated, "token_logprobs", None) or [])
    if not tokens or not values or values[0] is None or not tokens[0]:
        raise ModelError(f"{name}: the server gives no log-probability for a generated token")
    token, value = tokens[0], float(values[0])
    joined = PROBE_TEXT + token
    echoed = Echo.of(joined, complete(joined, True))
    for echo, text in ((alone, PROBE_TEXT), (echoed, joined)):
        if not echo.tiles():
            raise ModelError(
                f"{name}: the echoed tokens of the probe {text!r} do not tile it (offsets "
                f"{list(echo.offsets)}); the server's echo cannot be read token by token"
            )
    _check_prefix(name, alone, echoed)
    aligned = "not checked"
    if len(PROBE_TEXT) in echoed.offsets:
        at = echoed.offsets.index(len(PROBE_TEXT))
        got = echoed.values[at]
        if got is None or not math.isfinite(got) or abs(got - value) > ALIGN_TOLERANCE:
            raise ModelError(
                f"{name}: the server's echoed log-probabilities are not those of their tokens "
                f"(probe: log P({token!r} | {PROBE_TEXT!r}) is {value:.3f} generated, "
                f"{_show(got)} echoed); {FIX}"
            )
        aligned = "checked"
    first = "excluded" if alone.values[0] is None else "included"
    payload = [[list(e.tokens), [_rounded(v) for v in e.values]] for e in (alone, echoed)]
    digest = hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()[:12]
    return ServerProbe(first, digest, aligned, time.perf_counter() - began)


def _check_prefix(name: str, alone: Echo, echoed: Echo) -> None:
    """Check 2 of the module docstring: C's values are B's for the tokens they share."""
    shared = _shared_prefix(alone, echoed)
    for i in range(shared):
        a, b = alone.values[i], echoed.values[i]
        if a is None or b is None:
            continue
        if abs(a - b) > PREFIX_TOLERANCE:
            raise ModelError(
                f"{name}: the log-probability of probe token {i} ({alone.tokens[i]!r}) changes "
                f"from {a:.3f} to {b:.3f} when text is appended after it; a causal LM's "
                "values depend on the tokens before them only"
            )


def _shared_prefix(a: Echo, b: Echo) -> int:
    """How many leading tokens ``a`` and ``b`` share (same string and offset), but the last
    of ``a`` (the appended text may merge with it)."""
    n = 0
    for x, y in zip(zip(a.tokens, a.offsets, strict=True), zip(b.tokens, b.offsets, strict=True),
                    strict=False):  # fmt: skip
        if x != y:
            break
        n += 1
    return min(n, len(a.tokens) - 1)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), FINGERPRINT_DECIMALS)


def _show(value: float | None) -> str:
    return "null" if value is None else f"{value:.3f}"
