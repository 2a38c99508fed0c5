"""The null baseline of d (issue 19 item 2) against a plain loop, its band matching, p_null.

The reference is the textbook WEAT (Caliskan et al. 2017) written out in tests/test_influence.py
(numpy, one draw at a time): every null d is recomputed from the raw vectors of the words the
plan drew.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import weatkit
from tests.test_influence import textbook_d
from weatkit.cli import main
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.null import (
    N_BANDS,
    candidates_from_words,
    null_d_of,
    null_samples,
    summarize_null,
)
from weatkit.errors import DataError
from weatkit.report.null_plot import null_plot
from weatkit.report.run_dir import read_run_dir
from weatkit.report.tables import NULL_COLUMNS
from weatkit.stats.resampling import null_plan

FAST = ["--bootstrap", "50", "--permutations", "50", "--no-progress", "--device", "cpu"]
NULL_RESULT_COLUMNS = ["null_mean", "null_sd", "null_percentile", "p_null", "null_k"]


def _word(i: int) -> str:
    """A letters-only word per row: w + i in base 26 letters (``wa``, ``wb``, ...)."""
    letters = ""
    while True:
        letters = chr(ord("a") + i % 26) + letters
        i //= 26
        if i == 0:
            return "w" + letters


def random_space(n: int = 400, dim: int = 12, seed: int = 0) -> WordVectors:
    rng = np.random.default_rng(seed)
    words = [_word(i) for i in range(n)]
    words[7] = "3d"  # not letters only: never a candidate
    return WordVectors("toy", words, rng.standard_normal((n, dim)).astype(np.float32))


def toy_sets(space: WordVectors) -> dict[str, list[str]]:
    w = space.words
    return {"X": w[1:6], "Y": [w[150], w[300], w[390], w[20]], "A": w[40:44], "B": w[60:65]}


@pytest.mark.parametrize(("metric", "ddof"), [("cosine", 1), ("euclidean", 0)])
def test_null_d_equals_a_plain_loop_over_the_plans_draws(metric: str, ddof: int) -> None:
    space = random_space()
    sets = toy_sets(space)
    out = weatkit.null_baseline(
        space, *sets.values(), n_draws=300, frequency="rank", metric=metric, ddof=ddof,
        seed=5, device="cpu",
    )
    words = out.candidates.words
    raw = {k: space.lookup(v).astype(float) for k, v in sets.items()}
    loop = []
    for row in out.plan:  # one draw at a time, textbook formula
        X = space.lookup([words[i] for i in row[:5]]).astype(float)
        Y = space.lookup([words[i] for i in row[5:]]).astype(float)
        loop.append(textbook_d(X, Y, raw["A"], raw["B"], ddof=ddof, sim=metric))
    loop = np.array(loop)
    np.testing.assert_allclose(out.distribution, loop, rtol=0, atol=1e-10)
    d = textbook_d(*raw.values(), ddof=ddof, sim=metric)
    assert out.effect_size == pytest.approx(d, abs=1e-10)
    summary = out.summary
    assert summary.mean == pytest.approx(loop.mean(), abs=1e-12)
    assert summary.sd == pytest.approx(np.std(loop, ddof=1), abs=1e-12)
    assert summary.percentile == pytest.approx(100 * np.mean(loop <= d))
    assert summary.pvalue == pytest.approx((np.sum(loop >= d) + 1) / (300 + 1))
    assert summary.n_draws == 300
    assert np.ptp(loop) > 0.5  # the draws do differ
    # the plan is the resampling module's, from the seed, the sizes and the bands only
    test_words = {w for v in sets.values() for w in v}
    exclude = [i for i, w in enumerate(words) if w in test_words]
    targets = out.candidates.band_of(sets["X"] + sets["Y"])
    again = null_plan(out.candidates.bands, targets, 300, seed=5, exclude=exclude)
    np.testing.assert_array_equal(out.plan, again)
    other = null_plan(out.candidates.bands, targets, 300, seed=6, exclude=exclude)
    assert (other != out.plan).any()


def test_csls_null_d_is_the_engines_d_of_each_draw() -> None:
    """CSLS scales by each draw's own words (a similarity matrix per draw): each null d is the
    engine's d of that draw's X', Y' with the real A, B. It is also the cosine null d: within
    a test CSLS(w, a) = 2 cos(w, a) − r(w) − r(a) shifts every s(w) by the same constant and
    scales it by 2, which d's difference over its SD cancels."""
    space = random_space()
    sets = toy_sets(space)
    out = weatkit.null_baseline(
        space, *sets.values(), n_draws=40, frequency="rank", metric="csls", seed=2, device="cpu"
    )
    words = out.candidates.words
    A, B = space.lookup(sets["A"]), space.lookup(sets["B"])
    loop = [
        weatkit.weat(
            space.lookup([words[i] for i in row[:5]]), space.lookup([words[i] for i in row[5:]]),
            A, B, metric="csls", n_bootstrap=0, n_permutations=0, device="cpu",
        ).effect_size
        for row in out.plan
    ]
    np.testing.assert_allclose(out.distribution, loop, rtol=0, atol=1e-10)
    assert np.ptp(loop) > 0.1
    cosine = weatkit.null_baseline(
        space, *sets.values(), n_draws=40, frequency="rank", metric="cosine", seed=2, device="cpu"
    )
    np.testing.assert_allclose(out.distribution, cosine.distribution, rtol=0, atol=1e-10)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_the_tests_of_a_language_at_once_equal_a_plain_loop_per_test_and_draw(metric) -> None:
    """A run's null: the draws of two tests of other sizes from one ``null_samples`` call, d of
    both at once; drawn words without a vector (a model's) make their draw's d NaN."""
    space = random_space(n=500)
    candidates = candidates_from_words(space.words, "en", frequency="rank")
    first = toy_sets(space)
    second = {"X": space.words[200:203], "Y": space.words[210:213], "A": space.words[220:226],
              "B": space.words[230:232]}
    lacking = set(candidates.words[260:280])  # drawn words the embedding leaves out

    def embed(words: list[str]) -> WordVectors:
        kept = [w for w in words if w not in lacking]
        return WordVectors("toy", kept, space.lookup(kept))

    tests = [("first", first), ("second", second)]
    samples = null_samples(tests, candidates, embed, n_draws=200, seed=3)
    arrays = [{k: space.lookup(v).astype(float) for k, v in t.items()} for _, t in tests]
    got = null_d_of(
        [(sample, a["A"], a["B"]) for sample, a in zip(samples, arrays, strict=True)],
        metric=metric, ddof=1, device="cpu",
    )
    n_nan = 0
    for sample, a, d in zip(samples, arrays, got, strict=True):
        assert sample.vectors is samples[0].vectors and d.shape == (200,)
        for k, row in enumerate(sample.rows):
            if (row < 0).any():
                assert np.isnan(d[k])
                n_nan += 1
                continue
            X, Y = sample.vectors[row[: sample.n_x]], sample.vectors[row[sample.n_x :]]
            want = textbook_d(X.astype(float), Y.astype(float), a["A"], a["B"], sim=metric)
            assert d[k] == pytest.approx(want, abs=1e-10)
    assert 0 < n_nan < 400


def test_every_drawn_word_is_in_the_band_of_the_word_it_replaces() -> None:
    space = random_space(n=600)
    sets = toy_sets(space)
    out = weatkit.null_baseline(
        space, *sets.values(), n_draws=500, frequency="rank", n_candidates=500, device="cpu"
    )
    words = out.candidates.words
    # bands by hand: the candidates are the letters-only words of the first 500 rows, in row
    # order (rank = frequency); band = position * 10 // M
    candidates = [w for w in space.words[:500] if w.isalpha()]
    assert list(words) == candidates and "3d" not in words
    band = {w: i * N_BANDS // len(candidates) for i, w in enumerate(candidates)}
    targets = sets["X"] + sets["Y"]
    position = {w: i for i, w in enumerate(space.words)}

    def band_of_target(w: str) -> int:  # where it would be inserted; beyond the rows: last
        above = sum(position[c] < position[w] for c in candidates)
        return min(above * N_BANDS // len(candidates), N_BANDS - 1)

    want = [band_of_target(w) for w in targets]
    assert want == [0, 0, 0, 0, 0, 2, 5, 7, 0]  # 499 candidates: w150 has 149 above it, ...
    test_words = {w for v in sets.values() for w in v}
    for row in out.plan:
        drawn = [words[i] for i in row]
        assert [band[w] for w in drawn] == want
        assert not test_words & set(drawn)
        assert len(set(drawn)) == len(drawn)


def test_wordfreq_bands_hold_the_drawn_words_frequency() -> None:
    import wordfreq

    rows = [w for w in wordfreq.top_n_list("en", 3000) if w.isalpha()]
    rng = np.random.default_rng(1)
    space = WordVectors("wf", rows, rng.standard_normal((len(rows), 8)).astype(np.float32))
    sets = {"X": ["house", "water", "blue"], "Y": [rows[2500], rows[1500], "the"],
            "A": ["good", "nice"], "B": ["bad", "hate"]}
    out = weatkit.null_baseline(space, *sets.values(), n_draws=100, n_candidates=3000,
                                device="cpu")
    cand = out.candidates
    assert cand.source == "wordfreq:en"
    freq = {w: wordfreq.word_frequency(w, "en") * 1e6 for w in cand.words}
    order = sorted(cand.words, key=lambda w: -freq[w])
    edges = np.array_split(np.array(order), N_BANDS)  # equal-count bands, most frequent first
    lo_hi = [(min(freq[w] for w in e), max(freq[w] for w in e)) for e in edges]
    targets = sets["X"] + sets["Y"]
    for row in out.plan:
        for j, i in enumerate(row):
            word = cand.words[i]
            b = int(cand.bands[i])
            assert b == int(cand.band_of([targets[j]])[0])
            assert lo_hi[b][0] <= freq[word] <= lo_hi[b][1]
            assert word not in {w for v in sets.values() for w in v}
    assert int(cand.band_of(["the"])[0]) == 0


def test_p_null_by_hand() -> None:
    null = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, np.nan])
    s = summarize_null(null, 1.0, "greater")  # k = #{1.0, 2.0} = 2 of K' = 5
    assert (s.pvalue, s.n_draws, s.percentile) == (pytest.approx(3 / 6), 5, 80.0)
    assert s.mean == pytest.approx(0.5)
    assert s.sd == pytest.approx(np.std([-1, 0, 0.5, 1, 2], ddof=1))
    assert summarize_null(null, 1.0, "less").pvalue == pytest.approx(5 / 6)  # k = 4
    assert summarize_null(null, 1.0, "two-sided").pvalue == pytest.approx(1.0)  # 2·3/6
    assert summarize_null(null, 3.0, "greater").pvalue == pytest.approx(1 / 6)
    assert summarize_null(null, -2.0, "two-sided").pvalue == pytest.approx(2 / 6)


def test_k_below_one_and_a_vocabulary_too_small_for_the_bands() -> None:
    space = random_space(n=60)
    sets = {"X": space.words[1:6], "Y": space.words[30:34], "A": space.words[40:44],
            "B": space.words[50:55]}
    with pytest.raises(DataError, match="at least 1 draw, got 0"):
        weatkit.null_baseline(space, *sets.values(), n_draws=0, frequency="rank")
    # 59 candidates in bands of 5-6: band 0 (rows 0-5) loses X's 5 words and must give 5
    with pytest.raises(DataError) as err:
        weatkit.null_baseline(space, *sets.values(), n_draws=10, frequency="rank")
    assert str(err.value) == (
        "null_baseline: null baseline: frequency band 0 has 1 candidate word(s) for 5 target "
        "word(s); the vocabulary is too small for the bands"
    )
    bands = candidates_from_words(space.words, "en", frequency="rank").bands
    assert np.bincount(bands).tolist() == [6, 6, 6, 6, 6, 6, 6, 6, 6, 5]  # ⌊10 i / 59⌋


def test_cli_writes_the_columns_and_null_csv(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--lists", "weat", "--lang", "en", "--null", "60", "--out", str(out), *FAST]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "null baseline: 60 frequency-matched" in result.stderr
    results = pd.read_csv(out / "results.csv")
    null = pd.read_csv(out / "null.csv")
    assert list(null.columns) == NULL_COLUMNS and len(null) == 2 * 60
    for row in results.itertuples():
        d = null[null["test"] == row.test]["d"].to_numpy()
        assert row.null_k == 60
        assert row.null_mean == pytest.approx(d.mean())
        assert row.null_sd == pytest.approx(d.std(ddof=1))
        assert row.p_null == pytest.approx((np.sum(d >= row.effect_size) + 1) / 61)
    tables = read_run_dir(out)
    assert tables.null.shape == null.shape
    fig = null_plot(tables, tests=["weat1"])
    heights = sum(p.get_height() for p in fig.axes[0].patches)
    assert heights == 60
    png = tmp_path / "null.png"
    plot = CliRunner().invoke(main, ["plot", str(out), "--kind", "null", "--out", str(png)])
    assert plot.exit_code == 0 and png.read_bytes()[:4] == b"\x89PNG"

    plain = tmp_path / "plain"
    args = ["run", "--lists", "weat", "--lang", "en", "--out", str(plain), *FAST]
    assert CliRunner().invoke(main, args).exit_code == 0
    off = pd.read_csv(plain / "results.csv")
    assert off[NULL_RESULT_COLUMNS].isna().all().all() and not (plain / "null.csv").exists()
    cols = [c for c in off.columns if c not in NULL_RESULT_COLUMNS and c != "oov_items"]
    pd.testing.assert_frame_equal(off[cols], results[cols])  # existing numbers do not move


def test_cli_refuses_a_negative_null() -> None:
    result = CliRunner().invoke(main, ["run", "--lists", "weat", "--null", "-1", *FAST])
    assert result.exit_code != 0
    assert "--null: must be >= 1 draws (0: no null baseline), got -1" in result.output
