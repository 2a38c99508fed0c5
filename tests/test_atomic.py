"""Atomic writes (bug 7c): the umask is never changed, and a run directory is never left half
new, half old."""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
