"""Content fingerprints of input files, recorded in the manifest.

Files up to 64 MiB are hashed whole (SHA-256). Larger files (multi-GB vector files) are
fingerprinted by size plus the SHA-256 of their first and last 4 MiB, which is fast and catches
any replacement or truncation in practice; the manifest says which kind each fingerprint is.
A folder (a spaCy vector table) is fingerprinted by the SHA-256 of its files' relative paths and
fingerprints, in path order, and its size is the sum of theirs.
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
    """``{"path", "size", "sha256"}`` or, for large files, ``{"path", "size", "sha256_edges"}``;
    ``{"path", "size", "sha256_files"}`` for a folder."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.is_file())
        digest = hashlib.sha256()
        for f in files:
            digest.update(repr((f.relative_to(p).as_posix(), content_fingerprint(f))).encode())
        size = sum(f.stat().st_size for f in files)
        return {"path": str(p), "size": size, "sha256_files": digest.hexdigest()}
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
    and modification time (a file changed since is fingerprinted again; a folder's files each)."""
    p = Path(path)
    if p.is_dir():  # its own stat does not change with its files' contents
        return {k: v for k, v in file_fingerprint(p).items() if k != "path"}
    stat = p.stat()
    return _fingerprint_by_stat(str(p.resolve()), stat.st_size, stat.st_mtime_ns)


@cache
def _fingerprint_by_stat(path: str, size: int, mtime_ns: int) -> dict[str, object]:
    return {k: v for k, v in file_fingerprint(path).items() if k != "path"}
