"""weatkit.data.cache: cache_info and clear_cache over the data / vectors / scores folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from weatkit.data import cache_dir, cache_info, cache_root, clear_cache, ensure_cache_dir
from weatkit.errors import WeatkitError


def _fill() -> None:
    (ensure_cache_dir("data") / "gest" / "data").mkdir(parents=True)
    (cache_dir("data") / "gest" / "data" / "gest.csv").write_bytes(b"x" * 10)
    (cache_dir("vectors") / "abc").mkdir(parents=True)
    (cache_dir("vectors") / "abc" / "v.npy").write_bytes(b"y" * 100)
    (cache_dir("vectors") / "abc" / "w.npy").write_bytes(b"z" * 7)


def test_cache_info_counts_files_and_bytes() -> None:
    _fill()
    info = {u.kind: u for u in cache_info()}
    assert list(info) == ["data", "vectors", "scores"]
    assert (info["data"].files, info["data"].bytes) == (1, 10)
    assert (info["vectors"].files, info["vectors"].bytes) == (2, 107)
    assert (info["scores"].files, info["scores"].bytes) == (0, 0)
    assert info["scores"].path == cache_root() / "scores"
    with pytest.raises(WeatkitError, match="unknown cache kind 'models'"):
        cache_info(["models"])  # type: ignore[list-item]


def test_clear_only_the_kinds_asked(tmp_path: Path) -> None:
    _fill()
    removed = clear_cache(["vectors"])
    assert [(u.kind, u.files, u.bytes) for u in removed] == [("vectors", 2, 107)]
    assert not cache_dir("vectors").exists() and cache_dir("data").is_dir()
    clear_cache()
    assert sorted(p.name for p in cache_root().iterdir()) == ["CACHEDIR.TAG"]


def test_links_are_never_followed(tmp_path: Path) -> None:
    _fill()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_bytes(b"keep" * 1000)
    os.symlink(outside, cache_dir("data") / "link")
    os.symlink(outside / "precious.txt", cache_dir("data") / "file-link")
    info = {u.kind: u for u in cache_info()}
    assert info["data"].files == 3 and info["data"].bytes < 4000  # links counted as links
    clear_cache(["data"])
    assert (outside / "precious.txt").read_bytes() == b"keep" * 1000
    assert not cache_dir("data").exists()


def test_a_linked_cache_folder_is_refused(tmp_path: Path) -> None:
    ensure_cache_dir("scores").rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f").write_bytes(b"f")
    os.symlink(elsewhere, cache_dir("scores"))
    assert {u.kind: u.files for u in cache_info()}["scores"] == 0
    with pytest.raises(WeatkitError, match=r"refusing to clear .*scores: not a weatkit cache"):
        clear_cache(["scores"])
    assert (elsewhere / "f").exists()


def test_an_untagged_root_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data" / "thesis.tex").write_text("mine")
    monkeypatch.setenv("WEATKIT_CACHE", str(home))  # e.g. WEATKIT_CACHE=~ by mistake
    with pytest.raises(WeatkitError, match=r"refusing to clear .*home: not a weatkit cache"):
        clear_cache()
    assert (home / "data" / "thesis.tex").read_text() == "mine"


def test_cache_command_shows_and_clears_what_the_model_cache_wrote() -> None:
    """``weatkit cache info|clear`` over a vector cache written by the real VectorCache."""
    import numpy as np
    from click.testing import CliRunner

    from weatkit.cli import main
    from weatkit.models.cache import VectorCache

    VectorCache({"model": "m"}).put(["a", "b"], {0: np.ones((2, 3), dtype=np.float32)})
    files = [p for p in cache_dir("vectors").rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    runner = CliRunner()
    info = runner.invoke(main, ["cache", "info", "--kind", "vectors"])
    assert info.exit_code == 0, info.output
    assert f"│ vectors │     {len(files)} │" in info.stdout and "scores" not in info.stdout
    refused = runner.invoke(main, ["cache", "clear"], input="n\n")
    assert refused.exit_code == 1 and cache_dir("vectors").is_dir()
    done = runner.invoke(main, ["cache", "clear", "--kind", "vectors", "--yes"])
    assert done.exit_code == 0, done.output
    assert size < 1024 and f"removed vectors ({size} B)" in done.stderr
    assert not cache_dir("vectors").exists()
    bad = runner.invoke(main, ["cache", "info", "--kind", "models"])
    assert bad.exit_code == 2 and "'models' is not one of" in bad.output


def test_cache_clear_without_a_terminal_needs_yes() -> None:
    """Before: ``Aborted!`` after an unanswerable question (issue 24, 3.9)."""
    from click.testing import CliRunner

    from weatkit.cli import main

    _fill()
    refused = CliRunner().invoke(main, ["cache", "clear"])  # stdin is no terminal
    assert refused.exit_code == 1
    assert refused.stderr == (
        "weatkit: error: cache clear asks before removing anything and stdin is not a terminal: "
        "pass --yes to remove the caches without asking\n"
    )
    assert cache_dir("vectors").is_dir()
    done = CliRunner().invoke(main, ["cache", "clear", "-y"])
    assert done.exit_code == 0, done.output
    assert done.stderr == "removed data, vectors, scores (117 B)\n"
    assert not cache_dir("vectors").exists()
    assert "--yes" in CliRunner().invoke(main, ["cache", "clear", "--help"]).stdout


def test_cache_info_says_whether_the_root_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from weatkit.cli import main

    def first_line() -> str:
        result = CliRunner().invoke(main, ["cache", "info"])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()[0]

    assert first_line() == f"cache root: {cache_root()} ($WEATKIT_CACHE)"
    monkeypatch.delenv("WEATKIT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the platform default, not ~/.cache
    default = tmp_path / "weatkit"
    assert first_line() == f"cache root: {default} (the default: $WEATKIT_CACHE is unset)"


@pytest.mark.parametrize(("answer", "removed"), [("n", False), ("y", True)])
def test_cache_clear_asks_on_a_terminal(answer: str, removed: bool) -> None:
    import pty
    import subprocess
    import sys

    _fill()
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "weatkit", "cache", "clear"],
        stdin=follower, stdout=follower, stderr=follower, env=env,
    )  # fmt: skip
    os.close(follower)
    os.write(leader, f"{answer}\n".encode())
    status = proc.wait(timeout=120)
    os.close(leader)
    assert status == (0 if removed else 1)
    assert cache_dir("vectors").exists() is not removed
