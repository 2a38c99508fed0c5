"""Orthogonal Procrustes alignment: recovers a known rotation, parses MUSE dictionaries, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_cli_run import write_vec
from weatkit.alignment import (
    cca_align,
    identical_pairs,
    linear_align,
    normalize,
    pca,
    precision_at_1,
    procrustes_align,
    read_dictionary,
)
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


def _correlated(n: int = 300, seed: int = 0) -> tuple[WordVectors, WordVectors]:
    """A 7-d source and a 4-d target sharing a 3-d signal, with noise."""
    rng = np.random.default_rng(seed)
    signal = rng.standard_normal((n, 3))
    x = signal @ rng.standard_normal((3, 7)) + 0.5 * rng.standard_normal((n, 7))
    z = signal @ rng.standard_normal((3, 4)) + 0.5 * rng.standard_normal((n, 4))
    words = [f"w{i}" for i in range(n)]
    return WordVectors("x", words, x.astype(np.float32)), WordVectors(
        "z", words, z.astype(np.float32)
    )


def test_linear_map_is_the_least_squares_solution() -> None:
    src, tgt = _correlated()
    pairs = [(w, w) for w in src.words[:200]]
    steps = ("unit", "center")
    result = linear_align(src, tgt, pairs, normalization=steps)
    x, z = normalize(src.vectors, steps), normalize(tgt.vectors, steps)
    expected = np.linalg.solve(x[:200].T @ x[:200], x[:200].T @ z[:200])  # normal equations
    np.testing.assert_allclose(result.mapping, expected, atol=1e-10)
    assert result.mapping.shape == (7, 4) and result.aligned.dim == 4
    np.testing.assert_allclose(result.aligned.vectors, x @ expected, atol=1e-6)
    np.testing.assert_allclose(result.target.vectors, z, atol=1e-6)
    rms = np.linalg.norm(x[:200] @ expected - z[:200]) / np.sqrt(200)
    assert result.residual == pytest.approx(rms, rel=1e-9) and result.n_pairs == 200


def test_cca_matches_scikit_learn_and_the_canonical_correlations() -> None:
    from sklearn.cross_decomposition import CCA

    src, tgt = _correlated()
    pairs = [(w, w) for w in src.words]
    result = cca_align(src, tgt, pairs, 3)
    a, b = result.aligned.vectors.astype(np.float64), result.target.vectors.astype(np.float64)
    # canonical variates are uncorrelated within a space and pairwise correlated across
    corr = np.corrcoef(a.T, b.T)
    np.testing.assert_allclose(corr[:3, :3], np.eye(3), atol=1e-5)
    rho = np.diag(corr[:3, 3:])
    # the canonical correlations: singular values of the whitened cross-covariance (numpy)
    xc, zc = src.vectors - src.vectors.mean(0), tgt.vectors - tgt.vectors.mean(0)

    def whiten(m: np.ndarray) -> np.ndarray:
        vals, vecs = np.linalg.eigh(m.T @ m)
        return vecs @ np.diag(vals**-0.5) @ vecs.T

    sv = np.linalg.svd(whiten(xc) @ (xc.T @ zc) @ whiten(zc), compute_uv=False)
    np.testing.assert_allclose(rho, sv[:3], atol=1e-5)
    assert rho[0] > 0.9 and np.all(np.diff(rho) < 0)
    # scikit-learn's iterative CCA finds the same variates (up to sign and scale)
    sk_a, sk_b = (
        CCA(n_components=3, scale=False, max_iter=5000, tol=1e-12)
        .fit(src.vectors, tgt.vectors)
        .transform(src.vectors, tgt.vectors)
    )
    for j in range(3):
        assert abs(np.corrcoef(a[:, j], sk_a[:, j])[0, 1]) == pytest.approx(1, abs=1e-4)
        assert abs(np.corrcoef(b[:, j], sk_b[:, j])[0, 1]) == pytest.approx(1, abs=1e-4)


def test_pca_is_the_top_singular_subspace() -> None:
    src, _ = _correlated()
    reduced = pca(src, 2)
    centred = src.vectors.astype(np.float64) - src.vectors.mean(0)
    *_, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    np.testing.assert_allclose(np.abs(reduced.vectors), np.abs(expected), atol=1e-4)
    assert reduced.words == src.words and "PCA to 2 dimensions" in reduced.source
    with pytest.raises(WeatkitError, match=r"^pca: dim must be between 1 and 7, got 8$"):
        pca(src, 8)


def test_identical_pairs_and_precision_at_1() -> None:
    src = WordVectors("fr", ["le", "chat", "pain", "42", "rose"], np.eye(5, dtype=np.float32))
    tgt = WordVectors("en", ["rose", "pain", "cat", "42"], np.eye(4, 5, dtype=np.float32))
    assert identical_pairs(src, tgt) == [("pain", "pain"), ("rose", "rose")]  # alphabetic only
    assert identical_pairs(src, tgt, exclude={"rose"}) == [("pain", "pain")]
    src_, tgt_, _ = _spaces()
    result = procrustes_align(src_, tgt_, [(f"s{i}", f"t{i}") for i in range(20)])
    held_out = [(f"s{i}", f"t{i}") for i in range(20, 40)] + [("s1", "t2"), ("zz", "t1")]
    assert precision_at_1(result.aligned, tgt_, held_out) == (20 / 21, 21)
    with pytest.raises(WeatkitError, match="none of the 1 pairs has both words"):
        precision_at_1(result.aligned, tgt_, [("zz", "t1")])


def test_cca_errors() -> None:
    src, tgt = _correlated(n=20)
    pairs = [(w, w) for w in src.words]
    with pytest.raises(WeatkitError, match=r"^cca: n_components must be between 1 and 4, got 5$"):
        cca_align(src, tgt, pairs, 5)
    with pytest.raises(WeatkitError, match=r"^cca: 6 dictionary pairs for 7 dimensions; CCA"):
        cca_align(src, tgt, pairs[:6], 2)
