"""``weatkit export`` and the run-directory reader: every format gives the run's numbers back."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.conftest import shared_data_dir
from tests.test_cli_run import write_vec
from weatkit.asymmetry import asymmetry_correlations
from weatkit.cli import main
from weatkit.cli.export import export_command
from weatkit.errors import WeatkitError
from weatkit.lists.sources import select_lists
from weatkit.report.latex import escape_latex, latex_tables
from weatkit.report.run_dir import TABLE_NAMES, read_run_dir, read_table
from weatkit.validity import parallel_forms

LANGS = ["de", "it", "en"]
TOY = "toy_vec"  # an underscore, to check LaTeX escaping
FAST = ["--bootstrap", "50", "--permutations", "50", "--no-progress", "--device", "cpu"]


def make_run_dir(root: Path) -> Path:
    """A real ``weatkit run --isomorphism en --pool lists,languages --metrics weat,rnd`` on
    GloVe and random
    per-language toy vectors (every list item present, so German and Italian run), plus
    grid-style comparisons.csv,
    asymmetry.csv and asymmetry_correlations.csv built from its results, and reliability.csv
    from its results and a third, made-up space."""
    if shared_data_dir() is None:
        pytest.skip("third-party data not found: set WEATKIT_DATA or check out ../shared/data")
    rng = np.random.default_rng(0)
    tests = select_lists(["ca-weat", "x-weat"], LANGS).tests
    for lang in LANGS:
        vocab = sorted(set().union(*(t.vocabulary() for t in tests if t.lang == lang)))
        vocab += [f"filler{i}" for i in range(120)]  # words for the isomorphism measures
        write_vec(root / f"toy.{lang}.vec", {w: rng.standard_normal(8) for w in vocab})
    out = root / "run"
    args = ["run", "--lists", "ca-weat", "--lists", "x-weat", "--lang", ",".join(LANGS)]
    args += ["--embeddings", "glove-6b-50d", "--embeddings", f"{TOY}={root}/toy.{{lang}}.vec"]
    args += ["--isomorphism", "en", "--iso-n-words", "100", "--out", str(out), *FAST]
    args += ["--pool", "lists,languages"]  # pooled.csv
    args += ["--influence", "--null", "20"]  # influence.csv, null.csv
    args += ["--metrics", "weat,rnd"]  # association.csv, association_items.csv
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = pd.read_csv(out / "results.csv", dtype={"list_id": str})
    toy = results[results["embeddings"] == TOY].reset_index(drop=True)
    counts = rng.integers(1_000, 100_000, size=(len(toy), 2))
    asymmetry = toy[["embeddings", "lang", "list_set", "list_id", "test", "effect_size"]].assign(
        count_a=counts[:, 0],
        count_b=counts[:, 1],
        count_difference=counts[:, 0] - counts[:, 1],
        counts_source="wordfreq",
    )
    asymmetry.to_csv(out / "asymmetry.csv", index=False)
    asymmetry_correlations(asymmetry).to_csv(out / "asymmetry_correlations.csv", index=False)
    comparisons = toy.assign(
        baseline="glove-6b-50d",
        baseline_effect_size=toy["effect_size"] * 0.5,
        difference=toy["effect_size"] * 0.5,
        difference_ci_low=toy["effect_size"] * 0.5 - 0.1,
        difference_ci_high=toy["effect_size"] * 0.5 + 0.1,
    )
    columns = ["embeddings", "baseline", "lang", "list_set", "list_id", "test", "n_x", "n_y"]
    columns += ["n_a", "n_b", "effect_size", "baseline_effect_size", "difference"]
    columns += ["difference_ci_low", "difference_ci_high"]
    comparisons[columns].to_csv(out / "comparisons.csv", index=False)
    # a third space (the toy's d halved, plus noise) for a reliability table across the lists
    third = toy.assign(embeddings="half", effect_size=toy["effect_size"] * 0.5 + 0.1)
    parallel_forms(pd.concat([results, third]), n_bootstrap=50).to_csv(
        out / "reliability.csv", index=False
    )
    return out


def copy_without_isomorphism(run_dir: Path, target: Path) -> Path:
    """The run's results, summary (without ``iso_*`` columns) and manifest, nothing else."""
    target.mkdir()
    shutil.copy(run_dir / "results.csv", target)
    shutil.copy(run_dir / "manifest.json", target)
    summary = pd.read_csv(run_dir / "summary.csv")
    summary.drop(columns=[c for c in summary.columns if c.startswith("iso_")]).to_csv(
        target / "summary.csv", index=False
    )
    return target


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("report"))


def export(*args: str):
    return CliRunner().invoke(export_command, list(args))


def assert_same_table(got: pd.DataFrame, expected: pd.DataFrame, rtol: float = 0.0) -> None:
    """Same columns and rows; numbers equal (within ``rtol``), missing where missing."""
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for column in expected.columns:
        want = expected[column]
        if pd.api.types.is_numeric_dtype(want):
            have = pd.to_numeric(got[column]).to_numpy(float)
            np.testing.assert_allclose(have, want.to_numpy(float), rtol=rtol, atol=rtol)
        else:
            have = [None if pd.isna(v) else str(v) for v in got[column]]
            assert have == [None if pd.isna(v) else v for v in want], column


def assert_one_line_error(result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# --- reading a run directory -----------------------------------------------------------------


def test_read_run_dir_reads_every_table(run_dir: Path) -> None:
    tables = read_run_dir(run_dir)
    for name in TABLE_NAMES:
        frame = getattr(tables, name)
        assert not frame.empty, name
        assert len(frame) == len(pd.read_csv(run_dir / f"{name}.csv"))
    assert tables.manifest["config"]["isomorphism"] == "en"
    assert tables.reference_lang == "en"
    assert {"iso_ev", "iso_gh"} <= set(tables.summary.columns)
    assert set(tables.results["embeddings"]) == {"glove-6b-50d", TOY}


def test_identifiers_stay_strings(run_dir: Path, tmp_path: Path) -> None:
    results = pd.read_csv(run_dir / "results.csv", dtype=str)
    results["list_id"] = ["007", "1", "NA", "nan"] * (len(results) // 4) + ["2"] * (
        len(results) % 4
    )
    results["lang"] = "NA"
    results.to_csv(tmp_path / "results.csv", index=False)
    shutil.copy(run_dir / "manifest.json", tmp_path)
    tables = read_run_dir(tmp_path)
    assert tables.results["list_id"].tolist()[:4] == ["007", "1", "NA", "nan"]
    assert set(tables.results["lang"]) == {"NA"}
    assert tables.summary.empty and tables.asymmetry.empty
    assert tables.manifest == json.loads((run_dir / "manifest.json").read_text())
    assert tables.results["effect_size"].dtype == np.float64


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "does not exist"),
        ("empty", "neither results.csv nor summary.csv"),
        ("columns", "summary.csv lacks the column(s) effect_size, effect_size_ci_low"),
        ("malformed", "results.csv is not a valid CSV table"),
        ("manifest", "manifest.json is not valid JSON"),
    ],
)
def test_read_run_dir_errors(run_dir: Path, tmp_path: Path, setup: str, message: str) -> None:
    target = tmp_path / "rd"
    if setup != "missing":
        target.mkdir()
    if setup == "columns":
        summary = pd.read_csv(run_dir / "summary.csv")
        summary.drop(columns=["effect_size", "effect_size_ci_low"]).to_csv(
            target / "summary.csv", index=False
        )
    elif setup == "malformed":
        (target / "results.csv").write_text("embeddings,lang\nx,y\n1,2,3,4\n")
    elif setup == "manifest":
        shutil.copy(run_dir / "results.csv", target)
        (target / "manifest.json").write_text("{not json")
    with pytest.raises(WeatkitError, match=re.escape(message)):
        read_run_dir(target)
    result = export(str(target), "--format", "csv")
    assert_one_line_error(result, message)


def _set_field(path: Path, line: int, column: str, value: str) -> None:
    """Write ``value`` into ``column`` of the record on ``line`` (1 = header) of a CSV file."""
    rows = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    rows[line - 1][rows[0].index(column)] = value
    with path.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def _cut_last_row(path: Path) -> int:
    """Cut ``path`` in the middle of its last row (an interrupted write); that row's line."""
    lines = path.read_text().splitlines(keepends=True)
    last = lines[-1]
    path.write_text("".join(lines[:-1]) + last[: last.index(",", len(last) // 2)])
    return len(lines)


def _corrupt(run_dir: Path, target: Path, setup: str) -> str:
    """A copy of ``run_dir``'s results, summary and manifest with one fault; the message."""
    target.mkdir()
    for name in ("results.csv", "summary.csv", "manifest.json"):
        shutil.copy(run_dir / name, target)
    results, summary = target / "results.csv", target / "summary.csv"
    manifest = target / "manifest.json"
    if setup == "cut row":
        line = _cut_last_row(results)
        return f"results.csv is not a valid CSV table: line {line} has "
    if setup == "not a number":
        _set_field(results, 4, "effect_size", "abc")
        return "results.csv: line 4: column effect_size: 'abc' is not a number"
    if setup == "not a count":
        _set_field(results, 3, "n_x", "2.5")
        return "results.csv: line 3: column n_x: '2.5' is not a whole number >= 0"
    if setup == "empty identifier":
        _set_field(results, 5, "test", "")
        return "results.csv: line 5: column test is empty"
    if setup == "summary not a number":
        _set_field(summary, 2, "effect_size", "abc")
        return "summary.csv: line 2: column effect_size: 'abc' is not a number"
    if setup == "no manifest":
        manifest.unlink()
        return "manifest.json: missing"
    if setup == "corrupt manifest":
        manifest.write_text('{"config": {"lists": ["ca-weat"')
        return "manifest.json is not valid JSON"
    if setup == "manifest shape":
        data = json.loads(manifest.read_text())
        data["config"]["lists"] = "ca-weat"
        manifest.write_text(json.dumps(data))
        return "manifest.json: key config.lists: expected a list of list-set names"
    raise AssertionError(setup)


_FAULTS = [
    "cut row",
    "not a number",
    "not a count",
    "empty identifier",
    "summary not a number",
    "no manifest",
    "corrupt manifest",
    "manifest shape",
]


@pytest.mark.parametrize(
    ("command", "setup"),
    [
        (command, setup)
        for command in ("export", "plot", "asymmetry")
        for setup in _FAULTS
        # asymmetry reads results.csv and the manifest only
        if not (command == "asymmetry" and setup == "summary not a number")
    ],
)
def test_every_reader_refuses_a_damaged_run_dir(
    run_dir: Path, tmp_path: Path, setup: str, command: str
) -> None:
    """export, plot and asymmetry read run directories through one checked reader: a damaged
    table or manifest is a one-line error naming the file, line and column (exit 1)."""
    target = tmp_path / "damaged"
    message = _corrupt(run_dir, target, setup)
    out = tmp_path / "out"
    args = {
        "export": ["export", str(target), "--format", "csv"],
        "plot": ["plot", str(target), "--kind", "forest", "--out", str(out / "f.png")],
        "asymmetry": ["asymmetry", str(target), "--out", str(out)],
    }[command]
    result = CliRunner().invoke(main, args)
    assert_one_line_error(result, message)
    assert str(target) in result.stderr
    assert not out.exists()


def test_a_table_cut_anywhere_in_a_row_is_refused(run_dir: Path, tmp_path: Path) -> None:
    """Fuzz: results.csv cut at every byte of its last two rows (an interrupted copy) is
    refused, naming the line; cut at a line end it is a valid, shorter table."""
    shutil.copy(run_dir / "manifest.json", tmp_path)
    data = (run_dir / "results.csv").read_bytes()
    lines = data.splitlines(keepends=True)
    first = len(b"".join(lines[:-2]))
    total = len(lines)
    for cut in range(first, len(data)):
        (tmp_path / "results.csv").write_bytes(data[:cut])
        if data[cut - 1 : cut] == b"\n":
            assert len(read_run_dir(tmp_path).results) == data[:cut].count(b"\n") - 1
            continue
        line = total if cut > first + len(lines[-2]) else total - 1
        message = rf"results.csv is not a valid CSV table: line {line} "
        with pytest.raises(WeatkitError, match=message):
            read_run_dir(tmp_path)


def test_read_table_types_columns_and_keeps_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    text = "embeddings,lang,list_set,list_id,test,n_x,effect_size,p_value\n"
    text += "\n"  # a blank line still counts as a line
    text += 'g,en,weat,1,weat1,8,0.5,\n"g 2",NA,weat,007,weat2,9,-inf,0.01\n'
    path.write_text(text)
    frame = read_table(path, ["embeddings", "test"])
    assert frame["list_id"].tolist() == ["1", "007"] and frame["lang"].tolist() == ["en", "NA"]
    assert frame["n_x"].tolist() == [8, 9]
    assert frame["effect_size"].tolist() == [0.5, -np.inf]
    assert np.isnan(frame["p_value"][0]) and frame["p_value"][1] == 0.01
    path.write_text(text.replace(",9,", ",-1,"))
    with pytest.raises(WeatkitError, match=r"results.csv: line 4: column n_x: '-1' is not a"):
        read_table(path)
    path.write_text(text.replace('"g 2"', ""))
    with pytest.raises(WeatkitError, match=r"results.csv: line 4: column embeddings is empty"):
        read_table(path, ["embeddings"])
    read_table(path)  # not required there: an empty field is a missing value


# --- csv, json, parquet, markdown ------------------------------------------------------------


@pytest.mark.parametrize("table", TABLE_NAMES)
@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_exports_round_trip(run_dir: Path, tmp_path: Path, table: str, fmt: str) -> None:
    source = read_table(run_dir / f"{table}.csv")
    args = [str(run_dir), "--format", fmt, "--table", table]
    out = tmp_path / f"{table}.{fmt}"
    result = export(*args, "--out", str(out)) if fmt == "parquet" else export(*args)
    assert result.exit_code == 0, result.output
    if fmt == "csv":
        assert_same_table(pd.read_csv(io.StringIO(result.stdout), dtype=str), source)
    elif fmt == "json":
        assert_same_table(pd.DataFrame(json.loads(result.stdout)), source, rtol=1e-12)
    else:
        assert result.stdout == "" and f"wrote {out}" in result.stderr
        assert_same_table(pd.read_parquet(out), source)


def _markdown_rows(text: str) -> pd.DataFrame:
    lines = [line.strip().strip("|") for line in text.strip().splitlines()]
    header = [cell.strip() for cell in lines[0].split("|")]
    rows = [[cell.strip() for cell in line.split("|")] for line in lines[2:]]
    return pd.DataFrame(rows, columns=header)


@pytest.mark.parametrize("table", ["summary", "results", "correlations"])
def test_markdown_gives_the_printed_precision(run_dir: Path, table: str) -> None:
    source = read_table(run_dir / f"{table}.csv")
    result = export(str(run_dir), "--format", "markdown", "--table", table)
    assert result.exit_code == 0, result.output
    printed = _markdown_rows(result.stdout)
    assert list(printed.columns) == list(source.columns) and len(printed) == len(source)
    for column in source.columns:
        want = source[column]
        if pd.api.types.is_float_dtype(want):
            expected = [float(f"{v:.4g}") for v in want]
            np.testing.assert_array_equal(printed[column].astype(float), expected)
        elif pd.api.types.is_integer_dtype(want):
            assert printed[column].astype(int).tolist() == want.tolist()
        else:
            assert printed[column].tolist() == want.fillna("nan").astype(str).tolist()


def test_filters_apply_to_exports(run_dir: Path) -> None:
    result = export(str(run_dir), "--format", "csv", "--lang", "de,it", "--test", "weat1")
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(io.StringIO(result.stdout))
    source = read_table(run_dir / "results.csv")
    expected = source[source["lang"].isin(["de", "it"]) & (source["test"] == "weat1")]
    assert len(rows) == len(expected) > 0
    assert set(rows["lang"]) == {"de", "it"} and set(rows["test"]) == {"weat1"}


# --- LaTeX -----------------------------------------------------------------------------------

_NUMBER = r"-?\d+(?:\.\d+)?"
_CELL = re.compile(
    rf"^\$(?P<v>{_NUMBER})(?:\^\{{(?P<up>[+-]\d+(?:\.\d+)?)\}}_\{{(?P<down>[+-]\d+(?:\.\d+)?)\}})?"
    r"(?P<dagger>\{\}\^\{\\dagger\})?\$(?: \((?P<n>\d+)\))?$"
)


def _latex_tables(text: str) -> list[dict]:
    """Each table's caption label, header cells and {row name: cells}."""
    parsed = []
    for block in text.split(r"\begin{table}")[1:]:
        lines = block.splitlines()
        start, end = lines.index(r"\midrule"), lines.index(r"\bottomrule")
        header = lines[start - 1].removesuffix(r" \\").split(" & ")[1:]
        rows = {}
        for line in lines[start + 1 : end]:
            name, *cells = line.removesuffix(r" \\").split(" & ")
            rows[name] = cells
        label = re.search(r"\\label\{(.*)\}", block).group(1)
        parsed.append({"label": label, "header": header, "rows": rows, "text": block})
    return parsed


@pytest.mark.parametrize("digits", [1, 3])
def test_latex_cells_are_the_summary_rounded(run_dir: Path, digits: int) -> None:
    summary = read_table(run_dir / "summary.csv")
    result = export(str(run_dir), "--format", "latex", "--digits", str(digits))
    assert result.exit_code == 0, result.output
    tables = _latex_tables(result.stdout)
    groups = summary.groupby(["list_set", "test"], sort=False)
    assert len(tables) == groups.ngroups == 4
    for table, ((list_set, test), group) in zip(tables, groups, strict=True):
        assert table["label"] == f"tab:effect-size-{list_set.replace(':', '-')}-{test}"
        counts = group.groupby("lang")["n_lists"].max()
        assert table["header"] == [f"{lang} ({counts[lang]})" for lang in sorted(counts.index)]
        assert list(table["rows"]) == ["glove-6b-50d", r"toy\_vec"]
        for name, cells in table["rows"].items():
            model = name.replace(r"\_", "_")
            for lang, cell in zip(sorted(counts.index), cells, strict=True):
                row = group[(group["embeddings"] == model) & (group["lang"] == lang)]
                if row.empty:
                    assert cell == "--"
                    continue
                _check_cell(cell, row.iloc[0], digits, counts[lang])
    assert r"\toprule" in result.stdout and r"\bottomrule" in result.stdout
    assert r"\caption{Effect size (Cohen's $d$) for ca-weat:v1 weat1:" in result.stdout


def _check_cell(cell: str, row: pd.Series, digits: int, n_header: int) -> None:
    match = _CELL.match(cell)
    assert match, cell
    d, low, high = row["effect_size"], row["effect_size_ci_low"], row["effect_size_ci_high"]
    assert float(match["v"]) == pytest.approx(round(d, digits), abs=1e-12)
    assert float(match["up"]) == pytest.approx(round(high - d, digits), abs=1e-12)
    assert -float(match["down"]) == pytest.approx(round(d - low, digits), abs=1e-12)
    assert len(match["v"].split(".")[-1]) == digits
    assert (match["dagger"] is not None) == (row["ci_level"] < 0.95)
    assert match["n"] == (None if row["n_lists"] == n_header else str(row["n_lists"]))


def test_latex_filters_statistic_and_order(run_dir: Path) -> None:
    result = export(
        str(run_dir), "--format", "latex", "--value", "statistic", "--test", "weat2",
        "--list-set", "ca-weat:v1", "--lang", "it,de", "--embeddings", TOY,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (table,) = _latex_tables(result.stdout)
    assert table["header"] == ["it (24)", "de (24)"]
    summary = read_table(run_dir / "summary.csv").set_index(["embeddings", "lang", "test"])
    (cells,) = table["rows"].values()
    for lang, cell in zip(["it", "de"], cells, strict=True):
        row = summary.loc[(TOY, lang, "weat2")]
        row = row[row["list_set"] == "ca-weat:v1"].iloc[0]
        assert float(_CELL.match(cell)["v"]) == pytest.approx(round(row["statistic"], 1))
    assert "Test statistic $S$" in table["text"]


def test_latex_without_intervals_and_escaping() -> None:
    summary = pd.DataFrame(
        {
            "embeddings": ["W_P 100%", "C&C #2"],
            "lang": ["de", "de"],
            "list_set": ["my_set", "my_set"],
            "test": ["t~1", "t~1"],
            "n_lists": [1, 1],
            "effect_size": [0.25, np.nan],
            "effect_size_ci_low": [np.nan, np.nan],
            "effect_size_ci_high": [np.nan, np.nan],
        }
    )
    text = latex_tables(summary, digits=2)
    assert r"W\_P 100\% & $0.25$ \\" in text
    assert r"C\&C \#2 & -- \\" in text
    assert r"for my\_set t\textasciitilde{}1:" in text
    assert escape_latex(r"a_b%c&d#e$f{g}h~i^j\k") == (
        r"a\_b\%c\&d\#e\$f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xlsx"], "unknown format 'xlsx'"),
        (["--format", "latex", "--table", "results"], "made from the summary table"),
        (["--format", "csv", "--table", "nope"], "unknown table 'nope'"),
        (["--format", "csv", "--digits", "2"], "--digits and --value are for --format latex"),
        (["--format", "latex", "--digits", "9"], "--digits must be between 0 and 6"),
        (["--format", "latex", "--value", "p"], "unknown value 'p'"),
        (["--format", "csv", "--lang", "xx"], "no rows in results.csv for --lang xx"),
        (["--format", "latex", "--test", "weat9"], "(available: weat1, weat2)"),
        (["--format", "csv", "--lang", ""], "--lang: '' names nothing"),  # not every language
        (["--format", "csv", "--test", ","], "--test: ',' names nothing"),
    ],
)
def test_export_errors(run_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "out.file"
    result = export(str(run_dir), *args, "--out", str(out))
    assert_one_line_error(result, message)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_parquet_to_a_redirected_stdout_is_written_as_by_run(run_dir: Path, tmp_path: Path) -> None:
    # one rule with run --format parquet > f: refused only on a terminal (test_naming_traps)
    result = export(str(run_dir), "--format", "parquet", "--table", "summary")
    assert result.exit_code == 0, result.output
    written = export(str(run_dir), "--format", "parquet", "--table", "summary", "--out",
                     str(tmp_path / "summary.parquet"))  # fmt: skip
    assert written.exit_code == 0, written.output
    assert result.stdout_bytes == (tmp_path / "summary.parquet").read_bytes()
    summary = read_table(run_dir / "summary.csv")
    assert_same_table(pd.read_parquet(io.BytesIO(result.stdout_bytes)), summary)


def test_export_of_a_table_the_run_did_not_write(run_dir: Path, tmp_path: Path) -> None:
    plain = copy_without_isomorphism(run_dir, tmp_path / "plain")
    result = export(str(plain), "--format", "csv", "--table", "correlations")
    assert_one_line_error(result, "has no correlations.csv (written by weatkit run --isomorphism")
    result = export(str(plain), "--format", "csv", "--table", "asymmetry")
    assert_one_line_error(
        result, "has no asymmetry.csv (written by weatkit asymmetry RUN_DIR, or weatkit grid"
    )


def test_latex_defaults_to_two_decimals_and_never_prints_negative_zero() -> None:
    """Issue 24 item 3.7: ``$-0.0^{…}$`` was printed for d = -0.004 with one decimal."""
    summary = pd.DataFrame(
        {
            "embeddings": ["E"] * 2,
            "lang": ["de", "it"],
            "list_set": ["s"] * 2,
            "test": ["t"] * 2,
            "n_lists": [1, 1],
            "effect_size": [-0.004, 0.4567],
            "effect_size_ci_low": [-0.3, 0.45],
            "effect_size_ci_high": [0.2, 0.8],
            "ci_level": [0.95, 0.95],
        }
    )
    text = latex_tables(summary)
    assert r"E & $0.00^{+0.20}_{-0.30}$ & $0.46^{+0.34}_{-0.01}$ \\" in text
    assert "-0.00" not in text
    assert "$0.0^{+0.2}_{-0.3}$" in latex_tables(summary, digits=1)
