"""Atomic writes: temporary files and folders renamed into place, and :func:`write_outputs`.

Temporary files and folders are created with ``os.open(..., 0o666)`` / ``os.mkdir(..., 0o777)``
under a random hidden name, so the kernel applies the process umask as it does to any new file:
outputs renamed into place get the usual permissions, and the umask is never read or changed
(changing it, even briefly, races with every other thread that creates files).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping
from pathlib import Path

from weatkit.errors import WeatkitError

_ATTEMPTS = 100


def _random_name(prefix: str, suffix: str) -> str:
    return f"{prefix}{secrets.token_hex(6)}{suffix}"


def temp_file(directory: str | os.PathLike, name: str, suffix: str = ".tmp") -> tuple[int, str]:
    """``(fd, path)`` of a new hidden temporary file ``.<name>.<random><suffix>`` in
    ``directory``, open for writing.

    Unlike :func:`tempfile.mkstemp` (mode 0600), the file gets the permissions a normally
    created file would have (0666 minus the umask), so outputs renamed into place are readable
    as usual.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(_ATTEMPTS):
        path = os.path.join(os.fspath(directory), _random_name(f".{name}.", suffix))
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name} in {directory}")


def temp_dir(directory: str | os.PathLike, name: str, suffix: str = ".tmp") -> Path:
    """A new hidden folder ``.<name>.<random><suffix>`` in ``directory``, with the permissions
    of a normally created folder (0777 minus the umask)."""
    for _ in range(_ATTEMPTS):
        path = Path(directory) / _random_name(f".{name}.", suffix)
        try:
            path.mkdir(0o777)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary folder name for {name} in {directory}")


def _check_names(files: Mapping[str, bytes], out: Path) -> None:
    for name in files:
        if not name or name in (".", "..") or "/" in name or os.sep in name:
            raise WeatkitError(f"cannot write {name!r} to {out}: expected a plain file name")


def write_outputs(out_dir: str | os.PathLike, files: Mapping[str, bytes]) -> list[Path]:
    """Write ``files`` (name -> bytes) into ``out_dir`` all-or-nothing; the paths written.

    Every file is first written in full into a hidden staging folder beside ``out_dir``
    (``<parent>/.<name>.<random>.write``, same file system), then:

    * when ``out_dir`` does not exist, the staging folder is renamed to ``out_dir``: all files
      appear at once (one ``rename``);
    * when it exists, each file is renamed into it (each file is replaced atomically: a reader
      sees the old or the new bytes, never a mix). The previous version of each replaced file is
      first hard-linked (copied where links are not supported) into the staging folder; if a
      rename fails, the files already renamed are put back (restored or removed), so that the
      named files are all old or all new when this returns or raises.

    Files of ``out_dir`` that are not in ``files`` (a grid's ``jobs/``, other outputs) are
    never touched. The staging folder is removed in every case, except after a crash mid-way
    (power loss, SIGKILL), which can leave the named files mixed and the staging folder, with
    the previous versions, beside ``out_dir``.

    Raises:
        WeatkitError: a file name that is not plain, or an OS error (naming ``out_dir``).
    """
    out = Path(out_dir)
    _check_names(files, out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # beside the real folder (same file system) when out_dir is a link to one
        beside = out.resolve().parent if out.is_symlink() else out.parent
        stage = temp_dir(beside, out.name, suffix=".write")
    except OSError as err:
        raise WeatkitError(f"cannot create output directory {out}: {err.strerror}") from err
    try:
        new = stage / "new"
        new.mkdir(0o777)
        for name, data in files.items():
            fd = os.open(new / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        if not out.exists():
            try:
                os.replace(new, out)
                return [out / name for name in files]
            except OSError:
                if not out.is_dir():  # not a folder created meanwhile by someone else
                    raise
        _replace_files(new, stage / "old", out, list(files))
    except OSError as err:
        raise WeatkitError(f"cannot write to {out}: {err.strerror or err}") from err
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return [out / name for name in files]


def _replace_files(new: Path, old: Path, out: Path, names: list[str]) -> None:
    """Rename ``new/<name>`` over ``out/<name>`` for every name, backing up the previous
    versions in ``old`` and putting them back when a rename fails."""
    old.mkdir(0o777)
    previous: set[str] = set()
    for name in names:
        target = out / name
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                raise IsADirectoryError(21, "is a directory", str(target))
            try:
                os.link(target, old / name, follow_symlinks=False)
            except OSError:
                shutil.copy2(target, old / name, follow_symlinks=False)
            previous.add(name)
    done: list[str] = []
    try:
        for name in names:
            os.replace(new / name, out / name)
            done.append(name)
    except BaseException:
        for name in reversed(done):
            if name in previous:
                os.replace(old / name, out / name)
            else:
                (out / name).unlink(missing_ok=True)
        raise
