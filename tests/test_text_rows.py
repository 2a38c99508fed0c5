"""The batched parse of text vectors against a plain row-by-row parse: same bits, same errors.

The reference is what the text loader did before batching, one row at a time: ``numpy.array(
rest.split(), dtype=float32)`` (Python ``float``, then float32). :func:`parse_rows` must give
the same bits or decline (None); a file loads to the same words and bits, or fails with the same
one-line error, as with the row-by-row path (forced by making :func:`parse_rows` decline).
"""

from __future__ import annotations

import bz2
import decimal
import gzip
import itertools
import lzma
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from weatkit.embeddings import text_format
from weatkit.embeddings.static import load_static
from weatkit.embeddings.text_rows import parse_rows
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_counter = itertools.count()


def reference_rows(rests: list[bytes], dim: int) -> np.ndarray | None:
    """Row by row, as the loader did: None where a row is malformed or has another length."""
    out = []
    for rest in rests:
        try:
            with np.errstate(over="ignore"):
                row = np.array(rest.split(), dtype=np.float32)
        except (ValueError, TypeError, OverflowError):
            return None
        if row.shape != (dim,):
            return None
        out.append(row)
    return np.stack(out) if out else np.zeros((0, dim), dtype=np.float32)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool((a.view(np.uint32) == b.view(np.uint32)).all())


def _ties() -> list[str]:
    """Decimals just above and below float32 midpoints: where rounding straight to float32
    and through float64 differ (the loader rounds through float64)."""
    decimal.getcontext().prec = 60
    out = []
    for base in (1.0, 0.3, 123.456, 1e-30):
        f = np.float32(base)
        up = np.nextafter(f, np.float32(np.inf))
        mid = (decimal.Decimal(float(f)) + decimal.Decimal(float(up))) / 2
        out += [str(mid + decimal.Decimal(f"1e-{k}")) for k in (40, 45)]
        out += [str(mid - decimal.Decimal("1e-40")), str(mid)]
    return out


SPELLINGS = [
    "0", "-0", "-0.0", "+1", ".5", "5.", "-.5", "1e5", "1E+05", "1e-05", "2.5e-3", "0001",
    "1e400", "-1e400", "1e-50", "1.4e-45", "3.4028235e38", "3.4028236e38", "1e-320",
    "0.1000000000000000055511151231257827", "123456789012345678901234567890",
    "1_0", "inf", "-Infinity", "NaN", "nan(12)", "1e", "e5", ".", "-", "1,5", "0x10", "1d5",
    "١", "\u00a01", "1\x01", "\x1c1", *_ties(),
]  # fmt: skip


@pytest.mark.parametrize("token", SPELLINGS)
def test_every_spelling_parses_like_the_row_by_row_reader_or_is_declined(token: str) -> None:
    rests = [f"0.25 {token} -1.5\n".encode("utf-8", "surrogatepass")]
    fast, slow = parse_rows(rests, 3), reference_rows(rests, 3)
    if slow is None:
        assert fast is None
    elif fast is not None:
        assert same_bits(fast, slow)


def test_typical_rows_parse_in_one_batch_to_the_same_bits() -> None:
    """fastText (%.4f, trailing space), GloVe (%g-like), word2vec (%f), exponents, tabs, CRLF."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 7)) * 10.0 ** rng.integers(-8, 4, (50, 7))
    formats = ["{:.4f}", "{:g}", "{:f}", "{!r}", "{:.6e}", "{:.17g}"]
    rests = []
    for i, row in enumerate(x):
        fmt = formats[i % len(formats)]
        sep = ["  ", " ", "\t"][i % 3]
        rests.append(sep.join(fmt.format(float(v)) for v in row) + [" \n", "\r\n", ""][i % 3])
    encoded = [r.encode() for r in rests]
    fast = parse_rows(encoded, 7)
    assert fast is not None and fast.dtype == np.float32
    assert same_bits(fast, reference_rows(encoded, 7))


def test_declines_rows_of_another_length_and_empty_rows() -> None:
    assert parse_rows([b"1 2 3\n", b"1 2\n"], 3) is None
    assert parse_rows([b"1 2 3 4\n", b"1 2\n"], 3) is None  # the total is right, a row is not
    assert parse_rows([b""], 1) is None
    assert parse_rows([b"\x01 1 2 3\n"], 3) is None  # a token for bytes.split(), not a space
    assert parse_rows([], 4).shape == (0, 4)


token_bytes = st.one_of(
    st.sampled_from([t.encode("utf-8", "surrogatepass") for t in SPELLINGS]),
    st.floats(allow_nan=True, allow_infinity=True, width=32).map(lambda v: repr(v).encode()),
    st.floats().map(lambda v: f"{v:.6g}".encode()),
    st.text(alphabet="0123456789.eE+-_naifNAIF", max_size=8).map(str.encode),
    st.binary(max_size=4),
)
separators = st.sampled_from([b" ", b"  ", b"\t", b" \t ", b"\x0b", b"\x0c", b"\r"])


@st.composite
def row_batches(draw) -> tuple[list[bytes], int]:
    dim = draw(st.integers(1, 4))
    rests = []
    for _ in range(draw(st.integers(1, 5))):
        n = draw(st.sampled_from([dim, dim, dim, dim - 1, dim + 1]))
        toks = [draw(token_bytes) for _ in range(max(n, 0))]
        rest = b"".join(t + draw(separators) for t in toks[:-1]) + (toks[-1] if toks else b"")
        rests.append(draw(st.sampled_from([b"", b" "])) + rest + draw(st.sampled_from(
            [b"\n", b" \n", b"\r\n", b""]
        )))  # fmt: skip
    return rests, dim


@FUZZ
@given(batch=row_batches())
def test_fuzz_parse_rows_never_disagrees_with_the_row_by_row_reader(batch) -> None:
    rests, dim = batch
    fast, slow = parse_rows(rests, dim), reference_rows(rests, dim)
    if slow is None:
        assert fast is None
    elif fast is not None:
        assert same_bits(fast, slow)


@FUZZ
@given(
    values=st.lists(
        st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=3, max_size=3),
        min_size=1,
        max_size=6,
    ),
    seps=st.lists(separators, min_size=2, max_size=2),
    end=st.sampled_from([b"\n", b" \n", b"\r\n", b""]),
)
def test_fuzz_plain_numbers_are_never_declined(values, seps, end) -> None:
    """Rows of plain decimals (repr, %g) parse in one batch, however they are separated."""
    rests = [
        (seps[0].join(repr(v).encode() for v in row[:2]) + seps[1] + f"{row[2]:g}".encode()) + end
        for row in values
    ]
    fast = parse_rows(rests, 3)
    assert fast is not None and same_bits(fast, reference_rows(rests, 3))


# --------------------------------------------------------------------------- whole files


@contextmanager
def row_by_row():
    """The loader without batches: every batch is declined and parsed row by row."""
    with mock.patch.object(text_format, "parse_rows", lambda rests, dim: None):
        yield


@contextmanager
def small_batches(n_bytes: int = 64):
    with mock.patch.object(text_format, "_BATCH_BYTES", n_bytes):
        yield


def outcome(path: Path, **kwargs) -> WordVectors | str:
    try:
        return load_static(path, **kwargs)
    except WeatkitError as err:
        return str(err)


def assert_same(a: WordVectors | str, b: WordVectors | str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert (a.words, a.n_rows_in_source) == (b.words, b.n_rows_in_source)
    assert same_bits(a.vectors, b.vectors)


def generated(path: Path, n: int = 300, dim: int = 20, seed: int = 0, opener=open) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    x = rng.standard_normal((n, dim)) * 10.0 ** rng.integers(-6, 3, (n, dim))
    lines = [f"{n} {dim}"] + [
        w + " " + " ".join(f"{v:.{4 + i % 9}g}" for v in row) + " "
        for i, (w, row) in enumerate(zip(words, x, strict=True))
    ]
    with opener(path, "wb") as f:
        f.write(("\n".join(lines) + "\n").encode())
    return words


@pytest.mark.parametrize(
    ("suffix", "opener"),
    [(".vec", open), (".vec.gz", gzip.open), (".txt.bz2", bz2.open), (".vec.xz", lzma.open)],
)
def test_a_generated_file_loads_to_the_bits_of_a_row_by_row_load(
    tmp_path: Path, suffix: str, opener
) -> None:
    path = tmp_path / f"g{suffix}"
    words = generated(path, opener=opener)
    wanted = words[::7]
    for kwargs in ({}, {"words": wanted}, {"words": wanted, "first_n": 40}):
        with row_by_row():
            slow = outcome(path, **kwargs)
        assert isinstance(slow, WordVectors)
        assert_same(outcome(path, **kwargs), slow)
        with small_batches(500):  # many batches
            assert_same(outcome(path, **kwargs), slow)


def test_the_first_bad_row_is_reported_across_batches(tmp_path: Path) -> None:
    """A malformed value in a batch not parsed yet is reported before a later error found while
    reading (a word that is not UTF-8, a file that ends too early, corrupt compression)."""
    lines = [b"4 3", b"a 1 2 3", b"b 1 oops 3", b"c 1 2 3", b"\xff 1 2 3", b"e 1 2 3"]
    path = tmp_path / "bad.vec"
    path.write_bytes(b"\n".join(lines) + b"\n")
    err = outcome(path)
    assert isinstance(err, str) and "line 3: malformed value 'oops'" in err
    with row_by_row():
        assert outcome(path) == err
    gz = tmp_path / "bad.vec.gz"
    gz.write_bytes(gzip.compress(b"\n".join(lines[:4]) + b"\n" + b"x 1 2 3\n" * 5000)[:-40])
    err = outcome(gz)
    assert isinstance(err, str) and "line 3: malformed value 'oops'" in err
    with row_by_row():
        assert outcome(gz) == err


@st.composite
def text_files(draw) -> bytes:
    """Mostly valid files with random defects: bad tokens, lengths, words, headers, newlines."""
    dim = draw(st.integers(1, 4))
    lines = []
    for _ in range(draw(st.integers(0, 10))):
        n = draw(st.sampled_from([dim, dim, dim, dim - 1, dim + 1]))
        toks = [draw(token_bytes) for _ in range(max(n, 0))]
        word = draw(st.sampled_from([b"a", b"b", b"the", b"\xff", b"x\ty", b"3", b"a"]))
        lines.append(word + b" " + b" ".join(toks))
    if draw(st.booleans()):
        lines.insert(0, f"{draw(st.sampled_from([len(lines), 3]))} {dim}".encode())
    return draw(st.sampled_from([b"\n", b"\r\n", b" \n"])).join(lines)


@FUZZ
@given(
    data=text_files(),
    wanted=st.none() | st.lists(st.sampled_from(["a", "b", "the", "3", "zz"]), max_size=3),
    first_n=st.integers(0, 3),
    batch=st.sampled_from([1, 40, 1 << 20]),
    gz=st.booleans(),
)
def test_fuzz_files_load_or_fail_as_row_by_row(tmp_path, data, wanted, first_n, batch, gz) -> None:
    path = tmp_path / f"f{next(_counter)}.vec{'.gz' if gz else ''}"
    path.write_bytes(gzip.compress(data) if gz else data)
    with row_by_row():
        slow = outcome(path, words=wanted, first_n=first_n)
    with small_batches(batch):
        assert_same(outcome(path, words=wanted, first_n=first_n), slow)
