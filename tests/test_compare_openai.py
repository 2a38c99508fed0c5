"""``weatkit compare`` with a model behind an OpenAI-compatible server (llama.cpp's, started by
the ``llama_server`` fixture): the model's kind comes from its spec, not a config file, and its
CrowS-Pairs ``sum`` equals the command's own scores of the same pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.llama_server import ALIAS
from weatkit.crossmethod.config import load_compare_config
from weatkit.crossmethod.runner import run_compare
from weatkit.crows.data import load_crows, sample_pairs
from weatkit.crows.score import crows_metric, score_crows
from weatkit.scoring import get_scorer

LIMIT = 4
SEED = 11


def test_compare_scores_a_server_model(
    llama_server: str, data_dir: Path, tmp_path: Path
) -> None:
    spec = f"openai:{llama_server}#{ALIAS}"
    path = tmp_path / "cmp.yaml"
    path.write_text(
        f"output: {tmp_path / 'out'}\nlanguages: [en]\n"
        f"models: [{{name: S, model: '{spec}'}}]\n"
        f"crows: {{method: sum, limit: {LIMIT}}}\n"
        f"scores: {{n_bootstrap: 0, seed: {SEED}}}\n"
    )
    result = run_compare(load_compare_config(path), show_progress=False)
    table = result.table.set_index("model")
    pairs, _ = sample_pairs(load_crows(lang="en"), LIMIT, SEED)
    per_pair = score_crows(get_scorer(spec), pairs, method="sum", show_progress=False)
    expected = crows_metric(per_pair, n_bootstrap=0).set_index("bias_type")
    assert table.loc["S", "crows:sum"] == pytest.approx(expected.loc["overall", "metric"])
    assert result.skipped.empty
