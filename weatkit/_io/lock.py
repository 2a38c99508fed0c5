"""An exclusive lock on an output directory, so that two processes never write the same one.

The lock is :func:`fcntl.flock` on a hidden file ``.weatkit.lock`` inside the directory, held
while the context is open. The kernel releases it when the process ends (even killed), so a
stale lock file never blocks a later run. The holder writes its process id into the file, which
the refusal message names. A directory created by the lock and left with nothing but the lock
file (the work failed before writing) is removed on release. On systems without :mod:`fcntl`
(Windows) no lock is taken.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from weatkit.errors import WeatkitError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: The lock file's name inside the locked directory.
LOCK_NAME = ".weatkit.lock"


@contextmanager
def directory_lock(directory: str | os.PathLike, command: str) -> Iterator[Path]:
    """Hold an exclusive lock on ``directory`` (created if missing) for the ``with`` block.

    Args:
        directory: the output directory.
        command: what uses it, for the message (``"weatkit grid"``).

    Yields:
        The lock file's path.

    Raises:
        WeatkitError: another process holds the lock (the message names the directory and that
            process's id), or the directory cannot be created.
    """
    folder = Path(directory)
    path = folder / LOCK_NAME
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as err:
        raise WeatkitError(f"cannot create output directory {folder}: {err.strerror}") from err
    locked = False
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                raise WeatkitError(
                    f"{folder} is in use by another {command} (pid {holder}); wait for it to "
                    "finish or write elsewhere"
                ) from None
        locked = True
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        if created and locked:
            _remove_if_unused(folder)
        os.close(fd)  # releases the lock


def _remove_if_unused(folder: Path) -> None:
    """Remove a folder this lock created when nothing but the lock file was written in it (the
    work failed before writing anything), so that a failure leaves no empty output folder."""
    try:
        if os.listdir(folder) == [LOCK_NAME]:
            (folder / LOCK_NAME).unlink()
            folder.rmdir()
    except OSError:
        pass
