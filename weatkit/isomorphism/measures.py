"""How far two embedding spaces are from isomorphic: the entry point that loads, prepares, measures.

Measures (CA-WEAT paper §5, Table 1, Figure 4; reference code cambridgeltl/iso-study):

* ``ev``: eigenvector similarity (Søgaard et al. 2018), on the first 10,000 words
  (:mod:`weatkit.isomorphism.eigenvector`);
* ``gh``: Gromov-Hausdorff distance approximated by the bottleneck distance between Rips
  persistence diagrams (Patra et al. 2019), on the first 5,000 words
  (:mod:`weatkit.isomorphism.gromov_hausdorff`); with H1 requested, ``gh_h0`` and ``gh_h1`` give
  each dimension and ``gh`` their minimum, as the reference does;
* ``gw``: Gromov-Wasserstein discrepancy between the cosine distance matrices (POT), on the first
  1,000 words (:mod:`weatkit.isomorphism.gromov_wasserstein`).

Preparation follows the reference scripts: every candidate row is normalised (unit length →
mean-centred → unit length, :func:`weatkit.isomorphism.preprocess.normalize_space`), then the
first ``n`` words are measured. The candidate rows are the whole file (``center_over="all"``,
the reference: the mean is taken over every vector of the file) or only the words measured
(``"subset"``: much faster for multi-GB files). Words are taken in file order (frequency order
for fastText, GloVe, word2vec) unless a word list gives the order, which also selects a
language's subspace of a joint multilingual space (CA-WEAT paper: the vocabulary of the
monolingual space) and supplies the words for contextual models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from weatkit._io.textfile import read_text_file
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.spec import EmbeddingsSpec, load_embeddings
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import ConfigError, WeatkitError
from weatkit.isomorphism.eigenvector import ORDERS as EV_ORDERS
from weatkit.isomorphism.eigenvector import eigenvector_similarity
from weatkit.isomorphism.gromov_hausdorff import POINTS as GH_POINTS
from weatkit.isomorphism.gromov_hausdorff import gromov_hausdorff
from weatkit.isomorphism.gromov_wasserstein import gromov_wasserstein
from weatkit.isomorphism.preprocess import normalize_space

MEASURES = ("ev", "gh", "gw")
#: Words per measure, as in the reference scripts (EV 10,000, GH 5,000); GW is O(n³).
DEFAULT_N_WORDS = {"ev": 10_000, "gh": 5_000, "gw": 1_000}
CENTER_OVER = ("all", "subset")
#: Columns of the isomorphism table.
ISO_COLUMNS = ["src", "tgt", "measure", "value", "n_words", "n_src", "n_tgt", "detail"]


@dataclass(frozen=True)
class IsoOptions:
    """Which measures, on how many words, computed how.

    Attributes:
        measures: any of ``ev``, ``gh``, ``gw``.
        n_words: words per measure (defaults: :data:`DEFAULT_N_WORDS`).
        ev_order: ``ascending`` (reference code: smallest eigenvalues first) or ``descending``
            (Søgaard et al.: the k largest).
        energy: spectrum fraction that sets k for EV (0.9).
        gh_dims: homology dimensions for GH (``(0,)`` = reference; ``(0, 1)`` adds H1).
        gh_points: ``distances`` (Rips on the distance matrix) or ``distance-rows`` (the rows
            of the distance matrix as points, how the reference ran under gudhi < 3).
        center_over: ``all`` rows of the source (reference) or only the measured ``subset``.
        device: torch device for nearest neighbours and distance matrices.
    """

    measures: tuple[str, ...] = ("ev", "gh")
    n_words: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_N_WORDS))
    ev_order: str = "ascending"
    energy: float = 0.9
    gh_dims: tuple[int, ...] = (0,)
    gh_points: str = "distances"
    center_over: str = "all"
    device: str = "auto"

    def validate(self) -> None:
        """:class:`ConfigError` naming the field of an unknown measure or option, a word count
        below 2, homology dimensions other than 0 or 0,1, or an energy outside (0, 1]."""
        unknown = [m for m in self.measures if m not in MEASURES]
        if unknown or not self.measures:
            raise ConfigError(
                f"unknown isomorphism measure {unknown[0] if unknown else ''!r}: "
                f"choose from {', '.join(MEASURES)}",
                field="measures",
            )
        for measure, n in self.n_words.items():
            if measure not in MEASURES:
                raise ConfigError(f"unknown measure {measure!r}", field="n_words")
            if not isinstance(n, int) or n < 2:
                raise ConfigError(f"{measure}={n!r}: need at least 2 words", field="n_words")
        if self.ev_order not in EV_ORDERS:
            raise ConfigError(f"must be one of {', '.join(EV_ORDERS)}", field="ev_order")
        if not self.gh_dims or not set(self.gh_dims) <= {0, 1}:
            raise ConfigError(f"must be 0 or 0,1, got {self.gh_dims!r}", field="gh_dims")
        if self.gh_points not in GH_POINTS:
            raise ConfigError(f"must be one of {', '.join(GH_POINTS)}", field="gh_points")
        if self.center_over not in CENTER_OVER:
            raise ConfigError(f"must be one of {', '.join(CENTER_OVER)}", field="center_over")
        if not 0 < self.energy <= 1:
            raise ConfigError(f"must be in (0, 1], got {self.energy}", field="energy")

    def words_for(self, measure: str) -> int:
        return self.n_words.get(measure, DEFAULT_N_WORDS[measure])

    @property
    def max_words(self) -> int:
        return max(self.words_for(m) for m in self.measures)


@dataclass
class Space:
    """A language's space, normalised, rows in the order words are taken.

    Attributes:
        name: label (e.g. ``"WP/de"``).
        words: the words, in order.
        vectors: normalised rows (float64).
        n_candidates: rows the normalisation's mean was taken over.
    """

    name: str
    words: list[str]
    vectors: np.ndarray
    n_candidates: int

    def first(self, n: int) -> np.ndarray:
        return self.vectors[:n]


def read_word_list(path: str | Path) -> list[str]:
    """Words, one per line (the first field of a line, so a ``.vec`` file or a ``word count``
    frequency list works too); a ``n dim`` header line is skipped; duplicates keep the first."""
    p = Path(path).expanduser()
    lines = read_text_file(p, "word list").splitlines()
    fields = [line.split() for line in lines]
    fields = [f for f in fields if f]
    if fields and len(fields[0]) == 2 and all(x.isdigit() for x in fields[0]) and len(fields) > 1:
        fields = fields[1:]  # a "n dim" header
    words = list(dict.fromkeys(f[0] for f in fields))
    if not words:
        raise WeatkitError(f"word list {p} is empty")
    return words


def prepare_space(
    source: EmbeddingsSpec | WordVectors,
    lang: str,
    options: IsoOptions,
    *,
    words: Sequence[str] | None = None,
    extractors: ExtractorPool | None = None,
    allow_pickle: bool = False,
) -> Space:
    """Load the rows to measure (and to centre over) and normalise them.

    Args:
        source: an embeddings spec (static file, the default, or ``hf:``) or vectors in memory.
        lang: substituted for ``{lang}`` in the spec.
        options: measures and preparation.
        words: the words to take, in order (a frequency or vocabulary list); None = file order.
        extractors: shares contextual models between calls.
    """
    n_max = options.max_words
    if isinstance(source, WordVectors):
        wv = _reorder(source, words)
        name = source.name
    else:
        name = source.name
        contextual = source.is_contextual
        if contextual and words is None:
            raise WeatkitError(
                f"{source.name}: a contextual model has no vocabulary of its own; give a word "
                "list (one word per line) for the isomorphism measures"
            )
        if contextual:
            wanted: Sequence[str] | None = list(words or [])[:n_max]
        elif words is not None:
            wanted = list(words)
        else:
            wanted = None if options.center_over == "all" else ()
        first_n = n_max if wanted == () else 0
        wv = load_embeddings(
            source,
            lang,
            words=wanted,
            first_n=first_n,
            allow_pickle=allow_pickle,
            extractors=extractors,
        )
        wv = _reorder(wv, words)
    if options.center_over == "subset":
        wv = WordVectors(wv.name, wv.words[:n_max], wv.vectors[:n_max], wv.source)
    if len(wv) < 2:
        raise WeatkitError(f"{name} ({lang}): fewer than 2 words to measure")
    try:
        vectors = normalize_space(wv.vectors)
    except WeatkitError as err:
        raise WeatkitError(f"{name} ({lang}): {err}") from None
    return Space(f"{name}/{lang}" if lang else name, wv.words, vectors, len(wv))


def _reorder(wv: WordVectors, words: Sequence[str] | None) -> WordVectors:
    if words is None:
        return wv
    present = [w for w in dict.fromkeys(words) if w in wv]
    return WordVectors(wv.name, present, wv.lookup(present), wv.source, wv.n_rows_in_source)


def measure_spaces(src: Space, tgt: Space, options: IsoOptions) -> pd.DataFrame:
    """The measures between two prepared spaces; one row per measure (:data:`ISO_COLUMNS`)."""
    options.validate()
    rows = []
    for measure in options.measures:
        n = options.words_for(measure)
        x, y = src.first(n), tgt.first(n)
        base = {"src": src.name, "tgt": tgt.name, "n_words": n, "n_src": len(x), "n_tgt": len(y)}
        if measure == "ev":
            ev = eigenvector_similarity(
                x, y, order=options.ev_order, energy=options.energy, device=options.device
            )
            detail = f"k={ev.k} (src {ev.k_src}, tgt {ev.k_tgt}), {ev.order}"
            rows.append({**base, "measure": "ev", "value": ev.value, "detail": detail})
        elif measure == "gh":
            gh = gromov_hausdorff(
                x, y, dims=options.gh_dims, points=options.gh_points, device=options.device
            )
            rows.append({**base, "measure": "gh", "value": gh.value, "detail": options.gh_points})
            if len(options.gh_dims) > 1:
                for dim, value in gh.per_dim.items():
                    rows.append({**base, "measure": f"gh_h{dim}", "value": value, "detail": ""})
        else:
            gw = gromov_wasserstein(x, y, device=options.device)
            rows.append({**base, "measure": "gw", "value": gw.value, "detail": "square loss"})
    return pd.DataFrame(rows, columns=ISO_COLUMNS)
