"""Issue 37 §1, data safety: no command writes over a file it reads (or into a run directory it
reads); writes work across file systems; a vector file is read exactly or refused; a replaced
output directory is never left mixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from weatkit._io.paths import check_not_input
from weatkit.cli import main
from weatkit.errors import WeatkitError


def invoke(args: list[str]):
    return CliRunner().invoke(main, args)


def fake_run_dir(root: Path) -> Path:
    """A directory with a run's file names (contents never read: the check comes first)."""
    run = root / "run"
    run.mkdir()
    for name in ("results.csv", "summary.csv", "null.csv", "manifest.json"):
        (run / name).write_text(f"original {name}\n")
    return run


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def assert_refused(res, output: Path, source: Path, inside: bool = False) -> None:
    relation = "it is inside" if inside else "it is"
    assert res.exit_code == 1, res.output
    assert res.stderr.strip() == (
        f"weatkit: error: cannot write {output}: {relation} {source}, which this command "
        "reads; write the output elsewhere"
    )


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["export", "{run}", "--format", "csv", "--table", "influence"], "null.csv"),
        (["export", "{run}", "--format", "csv"], "new.csv"),
        (["plot", "{run}", "--kind", "forest"], "forest.png"),
        (["report", "{run}"], "results.csv"),
        (["report", "{run}"], "page.html"),
    ],
)
def test_run_dir_readers_never_write_into_the_run(
    tmp_path: Path, command: list[str], name: str
) -> None:
    run = fake_run_dir(tmp_path)
    before = snapshot(run)
    out = run / name
    res = invoke([part.replace("{run}", str(run)) for part in command] + ["--out", str(out)])
    assert_refused(res, out, run, inside=True)
    assert snapshot(run) == before


def test_a_link_into_the_run_dir_is_refused_too(tmp_path: Path) -> None:
    run = fake_run_dir(tmp_path)
    (tmp_path / "alias").symlink_to(run)
    out = tmp_path / "alias" / "summary.csv"
    res = invoke(["export", str(run), "--format", "csv", "--out", str(out)])
    assert_refused(res, out, run, inside=True)
    assert (run / "summary.csv").read_text() == "original summary.csv\n"


def test_report_default_page_in_the_run_is_still_allowed(tmp_path: Path) -> None:
    run = fake_run_dir(tmp_path)
    check_not_input([run / "report.html"], read_dirs=[run], allowed=[run / "report.html"])


def test_embed_never_writes_over_its_list_file(tmp_path: Path) -> None:
    lists = tmp_path / "lists.json"
    entry = {"test": "weat1", "lang": "en", "list_id": "mine", "X": ["aster", "clover"],
             "Y": ["ant", "flea"], "A": ["love", "peace"], "B": ["abuse", "crash"]}  # fmt: skip
    lists.write_text(json.dumps({"tests": [entry]}))
    before = lists.read_bytes()
    args = ["embed", "--lists", str(lists), "--lang", "en", "--model", "./no/such/model"]
    res = invoke([*args, "--layer", "0", "--out", str(lists)])
    assert_refused(res, lists, lists)
    assert lists.read_bytes() == before


def test_align_never_writes_over_its_source(tmp_path: Path) -> None:
    src = tmp_path / "de.vec"
    src.write_text("1 2\nhund 0.1 0.2\n")
    (tmp_path / "dict.txt").write_text("hund dog\n")
    hardlink = tmp_path / "same.vec"  # another name of the same file
    hardlink.hardlink_to(src)
    args = ["align", "--src", str(src), "--tgt", str(tmp_path / "en.vec")]
    res = invoke([*args, "--dict", str(tmp_path / "dict.txt"), "--out", str(hardlink)])
    assert_refused(res, hardlink, src)
    assert src.read_text() == "1 2\nhund 0.1 0.2\n"


def test_write_outputs_refuses_a_file_it_was_told_was_read(tmp_path: Path) -> None:
    from weatkit._io.atomic import write_outputs

    data = tmp_path / "pairs.csv"  # e.g. weatkit crows --data pairs.csv --out .
    data.write_text("input\n")
    with pytest.raises(WeatkitError, match="which this command reads"):
        write_outputs(tmp_path, {"pairs.csv": b"output\n", "summary.csv": b"s\n"}, reads=[data])
    assert data.read_text() == "input\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.csv"]


def test_crows_never_writes_over_its_scores(tmp_path: Path) -> None:
    """``weatkit crows --scores OUT/pairs.csv --out OUT`` would rewrite the scores it reads."""
    scores = tmp_path / "pairs.csv"
    text = "bias_type,direction,score_more,score_less\nrace-color,stereo,-1.5,-2.0\n"
    scores.write_text(text)
    res = invoke(["crows", "--scores", str(scores), "--out", str(tmp_path)])
    assert_refused(res, scores, scores)
    assert scores.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.csv"]


# --- writes across file systems -------------------------------------------------------------


@pytest.fixture
def other_mount(tmp_path: Path):
    """A tmpfs mounted inside ``tmp_path``: another file system than its parent's."""
    import os
    import subprocess

    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        assert os.stat(mount).st_dev != os.stat(tmp_path).st_dev
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_atomic_helpers_write_on_another_mount(other_mount: Path) -> None:
    from weatkit._io.atomic import replacing, write_file, write_outputs

    assert write_file(other_mount / "a.csv", b"a\n").read_bytes() == b"a\n"
    assert write_file(other_mount / "a.csv", b"b\n").read_bytes() == b"b\n"
    with replacing(other_mount / "info.json") as tmp:
        tmp.write_text("{}")
    # the mount point itself as an existing output folder, written twice (replace path)
    for content in (b"1\n", b"2\n"):
        write_outputs(other_mount, {"x.csv": content, "y.csv": content})
        assert (other_mount / "y.csv").read_bytes() == content
    write_outputs(other_mount / "new", {"x.csv": b"n\n"})
    assert sorted(p.name for p in other_mount.iterdir()) == [
        "a.csv", "info.json", "new", "x.csv", "y.csv"
    ]  # fmt: skip


def tiny_run(root: Path) -> Path:
    """A real ``weatkit run`` on one made-up test and 4-dimensional vectors (well under 2 s)."""
    import numpy as np

    words = ["aster", "clover", "ant", "flea", "love", "peace", "abuse", "crash"]
    rng = np.random.default_rng(0)
    vec = root / "toy.vec"
    rows = [f"{w} " + " ".join(f"{x:.4f}" for x in rng.standard_normal(4)) for w in words]
    vec.write_text(f"{len(words)} 4\n" + "\n".join(rows) + "\n")
    lists = root / "lists.json"
    entry = {"test": "weat1", "lang": "en", "list_id": "mine", "X": words[:2], "Y": words[2:4],
             "A": words[4:6], "B": words[6:]}  # fmt: skip
    lists.write_text(json.dumps({"tests": [entry]}))
    out = root / "run"
    args = ["run", "--lists", str(lists), "--lang", "en", "--embeddings", f"toy={vec}"]
    args += ["--bootstrap", "20", "--permutations", "20", "--no-progress", "--device", "cpu"]
    res = invoke([*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def test_export_and_plot_write_on_another_mount(other_mount: Path, tmp_path: Path) -> None:
    run = tiny_run(tmp_path)
    for command in (
        ["export", str(run), "--format", "csv"],
        ["plot", str(run), "--kind", "forest"],
    ):
        name = "t.csv" if command[0] == "export" else "f.png"
        res = invoke([*command, "--out", str(other_mount / name)])
        assert res.exit_code == 0, res.output
        assert (other_mount / name).stat().st_size > 0
    assert sorted(p.name for p in other_mount.iterdir()) == ["f.png", "t.csv"]


# --- a vector file that names a word twice -------------------------------------------------


def test_run_refuses_vectors_that_name_a_list_word_twice(tmp_path: Path) -> None:
    """It was read silently, keeping the first row (the warning was only logged)."""
    run = tiny_run(tmp_path)  # writes toy.vec and lists.json, and checks they run
    vec = tmp_path / "toy.vec"
    with vec.open("a") as fh:
        fh.write("love 9 9 9 9\n")
    args = ["run", "--lists", str(tmp_path / "lists.json"), "--lang", "en"]
    args += ["--embeddings", f"toy={vec}", "--no-progress", "--out", str(tmp_path / "again")]
    res = invoke(args)
    assert res.exit_code == 1
    assert res.stderr.strip() == (
        f"weatkit: error: {vec}: the word 'love' is given twice (line 6 and line 10); a vector "
        "file names each word once: remove one of them"
    )
    assert not (tmp_path / "again").exists() and run.is_dir()


# --- a replaced output directory is never read mixed ---------------------------------------

_KILLED_AFTER_FIRST_RENAME = """
import json, os, sys
from weatkit._io import atomic
real = os.replace
def replace(src, dst):
    real(src, dst)
    os._exit(9)  # killed (no clean-up runs) right after the first file is renamed in
os.replace = replace
atomic.write_outputs(sys.argv[1], {name: b"new" for name in json.loads(sys.argv[2])})
"""


def _write_killed_after_first_rename(out: Path, names: list[str]) -> None:
    """``write_outputs(out, {name: b"new"})`` in another process, killed after one rename."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [sys.executable, "-c", _KILLED_AFTER_FIRST_RENAME, str(out), json.dumps(names)]
    assert subprocess.run(args, env=env, check=False).returncode == 9


@pytest.mark.skipif(__import__("os").name == "nt", reason="kills a process")
def test_a_write_killed_between_renames_is_refused_then_rolled_back(tmp_path: Path) -> None:
    from weatkit._io.atomic import recover, write_outputs
    from weatkit.report.run_dir import read_run_dir

    out = tmp_path / "run"
    out.mkdir()
    old = {name: b"old" for name in ("manifest.json", "results.csv", "summary.csv")}
    for name, data in old.items():
        (out / name).write_bytes(data)
    _write_killed_after_first_rename(out, ["results.csv", "summary.csv", "manifest.json"])
    assert sorted(snapshot(out).values()) == [b"new", b"old", b"old"]  # mixed on disk
    (stage,) = tmp_path.glob(".run.*.write")
    message = (
        f"{out}: a write of its files was stopped half-way or is under way ({stage} holds "
        "the previous versions), so its tables may mix two runs; write it again"
    )
    with pytest.raises(WeatkitError) as err:
        read_run_dir(out)
    assert str(err.value) == message
    for command in (["export", str(out), "--format", "csv"], ["report", str(out)]):
        res = invoke(command)
        assert res.exit_code == 1 and res.stderr.strip() == f"weatkit: error: {message}"
    # the previous versions come back: all old (also what the next write does first)
    assert recover(out) == ["results.csv"]
    assert snapshot(out) == old
    _write_killed_after_first_rename(out, ["results.csv", "summary.csv", "manifest.json"])
    write_outputs(out, {"results.csv": b"A", "summary.csv": b"B"})  # recovers, then writes
    assert snapshot(out) == {"manifest.json": b"old", "results.csv": b"A", "summary.csv": b"B"}
    assert list(tmp_path.glob(".run.*")) == []


@pytest.mark.skipif(__import__("os").name == "nt", reason="kills a process")
def test_a_new_file_renamed_in_by_a_killed_write_is_removed(tmp_path: Path) -> None:
    from weatkit._io.atomic import recover

    out = tmp_path / "run"
    out.mkdir()
    (out / "summary.csv").write_bytes(b"old")
    _write_killed_after_first_rename(out, ["extra.csv", "summary.csv"])
    assert snapshot(out) == {"extra.csv": b"new", "summary.csv": b"old"}
    assert recover(out) == ["extra.csv"]  # it had no previous version
    assert snapshot(out) == {"summary.csv": b"old"}


def test_run_never_writes_over_the_lists_it_reads(tmp_path: Path) -> None:
    """``weatkit run --lists DIR/manifest.json --out DIR --force`` would replace the lists."""
    tiny_run(tmp_path)
    out = tmp_path / "again"
    out.mkdir()
    lists = out / "manifest.json"
    lists.write_bytes((tmp_path / "lists.json").read_bytes())
    args = ["run", "--lists", str(lists), "--lang", "en", "--embeddings"]
    args += [f"toy={tmp_path / 'toy.vec'}", "--no-progress", "--out", str(out), "--force"]
    res = invoke(args)
    assert res.exit_code == 1
    assert res.stderr.strip().splitlines()[-1] == (  # after the run's notes: checked at writing
        f"weatkit: error: cannot write {lists}: it is {lists}, which this command reads; "
        "write the output elsewhere"
    )
    assert lists.read_bytes() == (tmp_path / "lists.json").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json"]
