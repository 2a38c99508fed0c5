"""``weatkit lists``: the list sets, or the languages and lists of one set.

Light on purpose: it imports neither torch nor pandas (``tests/test_cli_imports.py``).
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import friendly
from weatkit.lists.model import natural_key
from weatkit.lists.sources import LIST_SETS, load_list_set


@click.command("lists")
@click.argument("list_set", required=False)
@friendly
def lists_command(list_set: str | None) -> None:
    """Show the list sets, or the languages and lists of one set (or list file)."""
    console = Console()
    if list_set is None:
        table = Table(title="List sets (weatkit run --lists NAME)")
        table.add_column("name")
        table.add_column("what")
        for name, description in LIST_SETS.items():
            table.add_row(name, description)
        console.print(table)
        return
    tests = load_list_set(list_set)
    per_lang: dict[str, set[str]] = {}
    for test in tests:
        per_lang.setdefault(test.lang, set()).add(test.list_id)
    table = Table(title=f"{list_set}: {len(tests)} tests")
    for col in ("lang", "lists", "list ids"):
        table.add_column(col)
    for lang in sorted(per_lang):
        ids = sorted(per_lang[lang], key=natural_key)
        table.add_row(lang, str(len(ids)), ", ".join(ids))
    console.print(table)
