"""``weatkit gest --model``: tiny models on the whole GEST set, per-template aggregates."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import spearmanr

from tests.tiny_models import make_gest_glm, make_gest_mlm
from weatkit.cli import main
from weatkit.gest.aggregate import aggregate_scores
from weatkit.gest.data import load_gest
from weatkit.gest.scoring import score_samples


def invoke(*args: str):
    return CliRunner().invoke(main, ["gest", *args])


@pytest.mark.parametrize(("kind", "templates"), [("mlm", "0,3"), ("glm", "1")])
def test_model_scores_and_per_template_aggregates(
    tmp_path: Path, data_dir: Path, kind: str, templates: str
) -> None:
    make = make_gest_mlm if kind == "mlm" else make_gest_glm
    model = make(tmp_path / "model")
    out = tmp_path / "out"
    res = invoke("--model", str(model), "--kind", kind, "--templates", templates,
                 "--bootstrap", "100", "--out", str(out), "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False, na_values=[""])
    wanted = [int(t) for t in templates.split(",")]
    gest = load_gest()
    assert sorted(scores.template.unique()) == wanted
    assert len(scores) == len(wanted) * len(gest)
    # the scores are the scoring module's, joined with the right sentences and stereotypes
    direct = score_samples(str(model), gest.sentence.tolist()[:50], kind=kind, templates=wanted)
    first = scores[scores.sample_id < 50].sort_values(["template", "sample_id"])
    assert np.allclose(first.score, direct.score, equal_nan=True)
    assert (first.sentence.to_numpy() == gest.sentence.to_numpy()[first.sample_id]).all()
    assert (first.stereotype.to_numpy() == gest.stereotype.to_numpy()[first.sample_id]).all()
    # each template's summary is the aggregate of that template's scores alone
    summary = pd.read_csv(out / "summary.csv")
    stereotypes = pd.read_csv(out / "stereotypes.csv")
    for template in wanted:
        alone = aggregate_scores(scores[scores.template == template], n_bootstrap=100)
        row = summary[summary.template == template].iloc[0]
        for column in ("q_f", "q_m", "g_s", "g_s_ci_low", "g_s_ci_high", "n_samples"):
            assert row[column] == pytest.approx(alone.summary.iloc[0][column], rel=1e-9)
        per = stereotypes[stereotypes.template == template].reset_index(drop=True)
        assert np.allclose(per.q, alone.stereotypes.q, rtol=1e-9)
    assert "g_s" in res.output and f"template {wanted[0]}" in res.output
    # between-template spread (issue 19.6): SD and range of g_s, Kendall's W of the ranks
    if len(wanted) > 1:
        spread = pd.read_csv(out / "template_spread.csv").iloc[0]
        g_s = summary.sort_values("template").g_s.tolist()
        assert spread.g_s_sd == pytest.approx(statistics.stdev(g_s), rel=1e-12)
        assert spread.g_s_range == pytest.approx(max(g_s) - min(g_s), rel=1e-12)
        # two raters without ties: W = (1 + Spearman's rho) / 2
        q = [stereotypes[stereotypes.template == t].sort_values("stereotype").q for t in wanted]
        rho = spearmanr(q[0], q[1]).statistic
        assert spread.kendall_w == pytest.approx((1 + rho) / 2, rel=1e-9)
        assert "Kendall's W" in res.output
    else:
        assert not (out / "template_spread.csv").exists()


def test_bad_template_ids_are_one_line_errors(tmp_path: Path, data_dir: Path) -> None:
    model = make_gest_mlm(tmp_path / "model")
    res = invoke("--model", str(model), "--templates", "x", "--no-progress")
    assert res.exit_code == 1 and "--templates 'x'" in res.output
    res = invoke("--model", str(model), "--kind", "mlm", "--templates", "7", "--no-progress")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1


def test_limit_scores_a_sample_stratified_by_stereotype(tmp_path: Path, data_dir: Path) -> None:
    """--limit 40 of GEST's samples: every stereotype keeps its proportional share (Σ = 40), the
    scores are those of the full run on the same samples, and the manifest and note say so."""
    import json

    from weatkit.stats.sampling import allocate

    model = make_gest_mlm(tmp_path / "model")
    out = tmp_path / "out"
    res = invoke("--model", str(model), "--kind", "mlm", "--templates", "0", "--limit", "40",
                 "--seed", "9", "--bootstrap", "0", "--out", str(out), "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    gest = load_gest()
    sizes = gest.stereotype.value_counts().to_dict()
    assert f"note: scoring a sample of 40 of {len(gest):,} samples, stratified by stereotype" in (
        res.stderr
    )
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False, na_values=[""])
    assert len(scores) == 40
    expected = {k: v for k, v in allocate(sizes, 40).items() if v}
    assert scores.stereotype.value_counts().to_dict() == expected
    assert (scores.sentence.to_numpy() == gest.sentence.to_numpy()[scores.sample_id]).all()
    direct = score_samples(str(model), gest.sentence[scores.sample_id].tolist(), templates=[0])
    assert np.allclose(scores.score, direct.score, equal_nan=True)
    assert pd.read_csv(out / "summary.csv").n_samples.tolist() == [40]
    sample = json.loads((out / "manifest.json").read_text())["sample"]
    assert (sample["limit"], sample["seed"], sample["n_items"]) == (40, 9, len(gest))
    assert sample["strata"]["1"] == {"n": expected[1], "of": sizes[1]}
    # too few to give each of the 16 stereotypes one sample: a one-line error before scoring
    res = invoke("--model", str(model), "--limit", "10", "--no-progress")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1
    assert "--limit: 10 leaves stereotype" in res.output and "give at least" in res.output
    res = invoke("--scores", str(out / "scores.csv"), "--limit", "5")
    assert res.exit_code == 1 and "--limit is for --model" in res.output
