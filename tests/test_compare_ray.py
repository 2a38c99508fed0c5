"""``weatkit compare`` as jobs: on a real local Ray instance, resumed after a kill, and the GPUs
each job asks for.

Three tiny masked LMs (:func:`tests.compare_fixtures.make_char_mlm`) in English and German with
WEAT, CrowS-Pairs and MBE: 18 model × method × language jobs, 9 of them not applicable. The
tables written by the Ray executor, and by a study interrupted and resumed, must equal those of
one uninterrupted run in this process byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.compare_fixtures import make_char_mlm
from weatkit.cli import main
from weatkit.crossmethod import load_compare_config, run_compare, write_compare
from weatkit.crossmethod.jobs import plan_compare
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.grid import LocalExecutor, RayExecutor
from weatkit.grid.jobs import model_gpus
from weatkit.grid.ray_executor import _job_gpus

TABLES = ("scores.csv", "table.csv", "correlations.csv", "skipped.csv")
PARALLEL = [
    ("He is strong.", "Er ist stark."),
    ("She cried often.", "Sie weinte oft."),
    ("The man said nothing.", "Der Mann sagte nichts."),
    ("The woman lifts heavy weights.", "Die Frau hebt schwere Gewichte."),
]
# cache: false, so that every job computes (and loads its model) whatever ran before
CONFIG = """
output: out
languages: [en, de]
models:
  - {name: A, model: m1}
  - {name: B, model: m2}
  - {name: C, model: m3}
contextual: {device: cpu, batch_size: 64, cache: false}
weat: {lists: [weat], tests: [weat1], layers: [0], engine: {n_bootstrap: 50, n_permutations: 0}}
crows: {method: aul, limit: 12}
mbe: {corpora: {de: parallel.tsv}}
scores: {n_bootstrap: 50}
correlation: {n_bootstrap: 50}
"""
N_JOBS = 18


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The comparison file, with its models and corpus beside it."""
    root = tmp_path_factory.mktemp("compare-jobs")
    for i in (1, 2, 3):
        make_char_mlm(root / f"m{i}", seed=i)
    (root / "parallel.tsv").write_text("".join(f"{e}\t{d}\n" for e, d in PARALLEL))
    (root / "cmp.yaml").write_text(CONFIG)
    return root / "cmp.yaml"


@pytest.fixture(scope="module")
def reference(study: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uninterrupted run in this process; its output directory."""
    out = tmp_path_factory.mktemp("reference")
    config = load_compare_config(study, str(out))
    result = run_compare(config, show_progress=False, executor=LocalExecutor(), records=True)
    assert result.n_failed == 0
    write_compare(result, out, plot=False)
    return out


def assert_same_tables(out: Path, reference: Path) -> None:
    for name in TABLES:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def statuses(out: Path) -> dict[str, str]:
    manifest = json.loads((out / "manifest.json").read_text())
    return {job["id"]: job["status"] for job in manifest["jobs"]}


@pytest.mark.slow
def test_the_reference_ran_every_job_once_per_model(reference: Path) -> None:
    manifest = json.loads((reference / "manifest.json").read_text())
    assert Counter(statuses(reference).values()) == {"ran": N_JOBS}
    assert manifest["weights_loaded"] == {"A": 1, "B": 1, "C": 1}
    assert len(list((reference / "jobs").glob("*.json"))) == N_JOBS
    table = (reference / "table.csv").read_text().splitlines()
    assert table[0] == "model,lang,weat:weat1@0,crows:aul,mbe:aula"


@pytest.mark.slow
def test_ray_tables_equal_the_local_executors(
    ray_cluster: str, study: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ray"
    args = ["compare", str(study), "--out", str(out), "--no-plot", "--no-progress"]
    res = CliRunner().invoke(main, [*args, "--executor", "ray"])
    assert res.exit_code == 0, res.output
    assert_same_tables(out, reference)
    manifest = json.loads((out / "manifest.json").read_text())
    assert Counter(statuses(out).values()) == {"ran": N_JOBS}
    loads: Counter[tuple[int, str]] = Counter()
    for job in manifest["jobs"]:
        assert job["worker"]["pid"] != os.getpid()  # ran in Ray's worker processes
        loads[job["worker"]["pid"], job["id"].split(":")[1]] += job["weights_loaded"]
    assert set(loads.values()) <= {0, 1}  # no worker loads a model twice
    assert sum(manifest["weights_loaded"].values()) >= 3


@pytest.mark.slow
def test_a_killed_study_resumes_on_ray_with_only_the_missing_jobs(
    ray_cluster: str, study: Path, reference: Path, tmp_path: Path
) -> None:
    config = load_compare_config(study, str(tmp_path / "out"))
    finished: list[str] = []

    def kill_after_five(step: str) -> None:
        finished.append(step.replace(" · ", ":"))
        if len(finished) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_compare(config, show_progress=False, on_step=kill_after_five, records=True)
    assert len(list((tmp_path / "out" / "jobs").glob("*.json"))) == 5
    assert not (tmp_path / "out" / "table.csv").exists()

    result = run_compare(config, show_progress=False, executor=RayExecutor(), records=True)
    write_compare(result, tmp_path / "out", plot=False)
    ran = {job_id for job_id, status in statuses(tmp_path / "out").items() if status == "ran"}
    reused = {job_id for job_id, status in statuses(tmp_path / "out").items() if status == "reused"}
    assert reused == set(finished) and len(ran) == N_JOBS - 5 and not ran & reused
    assert_same_tables(tmp_path / "out", reference)


@pytest.mark.slow
def test_deleted_records_are_recomputed_and_nothing_else(
    study: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    deleted = {"crows:B:en", "mbe:C:de", "weat:A:de"}
    plan = plan_compare(load_compare_config(study, str(out)))
    for job in plan.jobs:
        if job.id in deleted:
            (out / "jobs" / job.file_name).unlink()
    (out / "jobs" / next(j for j in plan.jobs if j.id == "weat:C:en").file_name).write_text("{")
    res = CliRunner().invoke(main, ["compare", str(study), "--out", str(out), "--no-plot"])
    assert res.exit_code == 0, res.output
    ran = {job_id for job_id, status in statuses(out).items() if status == "ran"}
    assert ran == deleted | {"weat:C:en"}  # the corrupt record too
    assert_same_tables(out, reference)


@pytest.mark.slow
def test_a_changed_section_recomputes_its_jobs_only(
    study: Path, reference: Path, tmp_path: Path
) -> None:
    """The key holds the section's options: a new CrowS-Pairs limit reruns the crows jobs;
    the correlation section enters no key."""
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    changed = study.parent / "changed.yaml"  # beside the models
    text = CONFIG.replace("limit: 12", "limit: 10").replace("correlation: {n_bootstrap: 50}", "")
    changed.write_text(text)
    result = run_compare(load_compare_config(changed, str(out)), records=True, show_progress=False)
    ran = {j["id"] for j in result.manifest["jobs"] if j["status"] == "ran"}
    assert ran == {f"crows:{m}:{lang}" for m in "ABC" for lang in ("en", "de")}


# --- bad input ------------------------------------------------------------------------------

#: A comparison whose model is never read (the kind is given; the command stops before).
SMALL = "output: out\nlanguages: [en]\nmodels: [{name: A, model: ./m1, kind: mlm}]\ncrows: {}\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--executor", "spark"], "--executor 'spark': choose local or ray"),
        (["--address", "auto"], "--address: only with --executor ray"),
        (["--executor", "ray", "--address", "somewhere"], "give auto, HOST:PORT or ray://"),
    ],
)
def test_bad_executor_options_are_one_line_errors(tmp_path: Path, args, message) -> None:
    path = tmp_path / "cmp.yaml"
    path.write_text(SMALL)
    res = CliRunner().invoke(main, ["compare", str(path), *args])
    assert res.exit_code == 1
    (line,) = res.output.strip().splitlines()
    assert line.startswith("weatkit: error: ") and message in line
    assert not (tmp_path / "out").exists()


def test_ray_executor_without_ray_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    path = tmp_path / "cmp.yaml"
    path.write_text(SMALL)
    res = CliRunner().invoke(main, ["compare", str(path), "--executor", "ray"])
    assert res.exit_code == 1
    assert res.output.strip() == (
        "weatkit: error: the ray executor needs Ray: pip install 'weatkit[ray]'"
    )
    assert not (tmp_path / "out").exists()


# --- GPUs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model, options, gpus",
    [
        ("bert-base-cased", ContextualOptions(), 1),
        ("hf:./my-model", ContextualOptions(device="cuda:1"), 1),
        ("vllm:meta-llama/Llama-3.1-8B", ContextualOptions(), 1),
        ("bert-base-cased", ContextualOptions(device="cpu"), 0),
        ("bert-base-cased", ContextualOptions(device="mps"), 0),
        ("openai:http://127.0.0.1:8080/v1#smollm2", ContextualOptions(), 0),
        ("big", ContextualOptions(device_map="auto"), 1),
        ("big", ContextualOptions(device_map="auto", max_memory="0=70GiB,1=70GiB,cpu=1TiB"), 2),
    ],
)
def test_the_gpus_a_model_needs(model: str, options: ContextualOptions, gpus: int) -> None:
    assert model_gpus(model, options) == gpus


def test_the_gpus_a_ray_task_reserves() -> None:
    class Job:
        id = "weat:big:en"

        def __init__(self, gpus: int) -> None:
            self.gpus = gpus

    assert _job_gpus(Job(0), 1.0, 4.0) == 0
    assert _job_gpus(Job(1), 0.5, 4.0) == 0.5  # --gpus-per-job 0.5: two models per GPU
    assert _job_gpus(Job(1), 0.0, 0.0) == 0  # no GPU in the cluster: on the CPU
    assert _job_gpus(Job(2), 1.0, 4.0) == 2
    assert _job_gpus(Job(2), 0.0, 0.0) == 0
    with pytest.raises(WeatkitError, match=r"job weat:big:en shards its model over 2 GPUs"):
        _job_gpus(Job(2), 1.0, 1.0)


@pytest.mark.parametrize("device, gpus", [("auto", 1), ("cpu", 0)])
def test_compare_jobs_of_models_need_a_gpu_and_vectors_none(
    tmp_path: Path, device: str, gpus: int
) -> None:
    path = tmp_path / "cmp.yaml"
    path.write_text(
        "output: out\nlanguages: [en]\n"
        "models: [{name: V, path: glove-6b-50d}, {name: M, model: bert-base-cased, kind: mlm}]\n"
        f"contextual: {{device: {device}}}\ncrows: {{}}\n"
    )
    jobs = plan_compare(load_compare_config(path)).jobs
    assert {job.entry.name: job.gpus for job in jobs} == {"V": 0, "M": gpus}
