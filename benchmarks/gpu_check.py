"""The steps of ``benchmarks/gpu_check.sh`` that run Python: weatkit's CUDA paths, checked and
timed in the few minutes a GPU machine is lent (issue 36 §4).

Every step prints machine-readable lines, one per figure::

    STEP <name> <ok|fail|skip> <seconds> key=value key=value ...

(``gpu_check.sh`` adds one such line per step, with ``timeout`` when its time limit ran out),
so a later session can paste the figures into BENCHMARKS.md. A step exits 1 when a check
failed, 0 otherwise (a skipped part, with its reason, is not a failure).

    python benchmarks/gpu_check.py info            # torch.cuda, bitsandbytes, vllm
    python benchmarks/gpu_check.py hf-cuda         # crows on CUDA (dtypes, 8/4-bit) vs CPU
    python benchmarks/gpu_check.py oom             # --batch-size auto against a real OOM
    python benchmarks/gpu_check.py engine          # the paper grid, CUDA vs CPU
    python benchmarks/gpu_check.py build-1b DIR    # a random-weight ~1.1B Llama in DIR
    python benchmarks/gpu_check.py throughput-hf DIR     # its CrowS-Pairs throughput, hf
    python benchmarks/gpu_check.py throughput-vllm DIR   # the same, vllm

Models are random-weight (no network on the lent machine), built with the tokenizer of
:func:`tests.tiny_models.make_causal_lm` (byte-level BPE, a few hundred tokens, unknown words
byte by byte): a sentence has about 3× the tokens a real Llama tokenizer gives it, so tokens/s
is the figure to compare with other models, not sentences/s.

``GPU_CHECK_DRY_RUN=1`` runs every step on the CPU at small sizes (``cuda`` read as ``cpu``; the
device map, quantization and vLLM skipped; the out-of-memory raised by a stand-in limit of 16
rows instead of the allocator): it checks the code of the steps, not the GPU, so that the
minutes on a GPU are not spent on a typo (tests/test_gpu_check.py runs it).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # weatkit and tests.tiny_models of this checkout

#: Float32 CUDA against float32 CPU: log-probs of sentences (sums of ~100 tokens) agree within
#: this (tests/test_invariance.py, I6, gives the reasoning).
F32_SCORE_ATOL = 1e-3
#: Two float32 batch shapes on the GPU (I1 of tests/test_invariance.py, with room for cuBLAS's
#: shape-dependent kernels).
F32_LOGPROB_ATOL = 1e-4
#: The engine's float64 numbers, CUDA against CPU (tests/test_engine.py).
ENGINE_ATOL = 1e-10
#: TinyLlama-1.1B's shape (hidden, intermediate, layers, heads, key-value heads).
LLAMA_1B = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
            "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
            "max_position_embeddings": 2048}  # fmt: skip

FAILED = False
#: GPU_CHECK_DRY_RUN=1: every step on the CPU, small (module docstring).
DRY_RUN = os.environ.get("GPU_CHECK_DRY_RUN") == "1"
#: Where the "CUDA" side of each step runs.
DEVICE = "cpu" if DRY_RUN else "cuda"


def step(name: str, status: str, seconds: float, **detail: object) -> None:
    """Print one ``STEP`` line (values without spaces: they are replaced by ``_``)."""
    global FAILED
    FAILED = FAILED or status == "fail"
    fields = " ".join(f"{k}={_value(v)}" for k, v in detail.items())
    print(f"STEP {name} {status} {seconds:.1f} {fields}".rstrip(), flush=True)


def _value(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if v and (abs(v) < 1e-3 or abs(v) >= 1e5) else f"{v:.4g}"
    return str(v).replace(" ", "_")


@contextmanager
def clock() -> Iterator[Callable[[], float]]:
    """Seconds since entry (CUDA work included: synchronized before reading)."""
    import torch

    start = time.perf_counter()

    def elapsed() -> float:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return time.perf_counter() - start

    yield elapsed


def crows_texts(n: int) -> list[str]:
    """The first ``n`` sentences of CrowS-Pairs (both sides of each pair), real data."""
    from weatkit.crows import load_crows

    table = load_crows()
    texts = [s for pair in zip(table.sent_more, table.sent_less, strict=True) for s in pair]
    return texts[:n]


def tiny_causal(root: Path, hidden: int = 128) -> Path:
    """The 2-layer random-weight Llama of the tests, heads of 64 (bitsandbytes, vLLM)."""
    from tests.tiny_models import make_causal_lm

    return make_causal_lm(root / "tiny-llama", "llama", hidden=hidden)


# --------------------------------------------------------------------------------------------
# info


def info() -> None:
    """torch.cuda's view of the machine, and which optional GPU packages import."""
    import torch

    with clock() as t:
        ok = torch.cuda.is_available()
        if not ok:
            step("info", "skip", t(), reason="no_CUDA_device")
            return
        props = torch.cuda.get_device_properties(0)
        step(
            "info/torch",
            "ok",
            t(),
            torch=torch.__version__,
            cuda=torch.version.cuda,
            devices=torch.cuda.device_count(),
            name=props.name,
            capability=f"{props.major}.{props.minor}",
            memory_gib=round(props.total_memory / 2**30, 1),
            bf16=torch.cuda.is_bf16_supported(),
            tf32_matmul=torch.backends.cuda.matmul.allow_tf32,
            cpu_threads=torch.get_num_threads(),
        )
    for package in ("transformers", "accelerate", "bitsandbytes", "vllm", "ray"):
        with clock() as t:
            try:
                module = __import__(package)
                step(f"info/{package}", "ok", t(), version=getattr(module, "__version__", "?"))
            except Exception as err:  # an optional package: absent or broken is a reason
                step(f"info/{package}", "skip", t(), reason=f"{type(err).__name__}:_{err}"[:120])


# --------------------------------------------------------------------------------------------
# hf on CUDA: dtypes, device map, quantization, through the CLI


def _crows_cli(model: Path, out: Path, *extra: str) -> tuple[int, str, float]:
    """``weatkit crows --model M --method sum --limit 20 --no-cache --out OUT EXTRA`` in a
    subprocess (as a user runs it); its exit code, last output line and seconds."""
    args = [sys.executable, "-m", "weatkit", "crows", "--model", str(model), "--method", "sum",
            "--limit", "20", "--bootstrap", "0", "--no-cache", "--no-progress", "--out", str(out),
            *extra]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, check=False)
    lines = (done.stderr + done.stdout).strip().splitlines()
    return done.returncode, (lines[-1] if lines else ""), time.perf_counter() - start


def hf_cuda() -> None:
    """CrowS-Pairs (``sum``, 20 pairs) of the tiny Llama on CUDA under each loading option,
    against float32 on the CPU: the largest difference of a sentence score, and how many of
    the 20 verdicts agree. float32 on CUDA must agree within :data:`F32_SCORE_ATOL` with every
    verdict; the others are reported (no threshold is known for them)."""
    import pandas as pd

    root = Path(tempfile.mkdtemp(prefix="gpu-check-hf-"))
    model = tiny_causal(root)
    code, last, seconds = _crows_cli(model, root / "cpu", "--device", "cpu", "--dtype", "float32")
    if code:
        step("hf-cuda/cpu-float32", "fail", seconds, error=last[:200])
        return
    reference = pd.read_csv(root / "cpu" / "pairs.csv").set_index("pair_id")
    step("hf-cuda/cpu-float32", "ok", seconds, pairs=len(reference))
    try:
        import bitsandbytes  # noqa: F401

        bnb = ""
    except Exception as err:  # absent, or present without a working CUDA build
        bnb = f"bitsandbytes_does_not_import:_{type(err).__name__}"
    variants = {
        "float32": ["--dtype", "float32", "--device", DEVICE],
        "bfloat16": ["--dtype", "bfloat16", "--device", DEVICE],
        "float16": ["--dtype", "float16", "--device", DEVICE],
        "device-map-auto": ["--dtype", "bfloat16", "--device-map", "auto"],
        "8bit": ["--quantization", "8bit", "--device", DEVICE],
        "4bit": ["--quantization", "4bit", "--device", DEVICE],
    }
    for name, extra in variants.items():
        if DRY_RUN and name in ("device-map-auto", "8bit", "4bit"):
            step(f"hf-cuda/{name}", "skip", 0.0, reason="dry_run_on_the_CPU")
            continue
        if name in ("8bit", "4bit") and bnb:
            step(f"hf-cuda/{name}", "skip", 0.0, reason=bnb)
            continue
        code, last, seconds = _crows_cli(model, root / name, *extra)
        if code:
            step(f"hf-cuda/{name}", "fail", seconds, error=last[:200])
            continue
        got = pd.read_csv(root / name / "pairs.csv").set_index("pair_id").loc[reference.index]
        diff = max((got[c] - reference[c]).abs().max() for c in ("score_more", "score_less"))
        same = int((got["win"] == reference["win"]).sum())
        status = "ok"
        if name == "float32" and (not diff <= F32_SCORE_ATOL or same != len(reference)):
            status = "fail"
        step(f"hf-cuda/{name}", status, seconds, max_abs_diff_vs_cpu=float(diff),
             verdicts_equal=f"{same}/{len(reference)}")  # fmt: skip


# --------------------------------------------------------------------------------------------
# --batch-size auto against a real out-of-memory


def oom(headroom_gib: float = 1.5, n_texts: int = 1000) -> None:
    """``--batch-size auto`` on a Llama whose MLP is 65,536 wide (4 GiB of activations per
    intermediate tensor at 256 rows × 64 tokens), with the process held to its weights plus
    ``headroom_gib`` (``torch.cuda.set_per_process_memory_fraction``): the allocator's real
    out-of-memory error at 256, halvings, then the rest at the size that fits; the numbers
    against a fixed batch size of 8 within :data:`F32_LOGPROB_ATOL`."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    import weatkit.scoring.hf as hf
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.models import batching
    from weatkit.scoring import get_scorer

    root = Path(tempfile.mkdtemp(prefix="gpu-check-oom-"))
    with clock() as t:
        path = tiny_causal(root)
        tok = AutoTokenizer.from_pretrained(path)
        width = 1024 if DRY_RUN else 65536
        config = LlamaConfig(vocab_size=len(tok), hidden_size=256, intermediate_size=width,
                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
                             max_position_embeddings=256, bos_token_id=tok.bos_token_id,
                             eos_token_id=tok.eos_token_id)  # fmt: skip
        torch.manual_seed(0)
        with torch.device(DEVICE):
            model = LlamaForCausalLM(config)
        n_params = sum(p.numel() for p in model.parameters())
        model.save_pretrained(path)
        del model
        if not DRY_RUN:
            torch.cuda.empty_cache()
        step("oom/build", "ok", t(), intermediate=width, params_m=round(n_params / 1e6))
    texts = crows_texts(200 if DRY_RUN else n_texts)
    tried: list[tuple[int, int, bool]] = []  # (rows, padded tokens, out of memory)
    real = batching.run_batches

    def logged(items: Any, compute: Callable[..., Any], **kw: Any) -> Any:
        def run(batch: list[Any]) -> Any:
            rows, tokens = len(batch), len(batch) * max(len(item[0]) for item in batch)
            try:
                if DRY_RUN and rows > 16:  # a stand-in for the allocator's limit
                    raise torch.OutOfMemoryError("out of memory (dry run: more than 16 rows)")
                out = compute(batch)
            except RuntimeError as err:
                memory = isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err)
                tried.append((rows, tokens, memory))
                raise
            if len(tried) < 12:
                tried.append((rows, tokens, False))
            return out

        return real(items, run, **kw)

    hf.run_batches = logged  # type: ignore[assignment]
    auto = get_scorer(f"hf:{path}", ContextualOptions(batch_size="auto", device=DEVICE,
                                                      cache=False))  # fmt: skip
    auto.causal_logprobs(texts[:2], show_progress=False)  # loads the weights
    batching._FITTED.clear()
    tried.clear()
    cap = math.nan
    if not DRY_RUN:
        total = torch.cuda.get_device_properties(0).total_memory
        cap = torch.cuda.memory_allocated() + headroom_gib * 2**30
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap / total))
    with clock() as t:
        try:
            got = auto.causal_logprobs(texts, show_progress=False)
        except Exception as err:
            step("oom/auto", "fail", t(), error=f"{type(err).__name__}:_{err}"[:200])
            return
        seconds = t()
    fitted = batching.auto_batch_sizes().get(str(path))
    ooms = [rows for rows, _, memory in tried if memory]
    sizes = ",".join(f"{r}{'!' if o else ''}" for r, _, o in tried[:12])
    ok = bool(ooms) and fitted is not None and fitted < batching.AUTO_START
    step("oom/auto", "ok" if ok else "fail", seconds, cap_gib=round(cap / 2**30, 1),
         out_of_memory_at_rows=",".join(map(str, ooms)) or "none", fitted=fitted,
         first_batches=sizes, texts=len(texts),
         tokens=sum(len(x.tokens) for x in got))  # fmt: skip
    hf.run_batches = real  # type: ignore[assignment]
    with clock() as t:
        fixed = get_scorer(f"hf:{path}", ContextualOptions(batch_size=8, device=DEVICE,
                                                           cache=False))  # fmt: skip
        expected = fixed.causal_logprobs(texts, show_progress=False)
        diff = max(float(np.nanmax(np.abs(a.logprobs - b.logprobs)))
                   for a, b in zip(got, expected, strict=True))  # fmt: skip
        same_tokens = all(a.tokens == b.tokens for a, b in zip(got, expected, strict=True))
        good = diff <= F32_LOGPROB_ATOL and same_tokens
        step("oom/auto-vs-8", "ok" if good else "fail", t(), max_abs_diff=diff,
             atol=F32_LOGPROB_ATOL)  # fmt: skip
    if not DRY_RUN:
        torch.cuda.set_per_process_memory_fraction(1.0)


# --------------------------------------------------------------------------------------------
# the engine's paper grid


def engine() -> None:
    """The CA-WEAT paper grid of ``benchmarks/bench_engine.py`` (2,912 WEATs, 300-d, 5,000
    bootstraps, 10,000 permutations) on CUDA and on the CPU: the times (a first run, the
    permutation plans drawn) and the largest differences (float64 on both: within
    :data:`ENGINE_ATOL`, the same p-values)."""
    import torch

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_engine import make_grid

    from weatkit.engine.weat import EngineOptions, run_weat
    from weatkit.stats.resampling import clear_plan_cache

    n_tests, n_boot, n_perm = (64, 200, 500) if DRY_RUN else (2 * 91 * 16, 5000, 10000)
    tests = make_grid(n_tests, 300)
    results = {}
    for device in ("cuda", "cpu"):
        where = "cpu" if DRY_RUN else device
        opts = EngineOptions(n_bootstrap=n_boot, n_permutations=n_perm, device=where)
        run_weat(tests[:4], opts)  # warm-up: kernels, allocator
        clear_plan_cache()
        with clock() as t:
            results[device] = run_weat(tests, opts)
            seconds = t()
        step(f"engine/grid-{device}", "ok", seconds, weats=len(tests), bootstrap=n_boot,
             permutations=n_perm, threads=torch.get_num_threads())  # fmt: skip
    gpu, cpu = results["cuda"], results["cpu"]
    pairs = list(zip(gpu, cpu, strict=True))
    d = max(abs(a.effect_size - b.effect_size) for a, b in pairs)
    ci = max(max(abs(x - y) for x, y in zip(a.effect_size_ci, b.effect_size_ci, strict=True))
             for a, b in pairs)  # fmt: skip
    same_p = sum(a.pvalue == b.pvalue for a, b in pairs)
    ok = d <= ENGINE_ATOL and ci <= ENGINE_ATOL and same_p == len(pairs)
    step("engine/cuda-vs-cpu", "ok" if ok else "fail", 0.0, max_abs_diff_d=d,
         max_abs_diff_ci=ci, pvalues_equal=f"{same_p}/{len(pairs)}")  # fmt: skip


# --------------------------------------------------------------------------------------------
# throughput: a ~1.1B Llama, hf against vllm


def build_1b(directory: str) -> None:
    """A random-weight Llama of TinyLlama-1.1B's shape (:data:`LLAMA_1B`) in ``directory``,
    bfloat16 safetensors, with the tiny models' tokenizer (built on the GPU: seconds)."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    path = Path(directory)
    with clock() as t:
        tiny_causal(path.parent / "tokenizer", hidden=64)
        tok = AutoTokenizer.from_pretrained(path.parent / "tokenizer" / "tiny-llama")
        shape = dict(LLAMA_1B)
        if DRY_RUN:
            shape.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1)  # fmt: skip
        config = LlamaConfig(**shape, bos_token_id=tok.bos_token_id,
                             eos_token_id=tok.eos_token_id)  # fmt: skip
        torch.manual_seed(0)
        with torch.device(DEVICE):
            model = LlamaForCausalLM(config).to(torch.bfloat16)
        n_params = sum(p.numel() for p in model.parameters())
        model.save_pretrained(path)
        tok.save_pretrained(path)
        step("throughput/build", "ok", t(), params_b=round(n_params / 1e9, 2), dtype="bfloat16")


def throughput_hf(directory: str, n_texts: int = 3016) -> None:
    """hf's CrowS-Pairs workload (every sentence's token log-probs) on CUDA in bfloat16 at
    batch sizes 64 and ``auto``: sentences/s and tokens/s (after a warm-up batch)."""
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.scoring import get_scorer

    texts = crows_texts(200 if DRY_RUN else n_texts)
    for size in (64, "auto"):
        scorer = get_scorer(f"hf:{directory}", ContextualOptions(
            batch_size=size, device=DEVICE, dtype="bfloat16", cache=False))  # fmt: skip
        with clock() as t:
            scorer.causal_logprobs(texts[:64], show_progress=False)  # loads, warms up
            load = t()
        with clock() as t:
            got = scorer.causal_logprobs(texts, show_progress=False)
            seconds = t()
        tokens = sum(len(x.tokens) for x in got)
        step(f"throughput/hf-bs{size}", "ok", seconds, texts=len(texts), tokens=tokens,
             texts_per_s=len(texts) / seconds, tokens_per_s=tokens / seconds,
             load_and_warmup_s=load, dtype="bfloat16")  # fmt: skip


def throughput_vllm(directory: str, n_texts: int = 3016) -> None:
    """The same workload through the vllm backend (bfloat16), if vLLM imports."""
    if DRY_RUN:
        step("throughput/vllm", "skip", 0.0, reason="dry_run_on_the_CPU")
        return
    try:
        import vllm  # noqa: F401
    except Exception as err:  # the vllm extra lives in an environment of its own
        step("throughput/vllm", "skip", 0.0, reason=f"vllm_does_not_import:_{type(err).__name__}")
        return
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.scoring import get_scorer

    texts = crows_texts(n_texts)
    scorer = get_scorer(f"vllm:{directory}", ContextualOptions(dtype="bfloat16", cache=False))
    with clock() as t:
        scorer.causal_logprobs(texts[:64], show_progress=False)  # starts the engine
        load = t()
    with clock() as t:
        got = scorer.causal_logprobs(texts, show_progress=False)
        seconds = t()
    tokens = sum(len(x.tokens) for x in got)
    step("throughput/vllm", "ok", seconds, texts=len(texts), tokens=tokens,
         texts_per_s=len(texts) / seconds, tokens_per_s=tokens / seconds,
         load_and_warmup_s=load, dtype="bfloat16")  # fmt: skip


# --------------------------------------------------------------------------------------------

COMMANDS: dict[str, Callable[..., None]] = {
    "info": info,
    "hf-cuda": hf_cuda,
    "oom": oom,
    "engine": engine,
    "build-1b": build_1b,
    "throughput-hf": throughput_hf,
    "throughput-vllm": throughput_vllm,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=COMMANDS)
    ap.add_argument("directory", nargs="?", help="the model directory (build-1b, throughput-*)")
    args = ap.parse_args(argv)
    import torch

    name = args.command
    if not torch.cuda.is_available() and not DRY_RUN:
        step(name, "skip", 0.0, reason="no_CUDA_device")
        return 0
    try:
        COMMANDS[name](*([args.directory] if args.directory else []))
    except Exception as err:  # one line naming what failed; the other steps still run
        step(name, "fail", math.nan, error=f"{type(err).__name__}:_{err}"[:300])
        raise
    return 1 if FAILED else 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
