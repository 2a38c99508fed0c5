"""The ``openai`` backend: any OpenAI-compatible server through the official ``openai`` SDK.

Causal scores come from ``POST /v1/completions`` with ``echo=true`` and ``logprobs=1``: the
server returns the prompt's tokens, the character offset of each in the prompt and

.. math:: \\ell_i = \\log P(w_i \\mid w_{<i})

for each (``null`` for the first token, read as NaN). ``max_tokens=1`` (lm-evaluation-harness's
choice: vLLM refuses 0, llama-cpp-python reads 0 as "until the context is full"); the one generated
token starts at the prompt's end and is dropped. The server encodes the text prompt with the
special tokens its model asks for (the ``tokenizer`` start of
:data:`weatkit.scoring.base.STARTS`), and nothing in the request can leave them out: a pass with
no start token (``start="none"``) would need a token-id prompt, and the ids of the model's
tokenizer, which the OpenAI API does not give (llama-cpp-python's server also refuses token-id
prompts), so ``none`` is refused before any request. Embeddings come from ``POST /v1/embeddings``,
several texts per request.

Requests run ``concurrency`` at a time; the SDK retries 408/409/429/5xx answers and connection
errors ``max_retries`` times with exponential backoff (or the server's ``Retry-After``). The first
request that fails for good ends the call: no other request of it is sent after that, retries
included. The texts answered are counted by :func:`weatkit.progress.progress`. The API
key is read from ``$WEATKIT_OPENAI_API_KEY``, else ``$OPENAI_API_KEY``, else a placeholder that
local servers accept; it goes into the ``Authorization`` header and nowhere else (not the
identity, repr, logs, manifests or cache keys). Every failure is one
:class:`~weatkit.errors.ModelError` line naming the model spec (an answer that is not JSON: the
URL and method of the request too).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy as np
import openai

from weatkit.errors import ConfigError, ModelError, WeatkitError
from weatkit.progress import progress
from weatkit.scoring.base import DEFAULT_START, NO_START, STARTS, OnScored, TokenLogprobs
from weatkit.scoring.options import OpenAIOptions
from weatkit.scoring.probe import Echo, ServerProbe, probe_server
from weatkit.scoring.spec import ModelSpec

#: Where the API key is read from, first match wins.
API_KEY_VARIABLES = ("WEATKIT_OPENAI_API_KEY", "OPENAI_API_KEY")
#: The key sent when no variable is set (local servers ignore it; the SDK needs one).
NO_KEY = "EMPTY"
_MESSAGE_CHARS = 200
#: ``/v1/models`` fields left out of the identity: the name, dates and vLLM's permission
#: entries (new ids and times on every request).
_NOT_FINGERPRINT = frozenset({"id", "object", "created", "owned_by", "permission", "permissions"})
_NO_LOGPROBS = (
    "the server gives no prompt log-probabilities (/v1/completions with echo and logprobs), "
    "which causal scores need; start it with them (llama.cpp: --logits_all True) or use "
    "another server"
)

T = TypeVar("T")
R = TypeVar("R")


#: The stop flag of the :meth:`OpenAIScorer._map` call whose chunk this thread runs.
_STOP: ContextVar[threading.Event | None] = ContextVar("weatkit_openai_stop", default=None)


class _Stopped(Exception):
    """A request of a call that already failed for good, not sent."""


def _refuse_when_stopped(request: object) -> None:
    """The HTTP client's hook before every request, retries included: raise :class:`_Stopped`
    once the call it belongs to has failed (:meth:`OpenAIScorer._map`)."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise _Stopped


def api_key() -> str:
    """The key of the first set variable of :data:`API_KEY_VARIABLES`, else :data:`NO_KEY`."""
    for name in API_KEY_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    return NO_KEY


class OpenAIScorer:
    """One model served by an OpenAI-compatible server (see the module docstring).

    Making one lists the server's models (``GET /v1/models``): a server that is down, refuses
    the key or does not serve the model fails here, before any text is scored.
    """

    def __init__(self, spec: ModelSpec, options: object | None = None) -> None:
        if spec.backend != "openai" or spec.base_url is None:
            raise ConfigError(f"{spec}: not an openai:BASE_URL#MODEL spec")
        self.spec = spec
        self.options = OpenAIOptions.of(options)
        self.options.validate()
        self.capabilities = frozenset({"causal", "embed"})
        #: How ``/v1/embeddings`` pools a text: the server's choice (llama.cpp's mean pooling
        #: averages every position, its BOS included), recorded with the scores.
        self.embedding_pooling = "the server's own pooling"
        self._client = openai.OpenAI(
            api_key=api_key(),
            base_url=spec.base_url,
            timeout=self.options.timeout,
            max_retries=self.options.max_retries,
            http_client=openai.DefaultHttpxClient(event_hooks={"request": [_refuse_when_stopped]}),
        )
        self.identity = f"{spec}{self._served_fingerprint()}"
        self._probe: ServerProbe | None = None

    def probe(self) -> ServerProbe:
        """What the server computes (:func:`weatkit.scoring.probe.probe_server`), asked once per
        scorer, before its first causal request: a server whose echo is not aligned with its
        tokens is a one-line :class:`ModelError` here; the probe's ``first_token`` and
        ``fingerprint`` go into the scores' manifest and the cache key."""
        if self._probe is None:
            self._probe = probe_server(str(self.spec), self._complete_one)
        return self._probe

    def _complete_one(self, prompt: str, echo: bool) -> Any:
        """The ``logprobs`` of one greedy ``max_tokens=1, logprobs=1`` completion of ``prompt``."""
        response = self._call(
            lambda: self._client.completions.create(
                model=self.spec.model,
                prompt=prompt,
                echo=echo,
                logprobs=1,
                max_tokens=1,
                temperature=0.0,
            ),
            "POST /completions",
            causal=True,
        )
        with self._reading("POST /completions"):
            if not response.choices or response.choices[0].logprobs is None:
                raise ModelError(f"{self.spec}: {_NO_LOGPROBS}")
            return response.choices[0].logprobs

    def __repr__(self) -> str:
        return f"OpenAIScorer({str(self.spec)!r})"

    def _served_fingerprint(self) -> str:
        """``@`` and a hash of what ``/v1/models`` says of the model beyond its name and dates
        (vLLM: ``root``, ``max_model_len``; llama.cpp's C++ server: ``meta``, its parameter
        count, vocabulary and size), or ``""``. A server without
        ``/v1/models`` is trusted to serve the model; one that lists others is refused."""
        served = self._call(self._list_models, "GET /models")
        if served is None:
            return ""
        with self._reading("GET /models"):
            by_id = {entry.id: entry.model_dump() for entry in served}
            if not all(isinstance(name, str) for name in by_id):
                raise TypeError("a model without a string id")
        if self.spec.model not in by_id:
            listed = ", ".join(sorted(by_id)[:10]) or "none"
            raise ModelError(
                f"{self.spec}: the server does not serve model {self.spec.model!r} "
                f"(it serves: {listed})"
            )
        extra = {
            key: value
            for key, value in by_id[self.spec.model].items()
            if key not in _NOT_FINGERPRINT and value not in (None, "", [], {})
        }
        if not extra:
            return ""
        digest = hashlib.sha256(json.dumps(extra, sort_keys=True, default=str).encode())
        return "@" + digest.hexdigest()[:12]

    def _list_models(self) -> list[Any] | None:
        """The entries of ``GET /v1/models``, None where the server has no such endpoint."""
        with self._reading("GET /models"):
            try:
                return list(self._client.models.list())
            except openai.NotFoundError:
                return None

    def _call(self, request: Callable[[], T], endpoint: str, *, causal: bool = False) -> T:
        """``request()``, its SDK errors turned into one :class:`ModelError` line each, and an
        answer that is not JSON into one naming the server and ``endpoint`` (``POST
        /completions``); with ``causal``, a refusal that names log-probabilities or echo says
        the server lacks them."""
        try:
            return request()
        except json.JSONDecodeError as exc:
            raise self._not_openai(endpoint, f"malformed JSON ({exc})") from None
        except openai.OpenAIError as exc:
            message = self._explain(exc)
            if causal and isinstance(exc, openai.APIStatusError):
                said = _message(exc).lower()
                if "logprob" in said or "echo" in said:
                    message = f"{_NO_LOGPROBS} ({message})"
            raise ModelError(f"{self.spec}: {message}") from None

    @contextmanager
    def _reading(self, endpoint: str) -> Iterator[None]:
        """Reading an answer of ``endpoint``: JSON of another shape than the OpenAI API's
        (``{}``, ``[]``, ``null``, a field missing or of another type) is one
        :class:`ModelError` line naming the server and the endpoint, as malformed JSON is."""
        try:
            yield
        except (WeatkitError, json.JSONDecodeError):  # the SDK's own reading: in _call
            raise
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            what = f"JSON of another shape ({type(exc).__name__}: {' '.join(str(exc).split())})"
            raise self._not_openai(endpoint, what) from None

    def _not_openai(self, endpoint: str, what: str) -> ModelError:
        """``SPEC: POST URL/completions answered WHAT; is it an OpenAI-compatible server?``"""
        method, _, path = endpoint.partition(" ")
        return ModelError(
            f"{self.spec}: {method} {self.spec.base_url}{path} answered {what}; is it an "
            "OpenAI-compatible server?"
        )

    def _explain(self, exc: openai.OpenAIError) -> str:
        """What went wrong, in words, for one SDK error (after the SDK's retries)."""
        n = self.options.max_retries
        retries = f"after {n} {'retry' if n == 1 else 'retries'}"
        if isinstance(exc, openai.APITimeoutError):
            return (
                f"no answer within the {self.options.timeout:g} s timeout ({retries}); "
                "raise the timeout or lower the concurrency"
            )
        if isinstance(exc, openai.APIConnectionError):
            return (
                f"cannot connect to {self.spec.base_url} ({retries}): {_cause(exc)}; "
                "is the server running?"
            )
        if isinstance(exc, openai.AuthenticationError):
            return (
                f"the server refused the API key (401): set ${API_KEY_VARIABLES[0]} "
                f"or ${API_KEY_VARIABLES[1]}"
            )
        if isinstance(exc, openai.PermissionDeniedError):
            return "the API key may not use this model (403)"
        if isinstance(exc, openai.NotFoundError):
            return (
                f"not found on the server (404): {_message(exc)}; check the base URL (…/v1) "
                "and the model name"
            )
        if isinstance(exc, openai.RateLimitError):
            return (
                f"rate limited (429) {retries}: {_message(exc)}; lower the concurrency or "
                "raise max_retries"
            )
        if isinstance(exc, openai.InternalServerError):
            return f"server error ({exc.status_code}) {retries}: {_message(exc)}"
        if isinstance(exc, openai.APIStatusError):
            return f"the server refused the request ({exc.status_code}): {_message(exc)}"
        return " ".join(str(exc).split())

    def _map(
        self,
        fn: Callable[[Sequence[T]], list[R]],
        items: Sequence[T],
        size: int,
        on_chunk: Callable[[int, list[R]], None] | None = None,
        *,
        desc: str,
        show_progress: bool | None,
    ) -> list[R]:
        """``fn`` over consecutive chunks of ``size`` items, :attr:`OpenAIOptions.concurrency`
        chunks in flight; the results concatenated in the input order. ``on_chunk(first,
        results)`` (``first``: the chunk's first index in ``items``), in this thread, as each
        chunk is answered; the items answered are counted by :func:`weatkit.progress.progress`
        (``desc``, ``show_progress``).

        The first chunk that fails for good (after its retries) ends the call with its error:
        from then on no request of the call is sent, not even a retry of one in flight
        (:func:`_refuse_when_stopped`); chunks answered meanwhile still reach ``on_chunk``."""
        chunks = {i: items[i : i + size] for i in range(0, len(items), size)}
        answered: dict[int, list[R]] = {}
        stop = threading.Event()
        failures: list[BaseException] = []

        def run(chunk: Sequence[T]) -> list[R]:
            token = _STOP.set(stop)
            try:
                return fn(chunk)
            except _Stopped:
                raise
            except BaseException as exc:
                failures.append(exc)
                stop.set()
                raise
            finally:
                _STOP.reset(token)

        with progress(total=len(items), desc=desc, unit="text", show=show_progress) as bar:

            def keep(first: int, results: list[R]) -> None:
                answered[first] = results
                bar.update(len(results))
                if on_chunk is not None:
                    on_chunk(first, results)

            if len(chunks) <= 1:
                for first, chunk in chunks.items():
                    keep(first, fn(chunk))
            else:
                with ThreadPoolExecutor(min(self.options.concurrency, len(chunks))) as pool:
                    futures = {pool.submit(run, chunk): first for first, chunk in chunks.items()}
                    try:
                        for future in as_completed(futures):
                            if future.exception() is None:
                                keep(futures[future], future.result())
                    finally:  # an interrupt too: nothing more is sent
                        stop.set()
                        for future in futures:
                            future.cancel()
        if failures:
            raise failures[0]
        return [r for first in chunks for r in answered[first]]

    def causal_logprobs(
        self,
        texts: Sequence[str],
        *,
        show_progress: bool | None = None,
        start: str = DEFAULT_START,
        read_from: Sequence[int] | None = None,
        on_scored: OnScored | None = None,
    ) -> list[TokenLogprobs]:
        """Per-token log-probabilities of each text (see the module docstring); an empty text
        has no tokens and is not sent. ``show_progress``: the texts answered, as
        :func:`weatkit.progress.progress` shows them. ``start``: the server encodes each
        prompt as its model's tokenizer does (the ``tokenizer`` start of
        :data:`weatkit.scoring.base.STARTS`); ``none`` is a one-line :class:`ModelError` (module
        docstring). ``read_from`` is accepted too: the
        server scores every prompt token. ``on_scored`` gets each request's texts as it is
        answered (:meth:`weatkit.scoring.base.Scorer.causal_logprobs`)."""
        if start not in STARTS:
            raise ModelError(f"unknown start {start!r}: choose {', '.join(STARTS)}")
        if start == NO_START:
            raise ModelError(
                f"{self.spec}: an OpenAI-compatible server cannot score a text without its start "
                "token (start 'none': the completions API encodes a text prompt with the "
                "model's special tokens); use an hf: or vllm: model"
            )
        where = [i for i, text in enumerate(texts) if text]  # of the texts sent
        if where:
            self.probe()
        empty = TokenLogprobs("", (), (), np.zeros(0))
        if on_scored is not None and len(where) < len(texts):
            blank = [i for i, text in enumerate(texts) if not text]
            on_scored(blank, [empty] * len(blank))

        def answered(first: int, scored: list[TokenLogprobs]) -> None:
            if on_scored is not None:
                on_scored(where[first : first + len(scored)], scored)

        sent = [texts[i] for i in where]
        scored = iter(
            self._map(
                self._causal_chunk,
                sent,
                self.options.prompts_per_request,
                answered,
                desc=f"token log-probabilities with {self.spec.short_name}",
                show_progress=show_progress,
            )
        )
        return [next(scored) if text else empty for text in texts]

    def _causal_chunk(self, texts: Sequence[str]) -> list[TokenLogprobs]:
        response = self._call(
            lambda: self._client.completions.create(
                model=self.spec.model,
                prompt=texts[0] if len(texts) == 1 else list(texts),
                echo=True,
                logprobs=1,
                max_tokens=1,
                temperature=0.0,
            ),
            "POST /completions",
            causal=True,
        )
        with self._reading("POST /completions"):
            choices = sorted(response.choices, key=lambda choice: choice.index)
            if len(choices) != len(texts):
                raise ModelError(
                    f"{self.spec}: {len(texts)} prompts sent, {len(choices)} answers received"
                )
            return [self._token_logprobs(text, choice.logprobs) for text, choice in zip(
                texts, choices, strict=True)]

    def _token_logprobs(self, text: str, logprobs: Any) -> TokenLogprobs:
        """The prompt's entries of a ``logprobs`` object (:class:`weatkit.scoring.probe.Echo`:
        the generated token and empty-span tokens such as BOS dropped), ``null`` as NaN."""
        if (
            not getattr(logprobs, "text_offset", None)
            or getattr(logprobs, "token_logprobs", None) is None
            or getattr(logprobs, "tokens", None) is None
        ):
            raise ModelError(f"{self.spec}: {_NO_LOGPROBS}")
        echo = Echo.of(text, logprobs)
        values = [math.nan if v is None else v for v in echo.values]
        return TokenLogprobs(text, echo.tokens, echo.spans, np.array(values, np.float64))

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """One float32 vector per text from ``/v1/embeddings``, shape ``(len(texts), dim)``
        (``show_progress``: as :meth:`causal_logprobs`)."""
        rows = self._map(
            self._embed_chunk,
            list(texts),
            self.options.batch_size,
            desc=f"embeddings with {self.spec.short_name}",
            show_progress=show_progress,
        )
        if not rows:
            return np.zeros((0, 0), np.float32)
        dims = {len(row) for row in rows}
        if len(dims) != 1:
            raise ModelError(f"{self.spec}: embeddings of different sizes {sorted(dims)}")
        return np.asarray(rows, dtype=np.float32)

    def _embed_chunk(self, texts: Sequence[str]) -> list[list[float]]:
        response = self._call(
            lambda: self._client.embeddings.create(
                model=self.spec.model, input=list(texts), encoding_format="float"
            ),
            "POST /embeddings",
        )
        with self._reading("POST /embeddings"):
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(texts):
                raise ModelError(
                    f"{self.spec}: {len(texts)} texts sent, {len(data)} embeddings received"
                )
            rows = [item.embedding for item in data]
            if any(row and isinstance(row[0], list) for row in rows):
                raise ModelError(
                    f"{self.spec}: the server returned one vector per token, not per text; "
                    "start it with a pooling type (llama.cpp: --pooling mean)"
                )
            return [[float(x) for x in row] for row in rows]


def _message(exc: openai.APIStatusError) -> str:
    """The server's error message, at most :data:`_MESSAGE_CHARS` characters."""
    body = exc.body
    if isinstance(body, dict):
        body = body.get("message") or body.get("error") or body.get("detail") or body
        if isinstance(body, dict):
            body = body.get("message", body)
    text = " ".join(str(body if body is not None else exc.message).split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def _cause(exc: BaseException) -> str:
    """The innermost cause's message (``[Errno 111] Connection refused``)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return " ".join(str(exc).split()) or type(exc).__name__


def make_scorer(spec: ModelSpec, options: object | None = None) -> OpenAIScorer:
    """The registry's entry point: :class:`OpenAIScorer` of ``spec`` under ``options`` (an
    :class:`~weatkit.scoring.options.OpenAIOptions`, or any object with its server fields, such
    as the :class:`~weatkit.embeddings.contextual.ContextualOptions` of a command; None for the
    defaults)."""
    return OpenAIScorer(spec, options)
