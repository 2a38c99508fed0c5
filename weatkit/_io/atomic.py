"""Atomic writes: temporary files and folders renamed into place (:func:`replacing`,
:func:`write_outputs`), removed when the write fails, and swept when a killed process left them.

Temporary files and folders are created with ``os.open(..., 0o666)`` / ``os.mkdir(..., 0o777)``
under a random hidden name, so the kernel applies the process umask as it does to any new file:
outputs renamed into place get the usual permissions, and the umask is never read or changed
(changing it, even briefly, races with every other thread that creates files).

Names and ownership. The temporary for an output ``NAME`` is ``.NAME.<pid>-<12 hex><suffix>``
beside it (``<pid>``: the process that made it). A write that fails removes its temporary. A
process killed mid-write (SIGKILL, power loss) cannot, so every write first removes the stale
temporaries of the same output (:func:`remove_stale`): those with the same ``.NAME.`` prefix and
suffix whose process is no longer running on this machine, or that are older than
:data:`STALE_AFTER_S` whatever their process (its pid reused, or a process of another machine on
a shared file system). Temporaries of running processes, including this one, are left alone.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from weatkit._io.paths import check_not_input
from weatkit.errors import WeatkitError

_ATTEMPTS = 100
#: A temporary this old (seconds since its last change) is stale whatever its process.
STALE_AFTER_S = 24 * 3600
#: ``<pid>-<random>`` between ``.NAME.`` and the suffix (the pid is absent in older versions).
_OWNED = re.compile(r"(?:(\d+)-)?[0-9a-f]{12}")


def _random_name(prefix: str, suffix: str) -> str:
    return f"{prefix}{os.getpid()}-{secrets.token_hex(6)}{suffix}"


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (unknown, e.g. on Windows: True)."""
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def _stale(entry: os.DirEntry, pid: str | None, now: float) -> bool:
    try:
        age = now - entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return False
    if age > STALE_AFTER_S:
        return True
    return pid is not None and int(pid) != os.getpid() and not _running(int(pid))


def remove_stale(directory: str | os.PathLike, name: str, suffix: str = ".tmp") -> list[Path]:
    """Remove the stale temporaries ``.<name>.<pid>-<random><suffix>`` of ``directory`` (files
    or folders) left by killed processes (see the module docstring for the rule); the paths
    removed. Nothing else is touched, and a temporary that cannot be removed is left."""
    prefix = f".{name}."
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)):
            continue
        owner = _OWNED.fullmatch(entry.name[len(prefix) : len(entry.name) - len(suffix)])
        if owner is None or not _stale(entry, owner.group(1), now):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


@contextmanager
def replacing(target: str | os.PathLike, suffix: str = ".tmp") -> Iterator[Path]:
    """A new, closed, empty temporary file beside ``target`` to write (by path), renamed over
    ``target`` when the ``with`` block ends normally and removed when it raises.

    Stale temporaries of ``target`` are removed first (:func:`remove_stale`).

    Raises:
        OSError: the temporary cannot be created or renamed (whatever the block raises passes).

    Example:
        >>> with replacing(tmp_dir / "info.json") as tmp:      # doctest: +SKIP
        ...     tmp.write_text("{}")
    """
    target = Path(target)
    remove_stale(target.parent, target.name, suffix)
    fd, name = temp_file(target.parent, target.name, suffix)
    os.close(fd)
    try:
        yield Path(name)
        os.replace(name, target)
    finally:
        Path(name).unlink(missing_ok=True)


def temp_file(directory: str | os.PathLike, name: str, suffix: str = ".tmp") -> tuple[int, str]:
    """``(fd, path)`` of a new hidden temporary file ``.<name>.<pid>-<random><suffix>`` in
    ``directory``, open for writing. The caller removes it when its write fails (or uses
    :func:`replacing`, which does).

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
    """A new hidden folder ``.<name>.<pid>-<random><suffix>`` in ``directory``, with the permissions
    of a normally created folder (0777 minus the umask)."""
    for _ in range(_ATTEMPTS):
        path = Path(directory) / _random_name(f".{name}.", suffix)
        try:
            path.mkdir(0o777)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary folder name for {name} in {directory}")


def write_file(
    target: str | os.PathLike, data: bytes, *, reads: Iterable[str | os.PathLike | None] = ()
) -> Path:
    """Write ``data`` to the file ``target`` atomically (all of it or nothing); the path written.

    The temporary is made in ``target``'s own folder (created if missing), never in the folder
    above it or in the system's temporary folder: a rename works only within one file system,
    and ``target`` may be on another mount (a USB disk, a network share, a tmpfs) than its
    parent's parent. ``reads``: files the caller read, which ``target`` must not be
    (:func:`weatkit._io.paths.check_not_input`).

    Raises:
        WeatkitError: ``target`` is one of ``reads``, or an OS error (naming ``target``).
    """
    path = Path(target)
    check_not_input([path], reads)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(path.parent, path.name)
        fd, name = temp_file(path.parent, path.name)
    except OSError as err:
        raise WeatkitError(f"cannot write to {path}: {err.strerror or err}") from err
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(name, path)
    except OSError as err:
        raise WeatkitError(f"cannot write to {path}: {err.strerror or err}") from err
    finally:
        Path(name).unlink(missing_ok=True)
    return path


def _check_names(files: Mapping[str, bytes], out: Path) -> None:
    for name in files:
        if not name or name in (".", "..") or "/" in name or os.sep in name:
            raise WeatkitError(f"cannot write {name!r} to {out}: expected a plain file name")


#: In a staging folder of :func:`write_outputs` while its files are renamed into the output
#: folder: the JSON list of their names. A staging folder that has it when its process is gone
#: marks an output folder left half new, half old (:func:`recover`, :func:`check_complete`).
_RENAMING = "renaming.json"


def _stages(out: Path) -> Iterator[tuple[os.DirEntry, str | None]]:
    """The staging folders of writes of ``out`` that were renaming files into it (or are):
    ``(entry, pid)``, ``pid`` being the writer's (None for names of older versions)."""
    prefix = f".{out.name}."
    try:
        entries = list(os.scandir(_staging_parent(out)))
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(".write")):
            continue
        owner = _OWNED.fullmatch(entry.name[len(prefix) : -len(".write")])
        if owner is not None and os.path.isfile(os.path.join(entry.path, _RENAMING)):
            yield entry, owner.group(1)


def recover(out_dir: str | os.PathLike) -> list[str]:
    """Put back the previous version of the files that a killed :func:`write_outputs` of
    ``out_dir`` had renamed in (SIGKILL, power loss between two renames), so that they are all
    old again; the names restored or removed. Writes still running are left alone.

    The staging folder of such a write holds the previous versions (``old/``), the files not
    renamed yet (``new/``) and the list of names (``renaming.json``): a file whose previous
    version is there is restored; one that had none and was renamed in is removed.
    """
    out = Path(out_dir)
    done: list[str] = []
    now = time.time()
    for entry, pid in list(_stages(out)):
        if not _stale(entry, pid, now):
            continue
        stage = Path(entry.path)
        try:
            names = json.loads((stage / _RENAMING).read_text(encoding="utf-8"))
        except ValueError:  # killed while writing the list: before any rename
            names = []
        for name in names:
            if (stage / "new" / name).exists():
                continue  # not renamed in: out_dir still has its previous version
            if (stage / "old" / name).exists():
                os.replace(stage / "old" / name, out / name)
            else:
                (out / name).unlink(missing_ok=True)
            done.append(name)
        (stage / _RENAMING).unlink()
    return done


def check_complete(out_dir: str | os.PathLike) -> None:
    """Refuse an output folder whose files a :func:`write_outputs` was replacing when it was
    killed (or still is): its tables may be half of one run and half of another.

    The next write of the folder puts the previous versions back first (:func:`recover`).

    Raises:
        WeatkitError: one line naming the folder and the staging folder found.
    """
    out = Path(out_dir)
    for entry, _pid in _stages(out):
        raise WeatkitError(
            f"{out}: a write of its files was stopped half-way or is under way ({entry.path} "
            "holds the previous versions), so its tables may mix two runs; write it again"
        )


def _staging_parent(out: Path) -> Path:
    """Where :func:`write_outputs` stages the files of ``out``: on their file system, so that
    they can be renamed in. Beside the real folder (``out`` or the folder it links to), or, when
    ``out`` is a mount point (another file system than its parent's), inside it."""
    beside = out.resolve().parent if out.is_symlink() else out.parent
    if out.is_dir() and os.stat(out).st_dev != os.stat(beside).st_dev:
        return out.resolve()
    return beside


def write_outputs(
    out_dir: str | os.PathLike,
    files: Mapping[str, bytes],
    *,
    reads: Iterable[str | os.PathLike | None] = (),
) -> list[Path]:
    """Write ``files`` (name -> bytes) into ``out_dir`` all-or-nothing; the paths written.

    Every file is first written in full into a hidden staging folder beside ``out_dir``, on the
    file system of the files it replaces (inside ``out_dir`` when that is a mount point:
    :func:`_staging_parent`; ``.<name>.<pid>-<random>.write``, ``<name>`` being ``out_dir``'s;
    stale ones of earlier, killed writes of ``out_dir``, and stale ``out_dir/.<file>.*.tmp`` of
    the files named, are removed first: :func:`remove_stale`), then:

    * when ``out_dir`` does not exist, the staging folder is renamed to ``out_dir``: all files
      appear at once (one ``rename``);
    * when it exists, each file is renamed into it (each file is replaced atomically: a reader
      sees the old or the new bytes, never a mix). The previous version of each replaced file is
      first hard-linked (copied where links are not supported) into the staging folder; if a
      rename fails, the files already renamed are put back (restored or removed), so that the
      named files are all old or all new when this returns or raises.

    Files of ``out_dir`` that are not in ``files`` (a grid's ``jobs/``, other outputs) are
    never touched. The staging folder is removed in every case (a failed write included),
    except after a crash mid-way (power loss, SIGKILL), which can leave the named files mixed;
    the staging folder then keeps the previous versions and the list of names: readers refuse
    ``out_dir`` (:func:`check_complete`) until the next write of it puts the previous versions
    back (:func:`recover`) and writes its own.

    ``reads``: the files the caller read; writing over one of them is refused before anything
    is written (:func:`weatkit._io.paths.check_not_input`).

    Raises:
        WeatkitError: a file name that is not plain, an output that is an input, or an OS error
            (naming ``out_dir``).
    """
    out = Path(out_dir)
    _check_names(files, out)
    check_not_input([out / name for name in files], reads)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        beside = _staging_parent(out)
        recover(out)  # a killed write's files back to their previous version
        remove_stale(beside, out.name, ".write")
        for name in files:  # per-file temporaries (earlier versions wrote those)
            remove_stale(out, name, ".tmp")
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
    # from here until all are renamed (or put back), a reader refuses ``out``: check_complete
    (old.parent / _RENAMING).write_text(json.dumps(names), encoding="utf-8")
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
