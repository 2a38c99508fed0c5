"""Failures a user can cause end as one-line errors naming the culprit, never as tracebacks
(issue 16 item 1): truncated weights, absurd resample counts, overflowing GEST scores, a
summary cell that is not a number; a grid records any failing job and finishes the others; any
other exception is reported by the CLI as a one-line internal error."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.grid_fixtures import make_grid
from tests.tiny_models import make_bert, make_gest_mlm
from weatkit.cli import main
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.errors import ConfigError, ModelError, WeatkitError
from weatkit.gest.aggregate import aggregate_scores
from weatkit.grid import load_grid_config, run_grid
from weatkit.grid.executors import LocalExecutor
from weatkit.grid.jobs import plan_jobs
from weatkit.models.handle import ModelHandle
from weatkit.report.latex import latex_tables
from weatkit.stats.resampling import (
    bootstrap_draws,
    check_plan_size,
    one_sample_bootstrap,
    permutation_plan,
    physical_memory,
)

HUGE = 10**12
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env=env)


def assert_one_line_error(res, *fragments: str) -> None:
    assert res.exit_code == 1, res.output
    assert isinstance(res.exception, SystemExit) and "Traceback" not in res.output
    errors = [line for line in res.output.splitlines() if line.startswith("weatkit: error:")]
    assert len(errors) == 1, res.output
    for fragment in fragments:
        assert fragment in errors[0], res.output


# ------------------------------------------------------------------------- truncated weights


def _truncate(model_dir: Path) -> Path:
    weights = model_dir / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])  # an interrupted download
    return weights


@pytest.fixture(scope="module")
def truncated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("truncated")
    bert = make_bert(root / "bert")
    mlm = make_gest_mlm(root / "mlm")
    _truncate(bert)
    _truncate(mlm)
    return {"bert": bert, "mlm": mlm}


def test_truncated_weights_are_a_model_error_naming_the_file(truncated) -> None:
    with pytest.raises(ModelError, match=r"model\.safetensors: .*incomplete metadata.*truncated"):
        ModelHandle(str(truncated["bert"])).network()


def test_embed_with_truncated_weights(truncated, tmp_path: Path) -> None:
    out = tmp_path / "v.{layer}.vec"
    res = invoke("embed", "--lists", "weat", "--lang", "en", "--test", "weat1",
                 "--model", str(truncated["bert"]), "--layer", "0", "--out", str(out),
                 "--no-progress", "--no-cache")  # fmt: skip
    assert_one_line_error(res, str(truncated["bert"] / "model.safetensors"), "truncated")


def test_crows_with_truncated_weights(truncated, tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    pd.DataFrame(
        {"sent_more": ["He is here"], "sent_less": ["She is here"],
         "stereo_antistereo": ["stereo"], "bias_type": ["gender"]}
    ).to_csv(data, index=False)  # fmt: skip
    res = invoke("crows", "--model", str(truncated["mlm"]), "--data", str(data),
                 "--bootstrap", "10", "--no-progress", "--no-cache")  # fmt: skip
    assert_one_line_error(res, str(truncated["mlm"] / "model.safetensors"))


def test_grid_with_truncated_weights_records_the_job_and_finishes(truncated, tmp_path) -> None:
    path = make_grid(
        tmp_path,
        embeddings=[
            {"name": "M", "model": str(truncated["bert"]), "layers": [0]},
            {"name": "mono", "path": "mono.{lang}.vec"},
        ],
        contextual={"cache": False},
    )
    result = run_grid(load_grid_config(path), show_progress=False)
    assert [f["job"] for f in result.failed] == ["M/en", "M/de"]
    assert all("model.safetensors" in f["error"] for f in result.failed)
    results = pd.read_csv(tmp_path / "out" / "results.csv", keep_default_na=False)
    assert set(results.embeddings) == {"mono"} and set(results.lang) == {"en", "de"}


def test_grid_records_any_exception_of_a_job(tmp_path: Path) -> None:
    config = load_grid_config(make_grid(tmp_path))
    jobs = [j for j in plan_jobs(config) if j.kind == "weat"][:3]

    def execute(config, job, extractors: ExtractorPool):
        if job is jobs[1]:
            raise ZeroDivisionError("float division by zero\nsecond line")
        return {"results": [], "timings_s": {}}

    outcomes = list(LocalExecutor(execute=execute).run(config, jobs))
    assert [o.job for o in outcomes] == jobs
    assert [o.error for o in outcomes] == [None, "ZeroDivisionError: float division by zero", None]


# -------------------------------------------------------------- the CLI's last line of defence


def test_an_unexpected_exception_is_one_line_internal_error(monkeypatch, tmp_path) -> None:
    import weatkit.cli.export as export

    def broken(path):
        raise KeyError("boom")

    monkeypatch.setattr(export, "read_run_dir", broken)
    res = invoke("export", str(tmp_path), "--format", "csv", env={"WEATKIT_DEBUG": ""})
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "weatkit: internal error: KeyError: 'boom' (please report; WEATKIT_DEBUG=1 shows the "
        "traceback)"
    ]
    res = invoke("export", str(tmp_path), "--format", "csv", env={"WEATKIT_DEBUG": "1"})
    assert isinstance(res.exception, KeyError)


# ------------------------------------------------------------------- absurd resample counts


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--lists", "x-weat", "--lang", "en", "--test", "weat1", "--bootstrap", str(HUGE)),
        ("run", "--lists", "x-weat", "--lang", "en", "--test", "weat1",
         "--permutations", str(HUGE)),
        ("crows", "--scores", "none.csv", "--bootstrap", str(HUGE)),
        ("gest", "--scores", "none.csv", "--bootstrap", str(HUGE)),
    ],
)  # fmt: skip
def test_absurd_resample_counts_are_refused_up_front(args: tuple[str, ...]) -> None:
    res = invoke(*args)
    assert res.exit_code in (1, 2), res.output  # 2: click's usage error
    assert "--bootstrap" in res.output or "--permutations" in res.output
    assert "1,000,000,000,000 resamples would need at least" in res.output
    assert "TiB of memory" in res.output or "GiB of memory" in res.output


def test_absurd_counts_in_grid_and_compare_files(tmp_path: Path) -> None:
    path = make_grid(tmp_path, engine={"n_bootstrap": HUGE})
    res = invoke("grid", str(path), "--no-progress")
    assert res.exit_code == 1 and "1,000,000,000,000 resamples" in res.output
    compare = tmp_path / "compare.yaml"
    compare.write_text(
        f"output: out\nlanguages: [en]\nmodels: [{{name: A, model: {tmp_path}}}]\n"
        f"crows: {{}}\ncorrelation: {{n_bootstrap: {HUGE}}}\n"
    )
    res = invoke("compare", str(compare), "--no-progress")
    assert res.exit_code == 1 and "1,000,000,000,000 resamples" in res.output


@pytest.mark.parametrize(
    "plan",
    [
        lambda: next(bootstrap_draws([5, 7], HUGE, seed=0, scheme="weat")),
        lambda: next(bootstrap_draws([5], HUGE, seed=0, scheme="stratified")),
        lambda: one_sample_bootstrap(40, HUGE, seed=0),
        lambda: permutation_plan(30, 30, HUGE, 0, 0, (30, 30, 5, 5)),
        lambda: permutation_plan(30, 30, 10, HUGE * HUGE, 0, (30, 30, 5, 5)),
    ],
)
def test_every_plan_refuses_before_allocating(plan) -> None:
    with pytest.raises(ConfigError, match=r"resamples of \d+ items would need [\d.]+ [TP]iB"):
        plan()


@FUZZ
@given(n=st.integers(0, 10**15), sizes=st.lists(st.integers(1, 10**4), min_size=1, max_size=4))
def test_plan_size_check_is_the_memory_bound(n: int, sizes: list[int]) -> None:
    needed = 16 * n * sum(sizes)
    if needed > physical_memory():
        with pytest.raises(ConfigError, match="choose fewer"):
            check_plan_size(n, sizes)
    else:
        check_plan_size(n, sizes)


# --------------------------------------------------------------------- GEST overflowing rates


def _gest_scores(values: list[float]) -> pd.DataFrame:
    n = len(values)
    return pd.DataFrame(
        {"sample_id": range(n), "stereotype": [i % 16 + 1 for i in range(n)], "score": values}
    )


@pytest.mark.parametrize(("value", "n_bootstrap"), [(1e300, 50), (800.0, 0)])
def test_overflowing_gest_scores_are_named(value: float, n_bootstrap: int) -> None:
    with pytest.raises(WeatkitError, match=r"scores too large: q_i = exp\(.*sample 0"):
        aggregate_scores(_gest_scores([value] * 32), n_bootstrap=n_bootstrap)


@FUZZ
@given(
    values=st.lists(
        st.floats(-1e308, 1e308, allow_nan=False) | st.floats(-5, 5), min_size=16, max_size=48
    ),
    base=st.sampled_from(["10", "e"]),
    n_bootstrap=st.sampled_from([0, 20]),
)
def test_fuzz_gest_scores_give_finite_rates_or_one_line_errors(values, base, n_bootstrap) -> None:
    try:
        with np.errstate(all="ignore"):
            summary = aggregate_scores(
                _gest_scores(values), log_base=base, n_bootstrap=n_bootstrap
            ).summary
    except WeatkitError as err:
        assert "\n" not in str(err) and "scores too large" in str(err)
        return
    for col in ("q_f", "q_m", "g_s", "g_s_geometric"):
        assert not math.isinf(summary[col].iloc[0])


# -------------------------------------------------------------- export --format latex, bad cell


def test_latex_export_names_a_cell_that_is_not_a_number(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = invoke("run", "--lists", "x-weat", "--lang", "en", "--test", "weat1",
                 "--bootstrap", "20", "--permutations", "20", "--out", str(out))  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = out / "summary.csv"
    rows = list(csv.reader(summary.open()))
    rows[1][rows[0].index("effect_size")] = "abc"
    with summary.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    res = invoke("export", str(out), "--format", "latex")  # the run-directory reader sees it
    assert_one_line_error(res, f"{summary}: line 2: column effect_size: 'abc' is not a number")
    table = pd.read_csv(summary, keep_default_na=False)  # a table handed to the library as is
    with pytest.raises(WeatkitError) as info:
        latex_tables(table, source=str(summary))
    assert str(info.value) == (
        f"{summary}: line 2 (glove-6b-50d, en): column 'effect_size' is not a number: 'abc'"
    )
    shutil.rmtree(out)
