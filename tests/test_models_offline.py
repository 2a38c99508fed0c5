"""Hub ids without a network: one probe of the hub, then the local cache or a one-line error.

``HF_ENDPOINT`` points at a closed local port (connection refused at once), so no test touches
the network and each behaves the same on a machine with internet access. Unfixed,
``huggingface_hub`` retried each file five times (``Retrying in Ns``, 23 s of back-off).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tiny_models import make_gest_mlm

REPO = Path(__file__).resolve().parents[1]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
#: Seconds a hub id may add to the same work done from a local directory, timed in the same
#: test (so a busy machine slows both): far below the 23 s of back-off sleeps alone that an
#: unreachable hub used to cost, which no load can shorten.
EXTRA_S = 10


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")
    }
    return {
        **env,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_ENDPOINT": "http://127.0.0.1:9",  # nothing listens there: the hub is unreachable
        "PYTHONPATH": str(REPO),
        **extra,
    }


def _run(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120
    )
    return done, time.monotonic() - start


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        (
            None,
            "weatkit: error: cannot reach the Hugging Face Hub (http://127.0.0.1:9) and "
            "'weatkit-test/not-cached' is not in the local cache ({cache}): use a model cached "
            "there (HF_HUB_OFFLINE=1 skips the network) or pass a local model directory",
        ),
        (
            "1",
            "weatkit: error: HF_HUB_OFFLINE is set and 'weatkit-test/not-cached' is not in the "
            "local cache ({cache}): unset it to download the model, or pass a local model "
            "directory",
        ),
    ],
)
def test_an_uncached_hub_id_offline_is_one_line_within_seconds(
    tmp_path: Path, offline: str | None, expected: str
) -> None:
    env = _env(tmp_path, **({"HF_HUB_OFFLINE": offline} if offline else {}))
    done, took = _run(
        [
            "-m", "weatkit", "run", "--lists", "weat", "--test", "weat1",
            "--embeddings", "M=hf:weatkit-test/not-cached@0", "--bootstrap", "0",
        ],
        env,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [expected.format(cache=tmp_path / "hf" / "hub")]
    local, baseline = _run(  # the same command on a missing local directory: no hub at all
        [
            "-m", "weatkit", "run", "--lists", "weat", "--test", "weat1",
            "--embeddings", f"M=hf:{tmp_path / 'missing'}@0", "--bootstrap", "0",
        ],
        env,
    )  # fmt: skip
    assert local.returncode == 1
    assert took < baseline + EXTRA_S, (took, baseline)


def test_a_cached_hub_model_loads_from_the_cache_when_the_hub_is_unreachable(
    tmp_path: Path,
) -> None:
    # a hub cache laid out as huggingface_hub writes it; HF_HUB_OFFLINE is not set
    repo = tmp_path / "hf" / "hub" / "models--weatkit-test--tiny"
    make_gest_mlm(repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    script = (
        "import sys\n"
        "from weatkit.models.handle import LoadOptions, ModelHandle\n"
        "handle = ModelHandle(sys.argv[1], LoadOptions(device='cpu'))\n"
        "print(handle.identity.get('revision'), handle.n_layers, handle.network() is not None,"
        " handle.tokenizer('doctor')['input_ids'] != [])\n"
    )
    done, took = _run(["-c", script, "weatkit-test/tiny"], _env(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [COMMIT, "2", "True", "True"]
    assert "Retrying" not in done.stderr
    # the same load from the snapshot directory itself: no hub involved
    local, baseline = _run(["-c", script, str(repo / "snapshots" / COMMIT)], _env(tmp_path))
    assert local.returncode == 0, local.stderr[-2000:]
    assert took < baseline + EXTRA_S, (took, baseline)
