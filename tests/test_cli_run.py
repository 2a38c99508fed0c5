"""``weatkit run`` end to end: GloVe default, .vec files, outputs, formats and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests import naive_weat as naive
from weatkit.cli import main
from weatkit.embeddings.default import default_files
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.report.tables import RESULT_COLUMNS, SUMMARY_COLUMNS

FAST = ["--bootstrap", "200", "--permutations", "200", "--no-progress"]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def glove() -> dict[str, np.ndarray]:
    """The GloVe 6B 50d rows read straight from the package files (independent of the loader)."""
    matrix_path, index_path = default_files()
    words = pd.read_parquet(index_path).iloc[:, 0].tolist()
    matrix = np.load(matrix_path, mmap_mode="r")
    return {"words": words, "matrix": matrix}


def write_vec(path: Path, vocab: dict[str, np.ndarray], header: bool = True) -> Path:
    lines = [f"{len(vocab)} {len(next(iter(vocab.values())))}"] if header else []
    lines += [w + " " + " ".join(repr(float(x)) for x in v) for w, v in vocab.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_caweat_en_on_glove_default(tmp_path: Path, glove) -> None:
    out = tmp_path / "run"
    res = invoke("run", "--lists", "ca-weat", "--lang", "en", "--out", str(out), *FAST)
    assert res.exit_code == 0, res.output
    results = pd.read_csv(out / "results.csv")
    summary = pd.read_csv(out / "summary.csv")
    manifest = json.loads((out / "manifest.json").read_text())
    assert list(results.columns) == RESULT_COLUMNS
    assert list(summary.columns) == SUMMARY_COLUMNS
    assert set(results.list_set) == {"ca-weat:v1"} and set(results.lang) == {"en"}
    assert len(results) + len(manifest["skipped"]) == 10  # 5 English lists x 2 tests
    assert manifest["config"]["engine"]["n_bootstrap"] == 200
    assert manifest["seed"] == 0

    # every row against the formula on vectors read independently from the package files
    index = {w: i for i, w in enumerate(glove["words"])}
    tests = select_lists(["ca-weat"], ["en"], normalization=Normalization(lower=True)).tests
    by_key = {(t.list_id, t.test): t for t in tests}
    for row in results.itertuples():
        t = by_key[(row.list_id, row.test)]
        sets = [
            np.asarray([glove["matrix"][index[w]] for w in items if w in index], dtype=np.float64)
            for items in (t.X, t.Y, t.A, t.B)
        ]
        assert row.statistic == pytest.approx(naive.statistic(*sets), abs=1e-6)
        assert row.effect_size == pytest.approx(naive.effect_size(*sets, ddof=1), abs=1e-6)
        assert row.effect_size_ci_low < row.effect_size < row.effect_size_ci_high
        assert 0 < row.p_value <= 1

    # the CA-WEAT summary is the median over the lists of each test
    for row in summary.itertuples():
        values = results[results.test == row.test].effect_size
        assert row.n_lists == len(values)
        assert row.effect_size == pytest.approx(np.median(values))
        assert row.ci_method == "median-order-statistic"


def test_vec_file_gives_the_same_numbers_as_the_default(tmp_path: Path, glove) -> None:
    index = {w: i for i, w in enumerate(glove["words"])}
    tests = select_lists(["weat"], normalization=Normalization(lower=True)).tests
    vocab = sorted(set().union(*(t.vocabulary() for t in tests)) & set(index))
    vec = write_vec(tmp_path / "small.vec", {w: glove["matrix"][index[w]] for w in vocab})
    args = ["run", "--lists", "weat", "--format", "csv", *FAST]
    default = pd.read_csv(io.StringIO(invoke(*args).stdout))
    from_file = pd.read_csv(io.StringIO(invoke(*args, "--embeddings", f"G={vec}").stdout))
    assert list(from_file.embeddings.unique()) == ["G"]
    cols = ["statistic", "effect_size", "effect_size_ci_low", "effect_size_ci_high", "p_value"]
    np.testing.assert_allclose(from_file[cols].to_numpy(), default[cols].to_numpy(), atol=1e-6)


def test_language_template_and_several_embeddings(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    tests = select_lists(["x-weat"], ["en", "de"]).tests
    for lang in ("en", "de"):
        vocab = set().union(*(t.vocabulary() for t in tests if t.lang == lang))
        write_vec(tmp_path / f"toy.{lang}.vec", {w: rng.normal(size=8) for w in sorted(vocab)})
    res = invoke(
        "run",
        "--lists",
        "x-weat",
        "--lang",
        "en,de",
        "--format",
        "json",
        "--embeddings",
        f"T={tmp_path}/toy.{{lang}}.vec",
        "--embeddings",
        f"U={tmp_path}/toy.en.vec",
        *FAST,
    )
    assert res.exit_code == 0, res.output
    rows = pd.DataFrame(json.loads(res.stdout))
    assert set(zip(rows.embeddings, rows.lang, strict=True)) == {
        ("T", "en"),
        ("T", "de"),
        ("U", "en"),
    }


def test_switching_resampling_off_leaves_columns_empty() -> None:
    res = invoke(
        "run",
        "--lists",
        "weat",
        "--bootstrap",
        "0",
        "--permutations",
        "0",
        "--format",
        "csv",
        "--no-progress",
    )
    df = pd.read_csv(io.StringIO(res.stdout))
    assert df[["statistic_ci_low", "effect_size_ci_high", "p_value"]].isna().all().all()
    assert df.effect_size.notna().all()


@pytest.mark.parametrize("fmt", ["json", "parquet", "markdown"])
def test_output_formats(fmt: str) -> None:
    res = CliRunner().invoke(
        main, ["run", "--lists", "weat", "--format", fmt, "--table", "summary", *FAST]
    )
    assert res.exit_code == 0
    if fmt == "parquet":
        df = pd.read_parquet(io.BytesIO(res.stdout_bytes))
        assert list(df.columns) == SUMMARY_COLUMNS and len(df) == 2
    elif fmt == "json":
        assert [r["test"] for r in json.loads(res.stdout)] == ["weat1", "weat2"]
    else:
        assert res.stdout.splitlines()[0].startswith("| embeddings")


def test_readable_table_by_default() -> None:
    res = invoke("run", "--lists", "weat", *FAST)
    assert "WEAT summary" in res.stdout and "weat2" in res.stdout


def test_compat_preset_sets_ddof_but_explicit_option_wins() -> None:
    base = ["run", "--lists", "weat", "--format", "json", *FAST]
    row = json.loads(invoke(*base).stdout)[0]
    d1, n = row["effect_size"], row["n_x"] + row["n_y"]
    d0 = json.loads(invoke(*base, "--compat", "wefe").stdout)[0]["effect_size"]
    d_explicit = json.loads(invoke(*base, "--compat", "wefe", "--ddof", "1").stdout)[0]
    # d0 = d1 * sqrt(n / (n - 1)) with n = |X| + |Y|
    assert d0 == pytest.approx(d1 * np.sqrt(n / (n - 1)), rel=1e-9)
    assert d_explicit["effect_size"] == pytest.approx(d1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--embeddings", "E=/nonexistent/vectors.vec"], "not found"),
        (["--lists", "no-such-set"], "no-such-set"),
        (["--lang", "xx"], "xx"),
        (["--device", "cuda:7"], "CUDA"),
        (["--min-coverage", "1.5"], "min-coverage"),
        # an empty selection is an error, never the default (issue 37 §2)
        (["--lang", ""], "--lang: '' names nothing: give at least one, or leave --lang out"),
        (["--test", ","], "--test: ',' names nothing"),
        (["--lists", ""], "--lists: '' names nothing"),
        (["--test", "weat1", "--test", ""], "--test: '' names nothing"),
        (["--pool", " , "], "--pool: ' , ' names nothing"),
        (["--iso-measures", ""], "--iso-measures: '' names nothing"),
        (["--iso-gh-dims", ""], "--iso-gh-dims: expected integers such as 0,1, not ''"),
        (["--iso-gh-dims", ","], "--iso-gh-dims: expected integers such as 0,1, not ','"),
        # a table that was not asked for, or one --format does not print (before any work)
        (["--table", "influence"], "--table influence needs --influence (and weat in --metrics)"),
        (["--table", "null", "--format", "csv"], "--table null needs --null K (and weat in"),
        (["--table", "pooled", "--format", "csv"], "--table pooled needs --pool LEVELS"),
        (["--table", "correlations", "--format", "csv"], "--table correlations needs --isomor"),
        (
            ["--table", "association_influence", "--metrics", "weat,rnd", "--format", "csv"],
            "--table association_influence needs --metrics with a metric other than weat and "
            "--influence",
        ),
        (
            ["--influence", "--table", "influence"],
            "--table influence picks the table --format prints: add --format "
            "(csv|json|parquet|markdown); --out writes every table",
        ),
    ],
)
def test_bad_input_one_line_error_and_no_output(tmp_path: Path, args, message) -> None:
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["run", "--lists", "weat", *FAST, "--out", str(out), *args])
    assert res.exit_code == 1
    assert message in res.stderr and "Traceback" not in res.output
    assert res.stderr.strip().count("\n") == 0
    assert not out.exists() or not any(out.iterdir())


def test_malformed_vector_line_names_the_line(tmp_path: Path) -> None:
    vec = tmp_path / "bad.vec"
    vec.write_text("2 3\nrose 0.1 0.2 0.3\ntulip 0.1 oops 0.3\n", encoding="utf-8")
    res = CliRunner().invoke(main, ["run", "--lists", "weat", "--embeddings", f"B={vec}", *FAST])
    assert res.exit_code == 1
    assert "line 3" in res.stderr and "bad.vec" in res.stderr


def test_low_coverage_is_skipped_or_fatal_with_strict(tmp_path: Path) -> None:
    vec = write_vec(tmp_path / "tiny.vec", {"rose": np.ones(3), "ant": -np.ones(3)})
    res = CliRunner().invoke(main, ["run", "--lists", "weat", "--embeddings", f"T={vec}", *FAST])
    assert res.exit_code == 1 and "nothing to run" in res.stderr and "coverage" in res.stderr
    res = CliRunner().invoke(
        main, ["run", "--lists", "weat", "--embeddings", f"T={vec}", "--strict", *FAST]
    )
    assert res.exit_code == 1 and "coverage" in res.stderr


def test_lists_command_shows_sets_and_languages() -> None:
    res = invoke("lists")
    assert res.exit_code == 0 and "ca-weat:v3" in res.stdout
    res = invoke("lists", "ca-weat")
    assert res.exit_code == 0 and "208 tests" in res.stdout and "en_US1" in res.stdout


def test_in_memory_keyed_vectors_from_python() -> None:
    from gensim.models import KeyedVectors

    from weatkit.engine.weat import EngineOptions
    from weatkit.pipeline import RunConfig, run

    rng = np.random.default_rng(1)
    test = select_lists(["weat"], tests=["weat1"]).tests[0]
    vocab = sorted(test.vocabulary())
    kv = KeyedVectors(vector_size=6)
    kv.add_vectors(vocab, rng.normal(size=(len(vocab), 6)).astype(np.float32))
    out = run(
        RunConfig(
            lists=("weat",),
            tests=("weat1",),
            embeddings=(kv,),
            engine=EngineOptions(n_bootstrap=0, n_permutations=0),
        )
    )
    row = out.results.iloc[0]
    sets = [
        np.asarray([kv[w] for w in items], dtype=np.float64)
        for items in (test.X, test.Y, test.A, test.B)
    ]
    assert row.embeddings == "keyed-vectors"
    assert row.effect_size == pytest.approx(naive.effect_size(*sets, ddof=1), abs=1e-6)
    assert list(out.manifest["config"]["embeddings"]) == ["<in-memory KeyedVectors>"]


def test_duplicate_items_are_counted_and_shown_with_verbose(tmp_path: Path) -> None:
    lists = tmp_path / "dups.yaml"
    lists.write_text(
        "tests:\n  - {test: weat1, lang: en, list_id: dup, X: [rose, tulip, rose, lily],\n"
        "     Y: [ant, wasp, flea], A: [love, peace, happy], B: [hatred, war, ugly]}\n",
        encoding="utf-8",
    )
    args = ["run", "--lists", str(lists), "--format", "csv", *FAST]
    quiet = CliRunner().invoke(main, args)
    assert quiet.exit_code == 0
    assert "1 per-item notes" in quiet.stderr and "'rose'" not in quiet.stderr
    assert pd.read_csv(io.StringIO(quiet.stdout)).n_x.tolist() == [3]
    loud = CliRunner().invoke(main, [*args, "--verbose"])
    assert "duplicate item 'rose' removed" in loud.stderr


def test_out_refuses_a_previous_run_unless_forced(tmp_path: Path) -> None:
    """``--out DIR`` holding a run (its manifest.json) is refused before any work; --force
    overwrites it."""
    out = tmp_path / "run"
    args = ["run", "--lists", "weat", "--test", "weat1", *FAST, "--out", str(out)]
    assert invoke(*args).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = CliRunner().invoke(main, [*args, "--seed", "5", "--embeddings", "E=/nonexistent.vec"])
    assert again.exit_code == 1
    assert again.stderr.strip() == (
        f"weatkit: error: {out} holds a previous run ({out / 'manifest.json'}): give --force "
        "to overwrite it, or another --out"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    forced = invoke(*args, "--seed", "5", "--force")
    assert forced.exit_code == 0, forced.output
    assert json.loads((out / "manifest.json").read_text())["seed"] == 5
    assert (out / "summary.csv").read_bytes() != before["summary.csv"]
    other = tmp_path / "not-a-run"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert invoke(*args[:-1], str(other)).exit_code == 0
    assert (other / "notes.txt").read_text() == "mine" and (other / "results.csv").exists()
    alone = CliRunner().invoke(main, ["run", "--lists", "weat", "--force"])
    assert alone.exit_code == 1 and "--force is for --out DIR" in alone.stderr
