"""The ``vllm`` backend (issue 25): specs, the one-line errors of a missing extra and of
``--tensor-parallel`` outside vLLM, the backend's own code against a stand-in for vLLM's
documented output, and, where vLLM and a CUDA device are installed, vLLM's prompt
log-probabilities against the ``hf`` backend's on tiny random-weight models.

The stand-in (:func:`stand_in_vllm`) is not vLLM: it answers ``LLM.generate`` with the shape
vLLM documents (``RequestOutput.prompt_logprobs``: None, then one ``{token id: Logprob}`` per
prompt token) from a transformers forward pass, so that the tokenisation, the start token and the
alignment of :mod:`weatkit.scoring.vllm` are checked here; vLLM's own numbers only by
:func:`test_vllm_equals_hf_on_a_gpu`.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from tests.tiny_models import CAUSAL_ARCHS, make_causal_lm, make_char_mlm
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.errors import ConfigError, ModelError
from weatkit.grid import load_grid_config
from weatkit.models.options import LoadOptions
from weatkit.scoring import ModelSpec, get_scorer, parse_model_spec

TEXTS = ["The nurse said hello.", "She", "Ünïcödé bytes: ½ €", "this is a tree and a sun"]
HF_ONLY = (
    "--tensor-parallel 2 is for vllm: models; an hf: model is spread over several GPUs with "
    "--device-map auto"
)
VLLM_INSTALLED = importlib.util.find_spec("vllm") is not None


@pytest.fixture(scope="module", params=CAUSAL_ARCHS)
def causal(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("causal") / request.param, request.param)


def _one_line_error(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("weatkit: error: ")]
    assert len(lines) == 1, result.output
    return lines[0].removeprefix("weatkit: error: ")


# --------------------------------------------------------------------------------------------
# specs and the extra


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("vllm:meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("vllm:./models/tiny", "./models/tiny"),
        (" vllm: Qwen/Qwen2.5-0.5B ", "Qwen/Qwen2.5-0.5B"),
    ],
)
def test_vllm_specs_parse(text: str, model: str) -> None:
    spec = parse_model_spec(text)
    assert spec == ModelSpec("vllm", model) and parse_model_spec(str(spec)) == spec


def test_an_empty_vllm_spec_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^--model 'vllm:': name a model after 'vllm:'$"):
        parse_model_spec("vllm:")


@pytest.mark.skipif(VLLM_INSTALLED, reason="vllm is installed here")
def test_without_vllm_a_command_names_the_extra(tmp_path: Path) -> None:
    expected = "the vllm backend needs vllm: pip install 'weatkit[vllm]'"
    with pytest.raises(ConfigError, match=r"^the vllm backend needs vllm: pip install"):
        get_scorer("vllm:some/model")
    args = ["mbe", "--model", "vllm:some/model", "--method", "mean-ll", "--mbe-set", "ja",
            "--corpus", "ted"]  # fmt: skip
    assert _one_line_error(args) == expected


# --------------------------------------------------------------------------------------------
# --tensor-parallel is vLLM's alone


def test_tensor_parallel_outside_vllm_is_one_line(causal: Path, tmp_path: Path) -> None:
    two = ContextualOptions(tensor_parallel=2, device="cpu")
    for make in (
        lambda: get_scorer(f"hf:{causal}", two),
        lambda: ContextualExtractor(str(causal), two),
    ):
        with pytest.raises(ConfigError) as err:
            make()
        assert str(err.value) == HF_ONLY
    with pytest.raises(ConfigError) as err:  # refused before the server is asked
        get_scorer("openai:http://127.0.0.1:9/v1#m", two)
    assert str(err.value) == (
        "--tensor-parallel 2 is for vllm: models; an openai: server shards its model itself "
        "(e.g. vllm serve --tensor-parallel-size 2)"
    )
    base = ["mbe", "--method", "mean-ll", "--mbe-set", "ja", "--corpus", "ted"]
    assert _one_line_error([*base, "--model", str(causal), "--tensor-parallel", "2"]) == HF_ONLY
    # word vectors never come from vLLM: weatkit run has no such flag
    result = CliRunner().invoke(main, ["run", "--tensor-parallel", "2"])
    assert result.exit_code == 2 and "No such option '--tensor-parallel'" in result.output


def test_tensor_parallel_in_a_grid_file(causal: Path, tmp_path: Path) -> None:
    from tests.grid_fixtures import make_grid

    path = make_grid(
        tmp_path,
        embeddings=[{"name": "M", "model": str(causal), "layers": [0]}],
        contextual={"tensor_parallel": 2},
    )
    with pytest.raises(ConfigError) as err:
        load_grid_config(path)
    assert str(err.value) == f"{path}: embeddings[1]: {HF_ONLY}"
    path = make_grid(tmp_path, contextual={"tensor_parallel": 0})
    with pytest.raises(ConfigError) as err:
        load_grid_config(path)
    assert str(err.value) == (
        f"{path}: contextual.tensor_parallel: must be a whole number of GPUs >= 1, got 0"
    )


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_bad_tensor_parallel_names_the_flag(value: str) -> None:
    args = ["mbe", "--model", "vllm:m", "--method", "mean-ll", "--mbe-set", "ja", "--corpus",
            "ted", "--tensor-parallel", value]  # fmt: skip
    assert _one_line_error(args) == (
        f"--tensor-parallel: must be a whole number of GPUs >= 1, got {value}"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (LoadOptions(quantization="8bit"), "--quantization 8bit is for hf: models"),
        (LoadOptions(device_map="auto"), "--device-map auto is for hf: models"),
        (LoadOptions(device="cuda:1"), "--device cuda:1: a vllm: model runs on the GPUs"),
        (LoadOptions(device="cpu"), "--device cpu: a vllm: model runs on the GPUs"),
    ],
)
def test_hf_placement_options_are_refused_for_vllm(options: LoadOptions, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        options.check_backend("vllm")
    assert str(err.value).startswith(message)
    LoadOptions(tensor_parallel=4, device="cuda").check_backend("vllm")  # what vLLM takes


# --------------------------------------------------------------------------------------------
# the backend's code against a stand-in for vLLM's documented output


@dataclass
class _Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class _RequestOutput:
    prompt_token_ids: list[int]
    prompt_logprobs: list[dict[int, _Logprob] | None]


@pytest.fixture
def stand_in_vllm(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A module ``vllm`` whose ``LLM(**kwargs)`` records its arguments and whose ``generate``
    answers token prompts with prompt log-probabilities from a transformers forward pass, in
    the shape vLLM documents; yields what was recorded."""
    from transformers import AutoModelForCausalLM

    seen: dict[str, Any] = {"calls": 0}

    class SamplingParams:
        def __init__(self, **kwargs: Any) -> None:
            seen["sampling"] = kwargs

    class LLM:
        def __init__(self, **kwargs: Any) -> None:
            seen["engine"] = kwargs
            self.model = AutoModelForCausalLM.from_pretrained(kwargs["model"]).eval()

        def generate(self, prompts: list[dict], params: Any, *, use_tqdm: bool) -> list:
            seen["calls"] += 1
            out = []
            for prompt in prompts:
                ids = prompt["prompt_token_ids"]
                seen.setdefault("prompts", []).append(ids)
                with torch.no_grad():
                    logits = self.model(input_ids=torch.tensor([ids])).logits[0]
                logp = torch.log_softmax(logits.float(), dim=-1)
                rows: list[dict[int, _Logprob] | None] = [None]
                rows += [{ids[j]: _Logprob(float(logp[j - 1, ids[j]]))} for j in range(1, len(ids))]
                out.append(_RequestOutput(ids, rows))
            return out

    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", loader=None)
    module.LLM, module.SamplingParams = LLM, SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    return seen


def test_scores_and_spans_equal_the_hf_backends(causal: Path, stand_in_vllm: dict) -> None:
    options = ContextualOptions(tensor_parallel=2, dtype="bfloat16")
    scorer = get_scorer(f"vllm:{causal}", options)
    assert scorer.capabilities == frozenset({"causal"})
    assert "engine" not in stand_in_vllm  # the engine is made on first use
    got = scorer.causal_logprobs(TEXTS, show_progress=False)
    assert stand_in_vllm["engine"] == {
        "model": str(causal), "tokenizer": str(causal), "revision": None,
        "tokenizer_revision": None, "dtype": "bfloat16", "tensor_parallel_size": 2,
        "trust_remote_code": False, "load_format": "safetensors", "seed": 0,
    }  # fmt: skip
    assert stand_in_vllm["sampling"] == {"max_tokens": 1, "prompt_logprobs": 0, "temperature": 0.0}
    hf = get_scorer(f"hf:{causal}", ContextualOptions(device="cpu"))
    for ours, theirs in zip(got, hf.causal_logprobs(TEXTS, show_progress=False), strict=True):
        assert (ours.text, ours.tokens) == (theirs.text, theirs.tokens)
        assert ours.offsets == theirs.offsets
        np.testing.assert_allclose(ours.logprobs, theirs.logprobs, rtol=1e-5, atol=1e-5)
        assert not np.isnan(ours.logprobs).any()  # every token is conditioned on a start token
    assert '"backend": "vllm"' in scorer.identity


def test_no_start_sends_the_texts_tokens_alone(causal: Path, stand_in_vllm: dict) -> None:
    """``start="none"``: the token prompt is the text's tokens with nothing in front, and the
    values are the hf backend's with the same start (the first token NaN)."""
    scorer = get_scorer(f"vllm:{causal}", ContextualOptions())
    got = scorer.causal_logprobs(TEXTS, show_progress=False, start="none")
    tok = scorer.tokenizer
    assert stand_in_vllm["prompts"] == tok(TEXTS, add_special_tokens=False)["input_ids"]
    hf = get_scorer(f"hf:{causal}", ContextualOptions(device="cpu", cache=False))
    for ours, theirs in zip(got, hf.causal_logprobs(TEXTS, start="none"), strict=True):
        assert (ours.tokens, ours.offsets) == (theirs.tokens, theirs.offsets)
        np.testing.assert_allclose(ours.logprobs, theirs.logprobs, rtol=1e-5, atol=1e-5)
        assert np.isnan(ours.logprobs[0]) and not np.isnan(ours.logprobs[1:]).any()


def test_texts_go_to_the_engine_in_calls_of_at_most_512(
    causal: Path, stand_in_vllm: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import weatkit.scoring.vllm

    monkeypatch.setattr(weatkit.scoring.vllm, "TEXTS_PER_CALL", 3)
    scorer = get_scorer(f"vllm:{causal}", ContextualOptions())
    got = scorer.causal_logprobs([f"{t} {i}" for i, t in enumerate(TEXTS * 2)])
    assert stand_in_vllm["calls"] == 3 and [t.text[-1] for t in got] == list("01234567")


def test_bad_inputs_are_one_line(causal: Path, stand_in_vllm: dict, tmp_path: Path) -> None:
    scorer = get_scorer(f"vllm:{causal}", None)
    with pytest.raises(ModelError, match=r"^text 1 is empty or not text: ' '$"):
        scorer.causal_logprobs(["a", " "])
    with pytest.raises(ModelError, match=r"^text 0 is 257 tokens long; .* takes 256"):
        scorer.causal_logprobs(["x" * 256])
    with pytest.raises(ModelError, match=r"gives no embeddings; use hf:"):
        scorer.embed(["a"])
    assert scorer.causal_logprobs([]) == [] and stand_in_vllm["calls"] == 0
    mlm = make_char_mlm(tmp_path / "bert")
    with pytest.raises(ModelError, match=r"not a causal LM \(BertConfig\)"):
        get_scorer(f"vllm:{mlm}", None)


# --------------------------------------------------------------------------------------------
# vLLM itself, where it runs


@pytest.mark.slow
@pytest.mark.parametrize("arch", CAUSAL_ARCHS)
def test_vllm_equals_hf_on_a_gpu(arch: str, tmp_path: Path) -> None:
    """vLLM's prompt log-probabilities of tiny random-weight models (float32, heads of 64 for
    its attention kernels) against the hf backend's on the CPU: the same tokens and spans, the
    same numbers within float32 kernel differences."""
    pytest.importorskip("vllm", reason="the vllm extra is not installed")
    if not torch.cuda.is_available():
        pytest.skip("vLLM needs a CUDA device")
    model = make_causal_lm(tmp_path / arch, arch, hidden=128)
    vllm_scorer = get_scorer(f"vllm:{model}", ContextualOptions(dtype="float32"))
    got = vllm_scorer.causal_logprobs(TEXTS, show_progress=False)
    hf = get_scorer(f"hf:{model}", ContextualOptions(dtype="float32", device="cpu"))
    for ours, theirs in zip(got, hf.causal_logprobs(TEXTS, show_progress=False), strict=True):
        assert (ours.tokens, ours.offsets) == (theirs.tokens, theirs.offsets)
        np.testing.assert_allclose(ours.logprobs, theirs.logprobs, rtol=1e-4, atol=2e-3)
