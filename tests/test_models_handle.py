"""The model layer: one handle per model, its identity in cache keys, safe loading, the pool.

Numbers are checked against ``transformers`` models loaded independently (``AutoModel``,
``AutoModelForMaskedLM``); the tiny models come from tests/tiny_models.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from tests.tiny_models import make_bert, make_gest_glm, make_gest_mlm
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions, ExtractorPool
from weatkit.errors import ModelError, WeatkitError
from weatkit.models import pool
from weatkit.models.handle import LoadOptions, ModelHandle, padded
from weatkit.models.hub import model_identity
from weatkit.sentence.masked_lm import MaskedLM

CPU = LoadOptions(device="cpu")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("handle-models")
    return {
        "bert": make_bert(root / "bert"),
        "mlm": make_gest_mlm(root / "mlm"),
        "glm": make_gest_glm(root / "glm"),
    }


@pytest.fixture(autouse=True)
def _empty_pool():
    pool.clear()
    yield
    pool.clear()


def _batch(handle: ModelHandle, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    rows = [handle.tokenizer(t)["input_ids"] for t in texts]
    return padded(rows, handle.pad_id)


def _reference_hidden(model_dir: Path, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    from transformers import AutoModel

    bare = AutoModel.from_pretrained(model_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        out = bare(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    return torch.stack(out.hidden_states)


# ------------------------------------------------------------------------------ loading


def test_local_directory_is_identified_by_its_files(dirs: dict[str, Path]) -> None:
    handle = ModelHandle(str(dirs["bert"]), CPU)
    assert handle.identity["model"] == str(dirs["bert"].resolve())
    paths = {f["path"] for f in handle.identity["content"]}
    assert {"config.json", "model.safetensors", "vocab.txt"} <= paths
    assert handle.n_layers == 2 and not handle.decoder_only
    assert not handle.loaded and not handle.tokenizer_loaded  # nothing loaded yet
    ids, mask = _batch(handle, ["doctor", "sunflower roses"])
    states = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[0, 1, 2])
    assert states.shape == (3, 2, ids.shape[1], 24)
    assert torch.equal(states, _reference_hidden(dirs["bert"], ids, mask))
    assert handle.heads_loaded == (None,) and handle.n_loads == 1


def test_hub_revision_is_resolved_to_a_commit_in_every_cache_key(
    dirs: dict[str, Path], tmp_path: Path
) -> None:
    # a hub cache laid out as huggingface_hub writes it, read offline
    repo = tmp_path / "hub" / "models--weatkit-test--tiny"
    shutil.copytree(dirs["mlm"], repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    script = (
        "import json\n"
        "from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions\n"
        "from weatkit.sentence.masked_lm import MaskedLM\n"
        "from weatkit.gest.scoring import GestScorer\n"
        "opts = ContextualOptions(device='cpu', revision='main')\n"
        "ex = ContextualExtractor('weatkit-test/tiny', opts)\n"
        "lm = MaskedLM('weatkit-test/tiny', opts)\n"
        "print(json.dumps([ex.identity, ex._items.cache.inputs, lm.identity,"
        " GestScorer('weatkit-test/tiny', options=opts).identity,"
        " lm.handle is ex.handle]))\n"
    )
    env = {
        **os.environ,
        "HF_HUB_CACHE": str(tmp_path / "hub"),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    identity, cache_inputs, lm_identity, gest_identity, shared = json.loads(
        done.stdout.strip().splitlines()[-1]
    )
    expected = {"model": "weatkit-test/tiny", "revision": COMMIT}
    assert identity == lm_identity == gest_identity == expected
    assert cache_inputs["revision"] == COMMIT
    assert shared is True


def test_an_unresolved_revision_is_an_error_not_main() -> None:
    config = SimpleNamespace(_commit_hash=None)
    with pytest.raises(ModelError, match="commit hash"):
        model_identity("org/model", config, LoadOptions(revision="main"))
    with pytest.raises(ModelError, match="commit hash"):
        model_identity("org/model", config, LoadOptions())
    assert model_identity("org/never-downloaded", config, LoadOptions(revision=COMMIT)) == {
        "model": "org/never-downloaded",
        "revision": COMMIT,
    }
    known = SimpleNamespace(_commit_hash=COMMIT)
    assert model_identity("org/model", known, LoadOptions(revision="v1"))["revision"] == COMMIT


def test_pickle_weights_are_refused_unless_allowed(dirs: dict[str, Path], tmp_path: Path) -> None:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(dirs["bert"])
    torch.save(model.state_dict(), tmp_path / "pytorch_model.bin")
    for name in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        if (dirs["bert"] / name).exists():
            shutil.copy(dirs["bert"] / name, tmp_path / name)
    assert (tmp_path / "pytorch_model.bin").exists()
    assert not (tmp_path / "model.safetensors").exists()
    refused = ModelHandle(str(tmp_path), CPU)
    with pytest.raises(ModelError, match="--allow-pickle") as info:
        refused.network()
    assert "\n" not in str(info.value) and not refused.loaded
    allowed = ModelHandle(str(tmp_path), LoadOptions(device="cpu", allow_pickle=True))
    reference = ModelHandle(str(dirs["bert"]), CPU)
    ids, mask = _batch(reference, ["doctor nurse"])
    assert torch.equal(
        allowed.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1]),
        reference.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1]),
    )


def test_repository_code_does_not_run_by_default(dirs: dict[str, Path], tmp_path: Path) -> None:
    config = json.loads((dirs["bert"] / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "custom_config.CustomConfig"}
    config["model_type"] = "custom-bert"
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "custom_config.py").write_text("raise SystemExit('remote code ran')\n")
    assert LoadOptions().trust_remote_code is False
    with pytest.raises(ModelError, match="--trust-remote-code"):
        ModelHandle(str(tmp_path), CPU)


def test_an_lm_head_without_trained_weights_is_an_error(dirs: dict[str, Path]) -> None:
    handle = ModelHandle(str(dirs["bert"]), CPU)  # saved as BertModel: no masked-LM head
    with pytest.raises(ModelError, match="no trained masked-LM weights"):
        handle.network("mlm")


# ------------------------------------------------------------------ one load, many uses


def test_one_load_serves_hidden_states_and_mlm_scores(dirs: dict[str, Path]) -> None:
    from transformers import AutoModelForMaskedLM

    handle = pool.get_model(str(dirs["mlm"]), CPU)
    ids, mask = _batch(handle, ["I am happy .", "I never cried ."])
    states = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[0, 1, 2])
    assert handle.heads_loaded == ("mlm",) and handle.n_loads == 1  # the checkpoint's head
    # the head model's base network gives exactly the bare model's hidden states
    assert torch.equal(states, _reference_hidden(dirs["mlm"], ids, mask))

    lm = MaskedLM(str(dirs["mlm"]), ContextualOptions(device="cpu", cache=False))
    assert lm.handle is handle
    sentences = lm.tokenize(["I am happy .", "I never cried ."])
    got = lm.masked_log_probs(sentences, [[1, 2], [3]])
    assert handle.n_loads == 1  # MLM scores from the same weights
    reference = AutoModelForMaskedLM.from_pretrained(dirs["mlm"], dtype=torch.float32).eval()
    for s, positions, values in zip(sentences, [[1, 2], [3]], got, strict=True):
        for p, value in zip(positions, values, strict=True):
            masked = list(s.ids)
            masked[p] = lm.mask_id
            with torch.no_grad():
                logits = reference(torch.tensor([masked])).logits[0, p]
            assert value == pytest.approx(torch.log_softmax(logits, -1)[s.ids[p]].item(), rel=1e-6)
    lm.unmasked(sentences)  # eager attention inside, the previous implementation after
    again = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[0, 1, 2])
    assert torch.equal(again, states)
    assert handle.n_loads == 1


def test_vectors_after_mlm_scores_and_before_give_the_same_numbers(dirs: dict[str, Path]) -> None:
    options = ContextualOptions(device="cpu", cache=False)
    first = ContextualExtractor(str(dirs["mlm"]), options).extract(["happy", "cried"], [-1])
    pool.clear()
    lm = MaskedLM(str(dirs["mlm"]), options)
    lm.unmasked(lm.tokenize(["I am happy ."]))
    extractor = ContextualExtractor(str(dirs["mlm"]), options)
    second = extractor.extract(["happy", "cried"], [-1])
    np.testing.assert_array_equal(first[-1].vectors, second[-1].vectors)
    assert extractor.handle is lm.handle and lm.handle.n_loads == 1


def test_causal_head_checkpoint_loads_once_for_vectors_and_log_probs(
    dirs: dict[str, Path],
) -> None:
    from transformers import AutoModelForCausalLM

    handle = pool.get_model(str(dirs["glm"]), CPU)
    assert handle.decoder_only
    ids, mask = _batch(handle, ['"I am happy .",'])
    states = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1])
    assert torch.equal(states[0], _reference_hidden(dirs["glm"], ids, mask)[-1])
    last = ids.shape[1] - 1
    logp = handle.log_probs("glm", input_ids=ids, attention_mask=mask, rows=[0], cols=[last])
    assert handle.n_loads == 1
    reference = AutoModelForCausalLM.from_pretrained(dirs["glm"], dtype=torch.float32).eval()
    with torch.no_grad():
        expected = torch.log_softmax(reference(input_ids=ids).logits[0, last].float(), -1)
    torch.testing.assert_close(logp[0], expected, rtol=1e-6, atol=1e-6)


def test_a_head_asked_after_the_bare_network_replaces_it(dirs: dict[str, Path]) -> None:
    handle = ModelHandle(str(dirs["mlm"]), CPU)
    handle._networks[None] = handle._load(None)  # as an older checkpoint without a head would
    ids, mask = _batch(handle, ["I am happy ."])
    bare = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1])
    handle.network("mlm")
    assert handle.heads_loaded == ("mlm",)
    assert torch.equal(handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1]), bare)


# ---------------------------------------------------------------------------------- pool


def test_pool_returns_one_handle_per_model_and_loading_options(dirs: dict[str, Path]) -> None:
    bert = str(dirs["bert"])
    handle = pool.get_model(bert, CPU)
    assert pool.get_model(bert, CPU) is handle
    assert pool.get_model(bert + "/", ContextualOptions(device="cpu", subwords="mean")) is handle
    assert pool.get_model(bert, LoadOptions(device="cpu", dtype="float16")) is not handle
    assert pool.handles()[0] is handle and len(pool.handles()) == 2
    # extractors with different pooling options share the weights
    extractors = ExtractorPool()
    for subwords in ("sum", "mean"):
        options = ContextualOptions(device="cpu", cache=False, subwords=subwords)
        extractors.get(bert, options).extract(["doctor"], [0])
    assert extractors.models_loaded == 1 and handle.n_loads == 1


def test_pool_releases_models(dirs: dict[str, Path]) -> None:
    bert, mlm = str(dirs["bert"]), str(dirs["mlm"])
    kept = pool.get_model(bert, CPU)
    kept.network()
    with pool.scope():
        inner = pool.get_model(mlm, CPU)
        inner.network("mlm")
        assert pool.get_model(bert, CPU) is kept
    assert not inner.loaded and kept.loaded  # released on leaving the block; the other kept
    assert pool.get_model(mlm, CPU) is not inner
    pool.release(bert, CPU)
    assert not kept.loaded and pool.get_model(bert, CPU) is not kept
    pool.clear()
    assert pool.handles() == []


def test_unknown_dtype_and_head_are_one_line_errors(dirs: dict[str, Path]) -> None:
    with pytest.raises(WeatkitError, match="unknown dtype"):
        ModelHandle(str(dirs["bert"]), LoadOptions(dtype="float8"))
    with pytest.raises(WeatkitError, match="unknown model kind"):
        ModelHandle(str(dirs["bert"]), CPU).network("seq2seq")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize(("model", "head"), [("mlm", "mlm"), ("glm", "glm")])
def test_cuda_gives_the_cpu_numbers(dirs: dict[str, Path], model: str, head: str) -> None:
    """``device: auto`` picks CUDA; hidden states and log-probabilities equal the CPU's within
    float32 tolerance (the same weights, another summation order)."""
    cpu = ModelHandle(str(dirs[model]), CPU)
    gpu = ModelHandle(str(dirs[model]), LoadOptions())
    assert gpu.device.type == "cuda"
    ids, mask = _batch(cpu, ["the doctor said", "a nurse laughed loudly"])
    layers = [0, -1]
    torch.testing.assert_close(
        gpu.hidden_states(input_ids=ids, attention_mask=mask, layers=layers).cpu(),
        cpu.hidden_states(input_ids=ids, attention_mask=mask, layers=layers),
        rtol=1e-4,
        atol=1e-5,
    )
    where = {"rows": [0, 1, 1], "cols": [1, 1, 2]}
    torch.testing.assert_close(
        gpu.log_probs(head, input_ids=ids, attention_mask=mask, **where).cpu(),
        cpu.log_probs(head, input_ids=ids, attention_mask=mask, **where),
        rtol=1e-4,
        atol=1e-4,
    )
