"""``weatkit cache info|clear``: what weatkit's caches hold (downloaded data, contextual vectors,
model scores), and removing them. The work is :mod:`weatkit.data.cache`'s; this only prints."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly
from weatkit.data.cache import CacheUsage, cache_info, clear_cache
from weatkit.data.paths import CACHE_KINDS, ENV_CACHE, cache_root, default_cache_root
from weatkit.errors import WeatkitError

_KIND = click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(CACHE_KINDS),
    help="Only this cache (data: verified downloads; vectors: contextual word vectors; "
    "scores: model scores of sentences); repeatable. Default: all.",
)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover


@click.group("cache")
def cache_command() -> None:
    """Show or clear weatkit's caches (downloaded data, contextual vectors, model scores)."""


@cache_command.command("info")
@_KIND
@friendly
def info_command(kinds: tuple[str, ...]) -> None:
    """Show the cache root and each cache folder with its number of files and size."""
    where = f"the default: ${ENV_CACHE} is unset" if default_cache_root() else f"${ENV_CACHE}"
    table = Table(title="weatkit caches")
    for column in ("kind", "files", "size", "path"):
        table.add_column(column, justify="right" if column in ("files", "size") else "left")
    for usage in cache_info(kinds or None):
        table.add_row(usage.kind, str(usage.files), _size(usage.bytes), str(usage.path))
    console = Console()
    console.print(f"cache root: {cache_root()} ({where})", markup=False, soft_wrap=True)
    console.print(table)


@cache_command.command("clear")
@_KIND
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Remove without asking (needed when stdin is not a terminal: scripts, CI).",
)
@friendly
def clear_command(kinds: tuple[str, ...], yes: bool) -> None:
    """Remove the cache folders (all kinds unless --kind), after asking on the terminal;
    --yes (-y) removes them without asking."""
    usages: list[CacheUsage] = cache_info(kinds or None)
    total = sum(u.bytes for u in usages)
    if not yes and not sys.stdin.isatty():
        raise WeatkitError(
            "cache clear asks before removing anything and stdin is not a terminal: pass --yes "
            "to remove the caches without asking"
        )
    if not yes:
        listing = ", ".join(f"{u.kind} ({u.files} files)" for u in usages)
        click.confirm(f"remove {listing}, {_size(total)} in all?", abort=True, err=True)
    removed = clear_cache(kinds or None)
    err_console.print(
        f"removed {', '.join(u.kind for u in removed)} ({_size(total)})", highlight=False
    )
