"""The ``vllm`` backend: vLLM's offline engine (``vllm.LLM``) with prompt log-probabilities.

A text is tokenised here, as the ``hf`` backend tokenises it (:mod:`weatkit.scoring.hf`): by
the model's fast Hugging Face tokenizer without special tokens (``return_offsets_mapping``
gives each token's character span), with a start token ``s`` in front, the tokenizer's BOS,
else its EOS. vLLM gets the ids as a token prompt (``{"prompt_token_ids": ids}``: it neither
tokenises nor adds a BOS) with ``SamplingParams(max_tokens=1, prompt_logprobs=0)``, and its
``RequestOutput.prompt_logprobs`` holds, for every prompt position ``j ≥ 1``, a mapping from token
ids to ``Logprob`` objects that always has the prompt's own token (and the ``0`` most likely
others); position 0 has None. So, input ``s w_1 … w_n``::

    logprobs[i] = prompt_logprobs[i][w_i].logprob = log P(w_i | s, w_<i),   i = 1 … n

the same conditionals as the ``hf`` backend's, computed by vLLM's kernels. A tokenizer with
neither BOS nor EOS gives NaN for ``w_1`` (the :class:`~weatkit.scoring.base.TokenLogprobs`
convention). One token is generated per text (vLLM needs ``max_tokens ≥ 1``) and ignored.

The engine is made on first use from the loading options (:class:`~weatkit.models.options.
LoadOptions`): the dtype as given (``float32`` unless ``--dtype``), ``tensor_parallel`` as
vLLM's ``tensor_parallel_size`` (``--tensor-parallel N``: the model sharded over N GPUs), the
hub revision resolved to a commit for the weights and the tokenizer, ``trust_remote_code``, and
safetensors weights only unless ``allow_pickle``. vLLM places the model on the GPUs CUDA makes
visible and batches the texts itself, so ``--batch-size`` is not used; ``--device-map``,
``--max-memory`` and ``--quantization`` are the ``hf`` backend's and are refused
(:meth:`~weatkit.models.options.LoadOptions.check_backend`).

The identity (what cache keys use) is the hf backend's identity of the same weights (a hub
model's commit, a directory's content hash) with ``"backend": "vllm"``. vLLM gives no sentence
embeddings here: :meth:`VllmScorer.embed` is a one-line error.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from weatkit.errors import ModelError
from weatkit.models.hub import (
    first_line,
    is_decoder_only,
    load_config,
    load_tokenizer,
    max_length,
    model_identity,
)
from weatkit.models.options import LoadOptions
from weatkit.progress import progress
from weatkit.scoring.base import TokenLogprobs
from weatkit.scoring.spec import ModelSpec

#: Texts per ``LLM.generate`` call (vLLM schedules the batches inside one call; the calls only
#: pace the progress bar).
TEXTS_PER_CALL = 512


class VllmScorer:
    """A causal LM in vLLM's offline engine (see the module docstring).

    Making one reads the config and the tokenizer (not the weights): a model that is not a
    causal LM, or whose tokenizer is slow (no character offsets), fails here; the engine is made
    by the first :meth:`causal_logprobs`.

    Attributes:
        spec: the model spec.
        identity: the weights' identity as sorted JSON, with ``"backend": "vllm"``.
        capabilities: ``causal``.
        options: the loading options.
        tokenizer: the model's fast tokenizer.
        start_id: the token put before every text (BOS, else EOS, else None).
    """

    def __init__(self, spec: ModelSpec, options: object | None = None) -> None:
        self.spec = spec
        load = LoadOptions.of(options)
        load.validate()
        load.check_backend("vllm")
        config = load_config(spec.model, load)
        if not is_decoder_only(config):
            raise ModelError(
                f"{spec}: not a causal LM ({type(config).__name__}); the vllm backend scores "
                "causal LMs"
            )
        identity = model_identity(spec.model, config, load)
        commit = identity.get("revision")
        self.options = replace(load, revision=commit) if commit else load
        self.identity = json.dumps({**identity, "backend": "vllm"}, sort_keys=True, default=str)
        self.capabilities = frozenset({"causal"})
        self.tokenizer = load_tokenizer(spec.model, self.options)
        if not getattr(self.tokenizer, "is_fast", False):
            raise ModelError(
                f"{spec}: token spans need a fast tokenizer (offsets); this one is slow"
            )
        self.start_id = next(
            (int(t) for t in (self.tokenizer.bos_token_id, self.tokenizer.eos_token_id)
             if t is not None),
            None,
        )  # fmt: skip
        self.max_length = max_length(self.tokenizer, config)
        self._llm: Any = None

    def __repr__(self) -> str:
        return f"VllmScorer({str(self.spec)!r})"

    @property
    def engine_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``vllm.LLM`` (module docstring)."""
        options = self.options
        model = os.path.expanduser(self.spec.model)
        return {
            "model": model,
            "tokenizer": model,
            "revision": options.revision,
            "tokenizer_revision": options.revision,
            "dtype": options.dtype,
            "tensor_parallel_size": options.tensor_parallel,
            "trust_remote_code": options.trust_remote_code,
            "load_format": "auto" if options.allow_pickle else "safetensors",
            "seed": 0,
        }

    def _engine(self) -> Any:
        if self._llm is None:
            import vllm

            try:
                self._llm = vllm.LLM(**self.engine_arguments)
            except (ValueError, RuntimeError, OSError) as err:
                raise ModelError(f"{self.spec}: vLLM cannot load it: {first_line(err)}") from err
        return self._llm

    # -- Scorer ---------------------------------------------------------------------------------

    def causal_logprobs(
        self, texts: Sequence[str], *, show_progress: bool | None = None
    ) -> list[TokenLogprobs]:
        """``log P(w_i | s, w_<i)`` of every token of each text (module docstring)."""
        encoded = self._encode(texts)
        if not encoded:
            return []
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=0.0)
        llm = self._engine()
        answers: list[Any] = []
        name = self.spec.short_name
        with progress(
            total=len(encoded), desc=f"token log-probabilities with {name}", unit="text",
            show=show_progress,
        ) as bar:  # fmt: skip
            for first in range(0, len(encoded), TEXTS_PER_CALL):
                chunk = encoded[first : first + TEXTS_PER_CALL]
                prompts = [{"prompt_token_ids": ids} for ids, _ in chunk]
                answers += llm.generate(prompts, params, use_tqdm=False)
                bar.update(len(chunk))
        if len(answers) != len(encoded):
            raise ModelError(f"{self.spec}: {len(encoded)} texts sent, {len(answers)} answers")
        return [
            self._token_logprobs(text, ids, spans, answer)
            for text, (ids, spans), answer in zip(texts, encoded, answers, strict=True)
        ]

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """Not offered: a one-line :class:`~weatkit.errors.ModelError`."""
        raise ModelError(
            f"{self.spec}: the vllm backend gives no embeddings; use hf:{self.spec.model}, or "
            "an openai: server that serves them"
        )

    # -- tokens ---------------------------------------------------------------------------------

    def _encode(self, texts: Sequence[str]) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """``(prompt ids with the start token, spans of the text's tokens)`` per text."""
        if isinstance(texts, str):
            raise ModelError("give a list of texts, not one string")
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise ModelError(f"text {i} is empty or not text: {text!r}")
        if not texts:
            return []
        enc = self.tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True)
        start = [] if self.start_id is None else [self.start_id]
        out = []
        for i, (ids, spans) in enumerate(zip(enc["input_ids"], enc["offset_mapping"], strict=True)):
            if not ids:
                raise ModelError(f"text {i} gives no token: {texts[i]!r}")
            full = start + [int(x) for x in ids]
            if self.max_length is not None and len(full) > self.max_length:
                raise ModelError(
                    f"text {i} is {len(full)} tokens long; {self.spec.model} takes "
                    f"{self.max_length}: {texts[i][:60]!r}"
                )
            out.append((full, [(int(a), int(b)) for a, b in spans]))
        return out

    def _token_logprobs(
        self, text: str, ids: list[int], spans: list[tuple[int, int]], answer: Any
    ) -> TokenLogprobs:
        """The text's tokens and their entries of ``answer.prompt_logprobs`` (the start token's
        position left out; NaN for a first token without one)."""
        rows = answer.prompt_logprobs
        if rows is None or len(rows) != len(ids):
            raise ModelError(
                f"{self.spec}: vLLM gave no prompt log-probabilities for {len(ids)} prompt tokens"
            )
        values = [
            math.nan if j == 0 or rows[j] is None else float(rows[j][ids[j]].logprob)
            for j in range(len(ids))
        ]
        first = 0 if self.start_id is None else 1
        real = ids[first:]
        return TokenLogprobs(
            text,
            tuple(self.tokenizer.convert_ids_to_tokens(real)),
            tuple(spans),
            np.asarray(values[first:], dtype=np.float64),
        )


def make_scorer(spec: ModelSpec, options: object | None = None) -> VllmScorer:
    """The registry's entry point: :class:`VllmScorer` of ``spec`` under ``options`` (a
    :class:`~weatkit.models.options.LoadOptions`, or any object with its fields, such as a
    command's :class:`~weatkit.embeddings.contextual.ContextualOptions`; None for the
    defaults)."""
    return VllmScorer(spec, options)
