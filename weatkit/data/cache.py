"""What weatkit's caches hold, and clearing them (the library side of ``weatkit cache``).

The cache root (:func:`weatkit.data.paths.cache_root`) has one folder per kind: ``data``
(verified downloads), ``vectors`` (contextual word vectors) and ``scores`` (model scores of
sentences). Only these folders are ever listed or removed; symbolic links inside them are
counted and removed as links, never followed. A root set by ``$WEATKIT_CACHE`` is cleared only
when it holds weatkit's ``CACHEDIR.TAG`` (written when weatkit first caches something there), so
that ``WEATKIT_CACHE=~`` can never make ``clear_cache`` remove ``~/data``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from weatkit.data.paths import (
    CACHE_KINDS,
    CACHEDIR_SIGNATURE,
    CACHEDIR_TAG,
    CacheKind,
    cache_dir,
    cache_root,
    default_cache_root,
)
from weatkit.errors import DataError


@dataclass(frozen=True)
class CacheUsage:
    """One cache folder.

    Attributes:
        kind: ``data``, ``vectors`` or ``scores``.
        path: the folder (it may not exist).
        files: number of files in it (links counted as files, not followed).
        bytes: their total size (a link counts as the size of the link itself).
    """

    kind: str
    path: Path
    files: int
    bytes: int


def _kinds(kinds: Iterable[str] | None) -> list[str]:
    chosen = list(CACHE_KINDS if kinds is None else kinds)
    unknown = [k for k in chosen if k not in CACHE_KINDS]
    if unknown:
        raise DataError(f"unknown cache kind {unknown[0]!r}: choose from {', '.join(CACHE_KINDS)}")
    return list(dict.fromkeys(chosen))


def _usage(folder: Path) -> tuple[int, int]:
    files = size = 0
    if folder.is_symlink() or not folder.is_dir():
        return 0, 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            files += 1
            size += os.lstat(os.path.join(root, name)).st_size
    return files, size


def _tagged(root: Path) -> bool:
    tag = root / CACHEDIR_TAG
    if tag.is_symlink() or not tag.is_file():
        return False
    with tag.open("rb") as fh:
        return fh.read(len(CACHEDIR_SIGNATURE)) == CACHEDIR_SIGNATURE.encode()


def cache_info(kinds: Iterable[CacheKind] | None = None) -> list[CacheUsage]:
    """Path, number of files and bytes of each cache folder (all kinds by default)."""
    out = []
    for kind in _kinds(kinds):
        folder = cache_dir(kind)  # type: ignore[arg-type]
        files, size = _usage(folder)
        out.append(CacheUsage(kind, folder, files, size))
    return out


def clear_cache(kinds: Iterable[CacheKind] | None = None) -> list[CacheUsage]:
    """Remove the cache folders of ``kinds`` (all by default); what was removed.

    A folder is removed only when it is a real folder directly under the cache root (a link
    in its place is refused; links inside it are removed as links, their targets untouched).

    Raises:
        DataError: an unknown kind, a cache folder that is a link or not a folder, or a folder
            that cannot be removed.
    """
    root = cache_root()
    removed = []
    if not (default_cache_root() or _tagged(root)):
        raise DataError(
            f"refusing to clear {root}: not a weatkit cache (no {CACHEDIR_TAG} with the cache "
            "signature in it)"
        )
    for usage in cache_info(kinds):
        folder = usage.path
        if not (folder.is_symlink() or folder.exists()):
            removed.append(usage)
            continue
        if folder.is_symlink() or not folder.is_dir() or folder.parent != root:
            raise DataError(
                f"refusing to clear {folder}: not a weatkit cache folder (expected a folder "
                f"{usage.kind}/ under {root}, not a link or a file)"
            )
        try:
            shutil.rmtree(folder)  # does not follow links (rmtree refuses a link at the top)
        except OSError as err:
            raise DataError(f"cannot clear {folder}: {err.strerror or err}") from None
        removed.append(usage)
    return removed
