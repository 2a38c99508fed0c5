"""The ``hf`` backend: a Hugging Face model in this process, behind :class:`~weatkit.scoring.base.
Scorer`.

The model is the process's shared :class:`~weatkit.models.handle.ModelHandle`
(:func:`weatkit.models.pool.get_model`), so a run that also takes word vectors or masked-LM
scores from it loads its weights once.

**Causal log-probabilities** (:meth:`HfScorer.causal_logprobs`). A text is tokenised and put
after its start (``start``: BOS else EOS, as the tokenizer encodes it, or none) by
:func:`weatkit.scoring.tokens.encode_causal`. Then, for the input ``s_1 … s_k w_1 … w_n``
(``s`` the start tokens)::

    logprobs[i] = log softmax(logits[k + i − 1])[w_i]

and, with no start token (``k = 0``: ``start="none"``, or a tokenizer without BOS and EOS),
``logprobs[1]`` is NaN (no conditional).

Each value is ``log softmax(z)[w_i]`` of the logits ``z`` at position ``k + i − 1``, in float32
(logits of a float16/bfloat16 model are upcast a chunk of positions at a time), stored as
float64; the LM head runs at those positions only, not at padding nor at the last position
(:meth:`weatkit.models.handle.ModelHandle.token_log_probs`), and with ``read_from`` not before
the first token read either (GEST reads its word only: one position of ``"…", he``). The
texts run in right-padded batches sorted by length (:func:`weatkit.models.batching.run_batches`)
with an attention mask; padding is never attended, so a value does not depend on its batch
beyond the last bits of float32 kernels. Texts whose ids differ only in their last token
(GEST's completed templates ``"…", he`` and ``"…", she``) share one row: the logits at a
position depend only on the tokens up to it, so the last position of the shared prefix gives
each text's last value. Texts longer than the model takes are a
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
from weatkit.scoring.base import DEFAULT_START, OnScored, TokenLogprobs
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
        read_from: Sequence[int] | None = None,
        on_scored: OnScored | None = None,
    ) -> list[TokenLogprobs]:
        """``log P(w_i | s, w_<i)`` of every token of each text (module docstring); with
        ``read_from``, of the tokens whose span ends after each text's offset (NaN before:
        the LM head runs where read only). ``on_scored`` gets the texts of each batch as it is
        done (:meth:`weatkit.scoring.base.Scorer.causal_logprobs`)."""
        if not self.causal:
            raise ModelError(
                f"{self.spec.model} is a masked LM: it gives no causal token log-probabilities"
            )
        encoded = self._encode_causal(texts, start)
        if not encoded:
            return []
        firsts = (
            [1] * len(encoded)
            if read_from is None
            else [_first_read(e, offset) for e, offset in zip(encoded, read_from, strict=True)]
        )
        # texts that differ only in their last token (GEST's "…, he" / "…, she") share one row:
        # the logits at a position depend on the tokens up to it only (causal attention)
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, (ids, _, _) in enumerate(encoded):
            if len(ids) > 1:
                groups.setdefault(tuple(ids[:-1]), []).append(i)
        items = [(list(prefix), [encoded[i][0][-1] for i in members],
                  min(firsts[i] for i in members))
                 for prefix, members in groups.items()]  # fmt: skip
        width = max(len(ids) for ids, _, _ in encoded)
        k = max((len(lasts) for _, lasts, _ in items), default=0)
        handle = self.handle
        tok = handle.tokenizer
        out: list[TokenLogprobs | None] = [None] * len(texts)

        def keep(indices: list[int], rows: Sequence[np.ndarray]) -> None:
            scored = []
            for i, row in zip(indices, rows, strict=True):
                ids, spans, lead = encoded[i]
                out[i] = TokenLogprobs(
                    texts[i],
                    tuple(tok.convert_ids_to_tokens(ids[lead:])),
                    tuple(spans),
                    np.asarray(row[lead:], dtype=np.float64),
                )
                scored.append(out[i])
            if on_scored is not None and indices:
                on_scored(indices, scored)

        # one token and no start: no conditional, no forward pass
        alone = [i for i, (ids, _, _) in enumerate(encoded) if len(ids) <= 1]
        keep(alone, [np.full(len(encoded[i][0]), np.nan) for i in alone])
        members = list(groups.values())

        def batch_done(batch: list[int], values: np.ndarray) -> None:
            """The texts of the batch's items (a shared prefix: one per last token)."""
            indices, rows = [], []
            for g, row in zip(batch, values, strict=True):
                n = len(encoded[members[g][0]][0]) - 1
                for m, i in enumerate(members[g]):
                    indices.append(i)
                    rows.append(np.append(row[:n], row[width + m]))
            keep(indices, rows)

        if items:
            run_batches(
                items,
                lambda batch: _causal_batch(handle, batch, width, k),
                length=lambda item: len(item[0]),
                batch_size=self.batch_size,
                desc=f"token log-probabilities with {handle.short_name}",
                model_name=self.spec.model,
                device=handle.device,
                unit="text",
                show_progress=show_progress,
                row_tokens=ROW_TOKENS,
                on_batch=batch_done,
            )
        done = [scored for scored in out if scored is not None]
        if len(done) != len(texts):  # every text is in one batch, or alone
            raise ModelError(f"{self.spec}: {len(texts) - len(done)} texts were not scored")
        return done

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


def _first_read(encoded: Encoded, offset: int) -> int:
    """The position in ``encoded``'s ids of its first token whose span ends after ``offset``
    (the length when none does), 1 at least (position 0 has no conditional)."""
    _, spans, lead = encoded
    index = next((i for i, (_, end) in enumerate(spans) if end > offset), len(spans))
    return max(lead + index, 1)


def _causal_batch(
    handle: ModelHandle, batch: Sequence[tuple[list[int], list[int], int]], width: int, k: int
) -> np.ndarray:
    """``(len(batch), width + k)`` float64 for items ``(prefix, last tokens, first)``: column
    first ≤ j < len(prefix) of row r holds ``log P(prefix_j | prefix_<j)``, column width + m
    ``log P(last_m | prefix)``; NaN elsewhere."""
    ids, mask = padded([prefix for prefix, _, _ in batch], handle.pad_id)
    # log P(w_j | w_<j) from the logits at position j − 1, at the positions read only
    triples = [(r, j, prefix[j + 1]) for r, (prefix, _, first) in enumerate(batch)
               for j in range(first - 1, len(prefix) - 1)]  # fmt: skip
    n_inner = len(triples)
    triples += [(r, len(prefix) - 1, last) for r, (prefix, lasts, _) in enumerate(batch)
                for last in lasts]  # fmt: skip
    rows, cols, targets = (torch.tensor(x, dtype=torch.long) for x in zip(*triples, strict=True))
    values, _ = handle.token_log_probs(
        "glm", input_ids=ids, attention_mask=mask, rows=rows, cols=cols, targets=targets
    )
    out = np.full((len(batch), width + k), np.nan)
    inner = values[:n_inner].double().cpu().numpy()
    out[rows[:n_inner].numpy(), cols[:n_inner].numpy() + 1] = inner
    members = [(r, width + m) for r, (_, lasts, _) in enumerate(batch) for m in range(len(lasts))]
    last_r, last_c = (np.array(x, dtype=np.int64) for x in zip(*members, strict=True))
    out[last_r, last_c] = values[n_inner:].double().cpu().numpy()
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
