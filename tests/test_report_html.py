"""``weatkit report DIR``: one HTML page of a real run, grid and compare directory.

Each directory is written by the real command on small inputs (GloVe, generated vectors); the
page's tables are read back and counted against the CSV files, its figures and manifest checked,
and bad input must give a one-line error and leave no file. The last test loads a run's page in
headless Chromium (skipped where it or playwright is missing).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import weatkit
from tests.conftest import shared_data_dir
from tests.grid_fixtures import make_grid
from tests.test_compare_validity import CONFIG, LISTS, N_MODELS, TRAITS, WORDS
from tests.test_report_exports import assert_one_line_error
from weatkit.cli import main
from weatkit.errors import WeatkitError
from weatkit.report.html import write_report
from weatkit.report.html.sections import DOCS_PAGES, DOCS_URL, docs_link
from weatkit.report.html.table import column_decimals

FAST = ["--bootstrap", "50", "--permutations", "50", "--no-progress", "--device", "cpu"]
ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``weatkit run`` on GloVe and CA-WEAT's English lists, with every optional table."""
    if shared_data_dir() is None:
        pytest.skip("third-party data not found: set WEATKIT_DATA or check out ../shared/data")
    out = tmp_path_factory.mktemp("report-run") / "run"
    args = ["run", "--lists", "ca-weat", "--lang", "en", "--embeddings", "glove-6b-50d"]
    args += ["--pool", "lists", "--influence", "--null", "20", "--metrics", "weat,rnd"]
    result = CliRunner().invoke(main, [*args, "--out", str(out), *FAST], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def run_page(run_dir: Path) -> str:
    result = invoke("report", str(run_dir))
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"wrote {run_dir / 'report.html'}"
    return (run_dir / "report.html").read_text(encoding="utf-8")


def table_rows(page: str, table_id: str) -> list[list[str]]:
    """The cells of each body row of the page's table ``table_id``."""
    match = re.search(rf'<table id="{table_id}">.*?<tbody>(.*?)</tbody>', page, re.DOTALL)
    assert match is not None, table_id
    rows = re.findall(r"<tr>(.*?)</tr>", match.group(1), re.DOTALL)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL) for row in rows]


def table_ids(page: str) -> list[str]:
    return re.findall(r'<table id="([^"]+)"', page)


def csv_rows(path: Path) -> int:
    return len(pd.read_csv(path))


# --- run directory ----------------------------------------------------------------------------


def test_run_tables_have_the_rows_of_their_csv(run_dir: Path, run_page: str) -> None:
    for name in ("summary", "results", "pooled", "association", "association_pooled"):
        assert len(table_rows(run_page, f"t-{name}")) == csv_rows(run_dir / f"{name}.csv"), name
    results = pd.read_csv(run_dir / "results.csv")
    assert len(table_rows(run_page, "t-multiplicity")) == results["p_value"].notna().sum()
    skipped = json.loads((run_dir / "manifest.json").read_text())["skipped"]
    if skipped:
        assert len(table_rows(run_page, "t-manifest-skipped")) == len(skipped)


def test_numbers_are_shown_with_their_interval_and_its_kind(run_dir: Path, run_page: str) -> None:
    summary = pd.read_csv(run_dir / "summary.csv")
    first = table_rows(run_page, "t-summary")[0]
    row = summary.iloc[0]
    assert column_decimals(summary["effect_size"]) == 3  # |d| < 10: 4 significant digits
    d = f"{row.effect_size:.3f} [{row.effect_size_ci_low:.3f}, {row.effect_size_ci_high:.3f}]"
    assert d in first
    assert re.search(r"\d+(\.\d+)?% median interval \(order statistics\)", " ".join(first))
    assert "intervals: 95% bootstrap CI (percentile)" in run_page  # results.csv's
    assert 'data-v="' in run_page  # numbers sort by their full value


def test_one_number_format_per_table(run_dir: Path, run_page: str) -> None:
    # issue 37 §4: 0.8439 [0.8236, 1.481] and 9.999e-05 side by side in the summary table
    for table_id in table_ids(run_page):
        for cells in table_rows(run_page, table_id):
            for cell in cells:
                assert not re.search(r"(^|[\s\[])-?\d(\.\d+)?e[-+]\d+\b", cell), (table_id, cell)
    results = pd.read_csv(run_dir / "results.csv")
    header = re.search(r'<table id="t-results">.*?<thead>(.*?)</thead>', run_page, re.DOTALL)
    names = re.findall(r"<th[^>]*>(.*?)</th>", header.group(1), re.DOTALL)
    names = [re.sub(r"<[^>]+>", "", n).strip() for n in names]
    p_col, d_col = names.index("p_value"), names.index("effect_size [CI]")
    for cells, row in zip(table_rows(run_page, "t-results"), results.itertuples(), strict=True):
        assert cells[p_col] == ("< 1e-4" if row.p_value < 1e-4 else f"{row.p_value:.4f}")
        decimals = {len(x.split(".")[1]) for x in re.findall(r"-?\d+\.\d+", cells[d_col])}
        assert decimals == {3}, cells[d_col]  # one column, one number of decimals


def test_the_issues_summary_row_in_one_format() -> None:
    from weatkit.report.html.table import html_table

    frame = pd.DataFrame(
        {"n_lists": [1, 3], "effect_size": [0.8439, 1.2], "effect_size_ci_low": [0.8236, 1.1],
         "effect_size_ci_high": [1.481, 1.3], "p_value": [1 / 10001, 0.0196]}
    )  # fmt: skip
    table = html_table(frame, id="t", source="summary.csv")
    assert table.columns == ["n_lists", "effect_size [CI]", "p_value"]
    assert [[c.text for c in row] for row in table.rows] == [
        ["1", "0.844 [0.824, 1.481]", "< 1e-4"],
        ["3", "1.200 [1.100, 1.300]", "0.0196"],
    ]
    # compare's scores.csv: each row's neutral value decides the digits (g_s: 1, SS: 50)
    scores = pd.DataFrame(
        {"measure": ["gest:g_s", "stereoset:ss_term"], "value": [1.0001532, 61.4247],
         "ci_low": [1.0000189, 56.9892], "ci_high": [1.0002887, 65.3226], "neutral": [1.0, 50.0]}
    )  # fmt: skip
    cells = [row[1].text for row in html_table(scores, id="s", source="scores.csv").rows]
    assert cells == ["1.00015 [1.00002, 1.00029]", "61.42 [56.99, 65.32]"]


def test_every_figure_of_the_run_is_inline_svg(run_page: str) -> None:
    for figure in ("fig-forest", "fig-heatmap", "fig-influence-0", "fig-null-0", "fig-rnd-0"):
        match = re.search(rf'<figure id="{figure}">.*?<svg\b', run_page, re.DOTALL)
        assert match is not None, figure
    assert "<?xml" not in run_page and "<!DOCTYPE svg" not in run_page
    ids = re.findall(r'\bid="([^"]+)"', run_page)
    assert len(ids) == len(set(ids))  # every SVG id prefixed with its figure's
    # no scatter: the run measured no isomorphism; the report says so in one line
    assert "Scatter against isomorphism: not drawn: no iso_* column in summary.csv" in run_page


def test_nothing_is_fetched_at_view_time(run_page: str) -> None:
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="', run_page)
    assert "@import" not in run_page and "url(http" not in run_page


def test_the_manifest_shows_versions_seeds_and_inputs(run_dir: Path, run_page: str) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    versions = dict(table_rows(run_page, "t-versions"))
    for key in ("weatkit_version", "python", "torch", "numpy"):
        assert versions[key] == manifest[key]
    seeds = dict(table_rows(run_page, "t-seeds"))
    assert seeds["seed"] == str(manifest["seed"])
    assert seeds["config.engine.seed"] == str(manifest["config"]["engine"]["seed"])
    sources = table_rows(run_page, "t-inputs-list_sources")
    assert [manifest["list_sources"][0]["sha256"]] == [c for c in sources[0] if len(c) == 64]


def test_each_section_links_to_its_docs_page(run_page: str) -> None:
    links = set(re.findall(r'class="docs" href="([^"]+)"', run_page))
    assert docs_link(DOCS_PAGES["ca-weat"]) in links
    assert docs_link("measures/ca-weat.md") == DOCS_URL + "measures/ca-weat/"
    assert docs_link("measures/index.md", "https://x.org/w") == "https://x.org/w/measures/"
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().split("\nnav:")[0])  # no tags here
    # the published site, not mkdocs serve's 127.0.0.1:8000 (dead links in a shared report)
    assert nav["site_url"] == DOCS_URL == "https://weatkit.github.io/weatkit/"
    assert 'class="docs" href="https://weatkit.github.io/weatkit/measures/ca-weat/"' in run_page
    for page in DOCS_PAGES.values():
        assert (ROOT / "docs" / page).is_file(), page
        assert f": {page}" in (ROOT / "mkdocs.yml").read_text() or page == "measures/index.md"


def test_the_python_api_writes_the_same_page(run_dir: Path, run_page: str, tmp_path) -> None:
    written = weatkit.write_report(run_dir, tmp_path / "r.html")
    assert written == tmp_path / "r.html"
    assert written.read_text(encoding="utf-8") == run_page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_a_figure_whose_table_is_absent_is_a_line(run_dir: Path, tmp_path: Path) -> None:
    for name in ("results.csv", "summary.csv", "manifest.json"):
        shutil.copy(run_dir / name, tmp_path)
    page = write_report(tmp_path).read_text(encoding="utf-8")
    assert "Influence of each item: not drawn: no influence.csv (written by weatkit run " in page
    assert "Null distribution of d: not drawn: no null.csv (written by weatkit run --null K)" in (
        page
    )
    assert 'id="fig-forest"' in page


# --- per-item log -----------------------------------------------------------------------------

ITEMS = pd.DataFrame(
    {
        "measure": ["crows:pll"] * 5,
        "model": ["m"] * 5,
        "method": ["crows"] * 5,
        "item_id": ["1", "2", "3", "4", "5"],
        "bias_type": ["gender", "race", "gender", "age", "race"],
        "outcome": ["stereotype", "anti-stereotype", "stereotype", "tie", "stereotype"],
        "influence": [0.01, -0.02, 0.01, 0.0, 0.03],
        "text_more": ["He is <b>strong</b>.", "b", "c", "d", "e"],
        "score_more": [-1.5, -2.0, -3.25, -1.0, -0.5],
    }
)


@pytest.mark.parametrize("name", ["items.csv", "items.parquet"])
def test_the_per_item_log_is_a_filterable_table(run_dir: Path, tmp_path, name: str) -> None:
    for file in ("results.csv", "summary.csv", "manifest.json"):
        shutil.copy(run_dir / file, tmp_path)
    if name.endswith(".csv"):
        ITEMS.to_csv(tmp_path / name, index=False)
    else:
        ITEMS.to_parquet(tmp_path / name, index=False)
    page = write_report(tmp_path).read_text(encoding="utf-8")
    rows = table_rows(page, "t-items")
    assert len(rows) == len(ITEMS)
    assert rows[0][:6] == ["crows:pll", "m", "crows", "1", "gender", "stereotype"]
    assert rows[0][7] == "He is &lt;b&gt;strong&lt;/b&gt;."  # texts are escaped
    block = page[page.index('data-table="t-items"') : page.index('<table id="t-items"')]
    options = dict(re.findall(r"<label>(\w+)\s*<select[^>]*>(.*?)</select>", block, re.DOTALL))
    assert re.findall(r"<option>(.*?)</option>", options["bias_type"]) == ["age", "gender", "race"]
    assert re.findall(r"<option>(.*?)</option>", options["outcome"]) == [
        "anti-stereotype",
        "stereotype",
        "tie",
    ]


# --- grid and compare -------------------------------------------------------------------------


def test_a_grid_report(tmp_path: Path) -> None:
    experiment = make_grid(tmp_path)
    result = invoke("grid", str(experiment), "--no-progress")
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    page = write_report(out, tmp_path / "grid.html").read_text(encoding="utf-8")
    assert "weatkit grid report" in page
    for name in ("summary", "results", "comparisons", "reliability"):
        if (out / f"{name}.csv").is_file():
            assert len(table_rows(page, f"t-{name}")) == csv_rows(out / f"{name}.csv"), name
    assert "t-comparisons" in table_ids(page) and 'id="fig-forest"' in page
    experiment_rows = dict(table_rows(page, "t-experiment"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert experiment_rows["sha256"] == manifest["experiment"]["sha256"]


@pytest.fixture(scope="module")
def compare_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``weatkit compare`` of six word-vector models with a validity section."""
    root = tmp_path_factory.mktemp("report-compare")
    (root / "lists.yaml").write_text(LISTS, encoding="utf-8")
    for m in range(N_MODELS):
        rng = np.random.default_rng(m)
        rows = [f"{w} " + " ".join(f"{v:.6f}" for v in rng.normal(size=8)) for w in WORDS]
        (root / f"m{m}.vec").write_text(f"{len(WORDS)} 8\n" + "\n".join(rows) + "\n")
    models = ", ".join(f"{{name: M{m}, path: m{m}.vec}}" for m in range(N_MODELS))
    (root / "cmp.yaml").write_text(CONFIG.format(models=models) + TRAITS, encoding="utf-8")
    result = invoke("compare", str(root / "cmp.yaml"), "--no-plot")
    assert result.exit_code == 0, result.output
    return root / "out"


def test_a_compare_report(compare_dir: Path, tmp_path: Path) -> None:
    page = write_report(compare_dir, tmp_path / "c.html").read_text(encoding="utf-8")
    assert "weatkit compare report" in page
    for name in ("table", "scores", "correlations", "skipped", "validity"):
        assert len(table_rows(page, f"t-{name}")) == csv_rows(compare_dir / f"{name}.csv"), name
    header = re.search(r'<table id="t-validity">\s*<thead>(.*?)</thead>', page, re.DOTALL)
    columns = re.findall(r"<th[^>]*>(.*?)</th>", header.group(1))
    assert columns[columns.index("statistic") :][:2] == ["statistic", "value [CI]"]  # ρ's CI
    k = column_decimals(pd.read_csv(compare_dir / "validity.csv")["value"])
    validity = pd.read_csv(compare_dir / "validity.csv").iloc[0]
    value = f"{validity.value:.{k}f} [{validity.ci_low:.{k}f}, {validity.ci_high:.{k}f}]"
    assert table_rows(page, "t-validity")[0][columns.index("value [CI]")] == value
    assert re.search(r'<figure id="fig-correlations-0">.*?<svg\b', page, re.DOTALL)
    manifest = json.loads((compare_dir / "manifest.json").read_text())
    assert dict(table_rows(page, "t-config"))["config_sha256"] == manifest["config_sha256"]
    assert dict(table_rows(page, "t-versions"))["weatkit_version"] == weatkit.__version__
    assert "correlation.seed" in dict(table_rows(page, "t-seeds"))


# --- bad input --------------------------------------------------------------------------------


def copy_run(run_dir: Path, target: Path) -> Path:
    target.mkdir()
    for name in ("results.csv", "summary.csv", "manifest.json"):
        shutil.copy(run_dir / name, target)
    return target


def set_version(path: Path, version: str) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["weatkit_version"] = version
    (path / "manifest.json").write_text(json.dumps(manifest))


def assert_no_report(path: Path) -> None:
    assert not (path / "report.html").exists()
    assert not [p.name for p in path.parent.iterdir() if p.name.startswith(".")]
    assert not [p.name for p in path.iterdir() if p.name.startswith(".")]


def test_not_a_weatkit_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = invoke("report", str(tmp_path / "d"))
    assert_one_line_error(
        result, f"{tmp_path / 'd'} is not a weatkit run, grid, compare or sentence directory"
    )
    assert_no_report(tmp_path / "d")
    result = invoke("report", str(tmp_path / "nope"))
    assert_one_line_error(result, f"{tmp_path / 'nope'} does not exist or is not a directory")


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("0.2.0", "manifest.json: written by weatkit 0.2.0, this is weatkit 0.1.0: rerun it"),
        ("1.1.0", "written by weatkit 1.1.0, this is weatkit 0.1.0"),
        ("", "manifest.json: key weatkit_version: missing; cannot tell which weatkit wrote it"),
    ],
)
def test_another_version_is_refused(run_dir, tmp_path, version: str, message: str) -> None:
    target = copy_run(run_dir, tmp_path / "r")
    set_version(target, version)
    assert_one_line_error(invoke("report", str(target)), message)
    assert_no_report(target)


def test_another_patch_version_is_read(run_dir: Path, tmp_path: Path) -> None:
    assert weatkit.__version__.startswith("0.1.")
    target = copy_run(run_dir, tmp_path / "r")
    set_version(target, "0.1.99")
    assert "written by weatkit 0.1.99" in write_report(target).read_text(encoding="utf-8")


def test_a_malformed_table_is_an_error_of_its_reader(run_dir: Path, tmp_path: Path) -> None:
    target = copy_run(run_dir, tmp_path / "r")
    lines = (target / "summary.csv").read_text().splitlines(keepends=True)
    (target / "summary.csv").write_text("".join(lines[:-1]) + lines[-1].rstrip("\n"))
    result = invoke("report", str(target))
    assert_one_line_error(result, f"{target / 'summary.csv'} is not a valid CSV table: line ")
    assert_no_report(target)
    (target / "summary.csv").write_text("".join(lines))
    (target / "items.parquet").write_bytes(b"not parquet")
    result = invoke("report", str(target))
    assert_one_line_error(result, f"{target / 'items.parquet'} is not a valid Parquet table: ")
    assert_no_report(target)


def test_a_compare_manifest_of_another_command(compare_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "c"
    shutil.copytree(compare_dir, target)
    manifest = json.loads((target / "manifest.json").read_text())
    (target / "manifest.json").write_text(json.dumps({**manifest, "command": "weatkit run"}))
    result = invoke("report", str(target))
    assert_one_line_error(result, "manifest.json: key command: expected 'weatkit compare'")
    assert not (target / "report.html").exists()


def test_an_output_that_cannot_be_written(run_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = invoke("report", str(run_dir), "--out", str(tmp_path / "file" / "r.html"))
    assert_one_line_error(result, f"cannot write {tmp_path / 'file' / 'r.html'}: ")
    result = invoke("report", str(run_dir), "--out", str(tmp_path))
    assert result.exit_code == 2  # click: a directory where a file is expected
    with pytest.raises(WeatkitError, match="it is a directory; give a file name"):
        write_report(run_dir, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_open_opens_the_page_in_a_browser(run_dir, tmp_path, monkeypatch) -> None:
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    target = copy_run(run_dir, tmp_path / "r")  # the tables alone: quicker
    result = invoke("report", str(target), "--out", str(tmp_path / "r.html"), "--open")
    assert result.exit_code == 0, result.output
    assert opened == [(tmp_path / "r.html").resolve().as_uri()]


# --- a real browser ---------------------------------------------------------------------------


def test_the_page_in_headless_chromium(run_dir: Path, run_page: str, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on PATH (Debian's chromium package) to load the page in")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.route("**/*", lambda route: route.abort() if not route.request.url.startswith(
            "file:") else route.continue_())  # fmt: skip
        page.goto((run_dir / "report.html").as_uri())
        counts = page.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('table'))"
            ".map(t => [t.id, t.tBodies[0].rows.length]))"
        )
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot))
        # sorting and filtering work in the page
        page.click("#t-summary thead th:nth-child(1)")
        page.select_option('[data-table="t-results"] select.filter >> nth=0', index=1)
        shown = page.evaluate(
            "Array.from(document.querySelectorAll('#t-results tbody tr'))"
            ".filter(r => !r.hidden).length"
        )
        browser.close()
    assert errors == []
    for name in ("summary", "results", "pooled", "association"):
        assert counts[f"t-{name}"] == csv_rows(run_dir / f"{name}.csv"), name
    assert counts == {t: len(table_rows(run_page, t)) for t in table_ids(run_page)}
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[:2] == (1000, 1400)
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 10  # not blank
    assert 0 < shown <= counts["t-results"]


def test_the_items_file_the_manifest_names_must_exist(tmp_path: Path) -> None:
    from weatkit.errors import WeatkitError
    from weatkit.report.html.source import read_items

    ITEMS.to_parquet(tmp_path / "items.parquet", index=False)  # of an earlier run
    assert read_items(tmp_path, {"log_items": None}) == (None, None)
    with pytest.raises(WeatkitError) as err:
        read_items(tmp_path, {"log_items": "csv"})
    assert str(err.value) == (
        f"{tmp_path}: manifest.json has log_items 'csv', but there is no items.csv"
    )
    items, name = read_items(tmp_path, {"log_items": "parquet"})
    assert name == "items.parquet" and len(items) == len(ITEMS)
