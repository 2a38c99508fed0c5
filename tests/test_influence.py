"""Jackknife influence of every item on d, and the sign stability of d, against plain loops.

The reference here is the textbook WEAT (Caliskan et al. 2017) written out in this file:
s(w, A, B) = mean_a cos(w, a) − mean_b cos(w, b); d = (mean_X s − mean_Y s) / std_{X∪Y} s,
recomputed from the raw vectors for every left-out item (or every bootstrap resample).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import weatkit
from tests.grid_fixtures import LANGS as GRID_LANGS
from tests.grid_fixtures import make_grid
from weatkit.cli import main
from weatkit.embeddings.default import default_files
from weatkit.engine.weat import EngineOptions, WeatInput, run_weat
from weatkit.errors import ConfigError, WeatkitError
from weatkit.grid import load_grid_config, run_grid
from weatkit.report.influence_plot import MAX_ITEMS, influence_plot
from weatkit.report.run_dir import read_run_dir
from weatkit.report.tables import INFLUENCE_COLUMNS
from weatkit.stats.resampling import bootstrap_indices

FAST = ["--bootstrap", "100", "--permutations", "100", "--no-progress", "--device", "cpu"]


def textbook_d(X, Y, A, B, ddof: int = 1, sim: str = "cosine") -> float:
    def similarity(W, V):
        if sim == "cosine":
            return (W @ V.T) / np.outer(np.linalg.norm(W, axis=1), np.linalg.norm(V, axis=1))
        Wu = W / np.linalg.norm(W, axis=1, keepdims=True)
        Vu = V / np.linalg.norm(V, axis=1, keepdims=True)
        return 1.0 / (1.0 + np.linalg.norm(Wu[:, None, :] - Vu[None, :, :], axis=2))

    def s(W):
        return similarity(W, A).mean(axis=1) - similarity(W, B).mean(axis=1)

    sx, sy = s(X), s(Y)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=ddof))


def loop_influence(X, Y, A, B, ddof: int = 1, sim: str = "cosine") -> dict[str, list[float]]:
    """d with each item left out, one item at a time."""
    out: dict[str, list[float]] = {}
    for j, key in enumerate("XYAB"):
        values = []
        for i in range(len((X, Y, A, B)[j])):
            sets = [X, Y, A, B]
            sets[j] = np.delete(sets[j], i, axis=0)
            values.append(textbook_d(*sets, ddof=ddof, sim=sim))
        out[key] = values
    return out


def random_sets(seed: int, sizes=(6, 5, 4, 7), dim: int = 10):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, dim)) for n in sizes]


@pytest.mark.parametrize(("ddof", "metric"), [(0, "cosine"), (1, "cosine"), (1, "euclidean")])
def test_influence_equals_leaving_each_item_out_by_hand(ddof: int, metric: str) -> None:
    X, Y, A, B = random_sets(ddof + 3)
    table = weatkit.influence(X, Y, A, B, ddof=ddof, metric=metric)
    d = textbook_d(X, Y, A, B, ddof, metric)
    expected = loop_influence(X, Y, A, B, ddof, metric)
    assert list(table.columns) == ["set", "item", "d_without", "delta"]
    assert table["set"].tolist() == [k for k in "XYAB" for _ in expected[k]]
    want = np.concatenate([expected[k] for k in "XYAB"])
    np.testing.assert_allclose(table["d_without"], want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(table["delta"], want - d, rtol=0, atol=1e-12)
    assert np.ptp(want) > 0.05  # the items do differ in influence


def test_d_without_is_the_engines_d_on_the_reduced_lists() -> None:
    X, Y, A, B = random_sets(7, sizes=(5, 5, 6, 6))
    res = weatkit.weat(X, Y, A, B, ddof=0, n_bootstrap=0, n_permutations=0, influence=True)
    reduced = [
        WeatInput(*[np.delete(s, 2, axis=0) if k == j else s for k, s in enumerate((X, Y, A, B))])
        for j in range(4)
    ]
    direct = run_weat(reduced, EngineOptions(ddof=0, n_bootstrap=0, n_permutations=0))
    for j, key in enumerate("XYAB"):
        assert res.influence[key][2] == pytest.approx(direct[j].effect_size, abs=1e-12)


def test_undefined_leave_one_out_is_nan_not_an_error() -> None:
    X, Y, A, B = random_sets(1, sizes=(1, 1, 1, 2))
    table = weatkit.influence(X, Y, A, B, ddof=0)  # d itself is defined (n_x + n_y > ddof)
    nan = table["d_without"].isna()
    # X, Y: the set would be empty; A: its only item; B: two items, one left is fine
    assert nan.tolist() == [True, True, True, False, False]
    with_ddof1 = weatkit.influence(*random_sets(2, sizes=(1, 2, 3, 3)), ddof=1)
    # leaving Y's item out leaves 2 targets: defined; X's only item: empty set
    assert with_ddof1["d_without"].isna().tolist() == [True] + [False] * 8


def test_items_name_the_rows_and_a_wrong_count_is_one_error() -> None:
    X, Y, A, B = random_sets(0, sizes=(2, 2, 2, 2))
    names = {"X": ["a", "b"], "A": ["c", "d"]}
    table = weatkit.influence(X, Y, A, B, items=names)
    assert table["item"].tolist() == ["a", "b", "0", "1", "c", "d", "0", "1"]
    with pytest.raises(WeatkitError, match=r"items\['X'\]: expected 2 names"):
        weatkit.influence(X, Y, A, B, items={"X": ["a"]})


def test_influence_is_refused_with_csls() -> None:
    with pytest.raises(ConfigError, match="not csls"):
        weatkit.weat(*random_sets(0), metric="csls", influence=True)
    result = CliRunner().invoke(main, ["run", "--influence", "--metric", "csls", *FAST])
    assert result.exit_code != 0
    assert "--influence: needs a metric" in result.output


def test_sign_stability_is_the_share_of_resamples_with_the_observed_sign() -> None:
    X, Y, A, B = random_sets(11, sizes=(5, 4, 4, 5))
    n_boot, seed = 300, 5
    res = weatkit.weat(X, Y, A, B, n_bootstrap=n_boot, n_permutations=0, seed=seed)
    idx = bootstrap_indices((5, 4, 4, 5), n_boot, seed)
    signs = []
    for r in range(n_boot):
        d_r = textbook_d(X[idx["X"][r]], Y[idx["Y"][r]], A[idx["A"][r]], B[idx["B"][r]])
        signs.append(np.sign(d_r))
    expected = np.mean(np.array(signs) == np.sign(textbook_d(X, Y, A, B)))
    assert 0.5 < expected < 1.0  # a case where the share is neither trivial nor total
    assert res.sign_stability == pytest.approx(expected, abs=1e-12)
    assert weatkit.weat(X, Y, A, B, n_bootstrap=0).sign_stability is None


@pytest.fixture(scope="module")
def glove_rows() -> dict[str, np.ndarray]:
    """GloVe 6B 50d rows read straight from the package files (not through the loader)."""
    matrix_path, index_path = default_files()
    words = pd.read_parquet(index_path).iloc[:, 0].tolist()
    matrix = np.load(matrix_path, mmap_mode="r")
    return {w: i for i, w in enumerate(words)}, matrix


def test_influence_on_glove_weat1_equals_the_loop(glove_rows) -> None:
    config = weatkit.RunConfig(
        lists=("weat",),
        langs=("en",),
        tests=("weat1",),
        engine=EngineOptions(n_bootstrap=0, n_permutations=0, influence=True),
    )
    out = weatkit.run(config, show_progress=False)
    table = out.influence
    assert list(table.columns) == INFLUENCE_COLUMNS and len(table) == 99  # gladiola is OOV
    index, matrix = glove_rows
    sets = [
        np.asarray([matrix[index[w]] for w in table.loc[table["set"] == k, "item"]], float)
        for k in "XYAB"
    ]
    d = textbook_d(*sets)
    assert out.results["effect_size"].iloc[0] == pytest.approx(d, abs=1e-9)
    want = np.concatenate(list(loop_influence(*sets).values()))
    np.testing.assert_allclose(table["d_without"], want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(table["delta"], want - d, rtol=0, atol=1e-9)


def test_cli_writes_influence_csv_and_prints_the_top_items(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--lists", "weat", "--lang", "en", "--influence", "--out", str(out), *FAST]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "influence.csv")
    assert list(table.columns) == INFLUENCE_COLUMNS
    results = pd.read_csv(out / "results.csv")
    assert results["sign_stability"].between(0.5, 1).all()
    merged = table.merge(results[["test", "effect_size"]], on="test")
    np.testing.assert_allclose(merged["delta"], merged["d_without"] - merged["effect_size"])
    printed = re.findall(r"^influence glove-6b-50d en weat weat (\w+): (.*)$", result.stderr, re.M)
    assert [test for test, _ in printed] == ["weat1", "weat2"]
    for test, items in printed:
        rows = table[table["test"] == test]
        top = rows.loc[rows["delta"].abs().sort_values(ascending=False).index[:3]]
        shown = top[["set", "item", "delta"]].itertuples(index=False)
        assert items == ", ".join(f"{s}:{i} {d:+.3f}" for s, i, d in shown)
    assert read_run_dir(out).influence.shape == table.shape

    fig = influence_plot(read_run_dir(out), tests=["weat2"])
    bars = sorted(p.get_width() for p in fig.axes[0].patches)
    want = table[table["test"] == "weat2"]["delta"]
    assert bars == pytest.approx(sorted(want.loc[want.abs().nlargest(MAX_ITEMS).index]))
    png = tmp_path / "influence.png"
    result = CliRunner().invoke(main, ["plot", str(out), "--kind", "influence", "--out", str(png)])
    assert result.exit_code == 0 and png.read_bytes()[:4] == b"\x89PNG"


def test_cli_prints_the_first_ten_tests_and_counts_the_rest(capsys) -> None:
    """A grid has thousands of tests: ten are printed, in their order, and the rest counted."""
    from weatkit.cli.run import _print_influence

    rows = [
        ("e", "en", "s", f"l{t:02d}", "weat1", key, f"w{i}", 0.5, delta)
        for t in range(13)
        for i, (key, delta) in enumerate([("X", 0.01 * t), ("A", -0.2), ("B", np.nan)])
    ]
    _print_influence(pd.DataFrame(rows, columns=INFLUENCE_COLUMNS), "influence.csv")
    err = capsys.readouterr().err
    printed = re.findall(r"^influence e en s (l\d\d) weat1: (.*)$", err, re.M)
    assert [lid for lid, _ in printed] == [f"l{t:02d}" for t in range(10)]
    assert printed[3][1] == "A:w1 -0.200, X:w0 +0.030"
    assert "influence: 3 more test(s); influence.csv has every item" in err


def test_cli_small_sets_give_nan_and_a_plain_run(tmp_path: Path) -> None:
    lists = tmp_path / "tiny.yaml"
    lists.write_text(
        "tests:\n- {test: t1, lang: en, X: [rose, tulip], Y: [spider], A: [love], "
        "B: [hate, ugly]}\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    args = ["run", "--lists", str(lists), "--influence", "--out", str(out), *FAST]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "influence.csv")
    assert table["d_without"].isna().tolist() == [False, False, True, True, False, False]
    (line,) = re.findall(r"^influence .*$", result.stderr, re.M)[:1]
    assert "Y:spider" not in line and "A:love" not in line  # undefined: not among the top
    args = ["run", "--lists", str(lists), "--table", "influence", "--format", "csv", *FAST]
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == 1 and "--table influence needs --influence" in plain.output


def test_grid_file_accepts_influence_and_writes_the_runs_table(tmp_path: Path) -> None:
    engine = {"n_bootstrap": 50, "n_permutations": 50, "seed": 3, "influence": True}
    path = make_grid(tmp_path, engine=engine)
    config = load_grid_config(path)
    assert config.run.engine.influence
    result = run_grid(config, show_progress=False)
    direct = weatkit.run(
        replace(config.run, embeddings=tuple(s.spec for s in config.sources), langs=GRID_LANGS),
        show_progress=False,
    )
    key = [*INFLUENCE_COLUMNS[:5], "set", "item"]
    got = result.influence.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, direct.influence.sort_values(key).reset_index(drop=True))
    written = pd.read_csv(config.output / "influence.csv", dtype={"list_id": str})
    assert list(written.columns) == INFLUENCE_COLUMNS and len(written) == len(got) > 0
