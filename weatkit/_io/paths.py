"""Checks on output paths, made before any work so that a long computation is never lost to an
output that cannot be written; the messages name the path given (not its parent)."""

from __future__ import annotations

import os
from pathlib import Path

from weatkit.errors import WeatkitError


def check_writable(path: str | os.PathLike, *, directory: bool = False) -> Path:
    """Check that ``path`` can be written as a file (or, with ``directory``, as a folder).

    The path itself must not be a folder (a file when ``directory``); its nearest existing
    ancestor must be a folder in which this process may create entries (folders missing in
    between are created by the writer, which also stages its files beside the target:
    :func:`weatkit._io.atomic.write_outputs`), as must an existing target folder. Nothing is
    created here.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        WeatkitError: naming ``path`` and what is wrong with it or with the ancestor at fault.
    """
    target = Path(path)
    if target.is_dir() and not directory:
        raise WeatkitError(f"cannot write {target}: it is a directory; give a file name")
    if target.exists() and not target.is_dir() and directory:
        raise WeatkitError(f"cannot write into {target}: it is a file, not a directory")
    ancestor = target.absolute().parent  # a writer stages its files beside the target
    while not ancestor.exists() and not ancestor.is_symlink():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise WeatkitError(f"cannot write {target}: {ancestor} is not a directory")
    for folder in (ancestor, target) if directory and target.is_dir() else (ancestor,):
        if not os.access(folder, os.W_OK | os.X_OK):
            raise WeatkitError(f"cannot write {target}: no permission to write in {folder}")
    return target
