"""The terminal summary table states the requested confidence level (issue 15, item 7b).

Every row states the level of its intervals (the level of ``--confidence`` for a bootstrap row,
the coverage of a CA-WEAT median's interval; issue 17, item 2); the remark "(< X%)" marks only
the CA-WEAT medians whose order-statistic interval cannot reach that level with so few lists
(coverage of [x_(j), x_(n-j+1)] is 1 - 2 P(Bin(n, 1/2) <= j - 1)).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from click.testing import CliRunner
from rich.console import Console

from weatkit.cli import main
from weatkit.cli.tables import percent, rich_summary
from weatkit.report.tables import SUMMARY_COLUMNS

FAST = ["--bootstrap", "200", "--permutations", "200", "--no-progress"]


def _text(table) -> str:
    console = Console(record=True, width=250)
    console.print(table)
    return console.export_text()


def _row(list_set: str, n_lists: int, ci_method: str, ci_level: float) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(SUMMARY_COLUMNS, np.nan)
    row.update(
        embeddings="e", lang="en", list_set=list_set, test="weat1", n_lists=n_lists,
        statistic=0.5, statistic_ci_low=0.1, statistic_ci_high=0.9, effect_size=1.0,
        effect_size_ci_low=0.5, effect_size_ci_high=1.5, ci_method=ci_method,
        ci_level=ci_level,
    )  # fmt: skip
    return row


def _coverage(n: int, j: int = 1) -> float:
    """1 - 2 P(Bin(n, 1/2) <= j - 1), by counting."""
    return 1 - 2 * sum(math.comb(n, k) for k in range(j)) / 2**n


def test_percent() -> None:
    assert [percent(x) for x in (0.95, 0.9, 0.975, 0.99)] == ["95%", "90%", "97.5%", "99%"]


def test_each_row_states_its_level_and_remarks_follow_the_requested_level() -> None:
    summary = pd.DataFrame(
        [
            _row("weat", 1, "bootstrap-percentile", 0.9),
            _row("ca-weat:v1", 5, "median-order-statistic", _coverage(5)),  # 0.9375
            _row("ca-weat:v3", 3, "median-order-statistic", _coverage(3)),  # 0.75
        ],
        columns=SUMMARY_COLUMNS,
    )
    results = pd.DataFrame(
        {"embeddings": "e", "lang": "en", "test": "weat1",
         "list_set": ["weat", *["ca-weat:v1"] * 5, *["ca-weat:v3"] * 3],
         "p_value": [0.2, 0.01, 0.04, 0.06, 0.2, 0.001, 0.001, 0.5, 0.08]}
    )  # fmt: skip
    text = _text(rich_summary(summary, 0.9, results=results))
    assert "S [CI]" in text and "d [CI]" in text and "95%" not in text
    assert "90% bootstrap" in text and "93.75% median " in text and "75% median (< 90%)" in text
    assert text.count("(<") == 1
    assert "sig 4/5" in text and "sig 2/3" in text  # p < 0.1
    text = _text(rich_summary(summary, 0.95, results=results))
    assert "93.75% median (< 95%)" in text and "75% median (< 95%)" in text
    assert "sig 3/5" in text and "sig 1/3" in text  # p < 0.05


def test_run_prints_the_level_of_confidence(tmp_path) -> None:
    runner = CliRunner()
    args = ["run", "--lists", "ca-weat", "--lists", "weat", "--lang", "en", *FAST]
    for level in (0.9, 0.95):
        out = tmp_path / str(level)
        res = runner.invoke(
            main, [*args, "--confidence", str(level), "--out", str(out)], catch_exceptions=False
        )
        assert res.exit_code == 0, res.output
        assert "S [CI]" in res.stdout and "% CI]" not in res.stdout  # the rows say the level
        summary = pd.read_csv(out / "summary.csv")
        expected = []
        for row in summary.itertuples():
            if row.ci_method == "median-order-statistic":
                # j = 1 is the widest interval: [min, max]
                assert row.ci_level == _coverage(row.n_lists)
                if _coverage(row.n_lists) < level:
                    expected.append(f"{percent(_coverage(row.n_lists))} median (< {level:.0%})")
            else:
                assert row.ci_level == level  # a bootstrap row is never below the level
        assert f"{level:.0%} bootstrap" in res.stdout and "median" in res.stdout
        assert res.stdout.count("(<") == len(expected)
        for remark in expected:
            assert remark in res.stdout
        if level == 0.95:
            assert expected  # some English CA-WEAT test has fewer than 6 lists


# --- numbers shown (issue 24 item 3.7) --------------------------------------------------------


def test_p_values_below_1e_4_never_print_as_zero() -> None:
    from weatkit.cli.tables import fmt_p

    assert [fmt_p(p) for p in (5e-6, 1e-4, 0.00012, 0.5, 1.0)] == [
        "< 1e-4", "0.0001", "0.0001", "0.5000", "1.0000"
    ]  # fmt: skip
    assert fmt_p(np.nan) == fmt_p(None) == ""
    row = _row("weat", 1, "bootstrap-percentile", 0.95) | {"p_value": 5e-6}
    text = _text(rich_summary(pd.DataFrame([row]), 0.95, results=pd.DataFrame([row])))
    assert "< 1e-4" in text and "0.0000" not in text


def test_no_interval_headers_without_a_bootstrap(tmp_path) -> None:
    from weatkit.cli.tables import rich_controls

    row = _row("weat", 1, "", np.nan) | {"p_value": 0.01}
    for column in ("statistic_ci_low", "statistic_ci_high", "effect_size_ci_low",
                   "effect_size_ci_high"):  # fmt: skip
        row[column] = np.nan
    text = _text(rich_summary(pd.DataFrame([row]), 0.95, results=pd.DataFrame([row])))
    assert "CI" not in text and " S " in text and " d " in text and "0.0100" in text
    controls = pd.DataFrame(
        [{"control": "negated", "n": 10, "original": 0.6, "original_ci_low": np.nan,
          "original_ci_high": np.nan, "metric": 0.5, "ci_low": np.nan, "ci_high": np.nan,
          "as_biased": False}]
    )  # fmt: skip
    text = _text(rich_controls(controls, 0.95, title="controls", unit="pairs"))
    assert "CI" not in text and "[" not in text and "0.60" in text
    res = CliRunner().invoke(
        main, ["run", "--lists", "weat", "--lang", "en", "--bootstrap", "0", "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    assert "CI" not in res.stdout and "S [" not in res.stdout


def test_correlation_rows_without_a_correlation_print_a_dash() -> None:
    from weatkit.cli.tables import rich_correlations
    from weatkit.isomorphism.across_languages import correlation_table

    summary = pd.DataFrame(
        {"embeddings": "A", "lang": ["de", "fr"], "list_set": "x", "test": "weat1",
         "effect_size": [0.1, 0.5], "iso_gh": [1.0, 2.0]}
    )  # fmt: skip
    text = _text(rich_correlations(correlation_table(summary)))
    assert "()" not in text and text.count("—") == 6  # r, ρ and R² of A and of all
    assert "2 †" in text and "† n=2 < 3: no correlation" in text


def test_the_summary_defines_s_names_the_sets_and_explains_each_interval() -> None:
    # issue 37 §4: S was never defined, the tests' sets never named, "97.73% median" unexplained
    summary = pd.DataFrame(
        [
            _row("weat", 1, "bootstrap-percentile", 0.95),
            {**_row("ca-weat:v1", 12, "median-order-statistic", _coverage(12, 3)), "test": "weat2"},
        ],
        columns=SUMMARY_COLUMNS,
    )
    results = pd.DataFrame(
        {"embeddings": "e", "lang": "en", "list_set": ["weat", *["ca-weat:v1"] * 12],
         "test": ["weat1", *["weat2"] * 12], "p_value": 0.01}
    )  # fmt: skip
    text = " ".join(_text(rich_summary(summary, 0.95, results=results)).split())
    assert "S = Σ_X s(x) − Σ_Y s(y), s(w) = mean_A cos(w, a) − mean_B cos(w, b)" in text
    assert "d = (mean_X s − mean_Y s) / std_{X∪Y} s" in text
    assert (
        "Sets X/Y vs A/B: weat1 flowers/insects vs pleasant/unpleasant; weat2 "
        "instruments/weapons vs pleasant/unpleasant." in text
    )
    assert f"{percent(_coverage(12, 3))} median" in text  # 96.14%
    assert "95% bootstrap: percentile bootstrap CI of one list's S and d." in text
    assert "P% median: the interval [x_(j), x_(n−j+1)] of the order statistics" in text
    assert "exact coverage P = 1 − 2·P(Bin(n, ½) < j)" in text
