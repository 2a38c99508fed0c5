"""``weatkit asymmetry``: effect sizes of a run against the pleasant/unpleasant attribute counts.

CA-WEAT paper §5 and Figure 3 (see :mod:`weatkit.asymmetry` for what is counted)::

    weatkit asymmetry RUN_DIR                                # counts from wordfreq
    weatkit asymmetry RUN_DIR --corpus 'corpus.{lang}.txt'   # counts in a corpus per language
    weatkit asymmetry RUN_DIR --corpus en=cc.en.txt.gz --corpus de=cc.de.txt.xz --out DIR
    weatkit asymmetry --lists x-weat --lang en --lang de     # the counts only, no run
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import pandas as pd
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

from weatkit.asymmetry import (
    KEYS,
    WORDFREQ,
    CountSource,
    asymmetry_correlations,
    asymmetry_table,
    attribute_counts,
)
from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import format_option, out_option
from weatkit.cli.tables import rich_correlation_table
from weatkit.config.schema import LISTS, click_options, split_names
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.report.run_dir import read_run_results
from weatkit.report.tables import render, write_outputs

_LANG_PATH = re.compile(r"([A-Za-z]{2,3}(?:[-_][A-Za-z0-9]+)*)=(.+)")


def parse_corpus_options(values: Sequence[str]) -> CountSource:
    """``--corpus`` values: none (wordfreq), ``wordfreq``, one path (``{lang}`` allowed) or
    ``LANG=PATH`` entries, one per language."""
    if not values:
        return WORDFREQ
    pairs = [_LANG_PATH.fullmatch(value) for value in values]
    if all(pairs):
        mapping = {m.group(1): m.group(2) for m in pairs if m}
        if len(mapping) < len(pairs):
            raise WeatkitError("--corpus: a language is given more than once")
        return mapping
    if len(values) > 1:
        raise WeatkitError(
            "--corpus: give one path (with {lang}) or LANG=PATH entries, one per language"
        )
    return values[0]


def _run_tests(config: dict[str, Any], opts: dict[str, Any]) -> list[AssociationTest]:
    """The run's tests, selected and normalised as the run did, phrases kept with spaces."""
    norm = Normalization(
        lower=bool(config.get("lower")),
        strip_accents=bool(config.get("strip_accents")),
        join_phrases=None,
        accent_removal=config.get("accent_removal", "marks"),
        duplicates=config.get("duplicates", "drop"),
        invisible=config.get("invisible", "drop"),
    )
    selection = select_lists(
        config["lists"],
        split_names(opts["langs"], "--lang") or config.get("langs"),
        normalization=norm,
        tests=split_names(opts["tests"], "--test") or config.get("tests"),
    )
    return selection.tests


def _with_results(tests: list[AssociationTest], results: pd.DataFrame) -> list[AssociationTest]:
    """The tests that have a row in ``results``."""
    ran = set(results[KEYS].itertuples(index=False, name=None))
    kept = [t for t in tests if (t.lang, t.list_set, t.list_id, t.test) in ran]
    if not kept:
        raise WeatkitError("results.csv has no row for the lists of the run's manifest")
    return kept


def _print(table: pd.DataFrame, fmt: str | None, view: Callable[[pd.DataFrame], Table]) -> None:
    if fmt:
        sys.stdout.buffer.write(render(table, fmt))
        sys.stdout.flush()
        return
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(view(table))


def _count(value: float) -> str:
    return f"{value:,.6g}"


def _counts_view(counts: pd.DataFrame) -> Table:
    table = Table(title="Attribute counts: pleasant (A) and unpleasant (B)")
    for col in ("lang", "list set", "list id", "test", "count A", "count B", "A − B", "source"):
        table.add_column(col, justify="right" if col.startswith(("count", "A")) else "left")
    for row in counts.itertuples(index=False):
        table.add_row(
            row.lang,
            row.list_set,
            row.list_id,
            row.test,
            _count(row.count_a),
            _count(row.count_b),
            _count(row.count_difference),
            row.counts_source,
        )
    return table


def _correlations_view(correlations: pd.DataFrame, confidence_level: float) -> Table:
    """The correlations with their permutation p, † on rows with too few lists (and the
    reason under the table), as ``asymmetry_correlations.csv`` flags them."""
    return rich_correlation_table(
        correlations,
        title="Effect size vs count(A) − count(B) across lists (CA-WEAT paper Fig. 3)",
        keys={"embeddings": "embeddings", "test": "test", "list sets": "list_sets"},
        n=("n", "n"),
        units="lists",
        confidence_level=confidence_level,
    )


def _write(out_dir: str, tables: dict[str, pd.DataFrame]) -> None:
    files = {f"{name}.csv": render(table, "csv") for name, table in tables.items()}
    written = write_outputs(out_dir, files)
    err_console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False)


def _run_mode(run_dir: Path, source: CountSource, opts: dict[str, Any]) -> None:
    results, config = read_run_results(run_dir)
    tests = _with_results(_run_tests(config, opts), results)
    counts = attribute_counts(tests, source, lower=opts["lower"])
    table = asymmetry_table(results, counts)
    if len(table) < len(results):
        note(f"{len(results) - len(table)} result row(s) without a counted list left out")
    correlations = asymmetry_correlations(table)
    tables = {"asymmetry": table, "asymmetry_correlations": correlations}
    _write(opts["out_dir"] or str(run_dir), tables)
    engine = config.get("engine") or {}
    level = float(engine.get("confidence_level", 0.95))
    _print(correlations, opts["fmt"], lambda table: _correlations_view(table, level))


def _lists_mode(source: CountSource, opts: dict[str, Any]) -> None:
    selection = select_lists(
        split_names(opts["lists"], "--lists") or ["ca-weat"],
        split_names(opts["langs"], "--lang") or None,
        normalization=Normalization(join_phrases=None),
        tests=split_names(opts["tests"], "--test") or None,
    )
    counts = attribute_counts(selection.tests, source, lower=opts["lower"])
    if opts["out_dir"]:
        _write(opts["out_dir"], {"attribute_counts": counts})
    _print(counts, opts["fmt"], _counts_view)


@click.command("asymmetry")
@click.argument("run_dir", required=False, type=click.Path(file_okay=False))
@click_options(
    LISTS,
    only=("lists", "langs", "tests"),
    help_texts={"lists": "Without RUN_DIR: l" + LISTS["lists"].help.removeprefix("L")},
    defaults={"lists": None},
)
@click.option(
    "--corpus",
    "corpus",
    multiple=True,
    help="Count in this corpus (plain, .gz, .bz2, .xz): PATH with {lang}, or LANG=PATH "
    "(repeatable) [default: wordfreq frequencies per million words].",
)
@click.option(
    "--lower/--no-lower",
    default=True,
    show_default=True,
    help="Lower-case corpus tokens and items before counting.",
)
@out_option(
    "Write asymmetry.csv and asymmetry_correlations.csv here [default: RUN_DIR]; "
    "without RUN_DIR, attribute_counts.csv."
)
@format_option()
@click.pass_context
@friendly
def asymmetry_command(ctx: click.Context, **opts: Any) -> None:
    """Relate effect sizes to the asymmetry of pleasant/unpleasant attribute counts.

    With RUN_DIR (written by weatkit run --out), join its results.csv with count(A) − count(B)
    of each list and correlate them per embeddings and test (CA-WEAT paper §5, Figure 3).
    Without RUN_DIR, print the counts of the lists chosen by --lists/--lang/--test.
    """
    source = parse_corpus_options(opts["corpus"])
    if opts["run_dir"] is None:
        _lists_mode(source, opts)
        return
    if ctx.get_parameter_source("lists") == ParameterSource.COMMANDLINE:
        raise WeatkitError("--lists is taken from RUN_DIR/manifest.json; give it without RUN_DIR")
    _run_mode(Path(opts["run_dir"]), source, opts)
