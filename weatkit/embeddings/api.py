"""Word vectors from an embeddings API: ``[NAME=]openai:BASE_URL#MODEL`` (issue 25 §2).

Each item (a word or a multi-word phrase, spaces kept) is sent alone as one input of
``POST /v1/embeddings`` (:meth:`weatkit.scoring.openai.OpenAIScorer.embed`), and its vector is
the one the server returns, as the WEATHub paper embedded its lists with ``ada-002``. There are no
layers and no out-of-vocabulary items. Vectors are cached on disk (the ``vectors`` cache,
:class:`weatkit.models.cache.VectorCache`) keyed by the scorer's identity (base URL, model and
what the server reports of it; never the API key), so a rerun sends only new items.
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
    """The vectors of ``words`` (distinct, in order) from the embeddings API of ``spec``, asked
    under ``options`` (an :class:`~weatkit.scoring.options.OpenAIOptions` or an object with its
    server fields, such as a run's ``ContextualOptions``; None for the defaults)."""
    items = list(dict.fromkeys(words))
    scorer = get_scorer(spec, options)
    cache = VectorCache(
        {"task": "api-embeddings", "version": API_VECTORS_VERSION, "identity": scorer.identity}
    )
    found, _ = cached_rows(cache, items, scorer.embed)
    vectors = np.stack([found[w] for w in items]) if items else np.zeros((0, 0), np.float32)
    return WordVectors(name, items, vectors, source=scorer.identity, n_rows_in_source=-1)
