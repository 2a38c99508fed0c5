"""``limit`` in a comparison file: every sentence-level score on a seeded, stratified sample."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from tests.compare_fixtures import make_char_mlm
from weatkit.cli import main
from weatkit.crows.data import load_crows
from weatkit.gest.data import load_gest
from weatkit.stereoset.data import load_stereoset

PARALLEL = [
    ("He is strong.", "Er ist stark."),
    ("She cried often.", "Sie weinte oft."),
    ("The man said nothing.", "Der Mann sagte nichts."),
    ("The woman lifts heavy weights.", "Die Frau hebt schwere Gewichte."),
    ("My father loves flowers.", "Mein Vater liebt Blumen."),
    ("Her mother was sad.", "Ihre Mutter war traurig."),
]
CONFIG = """
output: out
languages: [en, de]
models: [{name: A, model: m1}]
contextual: {device: cpu, batch_size: 64}
gest: {mlm_templates: [2], eurogest: false, limit: 32}
stereoset: {limit: 12}
crows: {method: aul, limit: 18}
mbe: {corpora: {de: parallel.tsv}, limit: 4, seed: 2}
scores: {n_bootstrap: 50, seed: 7}
correlation: {n_bootstrap: 0}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CliRunner]:
    root = tmp_path_factory.mktemp("compare-limit")
    make_char_mlm(root / "m1", seed=1)
    (root / "parallel.tsv").write_text("".join(f"{e}\t{d}\n" for e, d in PARALLEL))
    (root / "cmp.yaml").write_text(CONFIG)
    result = CliRunner().invoke(main, ["compare", str(root / "cmp.yaml"), "--no-progress"])
    return root, result


def test_every_sentence_score_is_on_its_sample(run_dir) -> None:
    root, result = run_dir
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(root / "out" / "scores.csv")
    n = scores.groupby("measure")["n"].first().to_dict()
    assert n["crows:aul"] == 18 and n["stereoset:ss_term"] == 12 and n["mbe:aula"] == 4
    assert n["gest:g_s"] == 32
    samples = json.loads((root / "out" / "manifest.json").read_text())["samples"]
    assert set(samples) == {
        "gest:A:en", "stereoset:A:en", "stereoset:A:de", "crows:A:en", "mbe:A:de"
    }  # fmt: skip
    crows = samples["crows:A:en"]
    assert (crows["limit"], crows["seed"], crows["n_items"]) == (18, 7, len(load_crows()))
    assert (
        crows["stratified_by"] == "bias type"
        and sum(s["n"] for s in crows["strata"].values()) == 18
    )
    assert samples["gest:A:en"]["n_items"] == len(load_gest())
    assert samples["stereoset:A:en"]["n_items"] == len(load_stereoset("en").intrasentence)
    assert (samples["mbe:A:de"]["seed"], samples["mbe:A:de"]["stratified_by"]) == (2, "gender")
    assert "note: crows scored on a sample of 18 of 1,508 pairs, stratified by bias type " in (
        result.stderr
    )
    assert "(seed 7): A en (manifest.json: samples)" in result.stderr
    assert "note: mbe scored on a sample of 4 of" in result.stderr


def test_the_sample_is_the_commands_own(run_dir, tmp_path: Path) -> None:
    """compare's CrowS-Pairs sample and score are those of ``weatkit crows --limit``."""
    root, _ = run_dir
    out = tmp_path / "crows"
    res = CliRunner().invoke(
        main,
        ["crows", "--model", str(root / "m1"), "--method", "aul", "--limit", "18", "--seed", "7",
         "--bootstrap", "0", "--device", "cpu", "--no-progress", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    scores = pd.read_csv(root / "out" / "scores.csv").set_index("measure")
    summary = pd.read_csv(out / "summary.csv").set_index("bias_type")
    assert scores.loc["crows:aul", "value"] == pytest.approx(summary.loc["overall", "metric"])
    manifest = json.loads((root / "out" / "manifest.json").read_text())
    crows = json.loads((out / "manifest.json").read_text())["sample"]
    assert manifest["samples"]["crows:A:en"] == crows
