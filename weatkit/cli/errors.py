"""How the ``weatkit`` commands talk to the user on stderr: notes, one-line errors, exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape

from weatkit.errors import WeatkitError, one_line
from weatkit.scoring.spec import mask_credentials

err_console = Console(stderr=True)


def fail(message: str) -> NoReturn:
    """Print ``weatkit: error: message`` on stderr and exit with status 1 (the user part of a
    URL in it masked: :func:`weatkit.scoring.spec.mask_credentials`)."""
    err_console.print(
        f"[bold red]weatkit: error:[/] {escape(mask_credentials(message))}",
        highlight=False,
        soft_wrap=True,
    )
    sys.exit(1)


#: Set to 1 to see the traceback of an internal error instead of its one-line report.
DEBUG_ENV = "WEATKIT_DEBUG"


def friendly(func: Callable[..., None]) -> Callable[..., None]:
    """Turn :class:`WeatkitError` into a one-line message and exit status 1.

    The last line of defence: any other exception (a bug, or a library error weatkit does not
    translate yet) prints ``weatkit: internal error: Type: message (please report; ...)`` and
    exits 1; with ``WEATKIT_DEBUG=1`` it propagates with its traceback.
    """

    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            func(*args, **kwargs)
        except WeatkitError as err:
            fail(str(err))
        except KeyboardInterrupt:
            fail("interrupted; no output was written")
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own usage errors and exits
        except Exception as err:
            if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
                raise
            err_console.print(
                f"[bold red]weatkit: internal error:[/] {escape(mask_credentials(one_line(err)))} "
                f"(please report; {DEBUG_ENV}=1 shows the traceback)",
                highlight=False,
                soft_wrap=True,
            )
            sys.exit(1)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def note(line: str) -> None:
    """One ``note:`` line on stderr, printed verbatim."""
    err_console.print(f"note: {line}", markup=False, highlight=False, soft_wrap=True)

