"""Causal scores written to the on-disk cache as a backend's batches arrive
(:class:`ArrivalWriter`), so a run stopped part-way keeps what it scored.

A backend calls the writer (its ``on_scored``, :meth:`weatkit.scoring.base.Scorer.causal_logprobs`)
with each batch it finishes; the writer holds them and writes what it holds in one
:meth:`~weatkit.models.cache.VectorCache.put` (one shard) once ``wait`` seconds have passed since
its last write, where::

    wait = max(WRITE_EVERY_S, (seconds the last write took) / WRITE_SHARE)

so a write every :data:`WRITE_EVERY_S` seconds at most, and writing (a shard, and every
:data:`~weatkit.models.cache.MAX_SHARDS` shards a merge of the key's shards, which grows with the
cache) takes at most about :data:`WRITE_SHARE` of a run however large the cache grows. The caller
writes what is left when the backend returns or fails (:meth:`ArrivalWriter.flush`), so an error
or an interrupt loses nothing; a process killed outright (SIGKILL, a machine that goes down)
loses the batches of its last ``wait`` seconds at most.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from weatkit.models.cache import VectorCache
from weatkit.scoring.base import TokenLogprobs

#: The least time between two writes of one call, in seconds: what a killed process loses at
#: most, while writing takes under WRITE_SHARE of the run.
WRITE_EVERY_S = 10.0
#: The largest share of a run's time spent writing the cache (module docstring).
WRITE_SHARE = 0.05


class ArrivalWriter:
    """The ``on_scored`` of one backend call: its results, by index into ``items`` (each
    text's cache item), written to ``cache`` as they arrive (module docstring).

    Attributes:
        writes: the shards written so far.
    """

    def __init__(
        self,
        cache: VectorCache,
        items: Sequence[str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock``: seconds, monotonic (a test gives its own)."""
        self._cache = cache
        self._items = items
        self._clock = clock
        self._every_s = WRITE_EVERY_S
        self._wait = self._every_s
        self._last = clock()
        self._keys: list[str] = []
        self._values: list[TokenLogprobs] = []
        self.writes = 0

    def __call__(self, indices: list[int], results: list[TokenLogprobs]) -> None:
        """Hold ``results[j]`` as the value of ``items[indices[j]]``; write what is held once
        the wait since the last write has passed."""
        self._keys += [self._items[i] for i in indices]
        self._values += results
        if self._clock() - self._last >= self._wait:
            self.flush()

    def flush(self) -> None:
        """Write what is held (one shard; nothing when nothing is held)."""
        if self._keys:
            began = self._clock()
            keys, values = self._keys, self._values
            self._keys, self._values = [], []
            self._cache.put(keys, {0: values})
            self.writes += 1
            self._wait = max(self._every_s, (self._clock() - began) / WRITE_SHARE)
        self._last = self._clock()
