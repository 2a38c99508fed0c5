"""``weatkit train`` and :mod:`weatkit.training` on tiny generated corpora (a few seconds)."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from weatkit.cli.train import corpora_from_options, parse_word_count, train_command
from weatkit.embeddings.static import load_static
from weatkit.errors import WeatkitError
from weatkit.training import (
    POSITION_WEIGHTS_NOTE,
    TrainOptions,
    cap_corpus,
    count_words,
    train_embeddings,
)

fasttext = pytest.importorskip("fasttext")

SHARED = ("ok", "taxi", "covid")
LANGS = ("en", "de", "it")
TINY = TrainOptions(dim=8, epoch=1, min_count=1, threads=1, bucket=1000)
TINY_ARGS = ["--dim", "8", "--epoch", "1", "--min-count", "1", "--threads", "1"]
TINY_ARGS += ["--bucket", "1000"]


def vocabulary(lang: str) -> list[str]:
    """30 words of their own per language (``en0`` ... ``en29``) plus a few shared ones."""
    return [f"{lang}{i}" for i in range(30)] + list(SHARED)


def write_corpus(path: Path, lang: str, n_lines: int, seed: int = 0) -> Path:
    """Lines of 0-12 words joined by mixed ASCII whitespace (some lines empty)."""
    rng = random.Random(f"{lang}-{seed}")
    words = vocabulary(lang)
    lines = []
    for _ in range(n_lines):
        tokens = [rng.choice(words) for _ in range(rng.randint(0, 12))]
        lines.append("".join(t + rng.choice([" ", "  ", "\t"]) for t in tokens).rstrip(" "))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def n_tokens(path: Path) -> int:
    """Independent count: whitespace-split of the decoded text (ASCII whitespace only here)."""
    return len(path.read_text(encoding="utf-8").split())


@pytest.fixture
def corpora(tmp_path: Path) -> dict[str, Path]:
    """en (the largest), de (the smallest) and it corpora of a few thousand words."""
    sizes = {"en": 500, "de": 300, "it": 400}
    return {
        lang: write_corpus(tmp_path / f"corpus.{lang}.txt", lang, n) for lang, n in sizes.items()
    }


def model_words(vec_path: Path) -> set[str]:
    return set(load_static(vec_path, words=None).words) - {"</s>"}


def assert_one_line_error(excinfo: pytest.ExceptionInfo[WeatkitError], *parts: str) -> None:
    message = str(excinfo.value)
    assert "\n" not in message
    for part in parts:
        assert part in message, message


# --------------------------------------------------------------------------------------------
# counting and capping


@pytest.mark.parametrize("cap", [1, 7, 100, 1234, 10**9])
def test_cap_corpus_writes_exactly_n_tokens_and_keeps_lines(
    corpora: dict[str, Path], tmp_path: Path, cap: int
) -> None:
    src = corpora["en"]
    total = n_tokens(src)
    dst = tmp_path / "capped.txt"
    written = cap_corpus(src, dst, cap)
    assert written == n_tokens(dst) == min(cap, total)
    src_lines = src.read_text().split("\n")
    out_lines = dst.read_text().split("\n")
    assert out_lines[-1] == ""  # ends with a newline
    out_lines = out_lines[:-1]
    k = len(out_lines)
    assert out_lines[:-1] == src_lines[: k - 1]  # lines before the cap are untouched
    last, original = out_lines[-1], src_lines[k - 1]
    assert original.startswith(last) and last == last.rstrip()
    assert last.split() == original.split()[: len(last.split())]
    assert sum(len(line.split()) for line in out_lines) == written


def test_cap_at_a_line_end_drops_the_rest(tmp_path: Path) -> None:
    src = tmp_path / "c.txt"
    src.write_text("a b\n\nc  d\te\n\nf\n")
    dst = tmp_path / "d.txt"
    assert cap_corpus(src, dst, 5) == 5
    assert dst.read_text() == "a b\n\nc  d\te\n"
    assert cap_corpus(src, dst, 4) == 4
    assert dst.read_text() == "a b\n\nc  d\n"
    assert cap_corpus(src, dst, 0) == 0
    assert dst.read_text() == ""


_WORDS = st.sampled_from(["a", "bc", "ü", "日本", "x-y"])
_SPACES = st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\n\n", "\x0b", "\x0c"])


@settings(max_examples=100, deadline=None)
@given(parts=st.lists(st.tuples(_WORDS, _SPACES), max_size=40), cap=st.integers(0, 50))
def test_cap_corpus_property(parts: list[tuple[str, str]], cap: int) -> None:
    text = "".join(word + space for word, space in parts)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "c.txt", Path(tmp) / "d.txt"
        src.write_bytes(text.encode())
        total = len(text.split())
        assert count_words(src) == total
        assert cap_corpus(src, dst, cap) == len(dst.read_text().split()) == min(cap, total)
        kept = dst.read_bytes()
        assert kept.count(b"\n") <= text.encode().count(b"\n") + 1
        assert text.encode().startswith(kept[:-1]) or not kept


def test_nothing_after_the_cap_is_read(tmp_path: Path) -> None:
    src = tmp_path / "c.txt"
    src.write_bytes(b"a b\nc d\nbad \xff\n")
    assert cap_corpus(src, tmp_path / "d.txt", 4) == 4
    assert (tmp_path / "d.txt").read_bytes() == b"a b\nc d\n"


def test_last_line_without_newline_gets_one(tmp_path: Path) -> None:
    src = tmp_path / "c.txt"
    src.write_bytes(b"x y\nz")
    dst = tmp_path / "d.txt"
    assert count_words(src) == 3
    assert cap_corpus(src, dst, None) == 3
    assert dst.read_bytes() == b"x y\nz\n"


@pytest.mark.parametrize(("suffix", "module"), [(".gz", gzip), (".bz2", bz2), (".xz", lzma)])
def test_compressed_corpora_read_like_plain(
    corpora: dict[str, Path], tmp_path: Path, suffix: str, module
) -> None:
    plain = corpora["de"]
    packed = tmp_path / f"corpus.de.txt{suffix}"
    packed.write_bytes(module.compress(plain.read_bytes()))
    assert count_words(packed) == count_words(plain) == n_tokens(plain)
    cap_corpus(plain, tmp_path / "a.txt", 999)
    cap_corpus(packed, tmp_path / "b.txt", 999)
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()


def test_corpus_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes("gut\nschön\n".encode() + b"bad \xff byte\n")
    with pytest.raises(WeatkitError) as excinfo:
        count_words(bad)
    assert_one_line_error(excinfo, str(bad), "line 3", "UTF-8")
    with pytest.raises(WeatkitError) as excinfo:
        count_words(tmp_path / "missing.txt")
    assert_one_line_error(excinfo, "corpus not found", "missing.txt")
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(gzip.compress(b"a b c\n" * 100)[:30])
    with pytest.raises(WeatkitError) as excinfo:
        count_words(broken)
    assert_one_line_error(excinfo, "cannot read corpus", "broken.txt.gz")
    with pytest.raises(WeatkitError) as excinfo:
        cap_corpus(tmp_path / "missing.txt", tmp_path / "out" / "x.txt", 5)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------------
# training


def test_monolingual_vectors_match_the_model(corpora: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "vecs" / "cce.{lang}.vec"
    two = {lang: corpora[lang] for lang in ("en", "de")}
    report = train_embeddings(two, str(out), TINY, save_bin=True, show_progress=False)
    assert [m.name for m in report.models] == ["en", "de"]
    assert report.words_used == {lang: n_tokens(p) for lang, p in two.items()}
    assert POSITION_WEIGHTS_NOTE in report.notes
    for lang in ("en", "de"):
        vec = tmp_path / "vecs" / f"cce.{lang}.vec"
        assert report.paths[lang] == vec
        header = vec.read_text().split("\n", 1)[0]
        model = fasttext.load_model(str(tmp_path / "vecs" / f"cce.{lang}.bin"))
        assert header == f"{len(model.words)} 8"
        loaded = load_static(vec, words=None)
        assert loaded.words == list(model.words)
        expected = np.stack([model.get_word_vector(w) for w in loaded.words])
        np.testing.assert_array_equal(loaded.vectors, expected)
        assert model_words(vec) == set(vocabulary(lang))  # only its own language
    sidecar = json.loads((tmp_path / "vecs" / "cce.de.vec.train.json").read_text())
    assert sidecar["options"]["dim"] == 8 and sidecar["position_weights"] is False
    assert sidecar["fasttext_version"] not in ("", "unknown")
    assert sidecar["corpora"]["de"]["words_used"] == report.words_used["de"]
    assert len(sidecar["corpora"]["de"]["fingerprint"]["sha256"]) == 64
    assert sorted(p.name for p in (tmp_path / "vecs").iterdir()) == sorted(
        f"cce.{lang}.{ext}" for lang in ("en", "de") for ext in ("vec", "bin", "vec.train.json")
    )


def test_bilingual_and_multilingual_vocabularies(corpora: dict[str, Path], tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bi = train_embeddings(
        corpora, str(tmp_path / "bi.{lang}.vec"), TINY, joint="bilingual", work_dir=scratch
    )
    assert not any(scratch.iterdir())
    assert [m.name for m in bi.models] == ["en+de", "en+it"]
    assert bi.paths == {
        "en": tmp_path / "bi.de.vec",
        "de": tmp_path / "bi.de.vec",
        "it": tmp_path / "bi.it.vec",
    }
    assert model_words(tmp_path / "bi.de.vec") == set(vocabulary("en") + vocabulary("de"))
    assert model_words(tmp_path / "bi.it.vec") == set(vocabulary("en") + vocabulary("it"))
    multi = train_embeddings(
        corpora, str(tmp_path / "all.vec.gz"), TINY, joint="multilingual", show_progress=False
    )
    assert len(multi.models) == 1 and multi.models[0].languages == LANGS
    assert model_words(tmp_path / "all.vec.gz") == {w for lang in LANGS for w in vocabulary(lang)}
    assert multi.models[0].words == sum(n_tokens(p) for p in corpora.values())


def test_cap_to_smallest_and_cap_words(corpora: dict[str, Path], tmp_path: Path) -> None:
    smallest = n_tokens(corpora["de"])
    report = train_embeddings(
        corpora, str(tmp_path / "c.{lang}.vec"), TINY, cap_to_smallest=True, show_progress=False
    )
    assert report.words_used == dict.fromkeys(LANGS, smallest)
    assert report.words_in_corpus == {lang: n_tokens(p) for lang, p in corpora.items()}
    assert any("the size of the de corpus" in n for n in report.notes)
    both = train_embeddings(
        corpora,
        str(tmp_path / "d.{lang}.vec"),
        TINY,
        cap_words=500,
        cap_to_smallest=True,
        show_progress=False,
    )
    assert both.words_used == dict.fromkeys(LANGS, 500)
    sidecar = json.loads((tmp_path / "d.it.vec.train.json").read_text())
    assert sidecar["corpora"]["it"]["words_used"] == 500


def test_single_thread_training_is_reproducible(tmp_path: Path) -> None:
    corpus = {"en": write_corpus(tmp_path / "en.txt", "en", 200)}
    opts = TrainOptions(model="skipgram", dim=8, epoch=1, min_count=1, threads=1, bucket=1000)
    first = train_embeddings(corpus, str(tmp_path / "a.{lang}.vec"), opts, show_progress=False)
    train_embeddings(corpus, str(tmp_path / "b.{lang}.vec"), opts, show_progress=False)
    assert (tmp_path / "a.en.vec").read_bytes() == (tmp_path / "b.en.vec").read_bytes()
    assert POSITION_WEIGHTS_NOTE not in first.notes


# --------------------------------------------------------------------------------------------
# errors: one line, no output left behind


def _bad_utf8(tmp_path: Path) -> Path:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good words\nmore good words\nbad \xc3\x28 here\n")
    return path


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.txt"
    path.write_text("\n  \n")
    return path


@pytest.mark.parametrize(
    ("make_de", "out", "extra", "parts"),
    [
        (lambda t: t / "nope.txt", "v.{lang}.vec", {}, ("corpus not found", "nope.txt")),
        (_empty, "v.{lang}.vec", {}, ("empty.txt", "has no words")),
        (_bad_utf8, "v.{lang}.vec", {}, ("bad.txt", "line 3", "UTF-8")),
        (None, "v.vec", {}, ("must contain {lang}",)),
        (None, "v.{lang}.vec", {"joint": "multilingual"}, ("remove {lang}",)),
        (None, "v.{lang}.bin", {}, (".vec or .txt",)),
        (None, "v.{lang}.vec", {"joint": "bilingual", "pivot": "fr"}, ("pivot", "'fr'")),
        (None, "v.{lang}.vec", {"cap_words": 0}, ("word cap",)),
    ],
)
def test_training_errors(
    corpora: dict[str, Path], tmp_path: Path, make_de, out: str, extra: dict, parts: tuple
) -> None:
    given = {"en": corpora["en"], "de": make_de(tmp_path) if make_de else corpora["de"]}
    out_dir = tmp_path / "out"
    with pytest.raises(WeatkitError) as excinfo:
        train_embeddings(given, str(out_dir / out), TINY, show_progress=False, **extra)
    assert_one_line_error(excinfo, *parts)
    assert not out_dir.exists()


@pytest.mark.parametrize(
    ("changes", "part"),
    [
        ({"dim": -3}, "dim must be a positive integer"),
        ({"dim": True}, "dim"),
        ({"epoch": 0}, "epoch"),
        ({"minn": 6}, "minn (6) must not exceed maxn (5)"),
        ({"bucket": 0}, "bucket"),
        ({"lr": float("nan")}, "lr"),
        ({"lr": 0}, "lr"),
        ({"model": "cbow-pos"}, "model"),
        ({"threads": 0}, "threads"),
    ],
)
def test_options_validation(changes: dict, part: str) -> None:
    with pytest.raises(WeatkitError) as excinfo:
        TrainOptions(**{**TINY.__dict__, **changes}).validate()
    assert_one_line_error(excinfo, part)


def test_options_without_subwords_are_valid() -> None:
    TrainOptions(minn=0, maxn=0, bucket=0).validate()


def test_fasttext_failure_is_a_one_line_error(corpora: dict[str, Path], tmp_path: Path) -> None:
    opts = TrainOptions(dim=8, epoch=1, min_count=10**6, threads=1, bucket=1000)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(WeatkitError) as excinfo:
        train_embeddings(
            corpora, str(tmp_path / "o" / "{lang}.vec"), opts, cap_words=99, work_dir=scratch
        )
    assert_one_line_error(excinfo, "fastText could not train the en model")
    assert not (tmp_path / "o").exists()
    assert not any(scratch.iterdir())  # the capped copies are gone


def test_missing_fasttext(
    corpora: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "fasttext", None)
    with pytest.raises(WeatkitError) as excinfo:
        train_embeddings(corpora, str(tmp_path / "o" / "{lang}.vec"), TINY)
    assert_one_line_error(excinfo, "pip install 'weatkit[train]'")
    result = CliRunner().invoke(
        train_command, ["--corpus", f"en={corpora['en']}", "--out", str(tmp_path / "{lang}.vec")]
    )
    assert (
        result.exit_code == 1
        and "needs the fasttext package: pip install 'weatkit[train]'" in result.stderr
    )


# --------------------------------------------------------------------------------------------
# command line


def test_cli_trains_from_a_template(
    corpora: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["--corpus", "corpus.{lang}.txt", "--lang", "en,de", "--lang", "it"]
    args += ["--out", "vecs/cce2langs.{lang}.vec"]
    args += ["--joint", "bilingual", "--cap-words", "1_000", "--save-bin", *TINY_ARGS]
    result = CliRunner().invoke(train_command, args)
    assert result.exit_code == 0, result.output
    assert "position weights" in result.stderr
    assert "cce2langs.de.vec" in result.stdout and "1,000 + 1,000" in result.stdout
    for lang in ("de", "it"):
        assert load_static(tmp_path / "vecs" / f"cce2langs.{lang}.vec").dim == 8
        assert (tmp_path / "vecs" / f"cce2langs.{lang}.bin").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--corpus", "en={en}", "--corpus", "de=missing.txt", "--out", "o/{{lang}}.vec"],
         "corpus not found"),
        (["--corpus", "en={en}", "--out", "o/v.vec"], "must contain {lang}"),
        (["--corpus", "en={en}", "--out", "o/{{lang}}.vec", "--dim", "-1"],
         "dim must be a positive integer"),
        (["--corpus", "en={en}", "--corpus", "de={de}", "--joint", "bilingual", "--pivot", "xx",
          "--out", "o/{{lang}}.vec"], "pivot language 'xx'"),
        (["--corpus", "c.{{lang}}.txt", "--out", "o/{{lang}}.vec"], "--lang"),
        (["--corpus", "en={en}", "--out", "o/{{lang}}.vec", "--cap-words", "1.5"],
         "whole number"),
    ],
)  # fmt: skip
def test_cli_errors_exit_1_without_output(
    corpora: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args, message
) -> None:
    monkeypatch.chdir(tmp_path)
    filled = [a.format(en=corpora["en"], de=corpora["de"]) for a in args]
    result = CliRunner().invoke(train_command, [*TINY_ARGS, *filled])
    assert result.exit_code == 1, result.output
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_corpus_options() -> None:
    got = corpora_from_options(["en=a.txt", "d/c.{lang}.txt.gz"], ["en,de"])
    assert got == {"en": Path("a.txt"), "de": Path("d/c.de.txt.gz")}
    assert list(corpora_from_options(["de=b", "en=a"], [])) == ["de", "en"]
    assert corpora_from_options(["dir=x/c.txt"], []) == {"dir": Path("x/c.txt")}
    for entries, langs, part in [
        (["en=a", "en=b"], [], "given twice"),
        (["en=c.{lang}.txt"], [], "cannot contain {lang}"),
        (["a.{lang}", "b.{lang}"], ["en"], "one --corpus template"),
        (["c.{x}.txt"], ["en"], "only the placeholder {lang}"),
        (["en=a"], ["de"], "--lang de: no corpus"),
        (["plain.txt"], [], "expected LANG=PATH"),
        (["c.{lang}"], ["../x"], "not a language code"),
    ]:
        with pytest.raises(WeatkitError) as excinfo:
            corpora_from_options(entries, langs)
        assert_one_line_error(excinfo, part)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=12), st.from_regex(r"-?[0-9_,.]+(e[0-9]+)?", fullmatch=True)))
def test_fuzz_word_count_raises_only_weatkit_errors(text: str) -> None:
    try:
        assert isinstance(parse_word_count(text), int)
    except WeatkitError as err:
        assert "\n" not in str(err)


@pytest.mark.parametrize(
    ("text", "value"),
    [("1700000000", 1_700_000_000), ("1_000", 1000), ("2,500", 2500), ("1.7e9", 1_700_000_000)],
)
def test_parse_word_count(text: str, value: int) -> None:
    assert parse_word_count(text) == value


_PIECES = st.sampled_from(["en", "de", "=", "{lang}", "{", "}", "/", "\\", " ", ",", "x.txt", ""])


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(st.one_of(st.text(max_size=12), st.lists(_PIECES).map("".join)), max_size=4),
    langs=st.lists(st.one_of(st.text(max_size=6), _PIECES), max_size=3),
)
def test_fuzz_corpus_specs_raise_only_weatkit_errors(entries: list[str], langs: list[str]) -> None:
    try:
        got = corpora_from_options(entries, langs)
    except WeatkitError as err:
        assert "\n" not in str(err)
        return
    assert got
    for lang, path in got.items():
        assert lang and all(c.isalnum() or c in "_-" for c in lang)
        assert isinstance(path, Path) and "{lang}" not in str(path)
