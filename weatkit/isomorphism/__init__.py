"""Isomorphism measures between two embedding spaces: eigenvector similarity (EV),
Gromov–Hausdorff via persistent homology (GH) and Gromov–Wasserstein (GW).

:func:`iso` is the entry point; :mod:`weatkit.isomorphism.measures` holds the preparation
(:func:`~weatkit.isomorphism.measures.prepare_space`) and the measures' options
(:class:`~weatkit.isomorphism.measures.IsoOptions`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, get_args

from weatkit import arguments
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.spec import EmbeddingsSpec, parse_embeddings_specs
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import ConfigError
from weatkit.isomorphism.measures import IsoOptions, measure_spaces, prepare_space

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

Source = str | os.PathLike | EmbeddingsSpec | WordVectors


def iso(
    src: Source,
    tgt: Source,
    *,
    src_lang: str = "",
    tgt_lang: str = "",
    src_words: Sequence[str] | None = None,
    tgt_words: Sequence[str] | None = None,
    allow_pickle: bool = False,
    extractors: ExtractorPool | None = None,
    **options: object,
) -> pd.DataFrame:
    """How far two embedding spaces are from isomorphic (CA-WEAT paper §5, Table 1).

    Both spaces are normalised as the reference scripts do (unit length, mean-centred, unit
    length) and the first ``n`` words of each are compared:

    * ``ev``, eigenvector similarity (Søgaard, Ruder & Vulić, ACL 2018, §4.2): with λ¹, λ² the
      Laplacian spectra of the two 1-nearest-neighbour graphs (ascending, as the reference
      script) and k = min(k₁, k₂), kᵢ the smallest k with Σ_{j<k} λⁱ_j ≥ 0.9 Σ_j λⁱ_j,
      EV = Σ_{j<k} (λ¹_j − λ²_j)²; 0 for isomorphic graphs.
    * ``gh``, Gromov–Hausdorff distance approximated by the bottleneck distance between the
      Rips persistence diagrams of the two spaces (Patra et al., ACL 2019); 0 when isometric.
    * ``gw``, Gromov–Wasserstein discrepancy min_T Σ (C¹_ik − C²_jl)² T_ij T_kl between the
      cosine distance matrices, uniform weights (Mémoli 2011; Alvarez-Melis & Jaakkola,
      EMNLP 2018; POT's ``gromov_wasserstein2``).

    Reference code: cambridgeltl/iso-study. Defaults: EV on 10,000 words, GH on 5,000, GW on
    1,000 (:data:`weatkit.isomorphism.measures.DEFAULT_N_WORDS`).

    Args:
        src, tgt: a file path, a spec (``NAME=PATH``, ``glove-6b-50d``, ``hf:MODEL@LAYER``;
            ``{lang}`` in a path is replaced by ``src_lang`` / ``tgt_lang``), or
            :class:`WordVectors` (e.g. from :func:`weatkit.load_vectors`).
        src_words, tgt_words: the words to take, in order (a frequency list, or a language's
            vocabulary in a joint space); needed for ``hf:`` models. Default: file order.
        allow_pickle: allow gensim ``.kv`` files.
        extractors: loaded transformer models to share between calls.
        **options: fields of :class:`IsoOptions` (``measures``, ``n_words``, ``ev_order``,
            ``energy``, ``gh_dims``, ``gh_points``, ``center_over``, ``device``).

    Returns:
        One row per measure: ``src``, ``tgt``, ``measure``, ``value``, ``n_words``, ``n_src``,
        ``n_tgt``, ``detail`` (:data:`weatkit.isomorphism.measures.ISO_COLUMNS`).

    Example:
        >>> import numpy as np
        >>> from weatkit import WordVectors, iso
        >>> rng = np.random.default_rng(0)
        >>> words = [f"w{i}" for i in range(60)]
        >>> a = WordVectors("a", words, rng.normal(size=(60, 8)).astype("float32"))
        >>> rotation = np.linalg.qr(rng.normal(size=(8, 8)))[0]
        >>> b = WordVectors("b", words, (a.vectors @ rotation).astype("float32"))
        >>> table = iso(a, b, measures=("ev", "gh"), device="cpu")
        >>> [round(v, 6) for v in table["value"]]   # a rotation is an isometry
        [0.0, 0.0]
    """
    settings = IsoOptions(**options)  # type: ignore[arg-type]
    settings.validate()
    pool = extractors if extractors is not None else ExtractorPool()  # one model for both
    spaces = []
    for role, source, lang, words in (
        ("src", src, src_lang, src_words),
        ("tgt", tgt, tgt_lang, tgt_words),
    ):
        arguments.instance("iso", role, source, get_args(Source), _SOURCE)
        if words is not None:
            words = arguments.words("iso", f"{role}_words", words)
        spaces.append(
            prepare_space(
                _as_source(source, role, lang),
                lang,
                settings,
                words=words,
                extractors=pool,
                allow_pickle=allow_pickle,
            )
        )
    return measure_spaces(spaces[0], spaces[1], settings)


#: What ``src`` and ``tgt`` are, in messages.
_SOURCE = "a path, an embeddings spec (str) or a WordVectors"


def _as_source(source: Source, role: str, lang: str) -> EmbeddingsSpec | WordVectors:
    if isinstance(source, WordVectors | EmbeddingsSpec):
        spec = source
    else:
        specs = parse_embeddings_specs(os.fspath(source))
        if len(specs) != 1:
            raise ConfigError(f"iso {role}={source!r}: give one layer (hf:MODEL@LAYER)")
        spec = specs[0]
    if isinstance(spec, EmbeddingsSpec) and spec.per_language and not lang:
        raise ConfigError(f"iso {role}={source!r} contains {{lang}}: give {role}_lang")
    return spec


__all__ = ["IsoOptions", "iso"]
