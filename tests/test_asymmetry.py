"""Corpus asymmetry (CA-WEAT paper §5, Fig. 3): counts, wordfreq, tables, correlations, CLI."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import string
import tempfile
import warnings
from itertools import permutations
from math import factorial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import wordfreq
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from weatkit.asymmetry import (
    ASYMMETRY_COLUMNS,
    CORRELATION_COLUMNS,
    COUNT_COLUMNS,
    asymmetry_correlations,
    asymmetry_table,
    attribute_counts,
    count_items,
    wordfreq_counts,
)
from weatkit.cli import main
from weatkit.cli.asymmetry import asymmetry_command
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists

CORPUS = [
    "Love and peace, love!",
    "The tear gas (TEAR GAS) was awful; tear-gas is one token.",
    "New York, new york... NEW YORK «Peace» — peace? PEACE.",
    "war war love war",
    "new",
    "york",
    "l'amour is not amour",
    "love love love",
]
ITEMS = ["love", "peace", "tear gas", "tear_gas", "tear-gas", "new york", "war", "amour"]
ITEMS += ["love love", "missing", "York", "...", "l'amour"]
PUNCT = string.punctuation + "«»—"


def naive_count(lines: list[str], item: str, lower: bool = True) -> int:
    """Overlapping occurrences of the item's words as a substring of each line's token string."""

    def words(text: str) -> list[str]:
        text = text.lower() if lower else text
        return [w for w in (t.strip(PUNCT) for t in text.split()) if w]

    needle = " " + " ".join(words(item.replace("_", " "))) + " "
    if needle == "  ":
        return 0
    total = 0
    for line in lines:
        haystack = " " + " ".join(words(line)) + " "
        start = haystack.find(needle)
        while start >= 0:
            total += 1
            start = haystack.find(needle, start + 1)
    return total


def write_corpus(path: Path, lines: list[str]) -> Path:
    data = ("\n".join(lines) + "\n").encode()
    opener = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
    path.write_bytes(opener.get(path.suffix, bytes)(data))
    return path


def make_test(lang: str, A: tuple[str, ...], B: tuple[str, ...], **kw: str) -> AssociationTest:
    fields = {"test": "weat1", "list_set": "toy", "list_id": f"toy-{lang}"} | kw
    return AssociationTest(lang=lang, X=("x",), Y=("y",), A=A, B=B, **fields)


def invoke(*args: str):
    return CliRunner().invoke(asymmetry_command, list(args))


def assert_one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and res.stderr.strip().count("\n") == 0
    assert "weatkit: error:" in res.stderr
    for fragment in fragments:
        assert fragment in res.stderr


# ---------------------------------------------------------------------------------------------
# count_items


def test_counts_match_a_naive_count(tmp_path: Path) -> None:
    counts = count_items(ITEMS, write_corpus(tmp_path / "c.txt", CORPUS))
    assert counts == {item: naive_count(CORPUS, item) for item in ITEMS}
    # by hand: case and punctuation folded, phrases within a line, overlaps counted
    assert counts["love"] == 6 and counts["peace"] == 4 and counts["new york"] == 3
    assert counts["tear gas"] == counts["tear_gas"] == 2 and counts["tear-gas"] == 1
    assert counts["love love"] == 2 and counts["amour"] == 1 and counts["l'amour"] == 1
    assert counts["missing"] == 0 and counts["..."] == 0


def test_case_sensitive_counts(tmp_path: Path) -> None:
    counts = count_items(
        ["love", "Love", "new york", "NEW YORK"],
        write_corpus(tmp_path / "c.txt", CORPUS),
        lower=False,
    )
    assert counts == {"love": 5, "Love": 1, "new york": 1, "NEW YORK": 1}
    assert counts == {i: naive_count(CORPUS, i, lower=False) for i in counts}


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_corpus(tmp_path: Path, suffix: str) -> None:
    plain = count_items(ITEMS, write_corpus(tmp_path / "c.txt", CORPUS))
    assert count_items(ITEMS, write_corpus(tmp_path / f"c.txt{suffix}", CORPUS)) == plain


def test_bad_corpus_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"love\npeace\nwar \xff\xfe\n")
    with pytest.raises(WeatkitError, match=r"bad\.txt, line 3: not valid UTF-8"):
        count_items(["love"], bad)
    with pytest.raises(WeatkitError, match="corpus not found"):
        count_items(["love"], tmp_path / "missing.txt")
    (tmp_path / "broken.gz").write_bytes(b"not gzip at all")
    with pytest.raises(WeatkitError, match=r"broken\.gz"):
        count_items(["love"], tmp_path / "broken.gz")


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=300),
    suffix=st.sampled_from(["", ".gz", ".bz2", ".xz"]),
    compress=st.booleans(),
)
def test_arbitrary_bytes_never_crash(data: bytes, suffix: str, compress: bool) -> None:
    if compress and suffix:
        data = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[suffix](data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"corpus.txt{suffix}"
        path.write_bytes(data)
        try:
            counts = count_items(["love", "tear gas", "a"], path)
        except WeatkitError as err:
            assert "\n" not in str(err) and "corpus.txt" in str(err)
        else:
            assert set(counts) == {"love", "tear gas", "a"}


# ---------------------------------------------------------------------------------------------
# attribute counts and the wordfreq proxy


def test_attribute_counts_from_corpora(tmp_path: Path) -> None:
    write_corpus(tmp_path / "c.en.txt", CORPUS)
    write_corpus(tmp_path / "c.de.txt.gz", ["Frieden Krieg Krieg", "Liebe"])
    tests = [
        make_test("en", ("love", "peace", "tear gas"), ("war", "missing")),
        make_test("en", ("love",), ("love love",), test="weat2"),
        make_test("de", ("Liebe", "Frieden"), ("Krieg",)),
    ]
    source = {"en": tmp_path / "c.en.txt", "de": tmp_path / "c.de.txt.gz"}
    counts = attribute_counts(tests, source)
    assert list(counts.columns) == COUNT_COLUMNS
    assert counts[["count_a", "count_b", "count_difference"]].values.tolist() == [
        [6 + 4 + 2, 3, 12 - 3],
        [6, 2, 4],
        [2, 2, 0],
    ]
    assert counts.counts_source[0] == f"corpus:{tmp_path / 'c.en.txt'}"
    template = attribute_counts(tests[:2], str(tmp_path / "c.{lang}.txt"))
    pd.testing.assert_frame_equal(template, counts.iloc[:2])
    with pytest.raises(WeatkitError, match="no corpus for language 'de'"):
        attribute_counts(tests, {"en": tmp_path / "c.en.txt"})
    with pytest.raises(WeatkitError, match=r"has no \{lang\}"):
        attribute_counts(tests, str(tmp_path / "c.en.txt"))


def test_wordfreq_proxy() -> None:
    words = ["love", "peace", "tear gas", "tear_gas", "qqqzzxq"]
    freqs = wordfreq_counts(words, "en")
    for word in ("love", "peace"):
        assert freqs[word] == pytest.approx(1e6 * wordfreq.word_frequency(word, "en"))
    assert (
        freqs["tear gas"]
        == freqs["tear_gas"]
        == pytest.approx(1e6 * wordfreq.word_frequency("tear gas", "en"))
    )
    assert freqs["qqqzzxq"] == 0
    hr = attribute_counts([make_test("hr", ("ljubav",), ("rat",))], "wordfreq")
    assert hr.counts_source[0] == "wordfreq:sh (per million words)"
    assert hr.count_a[0] == pytest.approx(1e6 * wordfreq.word_frequency("ljubav", "sh"))
    with pytest.raises(WeatkitError, match=r"no word list for language 'xx'.*en"):
        wordfreq_counts(["x"], "xx")
    with pytest.raises(WeatkitError, match="'ps'"):  # wordfreq itself would fall back to English
        wordfreq_counts(["x"], "ps")


# ---------------------------------------------------------------------------------------------
# tables and correlations


def toy_results() -> tuple[pd.DataFrame, pd.DataFrame]:
    counts = pd.DataFrame(
        [("en", "s1", f"l{i}", "weat1", 10.0 + i, 4.0, 6.0 + i, "toy") for i in range(4)],
        columns=COUNT_COLUMNS,
    )
    results = pd.DataFrame(
        {
            "embeddings": ["E", "E", "E", "E", "F", "E"],
            "lang": ["en"] * 6,
            "list_set": ["s1"] * 6,
            "list_id": ["l0", "l1", "l2", "l3", "l0", "l9"],
            "test": ["weat1"] * 6,
            "effect_size": [0.1, 0.2, 0.4, 0.3, 0.5, 0.9],
            "p_value": [0.01] * 6,
        }
    )
    return results, counts


def test_asymmetry_table_joins_on_the_list() -> None:
    results, counts = toy_results()
    table = asymmetry_table(results, counts)
    assert list(table.columns) == ASYMMETRY_COLUMNS
    assert len(table) == 5  # l9 has no counts
    row = table[(table.embeddings == "F")].iloc[0]
    assert (row.list_id, row.effect_size, row.count_difference) == ("l0", 0.5, 6.0)
    with pytest.raises(WeatkitError, match="no result row matches"):
        asymmetry_table(results.assign(list_id="other"), counts)


def _loop_p(x: np.ndarray, y: np.ndarray, statistic: object) -> float:
    """Two-sided permutation p by a plain loop over every order of x (all n!, small n)."""
    observed = statistic(x, y)
    null = np.array([statistic(x[list(o)], y) for o in permutations(range(len(x)))])
    return min(1.0, 2 * min(np.mean(null <= observed + 1e-9), np.mean(null >= observed - 1e-9)))


def numpy_fit(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    n = len(x)
    r = np.corrcoef(x, y)[0, 1]
    rho = np.corrcoef(stats.rankdata(x), stats.rankdata(y))[0, 1]

    def pearson(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.corrcoef(a, b)[0, 1])

    def spearman(a: np.ndarray, b: np.ndarray) -> float:
        return pearson(stats.rankdata(a), stats.rankdata(b))

    slope, intercept = np.polyfit(x, y, 1)
    fit = {"pearson_r": r, "spearman_rho": rho, "r2": r**2, "slope": slope, "intercept": intercept}
    if n <= 8:  # exact: every order
        fit |= {"pearson_p": _loop_p(x, y, pearson), "spearman_p": _loop_p(x, y, spearman)}
    return fit


def test_correlations_equal_numpy_per_list_set_and_all() -> None:
    x1, y1 = np.array([3.0, -1.0, 4.0, 1.5]), np.array([0.9, 0.1, 1.2, 0.05])
    x2, y2 = np.array([10.0, 2.0, 7.0]), np.array([0.3, 0.5, 0.6])
    table = pd.DataFrame(
        {
            "embeddings": "E",
            "test": "weat1",
            "list_set": ["x-weat"] * 4 + ["ca-weat:v1"] * 3,
            "effect_size": np.r_[y1, y2],
            "count_difference": np.r_[x1, x2],
        }
    )
    table = pd.concat([table, table.assign(test="weat2", effect_size=-table.effect_size)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corr = asymmetry_correlations(table)
    assert list(corr.columns) == CORRELATION_COLUMNS
    got = corr.set_index(["test", "list_sets"])
    assert list(got.index) == [
        (t, s) for t in ("weat1", "weat2") for s in ("x-weat", "ca-weat:v1", "all")
    ]
    groups = {"x-weat": (x1, y1), "ca-weat:v1": (x2, y2), "all": (np.r_[x1, x2], np.r_[y1, y2])}
    for name, (x, y) in groups.items():
        for test, sign in (("weat1", 1), ("weat2", -1)):
            row = got.loc[(test, name)]
            assert row.n == len(x)
            expected = numpy_fit(x, sign * y)
            for col, value in expected.items():
                assert row[col] == pytest.approx(value, rel=1e-9, abs=1e-12), (name, test, col)
            assert (row.permutation_method, row.n_permutations) == ("exact", factorial(len(x)))
            assert row.n_min == 5
            too_few = f"n={len(x)} < 5: the smallest possible p is 2/{len(x)}! = "
            too_few += f"{2 / factorial(len(x)):.3f} > 0.05"
            assert row.flag == ("" if len(x) >= 5 else too_few)


def test_correlations_undefined_without_warnings() -> None:
    table = pd.DataFrame(
        {
            "embeddings": "E",
            "test": ["weat1"] * 2 + ["weat2"] * 4,
            "list_set": "s",
            "effect_size": [0.1, 0.2, 0.3, 0.1, 0.5, np.nan],
            "count_difference": [1.0, 2.0, 5.0, 5.0, 5.0, 1.0],  # weat2: constant x
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corr = asymmetry_correlations(table)
    assert corr.n.tolist() == [2, 2, 3, 3]  # the NaN effect size is dropped
    assert corr[CORRELATION_COLUMNS[4:11]].isna().all().all()
    assert corr.flag.tolist() == ["n=2 < 3: no correlation"] * 2 + [
        "one variable is constant: no correlation"
    ] * 2


def test_three_lists_in_perfect_order_get_the_exact_p_not_zero() -> None:
    """The asymptotic p of ρ = 1 over 3 lists is 0; the exact permutation p is 2/3! = 1/3."""
    table = pd.DataFrame(
        {
            "embeddings": "E",
            "test": "weat1",
            "list_set": "s",
            "effect_size": [0.1, 0.4, 0.9],
            "count_difference": [1.0, 2.0, 8.0],
        }
    )
    assert stats.spearmanr([1.0, 2.0, 8.0], [0.1, 0.4, 0.9]).pvalue == 0
    row = asymmetry_correlations(table).iloc[0]
    assert row.spearman_rho == 1 and row.spearman_p == pytest.approx(1 / 3)
    assert row.flag.startswith("n=3 < 5")


# ---------------------------------------------------------------------------------------------
# CLI


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``weatkit run`` of the English CA-WEAT, X-WEAT and WEAT lists on the embedded GloVe."""
    out = tmp_path_factory.mktemp("run")
    args = ["run", "--lists", "ca-weat,x-weat,weat", "--lang", "en", "--out", str(out)]
    args += ["--bootstrap", "0", "--permutations", "0", "--no-progress"]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def english_tests() -> dict[tuple[str, str], AssociationTest]:
    norm = Normalization(join_phrases=None)
    tests = select_lists(["ca-weat", "x-weat", "weat"], ["en"], normalization=norm).tests
    return {(t.list_id, t.test): t for t in tests}


def check_correlations(out: Path, table: pd.DataFrame) -> None:
    corr = pd.read_csv(out / "asymmetry_correlations.csv", keep_default_na=False, na_values=[""])
    assert list(corr.columns) == CORRELATION_COLUMNS
    everything = corr[(corr.test == "weat1") & (corr.list_sets == "all")].iloc[0]
    rows = table[table.test == "weat1"]
    assert everything.n == len(rows) >= 5
    expected = numpy_fit(rows.count_difference.to_numpy(), rows.effect_size.to_numpy())
    for col, value in expected.items():
        assert everything[col] == pytest.approx(value, rel=1e-9, abs=1e-12)
    assert set(corr.list_sets) == {"ca-weat:v1", "x-weat", "weat", "all"}


def test_cli_with_a_corpus(run_dir: Path, tmp_path: Path) -> None:
    lines = ["Love, peace and freedom!", "murder ... death; LOVE", "tear gas love", "health"]
    write_corpus(tmp_path / "corpus.en.txt.gz", lines)
    out = tmp_path / "out"
    res = invoke(str(run_dir), "--corpus", f"{tmp_path}/corpus.{{lang}}.txt.gz", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "R²" in res.stdout and "all" in res.stdout
    table = pd.read_csv(out / "asymmetry.csv", keep_default_na=False)
    results = pd.read_csv(run_dir / "results.csv", keep_default_na=False)
    assert list(table.columns) == ASYMMETRY_COLUMNS and len(table) == len(results)
    merged = table.merge(results, on=["list_id", "test"], suffixes=("", "_run"))
    np.testing.assert_allclose(merged.effect_size, merged.effect_size_run)
    tests = english_tests()
    for row in table.itertuples():
        test = tests[(row.list_id, row.test)]
        count_a = sum(naive_count(lines, w) for w in test.A)
        count_b = sum(naive_count(lines, w) for w in test.B)
        assert (row.count_a, row.count_b) == (count_a, count_b)
        assert row.count_difference == count_a - count_b
    assert table.count_a.max() > 0 and table.count_b.max() > 0
    check_correlations(out, table)


def test_cli_with_wordfreq_writes_into_the_run(run_dir: Path) -> None:
    res = invoke(str(run_dir), "--format", "csv")
    assert res.exit_code == 0, res.output
    printed = pd.read_csv(io.StringIO(res.stdout))
    assert list(printed.columns) == CORRELATION_COLUMNS
    table = pd.read_csv(run_dir / "asymmetry.csv", keep_default_na=False)
    assert set(table.counts_source) == {"wordfreq:en (per million words)"}
    tests = english_tests()
    for row in table.itertuples():
        test = tests[(row.list_id, row.test)]
        expected = sum(1e6 * wordfreq.word_frequency(w, "en") for w in test.A)
        assert row.count_a == pytest.approx(expected)
    check_correlations(run_dir, table)


def test_screen_table_shows_the_flags_of_the_csv(run_dir: Path) -> None:
    """Issue 24 item 3.7: the printed table marks the rows the CSV flags (†) and says why."""
    res = invoke(str(run_dir))
    assert res.exit_code == 0, res.output
    corr = pd.read_csv(run_dir / "asymmetry_correlations.csv", keep_default_na=False)
    flagged = corr[corr.flag != ""]
    assert 0 < len(flagged) < len(corr)
    text = res.stdout
    assert text.count(" †") == len(flagged)  # "3 †" in the n column of each flagged row
    for flag in set(flagged.flag):
        assert f"† {flag}" in text
    assert "p: two-sided permutation p (exact over all n! orders up to 8 lists)" in text


def test_cli_counts_without_a_run(tmp_path: Path) -> None:
    res = invoke(
        "--lists",
        "x-weat",
        "--lang",
        "en",
        "--lang",
        "de",
        "--format",
        "csv",
        "--out",
        str(tmp_path),
    )
    assert res.exit_code == 0, res.output
    counts = pd.read_csv(io.StringIO(res.stdout))
    assert list(counts.columns) == COUNT_COLUMNS and len(counts) == 4
    written = pd.read_csv(tmp_path / "attribute_counts.csv")
    pd.testing.assert_frame_equal(written, counts)
    norm = Normalization(join_phrases=None)
    for test in select_lists(["x-weat"], ["en", "de"], normalization=norm).tests:
        row = counts[(counts.list_id == test.list_id) & (counts.test == test.test)].iloc[0]
        expected = sum(1e6 * wordfreq.word_frequency(w, test.lang) for w in test.B)
        assert row.count_b == pytest.approx(expected)
    readable = invoke("--lists", "weat")
    assert readable.exit_code == 0 and "count A" in readable.stdout


def test_cli_errors(run_dir: Path, tmp_path: Path) -> None:
    assert_one_line_error(invoke(str(tmp_path)), "no results.csv")
    assert_one_line_error(invoke("--lists", "ca-weat", "--lang", "lb"), "no word list", "'lb'")
    assert_one_line_error(invoke(str(run_dir), "--lists", "weat"), "manifest")
    missing = invoke(str(run_dir), "--corpus", str(tmp_path / "none.{lang}.txt"))
    assert_one_line_error(missing, "corpus not found")
    assert_one_line_error(invoke("--corpus", "a.txt", "--corpus", "b.txt"), "--corpus")
    # results that belong to no list of the manifest
    other = tmp_path / "other"
    other.mkdir()
    results = pd.read_csv(run_dir / "results.csv", keep_default_na=False)
    results.assign(list_id="nobody").to_csv(other / "results.csv", index=False)
    (other / "manifest.json").write_text((run_dir / "manifest.json").read_text())
    assert_one_line_error(invoke(str(other)), "no row for the lists")
    (other / "manifest.json").write_text(json.dumps({"config": {}}))
    assert_one_line_error(invoke(str(other)), "no list sets")
    (other / "manifest.json").unlink()
    assert_one_line_error(invoke(str(other)), "manifest.json: missing")


def test_wordfreq_counts_are_looked_up_once_per_process(monkeypatch) -> None:
    """A grid asks for the same 20,000 candidates per space: each word is tokenised once (not
    again when wordfreq's own cache of 100,000 lookups has emptied itself)."""
    words = ["love", "loves", "peace"]
    first = wordfreq_counts(words, "en")
    assert first["peace"] == pytest.approx(1e6 * wordfreq.word_frequency("peace", "en"))

    def no_lookup(*args, **kwargs):
        raise AssertionError("looked up again")

    monkeypatch.setattr(wordfreq, "word_frequency", no_lookup)
    assert wordfreq_counts(words, "en") == first
    with pytest.raises(AssertionError, match="looked up again"):
        wordfreq_counts(["zzqxwörter"], "de")  # a word not looked up before
