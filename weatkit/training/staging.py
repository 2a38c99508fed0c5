"""Output files staged as temporary files next to their final paths and renamed into place
together when every one of them is written (removed otherwise)."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from weatkit._io.atomic import remove_stale, temp_file
from weatkit.embeddings.loader_utils import COMPRESSIONS, split_compression
from weatkit.errors import WeatkitError


class Stage:
    """Temporary files renamed into place together by :func:`staging`."""

    def __init__(self) -> None:
        self.pending: list[tuple[Path, Path]] = []

    def new(self, final: Path) -> Path:
        """A closed temporary file next to ``final``, renamed to it on commit."""
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            remove_stale(final.parent, final.name)  # left by a killed run
            fd, tmp = temp_file(final.parent, final.name)
        except OSError as err:
            raise WeatkitError(f"cannot write {final}: {err.strerror or err}") from None
        os.close(fd)
        self.pending.append((Path(tmp), final))
        return Path(tmp)

    @contextmanager
    def writing(self, final: Path) -> Iterator[BinaryIO]:
        """A binary file handle writing ``final`` (compressed when its suffix says so)."""
        tmp = self.new(final)
        with open(tmp, "wb") as raw, _compressing(raw, final) as out:
            yield out


@contextmanager
def _compressing(raw: BinaryIO, final: Path) -> Iterator[BinaryIO]:
    base, comp = split_compression(final)
    if not comp:
        yield raw
    elif comp == ".gz":  # no time stamp: the same vectors give the same bytes
        with gzip.GzipFile(filename=base.name, mode="wb", fileobj=raw, mtime=0) as out:
            yield out  # type: ignore[misc]
    else:
        with COMPRESSIONS[comp].open(raw, "wb") as out:
            yield out


@contextmanager
def staging() -> Iterator[Stage]:
    """Files staged in the block are renamed into place when it succeeds, removed otherwise."""
    stage = Stage()
    try:
        yield stage
        for tmp, final in stage.pending:
            os.replace(tmp, final)
    except OSError as err:
        where = stage.pending[-1][1] if stage.pending else "the output"
        raise WeatkitError(f"cannot write {where}: {err.strerror or err}") from None
    finally:
        for tmp, _ in stage.pending:
            tmp.unlink(missing_ok=True)
