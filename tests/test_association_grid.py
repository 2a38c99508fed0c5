"""The association metrics in grids and in ``weatkit compare``: a grid's jobs compute the
metrics its file names and its tables collate them (equal to ``weatkit run`` on each job); the
default grid keeps its job keys; a compare file's ``weat`` section selects them as registered
measures, named by metric, test and set."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from tests.grid_fixtures import make_grid
from weatkit.cli import main
from weatkit.crossmethod import load_compare_config, run_compare
from weatkit.crossmethod.jobs import plan_compare
from weatkit.errors import ConfigError
from weatkit.grid import load_grid_config, run_grid
from weatkit.grid.jobs import plan_jobs
from weatkit.measures import association_measures, get_measure
from weatkit.pipeline import run
from weatkit.report.tables import ASSOCIATION_COLUMNS, association_pooled_frame

METRICS = ["weat", "rnd", "mac"]


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("grid")
    engine = {"n_bootstrap": 20, "n_permutations": 20, "seed": 3, "influence": True}
    path = make_grid(
        root,
        metrics=METRICS,
        association={"rnd_reduction": "mean"},
        engine=engine,
        pool=["languages"],
    )
    config = load_grid_config(path)
    return config, run_grid(config, show_progress=False)


def test_a_grid_collates_what_each_job_computes(grid) -> None:
    config, result = grid
    table = result.association
    assert list(table.columns) == ASSOCIATION_COLUMNS
    assert set(table["metric"]) == {"rnd", "mac"}
    assert {(e, lang) for e, lang in zip(table["embeddings"], table["lang"], strict=True)} == {
        (s.name, lang) for s in config.sources for lang in config.languages
    }
    source = config.sources[0]
    job = run(replace(config.run, embeddings=(source.spec,), langs=("de",)), show_progress=False)
    mine = table[(table["embeddings"] == source.name) & (table["lang"] == "de")]
    pd.testing.assert_frame_equal(
        mine.reset_index(drop=True), job.association.reset_index(drop=True), check_dtype=False
    )
    written = pd.read_csv(config.output / "association.csv", keep_default_na=False)
    assert len(written) == len(table)
    assert (config.output / "association_items.csv").is_file()
    assert config.run.association.rnd_reduction == "mean"


def test_a_grid_collates_the_association_influence_and_pools_each_metric(grid) -> None:
    config, result = grid
    source = config.sources[0]
    job = run(replace(config.run, embeddings=(source.spec,), langs=("de",)), show_progress=False)
    table = result.association_influence
    mine = table[(table["embeddings"] == source.name) & (table["lang"] == "de")]
    pd.testing.assert_frame_equal(
        mine.reset_index(drop=True), job.association_influence, check_dtype=False
    )
    expected = association_pooled_frame(result.association, ("languages",), 0.95)
    pd.testing.assert_frame_equal(result.association_pooled, expected)
    assert set(result.association_pooled["metric"]) == {"rnd", "mac"}
    for name in ("association_influence", "association_pooled"):
        assert (config.output / f"{name}.csv").is_file()


def test_the_metrics_enter_the_job_keys_only_when_chosen(tmp_path: Path) -> None:
    default = plan_jobs(load_grid_config(make_grid(tmp_path / "a")))
    chosen = plan_jobs(load_grid_config(make_grid(tmp_path / "b", metrics=METRICS)))
    weat_only = plan_jobs(load_grid_config(make_grid(tmp_path / "c", metrics=["weat"])))
    assert [j.key for j in default] == [j.key for j in weat_only]
    assert all(a.key != b.key for a, b in zip(default, chosen, strict=True) if a.kind == "weat")


def test_a_grid_file_with_a_bad_metric_is_refused_in_one_line(tmp_path: Path) -> None:
    path = make_grid(tmp_path, metrics=["weat", "seat"])
    result = CliRunner().invoke(main, ["grid", str(path)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"weatkit: error: {path}: metrics: unknown metric 'seat': choose from weat, rnd, rnsb, "
        "mac, ect, ripa, sc_weat, direct_bias"
    )


COMPARE = """\
output: out
languages: [en]
models: [{name: GloVe, path: glove-6b-50d}]
weat:
  lists: [weat]
  tests: [weat1, weat2]
  metrics: [weat, rnd, ect]
  engine: {n_bootstrap: 30, n_permutations: 0}
"""


def test_compare_reports_the_association_metrics_as_registered_measures(tmp_path: Path) -> None:
    path = tmp_path / "cmp.yaml"
    path.write_text(COMPARE, encoding="utf-8")
    config = load_compare_config(path)
    result = run_compare(config, show_progress=False)
    scores = result.scores.set_index("measure")
    tests = ("weat1", "weat2")
    association = [f"{m}:weat:{t}:{s}" for m in ("rnd", "ect") for t in tests for s in "AB"]
    assert sorted(scores.index) == sorted(["weat:weat1", "weat:weat2", *association])
    assert set(scores["method"]) == {"weat", "rnd", "ect"}
    direct = run(config.weat.run, show_progress=False)  # type: ignore[union-attr]
    assoc = direct.association.set_index(["metric", "test", "set"])
    assert scores.loc["rnd:weat:weat2:B", "value"] == assoc.loc[("rnd", "weat2", "B"), "statistic"]
    assert scores.loc["ect:weat:weat1:A", "ci_low"] == assoc.loc[("ect", "weat1", "A"), "ci_low"]
    assert scores.loc["ect:weat:weat1:A", "neutral"] == get_measure("ect").neutral == 1.0


def test_compare_keys_do_not_move_for_the_default_section(tmp_path: Path) -> None:
    text = COMPARE.replace("  metrics: [weat, rnd, ect]\n", "")
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(text + "  metrics: [weat]\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text(COMPARE, encoding="utf-8")
    keys = [plan_compare(load_compare_config(tmp_path / f"{n}.yaml")).jobs[0].key for n in "abc"]
    assert keys[0] == keys[1] != keys[2]


def test_association_measures_take_the_median_over_lists() -> None:
    rows = [
        {"embeddings": "M@3", "lang": "en", "list_set": "ca-weat:v1", "list_id": str(i),
         "test": "weat1", "metric": "sc_weat", "set": "X", "item": "rose", "statistic": v,
         "ci_low": v - 1, "ci_high": v + 1}
        for i, v in enumerate([0.1, 0.5, 0.3])
    ]  # fmt: skip
    (result,) = association_measures(pd.DataFrame(rows), 0.95)
    assert (result.measure, result.source, result.value, result.n) == ("sc-weat", "M", 0.3, 3)
    assert result.test == "sc_weat:ca-weat:v1:weat1:X:rose@3"
    assert (result.ci_low, result.ci_high) == (0.1, 0.5)  # the order statistics of 3 lists
    (one,) = association_measures(pd.DataFrame(rows[:1]), 0.9, layer=0)
    assert (one.value, one.ci_low, one.confidence_level, one.test) == (
        0.1, -0.9, 0.9, "sc_weat:ca-weat:v1:weat1:X:rose@3",
    )  # fmt: skip


def test_a_compare_file_refuses_a_bad_association_option(tmp_path: Path) -> None:
    path = tmp_path / "cmp.yaml"
    data = yaml.safe_load(COMPARE)
    data["weat"]["association"] = {"rnsb_over": "lists"}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"weat\.association\.rnsb_over: must be one of sets"):
        load_compare_config(path)


def test_weatkit_grid_prints_the_association_table(grid) -> None:
    config, _ = grid
    result = CliRunner().invoke(main, ["grid", str(config.path), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "Association metrics" in result.stdout and "WEAT summary" in result.stdout
