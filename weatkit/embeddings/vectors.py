"""In-memory word vectors: the currency between loaders and the engine."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from gensim.models import KeyedVectors


@dataclass
class WordVectors:
    """A vocabulary and its vectors (one row per word, float32).

    Attributes:
        name: label used in result tables (e.g. ``"glove-6b-50d"``, ``"WP"``).
        words: the words, in the order of the rows.
        vectors: array of shape ``(len(words), dim)``.
        source: where the vectors came from (path or description), for the manifest.
        n_rows_in_source: how many rows the source file had (``-1`` when unknown).
    """

    name: str
    words: list[str]
    vectors: np.ndarray
    source: str = ""
    n_rows_in_source: int = -1
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(
                f"{self.name}: {len(self.words)} words but vectors of shape {self.vectors.shape}"
            )
        self._index = {}
        for i, w in enumerate(self.words):
            self._index.setdefault(w, i)

    def __repr__(self) -> str:
        """Short: name, size and dimension (never the words or the vectors)."""
        source = f", source={self.source!r}" if self.source else ""
        return f"WordVectors({self.name!r}, {len(self.words)} words, dim {self.dim}{source})"

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def index(self, word: str) -> int:
        return self._index[word]

    def lookup(self, words: Iterable[str]) -> np.ndarray:
        """Rows of ``words`` (all must be present), shape ``(n, dim)``."""
        return self.vectors[[self._index[w] for w in words]]

    def to_keyed_vectors(self) -> KeyedVectors:
        """The same vectors as a gensim ``KeyedVectors``."""
        from gensim.models import KeyedVectors

        kv = KeyedVectors(vector_size=self.dim)
        kv.add_vectors(self.words, self.vectors)
        return kv

    @classmethod
    def from_keyed_vectors(cls, kv: KeyedVectors, name: str = "keyed-vectors") -> WordVectors:
        """Wrap a gensim ``KeyedVectors`` (vectors are copied as float32)."""
        return cls(
            name=name,
            words=list(kv.index_to_key),
            vectors=np.asarray(kv.vectors, dtype=np.float32),
            source=f"in-memory KeyedVectors ({len(kv.index_to_key)} words)",
            n_rows_in_source=len(kv.index_to_key),
        )
