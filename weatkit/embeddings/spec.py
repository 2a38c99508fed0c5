"""Embeddings specs from the command line: ``NAME=PATH``, ``PATH`` or ``glove-6b-50d``.

A path may contain ``{lang}``, replaced by the language code of each list (one file per
language, e.g. ``WP=vecs/wiki.{lang}.vec``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from weatkit.embeddings.default import DEFAULT_EMBEDDINGS, UNCASED_DEFAULT, load_default
from weatkit.embeddings.loader_utils import default_name
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

LANG_PLACEHOLDER = "{lang}"
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_SEPARATORS = ("/", "\\")


@dataclass(frozen=True)
class EmbeddingsSpec:
    """Which embeddings to use, under which name.

    Attributes:
        name: label in result tables.
        location: a path (may contain ``{lang}``), or ``"glove-6b-50d"`` for the default.
        fmt: file format passed to :func:`weatkit.embeddings.static.load_static`.
    """

    name: str
    location: str
    fmt: str = "auto"

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


def parse_embeddings_spec(text: str) -> EmbeddingsSpec:
    """Parse ``NAME=PATH``, ``PATH`` (name = file stem) or ``glove-6b-50d``.

    ``=`` separates a name only when the part before it has no path separator, so a path such
    as ``dir/a=b.vec`` is read as a path.

    Raises:
        WeatkitError: empty spec, name or path, or a placeholder other than ``{lang}``.
    """
    if not isinstance(text, str):
        raise WeatkitError(f"embeddings spec must be text, got {type(text).__name__}")
    spec = text.strip()
    if not spec:
        raise WeatkitError("empty embeddings spec (expected NAME=PATH, PATH or glove-6b-50d)")
    name: str | None = None
    location = spec
    head, sep, tail = spec.partition("=")
    if sep and not any(s in head for s in _SEPARATORS):
        name, location = head.strip(), tail.strip()
        if not name:
            raise WeatkitError(f"embeddings spec {text!r}: empty name before '='")
        if not location:
            raise WeatkitError(f"embeddings spec {text!r}: empty path after '='")
    if location.lower() == DEFAULT_EMBEDDINGS:
        return EmbeddingsSpec(name=name or DEFAULT_EMBEDDINGS, location=DEFAULT_EMBEDDINGS)
    _check_placeholders(location, text)
    if name is None:
        name = _name_from_path(location)
    if not name or location.endswith(_SEPARATORS) or not Path(location).name:
        raise WeatkitError(f"embeddings spec {text!r}: no file name in the path")
    return EmbeddingsSpec(name=name, location=location)


def load_embeddings(
    spec: EmbeddingsSpec,
    lang: str,
    *,
    words: Iterable[str] | None = None,
    first_n: int = 0,
    allow_pickle: bool = False,
    fasttext_oov: bool = False,
) -> WordVectors:
    """Load the embeddings of ``spec`` for language ``lang`` (name set to ``spec.name``)."""
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
