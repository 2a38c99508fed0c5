"""``weatkit plot RUN --kind ripa|rnd|direct_bias|mac|sc_weat|rnsb|ect``: the association
metrics' figures write non-empty PNG and SVG files, draw the numbers of the run's tables (every
bar a word's value; RNSB's bars the distribution ``weatkit.rnsb`` gives over the target sets;
ECT's points the similarities ``weatkit.ect`` gives, with its ρ and p), and refuse a run without
the metric in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

import weatkit
from tests import naive_association as naive
from weatkit.cli import main
from weatkit.errors import WeatkitError
from weatkit.report.association_plot import ASSOCIATION_PLOTS
from weatkit.report.plots import plot
from weatkit.report.run_dir import read_run_dir

SETS = {"X": naive.MALE, "Y": naive.FEMALE, "A": naive.OCCUPATIONS[:6], "B": naive.OCCUPATIONS[6:]}
PAIRS = [["he", "she"], ["man", "woman"], ["king", "queen"]]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("assoc")
    lists = root / "lists.yaml"
    test = {"test": "jobs", "lang": "en", "list_id": "g", **SETS, "pairs": PAIRS}
    lists.write_text(yaml.safe_dump({"tests": [test]}), encoding="utf-8")
    out = root / "run"
    args = ["run", "--lists", str(lists), "--metrics", ",".join(ASSOCIATION_PLOTS)]
    args += ["--bootstrap", "30", "--permutations", "30", "--no-progress", "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("kind", ASSOCIATION_PLOTS)
@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_every_kind_writes_a_figure(run_dir: Path, tmp_path: Path, kind: str, suffix: str) -> None:
    out = tmp_path / f"{kind}{suffix}"
    result = CliRunner().invoke(main, ["plot", str(run_dir), "--kind", kind, "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert len(data) > 5000
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:2000]


@pytest.mark.parametrize("kind", ["ripa", "rnd", "direct_bias", "mac"])
def test_word_bars_are_the_items_values(run_dir: Path, kind: str) -> None:
    tables = read_run_dir(run_dir)
    (ax,) = plot(tables, kind).axes
    items = tables.association_items[tables.association_items["metric"] == kind]
    drawn = {
        label.get_text(): patch.get_width()
        for label, patch in zip(ax.get_yticklabels(), ax.patches, strict=True)
    }
    expected = {f"{r.set}: {r.item}": r.value for r in items.itertuples()}
    assert drawn == pytest.approx(expected, rel=1e-12)
    assert list(drawn.values()) == sorted(drawn.values())  # sorted by value


def test_ripa_title_gives_each_sets_value(run_dir: Path) -> None:
    tables = read_run_dir(run_dir)
    (ax,) = plot(tables, "ripa").axes
    rows = tables.association[tables.association["metric"] == "ripa"].set_index("set")
    assert f"A {rows.loc['A', 'statistic']:.3g} [" in ax.get_title()
    assert f"B {rows.loc['B', 'statistic']:.3g} [" in ax.get_title()


def test_rnsb_bars_are_its_distribution_over_the_target_sets(run_dir: Path) -> None:
    (ax,) = plot(read_run_dir(run_dir), "rnsb").axes
    heights = [p.get_height() for p in ax.patches]
    res = weatkit.rnsb(
        {"X": SETS["X"], "Y": SETS["Y"]}, SETS["B"], SETS["A"], vectors=naive.glove(),
        n_bootstrap=0,
    )  # fmt: skip
    np.testing.assert_allclose(heights, list(res.distribution.values()), rtol=1e-9)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["X", "Y"]
    (uniform,) = [line for line in ax.get_lines() if line.get_label() == "uniform"]
    assert uniform.get_ydata()[0] == 0.5


def test_sc_weat_bars_carry_their_intervals(run_dir: Path) -> None:
    tables = read_run_dir(run_dir)
    (ax,) = plot(tables, "sc_weat").axes
    rows = tables.association[tables.association["metric"] == "sc_weat"]
    assert len(ax.patches) == len(rows) == 16
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx(sorted(rows["statistic"]))
    assert ax.collections  # the error bars


def test_ect_points_are_the_two_similarity_vectors(run_dir: Path) -> None:
    tables = read_run_dir(run_dir)
    (ax,) = plot(tables, "ect").axes
    rows = tables.association[tables.association["metric"] == "ect"].set_index("set")
    assert len(ax.collections) == 2  # one scatter per attribute set
    for key, points in zip("AB", ax.collections, strict=True):
        res = weatkit.ect(
            {"X": SETS["X"], "Y": SETS["Y"]}, SETS[key], vectors=naive.glove(), n_bootstrap=0
        )
        assert points.get_label() == key
        xy = points.get_offsets()
        assert len(xy) == len(SETS[key]) == 6
        np.testing.assert_allclose(xy, list(res.similarities.values()), rtol=1e-12)
        assert stats.spearmanr(xy[:, 0], xy[:, 1]).statistic == pytest.approx(res.statistic)
        row = rows.loc[key]
        assert f"{key} {row['statistic']:.3g} [" in ax.get_title()
        assert f"], p = {row['p_value']:.2g}" in ax.get_title()
    assert ax.get_title().splitlines()[-1].startswith("ECT ρ: A ")
    assert [t.get_text() for t in ax.texts] == [*SETS["A"], *SETS["B"]]


def test_a_run_without_the_metric_is_a_one_line_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--lists", "weat", "--test", "weat1", "--bootstrap", "0", "--permutations"]
    CliRunner().invoke(main, [*args, "0", "--no-progress", "--out", str(out)])
    with pytest.raises(WeatkitError, match=r"has no association_items.csv \(written by weatkit"):
        plot(read_run_dir(out), "ripa")
    result = CliRunner().invoke(
        main, ["plot", str(out), "--kind", "wefat", "--out", str(tmp_path / "f.png")]
    )
    assert result.exit_code == 1
    assert "unknown plot kind 'wefat'" in result.stderr and len(result.stderr.splitlines()) == 1
