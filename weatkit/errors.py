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
    """A bad option or configuration value (names the YAML key or the command-line flag)."""


class DataError(WeatkitError):
    """A missing, unreadable or malformed data file (names the file and line or row)."""


class ModelError(WeatkitError):
    """A model that cannot be loaded or used as asked (names the model and what is wrong)."""


class CoverageError(WeatkitError):
    """Too few list items in a vocabulary (names the test, set and words)."""
