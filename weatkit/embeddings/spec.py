"""Embeddings specs from the command line: ``NAME=PATH``, ``PATH``, ``glove-6b-50d``, ``hf:``,
``openai:`` or ``st:``.

A path may contain ``{lang}``, replaced by the language code of each list (one file per
language, e.g. ``WP=vecs/wiki.{lang}.vec``).

Contextual models are ``[NAME=]hf:MODEL@LAYERS`` where ``MODEL`` is a Hugging Face hub id or a
local directory and ``LAYERS`` one layer or several separated by commas
(``hf:bert-base-cased@0,-2``; negative layers count from the top, −2 = next-to-last). One spec
gives one embeddings source per layer, all extracted in the same forward pass: named ``NAME``
for a single named layer, else ``NAME@LAYER`` (``NAME`` defaults to the model's last path
component).

A model whose backend embeds whole texts (:data:`API_PREFIXES`: an embeddings API
``[NAME=]openai:BASE_URL#MODEL``, a sentence-transformers model ``[NAME=]st:ID_OR_DIR``; the
model specs of :mod:`weatkit.scoring.spec`) is one source whose vectors are its backend's
``embed`` of each item (:mod:`weatkit.embeddings.api`); ``NAME`` defaults to ``MODEL`` (for
``st:`` its last path component).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from weatkit.embeddings.api import api_word_vectors
from weatkit.embeddings.contextual import ContextualOptions, ExtractorPool
from weatkit.embeddings.default import DEFAULT_EMBEDDINGS, UNCASED_DEFAULT, load_default
from weatkit.embeddings.loader_utils import default_name
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.models.options import LoadOptions
from weatkit.scoring.registry import BACKENDS
from weatkit.scoring.spec import ModelSpec, parse_model_spec

LANG_PLACEHOLDER = "{lang}"
HF_PREFIX = "hf:"
OPENAI_PREFIX = "openai:"
#: Backends whose models give one vector per text (the ``embed`` capability), other than ``hf``
#: (whose models give word vectors at layers, :mod:`weatkit.embeddings.contextual`).
API_PREFIXES = tuple(
    f"{name}:" for name, backend in BACKENDS.items() if "embed" in backend.capabilities
    and name != "hf"
)  # fmt: skip
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_SEPARATORS = ("/", "\\")


@dataclass(frozen=True)
class EmbeddingsSpec:
    """Which embeddings to use, under which name.

    Attributes:
        name: label in result tables.
        location: a path (may contain ``{lang}``), ``"glove-6b-50d"`` for the default,
            ``hf:MODEL`` for a transformer model, ``openai:BASE_URL#MODEL`` for an
            embeddings API or ``st:MODEL`` for a sentence-transformers model.
        fmt: file format passed to :func:`weatkit.embeddings.static.load_static`.
        layer: the hidden-state layer of a contextual model (None for static vectors).
        layers: every layer of the spec this one came from (extracted in one forward pass).
        contextual: extraction options of an ``hf:`` model; the server options of an
            ``openai:`` one, the loading options of an ``st:`` one.
    """

    name: str
    location: str
    fmt: str = "auto"
    layer: int | None = None
    layers: tuple[int, ...] = ()
    contextual: ContextualOptions | None = None

    @property
    def is_contextual(self) -> bool:
        """True for models, ``hf:`` and :data:`API_PREFIXES` (no OOV, items keep their
        spaces)."""
        return self.location.startswith((HF_PREFIX, *API_PREFIXES))

    @property
    def api_model(self) -> ModelSpec | None:
        """The model spec of an ``openai:`` or ``st:`` source (:data:`API_PREFIXES`), else
        None."""
        if not self.location.startswith(API_PREFIXES):
            return None
        return parse_model_spec(self.location, option="embeddings")

    @property
    def is_default(self) -> bool:
        """True for the built-in GloVe 6B 50d."""
        return self.location == DEFAULT_EMBEDDINGS

    @property
    def per_language(self) -> bool:
        """True when the location has a ``{lang}`` placeholder (one file per language)."""
        return LANG_PLACEHOLDER in self.location

    @property
    def uncased(self) -> bool:
        """True when the vocabulary is lower-case only (list items should be lower-cased)."""
        return self.is_default and UNCASED_DEFAULT

    def path_for(self, lang: str) -> str:
        """The location for language ``lang`` (``{lang}`` substituted, ``~`` expanded)."""
        if self.is_default:
            return self.location
        if self.is_contextual:
            return self.location.removeprefix(HF_PREFIX).replace(LANG_PLACEHOLDER, lang)
        return os.path.expanduser(self.location.replace(LANG_PLACEHOLDER, lang))


def _check_placeholders(location: str, text: str) -> None:
    for match in _PLACEHOLDER.finditer(location):
        if match.group(0) != LANG_PLACEHOLDER:
            raise WeatkitError(
                f"embeddings spec {text!r}: unknown placeholder {match.group(0)!r} "
                f"(only {LANG_PLACEHOLDER} is supported)"
            )
    if "{" in _PLACEHOLDER.sub("", location) or "}" in _PLACEHOLDER.sub("", location):
        raise WeatkitError(f"embeddings spec {text!r}: unbalanced '{{' or '}}' in the path")


def _name_from_path(location: str) -> str:
    """File stem, without a ``{lang}`` part: ``vecs/wiki.{lang}.vec`` -> ``wiki``."""
    stem = default_name(location)
    if LANG_PLACEHOLDER in stem:
        cleaned = re.sub(r"[._\-]\{lang\}|\{lang\}[._\-]?", "", stem)
        stem = cleaned or stem.replace(LANG_PLACEHOLDER, "lang")
    return stem


def _split_name(text: str) -> tuple[str | None, str]:
    """``NAME=LOCATION`` or ``LOCATION``; ``=`` separates a name only when the part before it
    has no path separator, so a path such as ``dir/a=b.vec`` is read as a path."""
    if not isinstance(text, str):
        raise WeatkitError(f"embeddings spec must be text, got {type(text).__name__}")
    spec = text.strip()
    if not spec:
        raise WeatkitError("empty embeddings spec (expected NAME=PATH, PATH or glove-6b-50d)")
    head, sep, tail = spec.partition("=")
    if not sep or any(s in head for s in _SEPARATORS):
        return None, spec
    name, location = head.strip(), tail.strip()
    if not name:
        raise WeatkitError(f"embeddings spec {text!r}: empty name before '='")
    if not location:
        raise WeatkitError(f"embeddings spec {text!r}: empty path after '='")
    return name, location


def parse_embeddings_spec(text: str) -> EmbeddingsSpec:
    """Parse ``NAME=PATH``, ``PATH`` (name = file stem) or ``glove-6b-50d`` (static vectors).

    Raises:
        WeatkitError: empty spec, name or path, or a placeholder other than ``{lang}``.
    """
    name, location = _split_name(text)
    if location.lower() == DEFAULT_EMBEDDINGS:
        return EmbeddingsSpec(name=name or DEFAULT_EMBEDDINGS, location=DEFAULT_EMBEDDINGS)
    if location.startswith(HF_PREFIX):
        raise WeatkitError(f"embeddings spec {text!r}: use parse_embeddings_specs for hf: models")
    if location.startswith(API_PREFIXES):
        model = parse_model_spec(location, option="embeddings")
        default = model.model if model.backend == "openai" else model.short_name
        return EmbeddingsSpec(name=name or default, location=str(model))
    _check_placeholders(location, text)
    if name is None:
        name = _name_from_path(location)
    if not name or location.endswith(_SEPARATORS) or not Path(location).name:
        raise WeatkitError(f"embeddings spec {text!r}: no file name in the path")
    return EmbeddingsSpec(name=name, location=location)


def parse_embeddings_specs(
    text: str, contextual: ContextualOptions | None = None
) -> list[EmbeddingsSpec]:
    """Parse any spec; an ``hf:MODEL@L1,L2`` spec gives one :class:`EmbeddingsSpec` per layer.

    Args:
        text: the spec.
        contextual: extraction options for ``hf:`` models, the server options of an
            ``openai:`` one (``timeout``, ``max_retries``, ``concurrency``), the loading options
            of an ``st:`` one (``device``, ``revision``, ``trust_remote_code``, ``batch_size``;
            default :class:`ContextualOptions`).

    Raises:
        ConfigError: options the spec's backend does not take (``--tensor-parallel``:
            :meth:`~weatkit.models.options.LoadOptions.check_backend`), before any model loads.
    """
    name, location = _split_name(text)
    if location.startswith(API_PREFIXES):
        options = contextual or ContextualOptions()
        options.validate()
        LoadOptions.of(options).check_backend(location.partition(":")[0])
        return [replace(parse_embeddings_spec(text), contextual=options)]
    if not location.startswith(HF_PREFIX):
        return [parse_embeddings_spec(text)]
    model, at, layer_text = location.removeprefix(HF_PREFIX).rpartition("@")
    if not at or not model:
        raise WeatkitError(
            f"embeddings spec {text!r}: give the layer as hf:MODEL@LAYER "
            "(e.g. hf:bert-base-cased@-2; several: @0,-2)"
        )
    layers = tuple(_parse_layer(part, text) for part in layer_text.split(","))
    if len(set(layers)) != len(layers):
        raise WeatkitError(f"embeddings spec {text!r}: a layer is given twice")
    _check_placeholders(model, text)
    options = contextual or ContextualOptions()
    options.validate()
    LoadOptions.of(options).check_backend("hf")
    base = name or _name_from_path(model.rstrip("/\\")) or model
    return [
        EmbeddingsSpec(
            name=name if name and len(layers) == 1 else f"{base}@{layer}",
            location=HF_PREFIX + model,
            layer=layer,
            layers=layers,
            contextual=options,
        )
        for layer in layers
    ]


def _parse_layer(part: str, text: str) -> int:
    try:
        return int(part.strip())
    except ValueError:
        raise WeatkitError(
            f"embeddings spec {text!r}: layer {part.strip()!r} is not an integer"
        ) from None


def load_embeddings(
    spec: EmbeddingsSpec,
    lang: str,
    *,
    words: Iterable[str] | None = None,
    first_n: int = 0,
    allow_pickle: bool = False,
    fasttext_oov: bool = False,
    extractors: ExtractorPool | None = None,
    show_progress: bool | None = None,
) -> WordVectors:
    """Load the embeddings of ``spec`` for language ``lang`` (name set to ``spec.name``).

    Contextual specs encode exactly ``words`` (all layers of the spec at once; ``extractors``
    shares loaded models and extracted vectors between the specs of a run).
    """
    api = spec.api_model
    if api is not None:
        if words is None:
            raise WeatkitError(f"embeddings {spec.name!r}: an embeddings API needs the words")
        return api_word_vectors(api, words, name=spec.name, options=spec.contextual)
    if spec.is_contextual:
        if first_n:
            raise WeatkitError(f"embeddings {spec.name!r}: first_n is for static vectors only")
        if words is None:
            raise WeatkitError(f"embeddings {spec.name!r}: a contextual model needs the words")
        assert spec.contextual is not None and spec.layer is not None
        pool = extractors or ExtractorPool()
        options = replace(
            spec.contextual, allow_pickle=allow_pickle or spec.contextual.allow_pickle
        )
        extractor = pool.get(spec.path_for(lang), options)
        vectors = extractor.extract(words, spec.layers, show_progress=show_progress, name=spec.name)
        return vectors[spec.layer]
    if spec.is_default:
        wv = load_default(words=words, first_n=first_n)
        wv.name = spec.name
        return wv
    path = spec.path_for(lang)
    if not Path(path).exists():
        if spec.per_language:
            raise WeatkitError(
                f"embeddings {spec.name!r}: no file for language {lang!r}: {path} not found "
                f"(from {spec.location})"
            )
        raise WeatkitError(f"embeddings {spec.name!r}: file not found: {path}")
    return load_static(
        path,
        words=words,
        first_n=first_n,
        fmt=spec.fmt,
        name=spec.name,
        allow_pickle=allow_pickle,
        fasttext_oov=fasttext_oov,
    )
