"""The exception types users see: a one-line message naming the file, line, key or word at fault.

Every error a user can cause is a :class:`WeatkitError`; the subclasses say which kind of input
was at fault so that callers (a grid recording a failed job, a test) can tell them apart. The
CLI prints ``str(err)`` and exits non-zero whatever the subclass.
"""


class WeatkitError(Exception):
    """A user-facing error. ``str(err)`` is a single line; the CLI prints it and exits non-zero."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class ConfigError(WeatkitError):
    """A bad option or configuration value (names the YAML key or the command-line flag).

    A library validator knows neither files nor flags: it names the option's ``field``
    (``ConfigError("must be >= 0", field="n_bootstrap")`` reads ``n_bootstrap: must be >= 0``).
    :mod:`weatkit.config.schema` replaces the field with the file's key path or the flag.

    Attributes:
        field: the option's field name, or None.
        problem: the message without the field.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        self.problem = " ".join(str(message).split())
        super().__init__(f"{field}: {self.problem}" if field else self.problem)


class ArgumentError(WeatkitError):
    """A bad argument of a public function (``weatkit.weat``, the association metrics,
    ``weatkit.iso``...); the message names the function and the argument
    (:mod:`weatkit.arguments` makes them)."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong kind: None, a string, an array of strings where vectors go."""


class ArgumentValueError(ArgumentError, ValueError):
    """An argument of the right kind that cannot be used: its shape, no rows, NaN, an all-zero
    vector, words missing from the vectors."""


class DataError(WeatkitError):
    """A missing, unreadable or malformed data file (names the file and line or row)."""


class ModelError(WeatkitError):
    """A model that cannot be loaded or used as asked (names the model and what is wrong)."""


class TextTooLongError(ModelError):
    """Texts longer than a model takes (the message names the first).

    Attributes:
        texts: every text too long, in the order given.
        limit: the model's length in tokens.
    """

    def __init__(self, message: str, *, texts: tuple[str, ...], limit: int) -> None:
        self.texts = texts
        self.limit = limit
        super().__init__(message)


class CoverageError(WeatkitError):
    """Too few list items in a vocabulary (names the test, set and words)."""


def one_line(err: BaseException) -> str:
    """A failure in one line: ``str(err)`` for a :class:`WeatkitError`, ``Type: first line of
    the message`` for any other exception (torch, transformers, numpy...), as a grid or
    ``compare`` records a failed job and the CLI reports an internal error."""
    if isinstance(err, WeatkitError):
        return str(err)
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__
