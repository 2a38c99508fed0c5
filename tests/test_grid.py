"""``weatkit grid``: experiment files, job planning, resume after interruption, comparisons."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import naive_weat as naive
from tests.grid_fixtures import LANGS, break_vec, make_grid
from weatkit.cli import main
from weatkit.embeddings.static import load_static
from weatkit.errors import WeatkitError
from weatkit.grid import load_grid_config, plan, run_grid
from weatkit.grid.jobs import plan_jobs
from weatkit.grid.runner import GridResult
from weatkit.lists.sources import select_lists
from weatkit.pipeline import run
from weatkit.stats.resampling import bootstrap_indices

OUTPUTS = ("results.csv", "summary.csv", "comparisons.csv")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GridResult]:
    """One uninterrupted run of the fixture grid."""
    path = make_grid(tmp_path_factory.mktemp("grid"))
    return path, run_grid(load_grid_config(path), show_progress=False)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------------------------
# experiment files


def test_yaml_and_toml_give_the_same_config(tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    data = yaml.safe_load(path.read_text())
    lines = [f'output = "{data["output"]}"', f"languages = {json.dumps(data['languages'])}"]
    lines += [f"lists = {json.dumps(data['lists'])}", f"tests = {json.dumps(data['tests'])}"]
    lines += ["min_coverage = 0.5", "reliability = true"]
    lines += ["[engine]", "n_bootstrap = 200", "n_permutations = 200"]
    lines += ["seed = 3"]
    for entry in data["embeddings"]:
        lines.append("[[embeddings]]")
        lines += [f'{k} = "{v}"' for k, v in entry.items()]
    toml = tmp_path / "experiment.toml"
    toml.write_text("\n".join(lines) + "\n")
    a, b = load_grid_config(path), load_grid_config(toml)
    assert a.run == b.run and a.sources == b.sources and a.output == b.output
    assert a.run.engine.n_bootstrap == 200 and a.run.min_coverage == 0.5
    assert a.sources[0].spec.location == str(tmp_path / "mono.{lang}.vec")  # relative to the file
    assert [s.baseline for s in a.sources] == [None, "mono", "mono"]


def test_model_entries_expand_per_layer(tmp_path: Path) -> None:
    path = make_grid(
        tmp_path,
        embeddings=[
            {
                "name": "M",
                "model": "some-org/model",
                "layers": [0, -2],
                "contextual": {"lower": True},
            },
            {"name": "G", "path": "glove-6b-50d"},
        ],
        contextual={"batch_size": 8},
    )
    config = load_grid_config(path)
    names = [s.name for s in config.sources]
    assert names == ["M@0", "M@-2", "G"]
    spec = config.sources[0].spec
    assert spec.location == "hf:some-org/model" and spec.layers == (0, -2)
    assert spec.contextual.lower and spec.contextual.batch_size == 8
    assert config.sources[2].spec.is_default


def test_a_model_job_key_depends_on_the_batch_size(tmp_path: Path) -> None:
    # padded batches may change a vector's last bits, so a resumed grid must not reuse a job
    # computed with another batch size; static vectors have no batch size
    embeddings = [
        {"name": "M", "model": "some-org/model", "layers": [-1]},
        {"name": "mono", "path": "mono.{lang}.vec"},
    ]
    keys = {}
    for size in (1, 64):
        contextual = {"batch_size": size}
        path = make_grid(tmp_path / str(size), embeddings=embeddings, contextual=contextual)
        keys[size] = {job.id: job.key for job in plan_jobs(load_grid_config(path))}
    assert keys[1].keys() == keys[64].keys()
    for job_id in keys[1]:
        assert (keys[1][job_id] != keys[64][job_id]) == job_id.startswith("M/")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": 1}, "unknown option 'colour'"),
        ({"languages": []}, "languages: expected a non-empty list"),
        ({"engine": {"n_bootstraps": 5}}, "engine: unknown option 'n_bootstraps'; did you mean "
         "'n_bootstrap'? (known: alternative, "),
        ({"list": ["weat"]}, "unknown option 'list'; did you mean 'lists'? (known: "),
        ({"engine": {"n_bootstrap": "many"}}, "engine.n_bootstrap: expected int"),
        ({"engine": {"ddof": 3}}, "engine.ddof: must be 0 or 1"),
        ({"min_coverage": "high"}, "min_coverage: expected int or float"),
        ({"embeddings": [{"name": "a"}]}, "exactly one of path"),
        ({"embeddings": [{"name": "a", "path": "x.vec", "baseline": "b"}]}, "baseline 'b'"),
        ({"embeddings": [{"name": "a", "path": "x.vec", "baseline": "a"}]}, "its own baseline"),
        ({"embeddings": [{"name": "a", "path": "x.vec"}, {"name": "a", "path": "y.vec"}]}, "two"),
        ({"embeddings": [{"name": "m", "model": "x"}]}, "give the model's layers"),
        ({"embeddings": [{"name": "m", "path": "x.vec", "layers": [1]}]}, "layers is for models"),
        ({"isomorphism": {"measures": ["ev"]}}, "give the reference language"),
        ({"isomorphism": {"reference": "en", "measures": ["xx"]}}, "unknown isomorphism measure"),
        ({"asymmetry": {"counts": "corpus.txt"}}, "needs {lang}"),
    ],
)
def test_bad_experiment_files_name_the_problem(tmp_path: Path, change, message) -> None:
    path = make_grid(tmp_path, **change)
    with pytest.raises(WeatkitError, match=re.escape(message)) as err:
        load_grid_config(path)
    assert str(path) in str(err.value)


def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("languages: [en\nlists: x\n")
    with pytest.raises(WeatkitError, match=r"bad.yaml line \d+: invalid YAML"):
        load_grid_config(path)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(st.text(max_size=300), st.binary(max_size=300)), st.sampled_from([".yaml", ".toml"])
)
def test_fuzzed_experiment_files_only_raise_weatkit_errors(tmp_path: Path, content, suffix) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    try:
        load_grid_config(path)
    except WeatkitError as err:
        assert "\n" not in str(err)


# --------------------------------------------------------------------------------------------
# planning and running


def test_plan_has_one_job_per_source_and_language_then_comparisons(finished) -> None:
    path, _ = finished
    jobs = [p.job for p in plan(load_grid_config(path))]
    ids = [j.id for j in jobs]
    assert ids == [
        *(f"{name}/{lang}" for lang in LANGS for name in ("mono", "rotated", "noisy")),
        *(f"{name}-vs-mono/{lang}" for lang in LANGS for name in ("rotated", "noisy")),
    ]
    n_tests = {
        lang: len(select_lists(["x-weat", "ca-weat"], (lang,), tests=["weat1", "weat2"]).tests)
        for lang in LANGS
    }
    assert all(j.n_tests == n_tests[j.lang] for j in jobs)
    assert len({j.file_name for j in jobs}) == len(jobs)


def test_dry_run_shows_the_plan_and_runs_nothing(tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    res = invoke("grid", str(path), "--dry-run")
    assert res.exit_code == 0, res.output
    assert "noisy-vs-mono/de" in res.output and "to run" in res.output
    assert "10 job(s): 0 done, 10 to run" in res.output
    assert not (tmp_path / "out").exists()


def test_grid_tables_equal_one_direct_run(finished) -> None:
    """Collating per-job records gives exactly what one run over everything gives."""
    path, result = finished
    config = load_grid_config(path)
    direct = run(
        replace(config.run, embeddings=tuple(s.spec for s in config.sources), langs=LANGS),
        show_progress=False,
    )
    key = ["embeddings", "lang", "list_set", "list_id", "test"]
    got = result.results.sort_values(key).reset_index(drop=True)
    want = direct.results.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    got_s = result.summary.sort_values(key[:2] + key[2:3] + key[4:]).reset_index(drop=True)
    want_s = direct.summary.sort_values(key[:2] + key[2:3] + key[4:]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got_s, want_s)
    # reliability across the lists, the three spaces as units: from the collated results
    assert {(r.lang, r.test, r.n_units) for r in result.reliability.itertuples()} == {
        (lang, test, 3) for lang in LANGS for test in ("weat1", "weat2")
    }
    pd.testing.assert_frame_equal(result.reliability, direct.reliability)
    assert (config.output / "reliability.csv").stat().st_size > 0
    out = config.output
    for name in ("results.csv", "summary.csv", "comparisons.csv", "manifest.json"):
        assert (out / name).stat().st_size > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert [j["status"] for j in manifest["jobs"]] == ["ran"] * 10
    assert manifest["experiment"]["sha256"] == config.sha256


@pytest.mark.slow
def test_interrupted_grid_resumes_to_the_same_tables(finished, tmp_path: Path) -> None:
    _, complete = finished
    path = make_grid(tmp_path)
    config = load_grid_config(path)
    done: list[str] = []

    def stop_after_three(job) -> None:
        done.append(job.id)
        if len(done) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_grid(config, show_progress=False, on_job_done=stop_after_three)
    assert len(list((config.output / "jobs").glob("*.json"))) == 3
    assert [p.done for p in plan(config)].count(True) == 3
    assert not (config.output / "results.csv").exists()  # nothing partial

    resumed = run_grid(config, show_progress=False)
    statuses = [j["status"] for j in resumed.manifest["jobs"]]
    assert statuses.count("reused") == 3 and statuses.count("ran") == 7
    _assert_same_outputs(config.output, complete.manifest, finished[0].parent / "out")


@pytest.mark.slow
def test_killed_process_loses_only_the_running_job(finished, tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    jobs_dir = tmp_path / "out" / "jobs"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "weatkit", "grid", str(path), "--no-progress"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(jobs_dir.glob("*.json")):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_done = len(list(jobs_dir.glob("*.json")))
    assert 1 <= n_done < 10, "the process should be killed mid-grid"
    config = load_grid_config(path)
    resumed = run_grid(config, show_progress=False)
    assert [j["status"] for j in resumed.manifest["jobs"]].count("reused") == n_done
    _assert_same_outputs(config.output, None, finished[0].parent / "out")


def _assert_same_outputs(out: Path, _manifest, reference: Path) -> None:
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


@pytest.mark.slow
def test_only_changed_jobs_are_recomputed(tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    config = load_grid_config(path)
    run_grid(config, show_progress=False)
    noisy_de = tmp_path / "noisy.de.vec"
    lines = noisy_de.read_text().splitlines()
    noisy_de.write_text("\n".join([*lines[:-1], lines[-1].rsplit(" ", 1)[0] + " 0.5"]) + "\n")
    todo = [p.job.id for p in plan(config) if not p.done]
    assert todo == ["noisy/de", "noisy-vs-mono/de"]
    # the device does not change numbers; the seed does
    on_cpu = replace(
        config, run=replace(config.run, engine=replace(config.run.engine, device="cpu"))
    )
    assert [p.job.id for p in plan(on_cpu) if not p.done] == todo
    reseeded = replace(config, run=replace(config.run, engine=replace(config.run.engine, seed=4)))
    assert not any(p.done for p in plan(reseeded))
    assert all(not p.done for p in plan(config, force=True))


@pytest.mark.slow
def test_a_failing_job_is_reported_and_the_rest_finish(tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    lines = break_vec(tmp_path / "noisy.de.vec")  # a row one value short
    res = invoke("grid", str(path), "--no-progress")
    assert res.exit_code == 1
    assert "2 job(s) failed (first: noisy/de: " in res.output
    assert "noisy.de.vec, line 4: " in res.output and "has 11 values, expected 12" in res.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [f["id"] for f in manifest["failed"]] == ["noisy/de", "noisy-vs-mono/de"]
    results = pd.read_csv(tmp_path / "out" / "results.csv", keep_default_na=False)
    assert set(zip(results.embeddings, results.lang, strict=True)) == {
        (name, lang) for name in ("mono", "rotated", "noisy") for lang in LANGS
    } - {("noisy", "de")}
    (tmp_path / "noisy.de.vec").write_text("\n".join(lines) + "\n")
    again = run_grid(load_grid_config(path), show_progress=False)
    ran = [j["id"] for j in again.manifest["jobs"] if j["status"] == "ran"]
    assert ran == ["noisy/de", "noisy-vs-mono/de"] and not again.failed
    with pytest.raises(WeatkitError, match="job noisy/de failed"):
        break_vec(tmp_path / "noisy.de.vec")
        run_grid(load_grid_config(path), show_progress=False, fail_fast=True)


@pytest.mark.parametrize(
    ("change", "hide", "message"),
    [
        ({"lists": ["x-weat", "mine.json"]}, None, "lists[2]: no list set or list file"),
        ({}, "noisy.de.vec", "embeddings[3].path: no file for language 'de': "),
        (
            {"isomorphism": {"reference": "fr"}},
            None,
            "embeddings[1].path: no file for language 'fr'",
        ),
        (
            {"isomorphism": {"reference": "en", "words": "words.{lang}.txt"}},
            None,
            "isomorphism.words: no word list for language 'en': ",
        ),
        (
            {"asymmetry": {"counts": "corpus.{lang}.txt"}},
            None,
            "asymmetry.counts: no corpus for language 'en': ",
        ),
        ({"languages": ["en", "zz"]}, None, "embeddings[1].path: no file for language 'zz'"),
        (
            {"embeddings": [{"name": "m", "model": "./no-model", "layers": [0]}]},
            None,
            "embeddings[1].model: no model directory ",
        ),
    ],
)
def test_a_missing_input_is_reported_before_any_job_runs(
    tmp_path: Path, change, hide, message
) -> None:
    """Every file the experiment reads is checked before the first job: the message names the
    key, and nothing is computed or written (no job records, no tables)."""
    path = make_grid(tmp_path, **change)
    if hide:
        (tmp_path / hide).unlink()
    config = load_grid_config(path)
    with pytest.raises(WeatkitError, match=re.escape(message)) as err:
        run_grid(config, show_progress=False)
    assert str(path) in str(err.value)
    assert not config.output.exists()
    res = invoke("grid", str(path), "--dry-run")
    assert res.exit_code == 1 and message in res.output


def test_dry_run_lists_every_missing_input_after_the_whole_plan(tmp_path: Path) -> None:
    """Two missing vector files: the dry run prints the whole plan, then both under "missing
    inputs:", and exits 1 with a one-line error; a real run names the first and the count."""
    path = make_grid(tmp_path)
    (tmp_path / "noisy.de.vec").unlink()
    (tmp_path / "rotated.en.vec").unlink()
    res = invoke("grid", str(path), "--dry-run")
    assert res.exit_code == 1
    assert "10 job(s): 0 done, 10 to run" in res.output and "noisy-vs-mono/de" in res.output
    lines = res.output.splitlines()
    start = lines.index("missing inputs:")
    assert lines[start + 1 : start + 3] == [
        f"  {path}: embeddings[2].path: no file for language 'en': "
        f"{tmp_path / 'rotated.en.vec'} not found",
        f"  {path}: embeddings[3].path: no file for language 'de': "
        f"{tmp_path / 'noisy.de.vec'} not found",
    ]
    error = "weatkit: error: 2 missing inputs (listed above): the grid cannot run"
    assert lines[start + 3] == error
    with pytest.raises(WeatkitError) as err:
        run_grid(load_grid_config(path), show_progress=False)
    assert str(err.value).endswith(
        "rotated.en.vec not found (and 1 more missing input; --dry-run lists them)"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"min_coverage": 5}, "min_coverage: must be between 0 and 1, got 5.0"),
        ({"equalize": "bogus"}, "equalize: must be one of none, truncate, subsample, got 'bogus'"),
    ],
)
def test_bad_run_values_fail_when_the_file_is_read(tmp_path: Path, change, message) -> None:
    """Checked before any job, naming the file's key (not a flag); no header-only tables."""
    path = make_grid(tmp_path, **change)
    res = invoke("grid", str(path), "--no-progress")
    assert res.exit_code == 1
    assert f"{path}: {message}" in res.output and "--" not in res.output
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_second_grid_on_the_same_output_stops_at_once(tmp_path: Path) -> None:
    """The output directory is locked for the run; the refusal names it and the holder's pid."""
    path = make_grid(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from weatkit._io.lock import directory_lock\n"
            "with directory_lock(sys.argv[1], 'test'):\n"
            "    print('locked', flush=True); sys.stdin.read()",
            str(out),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        started = time.monotonic()
        res = invoke("grid", str(path), "--no-progress")
        assert res.exit_code == 1
        assert f"{out} is in use by another weatkit grid (pid {holder.pid})" in res.output
        assert len(res.output.strip().splitlines()) == 1
        assert time.monotonic() - started < 30
        assert not (out / "jobs").exists() and not (out / "results.csv").exists()
    finally:
        holder.communicate("")
    seen: list[str] = []

    def lock_holder(job) -> None:
        seen.append((out / ".weatkit.lock").read_text().strip())

    run_grid(load_grid_config(path), show_progress=False, on_job_done=lock_holder)
    assert seen and set(seen) == {str(os.getpid())}


def test_a_grid_that_writes_nothing_leaves_no_output_directory(tmp_path: Path) -> None:
    """The lock creates the output directory; a run that fails before writing removes it."""
    path = make_grid(tmp_path)
    break_vec(tmp_path / "mono.en.vec")
    with pytest.raises(WeatkitError, match="job mono/en failed"):
        run_grid(load_grid_config(path), show_progress=False, fail_fast=True)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------------
# comparisons to a baseline


def test_a_rotated_space_differs_from_its_baseline_by_zero(finished) -> None:
    _, result = finished
    rotated = result.comparisons[result.comparisons.embeddings == "rotated"]
    assert len(rotated) == len(result.results[result.results.embeddings == "mono"])
    assert np.allclose(rotated.difference, 0.0, atol=1e-6)
    assert np.allclose(rotated[["difference_ci_low", "difference_ci_high"]], 0.0, atol=1e-6)


@pytest.mark.slow
def test_paired_difference_and_ci_equal_a_slow_computation(finished) -> None:
    path, result = finished
    root = path.parent
    noisy = result.comparisons[result.comparisons.embeddings == "noisy"]
    rows = noisy[noisy.list_set == "x-weat"].to_dict("records")
    assert rows
    config = load_grid_config(path)
    for row in rows:
        lang = row["lang"]
        (test,) = [t for t in select_lists(["x-weat"], (lang,), tests=[row["test"]]).tests]
        spaces = [load_static(root / f"{n}.{lang}.vec", words=None) for n in ("noisy", "mono")]
        sets = {k: [w for w in test.sets()[k] if all(w in wv for wv in spaces)] for k in "XYAB"}
        vecs = [{k: list(wv.lookup(sets[k]).astype(np.float64)) for k in "XYAB"} for wv in spaces]
        d = [naive.effect_size(v["X"], v["Y"], v["A"], v["B"]) for v in vecs]
        assert row["effect_size"] == pytest.approx(d[0], abs=1e-9)
        assert row["baseline_effect_size"] == pytest.approx(d[1], abs=1e-9)
        sizes = tuple(len(sets[k]) for k in "XYAB")
        assert (row["n_x"], row["n_y"], row["n_a"], row["n_b"]) == sizes
        idx = bootstrap_indices(sizes, config.run.engine.n_bootstrap, config.run.engine.seed)
        deltas = []
        for r in range(config.run.engine.n_bootstrap):
            pick = [{k: [v[k][i] for i in idx[k][r]] for k in "XYAB"} for v in vecs]
            d_r = [naive.effect_size(p["X"], p["Y"], p["A"], p["B"]) for p in pick]
            deltas.append(d_r[0] - d_r[1])
        low, high = np.nanquantile(deltas, [0.025, 0.975])
        assert row["difference_ci_low"] == pytest.approx(low, abs=1e-9)
        assert row["difference_ci_high"] == pytest.approx(high, abs=1e-9)


def test_model_and_static_baselines_cannot_be_mixed(tmp_path: Path) -> None:
    path = make_grid(
        tmp_path,
        embeddings=[
            {"name": "mono", "path": "mono.{lang}.vec"},
            {"name": "M", "model": str(tmp_path), "layers": [0], "baseline": "mono"},
        ],
    )
    with pytest.raises(WeatkitError, match="baseline 'mono' must also be a model"):
        plan(load_grid_config(path))


@pytest.mark.slow
def test_grid_cli_end_to_end(tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    res = invoke("grid", str(path), "--no-progress", "--out", str(tmp_path / "elsewhere"))
    assert res.exit_code == 0, res.output
    assert "10 job(s) run, 0 reused, 0 failed" in res.output
    assert "Δd to the baseline" in res.output
    again = invoke("grid", str(path), "--no-progress", "--out", str(tmp_path / "elsewhere"))
    assert "0 job(s) run, 10 reused" in again.output
    shutil.rmtree(tmp_path / "elsewhere" / "jobs")
    dry = invoke("grid", str(path), "--dry-run", "--out", str(tmp_path / "elsewhere"))
    assert "10 to run" in dry.output


def test_grid_outputs_feed_export_plot_and_asymmetry(finished, tmp_path: Path) -> None:
    path, result = finished
    out = load_grid_config(path).output
    exported = invoke("export", str(out), "--table", "comparisons", "--format", "json")
    assert exported.exit_code == 0, exported.output
    back = pd.DataFrame(json.loads(exported.output))
    assert np.allclose(back.difference, result.comparisons.difference, rtol=0, atol=1e-12)
    figure = tmp_path / "forest.png"
    plotted = invoke("plot", str(out), "--kind", "forest", "--out", str(figure))
    assert plotted.exit_code == 0, plotted.output
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    counted = invoke("asymmetry", str(out), "--out", str(tmp_path))
    assert counted.exit_code == 0, counted.output
    table = pd.read_csv(tmp_path / "asymmetry.csv")
    assert len(table) == len(result.results)


def _expected_skip_lines(out: Path, min_coverage: float) -> list[str]:
    """Counted by a plain loop over manifest.json's skipped tests and the tables that ran."""
    skipped = json.loads((out / "manifest.json").read_text())["skipped"]
    results = pd.read_csv(out / "results.csv")
    comparisons = pd.read_csv(out / "comparisons.csv")
    comparisons["embeddings"] = comparisons["embeddings"] + " vs " + comparisons["baseline"]
    lines = []
    for ran, skips in (
        (results, [s for s in skipped if "baseline" not in s]),
        (comparisons, [{**s, "embeddings": f"{s['embeddings']} vs {s['baseline']}"}
                       for s in skipped if "baseline" in s]),
    ):  # fmt: skip
        for key in sorted({(s["embeddings"], s["lang"]) for s in skips}):
            mine = [s for s in skips if (s["embeddings"], s["lang"]) == key]
            done = ran[(ran.embeddings == key[0]) & (ran.lang == key[1])]
            lists = {s["list_id"] for s in mine}
            count = f"{len(mine)} of {len(mine) + len(done)} tests"
            count += f" ({len(lists)} of {len(lists | set(done.list_id))} lists)"
            if done.empty:
                count = f"all {len(mine)} tests ({len(lists)} list{'s' * (len(lists) != 1)})"
            lines.append(f"skipped: {key[0]}/{key[1]}: {count}, coverage below "
                         f"{100 * min_coverage:.0f}%")  # fmt: skip
    return lines


def test_grid_prints_skips_per_language_as_run_does(tmp_path: Path) -> None:
    """``noisy`` lacks every 17th word: at 95% coverage some of its tests (and its paired
    comparisons with ``mono``) are skipped, and each embeddings × language gets one line."""
    path = make_grid(tmp_path, min_coverage=0.95, engine={"n_bootstrap": 0, "n_permutations": 0})
    res = invoke("grid", str(path), "--no-progress")
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    skipped = json.loads((out / "manifest.json").read_text())["skipped"]
    assert {s["embeddings"] for s in skipped} == {"noisy"}
    assert any("baseline" in s for s in skipped) and any("baseline" not in s for s in skipped)
    lines = [line for line in res.stderr.splitlines() if line.startswith("skipped:")]
    assert lines == _expected_skip_lines(out, 0.95)
    assert "skipped: noisy/en: 11 of 12 tests (6 of 6 lists), coverage below 95%" in lines
    assert {line.split(":")[1].strip() for line in lines} == {
        "noisy/de", "noisy/en", "noisy vs mono/de", "noisy vs mono/en"
    }  # fmt: skip
    assert "missing" not in res.stderr  # no reasons without --verbose
    assert f"{len(skipped)} test(s) skipped (reasons in manifest.json; --verbose" in res.stderr
    loud = invoke("grid", str(path), "--no-progress", "--verbose")
    reasons = [line for line in loud.stderr.splitlines() if line.startswith("skipped:")]
    assert reasons == [f"skipped: {s['reason']}" for s in skipped]


def test_a_grid_that_computes_nothing_exits_1_with_the_reason(tmp_path: Path) -> None:
    """RIPA on lists without definitional pairs, in every job: the grid wrote its (empty)
    tables and the skip reasons, and says nothing was computed (issue 37 §2: it exited 0)."""
    path = make_grid(tmp_path, metrics=["ripa"], reliability=False)
    res = invoke("grid", str(path), "--no-progress")
    assert res.exit_code == 1, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("weatkit: error: nothing computed: every test of every job was skipped")
    assert re.search(r"skipped: ripa on \d+ test\(s\): no definitional pairs", res.output)
