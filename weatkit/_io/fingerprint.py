"""Content fingerprints of input files, recorded in the manifest.

Files up to 64 MiB are hashed whole (SHA-256). Larger files (multi-GB vector files) are
fingerprinted by size plus the SHA-256 of their first and last 4 MiB, which is fast and catches
any replacement or truncation in practice; the manifest says which kind each fingerprint is.
"""

from __future__ import annotations

import hashlib
import os
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
