"""Atomic writes (bug 7c): the umask is never changed, and a run directory is never left half
new, half old."""

from __future__ import annotations

import builtins
import errno
import os
import signal
import stat
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

from weatkit._io import atomic
from weatkit._io.atomic import temp_file
from weatkit.errors import WeatkitError
from weatkit.report.tables import write_outputs

_SET_UMASK = os.umask  # the tests may replace os.umask


@pytest.fixture
def umask_027():
    previous = _SET_UMASK(0o027)
    yield 0o027
    _SET_UMASK(previous)


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, number: int) -> list[tuple[str, str]]:
    """Make the ``number``-th call of ``os.replace`` raise (a full disk, a lost mount)."""
    calls: list[tuple[str, str]] = []
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        calls.append((str(src), str(dst)))
        if len(calls) == number:
            raise OSError(28, "No space left on device")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return calls


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_temp_file_never_changes_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask_027: int
) -> None:
    def no_umask(mask: int) -> int:
        raise AssertionError("os.umask called: it changes the umask of every thread")

    monkeypatch.setattr(os, "umask", no_umask)
    fd, name = temp_file(tmp_path, "out.csv")
    os.close(fd)
    assert _mode(Path(name)) == 0o666 & ~umask_027 == 0o640
    assert Path(name).name.startswith(".out.csv.") and Path(name).parent == tmp_path


def test_new_directory_appears_with_all_files(tmp_path: Path, umask_027: int) -> None:
    out = tmp_path / "run"
    written = write_outputs(out, {"a.csv": b"A", "b.json": b"B"})
    assert written == [out / "a.csv", out / "b.json"]
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {"a.csv": b"A", "b.json": b"B"}
    assert _mode(out) == 0o750 and _mode(out / "a.csv") == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no staging left


def test_existing_directory_keeps_files_it_does_not_own(tmp_path: Path) -> None:
    out = tmp_path / "grid"
    (out / "jobs").mkdir(parents=True)
    (out / "jobs" / "1.json").write_text("job")
    (out / "a.csv").write_bytes(b"old A")
    (out / "notes.txt").write_bytes(b"mine")
    write_outputs(out, {"a.csv": b"new A", "b.csv": b"new B"})
    assert (out / "a.csv").read_bytes() == b"new A" and (out / "b.csv").read_bytes() == b"new B"
    assert (out / "notes.txt").read_bytes() == b"mine"
    assert (out / "jobs" / "1.json").read_text() == "job"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid"]


@pytest.mark.parametrize("failing_call", [1, 2, 3])
def test_failed_rename_leaves_only_the_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_call: int
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    old = {"a.csv": b"old A", "b.csv": b"old B", "keep.txt": b"keep"}
    for name, data in old.items():
        (out / name).write_bytes(data)
    calls = _fail_on_call(monkeypatch, failing_call)
    with pytest.raises(WeatkitError, match=r"cannot write to .*run: No space left on device"):
        write_outputs(out, {"a.csv": b"new A", "b.csv": b"new B", "c.csv": b"new C"})
    assert len(calls) >= failing_call
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # temporaries cleaned up


def test_failed_rename_of_a_new_directory_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_on_call(monkeypatch, 1)
    with pytest.raises(WeatkitError, match="cannot write to"):
        write_outputs(tmp_path / "run", {"a.csv": b"A", "b.csv": b"B"})
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_the_old_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "a.csv").write_bytes(b"old A")
    (out / "b.csv").mkdir()  # a folder where a file should go: the second file cannot be placed
    with pytest.raises(WeatkitError, match="cannot write to"):
        write_outputs(out, {"a.csv": b"new A", "b.csv": b"new B"})
    assert (out / "a.csv").read_bytes() == b"old A" and (out / "b.csv").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_names_must_be_plain(tmp_path: Path) -> None:
    for bad in ("../x.csv", "sub/x.csv", "", ".."):
        with pytest.raises(WeatkitError, match="plain file name"):
            atomic.write_outputs(tmp_path / "run", {bad: b"x"})
    assert list(tmp_path.iterdir()) == []


# --- no temporary left behind (issue 16, item 3) --------------------------------------------


class _FullDiskFile:
    """A file object on a full disk: every write raises ENOSPC (the disk is faked, not the
    code under test)."""

    def __init__(self, real) -> None:
        self._real = real

    def write(self, data) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._real.close()


def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files opened with ``os.fdopen`` or ``open`` for writing fail to write (ENOSPC)."""
    real_fdopen, real_open = os.fdopen, open

    def fdopen(fd, mode="r", *args, **kwargs):
        handle = real_fdopen(fd, mode, *args, **kwargs)
        return _FullDiskFile(handle) if "w" in mode else handle

    def open_(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        return _FullDiskFile(handle) if "w" in mode else handle

    monkeypatch.setattr(os, "fdopen", fdopen)
    monkeypatch.setattr(builtins, "open", open_)


def _hidden(*folders: Path) -> list[str]:
    return sorted(p.name for folder in folders for p in folder.rglob(".*"))


@pytest.mark.parametrize("existing", [False, True])
def test_full_disk_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    out = tmp_path / "run"
    if existing:
        out.mkdir()
        (out / "a.csv").write_bytes(b"old A")
    full_disk(monkeypatch)
    with pytest.raises(WeatkitError, match=r"cannot write to .*run: No space left on device"):
        write_outputs(out, {"a.csv": b"new A", "b.csv": b"new B"})
    assert _hidden(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == (["run"] if existing else [])


def test_full_disk_in_replacing_and_in_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every writer built on temp files (the vector cache, grid job records) cleans up."""
    from weatkit.grid.store import JobStore
    from weatkit.models import cache

    target = tmp_path / "info.json"
    with pytest.raises(OSError, match="No space"), atomic.replacing(target) as tmp:
        assert tmp.name.startswith(f".info.json.{os.getpid()}-") and tmp.parent == tmp_path
        raise OSError(errno.ENOSPC, "No space left on device")
    assert list(tmp_path.iterdir()) == []

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache, "save_file", no_space)
    with pytest.raises(OSError, match="No space"):
        cache._write_shard(tmp_path / "shard-1.safetensors", ["a"], {0: np.zeros((1, 2))})
    assert list(tmp_path.iterdir()) == []

    full_disk(monkeypatch)
    job = types.SimpleNamespace(id="j1", kind="run", key="k", file_name="j1.json")
    with pytest.raises(WeatkitError, match="No space left on device"):
        JobStore(tmp_path).save(job, {"tables": {}})
    assert _hidden(tmp_path) == []


_KILLED_MID_WRITE = """
import os, signal, sys
from weatkit._io import atomic
real = os.replace
def replace(src, dst):
    real(src, dst)
    os.kill(os.getpid(), signal.SIGKILL)  # killed after the first file is in place
os.replace = replace
atomic.write_outputs(sys.argv[1], {"results.csv": b"new", "summary.csv": b"new",
                                   "manifest.json": b"new"})
"""


def _killed_write(out: Path) -> None:
    """``write_outputs`` into ``out`` in another process, SIGKILLed mid-way."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_WRITE, str(out)], env=env, check=False
    )
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL")
def test_next_write_removes_what_a_killed_write_left(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    for name in ("results.csv", "summary.csv", "manifest.json"):
        (out / name).write_bytes(b"old")
    _killed_write(out)
    left = [p.name for p in tmp_path.iterdir() if p.name != "run"]
    assert len(left) == 1 and left[0].startswith(".run.") and left[0].endswith(".write")
    # temporaries the rule must keep: this process's, a running process's, other outputs'
    ours = atomic.temp_dir(tmp_path, "run", ".write")
    parent = tmp_path / f".run.{os.getppid()}-{'0' * 12}.write"
    parent.mkdir()
    other = tmp_path / f".runs.{left[0].split('.')[2]}.write"
    (tmp_path / left[0]).rename(other)
    _killed_write(out)
    kept = (ours, parent)
    (dead,) = [p for p in tmp_path.glob(".run.*.write") if p not in kept]
    old_legacy = tmp_path / f".run.{'a' * 12}.write"  # an older version's name: by age only
    old_legacy.mkdir()
    young_legacy = tmp_path / f".run.{'b' * 12}.write"
    young_legacy.mkdir()
    day_ago = time.time() - atomic.STALE_AFTER_S - 60
    os.utime(old_legacy, (day_ago, day_ago))
    per_file = out / f".results.csv.{dead.name.split('.')[2]}.tmp"  # a per-file temporary
    per_file.write_text("half")
    write_outputs(out, {"results.csv": b"A", "summary.csv": b"B", "manifest.json": b"C"})
    assert not dead.exists() and not old_legacy.exists() and not per_file.exists()
    assert ours.is_dir() and parent.is_dir() and other.is_dir() and young_legacy.is_dir()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {
        "results.csv": b"A",
        "summary.csv": b"B",
        "manifest.json": b"C",
    }


def test_remove_stale_files_of_dead_processes(tmp_path: Path) -> None:
    code = "import os; print(os.getpid())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    dead = int(proc.stdout)
    stale = tmp_path / f".info.json.{dead}-{'c' * 12}.tmp"
    stale.write_text("half")
    mine = tmp_path / f".info.json.{os.getpid()}-{'d' * 12}.tmp"
    mine.write_text("in use")
    unrelated = tmp_path / f".info.json.{dead}-{'c' * 12}.part"
    unrelated.write_text("not a .tmp")
    with atomic.replacing(tmp_path / "info.json") as tmp:
        tmp.write_text("{}")
    assert (tmp_path / "info.json").read_text() == "{}"
    assert not stale.exists() and mine.exists() and unrelated.exists()
    assert atomic.remove_stale(tmp_path, "info.json") == []
