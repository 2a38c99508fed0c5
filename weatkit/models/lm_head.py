"""Logits of an LM head at chosen positions only: the base network, then the model's own head
modules on the hidden states of those positions.

A masked- or causal-LM head model computes its logits position by position from the base
network's last hidden states ``H = base(x)`` (``b × t × d``)::

    logits[b, p] = head(H[b, p])

(``head``: a dense transform, an activation and a norm, then the decoder ``d → |V|``; a causal
LM's final norm is inside its base). A measure that reads ``logits[rows[i], cols[i]]`` at n
(row, position) pairs needs the head there only: ``head(H[rows, cols])``, n × |V| instead of
b × t × |V| values. The decoder costs ``d · |V|`` multiply-adds per position: 384 × 30,522 ≈
11.7 M for a 6-layer, 384-wide BERT, more than its whole encoder (≈ 10.6 M), and 768 × 250,002
≈ 192 M for XLM-R base. A masked-LM PLL reads one position of each masked copy; a causal LM's
sentence score reads every position but the last, and no padding.

**Known heads** (:data:`MASKED_HEADS`, :data:`CAUSAL_HEADS`, by the network's class name) are
called through the model's own modules, never re-implemented: ``BertForMaskedLM.cls``,
``RobertaForMaskedLM.lm_head`` (XLM-R, CamemBERT), ``DebertaV2ForMaskedLM.cls`` or
``.lm_predictions``, ``AlbertForMaskedLM.predictions``, DistilBERT's ``vocab_transform →
activation → vocab_layer_norm → vocab_projector``, ELECTRA's generator head; a causal LM's
``get_output_embeddings()`` (``lm_head``) on its ``base_model``. The first time a network is used
this way (:meth:`HeadSplit.verified`), one input goes through both the split and the whole
network, and the split is kept only if it gives the full logits (to float rounding). Any other
network (or a split that fails that check) gets the full logits, picked at the same positions,
with one note on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from weatkit import progress as _progress

#: At most this many logits (positions × vocabulary) exist at a time when log-probabilities
#: are taken chunk by chunk (64 MiB of float32): memory stays flat however many positions.
CHUNK_LOGITS = 2**24
#: How close the split's logits must be to the full ones, relative to the largest |logit|:
#: float32 models differ by a few ulps (different matrix shapes), half-precision ones by one
#: bf16 ulp (2⁻⁸).
CHECK_RTOL = {torch.float32: 1e-4, torch.float64: 1e-9}
CHECK_RTOL_HALF = 1e-2

Head = Callable[[torch.Tensor], torch.Tensor]


def _bert(m: Any) -> tuple[Any, Head]:
    return m.bert, m.cls


def _roberta(m: Any) -> tuple[Any, Head]:
    return m.roberta, m.lm_head


def _deberta(m: Any) -> tuple[Any, Head]:
    if getattr(m, "legacy", True):
        return m.deberta, m.cls
    return m.deberta, lambda h: m.lm_predictions(h, m.deberta.embeddings.word_embeddings)


def _albert(m: Any) -> tuple[Any, Head]:
    return m.albert, m.predictions


def _distilbert(m: Any) -> tuple[Any, Head]:
    return m.distilbert, lambda h: m.vocab_projector(
        m.vocab_layer_norm(m.activation(m.vocab_transform(h)))
    )


def _electra(m: Any) -> tuple[Any, Head]:
    return m.electra, lambda h: m.generator_lm_head(m.generator_predictions(h))


def _causal(m: Any) -> tuple[Any, Head]:
    return m.base_model, m.get_output_embeddings()


#: Masked-LM networks whose logits are ``head(base(x)[0])``, by class name.
MASKED_HEADS: dict[str, Callable[[Any], tuple[Any, Head]]] = {
    "BertForMaskedLM": _bert,
    "RobertaForMaskedLM": _roberta,
    "XLMRobertaForMaskedLM": _roberta,
    "CamembertForMaskedLM": _roberta,
    "DebertaForMaskedLM": _deberta,
    "DebertaV2ForMaskedLM": _deberta,
    "AlbertForMaskedLM": _albert,
    "DistilBertForMaskedLM": _distilbert,
    "ElectraForMaskedLM": _electra,
}
#: Causal-LM networks whose logits are ``lm_head(base_model(x)[0])`` (final norm inside the base;
#: no logit scaling or soft-capping after the head), by class name.
CAUSAL_HEADS: dict[str, Callable[[Any], tuple[Any, Head]]] = dict.fromkeys(
    (
        "GPT2LMHeadModel", "GPTNeoForCausalLM", "GPTNeoXForCausalLM", "GPTJForCausalLM",
        "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
        "XGLMForCausalLM", "OPTForCausalLM", "BloomForCausalLM", "FalconForCausalLM",
        "PhiForCausalLM", "Phi3ForCausalLM",
    ),
    _causal,
)  # fmt: skip


@dataclass(repr=False)
class HeadSplit:
    """A head model as its base network and its head (module docstring)."""

    base: Any
    head: Head

    @classmethod
    def of(cls, network: Any, causal: bool) -> HeadSplit | None:
        """The split of a known network; None for any other."""
        known = (CAUSAL_HEADS if causal else MASKED_HEADS).get(type(network).__name__)
        if known is None:
            return None
        try:
            base, head = known(network)
        except AttributeError:  # another version of the class, laid out otherwise
            return None
        return cls(base, head)

    def hidden(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **kwargs: Any) -> Any:
        """The base network's output (``[0]``: the last hidden states)."""
        return self.base(input_ids=input_ids, attention_mask=attention_mask, **kwargs)

    def verified(
        self,
        network: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        kwargs: dict[str, Any],
    ) -> bool:
        """Whether the split gives ``network``'s logits on the first row of this input."""
        ids, mask = input_ids[:1], attention_mask[:1]
        full = network(input_ids=ids, attention_mask=mask, **kwargs).logits[0]
        hidden = self.hidden(ids, mask, **kwargs)[0][0]
        real = mask[0].to(hidden.device).bool()
        part = self.head(hidden[real]).to(full.device)
        full = full[real.to(full.device)]
        if part.shape != full.shape:
            return False
        rtol = CHECK_RTOL.get(full.dtype, CHECK_RTOL_HALF)
        scale = max(1.0, float(full.float().abs().max()))
        return bool(torch.allclose(part.float(), full.float(), rtol=rtol, atol=rtol * scale))


def note_full_logits(model: str, network: Any) -> None:
    """The one note of a network whose logits are computed in full."""
    _progress.note(
        f"{model}: no head-only scoring for {type(network).__name__}; computing the full "
        "logits and reading the positions needed"
    )


@dataclass
class PickedLogits:
    """``logits[rows[i], cols[i]]`` of one forward pass, made when asked, in chunks.

    Either ``hidden`` (n × d, the base network's last hidden states at the positions) with the
    ``head`` to apply to them, or the ``logits`` already picked from the full ones (n × |V|).
    """

    hidden: torch.Tensor | None = None
    head: Head | None = None
    logits: torch.Tensor | None = None

    def __len__(self) -> int:
        source = self.hidden if self.hidden is not None else self.logits
        assert source is not None
        return int(source.shape[0])

    def chunks(self, vocab_size: int | None) -> Iterator[tuple[slice, torch.Tensor]]:
        """``(positions, logits there)`` in the weights' dtype, at most :data:`CHUNK_LOGITS`
        values at a time (one chunk when ``vocab_size`` is unknown)."""
        step = max(1, CHUNK_LOGITS // vocab_size) if vocab_size else max(1, len(self))
        for start in range(0, len(self), step):
            where = slice(start, start + step)
            if self.logits is not None:
                yield where, self.logits[where]
            else:
                assert self.hidden is not None and self.head is not None
                yield where, self.head(self.hidden[where])

    def all(self) -> torch.Tensor:
        """Every picked position's logits at once (n × |V|)."""
        if self.logits is not None:
            return self.logits
        assert self.hidden is not None and self.head is not None
        return self.head(self.hidden)
