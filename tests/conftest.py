"""Shared fixtures: where the third-party data lives (``../shared/data`` or ``$WEATKIT_DATA``)."""

from __future__ import annotations

import math
import os
import sys
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


def pytest_configure(config: pytest.Config) -> None:
    """Module- and session-scoped fixtures need the data directory too, before any monkeypatch."""
    path = shared_data_dir()
    if path is not None:
        os.environ["WEATKIT_DATA"] = str(path)


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
