"""The ``hf`` backend: a Hugging Face model in this process, behind :class:`~weatkit.scoring.base.
Scorer`.

The model is the process's shared :class:`~weatkit.models.handle.ModelHandle`
(:func:`weatkit.models.pool.get_model`), so a run that also takes word vectors or masked-LM
scores from it loads its weights once.

**Causal log-probabilities** (:meth:`HfScorer.causal_logprobs`). A text is tokenised *without*
special tokens by the fast tokenizer (``return_offsets_mapping`` gives each token's character
span), and a start token is put in front of it: the tokenizer's BOS, else its EOS (GPT-2's and
Qwen2's ``<|endoftext|>``; lm-evaluation-harness's prefix token for a ``loglikelihood`` with an
empty context, and :mod:`weatkit.stereoset.scoring`'s convention). So the first real token has a
conditional too::

    logprobs[i] = log softmax(logits[i])[w_{i+1}],   input  s w_1 … w_n   (s the start token)

A tokenizer with neither BOS nor EOS gives NaN for ``w_1`` (the :class:`TokenLogprobs`
convention). A tokenizer that adds a BOS itself (Llama) gets it once: it is asked for no special
tokens. Each value is ``log softmax(z)[w_{i+1}]`` of the logits ``z`` at position ``i``, in
float32 (logits of a float16/bfloat16 model are upcast a chunk of positions at a time), stored
as float64; the LM head runs at those positions only, not at padding
(:meth:`weatkit.models.handle.ModelHandle.token_log_probs`). The texts run in right-padded
batches sorted by length (:func:`weatkit.models.batching.run_batches`) with an attention mask;
padding is never attended, so a value does not depend on its batch beyond the last bits of
float32 kernels.

**Embeddings** (:meth:`HfScorer.embed`): the sentence embedding of an hf model is the mean of
its last hidden state over the text's non-special tokens, ``e(t) = (1/|C|) Σ_{j∈C} h_L[j]``: a
masked LM's input carries its special tokens (``[CLS] … [SEP]``) and they are left out of C (as
:class:`weatkit.sentence.masked_lm.MaskedLM`'s embedding, which MBE weights its pairs with); a
causal LM's input is the one above, start token first, and C is every token after it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from weatkit.errors import ModelError
from weatkit.models.batching import ROW_TOKENS, run_batches
from weatkit.models.handle import ModelHandle, padded
from weatkit.models.pool import get_model
from weatkit.scoring.base import TokenLogprobs
from weatkit.scoring.spec import ModelSpec

#: Texts per forward pass without options that say otherwise.
DEFAULT_BATCH_SIZE = 64


class HfScorer:
    """A Hugging Face model in process (module docstring).

    Attributes:
        spec: the model spec.
        identity: the handle's identity as sorted JSON (commit of a hub model, content hash of a
            directory).
        capabilities: ``causal`` and ``embed`` for a causal LM, ``embed`` for the rest.
        handle: the shared :class:`~weatkit.models.handle.ModelHandle`.
        batch_size: texts per forward pass (the options' ``batch_size``).
    """

    def __init__(self, spec: ModelSpec, options: Any = None) -> None:
        self.spec = spec
        self.handle: ModelHandle = get_model(spec.model, options)
        self.identity = json.dumps(self.handle.identity, sort_keys=True, default=str)
        self.causal = self.handle.lm_kind() == "glm"
        self.capabilities = frozenset({"causal", "embed"} if self.causal else {"embed"})
        self.batch_size = int(getattr(options, "batch_size", DEFAULT_BATCH_SIZE))

    def __repr__(self) -> str:
        return f"HfScorer({str(self.spec)!r})"

    # -- encoding -------------------------------------------------------------------------------

    def _tokenizer(self) -> Any:
        tok = self.handle.tokenizer
        if not getattr(tok, "is_fast", False):
            raise ModelError(
                f"{self.spec.model}: token spans need a fast tokenizer (offsets); this one is slow"
            )
        return tok

    @property
    def start_id(self) -> int | None:
        """The token put before every text of a causal LM: BOS, else EOS, else none."""
        tok = self.handle.tokenizer
        for candidate in (tok.bos_token_id, tok.eos_token_id):
            if candidate is not None:
                return int(candidate)
        return None

    def _encode_causal(self, texts: Sequence[str]) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """``(ids with the start token, spans of the text's tokens)`` per text, length-checked."""
        _check_texts(texts)
        if not texts:
            return []
        tok = self._tokenizer()
        enc = tok(list(texts), add_special_tokens=False, return_offsets_mapping=True)
        start = self.start_id
        limit = self.handle.max_length
        out = []
        for i, (ids, spans) in enumerate(zip(enc["input_ids"], enc["offset_mapping"], strict=True)):
            if not ids:
                raise ModelError(f"text {i} gives no token: {texts[i]!r}")
            full = ([start] if start is not None else []) + [int(x) for x in ids]
            if limit is not None and len(full) > limit:
                raise ModelError(
                    f"text {i} is {len(full)} tokens long; {self.spec.model} takes {limit}: "
                    f"{texts[i][:60]!r}"
                )
            out.append((full, [(int(a), int(b)) for a, b in spans]))
        return out

    # -- Scorer ---------------------------------------------------------------------------------

    def causal_logprobs(
        self, texts: Sequence[str], *, show_progress: bool | None = None
    ) -> list[TokenLogprobs]:
        """``log P(w_i | s, w_<i)`` of every token of each text (module docstring)."""
        if not self.causal:
            raise ModelError(
                f"{self.spec.model} is a masked LM: it gives no causal token log-probabilities"
            )
        encoded = self._encode_causal(texts)
        if not encoded:
            return []
        width = max(len(ids) for ids, _ in encoded)
        start = self.start_id is not None
        handle = self.handle
        values, _ = run_batches(
            [ids for ids, _ in encoded],
            lambda batch: _causal_batch(handle, batch, width, start),
            length=len,
            batch_size=self.batch_size,
            desc=f"token log-probabilities with {handle.short_name}",
            model_name=self.spec.model,
            device=handle.device,
            unit="text",
            show_progress=show_progress,
            row_tokens=ROW_TOKENS,
        )
        tok = handle.tokenizer
        out = []
        for text, (ids, spans), row in zip(texts, encoded, values, strict=True):
            real = ids[1:] if start else ids
            out.append(
                TokenLogprobs(
                    text,
                    tuple(tok.convert_ids_to_tokens(real)),
                    tuple(spans),
                    np.asarray(row[: len(real)], dtype=np.float64),
                )
            )
        return out

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """Mean last hidden state over each text's non-special tokens (module docstring),
        float32 ``(len(texts), dim)``."""
        if self.causal:
            rows = [(ids, [False] * (self.start_id is not None)) for ids, _ in
                    self._encode_causal(texts)]  # fmt: skip
            rows = [(ids, flags + [True] * (len(ids) - len(flags))) for ids, flags in rows]
        else:
            _check_texts(texts)
            enc = self.handle.tokenizer(list(texts), return_special_tokens_mask=True)
            rows = [
                ([int(x) for x in ids], [not s for s in special])
                for ids, special in zip(enc["input_ids"], enc["special_tokens_mask"], strict=True)
            ]
            for i, (_, content) in enumerate(rows):
                if not any(content):
                    raise ModelError(f"text {i} gives no token: {texts[i]!r}")
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        handle = self.handle
        values, _ = run_batches(
            rows,
            lambda batch: _embed_batch(handle, batch),
            length=lambda row: len(row[0]),
            batch_size=self.batch_size,
            desc=f"embeddings with {handle.short_name}",
            model_name=self.spec.model,
            device=handle.device,
            unit="text",
            show_progress=show_progress,
            row_tokens=ROW_TOKENS,
            action="encoding",
        )
        return values.astype(np.float32)


def make_scorer(spec: ModelSpec, options: Any = None) -> HfScorer:
    """The ``hf`` backend's :class:`HfScorer` of ``spec`` under ``options`` (a
    :class:`~weatkit.models.handle.LoadOptions`, or any object with its fields, such as
    :class:`~weatkit.embeddings.contextual.ContextualOptions`, whose ``batch_size`` is used too;
    None for the defaults)."""
    return HfScorer(spec, options)


def _check_texts(texts: Sequence[str]) -> None:
    if isinstance(texts, str):
        raise ModelError("give a list of texts, not one string")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ModelError(f"text {i} is empty or not text: {text!r}")


def _causal_batch(
    handle: ModelHandle, batch: Sequence[list[int]], width: int, start: bool
) -> np.ndarray:
    """``(len(batch), width)`` float64: row r holds ``log P(w_j | w_<j)`` of its text's tokens
    (NaN first when there is no start token), NaN after them."""
    ids, mask = padded(batch, handle.pad_id)
    # log P(w_j | w_<j) from the logits at position j − 1, at the positions that have a next
    # token only (no padding, not the last one)
    rows = torch.tensor(
        [r for r, row in enumerate(batch) for _ in range(len(row) - 1)], dtype=torch.long
    )
    cols = torch.tensor([j for row in batch for j in range(len(row) - 1)], dtype=torch.long)
    values, _ = handle.token_log_probs(
        "glm", input_ids=ids, attention_mask=mask, rows=rows, cols=cols, targets=ids[rows, cols + 1]
    )
    out = np.full((len(batch), width), np.nan)
    shift = int(not start)  # without a start token the first token has no conditional: NaN
    out[rows.numpy(), cols.numpy() + shift] = values.double().cpu().numpy()
    return out


def _embed_batch(handle: ModelHandle, batch: Sequence[tuple[list[int], list[bool]]]) -> np.ndarray:
    """Mean last hidden state over the flagged positions of each row (float32)."""
    ids, mask = padded([ids for ids, _ in batch], handle.pad_id)
    content = torch.zeros(ids.shape, dtype=torch.float32)
    for r, (_, flags) in enumerate(batch):
        content[r, : len(flags)] = torch.tensor(flags, dtype=torch.float32)
    hidden = handle.hidden_states(input_ids=ids, attention_mask=mask, layers=[-1])[0].float()
    with torch.inference_mode():
        weight = content.to(hidden.device)
        total = (hidden * weight[..., None]).sum(dim=1)
        return (total / weight.sum(dim=1, keepdim=True)).cpu().numpy()
