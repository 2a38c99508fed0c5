"""How the ``openai`` backend talks to its server: :class:`OpenAIOptions`.

Kept apart from :mod:`weatkit.scoring.openai` (which imports the ``openai`` SDK, an optional
extra) so that the options every command builds (:class:`weatkit.embeddings.contextual.
ContextualOptions`, whose ``timeout``, ``max_retries`` and ``concurrency`` are the command line's
``--api-timeout``, ``--api-max-retries`` and ``--api-concurrency``) are validated by these rules
without the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

from weatkit.errors import ConfigError

#: The fields another options object may carry for the server (:meth:`OpenAIOptions.of`): the
#: ones the command line and the files set. ``batch_size`` is not one: a ``ContextualOptions``'
#: ``batch_size`` is the items of a forward pass (or ``auto``), not texts per request.
SERVER_FIELDS = ("timeout", "max_retries", "concurrency")


@dataclass(frozen=True)
class OpenAIOptions:
    """How the ``openai`` backend talks to its server.

    Attributes:
        timeout: seconds one request may take before it fails (and is retried).
        max_retries: retries of a request after a connection error, a timeout or a 408, 409,
            429 or 5xx answer, with exponential backoff (the SDK's; ``Retry-After`` honoured).
        concurrency: requests in flight at once.
        batch_size: texts per ``/v1/embeddings`` request.
        prompts_per_request: texts per ``/v1/completions`` request (a list prompt; llama.cpp's
            server takes one, vLLM and OpenAI several).
    """

    timeout: float = 60.0
    max_retries: int = 2
    concurrency: int = 4
    batch_size: int = 32
    prompts_per_request: int = 1

    @classmethod
    def of(cls, options: object | None) -> OpenAIOptions:
        """The server options of any options object: itself when it is one, else its
        :data:`SERVER_FIELDS` (those it lacks keep their defaults; e.g. a
        :class:`~weatkit.embeddings.contextual.ContextualOptions` built from ``--api-timeout``);
        None gives the defaults."""
        if isinstance(options, cls):
            return options
        return cls(**{name: getattr(options, name) for name in SERVER_FIELDS
                      if hasattr(options, name)})  # fmt: skip

    def validate(self) -> None:
        """:class:`ConfigError` naming the field of a non-positive timeout, a negative retry
        count, or a concurrency or batch size below 1."""
        timeout = self.timeout
        if isinstance(timeout, bool) or not (isinstance(timeout, int | float) and timeout > 0):
            raise ConfigError(f"must be a positive number of seconds, got {timeout!r}",
                              field="timeout")  # fmt: skip
        if not _whole(self.max_retries) or self.max_retries < 0:
            raise ConfigError(f"must be >= 0, got {self.max_retries!r}", field="max_retries")
        for name in ("concurrency", "batch_size", "prompts_per_request"):
            value = getattr(self, name)
            if not _whole(value) or value < 1:
                raise ConfigError(f"must be >= 1, got {value!r}", field=name)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
