"""``weatkit gest --reliability`` (issue 28 §4.1): reliability across GEST's templates.

The numbers of reliability.csv are checked against a computation by hand from the per-template
scores the same run wrote (scores.csv): Spearman–Brown of the split-half correlations, and
ICC(2,1), ICC(2,k) from the two-way ANOVA mean squares (Shrout & Fleiss 1979).
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.tiny_models import make_gest_glm, make_gest_mlm
from weatkit.cli import main
from weatkit.gest.reliability import GEST_RELIABILITY_COLUMNS, gest_reliability


def invoke(*args: str):
    return CliRunner().invoke(main, ["gest", *args])


def _split_half_by_hand(x: np.ndarray) -> tuple[float, float]:
    """Mean over the splits of the k columns into halves of the Pearson r of the half means,
    and of r_SB = max(2r / (1 + r), -1) (every split once: {A, B} and {B, A} are the same)."""
    k = x.shape[1]
    splits = [
        a
        for a in combinations(range(k), k // 2)
        if 2 * len(a) < k or 0 in a  # an even k: each split once, the half with column 0
    ]
    rs = []
    for a in splits:
        b = [j for j in range(k) if j not in a]
        rs.append(np.corrcoef(x[:, list(a)].mean(axis=1), x[:, b].mean(axis=1))[0, 1])
    r = np.asarray(rs)
    return float(r.mean()), float(np.maximum(2 * r / (1 + r), -1.0).mean())


def _icc2_by_hand(x: np.ndarray) -> tuple[float, float]:
    """ICC(2,1) and ICC(2,k) from the two-way ANOVA mean squares."""
    n, k = x.shape
    grand = x.mean()
    rows, cols = x.mean(axis=1), x.mean(axis=0)
    msr = k * ((rows - grand) ** 2).sum() / (n - 1)
    msc = n * ((cols - grand) ** 2).sum() / (k - 1)
    resid = x - rows[:, None] - cols[None, :] + grand
    mse = (resid**2).sum() / ((n - 1) * (k - 1))
    icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    icc2k = (msr - mse) / (msr + (msc - mse) / n)
    return float(icc2), float(icc2k)


@pytest.mark.parametrize(("kind", "templates"), [("glm", "0,1"), ("mlm", "0,1,2,3")])
def test_reliability_csv_is_the_hand_computation_from_the_scores(
    tmp_path: Path, data_dir: Path, kind: str, templates: str
) -> None:
    make = make_gest_mlm if kind == "mlm" else make_gest_glm
    model = make(tmp_path / "model")
    out = tmp_path / "out"
    res = invoke("--model", str(model), "--kind", kind, "--templates", templates,
                 "--limit", "48", "--bootstrap", "50", "--reliability", "--out", str(out),
                 "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Reliability across templates" in res.stdout
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False, na_values=[""])
    table = pd.read_csv(out / "reliability.csv")
    assert table.columns.tolist() == GEST_RELIABILITY_COLUMNS
    assert table.unit_kind.tolist() == ["stereotypes", "samples"]
    ids = [int(t) for t in templates.split(",")]
    by_units = {
        "stereotypes": scores.groupby(["stereotype", "template"]).score.mean().unstack(),
        "samples": scores.pivot(index="sample_id", columns="template", values="score").dropna(),
    }
    for units, wide in by_units.items():
        x = wide[ids].to_numpy(dtype=np.float64)
        row = table.set_index("unit_kind").loc[units]
        assert (row.n_units, row.n_forms) == (len(x), len(ids))
        assert row.forms == templates.replace(",", ";")
        assert row.n_units == (16 if units == "stereotypes" else 48 - row.n_units_dropped)
        r_half, r_sb = _split_half_by_hand(x)
        if len(ids) == 2:  # one split: r_SB = 2r / (1 + r) of the two templates' scores
            r = np.corrcoef(x[:, 0], x[:, 1])[0, 1]
            assert r_sb == pytest.approx(max(2 * r / (1 + r), -1.0), rel=1e-12)
        assert row.r_half == pytest.approx(r_half, rel=1e-9)
        assert row.split_half == pytest.approx(r_sb, rel=1e-9)
        assert row.n_splits == {2: 1, 4: 3}[len(ids)]
        assert row.split_half_ci_low <= row.split_half_ci_high
        icc2, icc2k = _icc2_by_hand(x)
        assert row.icc2 == pytest.approx(icc2, rel=1e-9, abs=1e-12)
        assert row.icc2k == pytest.approx(icc2k, rel=1e-9, abs=1e-12)
        assert row.icc2_ci_low <= row.icc2 <= row.icc2_ci_high
        assert row.ci_level == 0.95


def test_one_template_is_a_one_line_note_not_an_error(tmp_path: Path, data_dir: Path) -> None:
    model = make_gest_mlm(tmp_path / "model")
    out = tmp_path / "out"
    res = invoke("--model", str(model), "--kind", "mlm", "--templates", "0", "--limit", "16",
                 "--bootstrap", "0", "--reliability", "--out", str(out),
                 "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = [line for line in res.stderr.splitlines() if "reliability" in line]
    assert lines == [
        "note: no reliability across GEST templates: it needs 2 templates, these scores have 1 "
        "(template 0); give --model with --templates 0,1,…"
    ]
    assert not (out / "reliability.csv").exists()
    assert (out / "summary.csv").exists()


def test_units_without_a_score_under_every_template_are_dropped_and_too_few_is_a_note() -> None:
    rng = np.random.default_rng(0)
    rows = [
        {"template": t, "sample_id": j, "stereotype": 1 + j % 16, "score": rng.normal()}
        for t in (0, 1)
        for j in range(32)
    ]
    scores = pd.DataFrame(rows)
    unscored = (scores.template == 1) & (scores.sample_id >= 16)  # skipped under template 1
    scores.loc[unscored, "score"] = np.nan
    table, notes = gest_reliability(scores, n_bootstrap=0)
    assert notes == []
    assert table.set_index("unit_kind")[["n_units", "n_units_dropped"]].to_dict("index") == {
        "stereotypes": {"n_units": 16, "n_units_dropped": 0},
        "samples": {"n_units": 16, "n_units_dropped": 16},
    }
    scores.loc[(scores.template == 1) & (scores.sample_id >= 2), "score"] = np.nan
    table, notes = gest_reliability(scores, n_bootstrap=0)
    assert table.empty and table.columns.tolist() == GEST_RELIABILITY_COLUMNS
    assert notes == [
        "no reliability across GEST templates with stereotypes as units: it needs 3 "
        "stereotypes scored under every template, these scores have 2",
        "no reliability across GEST templates with samples as units: it needs 3 samples "
        "scored under every template, these scores have 2",
    ]


def test_reliability_of_translations_or_eurogest_is_a_one_line_error(tmp_path: Path) -> None:
    for args in (["--translations", "x.csv"], ["--model", "m", "--lang", "it"]):
        res = invoke(*args, "--reliability")
        assert res.exit_code == 1
        assert res.output.strip() == (
            "weatkit: error: --reliability compares English GEST's templates (--model); "
            "EuroGEST and --translations have none to compare"
        )
