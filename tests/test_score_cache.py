"""One score cache for every command (issue 25 §3): keyed by the model and the method, not by the
batch size, so ``compare`` reuses what ``crows`` scored, and says so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner
from transformers import PreTrainedModel

from tests.compare_fixtures import make_char_mlm
from weatkit.cli import main
from weatkit.crows.data import load_crows
from weatkit.crows.score import crows_metric, score_crows
from weatkit.data import cache_dir
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.models import cache as score_cache_module
from weatkit.models.cache import NOT_IN_KEY, cache_key, counting, model_inputs
from weatkit.models.handle import LoadOptions
from weatkit.models.pool import scope
from weatkit.sentence.masked_lm import MaskedLM

COMPARE = """
output: out
languages: [en]
models: [{name: A, model: MODEL}]
contextual: {device: cpu, batch_size: 64}
crows: {method: aul, limit: 18}
scores: {n_bootstrap: 0, seed: 7}
correlation: {n_bootstrap: 0}
"""
SENTENCES = ["He is strong.", "She cried often.", "The man said nothing.", "Her mother was sad."]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_char_mlm(tmp_path_factory.mktemp("score-cache") / "m1", seed=1)


@pytest.fixture
def forward_calls() -> Iterator[list[str]]:
    """The class of every transformers model whose forward runs (a global forward hook on every
    torch module: a masked-LM pass counts ``BertForMaskedLM`` and its ``BertModel``)."""
    calls: list[str] = []

    def hook(module: torch.nn.Module, args: object, output: object) -> None:
        if isinstance(module, PreTrainedModel):
            calls.append(type(module).__name__)

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        yield calls
    finally:
        handle.remove()


def _shards(root: Path) -> set[Path]:
    return set(root.rglob("shard-*.safetensors"))


def test_compare_reuses_what_crows_scored_with_another_batch_size(
    model_dir: Path, tmp_path: Path, forward_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    crows = CliRunner().invoke(
        main,
        ["crows", "--model", str(model_dir), "--method", "aul", "--limit", "18", "--seed", "7",
         "--batch-size", "4", "--bootstrap", "0", "--device", "cpu", "--no-progress",
         "--out", "crows"],
    )  # fmt: skip
    assert crows.exit_code == 0, crows.output
    assert "BertForMaskedLM" in forward_calls
    scores_root = cache_dir("scores")
    shards = _shards(scores_root)
    assert shards
    forward_calls.clear()

    (tmp_path / "cmp.yaml").write_text(COMPARE.replace("MODEL", str(model_dir)))
    result = CliRunner().invoke(main, ["compare", "cmp.yaml", "--no-progress"])
    assert result.exit_code == 0, result.output
    # no forward pass, no new shard: every score came from what crows wrote
    assert forward_calls == []
    assert _shards(scores_root) == shards
    # 18 pairs, two sentences each, one AUL/AULA row per sentence
    line = "note: crows · A · en: reused 36 cached scores (written by weatkit crows, batch size 4)"
    assert line + "; scored 0" in result.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["cache"] == {
        "crows:A:en": {
            "cached": 36, "computed": 0, "writers": {"weatkit crows, batch size 4": 36}
        }
    }  # fmt: skip
    assert manifest["contextual"]["batch_size"] == 64
    # the same numbers
    scores = pd.read_csv(tmp_path / "out" / "scores.csv").set_index("measure")
    summary = pd.read_csv(tmp_path / "crows" / "summary.csv").set_index("bias_type")
    assert scores.loc["crows:aul", "value"] == summary.loc["overall", "metric"]
    # and crows' manifest records the batch size its scores were computed with
    crows_manifest = json.loads((tmp_path / "crows" / "manifest.json").read_text())
    assert crows_manifest["contextual"]["batch_size"] == 4


def _score(model: Path, method: str = "aul", **options: object) -> tuple[pd.DataFrame, int, int]:
    """CrowS-Pairs scores of 6 pairs, and how many rows came from the cache / the model."""
    pairs = load_crows().head(6)
    with scope(), counting() as count:
        lm = MaskedLM(str(model), ContextualOptions(device="cpu", **options))
        table = score_crows(lm, pairs, method=method, show_progress=False)
    return table, count.cached, count.computed


def test_a_different_dtype_or_method_misses_the_cache(model_dir: Path) -> None:
    _, cached, computed = _score(model_dir, batch_size=2)
    assert (cached, computed) == (0, 12)
    _, cached, computed = _score(model_dir, batch_size=5)  # another batch size: a hit
    assert (cached, computed) == (12, 0)
    _, cached, computed = _score(model_dir, dtype="bfloat16")
    assert (cached, computed) == (0, 12)
    _, cached, computed = _score(model_dir, method="pll")  # masked tokens, not AUL/AULA
    assert cached == 0 and computed > 0


def test_every_loading_option_but_device_and_revision_is_in_the_key() -> None:
    """A field added to LoadOptions (quantization) is in the key without another change."""
    identity = {"model": "m", "revision": "abc"}
    base = cache_key(model_inputs(identity, LoadOptions()))
    for f in fields(LoadOptions):
        value = getattr(LoadOptions(), f.name)
        other = replace(LoadOptions(), **{f.name: not value if isinstance(value, bool) else "x"})
        changed = cache_key(model_inputs(identity, other)) != base
        assert changed == (f.name not in NOT_IN_KEY), f.name
    assert model_inputs(identity, LoadOptions(revision="main"))["revision"] == "abc"
    assert model_inputs(identity, None)["backend"] == "hf"
    same = ContextualOptions(batch_size=1, device="cuda"), ContextualOptions(batch_size=64)
    assert len({cache_key(model_inputs(identity, o)) for o in same}) == 1


def test_entries_of_an_older_cache_version_are_not_reused(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(score_cache_module, "CACHE_VERSION", score_cache_module.CACHE_VERSION - 1)
        _, cached, computed = _score(model_dir)
        assert (cached, computed) == (0, 12)
        assert _score(model_dir)[1] == 12  # read back under that version
    _, cached, computed = _score(model_dir)
    assert (cached, computed) == (0, 12)


def test_batch_size_changes_the_last_bits_only(model_dir: Path) -> None:
    """The scores of batch sizes 1, 8 and 64 agree to float32 rounding, and the metric exactly
    (docs/guides/caching.md gives the differences measured on more pairs)."""
    tables = {}
    for batch_size in (1, 8, 64):
        with scope():
            options = ContextualOptions(device="cpu", batch_size=batch_size, cache=False)
            lm = MaskedLM(str(model_dir), options)
            tables[batch_size] = score_crows(
                lm, load_crows().head(4), method="pll", show_progress=False
            )
    ref = tables[1][["score_more", "score_less"]].to_numpy()
    for batch_size in (8, 64):
        other = tables[batch_size][["score_more", "score_less"]].to_numpy()
        np.testing.assert_allclose(other, ref, rtol=1e-5, atol=1e-5)
        metric = crows_metric(tables[batch_size], n_bootstrap=0)["metric"]
        assert metric.tolist() == crows_metric(tables[1], n_bootstrap=0)["metric"].tolist()


def test_shards_record_who_wrote_each_item_through_compaction(tmp_path: Path) -> None:
    from weatkit.models.cache import MAX_SHARDS, UNKNOWN_WRITER, VectorCache, _write_shard
    from weatkit.models.provenance import COMMAND

    inputs = {"model": "m"}
    legacy = VectorCache(inputs, tmp_path).directory
    legacy.mkdir()
    _write_shard(legacy / "shard-0.safetensors", ["old"], {0: np.zeros((1, 2))})  # no writers
    token = COMMAND.set("weatkit crows")
    try:
        for k in range(MAX_SHARDS):  # the last put merges the shards into one
            VectorCache(inputs, tmp_path, batch_size=k + 1).put([f"i{k}"], {0: np.ones((1, 2))})
    finally:
        COMMAND.reset(token)
    assert len(list(legacy.glob("shard-*"))) == 1
    fresh = VectorCache(inputs, tmp_path)
    assert fresh.writers(["old", "i0", "i7"]) == {
        UNKNOWN_WRITER: 1, "weatkit crows, batch size 1": 1, "weatkit crows, batch size 8": 1
    }  # fmt: skip
    assert fresh.writer == "the Python API"
