"""``benchmarks/gpu_check.sh`` (issue 36 §4) where no GPU is: every step skipped with its reason,
exit 0, in seconds; and its Python steps' code, run on the CPU (``GPU_CHECK_DRY_RUN=1``).

What it does on a GPU is checked only on a GPU (BENCHMARKS.md says which figures came from one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "gpu_check.sh"
STEPS = ("install", "info", "cuda-tests", "invariance", "hf-cuda", "oom", "engine", "throughput")

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device: the steps run")


def run_script(env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)],
        env={**os.environ, "PYTHON": sys.executable, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def step_lines(output: str) -> dict[str, list[str]]:
    """``{name: [status, seconds, detail...]}`` of the ``STEP`` lines (the last of each name)."""
    return {
        f[1]: f[2:] for f in (line.split() for line in output.splitlines()) if f[:1] == ["STEP"]
    }


@no_cuda
@pytest.mark.parametrize("nvidia_smi", [False, True], ids=["no-nvidia-smi", "torch-says-no"])
def test_without_cuda_every_step_is_skipped_and_says_why(tmp_path: Path, nvidia_smi: bool) -> None:
    """Without nvidia-smi on PATH the script stops before starting Python; with one (a stand-in
    here) it asks torch, which finds no CUDA device."""
    path = os.environ["PATH"]
    if nvidia_smi:
        fake = tmp_path / "nvidia-smi"
        fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI stand-in'\n")
        fake.chmod(0o755)
        path = f"{tmp_path}{os.pathsep}{path}"
    elif any((Path(d) / "nvidia-smi").exists() for d in path.split(os.pathsep) if d):
        pytest.skip("nvidia-smi is on PATH here")
    done = run_script({"PATH": path}, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    steps = step_lines(done.stdout)
    assert list(steps) == list(STEPS)
    for name, (status, seconds, *detail) in steps.items():
        assert status == "skip" and float(seconds) == 0.0, name
        assert detail and detail[0].startswith("reason=no_CUDA_device"), (name, detail)
    why = "torch.cuda.is_available()=False" if nvidia_smi else "no_nvidia-smi"
    assert why in done.stdout


@no_cuda
def test_a_python_step_alone_skips_without_cuda() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "gpu_check.py"), "engine"],
        env={k: v for k, v in os.environ.items() if k != "GPU_CHECK_DRY_RUN"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "STEP engine skip 0.0 reason=no_CUDA_device"


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("WEATKIT_GPU_DRY_RUN"),
    reason="set WEATKIT_GPU_DRY_RUN=1 to run gpu_check.sh's steps on the CPU (about 2 minutes; "
    "before a session that is lent a GPU, not in every suite run)",
)
def test_the_python_steps_run_on_the_cpu_in_a_dry_run(data_dir: Path) -> None:
    """Every Python step's code, small and on the CPU: each figure line ``ok`` (or ``skip`` with
    a reason: device map, quantization, vLLM), the out-of-memory halvings seen, the engine's
    two runs equal."""
    steps = "hf-cuda oom engine throughput"
    done = run_script({"GPU_CHECK_DRY_RUN": "1", "GPU_CHECK_STEPS": steps}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = step_lines(done.stdout)
    for name in steps.split():
        assert lines[name][0] == "ok", (name, lines[name])
    figures = {n: v for n, v in lines.items() if "/" in n}
    expected = {"hf-cuda/float32", "hf-cuda/bfloat16", "oom/auto", "oom/auto-vs-8",
                "engine/cuda-vs-cpu", "throughput/hf-bs64", "throughput/hf-bsauto"}  # fmt: skip
    assert expected <= set(figures)
    for name, (status, *_rest) in figures.items():
        assert status in ("ok", "skip"), (name, figures[name])
    assert "verdicts_equal=20/20" in figures["hf-cuda/float32"]
    assert "out_of_memory_at_rows=none" not in " ".join(figures["oom/auto"])
    assert "pvalues_equal=64/64" in figures["engine/cuda-vs-cpu"]
    assert lines["cuda-tests"][0] == "skip" and lines["total"][0] == "ok"
