"""``weatkit run --metrics``: the association metrics on a run's tests (weatkit.association.query).

Each row of ``association.csv`` is the metric's public function on the sets the docs name (X, Y
the groups, A and B the words measured; RNSB's positive words A; SC-WEAT per target word), with
the run's bootstrap; RND's mapping is also checked against the plain loop of the tests. Pairs
come from list files; a test without them, or a metric that cannot take a test, is a one-line
skip naming both; bad input is a one-line error; the default run writes what it always did.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import weatkit
from tests import naive_association as naive
from weatkit.association.options import METRICS, AssociationOptions
from weatkit.association.sc_weat import sc_weat_words
from weatkit.cli import main
from weatkit.config.run import run_config_from_mapping, with_compat
from weatkit.config.schema import Source
from weatkit.engine.weat import EngineOptions
from weatkit.errors import ConfigError, WeatkitError
from weatkit.lists import Normalization, load_list_file, select_lists
from weatkit.pipeline import RunConfig, run
from weatkit.report.run_dir import read_run_dir
from weatkit.report.tables import ASSOCIATION_COLUMNS, ASSOCIATION_ITEM_COLUMNS

ENGINE = EngineOptions(n_bootstrap=40, n_permutations=60, max_exact=100, seed=3, device="cpu")
PAIRS = [list(p) for p in zip(naive.MALE[:5], naive.FEMALE[:5], strict=True)]
SETS = {
    "X": naive.OCCUPATIONS[:6],
    "Y": naive.OCCUPATIONS[6:],
    "A": naive.PLEASANT,
    "B": naive.UNPLEASANT,
}


def _list_file(tmp_path: Path, **changes: object) -> Path:
    test = {"test": "t1", "lang": "en", "list_id": "mine", **SETS, "pairs": PAIRS, **changes}
    test = {k: v for k, v in test.items() if v is not None}
    path = tmp_path / "lists.yaml"
    path.write_text(yaml.safe_dump({"tests": [test]}), encoding="utf-8")
    return path


def _run(path: Path, metrics: tuple[str, ...] = METRICS, **options: object) -> weatkit.RunResult:
    config = RunConfig(
        lists=(str(path),),
        embeddings=(naive.glove(),),
        metrics=metrics,
        engine=ENGINE,
        association=AssociationOptions(**options),  # type: ignore[arg-type]
    )
    return run(config, show_progress=False)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> weatkit.RunResult:
    return _run(_list_file(tmp_path_factory.mktemp("lists")))


def _row(result: weatkit.RunResult, metric: str, key: str, item: str = "") -> pd.Series:
    table = result.association
    found = table[(table["metric"] == metric) & (table["set"] == key) & (table["item"] == item)]
    assert len(found) == 1, (metric, key, item)
    return found.iloc[0]


def _same(row: pd.Series, res: object, statistic: float | None = None) -> None:
    ci = res.confidence_interval  # type: ignore[attr-defined]
    assert row["statistic"] == (res.statistic if statistic is None else statistic)  # type: ignore[attr-defined]
    assert (row["ci_low"], row["ci_high"]) == ci


PLAN = {"n_bootstrap": 40, "confidence_level": 0.95, "seed": 3}


def test_every_metric_takes_the_sets_the_docs_name(measured: weatkit.RunResult) -> None:
    wv, (x, y, a, b) = naive.glove(), SETS.values()
    pairs = [tuple(p) for p in PAIRS]
    for key, words in (("A", a), ("B", b)):
        _same(_row(measured, "rnd", key), weatkit.rnd(words, x, y, vectors=wv, **PLAN))
        ect = weatkit.ect([x, y], words, vectors=wv, **PLAN)
        _same(_row(measured, "ect", key), ect)
        assert _row(measured, "ect", key)["p_value"] == ect.pvalue
        direct = weatkit.direct_bias(words, pairs, vectors=wv, **PLAN)
        _same(_row(measured, "direct_bias", key), direct)
    ripa = weatkit.ripa({"A": a, "B": b}, pairs, vectors=wv, **PLAN)
    for key in ("A", "B"):
        row = _row(measured, "ripa", key)
        assert row["statistic"] == ripa.per_set[key]
        assert (row["ci_low"], row["ci_high"]) == ripa.per_set_ci[key]
        assert row["n_pairs"] == 5
    rnsb = weatkit.rnsb([x, y], b, a, vectors=wv, **{**PLAN, "n_bootstrap": 40})
    _same(_row(measured, "rnsb", "all"), rnsb)
    _same(_row(measured, "mac", "all"), weatkit.mac([x, y], [a, b], vectors=wv, **PLAN))
    one = weatkit.sc_weat(x[2], a, b, vectors=wv, n_permutations=60, max_exact=100, **PLAN)
    row = _row(measured, "sc_weat", "X", x[2])
    np.testing.assert_allclose(
        [row["statistic"], row["ci_low"], row["ci_high"]],
        [one.statistic, *one.confidence_interval],
        rtol=1e-12,
    )
    assert row["p_value"] == one.pvalue
    # the mapping against the plain loop: RND of A's words between the groups X and Y
    plain = naive.rnd(naive.rows(a), naive.rows(x), naive.rows(y))
    assert math.isclose(_row(measured, "rnd", "A")["statistic"], plain, rel_tol=1e-9)


def test_the_table_has_its_columns_and_counts(measured: weatkit.RunResult) -> None:
    table = measured.association
    assert list(table.columns) == ASSOCIATION_COLUMNS
    assert list(measured.association_items.columns) == ASSOCIATION_ITEM_COLUMNS
    counts = table.groupby("metric").size().to_dict()
    assert counts == {
        "rnd": 2, "ect": 2, "ripa": 2, "direct_bias": 2, "rnsb": 1, "mac": 1, "sc_weat": 12,
    }  # fmt: skip
    assert set(table["n_x"]) == {6} and set(table["n_b"]) == {8}
    assert set(table["n_bootstrap"]) == {40}
    assert table.loc[table["metric"] == "rnd", "p_value"].isna().all()
    assert len(measured.results) == 1  # weat too: the engine's row


def test_items_are_each_metrics_per_word_values(measured: weatkit.RunResult) -> None:
    items = measured.association_items
    wv, (x, y, a, b) = naive.glove(), SETS.values()
    ripa = weatkit.ripa({"A": a, "B": b}, [tuple(p) for p in PAIRS], vectors=wv, n_bootstrap=0)
    got = items[(items["metric"] == "ripa") & (items["set"] == "B")]
    assert dict(zip(got["item"], got["value"], strict=True)) == ripa.per_word["B"]
    rnsb = items[items["metric"] == "rnsb"]
    assert list(rnsb["item"]) == [*x, *y] and list(rnsb["set"]) == ["X"] * 6 + ["Y"] * 6
    ect = weatkit.ect({"X": x, "Y": y}, a, vectors=wv, n_bootstrap=0)
    for side, mean in enumerate("XY"):
        got = items[(items["metric"] == "ect") & (items["set"] == f"A:{mean}")]
        expected = {w: pair[side] for w, pair in ect.similarities.items()}
        assert dict(zip(got["item"], got["value"], strict=True)) == expected
    assert sorted(items["metric"].unique()) == ["direct_bias", "ect", "mac", "ripa", "rnd", "rnsb"]


def test_a_test_without_pairs_skips_ripa_and_direct_bias_in_one_line(tmp_path: Path) -> None:
    path = _list_file(tmp_path, pairs=None)
    result = _run(path, ("weat", "ripa", "direct_bias", "rnd"))
    assert sorted(result.association["metric"].unique()) == ["rnd"]
    reasons = [s["reason"] for s in result.skipped_metrics]
    assert reasons == [
        f"{m} on t1 ({path}, list mine, en) on {naive.glove().name}: no definitional pairs "
        "(give its list file a pairs section)"
        for m in ("ripa", "direct_bias")
    ]
    assert result.skipped == []  # the test itself ran


def test_pairs_out_of_the_vocabulary_are_left_out_or_skip(tmp_path: Path) -> None:
    result = _run(_list_file(tmp_path, pairs=[*PAIRS, ["zzqx", "he"]]), ("ripa",))
    assert set(result.association["n_pairs"]) == {5}  # 5 of 6: above min_coverage 0.8
    few = _run(_list_file(tmp_path, pairs=[PAIRS[0], ["zzqx", "he"]]), ("weat", "ripa"))
    assert few.association.empty
    (skip,) = few.skipped_metrics
    assert skip["cause"] == (
        "1 of 2 definitional pairs in the vocabulary (minimum coverage 80%; missing: zzqx-he)"
    )
    # ripa alone computes nothing: an error with the reason, not an empty run
    with pytest.raises(WeatkitError) as err:
        _run(_list_file(tmp_path, pairs=[PAIRS[0], ["zzqx", "he"]]), ("ripa",))
    assert str(err.value) == (
        "nothing computed: ripa on 1 test(s): 1 of 2 definitional pairs in the vocabulary "
        "(minimum coverage 80%; missing: zzqx-he)"
    )


def test_a_test_no_metric_could_measure_is_counted_as_skipped(tmp_path: Path) -> None:
    """t2 has no definitional pairs: ``--metrics ripa`` measures t1 only, and says so."""
    tests = [
        {"test": name, "lang": "en", "list_id": "mine", **SETS, **extra}
        for name, extra in (("t1", {"pairs": PAIRS}), ("t2", {}))
    ]
    path = tmp_path / "lists.yaml"
    path.write_text(yaml.safe_dump({"tests": tests}), encoding="utf-8")
    args = ["run", "--lists", str(path), "--metrics", "ripa", "--bootstrap", "20"]
    result = CliRunner().invoke(main, [*args, "--no-progress", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "skipped: ripa on 1 test(s): no definitional pairs" in result.stderr
    assert "1 test(s) run, 1 skipped, 1 metric result(s) not computed;" in result.stderr
    result = _run(path, ("ripa",))
    assert (result.n_tests_run, result.n_tests_skipped) == (1, 1)
    result = _run(path, ("weat", "ripa"))  # weat measured both
    assert (result.n_tests_run, result.n_tests_skipped) == (2, 0)


def test_a_metric_that_cannot_take_the_test_is_skipped_naming_both(tmp_path: Path) -> None:
    result = _run(_list_file(tmp_path, A=naive.PLEASANT[:2]), ("ect", "rnd"))
    assert list(result.association["metric"]) == ["ect", "rnd", "rnd"]  # ect on B only
    (skip,) = result.skipped_metrics
    assert skip["reason"].startswith("ect on t1 (")
    assert skip["reason"].endswith(", set A: attributes has 2 item(s); it needs at least 3")


def test_without_weat_the_engine_does_not_run(tmp_path: Path) -> None:
    result = _run(_list_file(tmp_path), ("mac",))
    assert result.results.empty and result.summary.empty
    assert list(result.association["metric"]) == ["mac"] and result.n_tests_run == 1
    with pytest.raises(ConfigError, match=r"^metrics: isomorphism needs WEAT's d: add weat"):
        RunConfig(metrics=("rnd",), isomorphism="de")
    RunConfig(metrics=("rnd",), pool=("lists",))  # the association metrics pool too


def test_wefe_compat_sets_the_association_options_and_given_ones_win() -> None:
    config = with_compat(RunConfig(compat="wefe", metrics=("weat", "rnd")), {"rnsb_holdout"})
    assert config.association == AssociationOptions(
        rnd_reduction="mean", rnd_normalize=False, rnsb_over="words", ripa_relation="mean"
    )
    line = config.compat_summary()["line"]
    assert "rnd_reduction=mean" in line and "given: rnsb_holdout=0.0 (preset: 0.2)" in line
    # without an association metric the line is the WEAT preset's alone
    assert "rnd" not in with_compat(RunConfig(compat="wefe")).compat_summary()["line"]


def test_a_file_and_the_command_line_build_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[RunConfig] = []

    def stop(config: RunConfig, **_: object) -> None:
        seen.append(config)
        raise WeatkitError("stopped")

    monkeypatch.setattr("weatkit.cli.run.run", stop)
    args = ["run", "--lists", "weat", "--metrics", "weat,rnd", "--metrics", "ripa"]
    args += ["--rnd-reduction", "mean", "--no-rnd-normalize", "--compat", "wefe", "--no-progress"]
    CliRunner().invoke(main, [*args, "--ripa-relation", "pca"])
    data = {
        "lists": ["weat"],
        "metrics": ["weat", "rnd", "ripa"],
        "compat": "wefe",
        "association": {"rnd_reduction": "mean", "rnd_normalize": False, "ripa_relation": "pca"},
    }
    from_file = run_config_from_mapping(data, Source("f.yaml"), tmp_path)
    assert seen == [from_file]
    assert from_file.association.ripa_relation == "pca"  # given: beats the preset
    assert from_file.association.rnsb_over == "words"  # the preset's


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--metrics", "weat,rnd,wefat"],
            "--metrics: unknown metric 'wefat': choose from weat, rnd, rnsb, mac, ect, ripa, "
            "sc_weat, direct_bias",
        ),
        (["--metrics", "rnd,rnd"], "--metrics: a metric is given twice: rnd, rnd"),
        (
            ["--metrics", ""],
            "--metrics: '' names nothing: give at least one, or leave --metrics out for its "
            "default",
        ),
        (["--metrics", ","], "--metrics: ',' names nothing: give at least one, or leave"),
        (
            ["--metrics", "ripa", "--test", "weat1"],
            "nothing computed: ripa on 1 test(s): no definitional pairs (give its list file a "
            "pairs section)",
        ),
        (["--rnsb-holdout", "1"], "--rnsb-holdout: must be a share in [0, 1), got 1.0"),
        (["--ripa-relation", "svd"], "--ripa-relation: must be one of pca, mean, got 'svd'"),
    ],
)
def test_bad_metrics_are_one_line_errors(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["run", "--lists", "weat", "--no-progress", *args])
    assert result.exit_code == 1
    assert result.stderr.strip().startswith(f"weatkit: error: {message}")
    assert len(result.stderr.strip().splitlines()) == 1 and not result.stdout


def test_the_cli_writes_the_tables_and_prints_the_skips(tmp_path: Path) -> None:
    path = _list_file(tmp_path, pairs=None)
    out = tmp_path / "run"
    args = ["run", "--lists", str(path), "--metrics", "weat,rnd,ripa", "--out", str(out)]
    args += ["--bootstrap", "20", "--permutations", "20", "--no-progress", "--device", "cpu"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "skipped: ripa on 1 test(s): no definitional pairs" in result.stderr
    assert "Association metrics" in result.stdout
    table = pd.read_csv(out / "association.csv")
    assert list(table.columns) == ASSOCIATION_COLUMNS and list(table["set"]) == ["A", "B"]
    assert (out / "association_items.csv").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["metrics"] == ["weat", "rnd", "ripa"]
    assert [s["metric"] for s in manifest["skipped_metrics"]] == ["ripa"]
    tables = read_run_dir(out)
    assert tables.association["statistic"].tolist() == table["statistic"].tolist()


def test_a_default_run_writes_no_association_table(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--lists", "weat", "--test", "weat1", "--out", str(out), "--bootstrap", "0"]
    result = CliRunner().invoke(main, [*args, "--permutations", "0", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.csv", "summary.csv"]
    assert "skipped_metrics" not in json.loads((out / "manifest.json").read_text())


# --- list files -------------------------------------------------------------------------------


def test_pairs_of_a_test_and_of_the_file(tmp_path: Path) -> None:
    tests = [
        {"test": "t1", "lang": "en", **SETS},
        {"test": "t2", "lang": "en", **SETS, "pairs": [["Woman ", "man"]]},
    ]
    path = tmp_path / "l.yaml"
    path.write_text(yaml.safe_dump({"tests": tests, "pairs": [["she", "he"]]}), encoding="utf-8")
    first, second = load_list_file(path)
    assert first.pairs == (("she", "he"),) and second.pairs == (("Woman ", "man"),)
    assert {"she", "he"} <= first.vocabulary()
    selected = select_lists([str(path)], normalization=Normalization(lower=True))
    assert selected.tests[1].pairs == (("woman", "man"),)


@pytest.mark.parametrize(
    ("pairs", "problem"),
    [
        ([], "tests[1].pairs must be a non-empty list of pairs [x, y], got list []"),
        ([["she"]], "tests[1].pairs[1] must be a pair of two words [x, y], got list ['she']"),
        ([["she", 3]], "tests[1].pairs[1][2] must be a non-empty string, got int 3"),
    ],
)
def test_bad_pairs_are_one_line_errors(tmp_path: Path, pairs: object, problem: str) -> None:
    path = tmp_path / "l.yaml"
    path.write_text(
        yaml.safe_dump({"tests": [{"test": "t", "lang": "en", **SETS, "pairs": pairs}]}),
        encoding="utf-8",
    )
    with pytest.raises(WeatkitError) as info:
        load_list_file(path)
    assert str(info.value).startswith(f"{path}: {problem}")


def test_weatkit_lists_says_what_each_metric_takes(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["lists", str(_list_file(tmp_path))])
    assert result.exit_code == 0, result.output
    assert (
        "metrics (weatkit run --metrics): weat, rnd, rnsb, mac, ect, sc_weat on every test; "
        "ripa, direct_bias need definitional pairs: 1 of 1 tests have them"
    ) in " ".join(result.stdout.split())


def test_sc_weat_words_gives_each_word_its_own_result() -> None:
    A, B = np.eye(4)[:2] + 0.1, np.eye(4)[2:] + 0.2
    W = np.array([[1.0, 0.2, 0.1, 0.0], [0.0, 0.1, 1.0, 0.3]])
    many = sc_weat_words(W, A, B, n_bootstrap=30, seed=1)
    for i, w in enumerate(W):
        one = weatkit.sc_weat(w, A, B, n_bootstrap=30, seed=1)
        assert many[str(i)].pvalue == one.pvalue
        assert math.isclose(many[str(i)].statistic, one.statistic, rel_tol=1e-12)
        np.testing.assert_allclose(
            many[str(i)].bootstrap_statistic, one.bootstrap_statistic, rtol=1e-12
        )


def test_the_declarations_are_the_dataclasses_own() -> None:
    from dataclasses import fields

    from weatkit.config import schema

    assert {o.name for o in schema.ASSOCIATION.options} == {
        f.name for f in fields(AssociationOptions)
    }
    for option in schema.ASSOCIATION.options:
        assert option.default == getattr(AssociationOptions(), option.name), option.name
    assert schema.METRICS["metrics"].default == RunConfig().metrics == ("weat",)
    from weatkit.association.options import COMPAT

    flagged = {o.name for o in schema.ASSOCIATION.options if o.flag}
    assert set(COMPAT["wefe"]) <= flagged


def test_the_registry_says_what_each_metric_takes() -> None:
    from weatkit.association.options import measure_name
    from weatkit.measures.registry import get_measure

    for metric in METRICS:
        assert get_measure(measure_name(metric)).accepts.startswith("a test")
    assert "definitional pairs" in get_measure("ripa").accepts
    assert get_measure("wefat").accepts == ""  # a property per word: not a run's metric
