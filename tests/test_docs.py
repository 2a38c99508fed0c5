"""The documentation builds strictly and every snippet marked runnable runs.

* :func:`test_docs_build_strict` builds the MkDocs site (``mkdocs.yml``, ``docs/``) with
  ``--strict`` and checks that the generated command-line reference documents every command
  ``weatkit --help`` lists.
* :func:`test_runnable_snippet` runs each fenced ``bash`` or ``python`` block of ``README.md`` and
  ``docs/**/*.md`` that follows a line ``<!-- runnable -->`` (``<!-- runnable slow -->``: also
  marked slow; ``<!-- runnable continued -->``: run after the runnable block before it, in the
  same test and directory), one test per block, named ``FILE:LINE`` of its opening fence
  (``docs/contributing.md`` describes the convention). Each block runs alone in an empty
  temporary directory holding a copy of ``examples/``, with ``weatkit`` on ``PATH`` (this
  checkout's ``python -m weatkit``) and ``python`` the tests' interpreter, ``$WEATKIT_DATA``
  set, a private ``$WEATKIT_CACHE``, the Hugging Face hub offline and one OpenMP thread (torch
  on cores the suite's other workers keep busy: docs/tutorials/grid.md's grid took 44 s, not
  71-153 s).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import weatkit

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = (REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")))
MARKER = re.compile(r"^\s*<!-- runnable(?: (slow|continued))? -->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w-]*)")
LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}
SNIPPET_TIMEOUT_S = 600


@dataclass(frozen=True)
class Snippet:
    """One fenced block: where it is (lines of its fences), its language and its code."""

    path: Path
    line: int
    end: int
    lang: str
    code: str
    runnable: bool
    slow: bool
    continued: bool = False

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO).as_posix()}:{self.line}"


def fenced_blocks(path: Path) -> list[Snippet]:
    """Every fenced block of ``path``, runnable when the last non-blank line before it is a
    ``<!-- runnable -->`` marker (fences may be indented, as in list items)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Snippet] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(before)
        code = textwrap.dedent("\n".join(line.removeprefix(indent) for line in lines[i + 1 : end]))
        lang = LANGUAGES.get(opening["lang"], opening["lang"])
        blocks.append(
            Snippet(
                path,
                i + 1,
                end + 1,
                lang,
                code + "\n",
                marker is not None,
                bool(marker and marker[1] == "slow"),
                bool(marker and marker[1] == "continued"),
            )
        )
        i = end + 1
    return blocks


def runnable_snippets(path: Path) -> list[Snippet]:
    """The runnable blocks of ``path``, each ``<!-- runnable continued -->`` block appended to
    the runnable block before it (one test, one directory: a tutorial's steps that share files
    and variables). A continued block with no runnable block of its language before it is a
    ``ValueError`` naming its line."""
    snippets: list[Snippet] = []
    for block in fenced_blocks(path):
        if not block.runnable:
            continue
        if not block.continued:
            snippets.append(block)
        elif snippets and snippets[-1].lang == block.lang:
            first = snippets[-1]
            snippets[-1] = replace(first, end=block.end, code=first.code + block.code)
        else:
            raise ValueError(
                f"{path.name}:{block.line}: 'runnable continued' needs a runnable {block.lang} "
                "block before it"
            )
    return snippets


SNIPPETS = [snippet for path in DOC_FILES for snippet in runnable_snippets(path)]


def _params() -> list[object]:
    return [pytest.param(s, id=s.id, marks=[pytest.mark.slow] if s.slow else []) for s in SNIPPETS]


def test_markers_precede_bash_or_python_blocks() -> None:
    """A marker on anything else (a YAML block, a paragraph) would silently test nothing."""
    assert SNIPPETS, "no runnable snippet found"
    assert {s.lang for s in SNIPPETS} <= {"bash", "python"}
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8").splitlines()
        blocks = fenced_blocks(path)
        fences = {b.line for b in blocks}
        inside = {n for b in blocks for n in range(b.line, b.end + 1)}
        for number, line in enumerate(text, start=1):
            if MARKER.match(line) and number not in inside:
                following = next(
                    (n for n in range(number + 1, len(text) + 1) if text[n - 1].strip()), None
                )
                where = f"{path.relative_to(REPO)}:{number}"
                assert following in fences, f"{where}: a runnable marker not followed by a fence"


def test_a_continued_block_runs_after_the_runnable_block_before_it(tmp_path: Path) -> None:
    """``<!-- runnable continued -->`` joins a block to the runnable one before it: one test,
    the code of both in order, the first's line and slow mark; prose and other blocks between
    them stay out; with no runnable block of its language before it, a one-line error."""
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- runnable slow -->\n\n```bash\nM=1\n```\n\nText.\n\n```yaml\na: 1\n```\n\n"
        "<!-- runnable continued -->\n\n```bash\necho $M\n```\n\n"
        "<!-- runnable -->\n```python\nprint(2)\n```\n",
        encoding="utf-8",
    )
    joined, alone = runnable_snippets(page)
    assert (joined.line, joined.end, joined.code, joined.slow) == (3, 17, "M=1\necho $M\n", True)
    assert (alone.line, alone.code, alone.slow) == (20, "print(2)\n", False)
    page.write_text("<!-- runnable -->\n```bash\nM=1\n```\n<!-- runnable continued -->\n"
                    "```python\nprint(2)\n```\n", encoding="utf-8")  # fmt: skip
    with pytest.raises(ValueError, match=r"^page.md:6: 'runnable continued' needs a runnable "
                       r"python block before it$"):  # fmt: skip
        runnable_snippets(page)


def _shim_dir(tmp: Path) -> Path:
    """A directory with a ``weatkit`` executable that runs this checkout's CLI, and a ``python``
    that is the tests' interpreter (the one with the test extra: ``python -m llama_cpp.server``
    of docs/guides/backends.md)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    python = f'"{sys.executable}"'
    for name, command in (("weatkit", f"{python} -m weatkit"), ("python", python)):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("snippet", _params())
def test_runnable_snippet(snippet: Snippet, tmp_path: Path, data_dir: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples", work / "examples")
    env = dict(os.environ)
    env["PATH"] = f"{_shim_dir(tmp_path)}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(MPLBACKEND="Agg", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["OMP_NUM_THREADS"] = "1"  # see tests/conftest.py's one_torch_thread
    env["HF_HOME"] = str(tmp_path / "hf")
    script = work / ("snippet.sh" if snippet.lang == "bash" else "snippet.py")
    script.write_text(snippet.code, encoding="utf-8")
    command = (
        ["bash", "-e", "-o", "pipefail", script.name]
        if snippet.lang == "bash"
        else [sys.executable, script.name]
    )
    proc = subprocess.run(
        command,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=SNIPPET_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{snippet.id} exited with {proc.returncode}\n--- code\n{snippet.code}"
        f"--- stdout (end)\n{proc.stdout[-3000:]}\n--- stderr (end)\n{proc.stderr[-3000:]}"
    )


def _command_names() -> list[str]:
    """The commands ``weatkit --help`` lists (the lines of its ``Commands:`` section)."""
    from weatkit.cli import main

    out = CliRunner().invoke(main, ["--help"], terminal_width=200).output
    section = out.split("Commands:", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.strip()]


@pytest.mark.slow
def test_docs_build_strict(tmp_path: Path, data_dir: Path) -> None:  # the gallery reads data
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(REPO / "mkdocs.yml"),
            "-d",
            str(site),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    cli_page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    names = _command_names()
    assert len(names) >= 16 and "run" in names and "compare" in names
    for name in names:
        assert f'id="weatkit-{name}"' in cli_page, f"weatkit {name} missing from the CLI reference"
    assert "--influence" in cli_page and "Usage:" in cli_page
    # the gallery's figures, drawn by its hook during this build (docs/hooks/gallery.py)
    from tests.test_docs_gallery import check_png, gallery

    for figure in gallery.FIGURES:
        check_png(site / "gallery" / figure.file)
    kinds = {(f.kind, f.x) for f in gallery.FIGURES}
    assert {"forest", "heatmap", "influence", "null"} <= {kind for kind, _ in kinds}
    assert {("scatter", "iso_gh"), ("scatter", "count_difference")} <= kinds
    api_page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    for name, target in weatkit._LAZY.items():  # every entry point of `import weatkit`
        attribute = target.partition(":")[2] or target.rpartition(".")[2]  # or a module
        heading = re.compile(rf'<h\d id="weatkit\.([\w.]*\.)?{attribute}"')
        assert heading.search(api_page), f"weatkit.{name} missing from the API reference"


def test_the_quick_start_says_where_the_data_is_before_its_first_command() -> None:
    """Offline, the README's first command needs ``WEATKIT_DATA``: the quick start says so, and
    where the copy is, before that command (issue 37 §4)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Quick start")
    before = readme[start : readme.index("weatkit run --lists ca-weat", start)]
    assert "without internet, point `WEATKIT_DATA` at a local copy" in " ".join(before.split())
    assert "`export WEATKIT_DATA=../shared/data`" in " ".join(before.split())
