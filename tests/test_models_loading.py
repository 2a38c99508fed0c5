"""Loading options of the hf backend (issue 25 §1, §8): bfloat16 on CPU, ``--device-map`` through
accelerate, ``--max-memory``, ``--quantization`` (CUDA only) and ``--batch-size auto``.

Numbers are compared with the same tiny random-weight models (tests/tiny_models.py) loaded the
plain way: float32 on one device, a fixed batch size.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from tests.tiny_models import make_bert, make_gest_glm, make_gest_mlm
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions, ExtractorPool
from weatkit.errors import ConfigError, ModelError, WeatkitError
from weatkit.models import batching, pool
from weatkit.models.handle import ModelHandle, padded
from weatkit.models.options import LoadOptions, parse_max_memory
from weatkit.sentence.masked_lm import MaskedLM

CPU = LoadOptions(device="cpu")
TEXTS = ["the doctor said", "a nurse laughed loudly", "she is", "he was a doctor"]
WORDS = ["doctor", "nurse", "he", "she", "roses", "tulips", "sunflower", "flower", "good", "bad"]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("loading-models")
    return {
        "bert": make_bert(root / "bert"),
        "mlm": make_gest_mlm(root / "mlm"),
        "glm": make_gest_glm(root / "glm"),
    }


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch: pytest.MonkeyPatch):
    pool.clear()
    monkeypatch.setattr(batching, "_FITTED", {})
    yield
    pool.clear()


def _scores(handle: ModelHandle, head: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Last-layer hidden states and the log-probabilities of every position of ``TEXTS``."""
    ids, mask = padded([handle.tokenizer(t)["input_ids"] for t in TEXTS], handle.pad_id)
    rows, cols = mask.nonzero(as_tuple=True)
    hidden = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1])
    logp = handle.log_probs(head, input_ids=ids, attention_mask=mask, rows=rows, cols=cols)
    return hidden.float().cpu(), logp.cpu()


# ------------------------------------------------------------------------------ dtype


@pytest.mark.parametrize(("model", "head"), [("mlm", "mlm"), ("glm", "glm")])
def test_bfloat16_on_cpu_gives_the_float32_scores_within_bfloat16_tolerance(
    dirs: dict[str, Path], model: str, head: str
) -> None:
    """bfloat16 keeps 8 significant bits (relative step 2**-8 = 0.0039): through two layers the
    scores stay within a few of those steps of float32, and are not equal to them."""
    h32, lp32 = _scores(ModelHandle(str(dirs[model]), CPU), head)
    bf16 = ModelHandle(str(dirs[model]), LoadOptions(device="cpu", dtype="bfloat16"))
    h16, lp16 = _scores(bf16, head)
    assert next(bf16.network(head).parameters()).dtype == torch.bfloat16
    torch.testing.assert_close(lp16, lp32, rtol=0.02, atol=0.05)
    torch.testing.assert_close(h16, h32, rtol=0.02, atol=0.05)
    assert not torch.equal(lp16, lp32)


def test_bfloat16_word_vectors_and_pll_on_cpu(dirs: dict[str, Path]) -> None:
    opts = ContextualOptions(device="cpu", cache=False)
    bf16 = ContextualOptions(device="cpu", cache=False, dtype="bfloat16")
    v32 = ContextualExtractor(str(dirs["bert"]), opts).extract(WORDS, [-1])[-1]
    v16 = ContextualExtractor(str(dirs["bert"]), bf16).extract(WORDS, [-1])[-1]
    assert v16.vectors.dtype == np.float32
    np.testing.assert_allclose(v16.vectors, v32.vectors, rtol=0.02, atol=0.05)
    sentences = MaskedLM(str(dirs["mlm"]), opts)
    tokenized = sentences.tokenize(TEXTS)
    positions = [[i for i, s in enumerate(t.special) if not s] for t in tokenized]
    p32 = sentences.masked_log_probs(tokenized, positions)
    p16 = MaskedLM(str(dirs["mlm"]), bf16).masked_log_probs(tokenized, positions)
    np.testing.assert_allclose(np.concatenate(p16), np.concatenate(p32), rtol=0.02, atol=0.05)


# ------------------------------------------------------------------------------ device map


@pytest.mark.parametrize(
    "options",
    [
        LoadOptions(device_map="auto"),
        LoadOptions(device_map="sequential", max_memory="cpu=1GiB"),
    ],
)
@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only placement")
def test_device_map_on_cpu_gives_the_single_device_scores(
    dirs: dict[str, Path], options: LoadOptions
) -> None:
    plain = _scores(ModelHandle(str(dirs["glm"]), CPU), "glm")
    mapped = ModelHandle(str(dirs["glm"]), options)
    placed = _scores(mapped, "glm")
    assert {p.device.type for p in mapped.network("glm").parameters()} == {"cpu"}
    assert mapped.device == torch.device("cpu")
    for a, b in zip(placed, plain, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_a_model_that_does_not_fit_is_a_one_line_error(dirs: dict[str, Path]) -> None:
    handle = ModelHandle(str(dirs["glm"]), LoadOptions(device_map="auto", max_memory="cpu=2000"))
    with pytest.raises(ModelError) as err:
        handle.network("glm")
    assert str(err.value).startswith(
        f"{dirs['glm']} does not fit in the memory --max-memory cpu=2000 allows: "
    )
    assert str(err.value).endswith(
        "modules would be read from disk; give the devices more (e.g. cpu=64GiB) or use "
        "--quantization 8bit"
    )


def test_device_map_needs_accelerate(
    dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "accelerate", None)  # what an environment without it has
    with pytest.raises(ModelError) as err:
        ModelHandle(str(dirs["bert"]), LoadOptions(device_map="auto"))
    assert str(err.value) == "--device-map auto needs accelerate: pip install accelerate"


def test_max_memory_is_read_in_bytes_and_a_bad_one_is_named() -> None:
    assert parse_max_memory("0=20GiB,cpu=64GiB") == {0: 20 * 2**30, "cpu": 64 * 2**30}
    assert parse_max_memory("1 = 500MB, disk=1024") == {1: 500 * 10**6, "disk": 1024}
    for text, problem in [
        ("gpu=2GiB", "'gpu=2GiB' is not DEVICE=SIZE"),
        ("0", "'0' is not DEVICE=SIZE"),
        ("0=1G", "'0=1G': '1G' is not a size such as 20GiB, 500MB or a number of bytes"),
        ("0=1GiB,0=2GiB", "0 is given twice in '0=1GiB,0=2GiB'"),
    ]:
        with pytest.raises(ConfigError) as err:
            parse_max_memory(text)
        assert err.value.field == "max_memory"
        assert err.value.problem.startswith(problem), err.value.problem


# ------------------------------------------------------------------------------ quantization


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error of a machine without CUDA")
def test_quantization_without_cuda_is_one_line_naming_cuda_and_the_extra(
    dirs: dict[str, Path],
) -> None:
    with pytest.raises(ModelError) as err:
        ModelHandle(str(dirs["bert"]), LoadOptions(quantization="8bit"))
    reason = "no CUDA device is available"
    if "bitsandbytes" not in sys.modules and _missing("bitsandbytes"):
        reason += "; bitsandbytes is not installed (pip install 'weatkit[quant]')"
    assert str(err.value) == f"--quantization 8bit needs CUDA and bitsandbytes: {reason}"


def _missing(package: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(package) is None


def test_quantization_is_part_of_the_identity_of_the_weights(dirs: dict[str, Path]) -> None:
    from weatkit.models.hub import load_config, model_identity

    plain = model_identity(str(dirs["bert"]), load_config(str(dirs["bert"]), CPU), CPU)
    quant = LoadOptions(quantization="4bit")
    assert model_identity(str(dirs["bert"]), None, quant) == {**plain, "quantization": "4bit"}
    assert LoadOptions(dtype="bfloat16", device_map="auto").weights() == {"dtype": "bfloat16"}
    assert quant.weights() == {"dtype": "float32", "quantization": "4bit"}
    # the pool keeps one handle per loading options: another placement is another load
    assert pool._key("m", LoadOptions(device_map="auto")) != pool._key("m", LoadOptions())


# ------------------------------------------------------------------------------ command line


def _crows_args(model: Path, *extra: str) -> list[str]:
    return ["crows", "--model", str(model), "--no-progress", *extra]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error of a machine without CUDA")
def test_cli_quantization_without_cuda_is_a_one_line_error(dirs: dict[str, Path]) -> None:
    res = CliRunner().invoke(main, _crows_args(dirs["mlm"], "--quantization", "4bit"))
    assert res.exit_code != 0
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert "--quantization 4bit needs CUDA and bitsandbytes: no CUDA device" in lines[0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--device-map", "auto", "--max-memory", "0=lots"],
            "--max-memory: '0=lots': 'lots' is not a size such as 20GiB",
        ),
        (["--max-memory", "cpu=1GiB"], "--max-memory: needs a device map (--device-map auto)"),
        (["--device-map", "everywhere"], "--device-map: unknown device map 'everywhere'"),
        (["--quantization", "2bit"], "--quantization: unknown quantization '2bit'"),
        (["--batch-size", "many"], "--batch-size: expected a whole number or auto, not 'many'"),
        (["--device-map", "auto", "--device", "cpu"], "--device-map: places the layers itself"),
    ],
)
def test_cli_bad_loading_options_are_one_line_errors(
    dirs: dict[str, Path], extra: list[str], message: str
) -> None:
    res = CliRunner().invoke(main, _crows_args(dirs["mlm"], *extra))
    assert res.exit_code != 0
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert message in lines[0], lines[0]


# ------------------------------------------------------------------------------ batch size auto


def _allocator(limit: int, calls: list[int]):
    """A forward pass that, like the CUDA allocator, fails on a batch of more than ``limit``
    rows; each row's value is its own (the sum of its items)."""

    def compute(batch: list[list[int]]) -> np.ndarray:
        calls.append(len(batch))
        if len(batch) > limit:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {len(batch)} rows")
        return np.array([float(sum(item)) for item in batch])

    return compute


def _run(items: list[list[int]], compute, batch_size: int | str) -> tuple[np.ndarray, int]:
    return batching.run_batches(
        items,
        compute,
        length=len,
        batch_size=batch_size,
        desc="t",
        model_name="tiny",
        device="cuda:0",
        show_progress=False,
    )


def test_auto_halves_on_out_of_memory_and_keeps_the_size_that_ran() -> None:
    rng = np.random.default_rng(0)
    items = [list(rng.integers(0, 9, size=rng.integers(1, 20))) for _ in range(300)]
    calls: list[int] = []
    auto, n_batches = _run(items, _allocator(40, calls), "auto")
    fixed, _ = _run(items, _allocator(40, []), 32)
    np.testing.assert_array_equal(auto, fixed)
    np.testing.assert_array_equal(auto, [sum(i) for i in items])
    assert calls[:4] == [256, 128, 64, 32]  # halved from AUTO_START until a batch fits
    assert set(calls[4:]) <= {32, 300 % 32} and n_batches == -(-300 // 32)
    assert batching.auto_batch_sizes() == {"tiny": 32}
    calls.clear()  # the next call of the model starts at the size that ran
    _run(items, _allocator(40, calls), "auto")
    assert calls[0] == 32


def test_out_of_memory_at_one_row_and_other_errors() -> None:
    with pytest.raises(WeatkitError) as err:
        _run([[1, 2, 3]], _allocator(0, []), "auto")
    assert str(err.value) == (
        "out of memory on cuda:0 scoring with tiny even at batch size 1 (--batch-size auto; "
        "1 inputs of up to 3 tokens); try --dtype float16, --quantization 8bit or "
        "--device-map auto"
    )
    with pytest.raises(WeatkitError, match=r"at --batch-size 4 \(4 inputs of up to 1 tokens\)"):
        _run([[1]] * 4, _allocator(2, []), 4)

    def broken(batch: list[list[int]]) -> np.ndarray:
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match=r"^shape mismatch$"):  # not memory: not retried
        _run([[1]], broken, "auto")
    with pytest.raises(ConfigError, match="must be a positive integer or auto, got 0"):
        _run([[1]], broken, 0)


def test_auto_word_vectors_equal_a_fixed_batch_and_are_recorded(
    dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed = ContextualExtractor(
        str(dirs["bert"]), ContextualOptions(device="cpu", cache=False, batch_size=2)
    ).extract(WORDS, [0, -1])
    opts = ContextualOptions(device="cpu", cache=False, batch_size="auto")
    extractors = ExtractorPool()
    auto = extractors.get(str(dirs["bert"]), opts)
    hidden_states = auto.handle.hidden_states
    sizes: list[int] = []

    def fits_three(**kwargs: torch.Tensor) -> torch.Tensor:  # the allocator's limit: 3 rows
        sizes.append(len(kwargs["input_ids"]))
        if len(kwargs["input_ids"]) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory.")
        return hidden_states(**kwargs)

    monkeypatch.setattr(auto.handle, "hidden_states", fits_three)
    vectors = auto.extract(WORDS, [0, -1])
    assert sizes[:3] == [len(WORDS), len(WORDS), len(WORDS)]  # 256, 128, ... hold all 10
    assert max(sizes[-3:]) == 2
    for layer in (0, -1):
        assert vectors[layer].words == fixed[layer].words
        np.testing.assert_allclose(vectors[layer].vectors, fixed[layer].vectors, atol=1e-6)
    assert extractors.describe()[0]["batch_size_used"] == 2
    assert json.dumps(extractors.describe()[0]["options"]["batch_size"]) == '"auto"'


def test_cli_batch_size_auto_is_recorded_in_the_manifest(
    dirs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = _crows_args(dirs["mlm"], "--batch-size", "auto", "--limit", "4", "--no-cache")
    res = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["batch_size_used"] == {str(dirs["mlm"]): batching.AUTO_START}
