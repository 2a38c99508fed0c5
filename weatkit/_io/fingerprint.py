"""Content fingerprints of input files, recorded in the manifest.

Files up to 64 MiB are hashed whole (SHA-256). Larger files (multi-GB vector files) are
fingerprinted by size plus the SHA-256 of their first and last 4 MiB, which is fast and catches
any replacement or truncation in practice; the manifest says which kind each fingerprint is.
:func:`content_fingerprint` computes it once per process for a file unchanged since (a grid's
planning, a run's manifest and its cache of loaded vectors ask for the same files many times).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

_WHOLE_LIMIT = 64 << 20
_EDGE = 4 << 20


def file_fingerprint(path: str | os.PathLike) -> dict[str, object]:
    """``{"path", "size", "sha256"}`` or, for large files, ``{"path", "size", "sha256_edges"}``."""
    p = Path(path)
    size = p.stat().st_size
    digest = hashlib.sha256()
    with p.open("rb") as fh:
        if size <= _WHOLE_LIMIT:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
            return {"path": str(p), "size": size, "sha256": digest.hexdigest()}
        digest.update(fh.read(_EDGE))
        fh.seek(size - _EDGE)
        digest.update(fh.read(_EDGE))
    return {"path": str(p), "size": size, "sha256_edges": digest.hexdigest()}


def content_fingerprint(path: str | os.PathLike) -> dict[str, object]:
    """:func:`file_fingerprint` without the path, remembered for the file's resolved path, size
    and modification time (a file changed since is fingerprinted again)."""
    p = Path(path)
    stat = p.stat()
    return _fingerprint_by_stat(str(p.resolve()), stat.st_size, stat.st_mtime_ns)


@cache
def _fingerprint_by_stat(path: str, size: int, mtime_ns: int) -> dict[str, object]:
    return {k: v for k, v in file_fingerprint(path).items() if k != "path"}
