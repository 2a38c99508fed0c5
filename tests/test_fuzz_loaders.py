"""Fuzzing: the loaders and the spec parser return a result or raise WeatkitError, nothing else."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from weatkit.embeddings.spec import EmbeddingsSpec, parse_embeddings_spec
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_counter = itertools.count()


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _path(directory: Path, suffix: str) -> Path:
    return directory / f"f{next(_counter)}{suffix}"


def _check(path: Path, **kwargs) -> WordVectors | None:
    """Load; only WordVectors or WeatkitError are acceptable outcomes."""
    try:
        wv = load_static(path, **kwargs)
    except WeatkitError as exc:
        assert "\n" not in str(exc)
        return None
    assert isinstance(wv, WordVectors)
    assert wv.vectors.dtype == np.float32 and wv.vectors.ndim == 2
    assert len(wv.words) == len(set(wv.words)) == wv.vectors.shape[0]
    assert np.isfinite(wv.vectors).all()
    return wv


filter_words = st.none() | st.lists(st.text(max_size=6), max_size=5)
good_number = st.floats(-10, 10).filter(lambda x: x != 0).map(repr)
bad_token = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-5, 5).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e39", "0", "0.0", "abc", "1,5", "--1", "\x00", "é"]),
    st.text(max_size=4),
)
words = st.one_of(st.sampled_from(["a", "b", "the", "日本", "x\ty", "3"]), st.text(max_size=5))


@st.composite
def text_files(draw) -> bytes:
    """Text embeddings files that are mostly valid, with random defects."""
    dim = draw(st.integers(1, 4))
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 4)) == 0:  # a defective row
            vals = draw(st.lists(bad_token | good_number, max_size=dim + 1))
        else:
            vals = draw(st.lists(good_number, min_size=dim, max_size=dim))
        lines.append(draw(words) + " " + " ".join(vals))
    if draw(st.booleans()):
        n = draw(st.sampled_from([len(lines), len(lines), 0, 10]))
        lines.insert(0, f"{n} {draw(st.sampled_from([dim, dim, 0, 7]))}")
    sep = draw(st.sampled_from(["\n", "\r\n", "\n\n", " \n"]))
    data = sep.join(lines).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 5)) == 0:
        data = data.replace(b"a", b"\xff")
    return data


@FUZZ
@given(
    data=st.binary(max_size=600),
    suffix=st.sampled_from([".vec", ".txt", ".emb"]),
    wanted=filter_words,
    first_n=st.integers(0, 3),
)
def test_fuzz_random_bytes_text(fuzz_dir, data, suffix, wanted, first_n) -> None:
    path = _path(fuzz_dir, suffix)
    path.write_bytes(data)
    _check(path, words=wanted, first_n=first_n)


@FUZZ
@given(data=text_files(), wanted=filter_words, first_n=st.integers(0, 3), gz=st.booleans())
def test_fuzz_structured_text(fuzz_dir, data, wanted, first_n, gz) -> None:
    path = _path(fuzz_dir, ".vec.gz" if gz else ".vec")
    path.write_bytes(gzip.compress(data) if gz else data)
    _check(path, words=wanted, first_n=first_n)


clean_words = st.text(
    alphabet=st.characters(blacklist_categories=["Cs", "Zs", "Zl", "Zp", "Cc"]),
    min_size=1,
    max_size=6,
).filter(lambda w: not w.startswith("\ufeff") and len(w.encode().split()) == 1)


@FUZZ
@given(
    vocab=st.lists(clean_words, min_size=1, max_size=8, unique=True),
    dim=st.integers(1, 4),
    header=st.booleans(),
    seed=st.integers(0, 2**16),
    pick=st.integers(0, 255),
    first_n=st.integers(0, 3),
)
def test_fuzz_valid_text_roundtrip(fuzz_dir, vocab, dim, header, seed, pick, first_n) -> None:
    vecs = np.random.default_rng(seed).uniform(0.1, 2, (len(vocab), dim)).astype(np.float32)
    lines = [f"{len(vocab)} {dim}"] if header else []
    lines += [
        w + " " + " ".join(repr(float(x)) for x in v) for w, v in zip(vocab, vecs, strict=True)
    ]
    path = _path(fuzz_dir, ".txt")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    wanted = [w for i, w in enumerate(vocab) if pick >> (i % 8) & 1]
    wv = _check(path, words=wanted, first_n=first_n)
    assert wv is not None
    expected = [w for i, w in enumerate(vocab) if w in wanted or i < first_n]
    assert wv.words == expected
    np.testing.assert_array_equal(wv.vectors, vecs[[vocab.index(w) for w in expected]])


@st.composite
def word2vec_binaries(draw) -> bytes:
    dim = draw(st.integers(1, 3))
    n = draw(st.integers(0, 4))
    out = f"{draw(st.integers(0, 6))} {dim}\n".encode()
    for _ in range(n):
        out += draw(words).encode("utf-8", "surrogatepass") + b" "
        out += draw(st.binary(min_size=4 * dim, max_size=4 * dim))
        if draw(st.booleans()):
            out += b"\n"
    cut = draw(st.integers(0, len(out)))
    return out[:cut] if draw(st.booleans()) else out


@FUZZ
@given(
    data=word2vec_binaries() | st.binary(max_size=200),
    wanted=filter_words,
    first_n=st.integers(0, 3),
)
def test_fuzz_word2vec_binary(fuzz_dir, data, wanted, first_n) -> None:
    path = _path(fuzz_dir, ".bin")
    path.write_bytes(data)
    _check(path, words=wanted, first_n=first_n, fmt="word2vec-bin")


@FUZZ
@given(text=st.text(max_size=40) | st.from_regex(r"[A-Za-z{}=/._ ]{0,20}", fullmatch=True))
def test_fuzz_parse_embeddings_spec(text: str) -> None:
    try:
        spec = parse_embeddings_spec(text)
    except WeatkitError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(spec, EmbeddingsSpec)
    assert spec.name and spec.location
    assert spec.path_for("xx").count("{") == spec.location.count("{") - spec.location.count(
        "{lang}"
    )


@FUZZ
@given(
    name=st.from_regex(r"[A-Za-z][A-Za-z0-9_\-]{0,8}", fullmatch=True),
    stem=st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
)
def test_fuzz_named_spec_roundtrip(name: str, stem: str) -> None:
    spec = parse_embeddings_spec(f"{name}=vecs/{stem}.{{lang}}.vec")
    assert spec.name == name
    assert spec.per_language
    assert spec.path_for("de") == f"vecs/{stem}.de.vec"


@settings(FUZZ, max_examples=100)
@given(
    rows=st.lists(st.sampled_from(["a", "b", "c", "日本"]), min_size=1, max_size=6),
    header=st.booleans(),
    first_n=st.integers(0, 6),
    wanted=st.lists(st.sampled_from(["a", "b", "zz"]), max_size=3),
)
def test_fuzz_a_word_read_twice_is_refused_with_both_lines(
    fuzz_dir, rows, header, first_n, wanted
) -> None:
    """Issue 37 §1: a full load refuses any repeated word, naming the first repeat's two lines;
    a filtered load returns each word once or refuses the same way (it may stop reading before a
    repeat once every needed word is found)."""
    lines = [f"{len(rows)} 2"] if header else []
    lines += [f"{w} {i + 1}.5 -{i + 1}.25" for i, w in enumerate(rows)]
    path = _path(fuzz_dir, ".vec")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    offset = 2 if header else 1  # line of rows[0]
    first: dict[str, int] = {}
    repeat = None
    for i, w in enumerate(rows):
        if w in first:
            repeat = (w, first[w] + offset, i + offset)
            break
        first[w] = i
    for kwargs in ({}, {"words": wanted, "first_n": first_n}):
        try:
            wv = load_static(path, **kwargs)
        except WeatkitError as exc:
            assert repeat is not None, exc
            word, line_a, line_b = repeat
            if not kwargs:  # every row read: the first repeat is the one named
                assert str(exc) == (
                    f"{path}: the word {word!r} is given twice (line {line_a} and line "
                    f"{line_b}); a vector file names each word once: remove one of them"
                )
            else:
                assert "is given twice" in str(exc)
            continue
        assert kwargs or repeat is None
        assert len(wv.words) == len(set(wv.words))
        for w, v in zip(wv.words, wv.vectors, strict=True):  # each word's first row
            assert v[0] == rows.index(w) + 1.5
