"""Model specs: one syntax for a model behind any backend, parsed in one place.

=============================  =======================================================
spec                           model
=============================  =======================================================
``gpt2``, ``./my-model``       ``hf`` (the default backend): a hub id or a directory
``hf:ID_OR_DIR``               in process, Hugging Face transformers
``vllm:ID_OR_DIR``             vLLM's offline engine
``openai:BASE_URL#MODEL``      an OpenAI-compatible server at ``BASE_URL`` (``…/v1``),
                               model ``MODEL`` (e.g. ``openai:http://127.0.0.1:8080/v1#smollm2``)
``st:ID_OR_DIR``               a sentence-transformers model (sentence vectors only)
=============================  =======================================================

The backend names are :data:`weatkit.scoring.registry.BACKENDS`' keys. A spec never holds a
secret: API keys come from the environment only, and a URL with a user part
(``http://user:secret@host``) is refused. Whatever weatkit shows or records of a text that may
hold one (a refused spec, a command line, a tracking URI) goes through :func:`mask_credentials`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from weatkit.errors import ConfigError

#: Backends a spec can name; the registry holds their metadata.
BACKEND_NAMES = ("hf", "vllm", "openai", "st")
DEFAULT_BACKEND = "hf"
#: The user part of a URL (``user:secret@`` after ``://``).
_URL_USER = re.compile(r"(?<=://)[^/@\s]+@")


def mask_credentials(text: str) -> str:
    """``text`` with the user part of every URL in it replaced by ``***``.

    Examples:
        >>> mask_credentials("openai:http://me:sk-1@host/v1#m")
        'openai:http://***@host/v1#m'
    """
    return _URL_USER.sub("***@", text)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec.

    Attributes:
        backend: one of :data:`BACKEND_NAMES`.
        model: the hub id, directory, or the model name a server serves.
        base_url: the server's base URL (``openai`` only), without a trailing ``/``.
    """

    backend: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        if self.backend == "openai":
            return f"openai:{self.base_url}#{self.model}"
        return f"{self.backend}:{self.model}"

    @property
    def short_name(self) -> str:
        """The model's last path component (a column name in tables)."""
        return self.model.rstrip("/").rsplit("/", 1)[-1] or self.model


def parse_model_spec(text: str, *, option: str = "--model") -> ModelSpec:
    """Parse ``text`` (see the module docstring); a bad spec is a one-line
    :class:`~weatkit.errors.ConfigError` naming ``option``.

    Examples:
        >>> parse_model_spec("gpt2")
        ModelSpec(backend='hf', model='gpt2', base_url=None)
        >>> str(parse_model_spec("openai:http://127.0.0.1:8080/v1/#smollm2"))
        'openai:http://127.0.0.1:8080/v1#smollm2'
    """
    text = text.strip()
    if not text:
        raise ConfigError(f"{option}: empty model spec")
    shown = mask_credentials(text)
    backend, sep, rest = text.partition(":")
    if not sep or backend not in BACKEND_NAMES:
        if sep and backend.isidentifier() and len(backend) > 1 and not rest.startswith("\\"):
            raise ConfigError(
                f"{option} {shown!r}: unknown backend {backend!r}: choose from "
                f"{', '.join(BACKEND_NAMES)} (BACKEND:MODEL), or give a hub id or directory"
            )
        return ModelSpec(DEFAULT_BACKEND, text)  # a bare id, a path (also C:\\ on Windows)
    if backend == "openai":
        url, hash_sep, model = rest.partition("#")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(
                f"{option} {shown!r}: openai needs a base URL such as "
                "openai:http://127.0.0.1:8080/v1#MODEL"
            )
        if not hash_sep or not model.strip():
            raise ConfigError(
                f"{option} {shown!r}: name the served model after '#' "
                "(openai:BASE_URL#MODEL)"
            )
        if parts.username or parts.password:
            raise ConfigError(
                f"{option} {shown!r}: no credentials in the URL; the API key comes from "
                "$WEATKIT_OPENAI_API_KEY or $OPENAI_API_KEY"
            )
        return ModelSpec("openai", model.strip(), url.rstrip("/"))
    if not rest.strip():
        raise ConfigError(f"{option} {shown!r}: name a model after '{backend}:'")
    return ModelSpec(backend, rest.strip())
