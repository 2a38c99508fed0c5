"""How word vectors are taken from a transformer model: :class:`ContextualOptions`.

The vector of an item ``w`` at layer ``L`` is a pooling of the model's hidden states over
positions ``T(w)``,

    v_L(w) = Σ_{t ∈ T(w)} W[t] h_L[t]

where ``subwords`` sets the weights ``W`` (``sum``: 1 each, CA-WEAT; ``mean``: 1/|T(w)|;
``first`` or ``last``: 1 at one position) and ``span`` sets ``T(w)`` (``item``: the item's own
sub-word tokens; ``sequence``: every position of the encoded sequence). The other fields say how
the item is encoded (``special_tokens``, ``template``, ``lower``), how the model is loaded
(:class:`weatkit.models.options.LoadOptions`) and how an ``openai:`` model's server is asked
(:class:`weatkit.scoring.options.OpenAIOptions`). The extraction itself is
:mod:`weatkit.embeddings.contextual`, which these options are also imported from; their
declaration for files and the command line is :data:`weatkit.config.schema.CONTEXTUAL`.
"""

from __future__ import annotations

from dataclasses import dataclass

from weatkit.errors import ConfigError
from weatkit.models.batching import check_batch_size
from weatkit.models.options import LoadOptions
from weatkit.scoring.options import OpenAIOptions

SUBWORD_POOLING = ("sum", "mean", "first", "last")
#: Which positions are pooled: the item's own sub-word tokens, or the whole encoded sequence.
SPANS = ("item", "sequence")


@dataclass(frozen=True)
class ContextualOptions:
    """How word vectors are taken from a transformer model.

    Attributes:
        subwords: pooling of the item's sub-word vectors: ``sum`` (CA-WEAT), ``mean``, ``first``
            or ``last``.
        special_tokens: encode with the model's special tokens (``[CLS] w [SEP]``, ``<s> w </s>``,
            a decoder-only model's start token); False encodes only the item's tokens.
        span: the positions ``subwords`` pools: ``item`` (the item's own sub-word tokens) or
            ``sequence`` (every position of the encoded sequence, special tokens and template
            included: one vector for a whole sentence).
        template: a sentence with one ``{}`` where the item goes (e.g. ``"This is {}."``); only
            the item's tokens are pooled. None encodes the item alone.
        lower: lower-case items before encoding (the vectors answer for the items as written).
        dtype: model weights' dtype: ``float32``, ``float16`` or ``bfloat16`` (vectors are pooled
            and returned in float32).
        batch_size: items per forward pass, or ``auto``: the largest that fits, halved on each
            out-of-memory (:func:`weatkit.models.batching.run_batches`).
        device: ``auto`` (CUDA when available), ``cpu``, ``cuda[:N]`` or ``mps``.
        revision: hub revision (branch, tag or commit) of a hub model.
        trust_remote_code: allow models whose code lives in their repository (runs that code).
        allow_pickle: allow ``pytorch_model.bin`` weights (a pickle); safetensors otherwise.
        cache: read and write the on-disk cache.
        device_map, max_memory, quantization, tensor_parallel: how a large model is placed
            and quantized (:class:`weatkit.models.options.LoadOptions`; ``tensor_parallel`` is
            for ``vllm:`` models).
        timeout, max_retries, concurrency: how an ``openai:`` model's server is asked
            (:class:`weatkit.scoring.options.OpenAIOptions`: seconds per request, retries of a
            failed request, requests in flight).
    """

    subwords: str = "sum"
    special_tokens: bool = True
    span: str = "item"
    template: str | None = None
    lower: bool = False
    dtype: str = "float32"
    batch_size: int | str = 64
    device: str = "auto"
    revision: str | None = None
    trust_remote_code: bool = False
    allow_pickle: bool = False
    cache: bool = True
    device_map: str | None = None
    max_memory: str | None = None
    quantization: str | None = None
    tensor_parallel: int = 1
    timeout: float = OpenAIOptions.timeout
    max_retries: int = OpenAIOptions.max_retries
    concurrency: int = OpenAIOptions.concurrency

    def validate(self) -> None:
        """:class:`ConfigError` naming the field of an unknown pooling, a bad batch size or
        template, loading options that cannot be (:meth:`LoadOptions.validate`) or server
        options that cannot be (:meth:`OpenAIOptions.validate`)."""
        if self.subwords not in SUBWORD_POOLING:
            raise ConfigError(
                f"unknown pooling {self.subwords!r}: choose {', '.join(SUBWORD_POOLING)}",
                field="subwords",
            )
        if self.span not in SPANS:
            raise ConfigError(
                f"unknown span {self.span!r}: choose {', '.join(SPANS)}", field="span"
            )
        check_batch_size(self.batch_size)
        LoadOptions.of(self).validate()
        OpenAIOptions.of(self).validate()
        if self.template is not None and (
            self.template.count("{}") != 1 or set("{}") & set(self.template.replace("{}", ""))
        ):
            raise ConfigError(
                f"{self.template!r} must contain exactly one '{{}}' for the item and no other "
                "braces",
                field="template",
            )

    def cache_inputs(self) -> dict[str, object]:
        """The pooling options that change a vector (part of the cache key, beside
        :func:`weatkit.models.cache.model_inputs`: the model and its loading options).

        The batch size is not: a padded batch runs different matrix kernels, so a vector can
        differ in its last bits (docs/guides/caching.md) between batch sizes, no more.
        """
        return {
            "subwords": self.subwords,
            "special_tokens": self.special_tokens,
            "template": self.template,
            **({"span": self.span} if self.span != "item" else {}),
        }
