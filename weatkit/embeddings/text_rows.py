"""One vectorised parse of many rows of a text embeddings file (the values after the word).

The rows' bytes are joined; where the bytes change from separator (ASCII whitespace) to token
and back is found with numpy over the joined bytes, which cuts them into an Arrow string array
that alternates separator runs (null: never parsed) and tokens; the tokens are cast to float64
by Arrow (``fast_float``: correctly rounded, like Python's ``float``) and then to float32, which
is what ``numpy.array(tokens, dtype=float32)`` does one row at a time (Python ``float``, then
rounding to float32). When anything is off (a control character, a row
with the wrong number of values, a token Arrow does not parse, a NaN) the batch is refused and
the caller parses it row by row, which gives the exact error for the first bad row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: ASCII whitespace as ``bytes.split()`` splits on it (``\\t\\n\\v\\f\\r`` and space).
_TAB, _CR, _SPACE = 9, 13, 32


def parse_rows(rests: list[bytes], dim: int) -> np.ndarray | None:
    """The ``(len(rests), dim)`` float32 matrix of the rows' values, or None to parse by row.

    ``rests`` are rows without their word; each must hold exactly ``dim`` whitespace-separated
    numbers. The values are those of ``numpy.array(rest.split(), dtype=numpy.float32)``, bit for
    bit; a None says the fast path cannot vouch for that (a malformed row, or a token spelt in
    a way only Python's ``float`` reads, such as ``1_0``), never that a row is wrong.
    """
    if not rests:
        return np.zeros((0, dim), dtype=np.float32)
    data = b"\n".join([b"", *rests, b""])  # separators first and last: each token between two
    b = np.frombuffer(data, dtype=np.uint8)
    sep = b <= _SPACE
    control = b[b < _SPACE]
    if ((control < _TAB) | (control > _CR)).any():
        return None  # a control byte that bytes.split() keeps inside a token
    # [0, start, end, start, end, ..., len]: separator runs (even slots) and tokens (odd slots)
    flags = np.empty(len(b) + 1, dtype=bool)
    np.not_equal(sep[:-1], sep[1:], out=flags[1:-1])
    flags[0] = flags[-1] = True
    offsets = np.flatnonzero(flags)
    n_tokens = (len(offsets) - 2) // 2
    row_starts = np.cumsum([1] + [len(r) + 1 for r in rests])
    if (np.diff(np.searchsorted(offsets[1:-1:2], row_starts)) != dim).any():
        return None
    validity = np.full((len(offsets) - 1 + 7) // 8, 0xAA, dtype=np.uint8)  # odd slots valid
    tokens = pa.LargeStringArray.from_buffers(
        len(offsets) - 1,
        pa.py_buffer(offsets),
        pa.py_buffer(data),
        pa.py_buffer(validity),
        null_count=len(offsets) - 1 - n_tokens,
    )
    try:
        parsed = pc.cast(tokens, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    values = np.frombuffer(parsed.buffers()[1], dtype=np.float64, count=len(offsets) - 1)[1::2]
    if np.isnan(values).any():  # Arrow reads "nan(...)", which Python does not
        return None
    with np.errstate(over="ignore"):  # beyond float32: inf, as numpy gives (then refused)
        return values.astype(np.float32).reshape(len(rests), dim)
