"""The test suite writes no cache into the user's home (tests/conftest.py, issue 24 §1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CACHE_VARIABLES

HOME = Path.home().resolve()


def _outside_home(path: str | Path) -> bool:
    return not Path(path).resolve().is_relative_to(HOME)


@pytest.mark.parametrize("name", CACHE_VARIABLES)
def test_cache_variables_point_outside_home(name: str) -> None:
    assert _outside_home(os.environ[name]), f"{name}={os.environ[name]}"


def test_caches_of_a_subprocess_are_outside_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a command run by a test sees: weatkit's cache (also its platform default, with
    WEATKIT_CACHE unset), the Hugging Face hub cache and matplotlib's config directory."""
    monkeypatch.delenv("WEATKIT_CACHE")
    code = (
        "import huggingface_hub.constants as h, matplotlib, weatkit.data as d;"
        "print(d.cache_root()); print(h.HF_HUB_CACHE); print(matplotlib.get_cachedir())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert all(_outside_home(p) for p in out[:3]), out
