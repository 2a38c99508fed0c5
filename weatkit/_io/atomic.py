"""Temporary files for atomic writes (write, then ``os.replace`` into place)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_file(directory: str | os.PathLike, name: str, suffix: str = ".tmp") -> tuple[int, str]:
    """``(fd, path)`` of a new hidden temporary file next to where ``name`` will go.

    Unlike :func:`tempfile.mkstemp` (mode 0600), the file gets the permissions a normally
    created file would have (0666 minus the umask), so outputs renamed into place are readable
    as usual.
    """
    fd, tmp = tempfile.mkstemp(dir=Path(directory), prefix=f".{name}.", suffix=suffix)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, 0o666 & ~_umask())
    return fd, tmp
