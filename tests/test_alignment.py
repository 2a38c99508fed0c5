"""Orthogonal Procrustes alignment: recovers a known rotation, parses MUSE dictionaries, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_cli_run import write_vec
from weatkit.alignment import normalize, procrustes_align, read_dictionary
from weatkit.cli import main
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

DIM = 6
SRC_WORDS = [f"s{i}" for i in range(40)]
TGT_WORDS = [f"t{i}" for i in range(40)]


def _rotation(seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((DIM, DIM)))
    return q


def _spaces() -> tuple[WordVectors, WordVectors, np.ndarray]:
    x = np.random.default_rng(0).standard_normal((len(SRC_WORDS), DIM))
    rotation = _rotation(1)
    src = WordVectors("src", SRC_WORDS, x.astype(np.float32))
    tgt = WordVectors("tgt", TGT_WORDS, (x @ rotation).astype(np.float32))
    return src, tgt, rotation


def test_recovers_a_known_rotation_from_part_of_the_dictionary() -> None:
    src, tgt, rotation = _spaces()
    pairs = [(f"s{i}", f"t{i}") for i in range(15)] + [("missing", "t1"), ("s2", "gone")]
    result = procrustes_align(src, tgt, pairs)
    np.testing.assert_allclose(result.mapping, rotation, atol=1e-5)
    np.testing.assert_allclose(result.aligned.vectors, tgt.vectors, atol=1e-5)  # all 40 rows
    assert (result.n_pairs, result.n_skipped) == (15, 2)
    assert result.residual < 1e-5


def test_mapping_is_the_svd_solution_under_noise() -> None:
    """W = U Vᵀ with U Σ Vᵀ = SVD(Xᵀ Z), computed by hand, after unit+center+unit."""
    src, tgt, _ = _spaces()
    noisy = WordVectors(
        "tgt", TGT_WORDS, tgt.vectors + np.random.default_rng(3).normal(0, 0.3, tgt.vectors.shape)
    )
    steps = ("unit", "center", "unit")
    pairs = [(f"s{i}", f"t{i}") for i in range(40)]
    result = procrustes_align(src, noisy, pairs, normalization=steps)
    x, z = normalize(src.vectors, steps), normalize(noisy.vectors, steps)
    u, _, vt = np.linalg.svd(x.T @ z)
    np.testing.assert_allclose(result.mapping, u @ vt, atol=1e-10)
    np.testing.assert_allclose(result.mapping @ result.mapping.T, np.eye(DIM), atol=1e-10)


def test_normalize_steps() -> None:
    m = np.array([[3.0, 4.0], [0.0, 2.0], [0.0, 0.0]])
    np.testing.assert_allclose(normalize(m, ["unit"]), [[0.6, 0.8], [0, 1], [0, 0]])
    np.testing.assert_allclose(normalize(m, ["center"]), m - m.mean(axis=0))
    with pytest.raises(WeatkitError, match="unknown normalisation step 'scale'"):
        normalize(m, ["scale"])


def test_errors() -> None:
    src, tgt, _ = _spaces()
    other = WordVectors("other", ["t0", "t1"], np.ones((2, 3), np.float32))
    with pytest.raises(WeatkitError, match="same dimension"):
        procrustes_align(src, other, [("s0", "t0"), ("s1", "t1")])
    with pytest.raises(WeatkitError, match="only 1 of 2 dictionary pairs"):
        procrustes_align(src, tgt, [("s0", "t0"), ("x", "y")])


@pytest.mark.parametrize(
    ("content", "message"),
    [("a b\nc\n", "dict.txt:2: expected 'source target', got 1 field"), ("\n\n", "no pairs")],
)
def test_bad_dictionaries(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "dict.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WeatkitError, match=message):
        read_dictionary(path)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_dictionary_parser_never_crashes(tmp_path_factory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("dict") / "d.txt"
    path.write_bytes(data)
    try:
        pairs = read_dictionary(path)
    except WeatkitError as err:
        assert "\n" not in str(err)
    else:
        assert pairs and all(len(p) == 2 and all(p) for p in pairs)


def test_align_command_writes_the_aligned_space(tmp_path: Path) -> None:
    src, tgt, _ = _spaces()
    write_vec(tmp_path / "de.vec", dict(zip(src.words, src.vectors, strict=True)))
    write_vec(tmp_path / "en.vec", dict(zip(tgt.words, tgt.vectors, strict=True)))
    (tmp_path / "de-en.txt").write_text("\n".join(f"s{i} t{i}" for i in range(20)) + "\n")
    out = tmp_path / "aligned" / "de.aligned.vec"
    args = ["align", "--src", f"{tmp_path}/de.vec", "--tgt", f"{tmp_path}/en.vec",
            "--dict", f"{tmp_path}/de-en.txt", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "fitted on 20 pairs" in result.stderr
    aligned = load_static(out)
    assert aligned.words == SRC_WORDS
    np.testing.assert_allclose(aligned.vectors, tgt.vectors, atol=1e-5)
    bad = CliRunner().invoke(main, [*args[:-2], "--out", str(tmp_path / "x.vec"), "--normalize",
                                    "unit,zap"])  # fmt: skip
    assert bad.exit_code == 1 and "unknown normalisation step 'zap'" in bad.stderr
    assert not (tmp_path / "x.vec").exists()
