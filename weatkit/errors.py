"""The one exception type users see: a one-line message naming the file, line or word at fault."""


class WeatkitError(Exception):
    """A user-facing error. ``str(err)`` is a single line; the CLI prints it and exits non-zero."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
