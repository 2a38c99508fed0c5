"""The ``hf`` backend: a Hugging Face model in this process, behind :class:`~weatkit.scoring.base.
Scorer`.

The model is the process's shared :class:`~weatkit.models.handle.ModelHandle`
(:func:`weatkit.models.pool.get_model`), so a run that also takes word vectors or masked-LM
scores from it loads its weights once.

**Causal log-probabilities** (:meth:`HfScorer.causal_logprobs`). A text is tokenised and put
after its start (``start``: BOS else EOS, or as the tokenizer encodes it) by
:func:`weatkit.scoring.tokens.encode_causal`. Then, for the input ``s_1 … s_k w_1 … w_n``
(``s`` the start tokens)::

    logprobs[i] = log softmax(logits[k + i − 1])[w_i]

Each value is ``log softmax(z)[w_i]`` of the logits ``z`` at position ``k + i − 1``, in float32
(logits of a float16/bfloat16 model are upcast a chunk of positions at a time), stored as
float64; the LM head runs at those positions only, not at padding nor at the last position
(:meth:`weatkit.models.handle.ModelHandle.token_log_probs`). The texts run in right-padded
batches sorted by length (:func:`weatkit.models.batching.run_batches`) with an attention mask;
padding is never attended, so a value does not depend on its batch beyond the last bits of
float32 kernels. Texts longer than the model takes are a
:class:`~weatkit.errors.TextTooLongError` naming all of them.

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
from weatkit.scoring.base import DEFAULT_START, TokenLogprobs
from weatkit.scoring.spec import ModelSpec
from weatkit.scoring.tokens import Encoded, check_texts, encode_causal

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
        batch_size: texts per forward pass (the options' ``batch_size``; ``auto``: the largest
            that fits, :func:`weatkit.models.batching.run_batches`).
    """

    def __init__(self, spec: ModelSpec, options: Any = None) -> None:
        self.spec = spec
        self.handle: ModelHandle = get_model(spec.model, options)
        self.identity = json.dumps(self.handle.identity, sort_keys=True, default=str)
        self.causal = self.handle.lm_kind() == "glm"
        self.capabilities = frozenset({"causal", "embed"} if self.causal else {"embed"})
        self.batch_size: int | str = getattr(options, "batch_size", DEFAULT_BATCH_SIZE)

    def __repr__(self) -> str:
        return f"HfScorer({str(self.spec)!r})"

    # -- encoding -------------------------------------------------------------------------------

    def _encode_causal(self, texts: Sequence[str], start: str = DEFAULT_START) -> list[Encoded]:
        return encode_causal(self.handle.tokenizer, texts, start, model=self.spec.model,
                             limit=self.handle.max_length)  # fmt: skip

    # -- Scorer ---------------------------------------------------------------------------------

    def causal_logprobs(
        self,
        texts: Sequence[str],
        *,
        show_progress: bool | None = None,
        start: str = DEFAULT_START,
    ) -> list[TokenLogprobs]:
        """``log P(w_i | s, w_<i)`` of every token of each text (module docstring)."""
        if not self.causal:
            raise ModelError(
                f"{self.spec.model} is a masked LM: it gives no causal token log-probabilities"
            )
        encoded = self._encode_causal(texts, start)
        if not encoded:
            return []
        width = max(len(ids) for ids, _, _ in encoded)
        handle = self.handle
        values, _ = run_batches(
            [ids for ids, _, _ in encoded],
            lambda batch: _causal_batch(handle, batch, width),
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
        for text, (ids, spans, lead), row in zip(texts, encoded, values, strict=True):
            out.append(
                TokenLogprobs(
                    text,
                    tuple(tok.convert_ids_to_tokens(ids[lead:])),
                    tuple(spans),
                    np.asarray(row[lead : len(ids)], dtype=np.float64),
                )
            )
        return out

    def embed(self, texts: Sequence[str], *, show_progress: bool | None = None) -> np.ndarray:
        """Mean last hidden state over each text's non-special tokens (module docstring),
        float32 ``(len(texts), dim)``."""
        if self.causal:
            rows = [(ids, [False] * lead + [True] * (len(ids) - lead))
                    for ids, _, lead in self._encode_causal(texts)]  # fmt: skip
        else:
            check_texts(texts)
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


def _causal_batch(handle: ModelHandle, batch: Sequence[list[int]], width: int) -> np.ndarray:
    """``(len(batch), width)`` float64: column j of row r holds ``log P(ids_j | ids_<j)`` of its
    input, NaN at j = 0 and after the input's end."""
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
    out[rows.numpy(), cols.numpy() + 1] = values.double().cpu().numpy()
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
