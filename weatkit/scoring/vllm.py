"""The ``vllm`` backend: vLLM's offline engine (``vllm.LLM``) with prompt log-probabilities.

A text is tokenised here, as the ``hf`` backend tokenises it
(:func:`weatkit.scoring.tokens.encode_causal`: the model's fast Hugging Face tokenizer, character
spans from ``return_offsets_mapping``, the start tokens ``s`` of ``start``: BOS else EOS, the
tokenizer's own, or none). vLLM gets the ids as a token prompt (``{"prompt_token_ids": ids}``: it
neither tokenises nor adds a BOS) with ``SamplingParams(max_tokens=1, prompt_logprobs=0)``, and its
``RequestOutput.prompt_logprobs`` holds, for every prompt position ``j ≥ 1``, a mapping from token
ids to ``Logprob`` objects that always has the prompt's own token (and the ``0`` most likely
others); position 0 has None. So, input ``s_1 … s_k w_1 … w_n``::

    logprobs[i] = prompt_logprobs[k + i − 1][w_i].logprob = log P(w_i | s, w_<i),   i = 1 … n

the same conditionals as the ``hf`` backend's, computed by vLLM's kernels. With no start token
(``k = 0``: ``start="none"``, or a tokenizer with neither BOS nor EOS) ``w_1`` sits at position 0
and gets NaN (the :class:`~weatkit.scoring.base.TokenLogprobs` convention). One token is
generated per text (vLLM needs ``max_tokens ≥ 1``) and ignored.

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
from weatkit.scoring.base import DEFAULT_START, OnScored, TokenLogprobs
from weatkit.scoring.spec import ModelSpec
from weatkit.scoring.tokens import Encoded, encode_causal, fast_tokenizer

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
        fast_tokenizer(self.tokenizer, str(spec))
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
        self,
        texts: Sequence[str],
        *,
        show_progress: bool | None = None,
        start: str = DEFAULT_START,
        read_from: Sequence[int] | None = None,
        on_scored: OnScored | None = None,
    ) -> list[TokenLogprobs]:
        """``log P(w_i | s, w_<i)`` of every token of each text (module docstring; vLLM scores
        every prompt token, so ``read_from`` changes nothing). ``on_scored`` gets each
        :data:`TEXTS_PER_CALL` texts as their engine call returns
        (:meth:`weatkit.scoring.base.Scorer.causal_logprobs`)."""
        encoded = encode_causal(self.tokenizer, texts, start, model=self.spec.model,
                                limit=self.max_length)  # fmt: skip
        if not encoded:
            return []
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=0.0)
        llm = self._engine()
        out: list[TokenLogprobs] = []
        name = self.spec.short_name
        with progress(
            total=len(encoded), desc=f"token log-probabilities with {name}", unit="text",
            show=show_progress,
        ) as bar:  # fmt: skip
            for first in range(0, len(encoded), TEXTS_PER_CALL):
                chunk = encoded[first : first + TEXTS_PER_CALL]
                prompts = [{"prompt_token_ids": ids} for ids, _, _ in chunk]
                answers = llm.generate(prompts, params, use_tqdm=False)
                if len(answers) != len(chunk):
                    raise ModelError(
                        f"{self.spec}: {len(chunk)} texts sent, {len(answers)} answers"
                    )
                scored = [
                    self._token_logprobs(text, row, answer)
                    for text, row, answer in zip(
                        texts[first : first + len(chunk)], chunk, answers, strict=True
                    )
                ]
                out += scored
                if on_scored is not None:
                    on_scored(list(range(first, first + len(chunk))), scored)
                bar.update(len(chunk))
        return out

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """Not offered: a one-line :class:`~weatkit.errors.ModelError`."""
        raise ModelError(
            f"{self.spec}: the vllm backend gives no embeddings; use hf:{self.spec.model}, or "
            "an openai: server that serves them"
        )

    # -- tokens ---------------------------------------------------------------------------------

    def _token_logprobs(self, text: str, row: Encoded, answer: Any) -> TokenLogprobs:
        """The text's tokens and their entries of ``answer.prompt_logprobs`` (the start tokens'
        positions left out; NaN for a first token without one)."""
        ids, spans, lead = row
        rows = answer.prompt_logprobs
        if rows is None or len(rows) != len(ids):
            raise ModelError(
                f"{self.spec}: vLLM gave no prompt log-probabilities for {len(ids)} prompt tokens"
            )
        values = [
            math.nan if j == 0 or rows[j] is None else float(rows[j][ids[j]].logprob)
            for j in range(lead, len(ids))
        ]
        return TokenLogprobs(
            text,
            tuple(self.tokenizer.convert_ids_to_tokens(ids[lead:])),
            tuple(spans),
            np.asarray(values, dtype=np.float64),
        )


def make_scorer(spec: ModelSpec, options: object | None = None) -> VllmScorer:
    """The registry's entry point: :class:`VllmScorer` of ``spec`` under ``options`` (a
    :class:`~weatkit.models.options.LoadOptions`, or any object with its fields, such as a
    command's :class:`~weatkit.embeddings.contextual.ContextualOptions`; None for the
    defaults)."""
    return VllmScorer(spec, options)
