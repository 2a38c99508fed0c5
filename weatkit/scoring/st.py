"""The ``st`` backend: a sentence-transformers model, one vector per text with its own pooling.

A sentence-transformers model is a pipeline of modules listed in its ``modules.json``: the
transformer, then a pooling module (``1_Pooling/config.json``: mean, CLS, max… over the token
states), often a ``Normalize``. :meth:`StScorer.embed` runs that pipeline,
``SentenceTransformer(MODEL).encode(texts)``, so a text's vector is the one the model's authors
defined; for all-MiniLM-L6-v2 (mean pooling, then Normalize)

.. math:: e(t) = m / \\lVert m \\rVert, \\quad m = \\frac{1}{n} \\sum_{j=1}^{n} h_L[j]

over the ``n`` positions of the tokenised text, ``[CLS]`` and ``[SEP]`` included. A text longer
than the model's ``max_seq_length`` would be cut silently by sentence-transformers: it is a
:class:`~weatkit.errors.TextTooLongError` naming every such text instead.

The model runs on ``device`` (``auto``: CUDA, else MPS, else the CPU) in float32;
``trust_remote_code`` stays off unless the user opts in (a model with code of its own then
fails with a one-line error), ``revision`` pins a hub model, and a hub model comes from the hub
cache when the hub is not to be asked (:func:`weatkit.models.hub.hub_offline`). The identity (the
cache key of its vectors) is a content hash of a local directory, else the hub id and commit
(:func:`weatkit.models.hub.model_identity`). The model offers ``embed`` only: it gives no
token log-probabilities.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from weatkit.engine.device import resolve_device
from weatkit.errors import ConfigError, ModelError, TextTooLongError
from weatkit.models.hub import first_line, hub_offline, model_identity
from weatkit.models.options import LoadOptions
from weatkit.scoring.base import DEFAULT_START, OnScored, TokenLogprobs
from weatkit.scoring.spec import ModelSpec
from weatkit.scoring.tokens import check_texts

#: Texts per ``encode`` batch with ``batch_size`` ``auto`` (sentence-transformers' default).
AUTO_BATCH_SIZE = 32
#: Loading options of hf: models that a sentence-transformers model does not take here.
_NOT_TAKEN = (("dtype", "float32", "--dtype"), ("device_map", None, "--device-map"),
              ("quantization", None, "--quantization"))  # fmt: skip


class StScorer:
    """One sentence-transformers model (module docstring).

    Attributes:
        spec: the model spec (``st:MODEL``).
        identity: sorted JSON of the backend and :func:`~weatkit.models.hub.model_identity`.
        capabilities: ``embed``.
        embedding_pooling: how a text is pooled, from the model's own modules (recorded in the
            scores' conventions).
    """

    def __init__(self, spec: ModelSpec, options: Any = None) -> None:
        load = LoadOptions.of(options)
        for field, default, flag in _NOT_TAKEN:
            if getattr(load, field) != default:
                raise ConfigError(
                    f"{flag} {getattr(load, field)} is for hf: models; an st: model loads in "
                    "float32 on one device"
                )
        from sentence_transformers import SentenceTransformer

        self.spec = spec
        self.capabilities = frozenset({"embed"})
        batch = getattr(options, "batch_size", AUTO_BATCH_SIZE)
        self.batch_size = AUTO_BATCH_SIZE if batch == "auto" else int(batch)
        model = os.path.expanduser(spec.model)
        try:
            self.model = SentenceTransformer(
                model,
                device=str(resolve_device(load.device)),
                trust_remote_code=load.trust_remote_code,
                revision=load.revision,
                local_files_only=hub_offline(model) is not None,
            )
        except (OSError, ValueError, RuntimeError) as err:
            if "trust_remote_code" in str(err):
                raise ModelError(
                    f"{spec}: needs code from its repository: pass --trust-remote-code if you "
                    "trust it"
                ) from None
            raise ModelError(f"{spec}: cannot load the model: {first_line(err)}") from None
        self.identity = json.dumps(
            {"backend": "st", **model_identity(model, None, load)}, sort_keys=True, default=str
        )
        self.embedding_pooling = "sentence-transformers: " + " -> ".join(
            type(module).__name__ for module in self.model
        )

    def __repr__(self) -> str:
        return f"StScorer({str(self.spec)!r})"

    def causal_logprobs(
        self,
        texts: Sequence[str],
        *,
        show_progress: bool | None = None,
        start: str = DEFAULT_START,
        read_from: Sequence[int] | None = None,
        on_scored: OnScored | None = None,
    ) -> list[TokenLogprobs]:
        """Not offered: a one-line :class:`~weatkit.errors.ModelError`."""
        raise ModelError(
            f"{self.spec}: a sentence-transformers model gives embeddings only, no token "
            f"log-probabilities; use hf:{self.spec.model} for a language model"
        )

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """The model's own vector of each text (module docstring), float32
        ``(len(texts), dim)``; :class:`TextTooLongError` naming the texts longer than its
        ``max_seq_length``."""
        texts = list(texts)
        check_texts(texts)
        if not texts:
            return np.zeros((0, 0), np.float32)
        limit = self.model.max_seq_length
        if limit:
            lengths = [len(ids) for ids in self.model.tokenizer(texts)["input_ids"]]
            long = tuple(t for t, n in zip(texts, lengths, strict=True) if n > limit)
            if long:
                raise TextTooLongError(
                    f"{self.spec}: {len(long)} text(s) longer than the model's max_seq_length "
                    f"{limit} tokens, e.g. {long[0]!r:.80}",
                    texts=long,
                    limit=limit,
                )
        vectors = self.model.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=bool(show_progress),
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)


def make_scorer(spec: ModelSpec, options: Any = None) -> StScorer:
    """The registry's entry point: :class:`StScorer` of ``spec`` under ``options`` (any object
    with the loading fields of :class:`~weatkit.models.options.LoadOptions` and ``batch_size``,
    such as a run's ``ContextualOptions``; None for the defaults)."""
    return StScorer(spec, options)
