"""What ``weatkit compare`` prints: at 80 columns no header or cell is cut, long measure names
get a legend, and correlations of too few units are flagged and never starred."""

from __future__ import annotations

import re
from io import StringIO

import numpy as np
import pandas as pd

from weatkit.cli.compare import print_compare
from weatkit.cli.tables import fmt_p
from weatkit.crossmethod.runner import CompareResult
from weatkit.report.numbers import format_estimate
from weatkit.stats.correlation import correlation_table

LONG = "my-own-list-set:flowers_insects_pleasant_unpleasant@-2"
MEASURES = ["ca-weat:weat1@0", "ca-weat:weat2@-2", "gest:g_s", "stereoset:ss", LONG]
LANGS = ["en", "de", "fr", "es", "tr", "ja", "ru"]


def _result(n_models: int) -> CompareResult:
    rng = np.random.default_rng(n_models)
    rows = []
    for i in range(n_models):
        for lang in LANGS:
            values = {m: rng.normal() * 20 for m in MEASURES}
            values["ca-weat:weat2@-2"] = values["ca-weat:weat1@0"] + 0.5 * rng.normal() * 20
            if lang != "en":
                values.update(dict.fromkeys(["gest:g_s", "stereoset:ss", LONG], np.nan))
            rows.append({"model": f"model-{i}", "lang": lang, **values})
    table = pd.DataFrame(rows)
    return CompareResult(
        scores=pd.DataFrame(),
        table=table,
        correlations=correlation_table(table, MEASURES, n_bootstrap=300, seed=0),
        skipped=pd.DataFrame(),
        manifest={"correlation": {"confidence_level": 0.95}},
    )


def _printed(result: CompareResult, width: int = 80) -> str:
    from rich.console import Console

    console = Console(width=width, file=StringIO(), record=True)
    print_compare(result, console)
    return console.export_text()


def test_nothing_is_cut_at_80_columns() -> None:
    result = _result(3)
    text = _printed(result)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text
    assert f"M1 = {LONG}" in text  # the long name in full, once, in the legend
    for header in ("measure", *LANGS, "scope", "statistic", "value [95% CI]", "note"):
        assert any(f" {header} " in line for line in lines), header
    cells = {line.strip("│┃ ") for line in lines}
    split_cells = {cell.strip() for line in cells for cell in line.split("│")}
    for m in MEASURES:
        assert (m if m != LONG else "M1") in split_cells
    for _, row in result.table.iterrows():  # every value, whole, in its model's block
        for m in MEASURES:
            if pd.notna(row[m]):
                assert f"{row[m]:.3f}" in split_cells
    for r in result.correlations.itertuples(index=False):
        cell = format_estimate(r.spearman, r.spearman_ci_low, r.spearman_ci_high, neutral=0.0)
        assert cell in " ".join(split_cells)
        assert fmt_p(r.kendall_p) in split_cells


def test_three_models_are_flagged_not_starred() -> None:
    result = _result(3)
    corr = result.correlations
    en = corr[(corr["scope"] == "en") & (corr["measure_x"] == "ca-weat:weat1@0")]
    assert set(en["n"]) == {3} and (en["flag"] != "").all()
    text = _printed(result)
    rows = [line for line in text.splitlines() if line.startswith("│ en ")]
    assert rows and all("†" in line and "*" not in line for line in rows)
    assert "† fewer than 5 units: the exact p of n units is at least 2/n! (2/3! = 0.333)" in text
    # pooled over 21 units the planted association is starred (CI excludes 0, not flagged)
    starred = [line for line in text.splitlines() if line.startswith("│ all ") and "*" in line]
    assert len(starred) == 2  # Spearman and Kendall of weat1@0 ~ weat2@-2
    assert "* the 95% CI excludes 0" in text


def test_languages_that_do_not_fit_go_to_further_blocks() -> None:
    text = _printed(_result(1), width=60)
    legend = f"  M1 = {LONG}"  # printed whole (the terminal wraps it), never cut
    assert max(len(line) for line in text.splitlines() if line != legend) <= 60
    spans = re.findall(r"model-0: bias measures\s+\(languages? (\d+)(?:–(\d+))? of 7\)", text)
    assert len(spans) >= 2
    covered = [i for a, b in spans for i in range(int(a), int(b or a) + 1)]
    assert covered == list(range(1, 8))
    headers = [line for line in text.splitlines() if line.startswith("┃ measure")]
    names = [cell.strip() for line in headers for cell in line.split("┃") if cell.strip()]
    assert [name for name in names if name != "measure"] == LANGS


def test_sentence_level_intervals_and_seeds_are_printed() -> None:
    from weatkit.crossmethod.runner import SEED_COLUMNS

    result = _result(2)
    result.scores = pd.DataFrame(
        [
            {"model": "model-0", "lang": "en", "method": "crows", "measure": "crows:pll",
             "value": 57.5, "ci_low": 55.25, "ci_high": 59.75, "ci_level": 0.95, "neutral": 50.0,
             "ci_excludes_neutral": True, "p_value_neutral": 0.0004},
            {"model": "model-0", "lang": "en", "method": "gest", "measure": "gest:g_s",
             "value": 1.01, "ci_low": 0.99, "ci_high": 1.03, "ci_level": 0.95, "neutral": 1.0,
             "ci_excludes_neutral": False, "p_value_neutral": np.nan},
            # tiny-3 of examples/offline: printed 1.000 [1.000, 1.000]* before (issue 37 §4)
            {"model": "model-1", "lang": "en", "method": "gest", "measure": "gest:g_s",
             "value": 1.0001531901275182, "ci_low": 1.0000188981588203,
             "ci_high": 1.0002886904653334, "ci_level": 0.95, "neutral": 1.0,
             "ci_excludes_neutral": True, "p_value_neutral": np.nan},
        ]
    )  # fmt: skip
    result.seeds = pd.DataFrame(
        [["S", "en", "crows", "crows:pll", 2, 56.0, 1.5]], columns=SEED_COLUMNS
    )
    text = _printed(result)
    assert "Sentence-level scores: 95% CI over items" in text
    assert "57.500 [55.250, 59.750]*" in text and "0.0004" in text
    assert "1.010 [0.990, 1.030]" in text and "[0.990, 1.030]*" not in text  # contains g_s = 1
    assert "1.00015 [1.00002, 1.00029]*" in text  # the digits show the distance from 1
    assert "Seeds: mean and between-seed SD" in text and "56.000" in text and "1.500" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_default_is_a_short_summary_that_points_to_the_rest(tmp_path) -> None:
    # issue 37 §4: compare printed 340 lines and 42 tables on the offline example
    from rich.console import Console

    from weatkit.cli.compare_summary import MAX_PAIRS, print_summary

    result = _result(4)
    result.scores = pd.DataFrame(
        [
            {"model": "model-1", "lang": "en", "method": "gest", "measure": "gest:g_s",
             "value": 1.0001531901275182, "ci_low": 1.0000188981588203,
             "ci_high": 1.0002886904653334, "ci_level": 0.95, "neutral": 1.0,
             "ci_excludes_neutral": True, "p_value_neutral": np.nan},
            {"model": "model-0", "lang": "en", "method": "crows", "measure": "crows:pll",
             "value": 51.0, "ci_low": 45.0, "ci_high": 57.0, "ci_level": 0.95, "neutral": 50.0,
             "ci_excludes_neutral": False, "p_value_neutral": 0.6},
        ]
    )  # fmt: skip
    console = Console(width=100, file=StringIO(), record=True)
    print_summary(result, console, tmp_path / "out")
    text = console.export_text()
    full = _printed(result, width=100)
    pairs = result.correlations[["measure_x", "measure_y"]].drop_duplicates()
    assert full.count("┏") == 4 + 1 + len(pairs)  # -v: each model, the scores, every pair
    lines = text.splitlines()
    assert len(lines) <= 40 and text.count("┏") == 2, text
    n_all = int((result.correlations["scope"] == "all").sum())
    assert f"Agreement between measures: {MAX_PAIRS} of {n_all} pairs;" in text
    assert "Scores whose 95% CI excludes the neutral value: 1 of 2" in text
    assert "1.00015 [1.00002, 1.00029]" in text and "crows:pll" not in text
    assert "Sets X/Y vs A/B: weat1 flowers/insects vs pleasant/unpleasant" in text
    flat = " ".join(text.split())
    assert f"Every table: {tmp_path / 'out'}/table.csv" in flat
    assert f"`weatkit report {tmp_path / 'out'}` puts them on one HTML page; -v prints" in flat
    # unflagged pairs first (the sentence-level ones have 4 units here: †)
    rows = [line for line in lines if " ~ " in line]
    notes = [line.split("│")[-2].strip() for line in rows]
    assert notes[0] == "" and notes[-1] != "" and notes == sorted(notes, key=bool), rows
