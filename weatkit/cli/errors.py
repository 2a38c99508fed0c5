"""How the ``weatkit`` commands talk to the user on stderr: notes, one-line errors, exit codes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from weatkit.errors import WeatkitError

err_console = Console(stderr=True)


def fail(message: str) -> None:
    """Print ``weatkit: error: message`` on stderr and exit with status 1."""
    err_console.print(
        f"[bold red]weatkit: error:[/] {escape(message)}", highlight=False, soft_wrap=True
    )
    sys.exit(1)


def friendly(func: Callable[..., None]) -> Callable[..., None]:
    """Turn :class:`WeatkitError` into a one-line message and exit status 1."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except WeatkitError as err:
            fail(str(err))
        except KeyboardInterrupt:
            fail("interrupted; no output was written")

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def note(line: str) -> None:
    """One ``note:`` line on stderr, printed verbatim."""
    err_console.print(f"note: {line}", markup=False, highlight=False, soft_wrap=True)

