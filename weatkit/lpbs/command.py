"""``weatkit lpbs``: the log-probability bias score of a masked LM (Kurita et al. 2019) on the
tests of list sets or files; the library is :mod:`weatkit.lpbs` (:func:`weatkit.lpbs.run.
run_lpbs`), this module reads the options and prints or writes."""

from __future__ import annotations

import sys
from functools import partial
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import format_option, language_model_options, out_option
from weatkit.cli.sentence_options import (
    check_log_items,
    compat_option,
    compat_values,
    log_items_option,
    resampling_options,
)
from weatkit.cli.sentence_outputs import item_log_file, manifest_file, model_record
from weatkit.cli.tables import ci_header, fmt_p, with_ci
from weatkit.config.schema import CONTEXTUAL, LISTS, click_options, options_from_cli
from weatkit.errors import WeatkitError
from weatkit.lpbs.plugin import SECTION as LPBS


def _print_summary(summary: Any, level: float) -> None:
    view = Table(title=f"LPBS of {summary['model'].iloc[0]}")
    for name in ("test", "masked", "inserted", "units"):
        view.add_column(name)
    view.add_column(ci_header("S", level, summary["statistic_low"]), justify="right")
    view.add_column(ci_header("d", level, summary["effect_size_low"]), justify="right")
    view.add_column("p", justify="right")
    for row in summary.itertuples():
        view.add_row(
            f"{row.list_id}/{row.test}" if row.list_id != row.list_set else row.test,
            row.masked,
            row.inserted,
            f"{row.n_a} + {row.n_b} {row.unit}s",
            with_ci(row.statistic, row.statistic_low, row.statistic_high),
            with_ci(row.effect_size, row.effect_size_low, row.effect_size_high),
            fmt_p(row.pvalue),
        )
    console = Console()
    console.print(view)
    console.print(
        "S > 0: the first masked group is raised more by the first inserted set (X with A).",
        highlight=False,
    )


@click.command("lpbs")
@language_model_options(
    "Masked LM to evaluate: hf:ID_OR_DIR, a hub id or a directory.",
    "Sentences per forward pass.",
    required=True,
)
@click_options(
    LISTS,
    only=["lists", "langs", "tests"],
    defaults={"lists": None},
    help_texts={"lists": "List sets or list files (.json/.yaml/.tsv) holding the tests."},
)
@click_options(LPBS)
@resampling_options(
    n_bootstrap=5000,
    seed=0,
    confidence_level=0.95,
    bootstrap_help="Bootstrap resamples of the intervals of S and d (0: none).",
)
@compat_option("lpbs")
@out_option("Write summary.csv, scores.csv, words.csv and manifest.json here.")
@log_items_option()
@format_option("Print the summary in this format instead of the readable table.")
@friendly
def lpbs_command(**opts: Any) -> None:
    """LPBS: log-probability bias score of a masked LM on association tests (Kurita et al.,
    GeBNLP 2019)."""
    opts = compat_values("lpbs", opts)
    check_log_items(opts)
    if not opts["lists"]:  # before the model is loaded
        raise WeatkitError("give --lists (e.g. --lists caliskan --test weat6, or a list file)")
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.lpbs.items import lpbs_items
    from weatkit.lpbs.options import LpbsOptions
    from weatkit.lpbs.run import run_lpbs
    from weatkit.report.tables import render, write_outputs

    settings = options_from_cli(LpbsOptions, LPBS, opts)
    options = options_from_cli(ContextualOptions, CONTEXTUAL, opts)
    selection = {k: LISTS[k].from_cli(opts[k], LISTS[k].flag or k) for k in ("langs", "tests")}
    lists = LISTS["lists"].from_cli(opts["lists"], "--lists")
    run = run_lpbs(
        opts["model"],
        lists,
        langs=selection["langs"],
        tests=selection["tests"],
        confidence_level=opts["confidence"],
        options=options,
        n_bootstrap=opts["n_bootstrap"],
        seed=opts["seed"],
        show_progress=opts["progress"],
        **vars(settings),
    )
    for line in run.report:
        note(line)
    summary = run.summary
    if opts["out_dir"]:
        files = {
            "summary.csv": render(summary, "csv"),
            "scores.csv": render(run.scores, "csv"),
            "words.csv": render(run.words, "csv"),
            **manifest_file(
                "lpbs",
                None,
                opts["log_items"],
                contextual=model_record(opts),
                lpbs={**vars(settings), "n_bootstrap": opts["n_bootstrap"], "seed": opts["seed"]},
                sources=run.sources,
            ),
            **item_log_file(opts, partial(lpbs_items, run, model=opts["model"])),
        }
        for path in write_outputs(opts["out_dir"], files, reads=lists):
            err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(summary, opts["fmt"]))
        sys.stdout.flush()
    else:
        _print_summary(summary, opts["confidence"])
