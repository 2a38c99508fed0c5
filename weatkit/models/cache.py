"""On-disk cache of model outputs: contextual word vectors and sentence scores (safetensors).

One cache serves the model layer: word vectors under ``cache_dir("vectors")`` and the scores
of the sentence measures under ``cache_dir("scores")`` / ``sentence`` (AUL/AULA, masked tokens),
``gest`` and ``stereoset`` (:func:`score_cache`, :func:`cached_rows`). Every key includes the
model's identity (:attr:`weatkit.models.handle.ModelHandle.identity`: the commit a hub revision
resolves to, or a content hash of a local directory).

Layout: ``<cache_dir("vectors")>/<key>/`` where ``key`` is a hash of everything that determines a
vector except the item and the layer (model identity, pooling options, dtype; see
:func:`cache_key`). The directory holds ``info.json`` (the key's inputs, human-readable) and
``shard-*.safetensors`` files. Each shard has one tensor per layer, ``layer_<L>`` of shape
``(n_items, dim)`` (``L`` the non-negative hidden-state index), and the items in its metadata
(``{"items": JSON list}``). A run writes one new shard with the vectors it computed, so concurrent
runs never write the same file; shards are written to a temporary file and renamed. When a key has
more than :data:`MAX_SHARDS` shards they are merged into one.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from weatkit._io.atomic import replacing
from weatkit.data import cache_dir, ensure_cache_dir
from weatkit.data.paths import CacheKind

#: Bump when the meaning of cached vectors changes, so old entries are never reused.
CACHE_VERSION = 1
#: Shards per key before they are merged into one.
MAX_SHARDS = 8


def cache_key(inputs: Mapping[str, object]) -> str:
    """SHA-256 (first 32 hex digits) of the JSON of ``inputs`` with :data:`CACHE_VERSION`."""
    payload = json.dumps({"cache_version": CACHE_VERSION, **inputs}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


class VectorCache:
    """The cached vectors of one key: ``layer -> {item: vector}``, loaded lazily."""

    def __init__(
        self, inputs: Mapping[str, object], root: Path | None = None, kind: CacheKind = "vectors"
    ) -> None:
        """``root``: the folder of the keys (default: the ``kind`` cache, ``vectors`` or
        ``scores``, of :func:`weatkit.data.cache_dir`, tagged on first write)."""
        self.inputs = dict(inputs)
        self._kind = None if root else kind
        self.directory = (root or cache_dir(kind)) / cache_key(inputs)
        self._entries: dict[int, dict[str, np.ndarray]] | None = None

    def _shards(self) -> list[Path]:
        return sorted(self.directory.glob("shard-*.safetensors"))

    def _load(self) -> dict[int, dict[str, np.ndarray]]:
        if self._entries is None:
            entries: dict[int, dict[str, np.ndarray]] = {}
            for shard in self._shards():
                for layer, table in _read_shard(shard).items():
                    entries.setdefault(layer, {}).update(table)
            self._entries = entries
        return self._entries

    def get(self, items: Iterable[str], layer: int) -> dict[str, np.ndarray]:
        """The cached vectors of ``items`` at ``layer`` (absent items are left out)."""
        table = self._load().get(layer, {})
        return {item: table[item] for item in items if item in table}

    def put(self, items: list[str], vectors: Mapping[int, np.ndarray]) -> None:
        """Store ``vectors[layer][i]`` as the vector of ``items[i]`` for every layer."""
        if not items:
            return
        entries = self._load()
        for layer, matrix in vectors.items():
            table = entries.setdefault(layer, {})
            table.update(zip(items, matrix, strict=True))
        try:
            if self._kind is not None:
                ensure_cache_dir(self._kind)
            self.directory.mkdir(parents=True, exist_ok=True)
            info = self.directory / "info.json"
            if not info.exists():
                with replacing(info) as tmp:
                    tmp.write_text(json.dumps(self.inputs, indent=2))
            _write_shard(self.directory / f"shard-{uuid.uuid4().hex}.safetensors", items, vectors)
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
        merged = {layer: np.stack([entries[layer][i] for i in items]) for layer in layers}
        _write_shard(self.directory / f"shard-{uuid.uuid4().hex}.safetensors", items, merged)
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
    """The cache of one scorer: ``<cache_dir>/<folder>/<key>``, keyed on ``task``, its scoring
    ``version`` (bumped when the meaning of a value changes), the model's ``identity``, the
    ``options``' dtype and batch size (padded batches change a score's last bits) and the other
    ``inputs`` that change a value (kind, template…)."""
    key = {
        "task": task,
        "scoring_version": version,
        **identity,
        "dtype": options.dtype,
        "batch_size": options.batch_size,
        **inputs,
    }
    return VectorCache(key, root=ensure_cache_dir("scores") / folder)


def cached_rows(
    cache: VectorCache | None,
    keys: Sequence[str],
    compute: Callable[[list[str]], np.ndarray],
) -> tuple[dict[str, np.ndarray], int]:
    """``{key: row}`` for distinct ``keys``: from ``cache`` where present, the rest from
    ``compute(missing)`` (one value or row per key, stored as float32), then written to ``cache``.
    Also returns how many came from the cache. ``cache`` None computes everything."""
    found = cache.get(keys, 0) if cache is not None and keys else {}
    missing = [k for k in keys if k not in found]
    if missing:
        values = np.asarray(compute(missing), dtype=np.float32)
        if values.ndim == 1:
            values = values[:, None]
        if cache is not None:
            cache.put(missing, {0: values})
        found.update(zip(missing, values, strict=True))
    return found, len(keys) - len(missing)


def _read_shard(path: Path) -> dict[int, dict[str, np.ndarray]]:
    """``layer -> {item: vector}`` from one shard; an unreadable shard is ignored (and removed)."""
    try:
        with safe_open(str(path), framework="numpy") as fh:
            items = json.loads((fh.metadata() or {})["items"])
            out: dict[int, dict[str, np.ndarray]] = {}
            for name in fh.keys():  # noqa: SIM118 - safe_open is not a mapping
                matrix = fh.get_tensor(name)
                if not name.startswith("layer_") or matrix.shape[0] != len(items):
                    raise ValueError(f"bad tensor {name}")
                out[int(name.removeprefix("layer_"))] = dict(zip(items, matrix, strict=True))
            return out
    except (SafetensorError, OSError, ValueError, KeyError, TypeError):
        path.unlink(missing_ok=True)
        return {}


def _write_shard(path: Path, items: list[str], vectors: Mapping[int, np.ndarray]) -> None:
    tensors = {
        f"layer_{layer}": np.ascontiguousarray(matrix, dtype=np.float32)
        for layer, matrix in vectors.items()
    }
    metadata = {"items": json.dumps(items, ensure_ascii=False)}
    with replacing(path) as tmp:
        save_file(tensors, str(tmp), metadata=metadata)
