"""One loaded Hugging Face model: config, tokenizer and weights, loaded once and shared.

A :class:`ModelHandle` stands for one model (a hub id or a local directory) under one set of
loading options (:class:`~weatkit.models.options.LoadOptions`: revision, dtype, device,
``allow_pickle``, ``trust_remote_code``). It reads the config at once (cheap) and resolves the
identity of the weights, which every cache key uses: the commit a hub revision resolves to (never
the moving ``main``), or a content hash of a local directory
(:func:`weatkit.models.hub.model_identity`).
The tokenizer and the weights are loaded on first need and kept.

It gives three things, each from one right-padded batch ``input_ids`` / ``attention_mask``:

* hidden states ``h_L`` at chosen layers (:meth:`ModelHandle.hidden_states`);
* masked-LM log-probabilities ``log softmax(logits[b, p])`` at chosen (row, position) pairs of the
  masked-LM head (:meth:`ModelHandle.log_probs` with ``head="mlm"``), or only those of chosen
  tokens (:meth:`ModelHandle.token_log_probs`);
* causal-LM log-probabilities, the same with ``head="glm"`` (``logits[b, p]`` is then the
  distribution of the token after position ``p``).

The LM head runs only at the positions asked for, on the base network's hidden states there,
for the architectures :mod:`weatkit.models.lm_head` knows (checked once per network against the
full logits); others compute the full logits and pick those positions.

One set of weights per handle: a checkpoint saved with a masked- or causal-LM head
(``config.architectures``, e.g. ``BertForMaskedLM``) is loaded with that head, and its hidden
states come from the head model's base network (``network.base_model``): the same weights and the
same computation as the bare ``AutoModel``, so the vectors are identical and a run that needs
both vectors and LM scores from one model loads it once. A checkpoint without a head (or an
encoder-decoder model, whose vectors come from its encoder) loads the bare network for hidden
states; asking it later for a head loads the head model, which then replaces the bare one.
Handles are shared through :func:`weatkit.models.pool.get_model`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from weatkit.engine.device import resolve_device
from weatkit.errors import ModelError
from weatkit.models.hub import (
    UntrainedHeadError,
    checkpoint_head,
    count_layers,
    is_decoder_only,
    load_config,
    load_network,
    load_tokenizer,
    max_length,
    model_identity,
    pad_id,
)
from weatkit.models.lm_head import HeadSplit, PickedLogits, note_full_logits
from weatkit.models.options import LoadOptions

#: LM heads: ``mlm`` = ``AutoModelForMaskedLM``, ``glm`` = ``AutoModelForCausalLM``.
HEADS = ("mlm", "glm")


class ModelHandle:
    """One model under one set of :class:`LoadOptions`; tokenizer and weights loaded once.

    Attributes:
        model_name: the hub id or directory as given.
        options: the loading options (``revision`` as given).
        config: the model's ``AutoConfig``.
        identity: what identifies the weights in cache keys: ``{"model", "revision": commit}``
            for a hub model, ``{"model": absolute path, "content": file hashes}`` for a directory,
            and ``"quantization"`` when the weights are quantized (the dtype is in every key).
        n_loads: how many times weights were read from disk (a head replacing the bare network
            counts again).

    Example:
        >>> handle = ModelHandle("bert-base-cased")  # doctest: +SKIP
        >>> enc = handle.tokenizer(["She is a nurse."], return_tensors="pt")  # doctest: +SKIP
        >>> handle.hidden_states(**enc, layers=[0, -1]).shape  # doctest: +SKIP
        torch.Size([2, 1, 7, 768])
    """

    def __init__(self, model: str, options: LoadOptions | None = None) -> None:
        self.model_name = str(model)
        self.options = options or LoadOptions()
        self.options.validate()
        self.options.check_installed()
        self.config = load_config(self.model_name, self.options)
        self.identity = model_identity(self.model_name, self.config, self.options)
        # tokenizer and weights come from the commit the config was read from
        commit = self.identity.get("revision")
        self._resolved = replace(self.options, revision=commit) if commit else self.options
        self.n_loads = 0
        self._tokenizer: Any = None
        self._prefix_tokenizer: Any = None
        self._networks: dict[str | None, Any] = {}
        #: per head: its verified split, or None (full logits); absent until first used
        self._splits: dict[str, HeadSplit | None] = {}
        self._device: torch.device | None = None

    def __repr__(self) -> str:
        return f"ModelHandle({self.model_name!r}, {self.options!r})"

    # -- description ----------------------------------------------------------------------------

    @property
    def short_name(self) -> str:
        """The last part of the model's name (for progress bars)."""
        return Path(self.model_name).name or self.model_name

    @property
    def decoder_only(self) -> bool:
        """True for causal-LM-only architectures (GPT-2, XGLM, Llama)."""
        return is_decoder_only(self.config)

    def lm_kind(self, kind: str | None = None) -> str:
        """``kind`` checked (``"mlm"`` or ``"glm"``); None decides from the config: decoder-only
        architectures are causal LMs (``glm``), the rest masked LMs (``mlm``)."""
        if kind is None:
            return "glm" if self.decoder_only else "mlm"
        if kind not in HEADS:
            raise ModelError(f"unknown model kind {kind!r}: choose mlm or glm")
        return kind

    @property
    def n_layers(self) -> int:
        """Transformer layers (the encoder's for encoder-decoder models)."""
        return count_layers(self.config)

    @property
    def device(self) -> torch.device:
        """The device the weights go to (``auto`` resolved once)."""
        if self._device is None:
            self._device = resolve_device(self.options.device)
        return self._device

    # -- tokenizers -----------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        """The model's ``AutoTokenizer``, loaded on first use."""
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.model_name, self._resolved)
        return self._tokenizer

    @property
    def tokenizer_loaded(self) -> bool:
        return self._tokenizer is not None

    def prefix_space_tokenizer(self) -> Any:
        """The tokenizer loaded with ``add_prefix_space=True`` (``he`` → ``Ġhe`` for byte-level
        BPE); the plain tokenizer when it has no such option."""
        if self._prefix_tokenizer is None:
            try:
                self._prefix_tokenizer = load_tokenizer(
                    self.model_name, self._resolved, add_prefix_space=True
                )
            except (ModelError, TypeError):
                self._prefix_tokenizer = self.tokenizer
        return self._prefix_tokenizer

    @property
    def max_length(self) -> int | None:
        """The longest input the model takes, special tokens included (None when unknown)."""
        return max_length(self.tokenizer, self.config)

    @property
    def pad_id(self) -> int:
        """The id right padding uses (never attended: the attention mask is 0 there)."""
        return pad_id(self.tokenizer)

    # -- weights --------------------------------------------------------------------------------

    @property
    def heads_loaded(self) -> tuple[str | None, ...]:
        """The networks in memory: None (bare), ``"mlm"``, ``"glm"``."""
        return tuple(self._networks)

    @property
    def loaded(self) -> bool:
        """Whether any weights are in memory."""
        return bool(self._networks)

    def network(self, head: str | None = None) -> Any:
        """The network in eval mode on :attr:`device`, loaded on first need.

        ``head`` None gives the network whose ``hidden_states`` are the model's vectors: the base
        network of a loaded (or declared) LM-head model, else the bare ``AutoModel`` (the encoder
        of an encoder-decoder model). ``"mlm"`` / ``"glm"`` give the masked- / causal-LM head
        model; a checkpoint without trained head weights is a ModelError.
        """
        if head is None:
            return self._hidden_network()
        self.lm_kind(head)
        if head not in self._networks:
            self._networks[head] = self._load(head)
            if not self._encoder_decoder:
                self._networks.pop(None, None)  # the head model's base network replaces it
                _free_memory()
        return self._networks[head]

    @property
    def _encoder_decoder(self) -> bool:
        return bool(getattr(self.config, "is_encoder_decoder", False))

    def _hidden_network(self) -> Any:
        if not self._encoder_decoder:
            for head in HEADS:
                if head in self._networks:
                    return self._networks[head].base_model
        if None not in self._networks:
            declared = checkpoint_head(self.config)
            if declared is not None:
                try:
                    return self.network(declared).base_model
                except UntrainedHeadError:
                    pass  # the checkpoint declares a head it does not have: the bare network
            self._networks[None] = self._load(None)
        return self._networks[None]

    def _load(self, head: str | None) -> Any:
        network, device = load_network(self.model_name, self.config, self._resolved, head=head)
        self._device = device
        self.n_loads += 1
        return network

    def release(self) -> None:
        """Drop the weights and tokenizers from memory (they load again on next need)."""
        self._networks.clear()
        self._splits.clear()
        self._tokenizer = self._prefix_tokenizer = None
        _free_memory()

    # -- computations ---------------------------------------------------------------------------

    def hidden_states(
        self, *, input_ids: torch.Tensor, attention_mask: torch.Tensor, layers: Sequence[int]
    ) -> torch.Tensor:
        """``hidden_states[L]`` for each of ``layers``, stacked: ``(len(layers), b, t, d)``, in
        the weights' dtype, on :attr:`device` (``L`` = 0 is the embedding output)."""
        network = self.network(None)
        with torch.inference_mode():
            output = network(
                input_ids=input_ids.to(self.device),
                attention_mask=attention_mask.to(self.device),
                output_hidden_states=True,
                return_dict=True,
            )
            return torch.stack([output.hidden_states[layer] for layer in layers])

    def picked_logits(
        self,
        head: str,
        *,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        rows: Sequence[int] | torch.Tensor,
        cols: Sequence[int] | torch.Tensor,
        **kwargs: Any,
    ) -> tuple[PickedLogits, Any]:
        """``logits[rows[i], cols[i]]`` of one forward pass (the head applied there only when
        the network's head is known, module docstring) and the network's output, whose
        ``hidden_states`` / ``attentions`` are there when ``kwargs`` ask for them (those of the
        base network, the same tensors as the head model's)."""
        network = self.network(head)
        net_kwargs = {"use_cache": False} if head == "glm" else {}
        device = self.device
        with torch.inference_mode():
            input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
            split = self._split(head, network, input_ids, attention_mask, net_kwargs)
            if split is None:
                out = network(
                    input_ids=input_ids, attention_mask=attention_mask, **net_kwargs, **kwargs
                )
                where = _positions(rows, cols, out.logits.device)
                return PickedLogits(logits=out.logits[where]), out
            out = split.hidden(input_ids, attention_mask, **net_kwargs, **kwargs)
            hidden = out[0]
            return PickedLogits(hidden[_positions(rows, cols, hidden.device)], split.head), out

    def _split(
        self,
        head: str,
        network: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        kwargs: dict[str, Any],
    ) -> HeadSplit | None:
        """The head's verified split, checked on the first input it is used for."""
        if head not in self._splits:
            split = HeadSplit.of(network, causal=head == "glm")
            if split is not None and not split.verified(network, input_ids, attention_mask, kwargs):
                split = None
            if split is None:
                note_full_logits(self.model_name, network)
            self._splits[head] = split
        return self._splits[head]

    def log_probs(
        self,
        head: str,
        *,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        rows: Sequence[int] | torch.Tensor,
        cols: Sequence[int] | torch.Tensor,
    ) -> torch.Tensor:
        """``log softmax(logits[rows[i], cols[i]])`` (float32, natural log), one row of the
        vocabulary per (row, position) pair; on :attr:`device`.

        For ``head="mlm"`` the position is usually a mask token (``log P(w | T_{\\p})``); for
        ``head="glm"`` it is the distribution of the token that follows position ``p``.
        """
        picked, _ = self.picked_logits(
            head, input_ids=input_ids, attention_mask=attention_mask, rows=rows, cols=cols
        )
        with torch.inference_mode():
            return torch.log_softmax(picked.all().float(), dim=-1).to(self.device)

    def token_log_probs(
        self,
        head: str,
        *,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        rows: Sequence[int] | torch.Tensor,
        cols: Sequence[int] | torch.Tensor,
        targets: Sequence[int] | torch.Tensor,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, Any]:
        """``log P(targets[i]) = log softmax(z)[targets[i]]`` with ``z = logits[rows[i],
        cols[i]]`` (float32, natural log, on :attr:`device`: the numbers of :meth:`log_probs`),
        and the network's output (:meth:`picked_logits`; ``kwargs`` go to the network).
        ``targets`` of shape n × k reads k tokens at each position: ``values[i, j] = log
        softmax(z)[targets[i, j]]``, one head and one softmax per position.

        The logits are made and reduced a chunk of positions at a time
        (:data:`~weatkit.models.lm_head.CHUNK_LOGITS` values), upcast to float32 chunk by
        chunk: no position that is not read gets logits, and no full-size float32 copy exists.
        """
        picked, out = self.picked_logits(
            head, input_ids=input_ids, attention_mask=attention_mask, rows=rows, cols=cols,
            **kwargs,
        )  # fmt: skip
        device = self.device
        with torch.inference_mode():
            wanted = torch.as_tensor(targets, device=device)
            columns = wanted if wanted.dim() == 2 else wanted[:, None]
            values = torch.empty(columns.shape, dtype=torch.float32, device=device)
            for where, logits in picked.chunks(getattr(self.config, "vocab_size", None)):
                logp = torch.log_softmax(logits.float().to(device), dim=-1)
                values[where] = logp.gather(1, columns[where])
            return (values if wanted.dim() == 2 else values[:, 0]), out

    @contextmanager
    def eager_attention(self, head: str) -> Iterator[None]:
        """Run the head model with eager attention inside the block (only eager attention
        returns attention weights), and switch back after it."""
        network = self.network(head)
        before = getattr(network.config, "_attn_implementation", "eager")
        if before != "eager":
            network.set_attn_implementation("eager")
        try:
            yield
        finally:
            if before != "eager":
                network.set_attn_implementation(before)


def _free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _positions(
    rows: Sequence[int] | torch.Tensor, cols: Sequence[int] | torch.Tensor, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(rows, device=device), torch.as_tensor(cols, device=device)


def padded(rows: Sequence[Sequence[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``input_ids`` and the ``attention_mask`` (1 on tokens, 0 on padding)."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = torch.tensor(row)
        mask[r, : len(row)] = 1
    return ids, mask
