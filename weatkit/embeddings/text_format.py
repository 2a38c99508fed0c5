"""Streaming reader for word2vec/fastText/GloVe text files (``.vec``, ``.txt``, compressed or not).

One row per line: ``word v1 v2 ... vd``, optionally preceded by a ``N DIM`` header line. When only
some words are needed, the file is read once as bytes lines and only the token before the first
space is looked at; the floats of a row are parsed only when the row is kept, many kept rows at
once (:func:`weatkit.embeddings.text_rows.parse_rows`), and row by row only to name the first bad
row of a batch that does not parse.
"""

from __future__ import annotations

import os

import numpy as np

from weatkit.embeddings.loader_utils import (
    READ_ERRORS,
    UniqueWords,
    make_vectors,
    reading,
    validate_rows,
)
from weatkit.embeddings.text_rows import parse_rows
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

_BOM = b"\xef\xbb\xbf"

#: Bytes of kept rows parsed in one batch (bounds the memory of the raw rows held at once).
_BATCH_BYTES = 16 << 20


def _split_word(raw: bytes) -> tuple[bytes, bytes | None]:
    """Slow path: ``(word, rest)`` by ASCII whitespace; ``(b"", None)`` for a blank line."""
    parts = raw.split(None, 1)
    if not parts:
        return b"", None
    return parts[0], (parts[1] if len(parts) > 1 else b"")


def _is_header(raw: bytes) -> tuple[int, int] | None:
    """``(n, dim)`` when the line is exactly two non-negative integers, else None."""
    toks = raw.split()
    if len(toks) == 2 and toks[0].isdigit() and toks[1].isdigit():
        return int(toks[0]), int(toks[1])
    return None


def _decode(word: bytes, label: str, lineno: int) -> str:
    try:
        return word.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WeatkitError(f"{label}, line {lineno}: not valid UTF-8 ({exc.reason})") from exc


def _parse_values(rest: bytes, word: str, dim: int, dim_from: str, label: str, lineno: int):
    """The floats of one row as float32, checking they are numbers and that there are ``dim``."""
    toks = rest.split()
    try:
        vec = np.array(toks, dtype=np.float32)
    except (ValueError, TypeError, OverflowError) as exc:
        bad = next((t for t in toks if not _is_float(t)), None)
        shown = bad.decode("utf-8", "replace") if bad is not None else str(exc)
        raise WeatkitError(
            f"{label}, line {lineno}: malformed value {shown!r} in the vector of {word!r} "
            "(expected a number)"
        ) from exc
    if vec.shape != (dim,):
        raise WeatkitError(
            f"{label}, line {lineno}: {word!r} has {vec.size} values, expected {dim} ({dim_from})"
        )
    return vec


def _is_float(tok: bytes) -> bool:
    try:
        np.array([tok], dtype=np.float32)
    except (ValueError, TypeError, OverflowError):
        return False
    return True


class _KeptRows:
    """The kept rows' values, parsed a batch at a time (:func:`parse_rows`); a batch that does
    not parse is parsed again row by row (:func:`_parse_values`), which raises for its first
    bad row the error a row-by-row reader raises."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.blocks: list[np.ndarray] = []
        self.rests: list[bytes] = []
        self.words: list[str] = []
        self.linenos: list[int] = []
        self.pending = 0  # index in words of the first row not parsed yet
        self.size = 0

    def add(self, word: str, rest: bytes, lineno: int, dim: int, dim_from: str) -> None:
        self.words.append(word)
        self.linenos.append(lineno)
        self.rests.append(rest)
        self.size += len(rest)
        if self.size >= _BATCH_BYTES:
            self.parse(dim, dim_from)

    def parse(self, dim: int, dim_from: str) -> None:
        """Parse the rows added since the last call."""
        block = parse_rows(self.rests, dim)
        if block is None:
            rows = zip(
                self.words[self.pending :], self.rests, self.linenos[self.pending :], strict=True
            )
            block = np.stack(
                [_parse_values(r, w, dim, dim_from, self.label, n) for w, r, n in rows]
            )
        self.blocks.append(block)
        self.pending = len(self.words)
        self.rests, self.size = [], 0

    def matrix(self, dim: int) -> np.ndarray:
        """Every kept row, in file order (after the last :meth:`parse`)."""
        if not self.blocks:
            return np.zeros((0, dim), dtype=np.float32)
        return np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]


def load_text(
    path: str | os.PathLike,
    *,
    needed: dict[str, None] | None,
    first_n: int,
    name: str,
) -> WordVectors:
    """Read a text embeddings file; see :func:`weatkit.embeddings.static.load_static`.

    Args:
        path: the file (``.gz``/``.bz2``/``.xz`` are decompressed on the fly).
        needed: words to keep (insertion-ordered), or None to keep every row.
        first_n: also keep the first ``first_n`` data rows.
        name: the name of the result.

    Only kept rows are decoded and parsed. A word kept twice is refused
    (:class:`~weatkit.embeddings.loader_utils.UniqueWords`): so that a needed word's second row
    is seen wherever it is (a file made of two files joined), the file is read to its end when
    words are needed, however early they are all found; only a load of the first ``first_n``
    rows alone stops early (then ``n_rows_in_source`` is the header's N, or -1 without one).
    Rows that are not kept are never parsed (what makes a filtered load fast): a malformed
    value in the row of a word not needed is not seen.
    """
    label = str(path)
    load_all = needed is None
    need_b = set() if needed is None else {w.encode("utf-8") for w in needed if w}
    remaining = len(need_b)

    kept = _KeptRows(label)
    seen = UniqueWords(label, "line")
    header: tuple[int, int] | None = None
    dim = -1
    dim_from = ""
    n_rows = 0
    lineno = 0
    stopped_early = False

    with reading(path) as f, np.errstate(all="ignore"):
        try:
            for raw in f:
                lineno += 1
                sp = raw.find(b" ")
                if sp > 0:
                    word_b = raw[:sp]
                    rest = None
                    if b"\t" in word_b:
                        word_b, rest = _split_word(raw)
                else:
                    word_b, rest = _split_word(raw)
                    if rest is None:
                        continue  # blank line
                if dim < 0:  # first non-blank line: header, or the row that fixes the dimension
                    if lineno == 1 and word_b.startswith(_BOM):
                        raw = raw[len(_BOM) :]
                        word_b, rest = _split_word(raw)
                        if rest is None:
                            continue
                    header = _is_header(raw)
                    if header is not None:
                        if header[1] == 0:
                            raise WeatkitError(f"{label}, line {lineno}: header gives dimension 0")
                        dim, dim_from = header[1], f"header, line {lineno}"
                        continue
                    if rest is None:
                        rest = raw[sp + 1 :]
                    dim, dim_from = len(rest.split()), f"first row, line {lineno}"
                    if dim == 0:
                        raise WeatkitError(
                            f"{label}, line {lineno}: no vector values after the word "
                            "(not an embeddings text file?)"
                        )
                row = n_rows
                n_rows += 1
                if load_all:
                    if header is not None and n_rows > header[0]:
                        raise WeatkitError(
                            f"{label}, line {lineno}: more rows than the {header[0]} "
                            "given in the header"
                        )
                else:
                    is_needed = word_b in need_b
                    if not is_needed and row >= first_n:
                        if remaining == 0 and not need_b:
                            stopped_early = True
                            break
                        continue
                seen.add(word_b, lineno)  # raises for a word kept before (read to the end for that)
                word = _decode(word_b, label, lineno)
                if rest is None:
                    rest = raw[sp + 1 :]
                kept.add(word, rest, lineno, dim, dim_from)
                if not load_all:
                    remaining -= is_needed
                    if remaining == 0 and n_rows >= first_n and not need_b:
                        stopped_early = True
                        break
        except (WeatkitError, *READ_ERRORS):
            if kept.rests:
                kept.parse(dim, dim_from)  # a bad row before this error is reported first
            raise
        if kept.rests:
            kept.parse(dim, dim_from)

    if dim < 0:
        raise WeatkitError(f"{label}: empty file (no header, no vectors)")
    if n_rows == 0:
        raise WeatkitError(f"{label}: no vectors after the header")
    if load_all and header is not None and n_rows < header[0]:
        raise WeatkitError(
            f"{label}: header says {header[0]} rows but the file has only {n_rows} "
            f"(ends at line {lineno}; truncated?)"
        )
    words, linenos = kept.words, kept.linenos
    matrix = kept.matrix(dim)
    validate_rows(label, words, matrix, needed, lambda i: f"line {linenos[i]}")
    n_source = n_rows if not stopped_early else -1
    if header is not None:
        n_source = header[0]
    return make_vectors(name, label, words, matrix, n_source)
