"""MBE (Kaneko et al., NAACL 2022): score against brute force, McNemar, selection, readers, sets,
and the ``weatkit mbe`` command on a tiny masked LM."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from tests.tiny_models import make_gest_mlm
from weatkit.cli import main
from weatkit.errors import WeatkitError
from weatkit.mbe import (
    MBE_MODELS,
    MBE_SETS,
    MbeSentence,
    check_tokenizer,
    downsample,
    evaluate_mbe,
    gendered_indices,
    load_gender_words,
    load_mbe_set,
    mbe_score,
    mcnemar_random,
    read_parallel_texts,
    read_parallel_tsv,
    run_mbe,
    run_mbe_parallel,
    select_gendered,
)
from weatkit.mbe import score as score_module
from weatkit.report.tables import render
from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_counter = itertools.count()


# --- the score --------------------------------------------------------------------------------


def brute_force(sm, sf, em, ef, weight: str) -> float:
    """Eq. 2 with a Python double loop over all pairs."""
    num = den = 0.0
    for i in range(len(sm)):
        for j in range(len(sf)):
            c = float(np.dot(em[i], ef[j]))
            if weight == "cosine":
                c /= float(np.linalg.norm(em[i]) * np.linalg.norm(ef[j]))
            num += c * (1.0 if sm[i] > sf[j] else 0.0)
            den += c
    return 100.0 * num / den


def _random_sets(seed: int, n_m: int = 7, n_f: int = 9, d: int = 5):
    rng = np.random.default_rng(seed)
    values = np.array([-3.0, -2.5, -2.0, -1.5])  # few values: many ties
    sm, sf = rng.choice(values, n_m), rng.choice(values, n_f)
    em, ef = rng.normal(size=(n_m, d)) + 1.0, rng.normal(size=(n_f, d)) + 1.0
    return sm, sf, em, ef


@pytest.mark.parametrize("weight", ["cosine", "dot"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mbe_score_equals_brute_force(weight: str, seed: int) -> None:
    sm, sf, em, ef = _random_sets(seed)
    assert (sm[:, None] == sf[None, :]).any()  # ties present
    expected = brute_force(sm, sf, em, ef, weight)
    got = mbe_score(sm, sf, em, ef, weight=weight, device="cpu")
    assert got == pytest.approx(expected, abs=1e-12, rel=0)


def test_mbe_score_blocks_give_the_same_score(monkeypatch: pytest.MonkeyPatch) -> None:
    sm, sf, em, ef = _random_sets(5, n_m=23, n_f=11)
    whole = mbe_score(sm, sf, em, ef, device="cpu")
    monkeypatch.setattr(score_module, "_BLOCK", 20)  # one male row per block
    assert mbe_score(sm, sf, em, ef, device="cpu") == pytest.approx(whole, abs=1e-12)
    assert whole == pytest.approx(brute_force(sm, sf, em, ef, "cosine"), abs=1e-12)


def test_mbe_score_extremes_and_errors() -> None:
    e = np.ones((2, 3))
    assert mbe_score([1.0, 2.0], [0.0, 0.5], e, e) == 100.0
    assert mbe_score([0.0, 0.0], [1.0, 0.0], e, e) == 0.0  # ties count 0
    with pytest.raises(WeatkitError, match="at least one male"):
        mbe_score([], [1.0], np.ones((0, 3)), np.ones((1, 3)))
    with pytest.raises(WeatkitError, match="zero"):
        mbe_score([1.0], [0.0], np.zeros((1, 3)), np.ones((1, 3)))
    with pytest.raises(WeatkitError, match="do not fit"):
        mbe_score([1.0, 2.0], [0.0], np.ones((1, 3)), np.ones((1, 3)))
    with pytest.raises(WeatkitError, match="unknown weight"):
        mbe_score([1.0], [0.0], np.ones((1, 3)), np.ones((1, 3)), weight="euclid")


# --- McNemar ----------------------------------------------------------------------------------


def test_mcnemar_counts_against_the_same_random_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    sm = np.array([0.1, 0.5, 0.5, 0.9, -1.0, 2.0, 0.3])
    sf = np.array([0.5, 0.2, 0.0, 1.0, 0.4])
    result = mcnemar_random(sm, sf, seed=42)
    model = sm[:, None] > sf[None, :]
    random = np.random.default_rng(42).random((len(sm), len(sf))) < 0.5
    b = int((model & ~random).sum())
    c = int((~model & random).sum())
    assert (result.b, result.c, result.n_pairs) == (b, c, 35)
    assert result.pvalue == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    assert result.statistic == pytest.approx((abs(b - c) - 1) ** 2 / (b + c))
    monkeypatch.setattr(score_module, "_BLOCK", 5)  # one male row per block: same stream
    assert mcnemar_random(sm, sf, seed=42) == result
    assert mcnemar_random(sm, sf, seed=43) != result


def test_mcnemar_without_discordant_pairs() -> None:
    draw = bool(np.random.default_rng(7).random((1, 1))[0, 0] < 0.5)
    sm, sf = ([1.0], [0.0]) if draw else ([0.0], [1.0])  # the model agrees with the draw
    result = mcnemar_random(np.array(sm), np.array(sf), seed=7)
    assert (result.b, result.c, result.pvalue, result.statistic) == (0, 0, 1.0, 0.0)


# --- Step 1: selection and down-sampling ------------------------------------------------------

MALE = ["he", "man", "mr."]
FEMALE = ["she", "woman"]


def test_select_gendered_uses_whole_words_case_insensitively() -> None:
    english = [
        "He is a doctor.",  # male
        "The weather is nice.",  # neither: "he" in "The"
        "hello there",  # neither: "he" in "hello"
        "She said so.",  # female (capital S)
        "He and she met.",  # both: dropped
        "A woman's hat.",  # female ("woman" before an apostrophe)
        "Mr. Smith left.",  # male ("mr." ends with a dot)
        "The HE-MAN toy.",  # male (both male words)
        "She went.",  # female but empty target: dropped
        "Shepherds sing.",  # neither: "she" in "Shepherds"
    ]
    target = [f"t{i}" for i in range(len(english))]
    target[8] = "  "
    male, female = select_gendered(english, target, MALE, FEMALE)
    assert male == ["t0", "t6", "t7"]
    assert female == ["t3", "t5"]
    assert gendered_indices(english, target, MALE, FEMALE) == ([0, 6, 7], [3, 5])
    with pytest.raises(WeatkitError, match="2 English sentences but 1 target"):
        select_gendered(["a", "b"], ["x"], MALE, FEMALE)
    with pytest.raises(WeatkitError, match="empty word list"):
        select_gendered(["a"], ["x"], [], FEMALE)


def test_downsample_sizes_order_and_determinism() -> None:
    male, female = list(range(100)), list(range(1000, 1030))
    m1, f1 = downsample(male, female, seed=3)
    assert len(m1) == len(f1) == 30 and f1 == female
    assert m1 == sorted(m1) and set(m1) <= set(male)
    assert downsample(male, female, seed=3) == (m1, f1)
    assert downsample(male, female, seed=4)[0] != m1
    m2, f2 = downsample(male, female, seed=3, limit=10)
    assert len(m2) == len(f2) == 10 and f2 == sorted(f2)
    assert downsample(male[:5], female[:5], seed=0) == (male[:5], female[:5])


# --- readers ----------------------------------------------------------------------------------


def test_tsv_reader(tmp_path: Path) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("English\tDeutsch\nHe runs.\tEr läuft.\r\n\n She sings. \tSie singt.\n")
    assert read_parallel_tsv(path) == (["He runs.", "She sings."], ["Er läuft.", "Sie singt."])
    gz = tmp_path / "p.tsv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert read_parallel_tsv(gz) == read_parallel_tsv(path)
    path.write_text("a\tb\nc\td\te\n")
    with pytest.raises(WeatkitError, match=r"p\.tsv: line 2: expected 2 tab-separated .*found 3"):
        read_parallel_tsv(path)
    path.write_text("a\tb\n\nno tab\n")
    with pytest.raises(WeatkitError, match=r"line 3: .*found 1"):
        read_parallel_tsv(path)
    path.write_bytes(b"a\tb\n\xff\tc\n")
    with pytest.raises(WeatkitError, match="not valid UTF-8"):
        read_parallel_tsv(path)
    (tmp_path / "bad.tsv.gz").write_bytes(b"not gzip")
    with pytest.raises(WeatkitError, match="not a valid gzip"):
        read_parallel_tsv(tmp_path / "bad.tsv.gz")
    with pytest.raises(WeatkitError, match="not found"):
        read_parallel_tsv(tmp_path / "missing.tsv")


def test_text_reader(tmp_path: Path) -> None:
    en, de = tmp_path / "c.en", tmp_path / "c.de"
    en.write_text("He runs.\n\nShe sings.\n")
    de.write_text("Er läuft.\n\nSie singt.")
    assert read_parallel_texts(en, de) == (
        ["He runs.", "", "She sings."],
        ["Er läuft.", "", "Sie singt."],
    )
    de.write_text("Er läuft.\n")
    with pytest.raises(WeatkitError, match=r"c\.en has 3 lines but the target file .*c\.de has 1"):
        read_parallel_texts(en, de)


def test_word_lists(tmp_path: Path, data_dir: Path) -> None:
    male, female = load_gender_words()
    assert len(male) == 207 and len(female) == 202  # 222 lines each, with repeats
    assert "he" in male and "she" in female and "mr." in male
    assert male == [w.lower() for w in male]
    m, f = tmp_path / "m.txt", tmp_path / "f.txt"
    m.write_text("He\n\nhe\nKing\n")
    f.write_text("she\nqueen\n")
    assert load_gender_words(m, f) == (["he", "king"], ["she", "queen"])
    f.write_text("she\nKING\n")
    with pytest.raises(WeatkitError, match="'king' is on both the male list"):
        load_gender_words(m, f)
    f.write_text("\n \n")
    with pytest.raises(WeatkitError, match="has no words"):
        load_gender_words(m, f)


def _fuzz_file(directory: Path, data: bytes, suffix: str, compress: bool) -> Path:
    path = directory / f"f{next(_counter)}{suffix}"
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


lines = st.lists(
    st.one_of(
        st.text(alphabet=st.sampled_from("ab \t\r\né\x00\ufeff"), max_size=8),
        st.sampled_from(["en\tde", "english\ttarget", "He\tEr", "a\tb\tc", "", "\t"]),
    ),
    max_size=6,
).map(lambda xs: "\n".join(xs).encode())
contents = st.one_of(st.binary(max_size=60), lines)


@FUZZ
@given(data=contents, suffix=st.sampled_from([".tsv", ".tsv.gz"]), compress=st.booleans())
def test_fuzz_tsv_reader(tmp_path: Path, data: bytes, suffix: str, compress: bool) -> None:
    path = _fuzz_file(tmp_path, data, suffix, compress)
    try:
        english, target = read_parallel_tsv(path)
    except WeatkitError as err:
        assert "\n" not in str(err)
        return
    assert len(english) == len(target)
    assert all("\t" not in s and "\n" not in s for s in (*english, *target))


@FUZZ
@given(a=contents, b=contents, compress=st.booleans())
def test_fuzz_text_reader(tmp_path: Path, a: bytes, b: bytes, compress: bool) -> None:
    en = _fuzz_file(tmp_path, a, ".txt.gz" if compress else ".txt", compress)
    tgt = _fuzz_file(tmp_path, b, ".txt", False)
    try:
        english, target = read_parallel_texts(en, tgt)
    except WeatkitError as err:
        assert "\n" not in str(err)
        return
    assert len(english) == len(target)


@FUZZ
@given(a=contents, b=contents)
def test_fuzz_word_lists(tmp_path: Path, a: bytes, b: bytes) -> None:
    m, f = _fuzz_file(tmp_path, a, ".txt", False), _fuzz_file(tmp_path, b, ".txt", False)
    try:
        male, female = load_gender_words(m, f)
    except WeatkitError as err:
        assert "\n" not in str(err)
        return
    assert male and female and not set(male) & set(female)
    select_gendered(["a b", "é"], ["x", "y"], male, female)  # the patterns compile


# --- shipped sets -----------------------------------------------------------------------------


def test_shipped_german_news_set(data_dir: Path) -> None:
    male, female = load_mbe_set("de", "news")
    assert len(male) == len(female) == MBE_SETS["news"]["de"] == 1057
    for ids in (*male, *female):
        assert ids[0] == 102 and ids[-1] == 103 and len(ids) >= 3
        assert all(isinstance(i, int) and i >= 0 for i in ids)
    assert len(TokenizedSentence.from_ids(male[0]).content) == len(male[0]) - 2


def test_missing_and_unknown_sets(data_dir: Path) -> None:
    with pytest.raises(WeatkitError, match=r"Spanish news set is absent.*news sets exist for ar"):
        load_mbe_set("es", "news")
    with pytest.raises(WeatkitError, match="unknown MBE language 'fr'"):
        load_mbe_set("fr", "ted")
    with pytest.raises(WeatkitError, match="unknown MBE corpus 'wiki'"):
        load_mbe_set("de", "wiki")
    assert set(MBE_MODELS) == set(MBE_SETS["ted"])


def test_bad_set_file_names_the_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mbe" / "parallel_data" / "ted"
    folder.mkdir(parents=True)
    (folder / "de_m.json.gz").write_bytes(gzip.compress(json.dumps([[1, 2, 3], []]).encode()))
    (folder / "de_f.json.gz").write_bytes(gzip.compress(b"[[1, 2, 3]]"))
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path))
    with pytest.raises(WeatkitError, match=r"ted/de_m\.json\.gz: entry 1: expected a list"):
        load_mbe_set("de", "ted")
    (folder / "de_m.json.gz").write_bytes(gzip.compress(b"[[1, 2, 3.5]]"))
    with pytest.raises(WeatkitError, match="entry 0"):
        load_mbe_set("de", "ted")


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gest_mlm(tmp_path_factory.mktemp("mbe") / "mlm")


def test_check_tokenizer(tiny_mlm: Path, data_dir: Path) -> None:
    lm = MaskedLM(str(tiny_mlm))
    with pytest.raises(WeatkitError, match=r"tokenised with deepset/gbert-base.*does not match"):
        check_tokenizer(lm.tokenizer, load_mbe_set("de", "news"), "de")
    cls, sep = lm.tokenizer.cls_token_id, lm.tokenizer.sep_token_id
    check_tokenizer(lm.tokenizer, [[[cls, 7, sep]], [[cls, 8, 9, sep]]], "de")
    with pytest.raises(WeatkitError, match=rf"starts with id 7 .* \[CLS\]/<s> id is {cls}"):
        check_tokenizer(lm.tokenizer, [[[7, 8, sep]]], "ru")


# --- end to end on a tiny masked LM -----------------------------------------------------------

PAIRS = [
    ("He was happy today.", "I was happy today ."),
    ("The man cried often.", "I cried often ."),
    ("He said he loves his job.", "I love my job ."),
    ("My father lifts heavy weights.", "I lift heavy weights every day ."),
    ("The weather was nice.", "The day was happy ."),  # neither
    ("She was sad yesterday.", "I was sad yesterday ."),
    ("The woman loves flowers.", "I love flowers ."),
    ("Her mother saw the man.", "I saw the man ."),  # both: dropped
    ("She said she was strong.", "She said I was strong ."),
    ("My mother never cried.", "I never cried ."),
    ("He saw his son today.", "He saw my job today !"),
]


def _write_tsv(path: Path, pairs=PAIRS) -> Path:
    path.write_text("en\tde\n" + "".join(f"{e}\t{t}\n" for e, t in pairs), encoding="utf-8")
    return path


def test_evaluate_mbe_equals_the_formula(tiny_mlm: Path, data_dir: Path, tmp_path: Path) -> None:
    english, target = read_parallel_tsv(_write_tsv(tmp_path / "p.tsv"))
    male_words, female_words = load_gender_words()
    male_text, female_text = select_gendered(english, target, male_words, female_words)
    assert (len(male_text), len(female_text)) == (5, 4)
    lm = MaskedLM(str(tiny_mlm))
    male, female = lm.tokenize(male_text), lm.tokenize(female_text)
    for method, weight in [("aula", "cosine"), ("aul", "dot")]:
        result, frame, _ = evaluate_mbe(
            lm, male, female, method=method, weight=weight, seed=1
        )
        scores = lm.unmasked([*male, *female])
        values = scores.aula if method == "aula" else scores.aul
        emb = scores.embedding.astype(np.float64)
        expected = brute_force(values[:5], values[5:], emb[:5], emb[5:], weight)
        assert result.score == pytest.approx(expected, abs=1e-9)
        test = mcnemar_random(values[:5], values[5:], seed=1)
        assert (result.b, result.c, result.pvalue) == (test.b, test.c, test.pvalue)
        assert (result.n_male, result.n_female, result.n_pairs) == (5, 4, 20)
        assert result.significant == (result.pvalue < 0.05)
        assert list(frame.columns) == ["set", "index", "n_tokens", "aul", "aula"]
        assert frame["set"].tolist() == ["male"] * 5 + ["female"] * 4
        assert np.allclose(frame["aula"], scores.aula) and np.allclose(frame["aul"], scores.aul)
        assert frame["n_tokens"].tolist() == [len(s.ids) for s in (*male, *female)]
    summary = result.to_frame()
    assert len(summary) == 1 and summary.loc[0, "score"] == result.score


def invoke(*args: str):
    return CliRunner().invoke(main, ["mbe", *args, "--no-progress"])


def test_cli_parallel_and_texts(tiny_mlm: Path, data_dir: Path, tmp_path: Path) -> None:
    tsv = _write_tsv(tmp_path / "p.tsv")
    out = tmp_path / "out"
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--out", str(out),
                 "--format", "csv", "--seed", "3")  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv")
    sentences = pd.read_csv(out / "sentences.csv")
    assert summary.loc[0, "n_male"] == summary.loc[0, "n_female"] == 4  # 5 male down-sampled
    assert summary.loc[0, "method"] == "aula" and summary.loc[0, "weight"] == "cosine"
    assert len(sentences) == 8 and {"english", "target", "aula"} <= set(sentences.columns)
    # the score is evaluate_mbe's on the same down-sampled sentences
    lm = MaskedLM(str(tiny_mlm))
    male = lm.tokenize(sentences.loc[sentences.set == "male", "target"].tolist())
    female = lm.tokenize(sentences.loc[sentences.set == "female", "target"].tolist())
    direct, _, _ = evaluate_mbe(lm, male, female, seed=3)
    assert summary.loc[0, "score"] == pytest.approx(direct.score, abs=1e-9)
    assert summary.loc[0, "p_value"] == pytest.approx(direct.pvalue)
    printed = pd.read_csv(pd.io.common.StringIO(res.stdout))
    assert printed.loc[0, "score"] == pytest.approx(direct.score, abs=1e-9)
    # the same corpus as two aligned text files gives the same summary
    en, tgt = tmp_path / "c.en", tmp_path / "c.de"
    en.write_text("".join(e + "\n" for e, _ in PAIRS))
    tgt.write_text("".join(t + "\n" for _, t in PAIRS))
    res = invoke("--english", str(en), "--target", str(tgt), "--model", str(tiny_mlm),
                 "--format", "json", "--seed", "3")  # fmt: skip
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["score"] == pytest.approx(direct.score, abs=1e-9)
    # readable summary by default
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--max-sentences", "2")
    assert res.exit_code == 0, res.output
    assert "MBE score" in res.output and "significant" in res.output
    assert "2 / 2" in res.output


def test_cli_limit_scores_a_sample_by_gender(
    tiny_mlm: Path, data_dir: Path, tmp_path: Path
) -> None:
    """5 male and 4 female sentences, equalised to 4 + 4; --limit 5: q = (2.5, 2.5), the tie
    of equal sides goes to the label that sorts first: 3 female, 2 male."""
    tsv = _write_tsv(tmp_path / "p.tsv")
    out = tmp_path / "out"
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--out", str(out),
                 "--seed", "3", "--limit", "5")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "note: scoring a sample of 5 of 8 sentences, stratified by gender (seed 3)" in (
        res.stderr
    )
    summary = pd.read_csv(out / "summary.csv")
    assert (summary.loc[0, "n_male"], summary.loc[0, "n_female"]) == (2, 3)
    assert len(pd.read_csv(out / "sentences.csv")) == 5
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "weatkit mbe"
    assert manifest["sample"]["strata"] == {"female": {"n": 3, "of": 4}, "male": {"n": 2, "of": 4}}
    # the library entry point draws the same sentences
    from weatkit.measures import mbe

    result = mbe(str(tiny_mlm), corpus=tsv, lang="de", seed=3, limit=5, show_progress=False)
    assert result.run.sentences["target"].tolist() == (
        pd.read_csv(out / "sentences.csv")["target"].tolist()
    )
    assert result.run.sample is not None and "sample of 5 of 8" in result.measures[0].method
    assert "--limit: must be at least 1" in _error_line(
        invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--limit", "0")
    )


def test_cli_skips_long_sentences(tiny_mlm: Path, data_dir: Path, tmp_path: Path) -> None:
    long = " ".join(["happy"] * 70) + " ."
    tsv = _write_tsv(tmp_path / "p.tsv", [*PAIRS, ("She was happy.", long)])
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--format", "csv")
    assert res.exit_code == 0, res.output
    assert "1 sentence(s) longer than 64 tokens skipped" in res.output
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--no-skip-long")
    assert res.exit_code == 1 and "is 73 tokens long" in res.output
    assert "female sentence 4" in _error_line(res)


def _error_line(res) -> str:
    assert res.exit_code != 0
    lines = [line for line in res.output.strip().splitlines() if not line.startswith("note:")]
    assert len(lines) == 1, res.output
    return lines[0]


def test_cli_errors(tiny_mlm: Path, data_dir: Path, tmp_path: Path) -> None:
    model = str(tiny_mlm)
    tsv = _write_tsv(tmp_path / "p.tsv")
    assert "give exactly one of" in _error_line(invoke("--model", model))
    line = _error_line(invoke("--parallel", str(tsv), "--mbe-set", "de", "--model", model))
    assert "give exactly one of" in line
    assert "--corpus" in _error_line(invoke("--mbe-set", "de", "--model", model))
    assert "go together" in _error_line(invoke("--english", str(tsv), "--model", model))
    line = _error_line(invoke("--mbe-set", "es", "--corpus", "news", "--model", model))
    assert "Spanish news set is absent" in line
    line = _error_line(invoke("--mbe-set", "de", "--corpus", "news", "--model", model))
    assert "tokenised with deepset/gbert-base" in line
    neutral = _write_tsv(tmp_path / "n.tsv", [("It rains.", "I am sad ."), ("He ran.", "I am .")])
    line = _error_line(invoke("--parallel", str(neutral), "--model", model))
    assert "found 1 male and 0 female sentences" in line
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\nc\n")
    assert "bad.tsv: line 2" in _error_line(invoke("--parallel", str(bad), "--model", model))


# --- the pipeline from Python (weatkit.mbe.run) -----------------------------------------------


def _notes(res) -> list[str]:
    return [line[len("note: ") :] for line in res.output.splitlines() if line.startswith("note: ")]


def test_run_mbe_parallel_equals_the_cli(tiny_mlm: Path, data_dir: Path, tmp_path: Path) -> None:
    tsv = _write_tsv(tmp_path / "p.tsv")
    out = tmp_path / "out"
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--out", str(out),
                 "--format", "csv", "--seed", "3")  # fmt: skip
    assert res.exit_code == 0, res.output
    printed: list[str] = []
    run = run_mbe_parallel(MaskedLM(str(tiny_mlm)), str(tsv), seed=3, on_note=printed.append)
    # the same files, byte for byte, and the same notes in the same order
    assert render(run.summary(str(tiny_mlm)), "csv") == (out / "summary.csv").read_bytes()
    assert render(run.sentences, "csv") == (out / "sentences.csv").read_bytes()
    assert run.notes == printed == _notes(res)
    assert run.notes == [
        "11 sentence pairs: 5 male, 4 female (English side with words of one list only)",
        "down-sampled 5 male and 4 female to 4 each",
    ]
    summary = pd.read_csv(out / "summary.csv")
    assert run.result.score == pytest.approx(summary.loc[0, "score"], abs=1e-12)
    assert (run.result.n_male, run.result.n_female, run.result.seed) == (4, 4, 3)
    assert (run.data, run.n_long) == (str(tsv), 0)


def test_run_mbe_parallel_takes_a_pair_of_text_files(
    tiny_mlm: Path, data_dir: Path, tmp_path: Path
) -> None:
    lm = MaskedLM(str(tiny_mlm))
    en, tgt = tmp_path / "c.en", tmp_path / "c.de"
    en.write_text("".join(e + "\n" for e, _ in PAIRS))
    tgt.write_text("".join(t + "\n" for _, t in PAIRS))
    pair = run_mbe_parallel(lm, (en, tgt), method="aul", weight="dot", max_sentences=3)
    tsv = run_mbe_parallel(lm, _write_tsv(tmp_path / "p.tsv"), method="aul", weight="dot",
                           max_sentences=3)  # fmt: skip
    assert pair.result == tsv.result and pair.notes == tsv.notes
    assert pair.data == f"{en} + {tgt}"
    assert (pair.result.method, pair.result.weight, pair.result.n_male) == ("aul", "dot", 3)
    pd.testing.assert_frame_equal(pair.sentences, tsv.sentences)
    res = invoke("--english", str(en), "--target", str(tgt), "--model", str(tiny_mlm),
                 "--method", "aul", "--weight", "dot", "--max-sentences", "3",
                 "--format", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert render(pair.summary(str(tiny_mlm)), "csv").decode() == res.stdout
    # sentences without texts (as from the token-id sets): no english/target columns
    male = [MbeSentence(s) for s in lm.tokenize(["I was happy today .", "I cried often ."])]
    female = [MbeSentence(s) for s in lm.tokenize(["I love flowers ."])]
    plain = run_mbe(lm, male, female, data="ids")
    assert "english" not in plain.sentences and "target" not in plain.sentences
    assert (plain.data, plain.result.n_male, plain.result.n_female) == ("ids", 1, 1)


def test_run_mbe_parallel_notes_and_errors(tiny_mlm: Path, data_dir: Path, tmp_path: Path) -> None:
    lm = MaskedLM(str(tiny_mlm))
    long = " ".join(["happy"] * 70) + " ."
    tsv = _write_tsv(tmp_path / "p.tsv", [*PAIRS, ("She was happy.", long)])
    run = run_mbe_parallel(lm, tsv)
    assert run.n_long == 1 and run.summary("m").loc[0, "n_skipped_long"] == 1
    assert "1 sentence(s) longer than 64 tokens skipped (0 male, 1 female)" in run.notes
    res = invoke("--parallel", str(tsv), "--model", str(tiny_mlm), "--format", "csv")
    assert run.notes == _notes(res)
    with pytest.raises(WeatkitError, match="is 73 tokens long"):
        run_mbe_parallel(lm, tsv, skip_long=False)
    # the notes made before an error are kept in the list passed in
    neutral = _write_tsv(tmp_path / "n.tsv", [("It rains.", "I am sad ."), ("He ran.", "I am .")])
    notes: list[str] = []
    with pytest.raises(WeatkitError, match="found 1 male and 0 female sentences"):
        run_mbe_parallel(lm, neutral, notes=notes)
    assert notes == [
        "2 sentence pairs: 1 male, 0 female (English side with words of one list only)"
    ]
    with pytest.raises(WeatkitError, match="male word list not found"):
        run_mbe_parallel(lm, tsv, male_words=tmp_path / "missing.txt")
