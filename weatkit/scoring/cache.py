"""The on-disk cache of causal scores: every :class:`~weatkit.scoring.base.Scorer` that
:func:`weatkit.scoring.get_scorer` returns keeps the :class:`~weatkit.scoring.base.TokenLogprobs`
of each text it scored, for every measure and command.

A text's entry is keyed (:func:`weatkit.models.cache.cache_key`) by

* the backend and the scorer's :attr:`~weatkit.scoring.base.Scorer.identity` (an hf model's
  commit or content hash; a server's base URL, model name and what ``/v1/models`` says of it,
  never an API key);
* for a server, what it computes: the fingerprint of its probe
  (:func:`weatkit.scoring.probe.probe_server`: its log-probabilities of a fixed text), so a
  server that changed its model, quantization or flags on the same URL and model name never
  gets the entries of what it served before;
* for a backend that loads the weights in this process (:data:`LOADS_WEIGHTS`), the loading
  options that change a number (:func:`weatkit.models.cache.model_inputs`: dtype,
  quantization…; not the device, not the batch size);
* where the text starts (``start`` of :meth:`~weatkit.scoring.base.Scorer.causal_logprobs`)
  and the text itself.

The batch size is not in the key (a padded batch changes a value's last bits only,
docs/guides/caching.md); it is recorded as who wrote the entry. The entries live under
``$WEATKIT_CACHE/scores/causal/<key>/`` in the shards of :class:`weatkit.models.cache.
VectorCache` (written to a temporary file and renamed; merged beyond ``MAX_SHARDS``), each a
safetensors file of three tensors and JSON metadata::

    logprobs  float64 (T,)     every text's log-probabilities, one after another (NaN kept)
    offsets   int64   (T, 2)   each token's character span
    lengths   int64   (N,)     tokens per text
    metadata  items (the N texts), tokens (JSON list of each text's token strings), runs

A text scored with a ``read_from`` offset (GEST's word after its prefix: the log-probabilities
of the tokens before it may be NaN) is served by the whole text's entry where one is cached; else
it is computed with its offset and kept under the same key with ``read_from`` added, as the item
``<offset>:<text>``.

Entries are written as the backend's batches arrive (:mod:`weatkit.scoring.arrivals`), so a
run stopped part-way keeps what it scored. Values come back bit for bit. Every call that reads
texts from their first token records what the scores include
(:mod:`weatkit.scoring.conventions`), cached or not. Rows served and computed are counted by
:func:`weatkit.models.cache.counting` (``compare`` reports them). ``options.cache`` False (the
``--no-cache`` of every command) neither reads nor writes the cache.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from weatkit.data import ensure_cache_dir
from weatkit.models.cache import VectorCache, model_inputs, read_shard, tally, write_shard
from weatkit.scoring import conventions
from weatkit.scoring.arrivals import ArrivalWriter
from weatkit.scoring.base import DEFAULT_START, NO_START, OnScored, Scorer, TokenLogprobs

#: Bump when the meaning of cached token log-probabilities changes.
CAUSAL_CACHE_VERSION = 1
#: Backends that load the weights in this process: their loading options are in the key. A
#: server's (``openai``) are not known here; its identity stands for them.
LOADS_WEIGHTS = frozenset({"hf", "vllm"})


class LogprobCache(VectorCache):
    """The cached :class:`TokenLogprobs` of one scorer and start, by text (layer 0)."""

    def _read(self, path: Path) -> tuple[dict[int, dict[str, Any]], dict[str, str]]:
        return read_shard(path, _decode)

    def _write(
        self, path: Path, items: list[str], values: Mapping[int, Any], writers: Sequence[str]
    ) -> None:
        scored: Sequence[TokenLogprobs] = values[0]
        lengths = np.array([len(s.tokens) for s in scored], dtype=np.int64)
        tensors = {
            "logprobs": np.concatenate([s.logprobs for s in scored]).astype(np.float64),
            "offsets": np.array([o for s in scored for o in s.offsets], np.int64).reshape(-1, 2),
            "lengths": lengths,
        }
        tokens = json.dumps([list(s.tokens) for s in scored], ensure_ascii=False)
        write_shard(path, tensors, items, writers, {"tokens": tokens})


def _decode(fh: Any, metadata: Mapping[str, str], items: list[str]) -> dict[int, Any]:
    """``{0: {text: TokenLogprobs}}`` of a :class:`LogprobCache` shard."""
    logprobs, offsets, lengths = (fh.get_tensor(n) for n in ("logprobs", "offsets", "lengths"))
    tokens = json.loads(metadata["tokens"])
    if not len(items) == len(tokens) == len(lengths) or int(lengths.sum()) != len(logprobs):
        raise ValueError("the texts, tokens and lengths do not agree")
    ends = np.cumsum(lengths)
    out = {}
    for text, toks, end, n in zip(items, tokens, ends, lengths, strict=True):
        span = slice(int(end - n), int(end))
        spans = tuple((int(a), int(b)) for a, b in offsets[span])
        out[text] = TokenLogprobs(text, tuple(toks), spans, logprobs[span].copy())
    return {0: out}


class CachedScorer:
    """A :class:`~weatkit.scoring.base.Scorer` whose ``causal_logprobs`` come from the on-disk
    cache where present (module docstring); embeddings, and every other attribute (an hf
    model's ``handle``), are the wrapped scorer's.

    Attributes:
        scorer: the backend's scorer.
        spec, identity, capabilities: the wrapped scorer's.
    """

    def __init__(self, scorer: Scorer, options: Any = None) -> None:
        self.scorer = scorer
        self.spec = scorer.spec
        self.identity = scorer.identity
        self.capabilities = scorer.capabilities
        self._options = options
        self._enabled = bool(getattr(options, "cache", True))
        self._caches: dict[str, LogprobCache] = {}

    def __getattr__(self, name: str) -> Any:
        if name == "scorer":  # not set yet (copying, unpickling)
            raise AttributeError(name)
        return getattr(self.scorer, name)

    def __repr__(self) -> str:
        return repr(self.scorer)

    def cache(self, start: str = DEFAULT_START, partial: bool = False) -> LogprobCache | None:
        """The cache of the texts scored with ``start`` (``partial``: of those scored with a
        ``read_from`` offset, module docstring); None when caching is off."""
        if not self._enabled:
            return None
        if (start, partial) not in self._caches:
            backend = self.spec.backend
            if backend in LOADS_WEIGHTS:
                model = model_inputs({"identity": self.identity}, self._options, backend)
            else:
                model = {"backend": backend, "identity": self.identity}
            probe = getattr(self.scorer, "probe", None)
            if probe is not None and start != NO_START:  # a server (which refuses "none"):
                model["probe"] = probe().fingerprint  # what it computes, not where it lives
            key = {"task": "causal-logprobs", "version": CAUSAL_CACHE_VERSION,
                   "start": start, **model}  # fmt: skip
            if partial:
                key["read_from"] = True
            self._caches[start, partial] = LogprobCache(
                key,
                root=ensure_cache_dir("scores") / "causal",
                batch_size=getattr(self.scorer, "batch_size", None),
            )
        return self._caches[start, partial]

    def causal_logprobs(
        self,
        texts: Sequence[str],
        *,
        show_progress: bool | None = None,
        start: str = DEFAULT_START,
        read_from: Sequence[int] | None = None,
        on_scored: OnScored | None = None,
    ) -> list[TokenLogprobs]:
        """The wrapped scorer's ``causal_logprobs``, each distinct text computed once ever (per
        key): cached texts are read, the others scored in one call and stored as its batches
        arrive (:class:`weatkit.scoring.arrivals.ArrivalWriter`: what was scored before an
        error or an interrupt is kept, a killed process loses its last seconds at most). With
        ``read_from``, a text's entry is that of the whole text where one is cached, else that
        of the text and its offset (module docstring). A call with a text that cannot be a key
        (blank, not a string), or one string instead of a list, goes to the backend as it is
        (its checks apply) and is not cached. ``on_scored`` gets the cached texts first, then
        each batch as it arrives (:meth:`weatkit.scoring.base.Scorer.causal_logprobs`)."""
        cache = self.cache(start)
        since = {} if read_from is None else {"read_from": read_from}
        if cache is None or isinstance(texts, str) or not all(_keyable(t) for t in texts):
            scored = self.scorer.causal_logprobs(
                texts, show_progress=show_progress, start=start, on_scored=on_scored, **since
            )
            tally(None, [], len(scored))
            if read_from is None:
                conventions.record(str(self.spec), start, scored)
            return scored
        offsets: dict[str, int] = {}  # a text given twice is read from its smaller offset
        for text, offset in zip(texts, read_from if read_from is not None else [], strict=False):
            offsets[text] = min(offset, offsets.get(text, offset))
        distinct = list(dict.fromkeys(texts))
        found = cache.get(distinct, 0)
        tally(cache, list(found), 0)
        missing = [t for t in distinct if t not in found]
        partial = self.cache(start, partial=True) if offsets and missing else None
        if partial is not None:  # the entry of a text read from an offset: "<offset>:<text>"
            keys = {t: f"{offsets[t]}:{t}" for t in missing}
            hits = partial.get(keys.values(), 0)
            tally(partial, list(hits), 0)
            found.update((t, replace(hits[keys[t]], text=t)) for t in missing if keys[t] in hits)
            missing = [t for t in missing if keys[t] not in hits]
        tell = _teller(texts, on_scored)
        tell(list(found), list(found.values()))
        if missing:
            since = {"read_from": [offsets[t] for t in missing]} if offsets else {}
            items = [keys[t] for t in missing] if partial is not None else missing
            writer = ArrivalWriter(partial if partial is not None else cache, items)

            def arrived(indices: list[int], scored: list[TokenLogprobs]) -> None:
                writer(indices, scored)
                tell([missing[i] for i in indices], scored)

            try:
                fresh = self.scorer.causal_logprobs(
                    missing, show_progress=show_progress, start=start, on_scored=arrived, **since
                )
            except BaseException:
                with contextlib.suppress(Exception):  # the backend's error is the one to see
                    writer.flush()
                raise
            writer.flush()
            found.update(zip(missing, fresh, strict=True))
        tally(None, [], len(missing))
        out = [found[t] for t in texts]
        if read_from is None:
            conventions.record(str(self.spec), start, out)
        return out

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """The wrapped scorer's embeddings (not cached here); how they pool is recorded
        (:func:`weatkit.scoring.conventions.record_embedding`)."""
        pooling = getattr(self.scorer, "embedding_pooling", conventions.TEXT_TOKENS)
        conventions.record_embedding(str(self.spec), pooling)
        return self.scorer.embed(texts, show_progress=show_progress)


def _keyable(text: object) -> bool:
    return isinstance(text, str) and bool(text.strip())


def _teller(
    texts: Sequence[str], on_scored: OnScored | None
) -> Callable[[list[str], list[TokenLogprobs]], None]:
    """A function that passes distinct texts' results to ``on_scored`` by their indices in
    ``texts`` (a text given twice: both)."""
    if on_scored is None:
        return lambda distinct, scored: None
    where: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        where.setdefault(text, []).append(i)

    def tell(distinct: list[str], scored: list[TokenLogprobs]) -> None:
        pairs = [(i, s) for t, s in zip(distinct, scored, strict=True) for i in where[t]]
        if pairs:
            on_scored([i for i, _ in pairs], [s for _, s in pairs])

    return tell
