"""Binary embedding formats: word2vec ``.bin`` (streamed), fastText ``.bin`` and gensim ``.kv``.

The word2vec binary layout is a ``N DIM\\n`` header followed by N records ``word<space><DIM
little-endian float32>`` (the original C tool adds a ``\\n`` after each vector, gensim does not).
It is read in one pass; the vector bytes of rows that are not needed are skipped, not decoded.
fastText and gensim files are read with gensim (whole model in memory), then filtered.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from weatkit.embeddings.loader_utils import (
    UniqueWords,
    make_vectors,
    reading,
    split_compression,
    validate_rows,
)
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

#: int32 at offset 0 of every fastText ``.bin`` model (new format).
FASTTEXT_MAGIC = 793712314

_CHUNK = 1 << 20
_MAX_WORD_BYTES = 1 << 16
_MAX_HEADER_BYTES = 256


def is_fasttext_bin(head: bytes) -> bool:
    """True when the first bytes of a file carry the fastText magic number."""
    return len(head) >= 4 and int.from_bytes(head[:4], "little", signed=True) == FASTTEXT_MAGIC


class _Reader:
    """Minimal buffered byte reader with ``pos`` into ``buf`` (avoids many tiny reads)."""

    def __init__(self, f: Any) -> None:
        self.f = f
        self.buf = b""
        self.pos = 0

    def more(self) -> bool:
        chunk = self.f.read(_CHUNK)
        if not chunk:
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def ensure(self, n: int) -> bool:
        while len(self.buf) - self.pos < n:
            if not self.more():
                return False
        return True

    def find(self, byte: bytes, limit: int) -> int:
        """Index in ``buf`` of the next ``byte`` at or after ``pos``; -1 if it is not within
        ``limit`` bytes nor before the end of the file."""
        start = self.pos
        while True:
            end = self.pos + limit
            i = self.buf.find(byte, start, end)
            if i >= 0:
                return i
            if len(self.buf) >= end:
                return -1
            searched = len(self.buf) - self.pos
            if not self.more():
                return -1
            start = self.pos + searched


def _read_header(r: _Reader, label: str) -> tuple[int, int]:
    nl = r.find(b"\n", _MAX_HEADER_BYTES)
    if nl < 0:
        raise WeatkitError(f"{label}: not a word2vec binary file (no 'N DIM' header line)")
    toks = r.buf[r.pos : nl].split()
    r.pos = nl + 1
    if len(toks) != 2 or not (toks[0].isdigit() and toks[1].isdigit()):
        shown = r.buf[: min(nl, 60)].decode("utf-8", "replace")
        raise WeatkitError(
            f"{label}: not a word2vec binary file (first line {shown!r} is not 'N DIM')"
        )
    n, dim = int(toks[0]), int(toks[1])
    if dim == 0:
        raise WeatkitError(f"{label}: header gives dimension 0")
    return n, dim


def load_word2vec_bin(
    path: str | os.PathLike, *, needed: dict[str, None] | None, first_n: int, name: str
) -> WordVectors:
    """Stream a word2vec binary file, keeping needed words and the first ``first_n`` records."""
    label = str(path)
    load_all = needed is None
    need_b = set() if needed is None else {w.encode("utf-8") for w in needed if w}
    remaining = len(need_b)
    words: list[str] = []
    records: list[int] = []
    data = bytearray()
    seen = UniqueWords(label, "record")
    rec = 0

    with reading(path) as f:
        r = _Reader(f)
        n, dim = _read_header(r, label)
        nbytes = 4 * dim
        while rec < n:
            # records may be separated by newlines (C word2vec); skip them
            while True:
                if not r.ensure(1):
                    break
                if r.buf[r.pos] == 0x0A:
                    r.pos += 1
                    continue
                break
            if len(r.buf) - r.pos == 0:
                break  # clean end of file before N records
            sp = r.find(b" ", _MAX_WORD_BYTES)
            if sp < 0:
                raise WeatkitError(
                    f"{label}, record {rec + 1}: no space after the word within "
                    f"{_MAX_WORD_BYTES} bytes (corrupt or truncated file)"
                )
            word_b = r.buf[r.pos : sp]
            r.pos = sp + 1
            if not r.ensure(nbytes):
                raise WeatkitError(
                    f"{label}, record {rec + 1}: file ends inside the vector of "
                    f"{word_b.decode('utf-8', 'replace')!r} (truncated?)"
                )
            start = r.pos
            r.pos += nbytes
            row = rec
            rec += 1
            is_needed = word_b in need_b
            if not load_all and not is_needed and row >= first_n:
                if remaining == 0 and not need_b:
                    break
                continue
            seen.add(word_b, rec)  # raises for a word kept before (read to the end for that)
            try:
                word = word_b.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise WeatkitError(
                    f"{label}, record {rec}: word is not valid UTF-8 ({exc.reason})"
                ) from exc
            if not word:
                raise WeatkitError(f"{label}, record {rec}: empty word")
            data += r.buf[start : start + nbytes]
            words.append(word)
            records.append(rec)
            if not load_all:
                remaining -= is_needed
                if remaining == 0 and rec >= first_n and not need_b:
                    break

    if load_all and rec < n:
        raise WeatkitError(f"{label}: header says {n} records but the file has only {rec}")
    if rec == 0:
        raise WeatkitError(f"{label}: no vectors after the header")
    matrix = np.frombuffer(data, dtype="<f4").reshape(len(words), dim)
    validate_rows(label, words, matrix, needed, lambda i: f"record {records[i]}")
    return make_vectors(name, label, words, matrix, n)


def _filter_keyed_vectors(
    kv: Any,
    label: str,
    *,
    needed: dict[str, None] | None,
    first_n: int,
    name: str,
    fasttext_oov: bool,
) -> WordVectors:
    """Keep the needed words (and the first ``first_n`` keys) of a gensim KeyedVectors."""
    from gensim.models.fasttext import FastTextKeyedVectors

    keys = list(kv.index_to_key)
    n = len(keys)
    if needed is None:
        positions = list(range(n))
    else:
        index = kv.key_to_index
        found = {index[w] for w in needed if w in index}
        positions = sorted(found.union(range(min(first_n, n))))
    words = [str(keys[i]) for i in positions]
    matrix = np.asarray(kv.vectors)
    rows = matrix if needed is None else matrix[positions]
    rows = np.asarray(rows, dtype=np.float32).reshape(len(positions), kv.vector_size)
    where = [f"row {i + 1}" for i in positions]
    if needed is not None and fasttext_oov and isinstance(kv, FastTextKeyedVectors):
        extra_words: list[str] = []
        extra_rows: list[np.ndarray] = []
        for w in needed:
            if w in kv.key_to_index or not w:
                continue
            try:
                vec = np.asarray(kv.get_vector(w), dtype=np.float32)
            except KeyError:  # no n-grams for this word (or a model without buckets)
                continue
            if vec.any():  # an OOV word without any known n-gram gets zeros: leave it absent
                extra_words.append(w)
                extra_rows.append(vec)
        if extra_words:
            words += extra_words
            rows = np.concatenate([rows, np.stack(extra_rows)])
            where += [f"OOV word {w!r} (from sub-words)" for w in extra_words]
    validate_rows(label, words, rows, needed, lambda i: where[i])
    return make_vectors(name, label, words, rows, n)


def _gensim_error(label: str, what: str, exc: Exception) -> WeatkitError:
    return WeatkitError(f"cannot read {label} as {what}: {type(exc).__name__}: {exc}")


def load_fasttext_bin(
    path: str | os.PathLike,
    *,
    needed: dict[str, None] | None,
    first_n: int,
    name: str,
    fasttext_oov: bool,
) -> WordVectors:
    """A fastText ``.bin`` model via gensim; OOV words get sub-word vectors if ``fasttext_oov``."""
    from gensim.models.fasttext import load_facebook_vectors

    label = str(path)
    if split_compression(path)[1]:
        raise WeatkitError(
            f"{label}: compressed fastText .bin models cannot be read directly (gensim reads "
            "them wrongly); decompress the file first"
        )
    try:
        kv = load_facebook_vectors(os.fspath(path))
    except WeatkitError:
        raise
    except Exception as exc:  # gensim raises many types on corrupt input
        raise _gensim_error(label, "a fastText binary model", exc) from exc
    return _filter_keyed_vectors(
        kv, label, needed=needed, first_n=first_n, name=name, fasttext_oov=fasttext_oov
    )


def load_keyed_vectors(
    path: str | os.PathLike,
    *,
    needed: dict[str, None] | None,
    first_n: int,
    name: str,
    allow_pickle: bool,
    fasttext_oov: bool,
) -> WordVectors:
    """A gensim ``KeyedVectors.save`` file (a pickle: only with ``allow_pickle``)."""
    label = str(path)
    if not allow_pickle:
        raise WeatkitError(
            f"{label}: gensim .kv files are Python pickles, which can run arbitrary code when "
            "loaded; pass --allow-pickle (allow_pickle=True) only if you trust this file"
        )
    from gensim.models import KeyedVectors

    try:
        obj = KeyedVectors.load(os.fspath(path), mmap="r")
    except Exception as exc:
        raise _gensim_error(label, "gensim KeyedVectors", exc) from exc
    kv = getattr(obj, "wv", obj)  # a full Word2Vec/FastText model saved with .save()
    if not isinstance(kv, KeyedVectors):
        raise WeatkitError(f"{label}: holds a {type(obj).__name__}, not gensim KeyedVectors")
    return _filter_keyed_vectors(
        kv, label, needed=needed, first_n=first_n, name=name, fasttext_oov=fasttext_oov
    )
