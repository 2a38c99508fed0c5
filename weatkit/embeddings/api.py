"""Vectors of whole items from a model backend's ``embed``: an embeddings API
``[NAME=]openai:BASE_URL#MODEL`` (issue 25 §2) or a sentence-transformers model
``[NAME=]st:ID_OR_DIR`` (SEAT, issue 38), any backend of
:data:`weatkit.embeddings.spec.API_PREFIXES`.

Each item (a word, a phrase or a sentence, spaces kept) is one input of the scorer's
:meth:`~weatkit.scoring.base.Scorer.embed` (:meth:`weatkit.scoring.openai.OpenAIScorer.embed`:
``POST /v1/embeddings``, as the WEATHub paper embedded its lists with ``ada-002``;
:meth:`weatkit.scoring.st.StScorer.embed`: the model's own pooling and normalisation), and its
vector is the one the backend returns. There are no layers and no out-of-vocabulary items.
Vectors are cached on disk (the ``vectors`` cache, :class:`weatkit.models.cache.VectorCache`)
keyed by the scorer's identity (a server's base URL, model and what it reports of it, never the
API key; a local model's content hash, a hub model's commit), so a rerun embeds only new items.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from weatkit.embeddings.vectors import WordVectors
from weatkit.models.cache import VectorCache, cached_rows
from weatkit.scoring.registry import get_scorer
from weatkit.scoring.spec import ModelSpec

#: Bump when the meaning of a cached API vector changes.
API_VECTORS_VERSION = 1


def api_word_vectors(
    spec: ModelSpec, words: Iterable[str], *, name: str, options: object | None = None
) -> WordVectors:
    """The vectors of ``words`` (distinct, in order) from the ``embed`` of ``spec``'s backend
    (module docstring), under ``options`` (the backend's options or an object with their
    fields, such as a run's ``ContextualOptions``; None for the defaults). ``options.cache``
    False (``--no-cache``) neither reads nor writes the vector cache."""
    items = list(dict.fromkeys(words))
    scorer = get_scorer(spec, options)
    cache = None
    if getattr(options, "cache", True):
        cache = VectorCache(
            {"task": "api-embeddings", "version": API_VECTORS_VERSION, "identity": scorer.identity}
        )
    found, _ = cached_rows(cache, items, scorer.embed)
    vectors = np.stack([found[w] for w in items]) if items else np.zeros((0, 0), np.float32)
    return WordVectors(name, items, vectors, source=scorer.identity, n_rows_in_source=-1)
