"""Where third-party data and weatkit's caches live.

* the *data directory* ``$WEATKIT_DATA`` (optional): a local copy with the layout of
  ``shared/data``, one folder per upstream source;
* the *cache root* ``$WEATKIT_CACHE``, else the platform cache directory + ``weatkit``
  (``~/.cache/weatkit`` on Linux, ``$XDG_CACHE_HOME/weatkit`` when that is set), with one folder
  per kind of cached thing (:data:`CACHE_KINDS`): ``data`` (verified downloads), ``vectors``
  (contextual word vectors) and ``scores`` (model scores of sentences).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath
from typing import Literal

from weatkit.errors import DataError

ENV_DATA = "WEATKIT_DATA"
ENV_CACHE = "WEATKIT_CACHE"
ENV_DATA_URL = "WEATKIT_DATA_URL"

CacheKind = Literal["data", "vectors", "scores"]
#: The cache folders under the cache root, one per kind.
CACHE_KINDS: tuple[str, ...] = ("data", "vectors", "scores")


def data_dir() -> Path | None:
    """The local data directory from ``$WEATKIT_DATA``, or None when the variable is unset/empty."""
    value = os.environ.get(ENV_DATA, "").strip()
    return Path(value).expanduser() if value else None


def cache_root() -> Path:
    """``$WEATKIT_CACHE``, else the platform cache directory + ``weatkit``."""
    value = os.environ.get(ENV_CACHE, "").strip()
    if value:
        return Path(value).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "weatkit" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "weatkit"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "weatkit"


def cache_dir(kind: CacheKind) -> Path:
    """The cache folder of ``kind``: ``<root>/data``, ``<root>/vectors`` or ``<root>/scores``
    (root: :func:`cache_root`). Not created here."""
    if kind not in CACHE_KINDS:
        raise DataError(f"unknown cache kind {kind!r}: choose one of {', '.join(CACHE_KINDS)}")
    return cache_root() / kind


#: The Cache Directory Tagging Specification (https://bford.info/cachedir/): backup tools skip
#: a folder holding this file, and :func:`weatkit.data.cache.clear_cache` only clears a cache
#: root that has it (or the platform default root).
CACHEDIR_TAG = "CACHEDIR.TAG"
CACHEDIR_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"


def default_cache_root() -> bool:
    """Whether the cache root is the platform default (``$WEATKIT_CACHE`` unset or empty)."""
    return not os.environ.get(ENV_CACHE, "").strip()


def ensure_cache_dir(kind: CacheKind) -> Path:
    """:func:`cache_dir` of ``kind``, created, with a ``CACHEDIR.TAG`` in the cache root."""
    folder = cache_dir(kind)
    folder.mkdir(parents=True, exist_ok=True)
    tag = folder.parent / CACHEDIR_TAG
    if not tag.exists():
        tag.write_text(
            f"{CACHEDIR_SIGNATURE}\n# This folder holds weatkit's caches (weatkit cache info).\n",
            encoding="utf-8",
        )
    return folder


def check_relpath(relpath: str) -> str:
    """``relpath`` normalised; DataError for absolute paths, ``..`` or backslashes, so that a
    relpath can never leave the data or cache directory."""
    pure = PurePosixPath(relpath)
    if not relpath or "\\" in relpath or pure.is_absolute() or ".." in pure.parts:
        raise DataError(f"invalid data path {relpath!r}: expected a relative path like a/b.tsv")
    return str(pure)
