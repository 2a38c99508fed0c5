"""On-disk cache of model outputs: contextual word vectors and sentence scores (safetensors).

One cache serves the model layer: word vectors under ``cache_dir("vectors")`` and the scores
of the sentence measures under ``cache_dir("scores")`` / ``sentence`` (AUL/AULA, masked tokens),
``gest`` and ``stereoset`` (:func:`score_cache`, :func:`cached_rows`), and ``causal``: the token
log-probabilities of every text a :class:`~weatkit.scoring.base.Scorer` scored
(:mod:`weatkit.scoring.cache`, shards of other tensors through :func:`read_shard` and
:func:`write_shard`). One entry serves every
command: a score ``crows`` computed is reused by ``compare`` (and the reverse) when the model and
the method agree.

Every key starts with :func:`model_inputs`: the backend (``hf``), the model's identity
(:attr:`weatkit.models.handle.ModelHandle.identity`: the commit a hub revision resolves to, or a
content hash of a local directory) and every loading option that changes a number (the dtype,
and whatever else :class:`~weatkit.models.handle.LoadOptions` holds except
:data:`NOT_IN_KEY`). Then come the method and its options that change a value (the scorer's task
and version, pooling, template…); the text is the item. The batch size and the device are not in
the key: a padded batch runs other matrix kernels, which changes a value's last bits only
(docs/guides/caching.md gives the measured size), so the batch size is recorded as who wrote an
entry (:class:`CacheCount`) and in each command's manifest instead.

Layout: ``<cache_dir("vectors")>/<key>/`` where ``key`` is a hash of everything that determines a
vector except the item and the layer (:func:`cache_key`). The directory holds ``info.json`` (the
key's inputs, human-readable) and ``shard-*.safetensors`` files. Each shard has one tensor per
layer, ``layer_<L>`` of shape ``(n_items, dim)`` (``L`` the non-negative hidden-state index), and
in its metadata the items (``{"items": JSON list}``) and the runs that wrote them (``"runs"``:
JSON list of labels such as ``weatkit crows, batch size 32``; ``"run_of"``: JSON list, the index
of each item's run). A run writes one new shard with the vectors it computed, so concurrent runs
never write the same file; shards are written to a temporary file and renamed. When a key has
more than :data:`MAX_SHARDS` shards they are merged into one.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from weatkit._io.atomic import replacing
from weatkit.data import cache_dir, ensure_cache_dir
from weatkit.data.paths import CacheKind
from weatkit.models.handle import LoadOptions
from weatkit.models.provenance import COMMAND

#: Bump when the meaning of cached values or of their keys changes, so old entries are never
#: reused. 2: keys hold the backend and the loading options, no longer the batch size.
CACHE_VERSION = 2
#: Shards per key before they are merged into one.
MAX_SHARDS = 8
#: Loading options that never change a value: where the model runs (on how many GPUs), and the
#: revision as given (the identity holds the commit it resolves to).
NOT_IN_KEY = frozenset({"device", "device_map", "revision", "tensor_parallel"})
#: Who wrote a cached value when its shard does not say (written before CACHE_VERSION 2).
UNKNOWN_WRITER = "an earlier run"


def cache_key(inputs: Mapping[str, object]) -> str:
    """SHA-256 (first 32 hex digits) of the JSON of ``inputs`` with :data:`CACHE_VERSION`."""
    payload = json.dumps({"cache_version": CACHE_VERSION, **inputs}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def model_inputs(
    identity: Mapping[str, object], options: object | None, backend: str = "hf"
) -> dict[str, object]:
    """The part of every key that says which numbers a model gives: ``backend``, the model's
    ``identity`` and every :class:`~weatkit.models.handle.LoadOptions` field of ``options``
    except :data:`NOT_IN_KEY` (dtype, quantization…). Not the batch size (module docstring)."""
    load = LoadOptions.of(options)
    loading = {f.name: getattr(load, f.name) for f in fields(load) if f.name not in NOT_IN_KEY}
    return {"backend": backend, **identity, **loading}


@dataclass
class CacheCount:
    """Rows of model output asked for within :func:`counting`.

    Attributes:
        cached: rows that came from the cache.
        computed: rows that went through the model.
        writers: of the cached rows, how many each earlier run wrote (``weatkit crows, batch
            size 32`` -> rows).
    """

    cached: int = 0
    computed: int = 0
    writers: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """``reused 36 cached scores (written by weatkit crows, batch size 4); scored 0``."""
        who = "; ".join(f"{n:,} by {w}" if len(self.writers) > 1 else w
                        for w, n in sorted(self.writers.items()))  # fmt: skip
        written = f" (written by {who})" if who else ""
        return f"reused {self.cached:,} cached scores{written}; scored {self.computed:,}"


_COUNTS: ContextVar[tuple[CacheCount, ...]] = ContextVar("weatkit_cache_counts", default=())


@contextmanager
def counting() -> Iterator[CacheCount]:
    """A :class:`CacheCount` of the rows :func:`cached_rows` serves inside the block (nested
    blocks each count)."""
    count = CacheCount()
    token = _COUNTS.set((*_COUNTS.get(), count))
    try:
        yield count
    finally:
        _COUNTS.reset(token)


class VectorCache:
    """The cached vectors of one key: ``layer -> {item: vector}``, loaded lazily."""

    def __init__(
        self,
        inputs: Mapping[str, object],
        root: Path | None = None,
        kind: CacheKind = "vectors",
        *,
        batch_size: int | None = None,
    ) -> None:
        """``root``: the folder of the keys (default: the ``kind`` cache, ``vectors`` or
        ``scores``, of :func:`weatkit.data.cache_dir`, tagged on first write); ``batch_size``:
        the batch size of what this run writes (recorded with it, not part of the key)."""
        self.inputs = dict(inputs)
        self._kind = None if root else kind
        self.directory = (root or cache_dir(kind)) / cache_key(inputs)
        self.writer = COMMAND.get() + ("" if batch_size is None else f", batch size {batch_size}")
        self._entries: dict[int, dict[str, Any]] | None = None
        self._writers: dict[str, str] = {}

    def _shards(self) -> list[Path]:
        return sorted(self.directory.glob("shard-*.safetensors"))

    def _read(self, path: Path) -> tuple[dict[int, dict[str, Any]], dict[str, str]]:
        """``layer -> {item: value}`` and ``{item: writer}`` of one shard (:func:`_read_shard`;
        a subclass stores other values)."""
        return _read_shard(path)

    def _write(
        self, path: Path, items: list[str], values: Mapping[int, Any], writers: Sequence[str]
    ) -> None:
        """One shard of ``values[layer][i]`` for ``items[i]`` (:func:`_write_shard`)."""
        _write_shard(path, items, values, writers)

    def _load(self) -> dict[int, dict[str, Any]]:
        if self._entries is None:
            entries: dict[int, dict[str, Any]] = {}
            for shard in self._shards():
                tables, writers = self._read(shard)
                for layer, table in tables.items():
                    entries.setdefault(layer, {}).update(table)
                self._writers.update(writers)
            self._entries = entries
        return self._entries

    def get(self, items: Iterable[str], layer: int) -> dict[str, np.ndarray]:
        """The cached vectors of ``items`` at ``layer`` (absent items are left out)."""
        table = self._load().get(layer, {})
        return {item: table[item] for item in items if item in table}

    def writers(self, items: Iterable[str]) -> dict[str, int]:
        """How many of the cached ``items`` each earlier run wrote (label -> count)."""
        self._load()
        out: dict[str, int] = {}
        for item in items:
            writer = self._writers.get(item, UNKNOWN_WRITER)
            out[writer] = out.get(writer, 0) + 1
        return out

    def put(self, items: list[str], vectors: Mapping[int, Any]) -> None:
        """Store ``vectors[layer][i]`` (a matrix's rows, or a subclass's values) as the value of
        ``items[i]`` for every layer."""
        if not items:
            return
        entries = self._load()
        for layer, matrix in vectors.items():
            table = entries.setdefault(layer, {})
            table.update(zip(items, matrix, strict=True))
        self._writers.update(dict.fromkeys(items, self.writer))
        try:
            if self._kind is not None:
                ensure_cache_dir(self._kind)
            self.directory.mkdir(parents=True, exist_ok=True)
            info = self.directory / "info.json"
            if not info.exists():
                with replacing(info) as tmp:
                    tmp.write_text(json.dumps(self.inputs, indent=2))
            shard = self.directory / f"shard-{uuid.uuid4().hex}.safetensors"
            self._write(shard, items, vectors, [self.writer] * len(items))
            if len(self._shards()) > MAX_SHARDS:
                self._compact()
        except OSError:
            # A cache that cannot be written (read-only or full disk) only costs time next run.
            return

    def _compact(self) -> None:
        old = self._shards()
        entries = self._load()
        layers = sorted(entries)
        items = sorted(set.intersection(*(set(entries[layer]) for layer in layers)))
        merged = {layer: [entries[layer][i] for i in items] for layer in layers}
        writers = [self._writers.get(i, UNKNOWN_WRITER) for i in items]
        shard = self.directory / f"shard-{uuid.uuid4().hex}.safetensors"
        self._write(shard, items, merged, writers)
        for shard in old:
            shard.unlink(missing_ok=True)


def score_cache(
    folder: str,
    task: str,
    version: int,
    identity: Mapping[str, object],
    options: Any,
    **inputs: object,
) -> VectorCache:
    """The cache of one scorer: ``<cache_dir>/<folder>/<key>``, keyed on the model
    (:func:`model_inputs` of ``identity`` and ``options``: backend, identity, dtype…), ``task``
    (the method), its scoring ``version`` (bumped when the meaning of a value changes) and the
    other ``inputs`` that change a value (kind, template…); not on the batch size, which is
    recorded as the writer's."""
    key = {"task": task, "scoring_version": version, **model_inputs(identity, options), **inputs}
    return VectorCache(key, root=ensure_cache_dir("scores") / folder, batch_size=options.batch_size)


def cached_rows(
    cache: VectorCache | None,
    keys: Sequence[str],
    compute: Callable[[list[str]], np.ndarray],
) -> tuple[dict[str, np.ndarray], int]:
    """``{key: row}`` for distinct ``keys``: from ``cache`` where present, the rest from
    ``compute(missing)`` (one value or row per key, stored as float32), then written to ``cache``.
    Also returns how many came from the cache. ``cache`` None computes everything. Every
    :func:`counting` block around the call counts the rows (and who wrote the cached ones)."""
    found = cache.get(keys, 0) if cache is not None and keys else {}
    missing = [k for k in keys if k not in found]
    tally(cache, list(found), len(missing))
    if missing:
        values = np.asarray(compute(missing), dtype=np.float32)
        if values.ndim == 1:
            values = values[:, None]
        if cache is not None:
            cache.put(missing, {0: values})
        found.update(zip(missing, values, strict=True))
    return found, len(keys) - len(missing)


def tally(cache: VectorCache | None, found: Sequence[str], n_computed: int) -> None:
    """Count ``found`` (items served by ``cache``, with who wrote them) and ``n_computed``
    items in every :func:`counting` block open around the call."""
    counts = _COUNTS.get()
    if not counts:
        return
    writers = cache.writers(found) if cache is not None and found else {}
    for count in counts:
        count.cached += len(found)
        count.computed += n_computed
        for writer, n in writers.items():
            count.writers[writer] = count.writers.get(writer, 0) + n


#: What a shard's tensors become: ``(open shard, its metadata, its items) -> layer -> {item:
#: value}``; a ValueError, KeyError, TypeError or IndexError marks the shard unreadable.
Decode = Callable[[Any, Mapping[str, str], list[str]], dict[int, dict[str, Any]]]


def read_shard(path: Path, decode: Decode) -> tuple[dict[int, dict[str, Any]], dict[str, str]]:
    """``layer -> {item: value}`` (``decode`` of the shard's tensors) and ``{item: writer}``
    (where recorded) from one shard; an unreadable shard is ignored (and removed)."""
    try:
        with safe_open(str(path), framework="numpy") as fh:
            metadata = fh.metadata() or {}
            items = json.loads(metadata["items"])
            writers = {}
            if "runs" in metadata and "run_of" in metadata:
                runs = json.loads(metadata["runs"])
                run_of = json.loads(metadata["run_of"])
                writers = {i: runs[r] for i, r in zip(items, run_of, strict=True)}
            return decode(fh, metadata, items), writers
    except (SafetensorError, OSError, ValueError, KeyError, TypeError, IndexError):
        path.unlink(missing_ok=True)
        return {}, {}


def write_shard(
    path: Path,
    tensors: Mapping[str, np.ndarray],
    items: list[str],
    writers: Sequence[str] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> None:
    """One shard (atomically: a temporary file renamed): ``tensors``, the ``items`` and
    ``metadata`` as JSON metadata; ``writers[i]``: the run that computed item i (not recorded
    when None)."""
    meta = {**(metadata or {}), "items": json.dumps(items, ensure_ascii=False)}
    if writers is not None:
        runs = {w: r for r, w in enumerate(sorted(set(writers)))}
        meta["runs"] = json.dumps(list(runs), ensure_ascii=False)
        meta["run_of"] = json.dumps([runs[w] for w in writers])
    with replacing(path) as tmp:
        save_file(dict(tensors), str(tmp), metadata=meta)


def _decode_vectors(fh: Any, metadata: Mapping[str, str], items: list[str]) -> dict[int, Any]:
    """``layer_<L>`` tensors of shape ``(n_items, dim)``: ``L -> {item: vector}``."""
    out: dict[int, dict[str, np.ndarray]] = {}
    for name in fh.keys():  # noqa: SIM118 - safe_open is not a mapping
        matrix = fh.get_tensor(name)
        if not name.startswith("layer_") or matrix.shape[0] != len(items):
            raise ValueError(f"bad tensor {name}")
        out[int(name.removeprefix("layer_"))] = dict(zip(items, matrix, strict=True))
    return out


def _read_shard(path: Path) -> tuple[dict[int, dict[str, np.ndarray]], dict[str, str]]:
    """``layer -> {item: vector}`` and ``{item: writer}`` of one vector shard."""
    return read_shard(path, _decode_vectors)


def _write_shard(
    path: Path,
    items: list[str],
    vectors: Mapping[int, Sequence[np.ndarray]],
    writers: Sequence[str] | None = None,
) -> None:
    """One shard of ``vectors[layer][i]`` for ``items[i]`` (float32 ``layer_<L>`` tensors)."""
    tensors = {
        f"layer_{layer}": np.ascontiguousarray(matrix, dtype=np.float32)
        for layer, matrix in vectors.items()
    }
    write_shard(path, tensors, items, writers)
