"""``.npy`` matrix + vocabulary (a text file with one word per line, or a one-column parquet).

The matrix is memory-mapped (``allow_pickle=False``) and only the needed rows are read.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from weatkit.embeddings.loader_utils import (
    UniqueWords,
    check_exists,
    make_vectors,
    open_binary,
    reading,
    split_compression,
    validate_rows,
)
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

#: Sibling vocabulary files tried, in order, for ``<stem>.npy``.
VOCAB_SUFFIXES = (".vocab", ".vocab.txt", ".txt", ".parquet")


def find_vocab(npy_path: str | os.PathLike) -> Path:
    """The vocabulary next to ``npy_path``: ``<stem>`` + one of :data:`VOCAB_SUFFIXES`."""
    base, _ = split_compression(npy_path)
    stem = base.with_suffix("") if base.suffix.lower() == ".npy" else base
    tried = [stem.with_name(stem.name + suffix) for suffix in VOCAB_SUFFIXES]
    for candidate in tried:
        if candidate.is_file():
            return candidate
    names = ", ".join(p.name for p in tried)
    raise WeatkitError(
        f"{npy_path}: no vocabulary file found (tried {names} in {stem.parent}); "
        "pass a vocabulary path (one word per line, or a one-column parquet)"
    )


def _read_parquet_vocab(path: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise WeatkitError(f"cannot read vocabulary parquet {path}: {exc}") from exc
    columns = [
        i
        for i, field in enumerate(table.schema)
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type)
    ]
    if len(columns) != 1:
        raise WeatkitError(
            f"vocabulary parquet {path}: expected exactly one string column, "
            f"found {len(columns)} in {table.schema.names}"
        )
    column = table.column(columns[0])
    if column.null_count:
        first = next(i for i, w in enumerate(column.to_pylist()) if w is None)
        raise WeatkitError(f"vocabulary parquet {path}, row {first + 1}: missing word (null)")
    return column.to_pylist()


def _read_text_vocab(path: Path) -> list[str]:
    with reading(path) as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    words: list[str] = []
    for lineno, line in enumerate(lines, start=1):
        if lineno == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        line = line.rstrip(b"\r")
        if not line:
            raise WeatkitError(f"vocabulary {path}, line {lineno}: empty word")
        try:
            words.append(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise WeatkitError(
                f"vocabulary {path}, line {lineno}: not valid UTF-8 ({exc.reason})"
            ) from exc
    return words


def read_vocab(path: str | os.PathLike) -> list[str]:
    """The words of a vocabulary file, in row order (parquet by extension, else text).

    The last few vocabularies read are cached (keyed by path, size and modification time).
    """
    p = check_exists(path).resolve()
    st = p.stat()
    return list(_cached_vocab(str(p), st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=4)
def _cached_vocab(path: str, size: int, mtime_ns: int) -> tuple[str, ...]:
    p = Path(path)
    if split_compression(p)[0].suffix.lower() == ".parquet":
        return tuple(_read_parquet_vocab(p))
    return tuple(_read_text_vocab(p))


def _load_matrix(path: Path) -> np.ndarray:
    label = str(path)
    try:
        if split_compression(path)[1]:
            with open_binary(path) as f:
                return np.load(f, allow_pickle=False)
        check_exists(path)
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except WeatkitError:
        raise
    except Exception as exc:  # ValueError (pickled/corrupt), OSError, EOFError, ...
        raise WeatkitError(f"cannot read {label} as a .npy matrix: {exc}") from exc


def load_npy(
    path: str | os.PathLike,
    *,
    needed: dict[str, None] | None,
    first_n: int,
    name: str,
    vocab_path: str | os.PathLike | None,
) -> WordVectors:
    """Rows of a ``.npy`` matrix for the needed words (plus the first ``first_n`` rows)."""
    p = check_exists(path)
    label = str(p)
    vocab_file = Path(vocab_path) if vocab_path is not None else find_vocab(p)
    vocab = read_vocab(vocab_file)
    matrix = _load_matrix(p)
    if matrix.ndim != 2 or matrix.dtype.kind not in "fiu":
        raise WeatkitError(
            f"{label}: expected a 2-d numeric matrix, got shape {matrix.shape} {matrix.dtype}"
        )
    if matrix.shape[0] != len(vocab):
        raise WeatkitError(
            f"{label}: {matrix.shape[0]} rows but {len(vocab)} words in the vocabulary {vocab_file}"
        )
    if matrix.shape[1] == 0:
        raise WeatkitError(f"{label}: vectors have dimension 0")

    seen = UniqueWords(str(vocab_file), "row")
    head = min(first_n, len(vocab))
    positions = [i for i, w in enumerate(vocab) if needed is None or i < head or w in needed]
    for i in positions:
        seen.add(vocab[i], i + 1)
    with np.errstate(all="ignore"):
        if needed is None:
            rows = np.asarray(matrix, dtype=np.float32)
        else:
            rows = np.asarray(matrix[positions], dtype=np.float32)
    words = [vocab[i] for i in positions]
    validate_rows(label, words, rows, needed, lambda i: f"row {positions[i] + 1}")
    return make_vectors(name, label, words, rows, len(vocab))
