"""Word vectors from Hugging Face transformer models at chosen layers.

The default follows the CA-WEAT extraction (CA-WEAT paper §4 and §6: "we sum the embeddings for
all the subword units in a term"): each item (a word or a multi-word phrase) is encoded alone
with the model's special tokens (``[CLS] w [SEP]`` for BERT, ``<s> w </s>`` for XLM-R and BART;
for decoder-only models the start token their tokenizer puts in front, Llama's ``<s>``, XGLM's
``</s>``, else the BOS, GPT-2's ``<|endoftext|>``, else none, Qwen2), and the vector of the item
at layer ``L`` is

    v_L(w) = Σ_{t ∈ T(w)} h_L[t]

where ``T(w)`` are the positions of the item's own sub-word tokens and ``h_L`` is
``hidden_states[L]`` of the model (``L = 0`` is the embedding-layer output, ``L = -1`` the last
layer, ``L = -2`` the next-to-last). Options change the pooling (``mean``, ``first`` or ``last``
sub-word instead of the sum), drop the special tokens, or embed the item in a template sentence
such as ``"This is {}."`` (SEAT-style), pooling only the item's tokens (found by character
offsets, so a fast tokenizer is needed).

``span="sequence"`` pools every position of the encoded sequence instead of the item's own
tokens, ``T(w) = {1, …, n}``, special tokens included: a whole-sentence vector. With ``first``
it is BERT's ``[CLS]`` state (May et al. 2019's SEAT encoding of BERT, with the special tokens
on), with ``mean`` the mean over ``last_hidden_state`` that bias-bench takes, with ``last`` a
decoder's last token (docs/measures/seat.md).

Batches are padded on the right with an attention mask, so a word's vector does not depend on
the other words in its batch beyond rounding (right padding also keeps the absolute positions of
decoder-only models); the padded shapes select different matrix kernels, so vectors may differ in
their last bits (about 1e-6) between batch sizes. Encoder-decoder models use their encoder. The
model comes from the process's pool (:func:`weatkit.models.pool.get_model`), so other measures of
the same run share its weights. Extracted vectors are cached on disk
(:mod:`weatkit.models.cache`), keyed by the model's identity (hub id + commit hash, or a content
hash of a local directory), its loading options (dtype…) and the pooling options, not the batch
size; all requested layers come from one forward pass.

With ``lower=True`` the item is lower-cased before it is encoded and its vector is returned under
the item as written, so list items are found as they are spelt.

The options (:class:`~weatkit.embeddings.contextual_options.ContextualOptions`, the pooling
modes and spans) are in :mod:`weatkit.embeddings.contextual_options`; ``ContextualOptions`` is
imported from here too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from weatkit.embeddings.contextual_options import ContextualOptions
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.models.batching import auto_batch_sizes, run_batches
from weatkit.models.cache import VectorCache, model_inputs
from weatkit.models.handle import ModelHandle
from weatkit.models.hub import lowercases, max_length
from weatkit.models.pool import get_model

#: Bump when the vectors of decoder-only models change (in their cache keys only). 2: the start
#: token a tokenizer puts in front itself (XGLM's ``</s>``) is no longer preceded by the BOS.
DECODER_VECTORS_VERSION = 2


@dataclass
class ExtractionStats:
    """Counts for one extractor, cumulative over its ``extract`` calls.

    Attributes:
        n_items: distinct items requested.
        n_cached: items whose vectors (all requested layers) came from the on-disk cache.
        n_computed: items that went through the model.
        n_batches: forward passes.
        n_untokenizable: items that produced no token (left out of the vectors).
    """

    n_items: int = 0
    n_cached: int = 0
    n_computed: int = 0
    n_batches: int = 0
    n_untokenizable: int = 0


@dataclass
class _Encoded:
    item: str
    ids: list[int]
    positions: list[int]


@dataclass
class _Store:
    """Vectors computed (``memory``: layer -> key -> vector) and their on-disk cache."""

    memory: dict[int, dict[str, np.ndarray]]
    cache: VectorCache | None


@dataclass
class _Loaded:
    """What a forward pass needs; ``model`` is the handle's hidden-states function."""

    tokenizer: Any
    model: Any
    device: torch.device
    decoder_only: bool


class ContextualExtractor:
    """Extract word vectors from one model (a hub id or a local directory) at chosen layers.

    The model and tokenizer come from the process's pool (:func:`weatkit.models.pool.get_model`)
    and are loaded on first need; when every requested vector is in the cache the model is never
    loaded. ``notes`` collects messages for the run report (e.g. an
    uncased model meeting cased items).

    Example:
        >>> ex = ContextualExtractor("bert-base-cased")  # doctest: +SKIP
        >>> vecs = ex.extract(["doctor", "nurse"], layers=[0, -2])  # doctest: +SKIP
        >>> vecs[-2].lookup(["doctor"]).shape  # doctest: +SKIP
        (1, 768)
    """

    def __init__(self, model: str, options: ContextualOptions | None = None) -> None:
        self.model_name = str(model)
        self.options = options or ContextualOptions()
        self.options.validate()
        self.stats = ExtractionStats()
        self.notes: list[str] = []
        self.handle: ModelHandle = get_model(self.model_name, self.options)
        self._config = self.handle.config
        self.identity = self.handle.identity
        self.n_layers = self.handle.n_layers
        self._loaded: _Loaded | None = None
        self._requested: set[str] = set()
        inputs = {**model_inputs(self.identity, self.options), **self.options.cache_inputs()}
        if self.handle.decoder_only:
            inputs["decoder_vectors"] = DECODER_VECTORS_VERSION
        self._cache_inputs = inputs
        cache = (
            VectorCache(inputs, batch_size=self.options.batch_size) if self.options.cache else None
        )
        self._items = _Store({}, cache)
        self._spans: _Store | None = None

    @property
    def model_loaded(self) -> bool:
        """Whether this extractor needed the network (only when a vector is not cached)."""
        return self._loaded is not None

    # -- layers ---------------------------------------------------------------------------------

    def layer_index(self, layer: int) -> int:
        """The non-negative ``hidden_states`` index of ``layer`` (−1 = last layer)."""
        n_states = self.n_layers + 1
        if not isinstance(layer, int) or not -n_states <= layer < n_states:
            raise WeatkitError(
                f"layer {layer} out of range for {self.model_name}: it has {self.n_layers} layers "
                f"(hidden states 0..{self.n_layers}, or -1..-{n_states} from the top)"
            )
        return layer % n_states

    # -- extraction -----------------------------------------------------------------------------

    def extract(
        self,
        items: Iterable[str],
        layers: Sequence[int],
        *,
        show_progress: bool | None = None,
        name: str | None = None,
    ) -> dict[int, WordVectors]:
        """Vectors of ``items`` at each of ``layers`` (keys: the layers as given).

        Items that produce no token at all are left out and counted in
        ``stats.n_untokenizable`` (a word-vector lookup then reports them as missing).
        """
        if not layers:
            raise WeatkitError(f"no layer given for {self.model_name}")
        absolute = {layer: self.layer_index(layer) for layer in layers}
        wanted = sorted(set(absolute.values()))
        prepared = {item: self._prepare(item) for item in dict.fromkeys(items)}
        texts = list(dict.fromkeys(prepared.values()))
        fresh = [t for t in texts if t not in self._requested]
        self._requested.update(fresh)
        self.stats.n_items = len(self._requested)
        found = {layer: self._lookup(texts, layer, self._items) for layer in wanted}
        missing = [t for t in texts if any(t not in found[layer] for layer in wanted)]
        self.stats.n_cached += len(set(fresh).difference(missing))
        if missing:
            computed = self._compute(missing, wanted, show_progress, self._items)
            for layer in wanted:
                found[layer].update(computed.get(layer, {}))
        self._note_casing(texts)
        out = {}
        for requested, layer in absolute.items():
            words = [item for item, text in prepared.items() if text in found[layer]]
            matrix = (
                np.stack([found[layer][prepared[w]] for w in words]) if words else np.zeros((0, 0))
            )
            out[requested] = WordVectors(
                name=name or f"{self.model_name}@{requested}",
                words=words,
                vectors=matrix.astype(np.float32, copy=False),
                source=f"hf:{self.model_name}@{requested}",
                n_rows_in_source=-1,
            )
        return out

    def extract_spans(
        self,
        spans: Sequence[tuple[str, int, int]],
        layers: Sequence[int],
        *,
        show_progress: bool | None = None,
    ) -> dict[int, np.ndarray]:
        """Vectors of words in their sentences: ``(sentence, start, end)`` pools the tokens of
        ``sentence`` whose characters overlap ``sentence[start:end]`` (as a template's item),
        with the sentence's own context; ``(len(spans), d)`` float32 per layer (keys: the
        layers as given), in the order of ``spans``. Cached under the model, the pooling
        options and the sentence with its span (a cache of their own, beside the items').

        Raises:
            WeatkitError: a ``--template`` (the sentence is the template here), a span outside
                its sentence or with no token, a sentence longer than the model takes.
        """
        if self.options.template is not None:
            raise WeatkitError("words in their own sentences take no --template")
        for sentence, start, end in spans:
            if not 0 <= start < end <= len(sentence):
                raise WeatkitError(f"span {start}:{end} is outside the sentence {sentence!r}")
        absolute = {layer: self.layer_index(layer) for layer in layers}
        wanted = sorted(set(absolute.values()))
        keys = [
            json.dumps([start, end, sentence], ensure_ascii=False) for sentence, start, end in spans
        ]
        store = self._span_store()
        unique = list(dict.fromkeys(keys))
        found = {layer: self._lookup(unique, layer, store) for layer in wanted}
        missing = [k for k in unique if any(k not in found[layer] for layer in wanted)]
        if missing:
            computed = self._compute(missing, wanted, show_progress, store)
            for layer in wanted:
                found[layer].update(computed.get(layer, {}))
        lost = [k for k in unique if k not in found[wanted[0]]]
        if lost:
            start, end, sentence = json.loads(lost[0])
            raise WeatkitError(
                f"{self.model_name}: {sentence[start:end]!r} in {sentence!r} has no token"
            )
        return {
            requested: np.stack([found[layer][k] for k in keys]).astype(np.float32, copy=False)
            for requested, layer in absolute.items()
        }

    def _span_store(self) -> _Store:
        if self._spans is None:
            cache = None
            if self.options.cache:
                inputs = {**self._cache_inputs, "spans": 1}
                cache = VectorCache(inputs, batch_size=self.options.batch_size)
            self._spans = _Store({}, cache)
        return self._spans

    def _prepare(self, item: str) -> str:
        if not isinstance(item, str):
            raise WeatkitError(f"items must be text, got {type(item).__name__}: {item!r}")
        return item.lower() if self.options.lower else item

    def _lookup(self, texts: list[str], layer: int, store: _Store) -> dict[str, np.ndarray]:
        table = store.memory.setdefault(layer, {})
        if store.cache is not None:
            missing = [t for t in texts if t not in table]
            table.update(store.cache.get(missing, layer))
        return {t: table[t] for t in texts if t in table}

    def _compute(
        self, texts: list[str], layers: list[int], show_progress: bool | None, store: _Store
    ) -> dict[int, dict[str, np.ndarray]]:
        """Vectors of ``texts`` (the items' texts, or the JSON keys of spans when ``store`` is
        the spans'), computed and put in ``store``."""
        loaded = self._load()
        placed = self._placed if store is self._items else _span_of_key
        encoded = [self._encode(loaded, *placed(t)) for t in texts]
        usable = [e for e in encoded if e.positions]
        self.stats.n_untokenizable += len(encoded) - len(usable)
        for e in encoded:
            if not e.positions:
                self.notes.append(f"{self.model_name}: item {e.item!r} has no token; left out")
        rows, n_batches = run_batches(
            usable,
            lambda batch: self._forward(loaded, batch, layers),
            length=lambda e: len(e.ids),
            batch_size=self.options.batch_size,
            desc=f"encoding with {self.handle.short_name}",
            model_name=self.model_name,
            device=loaded.device,
            unit="word",
            action="encoding",
            show_progress=show_progress,
        )
        self.stats.n_batches += n_batches
        self.stats.n_computed += len(usable)
        done = [e.item for e in usable]
        stacked = {
            layer: rows[:, i] if usable else np.zeros((0, 0), np.float32)
            for i, layer in enumerate(layers)
        }
        if store.cache is not None:
            store.cache.put(done, stacked)
        out = {}
        for layer, matrix in stacked.items():
            table = dict(zip(done, matrix, strict=True))
            store.memory.setdefault(layer, {}).update(table)
            out[layer] = table
        return out

    def _placed(self, text: str) -> tuple[str, tuple[int, int] | None, str]:
        """``(sentence, span, key)`` of an item: alone (span None: all its tokens) or in the
        template."""
        template = self.options.template
        if template is None:
            return text, None, text
        start = template.index("{}")
        return template.replace("{}", text), (start, start + len(text)), text

    def _encode(
        self, loaded: _Loaded, sentence: str, span: tuple[int, int] | None, key: str
    ) -> _Encoded:
        """Token ids of ``sentence`` and the positions of the tokens overlapping ``span`` (every
        non-special token when None); ``key`` names the result (the item, or the span's key)."""
        tok = loaded.tokenizer
        kwargs: dict[str, Any] = {
            "add_special_tokens": self.options.special_tokens,
            "return_special_tokens_mask": True,
        }
        if span is not None:
            if not getattr(tok, "is_fast", False):  # a template's is refused by _tokenizer
                raise WeatkitError(
                    f"words in their sentences need a fast tokenizer (character offsets); "
                    f"{self.model_name} has a slow one"
                )
            kwargs["return_offsets_mapping"] = True
        enc = tok(sentence, **kwargs)
        ids = list(enc["input_ids"])
        special = list(enc["special_tokens_mask"])
        if span is None:
            positions = [i for i, s in enumerate(special) if not s]
        else:
            positions = [
                i
                for i, ((a, b), s) in enumerate(zip(enc["offset_mapping"], special, strict=True))
                if not s and a < span[1] and b > span[0]
            ]
        # a decoder whose tokenizer puts no start token in front (GPT-2) gets its BOS; one whose
        # tokenizer does (Llama's <s>, XGLM's </s>) keeps that one alone
        bos = tok.bos_token_id
        own_start = bool(special) and bool(special[0])
        decoder_start = loaded.decoder_only and self.options.special_tokens and bos is not None
        if decoder_start and not own_start:
            ids = [bos, *ids]
            positions = [p + 1 for p in positions]
        if self.options.span == "sequence" and positions:
            positions = list(range(len(ids)))
        limit = max_length(tok, self._config)
        if limit is not None and len(ids) > limit:
            what = f"item {key!r}" if key == sentence or span is None else f"{sentence!r}"
            raise WeatkitError(
                f"{self.model_name}: {what} is {len(ids)} tokens long, more than the "
                f"model's {limit}"
            )
        return _Encoded(key, ids, positions)

    def _forward(self, loaded: _Loaded, batch: list[_Encoded], layers: list[int]) -> np.ndarray:
        """One padded forward pass; per item and layer the pooled vector ``W @ h_L`` (float32,
        ``(len(batch), len(layers), d)``)."""
        width = max(len(e.ids) for e in batch)
        pad = self.handle.pad_id
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        weights = torch.zeros((len(batch), width), dtype=torch.float32)
        for row, e in enumerate(batch):
            ids[row, : len(e.ids)] = torch.tensor(e.ids)
            mask[row, : len(e.ids)] = 1
            weights[row] = _pooling_weights(e.positions, width, self.options.subwords)
        with torch.inference_mode():
            states = loaded.model(input_ids=ids, attention_mask=mask, layers=layers)
            pooled = torch.einsum("bt,lbtd->lbd", weights.to(loaded.device), states.float())
        return pooled.cpu().numpy().transpose(1, 0, 2)

    # -- model loading --------------------------------------------------------------------------

    def _tokenizer(self) -> Any:
        tokenizer = self.handle.tokenizer
        if self.options.template is not None and not getattr(tokenizer, "is_fast", False):
            raise WeatkitError(
                f"--template needs a fast tokenizer (character offsets); {self.model_name} has "
                "a slow one"
            )
        return tokenizer

    def _load(self) -> _Loaded:
        if self._loaded is None:
            tokenizer = self._tokenizer()
            self.handle.network(None)
            self._loaded = _Loaded(
                tokenizer, self.handle.hidden_states, self.handle.device, self.handle.decoder_only
            )
        return self._loaded

    def _note_casing(self, texts: list[str]) -> None:
        cased = [t for t in texts if t != t.lower()]
        if not cased or any("uncased" in note for note in self.notes):
            return
        if lowercases(self._tokenizer()):
            self.notes.append(
                f"{self.model_name} is uncased: its tokenizer lower-cases {len(cased)} item(s) "
                f"with capitals (e.g. {cased[0]!r})"
            )


def _span_of_key(key: str) -> tuple[str, tuple[int, int], str]:
    """``(sentence, span, key)`` of a span's key (the JSON ``[start, end, sentence]``)."""
    start, end, sentence = json.loads(key)
    return sentence, (start, end), key


def _pooling_weights(positions: list[int], width: int, mode: str) -> torch.Tensor:
    """Row of the pooling matrix W: ``v = Σ_t W[t] h[t]`` over the item's positions."""
    row = torch.zeros(width, dtype=torch.float32)
    if mode == "sum":
        row[positions] = 1.0
    elif mode == "mean":
        row[positions] = 1.0 / len(positions)
    elif mode == "first":
        row[positions[0]] = 1.0
    else:  # last
        row[positions[-1]] = 1.0
    return row


@dataclass
class ExtractorPool:
    """One :class:`ContextualExtractor` per (model, options), shared by the specs of a run.

    Extractors of one model with different pooling options share the model's handle (and
    weights) through :func:`weatkit.models.pool.get_model`.
    """

    extractors: dict[tuple[str, ContextualOptions], ContextualExtractor] = field(
        default_factory=dict
    )

    def get(self, model: str, options: ContextualOptions) -> ContextualExtractor:
        key = (model, options)
        if key not in self.extractors:
            self.extractors[key] = ContextualExtractor(model, options)
        return self.extractors[key]

    @property
    def models_loaded(self) -> int:
        """How many models this pool's extractors have loaded (each at most once)."""
        return len({id(ex.handle) for ex in self.extractors.values() if ex.model_loaded})

    def describe(self) -> list[dict[str, object]]:
        """Model identities, options and extraction counts, for the manifest (and the batch
        size ``--batch-size auto`` ran at: ``batch_size_used``)."""
        return [
            {
                "model": model,
                "identity": ex.identity,
                "options": asdict(options),
                "stats": asdict(ex.stats),
                **_auto_size(model, options),
            }
            for (model, options), ex in self.extractors.items()
        ]


def _auto_size(model: str, options: ContextualOptions) -> dict[str, int]:
    """``{"batch_size_used": N}`` of a ``--batch-size auto`` model that ran, else {}."""
    used = auto_batch_sizes().get(model) if options.batch_size == "auto" else None
    return {} if used is None else {"batch_size_used": used}
