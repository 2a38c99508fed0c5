"""``--influence``, ``--null`` and ``--pool`` for the association metrics (weatkit.association.
influence, weatkit.association.null, weatkit.report.tables.association_pooled_frame).

Each is checked against the plain implementation: the metric's public function on the lists with
one word left out (influence), on every draw of the null plan WEAT uses, rebuilt here from the
seed and the set sizes (null), and DerSimonian–Laird written out by hand (pooling). Options a
metric cannot take are a one-line error naming both when no metric of the run takes them, and
a report line otherwise.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import weatkit
from tests import naive_association as naive
from weatkit.association.direct_bias import direct_bias
from weatkit.association.ect import ect
from weatkit.association.influence import rnd_influence
from weatkit.association.mac import mac
from weatkit.association.options import METRICS, AssociationOptions
from weatkit.association.query import Query
from weatkit.association.ripa import ripa
from weatkit.association.rnd import rnd
from weatkit.association.rnsb import rnsb
from weatkit.association.sc_weat import sc_weat
from weatkit.cli import main
from weatkit.engine.null import N_CANDIDATES, candidates_from_words, draw_null, summarize_null
from weatkit.engine.weat import EngineOptions, weat
from weatkit.errors import ConfigError
from weatkit.pipeline import RunConfig, run
from weatkit.report.run_dir import read_run_dir
from weatkit.report.tables import (
    ASSOCIATION_INFLUENCE_COLUMNS,
    ASSOCIATION_POOLED_COLUMNS,
    association_pooled_frame,
)

K = 12
ENGINE = EngineOptions(
    n_bootstrap=30, n_permutations=0, seed=5, device="cpu", influence=True, null=K
)
PAIRS = [(m, f) for m, f in zip(naive.MALE[:5], naive.FEMALE[:5], strict=True)]
SETS = {
    "X": naive.OCCUPATIONS[:5],
    "Y": naive.OCCUPATIONS[5:10],
    "A": naive.PLEASANT[:6],
    "B": naive.UNPLEASANT[:6],
}


def _list_file(tmp_path: Path, lists: dict[str, dict[str, list[str]]]) -> Path:
    tests = [
        {"test": "t1", "lang": "en", "list_id": list_id, **sets, "pairs": [list(p) for p in PAIRS]}
        for list_id, sets in lists.items()
    ]
    path = tmp_path / "lists.yaml"
    path.write_text(yaml.safe_dump({"tests": tests}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> weatkit.RunResult:
    path = _list_file(tmp_path_factory.mktemp("lists"), {"mine": SETS})
    config = RunConfig(lists=(str(path),), metrics=METRICS, engine=ENGINE)
    return run(config, show_progress=False)


def _without(words: list[str], word: str) -> list[str]:
    return [w for w in words if w != word]


def _influence(result: weatkit.RunResult, metric: str, row_set: str, row_item: str = "") -> dict:
    table = result.association_influence
    rows = table[
        (table["metric"] == metric)
        & (table["row_set"] == row_set)
        & (table["row_item"] == row_item)
    ]
    return {(r.set, r.item): r.statistic_without for r in rows.itertuples()}


def _loop(sets: dict[str, list[str]], keys: str, metric) -> dict[tuple[str, str], float]:
    """``metric(sets)`` with every word of the sets ``keys`` left out in turn (pairs: ``P``)."""
    out = {}
    for key in keys:
        words = PAIRS if key == "P" else sets[key]
        for word in words:
            reduced = {**sets, key: [w for w in words if w != word]}
            name = f"{word[0]}-{word[1]}" if key == "P" else word
            out[("pairs" if key == "P" else key, name)] = metric(reduced)
    return out


def _close(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


def test_influence_is_each_metric_on_the_lists_without_the_word(
    measured: weatkit.RunResult,
) -> None:
    wv, opts = naive.glove(), AssociationOptions()
    seed = ENGINE.seed
    s = {k: list(v) for k, v in SETS.items()}
    pairs = {"P": PAIRS}

    def with_pairs(reduced: dict) -> list:
        return reduced.get("P", PAIRS)

    for key in "AB":
        _close(
            _influence(measured, "rnd", key),
            _loop(
                s,
                f"{key}XY",
                lambda r, k=key: rnd(r[k], r["X"], r["Y"], vectors=wv, n_bootstrap=0).statistic,
            ),
        )
        _close(
            _influence(measured, "ect", key),
            _loop(
                s,
                f"XY{key}",
                lambda r, k=key: ect([r["X"], r["Y"]], r[k], vectors=wv, n_bootstrap=0).statistic,
            ),
        )
        _close(
            _influence(measured, "ripa", key),
            _loop(
                {**s, **pairs},
                f"{key}P",
                lambda r, k=key: ripa(
                    {"A": r["A"], "B": r["B"]}, with_pairs(r), vectors=wv, n_bootstrap=0
                ).per_set[k],
            ),
        )
        _close(
            _influence(measured, "direct_bias", key),
            _loop(
                {**s, **pairs},
                f"{key}P",
                lambda r, k=key: (
                    direct_bias(r[k], with_pairs(r), vectors=wv, n_bootstrap=0).statistic
                ),
            ),
        )
    _close(
        _influence(measured, "mac", "all"),
        _loop(
            s,
            "XYAB",
            lambda r: mac([r["X"], r["Y"]], [r["A"], r["B"]], vectors=wv, n_bootstrap=0).statistic,
        ),
    )
    _close(  # a word of A or B: the classifier trained without it
        _influence(measured, "rnsb", "all"),
        _loop(
            s,
            "XYAB",
            lambda r: (
                rnsb(
                    [r["X"], r["Y"]],
                    r["B"],
                    r["A"],
                    vectors=wv,
                    over=opts.rnsb_over,
                    n_bootstrap=0,
                    seed=seed,
                ).statistic
            ),
        ),
    )
    for key in "XY":
        for word in s[key]:
            _close(
                _influence(measured, "sc_weat", key, word),
                _loop(
                    s,
                    "AB",
                    lambda r, w=word: (
                        sc_weat(
                            w, r["A"], r["B"], vectors=wv, n_permutations=0, n_bootstrap=0
                        ).statistic
                    ),
                ),
            )
    table = measured.association_influence
    assert list(table.columns) == ASSOCIATION_INFLUENCE_COLUMNS
    joined = table.merge(
        measured.association.rename(columns={"set": "row_set", "item": "row_item"}),
        on=["metric", "row_set", "row_item"],
    )
    assert np.allclose(joined["delta"], joined["statistic_without"] - joined["statistic"])


def test_rnd_averaged_divides_by_the_words_left() -> None:
    """reduction="mean": θ without a word of A is the mean over the words left (n − 1)."""
    wv = naive.glove()
    query = Query("t", {k: tuple(v) for k, v in SETS.items()}, (), wv)
    rows = rnd_influence(query, "A", AssociationOptions(rnd_reduction="mean"))
    got = {(r["set"], r["item"]): r["statistic_without"] for r in rows}
    s = {k: list(v) for k, v in SETS.items()}
    expected = _loop(
        s,
        "AXY",
        lambda r: naive.rnd(
            naive.rows(r["A"]), naive.rows(r["X"]), naive.rows(r["Y"]), reduction="mean"
        ),
    )
    _close(got, expected)


def test_a_word_alone_in_its_set_has_no_influence() -> None:
    sets = {**{k: tuple(v) for k, v in SETS.items()}, "A": ("love",)}
    rows = rnd_influence(Query("t", sets, (), naive.glove()), "A", AssociationOptions())
    assert [math.isnan(r["statistic_without"]) for r in rows if r["set"] == "A"] == [True]
    assert not any(math.isnan(r["statistic_without"]) for r in rows if r["set"] != "A")


def test_the_null_is_each_metric_on_the_draws_of_weats_null(measured: weatkit.RunResult) -> None:
    """The plan rebuilt from the seed and the sizes gives the run's null d's, and each metric's
    null summary is that of the metric's public function looped over the same draws."""
    vocabulary = {w for words in SETS.values() for w in words} | {w for p in PAIRS for w in p}
    space = weatkit.load_vectors(first_n=N_CANDIDATES, words=sorted(vocabulary))
    candidates = candidates_from_words(space.words, "en")
    plan = draw_null(candidates, SETS, K, seed=ENGINE.seed).plan
    draws = [
        ([candidates.words[i] for i in row[:5]], [candidates.words[i] for i in row[5:]])
        for row in plan
    ]
    null_d = [
        weat(
            *(space.lookup(w) for w in (x, y, SETS["A"], SETS["B"])),
            n_bootstrap=0,
            n_permutations=0,
            device="cpu",
        ).effect_size
        for x, y in draws
    ]
    assert np.allclose(measured.null["d"], null_d, rtol=1e-6)

    def expect(metric: str, key: str, values: list[float], item: str = "") -> None:
        table = measured.association
        row = table[(table.metric == metric) & (table.set == key) & (table.item == item)].iloc[0]
        summary = summarize_null(np.array(values), row["statistic"], ENGINE.alternative)
        got = row[["null_mean", "null_sd", "null_percentile", "p_null", "null_k"]].tolist()
        assert got == pytest.approx(list(summary.columns().values()), rel=1e-9), (metric, key)

    boot = {"vectors": space, "n_bootstrap": 0}
    for key in "AB":
        expect("rnd", key, [rnd(SETS[key], x, y, **boot).statistic for x, y in draws])
        expect("ect", key, [ect([x, y], SETS[key], **boot).statistic for x, y in draws])
    expect("mac", "all", [mac([x, y], [SETS["A"], SETS["B"]], **boot).statistic for x, y in draws])
    expect(
        "rnsb",
        "all",
        [rnsb([x, y], SETS["B"], SETS["A"], seed=ENGINE.seed, **boot).statistic for x, y in draws],
    )
    for key, offset in (("X", 0), ("Y", 5)):
        for j, word in enumerate(SETS[key]):
            drawn = [(x + y)[offset + j] for x, y in draws]
            expect(
                "sc_weat",
                key,
                [
                    sc_weat(w, SETS["A"], SETS["B"], n_permutations=0, **boot).statistic
                    for w in drawn
                ],
                item=word,
            )
    no_null = measured.association[measured.association.metric.isin(["ripa", "direct_bias"])]
    assert no_null["null_k"].isna().all() and no_null["p_null"].isna().all()
    assert (
        "null: not for ripa: its statistic reads A, B and the pairs, not the X and Y that "
        "the null replaces" in measured.report
    )


def _dersimonian_laird(theta: list[float], se: list[float]) -> tuple[float, float, float]:
    """The pooled estimate, its SE and τ², written out."""
    v = [s * s for s in se]
    w = [1 / x for x in v]
    mean = sum(wi * t for wi, t in zip(w, theta, strict=True)) / sum(w)
    q = sum(wi * (t - mean) ** 2 for wi, t in zip(w, theta, strict=True))
    c = sum(w) - sum(wi * wi for wi in w) / sum(w)
    tau2 = max(0.0, (q - (len(theta) - 1)) / c)
    w_star = [1 / (x + tau2) for x in v]
    estimate = sum(wi * t for wi, t in zip(w_star, theta, strict=True)) / sum(w_star)
    return estimate, 1 / math.sqrt(sum(w_star)), tau2


def test_pooling_is_dersimonian_laird_per_metric_and_set() -> None:
    keys = {"embeddings": "e", "list_set": "s", "test": "t1"}
    rows = []
    values = {  # (lang, list) -> (rnd A, rnd B, mac all, sc_weat X word)
        ("en", "1"): (0.5, -0.2, 0.8, 1.0),
        ("en", "2"): (0.1, -0.4, 0.7, 2.0),
        ("en", "3"): (0.9, 0.3, 0.75, 3.0),
        ("de", "1"): (0.2, 0.1, 0.9, 4.0),
    }
    ses = {"rnd": (0.2, 0.3, 0.25, 0.4), "mac": (0.05, 0.02, 0.04, 0.03)}
    for i, ((lang, list_id), (ra, rb, m, sc)) in enumerate(values.items()):
        base = {**keys, "lang": lang, "list_id": list_id, "item": ""}
        rows += [
            {**base, "metric": "rnd", "set": "A", "statistic": ra, "se": ses["rnd"][i]},
            {**base, "metric": "rnd", "set": "B", "statistic": rb, "se": ses["rnd"][i] * 2},
            {**base, "metric": "mac", "set": "all", "statistic": m, "se": ses["mac"][i]},
            {**base, "metric": "sc_weat", "set": "X", "item": "w", "statistic": sc, "se": 0.1},
        ]
    table = association_pooled_frame(pd.DataFrame(rows), ("lists", "languages"))
    assert list(table.columns) == ASSOCIATION_POOLED_COLUMNS
    assert "sc_weat" not in set(table["metric"])
    got = table.set_index(["level", "lang", "metric", "set"])
    en = [k for k in values if k[0] == "en"]
    for metric, key, col, scale in (("rnd", "A", 0, 1), ("rnd", "B", 1, 2), ("mac", "all", 2, 1)):
        theta = [values[k][col] for k in en]
        se = [ses[metric][i] * scale for i in range(3)]
        estimate, se_star, tau2 = _dersimonian_laird(theta, se)
        row = got.loc[("lists", "en", metric, key)]
        assert (row["statistic"], row["se"], row["tau2"]) == pytest.approx(
            (estimate, se_star, tau2)
        )
        assert row["k"] == 3 and row["units"] == "1 2 3"
        # languages: en enters pooled over its lists, de with its one list
        estimate2, _, _ = _dersimonian_laird(
            [estimate, values[("de", "1")][col]], [se_star, ses[metric][3] * scale]
        )
        lang_row = table[
            (table.level == "languages") & (table.metric == metric) & (table.set == key)
        ]
        assert lang_row["statistic"].item() == pytest.approx(estimate2)
        assert lang_row["units"].item() == "en de"


def test_a_run_pools_each_metric_over_its_lists(tmp_path: Path) -> None:
    lists = {
        "one": SETS,
        "two": {**SETS, "X": naive.OCCUPATIONS[2:7], "A": naive.PLEASANT[2:8]},
    }
    path = _list_file(tmp_path, lists)
    engine = EngineOptions(n_bootstrap=30, n_permutations=0, seed=1, device="cpu")
    config = RunConfig(lists=(str(path),), metrics=METRICS, engine=engine, pool=("lists",))
    result = run(config, show_progress=False)
    assoc = result.association[result.association.metric != "sc_weat"]
    expected = association_pooled_frame(assoc, ("lists",), engine.confidence_level)
    pd.testing.assert_frame_equal(result.association_pooled, expected)
    assert sorted(set(result.association_pooled["metric"])) == [
        "direct_bias",
        "ect",
        "mac",
        "ripa",
        "rnd",
        "rnsb",
    ]
    ripa_a = assoc[(assoc.metric == "ripa") & (assoc.set == "A")]
    theta, se = ripa_a["statistic"].tolist(), ripa_a["se"].tolist()
    pooled = result.association_pooled.set_index(["metric", "set"]).loc[("ripa", "A")]
    assert pooled["statistic"] == pytest.approx(_dersimonian_laird(theta, se)[0])
    assert (
        "pool: not for sc_weat: its rows are words, which differ from one list or language "
        "to another" in result.report
    )


def test_the_bootstrap_se_is_the_sd_of_the_resamples() -> None:
    res = rnd(SETS["A"], SETS["X"], SETS["Y"], vectors=naive.glove(), n_bootstrap=50, seed=2)
    assert res.bootstrap_statistic is not None
    from weatkit.association._common import standard_error

    assert standard_error(res.bootstrap_statistic) == pytest.approx(
        float(np.std(res.bootstrap_statistic, ddof=1))
    )


@pytest.mark.parametrize(
    ("metrics", "option", "message"),
    [
        (
            ("ripa", "direct_bias"),
            {"engine": EngineOptions(null=10)},
            "null: not for ripa: its statistic reads A, B and the pairs, not the X "
            "and Y that the null replaces (metrics that take it: weat, rnd, rnsb, mac, ect, "
            "sc_weat)",
        ),
        (
            ("sc_weat",),
            {"pool": ("lists",)},
            "pool: not for sc_weat: its rows are words, which differ from one list or "
            "language to another (metrics that take it: weat, rnd, rnsb, mac, ect, ripa, "
            "direct_bias)",
        ),
        (("rnd",), {"isomorphism": "de"}, "metrics: isomorphism needs WEAT's d: add weat to them"),
    ],
)
def test_an_option_no_metric_of_the_run_takes_is_a_one_line_error(
    metrics: tuple[str, ...], option: dict, message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        RunConfig(metrics=metrics, **option)
    assert str(err.value) == message


def test_with_weat_an_option_no_association_metric_takes_is_a_report_line(tmp_path: Path) -> None:
    path = _list_file(tmp_path, {"mine": SETS})
    engine = EngineOptions(n_bootstrap=0, n_permutations=0, null=5, device="cpu")
    result = run(RunConfig(lists=(str(path),), metrics=("weat", "ripa"), engine=engine))
    assert result.null["d"].notna().all() and result.association["null_k"].isna().all()
    assert [line for line in result.report if line.startswith("null:")] == [
        "null: not for ripa: its statistic reads A, B and the pairs, not the X and Y that the "
        "null replaces"
    ]


def test_the_cli_writes_the_association_robustness_tables(tmp_path: Path) -> None:
    lists = {"one": SETS, "two": {**SETS, "Y": naive.OCCUPATIONS[7:12]}}
    path = _list_file(tmp_path, lists)
    out = tmp_path / "run"
    args = ["run", "--lists", str(path), "--metrics", "rnd,mac,ripa", "--influence", "--null",
            "8", "--pool", "lists", "--bootstrap", "20", "--no-progress", "--device", "cpu",
            "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "null: not for ripa" in result.stderr
    tables = read_run_dir(out)
    assert list(tables.association_influence.columns) == ASSOCIATION_INFLUENCE_COLUMNS
    assert set(tables.association_influence["metric"]) == {"rnd", "mac", "ripa"}
    assert tables.association.loc[tables.association.metric == "mac", "null_k"].tolist() == [8, 8]
    assert list(tables.association_pooled.columns) == ASSOCIATION_POOLED_COLUMNS
    assert len(tables.association_pooled) == 5  # rnd A, B; mac; ripa A, B
    assert not (out / "null.csv").exists() or tables.null.empty  # no weat: no null d's
    bad = CliRunner().invoke(main, ["run", "--metrics", "ripa", "--null", "5"])
    assert bad.exit_code != 0
    assert bad.stderr.strip().splitlines() == [
        "weatkit: error: null: not for ripa: its statistic reads A, B and the pairs, not the X "
        "and Y that the null replaces (metrics that take it: weat, rnd, rnsb, mac, ect, sc_weat)"
    ]


def test_a_draw_with_a_word_without_a_vector_is_nan_and_the_others_are_unchanged() -> None:
    from weatkit.association import null
    from weatkit.engine.null import NullSample

    wv = naive.glove()
    query = Query("t", {k: tuple(v) for k, v in SETS.items()}, (), wv)
    pool = [*naive.MALE, *naive.FEMALE]
    table = wv.lookup(pool)
    rng = np.random.default_rng(0)
    rows = np.array([rng.permutation(len(pool))[:10] for _ in range(6)])
    full = NullSample(table, rows, 5)
    holed = NullSample(table, rows.copy(), 5)
    holed.rows[2, 3] = -1
    opts, engine = AssociationOptions(), ENGINE
    for compute in (
        lambda s: null.rnd_null(s, query, "A", opts),
        lambda s: null.ect_null(s, query, "B"),
        lambda s: null.mac_null(s, query),
        lambda s: null.rnsb_null(s, query, opts, engine),
        lambda s: null.sc_weat_null(s, query, engine)[("Y", SETS["Y"][0])],
    ):
        a, b = compute(full), compute(holed)
        assert np.isnan(b[2]) and not np.isnan(a).any()
        assert np.allclose(np.delete(a, 2), np.delete(b, 2), rtol=1e-12)


def test_an_rnsb_refit_whose_holdout_cannot_split_is_undefined() -> None:
    """6 attribute words hold out 2 (one per class); without one of them 5 hold out 1, fewer
    than the classes: that refit is undefined, the target words' values are not."""
    from weatkit.association.influence import rnsb_influence

    sets = {**{k: tuple(v) for k, v in SETS.items()}, "A": ("love", "peace", "joy")}
    sets["B"] = ("hate", "war", "pain")
    options = AssociationOptions(rnsb_holdout=0.2)
    rows = rnsb_influence(Query("t", sets, (), naive.glove()), options, ENGINE)
    undefined = {r["set"] for r in rows if math.isnan(r["statistic_without"])}
    assert undefined == {"A", "B"}
