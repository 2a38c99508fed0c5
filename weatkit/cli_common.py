"""Helpers shared by the ``weatkit`` commands: stderr console, option splitting, error exits."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from weatkit.errors import WeatkitError

err_console = Console(stderr=True)


def split_values(values: Sequence[str]) -> tuple[str, ...]:
    """Repeatable options that also accept comma-separated values."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


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


def list_options(
    default_lists: Sequence[str] | None = ("ca-weat",), when: str = ""
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--lists``, ``--lang`` and ``--test``: which tests, and so which items, a command uses.

    Args:
        default_lists: ``--lists`` default (None: no default, e.g. when a run directory's
            manifest says which lists).
        when: prefix of the help texts (e.g. ``"Without RUN_DIR: "``).
    """
    options = [
        click.option(
            "--lists",
            "lists",
            multiple=True,
            default=list(default_lists) if default_lists else None,
            show_default=bool(default_lists),
            help=f"{when}list sets (weat, ca-weat, ca-weat:v3, x-weat, caliskan) or list files "
            "(.json/.yaml/.tsv); repeatable or comma-separated.",
        ),
        click.option(
            "--lang",
            "langs",
            multiple=True,
            help="Languages or list ids to keep (default: all); repeatable or comma-separated.",
        ),
        click.option("--test", "tests", multiple=True, help="Test ids to keep, e.g. weat1."),
    ]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate
