"""Corpora: streamed (decompressed by suffix, checked to be UTF-8), counted, capped and prepared
for fastText (capped or decompressed copies, concatenations)."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from weatkit._io.fingerprint import file_fingerprint
from weatkit.embeddings.loader_utils import COMPRESSIONS, READ_ERRORS, split_compression
from weatkit.errors import WeatkitError
from weatkit.progress import progress
from weatkit.training.options import check_int
from weatkit.training.staging import staging

_TOKEN = re.compile(rb"\S+")  # ASCII whitespace separates tokens, as in bytes.split and fastText
_COPY_BLOCK = 1 << 20


def corpus_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise WeatkitError(f"corpus not found: {p}")
    if p.is_dir():
        raise WeatkitError(f"corpus path is a directory, not a file: {p}")
    return p


def _open_corpus(p: Path) -> BinaryIO:
    _, comp = split_compression(p)
    try:
        if comp:
            return COMPRESSIONS[comp].open(p, "rb")  # type: ignore[no-any-return]
        return open(p, "rb", buffering=_COPY_BLOCK)
    except OSError as err:
        raise WeatkitError(f"cannot open corpus {p}: {err.strerror or err}") from None


def iter_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The lines of a corpus as bytes (line ends kept), decompressed by suffix and checked to be
    UTF-8. A missing file or a directory is reported at once, the rest while reading.

    Raises:
        WeatkitError: missing file, directory, unreadable or corrupt compressed data, or a line
            that is not valid UTF-8 (the message gives the line number).
    """
    return _lines(corpus_path(path))


def _lines(p: Path) -> Iterator[bytes]:
    with _open_corpus(p) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                _check_utf8(line, p, lineno)
                yield line
        except READ_ERRORS as err:
            raise WeatkitError(f"cannot read corpus {p}: {type(err).__name__}: {err}") from None


def _check_utf8(line: bytes, path: Path, lineno: int) -> None:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise WeatkitError(
            f"corpus {path}, line {lineno}: not valid UTF-8 (byte 0x{line[err.start]:02x} at "
            f"byte {err.start + 1} of the line); save the corpus as UTF-8"
        ) from None


def count_words(path: str | os.PathLike[str]) -> int:
    """Number of whitespace-separated tokens in a (possibly compressed) UTF-8 corpus, streamed.

    Raises:
        WeatkitError: as :func:`iter_lines`.
    """
    return sum(len(line.split()) for line in iter_lines(path))


def check_max_words(max_words: int | None, minimum: int) -> int | None:
    if max_words is not None:
        check_int("the word cap", max_words, minimum=minimum)
        return int(max_words)
    return None


def copy_words(lines: Iterable[bytes], out: BinaryIO, max_words: int | None) -> int:
    """Write ``lines`` to ``out`` until ``max_words`` tokens (None: all); every line written
    ends with a newline, the line where the cap falls is cut after its last token kept, and no
    line after it is read."""
    written = 0
    if max_words == 0:
        return 0
    for line in lines:
        n = len(line.split())
        if max_words is not None and written + n >= max_words:
            if written + n > max_words:
                line = _first_tokens(line, max_words - written)
            out.write(_terminated(line))
            return max_words
        out.write(_terminated(line))
        written += n
    return written


def _terminated(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n"


def _first_tokens(line: bytes, k: int) -> bytes:
    """``line`` up to the end of its ``k``-th token (``k >= 1``)."""
    ends = [match.end() for match in itertools.islice(_TOKEN.finditer(line), k)]
    return line[: ends[-1]]


def cap_corpus(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], max_words: int | None
) -> int:
    """Write the first ``max_words`` tokens of ``src`` to ``dst`` (plain UTF-8 text); return the
    number of tokens written.

    Line breaks are kept: every line before the cap is copied as it is, the line where the cap
    falls is truncated after the last token kept, and nothing after it is written (a final line
    without a newline gets one). ``max_words=None`` copies (decompresses) the whole corpus.
    ``src`` is streamed, never loaded whole; ``dst`` is written atomically.

    Raises:
        WeatkitError: as :func:`iter_lines`, a negative ``max_words``, or an unwritable ``dst``.
    """
    cap = check_max_words(max_words, minimum=0)
    lines = iter_lines(src)
    with staging() as stage, stage.writing(Path(dst)) as out:
        return copy_words(lines, out, cap)


@dataclass(frozen=True)
class PreparedCorpus:
    lang: str
    source: Path
    path: Path  # what fastText reads: the source, or a capped/decompressed copy
    words: int
    total: int | None
    fingerprint: dict[str, object]


def _prepare_one(
    lang: str, src: Path, tmp: Path, cap: int | None, total: int | None
) -> PreparedCorpus:
    """Use the source as it is when fastText can read all of it, else write a (capped) copy."""
    compressed = bool(split_compression(src)[1])
    if not compressed and (cap is None or (total is not None and total <= cap)):
        words = total if total is not None else count_words(src)
        path = src
    else:
        path = tmp / f"{lang}.txt"
        lines = iter_lines(src)
        with _scratch_file(path) as out:
            words = copy_words(lines, out, cap)
    if words == 0:
        raise WeatkitError(f"corpus {src} has no words")
    return PreparedCorpus(lang, src, path, words, total, file_fingerprint(src))


def _count_all(sources: Mapping[str, Path], show: bool | None) -> dict[str, int]:
    bar = progress(sources.items(), desc="counting words", unit="corpus", show=show)
    return {lang: count_words(src) for lang, src in bar}


def prepare_corpora(
    sources: Mapping[str, Path],
    tmp: Path,
    cap_words: int | None,
    cap_to_smallest: bool,
    show: bool | None,
) -> tuple[dict[str, PreparedCorpus], list[str]]:
    """Every corpus checked, counted and capped; and a note on the cap."""
    totals: Mapping[str, int | None] = dict.fromkeys(sources)
    cap, note = cap_words, f"every corpus capped to {cap_words:,} words" if cap_words else ""
    if cap_to_smallest:
        totals = counted = _count_all(sources, show)
        smallest = min(counted, key=counted.__getitem__)
        if counted[smallest] == 0:
            raise WeatkitError(f"corpus {sources[smallest]} has no words")
        if cap is None or counted[smallest] < cap:
            cap = counted[smallest]
            note = f"every corpus capped to {cap:,} words, the size of the {smallest} corpus"
    bar = progress(sources.items(), desc="preparing corpora", unit="corpus", show=show)
    prepared = {lang: _prepare_one(lang, src, tmp, cap, totals[lang]) for lang, src in bar}
    return prepared, [note] if note else []


@contextmanager
def _scratch_file(path: Path) -> Iterator[BinaryIO]:
    """A temporary corpus file, with a one-line error when the disk is full."""
    try:
        with open(path, "wb") as out:
            yield out
    except OSError as err:
        reason = err.strerror or err
        raise WeatkitError(f"cannot write the temporary file {path}: {reason}") from None


@contextmanager
def training_file(corpora: Sequence[PreparedCorpus], tmp: Path) -> Iterator[Path]:
    """The one corpus, or the concatenation of several (removed afterwards)."""
    if len(corpora) == 1:
        yield corpora[0].path
        return
    joint = tmp / "joint.txt"
    try:
        with _scratch_file(joint) as out:
            for corpus in corpora:
                _append(corpus.path, out)
        yield joint
    finally:
        joint.unlink(missing_ok=True)


def _append(path: Path, out: BinaryIO) -> None:
    last = b"\n"
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_COPY_BLOCK), b""):
            out.write(block)
            last = block[-1:]
    if last != b"\n":
        out.write(b"\n")
