"""A file named by several embeddings entries is read once per run, with the same results."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from tests.grid_fixtures import LISTS, TESTS, make_grid
from weatkit.embeddings import static
from weatkit.embeddings.run_cache import LoadedFiles
from weatkit.embeddings.spec import EmbeddingsSpec
from weatkit.engine.weat import EngineOptions
from weatkit.lists import select_lists
from weatkit.pipeline import RunConfig, run

ENGINE = EngineOptions(n_bootstrap=50, n_permutations=50, seed=3)


@pytest.fixture
def reads():
    """Counts the text files the loader reads (by path)."""
    with mock.patch.object(static, "load_text", wraps=static.load_text) as spy:
        yield lambda: [Path(c.args[0]).name for c in spy.call_args_list]


def _run(root: Path, entries: dict[str, str]) -> pd.DataFrame:
    config = RunConfig(
        lists=tuple(LISTS),
        langs=("en", "de"),
        tests=tuple(TESTS),
        min_coverage=0.5,
        engine=ENGINE,
        embeddings=tuple(f"{name}={root / path}" for name, path in entries.items()),
    )
    out = run(config, show_progress=False)
    inputs = out.manifest["embeddings"]
    for info in inputs:
        assert info["fingerprint"]["path"] == info["location"]
        assert len(info["fingerprint"]["sha256"]) == 64
    return out.results


def test_entries_naming_one_file_read_it_once_per_run(tmp_path: Path, reads) -> None:
    make_grid(tmp_path)
    entries = {"A": "mono.{lang}.vec", "B": "mono.{lang}.vec", "R": "rotated.{lang}.vec"}
    shared = _run(tmp_path, entries)
    assert sorted(reads()) == ["mono.de.vec", "mono.en.vec", "rotated.de.vec", "rotated.en.vec"]
    alone = _run(tmp_path, {"A": "mono.{lang}.vec"})  # a new run reads again
    assert sorted(reads()[4:]) == ["mono.de.vec", "mono.en.vec"]
    columns = [c for c in shared.columns if c != "embeddings"]
    a, b = (shared[shared.embeddings == n][columns].reset_index(drop=True) for n in "AB")
    pd.testing.assert_frame_equal(a, alone[columns].reset_index(drop=True))
    pd.testing.assert_frame_equal(b, a)


def test_a_file_changed_within_a_run_is_read_again(tmp_path: Path, reads) -> None:
    make_grid(tmp_path)
    path = tmp_path / "mono.en.vec"
    files = LoadedFiles()

    def load(name: str = "A", words: tuple[str, ...] = ("rose", "ant")):
        kwargs = {"first_n": 0, "allow_pickle": False, "fasttext_oov": False}
        return files.load(EmbeddingsSpec(name, str(path)), "en", words=words, **kwargs)

    first = load()
    again = load("B")
    assert (first.name, again.name) == ("A", "B") and again.vectors is first.vectors
    assert again.words == first.words and again.source == first.source == str(path)
    assert len(reads()) == 1
    load(words=("rose",))  # other rows: read
    assert len(reads()) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "\n".join([lines[0], *(ln.replace("0.", "1.", 1) for ln in lines[1:])]) + "\n",
        encoding="utf-8",
    )
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    changed = load()
    assert len(reads()) == 3 and not np.array_equal(changed.vectors, first.vectors)


def test_the_tests_of_a_shared_file_are_covered_once_each_entry_its_own_rows(
    tmp_path: Path,
) -> None:
    """The entries of one file share its vectors: each test is covered once (CoverOnce), every
    job gets equal rows of its own (a copy), and the results are those of the entries alone."""
    from weatkit.embeddings import coverage
    from weatkit.pipeline import jobs

    make_grid(tmp_path)
    with mock.patch.object(jobs, "cover_test", wraps=coverage.cover_test) as spy:
        shared = _run(tmp_path, {"A": "mono.{lang}.vec", "B": "mono.{lang}.vec"})
        n_tests = len(shared) // 2
        assert spy.call_count == n_tests
        alone = _run(tmp_path, {"B": "mono.{lang}.vec"})
    columns = [c for c in shared.columns if c != "embeddings"]
    b = shared[shared.embeddings == "B"][columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(b, alone[columns].reset_index(drop=True))
    once = jobs.CoverOnce()
    test = select_lists(LISTS, ("en",), tests=TESTS).tests[0]
    wv = static.load_static(tmp_path / "mono.en.vec", words=test.vocabulary())
    options = {"min_coverage": 0.5, "equalize": "none", "seed": 0}
    first, again = once.cover(test, wv, **options), once.cover(test, wv, **options)
    assert first.items == again.items and first.missing == again.missing
    for key, rows in first.vectors.items():
        np.testing.assert_array_equal(again.vectors[key], rows)
        assert not np.shares_memory(again.vectors[key], rows)
