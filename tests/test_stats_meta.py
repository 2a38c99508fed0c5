"""Random-effects pooling of d (issue 19, item 3) against a plain DerSimonian–Laird."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from weatkit.errors import ConfigError, WeatkitError
from weatkit.report.tables import POOLED_COLUMNS, pooled_frame
from weatkit.stats.meta import random_effects


def _dl_by_hand(d: list[float], v: list[float], level: float = 0.95) -> dict[str, float]:
    """DerSimonian & Laird (1986), written out with loops."""
    k = len(d)
    w = [1 / x for x in v]
    sw = sum(w)
    d_fe = sum(wi * di for wi, di in zip(w, d, strict=True)) / sw
    q = sum(wi * (di - d_fe) ** 2 for wi, di in zip(w, d, strict=True))
    c = sw - sum(wi**2 for wi in w) / sw
    tau2 = max(0.0, (q - (k - 1)) / c)
    ws = [1 / (vi + tau2) for vi in v]
    sws = sum(ws)
    est = sum(wi * di for wi, di in zip(ws, d, strict=True)) / sws
    se = 1 / math.sqrt(sws)
    z = stats.norm.ppf(1 - (1 - level) / 2)
    hk_var = sum(wi * (di - est) ** 2 for wi, di in zip(ws, d, strict=True)) / ((k - 1) * sws)
    t = stats.t.ppf(1 - (1 - level) / 2, k - 1)
    return {
        "estimate": est,
        "se": se,
        "ci_low": est - z * se,
        "ci_high": est + z * se,
        "hk_ci_low": est - t * math.sqrt(hk_var),
        "hk_ci_high": est + t * math.sqrt(hk_var),
        "tau2": tau2,
        "i2": max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0,
        "q": q,
        "q_pvalue": stats.chi2.sf(q, k - 1),
    }


CASES = [
    # heterogeneous: τ² > 0
    ([0.5, 1.0, 1.4, 0.2], [0.04, 0.09, 0.05, 0.1]),
    # homogeneous: Q < k − 1, τ² truncated at 0 (statsmodels alone would give τ² < 0)
    ([0.5, 0.52, 0.49], [0.04, 0.05, 0.03]),
    # two units
    ([1.2, -0.3], [0.02, 0.03]),
    # many units, a wide spread of variances
    (list(np.linspace(-0.5, 1.5, 9)), list(np.linspace(0.01, 0.3, 9))),
]


@pytest.mark.parametrize(("d", "v"), CASES)
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_random_effects_equals_a_plain_dersimonian_laird(d, v, level) -> None:
    pooled = random_effects(d, v, level)
    expected = _dl_by_hand(d, v, level)
    for name, value in expected.items():
        assert getattr(pooled, name) == pytest.approx(value, rel=1e-10, abs=1e-12), name
    assert pooled.k == len(d) and pooled.confidence_level == level


_EFFECTS = st.floats(-5, 5, allow_nan=False, allow_subnormal=False)
_VARIANCES = st.floats(1e-6, 10, allow_nan=False, allow_subnormal=False)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 30).flatmap(
        lambda k: st.tuples(st.lists(_EFFECTS, min_size=k, max_size=k),
                            st.lists(_VARIANCES, min_size=k, max_size=k))
    ),
    st.sampled_from([0.95, 0.9, 0.99, 0.5]),
)
def test_bit_for_bit_the_values_of_statsmodels_and_scipy_stats(dv, level) -> None:
    """Every field as statsmodels' ``combine_effects(method_re="dl")`` and scipy.stats' norm,
    t and chi2 give it (τ² truncated at 0: then the fixed-effect fields)."""
    from statsmodels.stats.meta_analysis import combine_effects

    d, v = np.array(dv[0]), np.array(dv[1])
    alpha = 1 - level
    with np.errstate(all="ignore"):
        res = combine_effects(d, v, method_re="dl", alpha=alpha)
    kind = "re" if res.tau2 > 0 else "fe"
    estimate, se = getattr(res, f"mean_effect_{kind}"), getattr(res, f"sd_eff_w_{kind}")
    z, t = stats.norm.isf(alpha / 2), stats.t.isf(alpha / 2, len(d) - 1)
    hk_half = t * np.sqrt(getattr(res, f"var_hksj_{kind}"))
    pooled = random_effects(d, v, level)
    assert pooled.estimate == estimate and pooled.se == se
    assert (pooled.ci_low, pooled.ci_high) == (estimate - z * se, estimate + z * se)
    assert (pooled.hk_ci_low, pooled.hk_ci_high) == (estimate - hk_half, estimate + hk_half)
    assert pooled.tau2 == max(res.tau2, 0.0) and pooled.q == res.q
    assert pooled.q_pvalue == res.test_homogeneity().pvalue


def test_the_truncated_case_is_the_fixed_effect_estimate() -> None:
    d, v = [0.5, 0.52, 0.49], [0.04, 0.05, 0.03]
    pooled = random_effects(d, v)
    w = 1 / np.asarray(v)
    assert pooled.tau2 == 0.0 and pooled.i2 == 0.0
    assert pooled.estimate == pytest.approx(float((w * d).sum() / w.sum()), rel=1e-12)
    # equal effects: Q = 0, I² = 0 (not 1 − (k − 1)/0)
    assert random_effects([0.3, 0.3, 0.3], [0.1, 0.2, 0.3]).i2 == 0.0


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(WeatkitError, match="at least two"):
        random_effects([0.3], [0.1])
    with pytest.raises(WeatkitError, match="same length"):
        random_effects([0.3, 0.4], [0.1])
    with pytest.raises(WeatkitError, match="> 0"):
        random_effects([0.3, 0.4], [0.1, 0.0])
    with pytest.raises(WeatkitError, match="finite"):
        random_effects([0.3, math.nan], [0.1, 0.1])


def _results(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    """A results table: (embeddings, lang, list_id, d, se), test weat1, list set ``s``."""
    return pd.DataFrame(
        [
            {
                "embeddings": e,
                "lang": lang,
                "list_set": "s",
                "list_id": lid,
                "test": "weat1",
                "effect_size": d,
                "effect_size_se": se,
            }
            for e, lang, lid, d, se in rows
        ]
    )


def test_pooled_frame_pools_lists_then_languages_then_layers() -> None:
    rows = [
        # model m, layers 0 and 5; en has three lists (one without SE: left out), de one
        ("m@0", "en", "en1", 0.9, 0.2),
        ("m@0", "en", "en2", 1.3, 0.25),
        ("m@0", "en", "en3", 1.0, math.nan),
        ("m@0", "de", "de1", 0.4, 0.3),
        ("m@5", "en", "en1", 0.2, 0.2),
        ("m@5", "en", "en2", 0.1, 0.15),
        ("m@5", "de", "de1", 0.5, 0.3),
        ("static", "en", "en1", 0.7, 0.1),  # one list, one language: nothing to pool
    ]
    layers = {"m@0": ("m", 0), "m@5": ("m", 5)}
    table = pooled_frame(_results(rows), ("lists", "languages", "layers"), 0.95, layers)
    assert list(table.columns) == POOLED_COLUMNS
    assert table["level"].tolist() == ["lists", "lists"] + ["languages"] * 2 + ["layers"] * 2

    lists0 = table.iloc[0]
    assert (lists0.embeddings, lists0.lang, lists0.k, lists0.units) == ("m@0", "en", 2, "en1 en2")
    hand = _dl_by_hand([0.9, 1.3], [0.2**2, 0.25**2])
    assert lists0.effect_size == pytest.approx(hand["estimate"], rel=1e-12)
    assert lists0.effect_size_se == pytest.approx(hand["se"], rel=1e-12)

    # languages: en enters with its lists pooled, de with its one list
    lang0 = table.iloc[2]
    assert (lang0.embeddings, lang0.k, lang0.units) == ("m@0", 2, "en de")
    assert pd.isna(lang0.lang)
    hand = _dl_by_hand([hand["estimate"], 0.4], [hand["se"] ** 2, 0.3**2])
    for name in ("estimate", "se", "tau2", "i2", "q", "q_pvalue"):
        column = {"estimate": "effect_size", "se": "effect_size_se"}.get(name, name)
        assert lang0[column] == pytest.approx(hand[name], rel=1e-10, abs=1e-12), name

    # layers: model m in en, each layer's lists pooled first, in layer order
    layer = table.iloc[4]
    assert (layer.embeddings, layer.lang, layer.k, layer.units) == ("m", "en", 2, "m@0 m@5")
    l0 = _dl_by_hand([0.9, 1.3], [0.04, 0.0625])
    l5 = _dl_by_hand([0.2, 0.1], [0.04, 0.0225])
    hand = _dl_by_hand([l0["estimate"], l5["estimate"]], [l0["se"] ** 2, l5["se"] ** 2])
    assert layer.effect_size == pytest.approx(hand["estimate"], rel=1e-12)
    assert layer.tau2 == pytest.approx(hand["tau2"], rel=1e-10)
    # de: one list per layer, each layer enters with it
    de = table.iloc[5]
    assert (de.embeddings, de.lang, de.k) == ("m", "de", 2)
    assert de.effect_size == pytest.approx(0.45, rel=1e-12)  # equal variances, Q < 1: mean


def test_pooled_frame_checks_its_levels() -> None:
    with pytest.raises(WeatkitError, match="unknown pooling level 'layer'"):
        pooled_frame(_results([]), ("layer",))
    empty = pooled_frame(_results([("e", "en", "en1", 0.5, 0.1)]), ("lists", "languages"))
    assert empty.empty and list(empty.columns) == POOLED_COLUMNS


def test_run_config_refuses_bad_pooling() -> None:
    from weatkit import RunConfig
    from weatkit.engine.weat import EngineOptions

    with pytest.raises(ConfigError, match="some of lists, languages, layers"):
        RunConfig(pool=("list",))
    with pytest.raises(ConfigError, match="needs the bootstrap"):
        RunConfig(pool=("lists",), engine=EngineOptions(n_bootstrap=0))
    with pytest.raises(ConfigError, match="twice"):
        RunConfig(pool=("lists", "lists"))


@pytest.mark.slow
def test_run_pools_lists_as_a_recomputation_from_results_csv(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from weatkit.cli import main
    from weatkit.report.run_dir import read_run_dir

    out = tmp_path / "out"
    args = ["run", "--lists", "ca-weat", "--lang", "en", "--test", "weat1,weat2",
            "--bootstrap", "300", "--permutations", "100", "--device", "cpu",
            "--pool", "lists", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Random-effects pooled d" in result.output
    results = pd.read_csv(out / "results.csv")
    pooled = read_run_dir(out).pooled
    assert len(pooled) == 2 and set(pooled["level"]) == {"lists"}
    for row in pooled.itertuples(index=False):
        lists = results[results["test"] == row.test]
        assert row.k == len(lists) and row.units == " ".join(lists["list_id"])
        hand = _dl_by_hand(list(lists["effect_size"]), list(lists["effect_size_se"] ** 2))
        assert row.effect_size == pytest.approx(hand["estimate"], rel=1e-9)
        assert row.i2 == pytest.approx(hand["i2"], rel=1e-9, abs=1e-12)

    bad = CliRunner().invoke(
        main, ["run", "--lists", "weat", "--pool", "lists", "--bootstrap", "0"]
    )
    assert bad.exit_code != 0 and "--pool: needs the bootstrap" in bad.output
    bad = CliRunner().invoke(main, ["run", "--lists", "weat", "--pool", "all"])
    assert bad.exit_code != 0 and "--pool: must be some of lists, languages, layers" in bad.output


@pytest.mark.slow
def test_grid_pools_over_languages_and_adjusts_over_the_whole_grid(tmp_path: Path) -> None:
    from tests.grid_fixtures import make_grid
    from weatkit.grid import grid
    from weatkit.report.run_dir import read_run_dir
    from weatkit.stats.multiplicity import adjust_pvalues

    experiment = make_grid(
        tmp_path,
        pool=["lists", "languages"],
        embeddings=[{"name": "mono", "path": "mono.{lang}.vec"}],
    )
    result = grid(experiment, show_progress=False)
    tables = read_run_dir(tmp_path / "out")
    assert set(tables.pooled["level"]) == {"lists", "languages"}
    languages = tables.pooled[tables.pooled["level"] == "languages"]
    assert set(languages["units"]) == {"en de"} and (languages["k"] == 2).all()
    # the family of p_holm / q_bh is every test of the grid (both languages' jobs)
    p = result.results["p_value"].to_numpy(float)
    assert set(result.results["lang"]) == {"en", "de"}
    np.testing.assert_allclose(result.results["p_holm"], adjust_pvalues(p, "holm"))
    np.testing.assert_allclose(tables.results["q_bh"], adjust_pvalues(p, "fdr_bh"), rtol=1e-12)
