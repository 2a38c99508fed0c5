"""``weatkit ceat``: CEAT of WEAT tests on a transformer model with contexts from a corpus
(:func:`weatkit.ceat.ceat`; this module reads the options and prints or writes)."""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.ceat.plugin import SECTION as CEAT
from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import format_option, out_option
from weatkit.cli.sentence_options import (
    check_log_items,
    compat_option,
    compat_values,
    log_items_option,
)
from weatkit.cli.sentence_outputs import manifest_file
from weatkit.cli.tables import ci_header, fmt_p, with_ci
from weatkit.config.schema import CONTEXTUAL, ENGINE, LISTS, click_options, options_from_cli
from weatkit.errors import WeatkitError

_LISTS = ("lists", "langs", "tests", "min_coverage")
_ENGINE = ("seed", "device", "alternative", "confidence_level")
#: Not options of words in their contexts (the sentence is the template; --device: above).
_NOT_CONTEXTUAL = ("template", "span", "lower", "tensor_parallel", "device")


def _print(results: Any, level: float) -> None:
    view = Table(title="CEAT: combined effect size (CES) of the draws")
    for name in ("test", "layer", "words X/Y/A/B"):
        view.add_column(name)
    view.add_column(ci_header("CES", level, results["ci_low"]), justify="right")
    view.add_column("p", justify="right")
    view.add_column("draws: median [2.5%, 97.5%]", justify="right")
    for row in results.itertuples():
        view.add_row(
            f"{row.list_id} {row.test}",
            str(row.layer),
            f"{row.n_X}/{row.n_Y}/{row.n_A}/{row.n_B}",
            with_ci(row.ces, row.ci_low, row.ci_high),
            fmt_p(row.pvalue),
            with_ci(row.draws_p50, row.draws_p2_5, row.draws_p97_5),
        )
    Console().print(view)


@click.command("ceat")
@click.option(
    "--model",
    required=True,
    help="Hugging Face model (hub id or local directory) the words' vectors come from.",
)
@click.option(
    "--corpus",
    required=True,
    help="The contexts: a text file (one sentence or document per line; .gz read), a .jsonl "
    "file (the text under --text-field), or hf:DATASET[:CONFIG] (a datasets name or a local "
    "folder, streamed; --split).",
)
@click.option(
    "--layer",
    "layers",
    type=int,
    multiple=True,
    default=[-1],
    show_default=True,
    help="Hidden-state layer (-1 = last, as ceat.py); repeatable, all from one forward pass.",
)
@click_options(LISTS, only=_LISTS, defaults={"lists": ("caliskan",)})
@click_options(CEAT)
@click_options(
    ENGINE,
    only=_ENGINE,
    defaults={"alternative": "two-sided"},
    help_texts={
        "alternative": "Alternative of CES's z-test (the paper's two-sided; ceat.py: greater).",
        "confidence_level": "Level of CES's interval.",
        "seed": "Seeds the contexts' sample and the draws.",
        "device": "auto, cpu, cuda[:N] or mps: where the model and the draws run.",
    },
)
@click_options(
    CONTEXTUAL,
    only=[o.name for o in CONTEXTUAL.options if o.name not in _NOT_CONTEXTUAL],
)  # fmt: skip
@compat_option("ceat")
@out_option("Write results.csv, contexts.csv and manifest.json here.")
@log_items_option()
@format_option("Print the results in this format instead of the readable table.")
@click.option("--progress/--no-progress", default=None, help="Progress of the encoding.")
@friendly
def ceat_command(**opts: Any) -> None:
    """CEAT: WEATs drawn with one corpus context per word, pooled into a combined effect size
    (Guo & Caliskan, AIES 2021)."""
    from weatkit.ceat.options import CeatOptions
    from weatkit.ceat.run import ceat, draw_rows
    from weatkit.embeddings.contextual import ContextualOptions
    from weatkit.report.tables import render, write_outputs

    opts = compat_values("ceat", opts)
    check_log_items(opts)
    if len(set(opts["layers"])) != len(opts["layers"]):
        raise WeatkitError("a --layer is given twice")
    if not 0 < opts["confidence_level"] < 1:
        raise WeatkitError(f"--confidence must be in (0, 1), not {opts['confidence_level']}")
    run = ceat(
        opts["model"],
        opts["corpus"],
        lists=LISTS["lists"].from_cli(opts["lists"], "--lists"),
        langs=LISTS["langs"].from_cli(opts["langs"], "--lang"),
        tests=LISTS["tests"].from_cli(opts["tests"], "--test"),
        layers=opts["layers"],
        options=options_from_cli(CeatOptions, CEAT, opts),
        contextual=options_from_cli(ContextualOptions, CONTEXTUAL, opts),
        min_coverage=opts["min_coverage"],
        seed=opts["seed"],
        alternative=opts["alternative"],
        confidence_level=opts["confidence_level"],
        device=opts["device"],
        show_progress=opts["progress"],
    )
    for line in [*run.skipped, *run.dropped]:
        note(line)
    if opts["out_dir"]:
        files = {
            "results.csv": render(run.results, "csv"),
            "contexts.csv": render(run.contexts, "csv"),
            **manifest_file("ceat", None, opts["log_items"], **run.manifest,
                            compat=opts["compat"]),
        }  # fmt: skip
        if opts["log_items"]:
            files[f"draws.{opts['log_items']}"] = render(draw_rows(run), opts["log_items"])
        reads = [] if opts["corpus"].startswith("hf:") else [opts["corpus"]]
        for path in write_outputs(opts["out_dir"], files, reads=reads):
            err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(run.results, opts["fmt"]))
        sys.stdout.flush()
    else:
        _print(run.results, opts["confidence_level"])
