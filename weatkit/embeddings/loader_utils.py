"""Helpers shared by the static-embedding loaders: opening (compressed) files, names, checks."""

from __future__ import annotations

import bz2
import gzip
import logging
import lzma
import os
import zlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

logger = logging.getLogger("weatkit.embeddings")

#: Compression suffixes read transparently, and the module that opens them.
COMPRESSIONS = {".gz": gzip, ".bz2": bz2, ".xz": lzma}

#: Exceptions a (de)compressing reader raises on corrupt input.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)

_BUFFER = 1 << 20


def split_compression(path: str | os.PathLike) -> tuple[Path, str]:
    """``("wiki.en.vec.gz")`` -> ``(Path("wiki.en.vec"), ".gz")``; no compression -> ``""``."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in COMPRESSIONS:
        return p.with_suffix(""), suffix
    return p, ""


def default_name(path: str | os.PathLike) -> str:
    """The file stem without compression and format suffixes: ``wiki.en.vec.gz`` -> ``wiki.en``."""
    base, _ = split_compression(path)
    return base.stem or base.name or str(path)


def check_exists(path: str | os.PathLike) -> Path:
    """``path`` as a Path; a WeatkitError when it is missing or not a regular file."""
    p = Path(path)
    if not p.exists():
        raise WeatkitError(f"embeddings file not found: {p}")
    if p.is_dir():
        raise WeatkitError(f"embeddings path is a directory, not a file: {p}")
    return p


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing ``.gz``/``.bz2``/``.xz`` on the fly."""
    p = check_exists(path)
    _, comp = split_compression(p)
    try:
        if comp:
            return COMPRESSIONS[comp].open(p, "rb")  # type: ignore[return-value]
        return open(p, "rb", buffering=_BUFFER)
    except OSError as exc:
        raise WeatkitError(f"cannot open {p}: {exc}") from exc


@contextmanager
def reading(path: str | os.PathLike):
    """Context manager yielding :func:`open_binary`; turns I/O or decompression errors into
    WeatkitError naming the file."""
    f = open_binary(path)
    try:
        yield f
    except WeatkitError:
        raise
    except READ_ERRORS as exc:
        raise WeatkitError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc
    finally:
        f.close()


def needed_words(words: Iterable[str] | None) -> dict[str, None] | None:
    """The requested words as an insertion-ordered set (``None`` means: load everything)."""
    if words is None:
        return None
    if isinstance(words, str):
        words = [words]
    return dict.fromkeys(str(w) for w in words)


def check_first_n(first_n: int) -> int:
    """Validate ``first_n`` (a non-negative integer)."""
    if isinstance(first_n, bool) or not isinstance(first_n, int | np.integer) or first_n < 0:
        raise WeatkitError(f"first_n must be a non-negative integer, got {first_n!r}")
    return int(first_n)


def validate_rows(
    label: str,
    words: Sequence[str],
    vectors: np.ndarray,
    needed: dict[str, None] | None,
    where: Callable[[int], str],
) -> None:
    """Reject NaN/inf in any kept row and all-zero rows of needed words.

    ``needed=None`` (everything was asked for) makes every row needed. ``where(i)`` locates
    row ``i`` in the source (``"line 12"``, ``"row 3"``) for the message.
    """
    if len(vectors) == 0:
        return
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise WeatkitError(f"{label}, {where(i)}: vector of {words[i]!r} contains NaN or inf")
    zero = ~vectors.any(axis=1)
    if zero.any():
        for i in np.flatnonzero(zero):
            if needed is None or words[i] in needed:
                raise WeatkitError(
                    f"{label}, {where(i)}: vector of {words[i]!r} is all zeros "
                    "(cosine similarity undefined)"
                )


class UniqueWords:
    """Refuses a word read twice from one vector file, naming it and both places.

    Why refuse rather than keep the first row (gensim's ``load_word2vec_format`` keeps the
    first and logs ``duplicate word ... ignoring all but first``; weatkit did the same, with a
    log line the command line did not show): word2vec, fastText and GloVe write each word of
    their vocabulary once, so a repeated word means a damaged or concatenated file, and keeping
    either row silently makes the measured vector depend on the rows' order. Only the rows read
    are checked (the needed words, the first rows, or every row of a full load): checking every
    word of a multi-GB file would cost a set of all its words.
    """

    def __init__(self, label: str, unit: str) -> None:
        self.label = label
        self.unit = unit  # "line", "record" or "row": how a place in the file is named
        self.first: dict[bytes | str, int] = {}

    def add(self, word: bytes | str, place: int) -> None:
        """Remember that ``word`` is at ``place``; raise if it was seen before.

        Raises:
            WeatkitError: one line naming the file, the word and both places.
        """
        first = self.first.setdefault(word, place)
        if first != place:
            shown = word.decode("utf-8", "replace") if isinstance(word, bytes) else word
            raise WeatkitError(
                f"{self.label}: the word {shown!r} is given twice ({self.unit} {first} and "
                f"{self.unit} {place}); a vector file names each word once: remove one of them"
            )


def make_vectors(
    name: str, source: str, words: list[str], rows: np.ndarray, n_rows_in_source: int
) -> WordVectors:
    """Build the result, making sure the matrix is a C-contiguous float32 ``(n, dim)`` array."""
    return WordVectors(
        name=name,
        words=words,
        vectors=np.ascontiguousarray(rows, dtype=np.float32),
        source=source,
        n_rows_in_source=int(n_rows_in_source),
    )
