"""The model layer: one handle per Hugging Face model, shared; batching; the result cache.

* :mod:`weatkit.models.handle` — :class:`~weatkit.models.handle.ModelHandle`: config, tokenizer
  and weights of one model loaded once; hidden states, masked- and causal-LM log-probabilities.
* :mod:`weatkit.models.pool` — :func:`~weatkit.models.pool.get_model`: one handle per model and
  loading options in the process, and the release policy.
* :mod:`weatkit.models.options` — :class:`~weatkit.models.options.LoadOptions`, how weights are
  loaded (dtype, device, revision, ...).
* :mod:`weatkit.models.hub` — loading functions (safetensors only unless allowed, no repository
  code unless trusted, revision resolved to a commit).
* :mod:`weatkit.models.batching` — the sorted-batch loop with its progress bar.
* :mod:`weatkit.models.cache` — the on-disk cache of vectors and scores.

Nothing is imported here, so ``import weatkit.models`` stays cheap.
"""
