"""``--mlflow URI`` (issue 28 §3): run, grid and compare directories logged to a real local MLflow
store (a SQLite file in tmp_path), read back with ``MlflowClient``; bad input refused in one line
before any work, and a store that fails after the work leaves the outputs complete."""

from __future__ import annotations

import csv
import json
import shlex
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import weatkit
from tests.grid_fixtures import make_grid
from weatkit.cli import main
from weatkit.config import schema
from weatkit.errors import ConfigError, WeatkitError
from weatkit.grid import load_grid_config
from weatkit.report.tables import VALUE_COLUMNS
from weatkit.tracking import (
    TrackingOptions,
    flatten_options,
    log_to_mlflow,
    metric_key,
    tracked_run,
)
from weatkit.tracking.mlflow import MAX_PARAM_LENGTH

FAST = ["--lists", "weat", "--test", "weat1,weat2", "--bootstrap", "200", "--permutations", "200"]
COMPARE = """\
output: out
languages: [en]
models: [{name: V, path: glove-6b-50d}]
weat: {lists: [weat], tests: [weat1, weat2], engine: {n_bootstrap: 100, n_permutations: 100}}
"""
MISSING = "needs MLflow: pip install 'weatkit[mlflow]'"


def invoke(*args: str):
    return CliRunner().invoke(main, [*args, "--no-progress"], catch_exceptions=False)


def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"


@pytest.fixture
def mlflow():
    return pytest.importorskip("mlflow")


def logged_run(mlflow: Any, uri: str, experiment: str = "weatkit") -> Any:
    """The one run of ``experiment`` in the store."""
    client = mlflow.MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment!r}"
    runs = client.search_runs([found.experiment_id])
    assert len(runs) == 1
    return runs[0]


def artifacts(mlflow: Any, uri: str, run_id: str, path: str | None = None) -> list[str]:
    client = mlflow.MlflowClient(tracking_uri=uri)
    found = []
    for entry in client.list_artifacts(run_id, path):
        found += artifacts(mlflow, uri, run_id, entry.path) if entry.is_dir else [entry.path]
    return sorted(found)


def files(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != ".weatkit.lock"
    )


def expected_metrics(table: Path, keys: list[str], columns: list[str]) -> dict[str, float]:
    """``ROW/COLUMN -> float(field)`` read with the csv module (exact), empty fields left out."""
    metrics = {}
    with table.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            name = "/".join(metric_key(row[k]) for k in keys)
            metrics |= {f"{name}/{c}": float(row[c]) for c in columns if row[c] != ""}
    return metrics


def leaves(value: Any, key: str = "") -> dict[str, str]:
    """The manifest's options as the params they should be, walked by hand."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for name, item in value.items():
            out |= leaves(item, f"{key}.{name}" if key else name)
        return out
    if isinstance(value, list) and value and isinstance(value[0], dict):
        out = {}
        for number, item in enumerate(value, 1):
            out |= leaves(item, f"{key}.{number}")
        return out
    return {key: value if isinstance(value, str) else json.dumps(value)}


# --- run, grid, compare logged and read back --------------------------------------------------


def test_weatkit_run_is_logged_with_params_metrics_tags_and_artifacts(
    tmp_path: Path, mlflow: Any
) -> None:
    uri, out = store(tmp_path), tmp_path / "run"
    res = invoke("run", *FAST, "--out", str(out), "--mlflow", uri)
    assert res.exit_code == 0, res.output
    run = logged_run(mlflow, uri)
    assert f"logged {out} to MLflow: run {run.info.run_id} of experiment 'weatkit'" in res.stderr
    assert run.info.status == "FINISHED" and run.info.run_name == "run"

    manifest = json.loads((out / "manifest.json").read_text())
    params = run.data.params
    assert params == leaves(manifest["config"])
    assert params["engine.n_bootstrap"] == "200" and params["engine.seed"] == "0"
    assert params["tests"] == '["weat1", "weat2"]' and params["lists"] == '["weat"]'
    assert params["lower"] == "null" and params["engine.metric"] == "cosine"

    metrics = expected_metrics(
        out / "summary.csv", ["embeddings", "lang", "list_set", "test"], VALUE_COLUMNS
    )
    assert run.data.metrics == metrics  # exact floats
    summary = pd.read_csv(out / "summary.csv")
    d = summary.loc[summary["test"] == "weat1", "effect_size_ci_low"].iloc[0]
    assert run.data.metrics["glove-6b-50d/en/weat/weat1/effect_size_ci_low"] == d
    assert len(metrics) == 2 * len(VALUE_COLUMNS)

    tags = run.data.tags
    assert tags["weatkit.version"] == weatkit.__version__
    assert tags["weatkit.kind"] == "run" and tags["weatkit.seed"] == "0"
    # the manifest's command line (sys.argv: under pytest-xdist a worker's may be bare)
    assert tags["weatkit.command"] == shlex.join(["weatkit", *manifest["command"][1:]])
    assert tags["weatkit.output"] == str(out.resolve())
    written = ["manifest.json", "results.csv", "summary.csv"]
    assert artifacts(mlflow, uri, run.info.run_id) == files(out) == written
    # artifacts beside the database, not in ./mlruns of the current folder
    assert run.info.artifact_uri.startswith((tmp_path / "store" / "mlartifacts").as_uri())


def test_a_grid_files_mlflow_key_with_the_flags_experiment(tmp_path: Path, mlflow: Any) -> None:
    uri = store(tmp_path)
    experiment = make_grid(tmp_path / "grid", mlflow=uri, mlflow_experiment="from-file")
    res = invoke("grid", str(experiment), "--mlflow-experiment", "alignment")
    assert res.exit_code == 0, res.output
    out = tmp_path / "grid" / "out"
    run = logged_run(mlflow, uri, "alignment")  # the flag over the file's key
    client = mlflow.MlflowClient(tracking_uri=uri)
    assert client.get_experiment_by_name("from-file") is None

    manifest = json.loads((out / "manifest.json").read_text())
    assert run.data.params == leaves(manifest["config"])
    assert run.data.params["embeddings.2.name"] == "rotated"
    assert run.data.params["embeddings.2.baseline"] == "mono"
    assert run.data.params["engine.seed"] == "3"
    keys = ["embeddings", "lang", "list_set", "test"]
    assert run.data.metrics == expected_metrics(out / "summary.csv", keys, VALUE_COLUMNS)
    assert run.data.tags["weatkit.kind"] == "grid" and run.data.tags["weatkit.seed"] == "3"
    logged = artifacts(mlflow, uri, run.info.run_id)
    assert logged == files(out) and any(p.startswith("jobs/") for p in logged)


def test_weatkit_compare_is_logged(tmp_path: Path, mlflow: Any) -> None:
    uri = store(tmp_path)
    config = tmp_path / "cmp.yaml"
    config.write_text(COMPARE)
    res = invoke("compare", str(config), "--no-plot", "--mlflow", uri)
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    run = logged_run(mlflow, uri)

    params = run.data.params
    assert params["models.1.name"] == "V" and params["models.1.vectors"] == "glove-6b-50d"
    assert params["methods.weat.run.engine.n_bootstrap"] == "100"
    assert params["methods.weat.layers"] == "[0, -2]"
    assert params["validity.traits"] == "{}" and "validity.notes" not in params
    assert params["languages"] == '["en"]'

    columns = ["value", "ci_low", "ci_high", "p_value_neutral"]
    metrics = expected_metrics(out / "scores.csv", ["model", "lang", "measure"], columns)
    assert run.data.metrics == metrics
    assert set(metrics) == {f"V/en/weat_weat{i}/{c}" for i in (1, 2) for c in columns[:3]}
    assert run.data.tags["weatkit.kind"] == "compare" and run.data.tags["weatkit.seed"] == "0"
    assert artifacts(mlflow, uri, run.info.run_id) == files(out)


# --- keys and params ------------------------------------------------------------------------


def test_metric_keys_are_sanitised_and_unique(tmp_path: Path, mlflow: Any) -> None:
    out = tmp_path / "run"
    assert invoke("run", *FAST, "--out", str(out)).exit_code == 0
    summary = pd.read_csv(out / "summary.csv", dtype=str, keep_default_na=False)
    summary["list_set"] = ["ca-weat:v1", "ca-weat_v1"]
    summary["test"] = "../w/t"
    summary.to_csv(out / "summary.csv", index=False)
    metrics = tracked_run(out).metrics
    first = "glove-6b-50d/en/ca-weat_v1/.._w_t"
    second = "glove-6b-50d/en/ca-weat_v1/.._w_t_2"
    assert metrics[f"{first}/effect_size"] == float(summary["effect_size"][0])
    assert metrics[f"{second}/effect_size"] == float(summary["effect_size"][1])
    assert metric_key("..") == metric_key("") == "_"
    assert metric_key("MultiBERTs#2@-1 x") == "MultiBERTs_2_-1 x"


def test_params_are_cut_at_mlflows_limit_and_keep_no_secret() -> None:
    params = flatten_options(
        {
            "lists": ["x" * 10_000],
            "embeddings": ["api=openai:https://me:sk-secret@host/v1#e5"],
            "contextual": {"special_tokens": True, "api_key": "sk-1", "token": "t"},
            "traits": {"gest:g_s": "gender"},
        }
    )
    assert len(params["lists"]) == MAX_PARAM_LENGTH
    assert params["lists"].endswith("(10004 characters; manifest.json has them all)")
    assert params["embeddings"] == '["api=openai:https://***@host/v1#e5"]'
    assert params["contextual.special_tokens"] == "true"
    assert "contextual.api_key" not in params and "contextual.token" not in params
    assert params["traits"] == '{"gest:g_s": "gender"}'


def test_tracking_declarations_are_the_options_own() -> None:
    default = TrackingOptions()
    assert {f.name for f in fields(TrackingOptions)} == {o.name for o in schema.TRACKING.options}
    for option in schema.TRACKING.options:
        assert option.default == getattr(default, option.name)


# --- bad input: one line, exit 1, nothing computed or a complete output ---------------------


def _one_line_error(res: Any, message: str) -> None:
    assert res.exit_code == 1
    assert res.stderr.strip() == f"weatkit: error: {message}"


def test_without_mlflow_the_option_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ImportError
    out = tmp_path / "run"
    res = invoke("run", *FAST, "--out", str(out), "--mlflow", store(tmp_path))
    _one_line_error(res, f"--mlflow: {MISSING}")
    assert not out.exists()

    experiment = make_grid(tmp_path / "grid", mlflow=store(tmp_path))
    _one_line_error(invoke("grid", str(experiment)), f"{experiment}: mlflow: {MISSING}")
    with pytest.raises(ConfigError, match=r"mlflow: needs MLflow"):
        load_grid_config(experiment)
    config = tmp_path / "cmp.yaml"
    config.write_text(COMPARE + f"mlflow: {store(tmp_path)}\n")
    _one_line_error(invoke("compare", str(config)), f"{config}: mlflow: {MISSING}")
    assert not (tmp_path / "grid" / "out").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("uri", "problem"),
    [
        ("sqlite:///{tmp}/a-file/store/mlflow.db", "NotADirectoryError"),
        ("foo://somewhere", "unsupported URI 'foo://somewhere'"),
    ],
)
def test_a_store_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, mlflow: Any, uri: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    uri = uri.format(tmp=tmp_path)
    out = tmp_path / "run"
    res = invoke("run", *FAST, "--out", str(out), "--mlflow", uri)
    assert res.exit_code == 1
    line = res.stderr.strip()
    assert line.startswith(f"weatkit: error: MLflow tracking URI {uri}: cannot log to it (")
    assert problem in line and "\n" not in line
    assert not out.exists()


def test_mlflow_needs_an_output_directory(tmp_path: Path) -> None:
    res = invoke("run", *FAST, "--mlflow", store(tmp_path))
    _one_line_error(res, "--mlflow logs the run directory: give --out DIR")


def test_a_store_failing_after_the_run_leaves_the_outputs_complete(
    tmp_path: Path, mlflow: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tmp_path / "reference"
    assert invoke("run", *FAST, "--out", str(reference)).exit_code == 0

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mlflow.MlflowClient, "log_batch", full_disk)
    uri, out = store(tmp_path), tmp_path / "run"
    res = invoke("run", *FAST, "--out", str(out), "--mlflow", uri)
    assert res.exit_code == 1
    assert res.stderr.strip().splitlines()[-1] == (
        f"weatkit: error: MLflow tracking URI {uri}: cannot log to it (OSError: [Errno 28] No "
        "space left on device)"
    )
    for name in ("results.csv", "summary.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(out / name), pd.read_csv(reference / name))
    assert json.loads((out / "manifest.json").read_text())["config"]["engine"]["seed"] == 0
    assert logged_run(mlflow, uri).info.status == "FAILED"


def test_grid_file_keys_are_checked_by_the_declarations(tmp_path: Path) -> None:
    experiment = make_grid(tmp_path, mlflow=3)
    with pytest.raises(ConfigError) as info:
        load_grid_config(experiment)
    assert str(info.value) == f"{experiment}: mlflow: expected str, got int 3"
    assert yaml.safe_load(experiment.read_text())["mlflow"] == 3


def test_a_directory_that_is_not_a_weatkit_output_is_refused_before_mlflow(
    tmp_path: Path, mlflow: Any
) -> None:
    with pytest.raises(WeatkitError) as info:
        log_to_mlflow(tmp_path, store(tmp_path))
    assert str(info.value).startswith(f"{tmp_path / 'manifest.json'}: missing;")
    assert not (tmp_path / "store").exists()
