"""The lazy public API of ``weatkit``: cheap to import, every name the documented object."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import weatkit
from weatkit.embeddings.default import default_files
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

#: Public name -> (module, attribute) it must be.
DOCUMENTED = {
    "weat": ("weatkit.engine.weat", "weat"),
    "influence": ("weatkit.engine.influence", "influence"),
    "null_baseline": ("weatkit.engine.null", "null_baseline"),
    "run": ("weatkit.pipeline", "run"),
    "RunConfig": ("weatkit.pipeline", "RunConfig"),
    "load_vectors": ("weatkit.embeddings.load", "load_vectors"),
    "WordVectors": ("weatkit.embeddings.vectors", "WordVectors"),
    "iso": ("weatkit.isomorphism", "iso"),
    "grid": ("weatkit.grid", "grid"),
    "compare": ("weatkit.crossmethod", "compare"),
    "ceat": ("weatkit.ceat.run", "ceat"),
    "ibd": ("weatkit.ceat.intersectional", "ibd"),
    "eibd": ("weatkit.ceat.intersectional", "eibd"),
    "lpbs": ("weatkit.lpbs.measure", "lpbs"),
    "gest": ("weatkit.measures", "gest"),
    "stereoset": ("weatkit.measures", "stereoset"),
    "crows": ("weatkit.measures", "crows"),
    "mbe": ("weatkit.measures", "mbe"),
    "rnd": ("weatkit.association.rnd", "rnd"),
    "rnsb": ("weatkit.association.rnsb", "rnsb"),
    "mac": ("weatkit.association.mac", "mac"),
    "ect": ("weatkit.association.ect", "ect"),
    "ripa": ("weatkit.association.ripa", "ripa"),
    "wefat": ("weatkit.association.wefat", "wefat"),
    "sc_weat": ("weatkit.association.sc_weat", "sc_weat"),
    "direct_bias": ("weatkit.association.direct_bias", "direct_bias"),
    "validity": ("weatkit", "validity"),  # the module weatkit.validity
    "write_report": ("weatkit.report.html", "write_report"),
    "log_to_mlflow": ("weatkit.tracking", "log_to_mlflow"),
}



HEAVY = ("torch", "transformers", "scipy", "pandas", "matplotlib", "sklearn")


def test_import_weatkit_is_cheap() -> None:
    code = (
        "import json, sys, weatkit; "
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_all_and_dir_list_the_public_names() -> None:
    assert set(weatkit.__all__) == {*DOCUMENTED, "WeatkitError", "__version__"}
    assert set(DOCUMENTED) <= set(dir(weatkit))
    with pytest.raises(AttributeError):
        weatkit.not_a_name  # noqa: B018


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_name_is_the_documented_object(name: str) -> None:
    module_name, attribute = DOCUMENTED[name]
    module = __import__(module_name, fromlist=[attribute])
    obj = getattr(weatkit, name)
    assert obj is getattr(module, attribute)
    doc = obj.__doc__ or ""
    assert len(doc.splitlines()) > 1, name
    if callable(obj) and not isinstance(obj, type):
        assert "Example" in doc or ">>>" in doc, name


def test_names_survive_the_import_of_a_same_named_subpackage() -> None:
    code = (
        "import weatkit; from weatkit.grid.config import GridConfig; import weatkit.grid.runner; "
        "from weatkit.grid import grid; print(weatkit.grid is grid, callable(weatkit.grid))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


# --- load_vectors -----------------------------------------------------------------------------

WORDS = ["flower", "insect", "pleasant", "not-a-word"]


def _glove_rows(words: list[str]) -> dict[str, np.ndarray]:
    """GloVe rows read straight from the package files (independent of the loaders)."""
    matrix_path, index_path = default_files()
    vocab = pd.read_parquet(index_path).iloc[:, 0].tolist()
    matrix = np.load(matrix_path, mmap_mode="r")
    index = {w: i for i, w in enumerate(vocab)}
    return {w: np.asarray(matrix[index[w]]) for w in words if w in index}


def test_load_vectors_default_file_and_keyed_vectors(tmp_path: Path) -> None:
    expected = _glove_rows(WORDS)
    glove = weatkit.load_vectors(words=WORDS)
    assert isinstance(glove, WordVectors)
    assert glove.name == "glove-6b-50d" and set(glove.words) == set(expected) and glove.dim == 50
    for word, row in expected.items():
        np.testing.assert_array_equal(glove.lookup([word])[0], row)
    # the same rows from a .vec file
    vec = tmp_path / "small.vec"
    lines = [f"{len(expected)} 50"] + [
        w + " " + " ".join(repr(float(x)) for x in v) for w, v in expected.items()
    ]
    vec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_file = weatkit.load_vectors(vec, words=["insect", "flower"], name="mine")
    assert from_file.name == "mine" and from_file.words == ["flower", "insect"]
    np.testing.assert_allclose(from_file.lookup(["insect"])[0], expected["insect"], rtol=1e-6)
    # a gensim KeyedVectors, restricted to the words asked for (plus first_n rows)
    kv = glove.to_keyed_vectors()
    picked = weatkit.load_vectors(kv, words=["pleasant"], first_n=1)
    assert picked.words == [glove.words[0], "pleasant"] and picked.name == "keyed-vectors"
    np.testing.assert_array_equal(picked.lookup(["pleasant"])[0], expected["pleasant"])
    assert weatkit.load_vectors(kv).words == glove.words


def test_load_vectors_errors(tmp_path: Path) -> None:
    with pytest.raises(WeatkitError, match="not found"):
        weatkit.load_vectors(tmp_path / "none.vec")
    kv = weatkit.load_vectors(words=["flower"]).to_keyed_vectors()
    with pytest.raises(WeatkitError, match="fmt is for files only"):
        weatkit.load_vectors(kv, fmt="text")
    with pytest.raises(WeatkitError, match="cannot load a int"):
        weatkit.load_vectors(3)  # type: ignore[arg-type]


# --- iso ----------------------------------------------------------------------------------------


def test_iso_is_zero_for_a_rotation_and_matches_the_cli(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from weatkit.cli import main

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(80)]
    a = WordVectors("a", words, rng.normal(size=(80, 6)).astype(np.float32))
    rotation = np.linalg.qr(rng.normal(size=(6, 6)))[0]
    b = WordVectors("b", words, (a.vectors @ rotation).astype(np.float32))
    c = WordVectors("c", words, rng.normal(size=(80, 6)).astype(np.float32))
    same = weatkit.iso(a, b, device="cpu")
    assert list(same.measure) == ["ev", "gh"]
    np.testing.assert_allclose(same.value, 0.0, atol=1e-5)
    other = weatkit.iso(a, c, device="cpu", n_words={"ev": 50, "gh": 40})
    assert (other.value > 1e-3).all() and list(other.n_src) == [50, 40]
    # the command line gives the same numbers from files
    for wv in (a, c):
        lines = ["80 6"] + [w + " " + " ".join(repr(float(x)) for x in v)
                             for w, v in zip(wv.words, wv.vectors, strict=True)]  # fmt: skip
        (tmp_path / f"{wv.name}.vec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(
        main,
        ["iso", "--src", str(tmp_path / "a.vec"), "--tgt", str(tmp_path / "c.vec"),
         "--n-words", "ev=50", "--n-words", "gh=40", "--device", "cpu", "--format", "json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    cli = pd.DataFrame(json.loads(res.stdout))
    np.testing.assert_allclose(cli.value, other.value, rtol=1e-6)


def test_iso_errors() -> None:
    a = WordVectors("a", ["x", "y", "z"], np.eye(3, dtype=np.float32))
    with pytest.raises(WeatkitError, match="unknown isomorphism measure"):
        weatkit.iso(a, a, measures=("nope",))
    with pytest.raises(WeatkitError, match="give src_lang"):
        weatkit.iso("vecs.{lang}.vec", a)


# --- grid ---------------------------------------------------------------------------------------


def test_grid_from_a_file_and_from_a_config(tmp_path: Path) -> None:
    from tests.grid_fixtures import make_grid
    from weatkit.grid.config import load_grid_config

    experiment = make_grid(tmp_path / "g")
    first = weatkit.grid(experiment, output=tmp_path / "out1", show_progress=False)
    config = load_grid_config(experiment)
    second = weatkit.grid(config, output=tmp_path / "out2", show_progress=False)
    assert (tmp_path / "out1" / "summary.csv").is_file()
    assert (tmp_path / "out2" / "summary.csv").is_file()
    assert not first.summary.empty
    pd.testing.assert_frame_equal(first.summary, second.summary)
