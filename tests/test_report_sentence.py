"""``weatkit report DIR`` of a sentence command's ``--out`` directory (gest, crows, stereoset,
mbe): the manifest every such directory now carries, each CSV table and the per-item log shown
row for row, and the page loaded in headless Chromium (skipped where it or playwright is
missing)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import weatkit
from tests.test_crows import tiny_pairs
from tests.test_report_html import csv_rows, invoke, table_ids, table_rows
from tests.tiny_models import make_gest_mlm
from weatkit.report.html import write_report
from weatkit.report.html.sections import docs_link


@pytest.fixture(scope="module")
def crows_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``weatkit crows --model --out --log-items`` on five pairs and a tiny masked LM."""
    root = tmp_path_factory.mktemp("report-crows")
    tiny = make_gest_mlm(root / "mlm")
    data = root / "pairs.csv"
    tiny_pairs().rename(columns={"direction": "stereo_antistereo"}).to_csv(data, index=False)
    out = root / "out"
    res = invoke("crows", "--model", str(tiny), "--data", str(data), "--out", str(out),
                 "--bootstrap", "0", "--no-progress", "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    return out


def test_a_sentence_command_always_writes_its_manifest(crows_dir: Path, tmp_path: Path) -> None:
    manifest = json.loads((crows_dir / "manifest.json").read_text())
    assert manifest["command"] == "weatkit crows"
    assert manifest["weatkit_version"] == weatkit.__version__
    assert manifest["log_items"] == "parquet"
    # nothing else to record (no --model, no --limit, no --log-items): a manifest all the same
    out = tmp_path / "again"
    res = invoke("crows", "--scores", str(crows_dir / "pairs.csv"), "--bootstrap", "0",
                 "--out", str(out))  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((out / "manifest.json").read_text()) == {
        "command": "weatkit crows",
        "weatkit_version": weatkit.__version__,
        "log_items": None,
    }
    page = invoke("report", str(out))
    assert page.exit_code == 0, page.output
    assert "t-items" not in table_ids((out / "report.html").read_text(encoding="utf-8"))


def test_a_crows_report(crows_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "crows"
    shutil.copytree(crows_dir, target)
    res = invoke("report", str(target))
    assert res.exit_code == 0, res.output
    page = (target / "report.html").read_text(encoding="utf-8")
    assert "weatkit sentence report" in page
    csvs = sorted(p for p in target.glob("*.csv"))
    assert {p.stem for p in csvs} >= {"summary", "pairs"}
    for path in csvs:
        assert len(table_rows(page, f"t-{path.stem}")) == csv_rows(path), path.name
    items = pd.read_parquet(target / "items.parquet")
    assert len(table_rows(page, "t-items")) == len(items) == 5
    block = page[page.index('data-table="t-items"') : page.index('<table id="t-items"')]
    options = dict(re.findall(r"<label>(\w+)\s*<select[^>]*>(.*?)</select>", block, re.DOTALL))
    assert {"bias_type", "outcome"} <= set(options)
    outcomes = re.findall(r"<option>(.*?)</option>", options["outcome"])
    assert outcomes == sorted(set(items.outcome))
    assert docs_link("sentence/crows-pairs.md") in page
    versions = dict(table_rows(page, "t-versions"))
    assert versions["command"] == "weatkit crows"
    assert versions["weatkit_version"] == weatkit.__version__


def test_a_gest_directory_is_reported_not_refused(tmp_path: Path, data_dir: Path) -> None:
    """A gest directory has scores.csv, which once made it a compare directory refused with
    ``key command: expected 'weatkit compare'``."""
    from weatkit.gest.data import load_gest

    table = load_gest().groupby("stereotype").head(2).sort_values("sample_id")
    table["score"] = np.random.default_rng(1).normal(size=len(table))
    table.to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "out"
    res = invoke("gest", "--scores", str(tmp_path / "s.csv"), "--bootstrap", "0", "--out",
                 str(out), "--log-items", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert (out / "scores.csv").is_file()
    res = invoke("report", str(out))
    assert res.exit_code == 0, res.output
    assert "expected 'weatkit compare'" not in res.output
    page = (out / "report.html").read_text(encoding="utf-8")
    for path in out.glob("*.csv"):
        name = "items" if path.name == "items.csv" else path.stem
        assert len(table_rows(page, f"t-{name}")) == csv_rows(path), path.name
    assert docs_link("sentence/gest.md") in page


def test_a_sentence_directory_of_another_version_is_refused(
    crows_dir: Path, tmp_path: Path
) -> None:
    from tests.test_report_exports import assert_one_line_error

    target = tmp_path / "c"
    shutil.copytree(crows_dir, target)
    manifest = json.loads((target / "manifest.json").read_text())
    (target / "manifest.json").write_text(json.dumps({**manifest, "weatkit_version": "0.2.0"}))
    result = invoke("report", str(target))
    assert_one_line_error(result, "manifest.json: written by weatkit 0.2.0, this is weatkit 0.1")
    assert not (target / "report.html").exists()


def test_a_sentence_report_in_headless_chromium(crows_dir: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on PATH (Debian's chromium package) to load the page in")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    html = tmp_path / "crows.html"
    text = write_report(crows_dir, html).read_text(encoding="utf-8")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(html.as_uri())
        counts = page.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('table'))"
            ".map(t => [t.id, t.tBodies[0].rows.length]))"
        )
        page.select_option('[data-table="t-items"] select.filter >> nth=0', index=1)
        shown = page.evaluate(
            "Array.from(document.querySelectorAll('#t-items tbody tr'))"
            ".filter(r => !r.hidden).length"
        )
        browser.close()
    assert errors == []
    assert counts == {t: len(table_rows(text, t)) for t in table_ids(text)}
    assert counts["t-items"] == 5 and 0 < shown <= 5
