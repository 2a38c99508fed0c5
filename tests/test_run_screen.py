"""The first screen of ``weatkit run --lists ca-weat`` says what each row is (issue 17, item 2).

* Every row of the summary table states the level of its intervals: the requested level for a
  single list's bootstrap CI, the exact coverage 1 − 2 P(Bin(n, 1/2) ≤ j − 1) of a CA-WEAT
  median's order-statistic CI [x_(j), x_(n−j+1)] (Conover 1999, §3.2), marked when it is below
  the requested level; the headers claim no level.
* A median row has no p-value; it shows ``sig k/n``, the lists with permutation p < 1 − level,
  counted here independently from ``results.csv``.
* Skipped tests are one line per embeddings × language with counts; every reason is in
  ``manifest.json`` and printed with ``--verbose``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from weatkit.cli import main

FAST = ["--bootstrap", "200", "--permutations", "200", "--no-progress"]


def _interval_coverage(n: int, level: float) -> float:
    """The coverage 1 - 2 P(Bin(n, 1/2) <= j - 1) of the widest j (largest) that still reaches
    ``level``, or of [min, max] (j = 1) when none does; binomial tail by counting."""
    best = 1 - 2 / 2**n
    for j in range(2, n // 2 + 1):
        cov = 1 - 2 * sum(math.comb(n, k) for k in range(j)) / 2**n
        if cov < level:
            break
        best = cov
    return best


def _pct(level: float) -> str:
    """0.75 -> '75%', 0.875 -> '87.5%', 0.9375 -> '93.75%'."""
    text = f"{100 * level:.2f}".rstrip("0").rstrip(".")
    return text + "%"


def _table_rows(stdout: str) -> list[list[str]]:
    """The body rows of the printed rich table, as stripped cells."""
    return [
        [cell.strip() for cell in line.strip().strip("│").split("│")]
        for line in stdout.splitlines()
        if line.startswith("│")
    ]


def _header(stdout: str) -> list[str]:
    line = next(line for line in stdout.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in line.strip().strip("┃").split("┃")]


def _invoke(*args: str):
    res = CliRunner().invoke(main, ["run", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_each_row_states_its_level_and_significant_lists(tmp_path: Path, level: float) -> None:
    out = tmp_path / "run"
    res = _invoke(
        "--lists", "ca-weat", "--lists", "weat", "--lang", "en", "--confidence", str(level),
        "--out", str(out), *FAST,
    )  # fmt: skip
    header = _header(res.stdout)
    assert header[5:7] == ["S [CI]", "d [CI]"]  # no level claimed for every row
    alpha = 1 - level
    assert header[8] == f"p or sig (p < {alpha:.3g})"
    results = pd.read_csv(out / "results.csv")
    summary = pd.read_csv(out / "summary.csv")
    rows = {(r[1], r[2], r[3]): r for r in _table_rows(res.stdout)}
    assert len(rows) == len(summary) == 4  # weat1, weat2 x (weat, ca-weat:v1)
    seen_median = seen_bootstrap = False
    for s in summary.itertuples():
        cells = rows[(s.lang, s.list_set, s.test)]
        mine = results[
            (results.lang == s.lang) & (results.list_set == s.list_set) & (results.test == s.test)
        ]
        if len(mine) > 1:  # a CA-WEAT median over the language's lists
            seen_median = True
            n = len(mine)
            assert int(cells[4]) == n
            coverage = _interval_coverage(n, level)
            remark = f" (< {_pct(level)})" if coverage < level else ""
            assert cells[7] == f"{_pct(coverage)} median{remark}"
            k = int((mine.p_value < alpha).sum())
            assert cells[8] == f"sig {k}/{n}"
        else:  # one list: its bootstrap CI and permutation p-value
            seen_bootstrap = True
            assert cells[7] == f"{_pct(level)} bootstrap"
            assert cells[8] == f"{mine.p_value.iloc[0]:.4f}"
    assert seen_median and seen_bootstrap
    if level == 0.95:  # 3 and 4 English lists: [min, max] covers 75% and 87.5% only
        assert {rows[("en", "ca-weat:v1", t)][7] for t in ("weat1", "weat2")} == {
            "75% median (< 95%)",
            "87.5% median (< 95%)",
        }


def test_significant_lists_count_only_lists_below_alpha(tmp_path: Path) -> None:
    """With the opposite alternative (S smaller than by chance) no English list is
    significant: the count is 0/n, not n/n."""
    out = tmp_path / "run"
    res = _invoke("--lists", "ca-weat", "--lang", "en", "--alternative", "less",
                  "--out", str(out), *FAST)  # fmt: skip
    results = pd.read_csv(out / "results.csv")
    for test, group in results.groupby("test"):
        k = int((group.p_value < 0.05).sum())
        assert k == 0
        row = next(r for r in _table_rows(res.stdout) if r[3] == test)
        assert row[8] == f"sig 0/{len(group)}"


def test_skip_report_is_one_line_per_language_with_reasons_in_manifest(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = _invoke("--lists", "ca-weat", "--out", str(out), *FAST)
    manifest = json.loads((out / "manifest.json").read_text())
    results = pd.read_csv(out / "results.csv")
    skipped = manifest["skipped"]
    assert len(skipped) == 201  # 208 CA-WEAT v1 tests, 7 run on GloVe
    # every reason in the manifest, in full: the list, the test and the coverage
    for skip in skipped:
        assert f"list {skip['list_id']!r}" in skip["reason"]
        assert f"test {skip['test']!r}" in skip["reason"]
        assert "(minimum coverage 80%)" in skip["reason"]
        # the reason names a few missing items; oov_items holds all of them
        oov = skip["oov_items"].split()
        failing = re.findall(
            r"set ([XYAB]) \([^)]*\) coverage [\d.]+% \((\d+)/(\d+) found\)", skip["reason"]
        )
        assert failing
        for key, found, total in failing:
            assert sum(item.startswith(f"{key}:") for item in oov) == int(total) - int(found)
    en_us5 = next(s for s in skipped if (s["list_id"], s["test"]) == ("en_US5", "weat2"))
    assert "Y:brass_knuckles" in en_us5["oov_items"].split()

    lines = [line for line in res.stderr.splitlines() if line.startswith("skipped:")]
    langs = sorted({s["lang"] for s in skipped})
    assert len(lines) == len(langs) == 26
    expected = []
    for lang in langs:
        mine = [s for s in skipped if s["lang"] == lang]
        n_lists = len({s["list_id"] for s in mine})
        ran = results[results.lang == lang]
        if len(ran):
            total_lists = len({s["list_id"] for s in mine} | set(ran.list_id))
            count = f"{len(mine)} of {len(mine) + len(ran)} tests"
            count += f" ({n_lists} of {total_lists} lists)"
        else:
            count = f"all {len(mine)} tests ({n_lists} list{'s' if n_lists > 1 else ''})"
        expected.append(f"skipped: glove-6b-50d/{lang}: {count}, coverage below 80%")
    assert lines == expected
    assert "skipped: glove-6b-50d/en: 3 of 10 tests (2 of 5 lists), coverage below 80%" in lines
    assert "skipped: glove-6b-50d/de: all 48 tests (24 lists), coverage below 80%" in lines
    assert "missing" not in res.stderr  # no reasons without --verbose
    assert "7 test(s) run, 201 skipped; --verbose prints every reason" in res.stderr

    loud = _invoke("--lists", "ca-weat", "--verbose", *FAST)
    reasons = [line for line in loud.stderr.splitlines() if line.startswith("skipped:")]
    assert reasons == [f"skipped: {s['reason']}" for s in skipped]
