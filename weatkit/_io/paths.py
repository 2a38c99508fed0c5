"""Checks on output paths, made before any work so that a long computation is never lost to an
output that cannot be written; the messages name the path given (not its parent)."""

from __future__ import annotations

import os
from collections.abc import Iterable
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


def _same_path(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same inode where both exist (hard links,
    bind mounts), else the same path once symbolic links and ``..`` are resolved."""
    if a.exists() and b.exists():
        try:
            return os.path.samefile(a, b)
        except OSError:
            pass
    return a.resolve() == b.resolve()


def _inside(path: Path, directory: Path) -> bool:
    """Whether ``path`` lies in ``directory`` (at any depth), symbolic links resolved."""
    return path.resolve().is_relative_to(directory.resolve())


def check_not_input(
    outputs: Iterable[str | os.PathLike],
    reads: Iterable[str | os.PathLike | None] = (),
    *,
    read_dirs: Iterable[str | os.PathLike | None] = (),
    allowed: Iterable[str | os.PathLike] = (),
) -> None:
    """Refuse to write an output over a file the command reads, or into a directory it reads.

    Every command that writes (``--out``) calls this with what it reads, so that a slip such as
    ``weatkit export RUN --out RUN/null.csv`` or ``weatkit embed --lists L.json --out L.json``
    stops with nothing changed instead of destroying an input. ``reads`` are the input files
    (``None`` and paths that are not files, e.g. the name of a built-in list, are ignored);
    ``read_dirs`` are input directories (a run directory read by export, plot, report), in which
    no output may be written, except the paths of ``allowed`` (``report``'s own default
    ``RUN/report.html``, which no reader reads). Paths are compared resolved (symbolic links
    followed) and, where both exist, by inode (:func:`os.path.samefile`).

    Raises:
        WeatkitError: one line naming the output and the input it would destroy.
    """
    files = [Path(p) for p in reads if p is not None and Path(p).is_file()]
    dirs = [Path(p) for p in read_dirs if p is not None and Path(p).is_dir()]
    exempt = [Path(p) for p in allowed]
    for output in map(Path, outputs):
        for source in files:
            if _same_path(output, source):
                raise WeatkitError(
                    f"cannot write {output}: it is {source}, which this command reads; "
                    "write the output elsewhere"
                )
        for directory in dirs:
            if _inside(output, directory) and not any(_same_path(output, p) for p in exempt):
                raise WeatkitError(
                    f"cannot write {output}: it is inside {directory}, which this command "
                    "reads; write the output elsewhere"
                )
