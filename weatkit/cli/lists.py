"""``weatkit lists``: the list sets, or the languages, lists and tests of one set.

Light on purpose: it imports neither torch nor pandas (``tests/test_cli_imports.py``).
"""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from weatkit.association.options import METRICS, PAIR_METRICS
from weatkit.cli.errors import friendly
from weatkit.lists.model import natural_key
from weatkit.lists.sources import LIST_SETS, canonical_name, load_list_set, select_lists
from weatkit.lists.weathub import DEFAULT_VARIANT, VARIANTS, list_set_name


@click.command("lists")
@click.argument("list_set", required=False)
@friendly
def lists_command(list_set: str | None) -> None:
    """Show the list sets, or the languages, lists and tests of one set (or list file)."""
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
    tests_per_lang: dict[str, set[str]] = {}
    for test in tests:
        per_lang.setdefault(test.lang, set()).add(test.list_id)
        tests_per_lang.setdefault(test.lang, set()).add(test.test)
    name = canonical_name(list_set) or list_set
    caption = None
    if name.startswith("weathub:"):
        caption = "variants (source of WEAT 1, 2, 6-9): " + ", ".join(
            list_set_name(v) + " (default: weathub)" * (v == DEFAULT_VARIANT) for v in VARIANTS
        )
    table = Table(title=f"{name}: {len(tests)} tests in {len(per_lang)} languages", caption=caption)
    for col in ("lang", "lists", "list ids", "tests"):
        table.add_column(col)
    for lang in sorted(per_lang):
        ids = sorted(per_lang[lang], key=natural_key)
        test_ids = ", ".join(sorted(tests_per_lang[lang], key=natural_key))
        table.add_row(lang, str(len(ids)), ", ".join(ids), test_ids)
    console.print(table)
    selection = select_lists([list_set])
    placeholders = [line for line in selection.report if "upstream placeholder" in line]
    if placeholders:
        console.print(f"{len(placeholders)} placeholder item(s) dropped", markup=False)
    console.print(selection.report[-1], markup=False, highlight=False, soft_wrap=True)
    for _, reason in selection.skipped:
        console.print(f"skipped: {reason}", markup=False, highlight=False, soft_wrap=True)
    console.print(metrics_line(tests), markup=False, highlight=False, soft_wrap=True)


def metrics_line(tests: list) -> str:
    """What ``weatkit run --metrics`` computes on these tests: every metric takes a WEAT-style
    test (X, Y, A, B); RIPA and DirectBias also need the test's definitional pairs."""
    every = [m for m in METRICS if m not in PAIR_METRICS]
    with_pairs = sum(1 for t in tests if t.pairs)
    return (
        f"metrics (weatkit run --metrics): {', '.join(every)} on every test; "
        f"{', '.join(PAIR_METRICS)} need definitional pairs: {with_pairs} of {len(tests)} tests "
        "have them (a list file's pairs)"
    )
