"""Supervised orthogonal Procrustes alignment of a space onto another with a bilingual dictionary.

Given dictionary pairs (s_i, t_i) with source vectors X (rows x_{s_i}) and target vectors Z
(rows z_{t_i}), the orthogonal map is

    W* = argmin_{W : WᵀW = I} ‖X W − Z‖_F = U Vᵀ,   where U Σ Vᵀ = SVD(Xᵀ Z)

(Schönemann 1966; the supervised baseline of VecMap and MUSE), computed with
:func:`scipy.linalg.orthogonal_procrustes`. Every source vector is then mapped, x ↦ x W*.
Before fitting, both spaces can be normalised in VecMap's order of steps (``unit``: rows to
unit length; ``center``: subtract the column mean), e.g. ``("unit", "center", "unit")``.

Dictionaries use the MUSE text format: one pair per line, ``source target`` separated by
whitespace. Pairs with a word missing from either space are skipped and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.linalg import orthogonal_procrustes

from weatkit._io.textfile import read_text_file
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

NORMALIZATION_STEPS = ("unit", "center")


@dataclass
class Alignment:
    """The result of :func:`procrustes_align`.

    Attributes:
        aligned: the source space mapped into the target space (normalised, then x W).
        mapping: the orthogonal matrix W (dim × dim).
        n_pairs: dictionary pairs used for fitting.
        n_skipped: pairs skipped because a word is missing from a space.
        residual: ‖X W − Z‖_F / √n_pairs on the dictionary (root-mean-square error).
    """

    aligned: WordVectors
    mapping: np.ndarray
    n_pairs: int
    n_skipped: int
    residual: float


def read_dictionary(path: str | Path) -> list[tuple[str, str]]:
    """Pairs from a MUSE-format dictionary (``source target`` per line; blank lines ignored).

    Raises:
        WeatkitError: missing or non-UTF-8 file, a line without exactly two fields (the line
            number is named), or no pair at all.
    """
    p = Path(path).expanduser()
    text = read_text_file(p, "dictionary")
    pairs = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise WeatkitError(
                f"{p}:{lineno}: expected 'source target', got {len(fields)} field(s)"
            )
        pairs.append((fields[0], fields[1]))
    if not pairs:
        raise WeatkitError(f"dictionary {p} has no pairs")
    return pairs


def normalize(vectors: np.ndarray, steps: Sequence[str]) -> np.ndarray:
    """Apply ``unit`` / ``center`` steps in order (float64); zero rows stay zero under ``unit``."""
    out = np.asarray(vectors, dtype=np.float64).copy()
    for step in steps:
        if step == "unit":
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        elif step == "center":
            out -= out.mean(axis=0)
        else:
            raise WeatkitError(
                f"unknown normalisation step {step!r}: use {', '.join(NORMALIZATION_STEPS)}"
            )
    return out


def procrustes_align(
    source: WordVectors,
    target: WordVectors,
    pairs: Sequence[tuple[str, str]],
    *,
    normalization: Sequence[str] = (),
) -> Alignment:
    """Fit the orthogonal map of ``source`` onto ``target`` on ``pairs`` and map every source row.

    ``target`` needs only the dictionary's target words; it is normalised with the same steps
    (its column mean is then that of the rows given).

    Raises:
        WeatkitError: different dimensions, or fewer than 2 usable pairs.
    """
    if source.dim != target.dim:
        raise WeatkitError(
            f"Procrustes needs spaces of the same dimension: {source.name} has {source.dim}, "
            f"{target.name} has {target.dim}"
        )
    usable = [(s, t) for s, t in pairs if s in source and t in target]
    if len(usable) < 2:
        raise WeatkitError(
            f"only {len(usable)} of {len(pairs)} dictionary pairs have both words in the spaces"
        )
    src = normalize(source.vectors, normalization)
    tgt = normalize(target.vectors, normalization)
    x = src[[source.index(s) for s, _ in usable]]
    z = tgt[[target.index(t) for _, t in usable]]
    mapping, _ = orthogonal_procrustes(x, z)
    residual = float(np.linalg.norm(x @ mapping - z) / np.sqrt(len(usable)))
    aligned = WordVectors(
        name=f"{source.name}->{target.name}",
        words=list(source.words),
        vectors=(src @ mapping).astype(np.float32),
        source=f"{source.source} aligned by Procrustes",
        n_rows_in_source=source.n_rows_in_source,
    )
    return Alignment(aligned, mapping, len(usable), len(pairs) - len(usable), residual)
