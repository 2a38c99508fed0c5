"""``weatkit run``: association tests on word vectors, printed or written as a run directory."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import (
    allow_pickle_option,
    contextual_from_opts,
    contextual_options,
    device_option,
    format_option,
    iso_from_opts,
    iso_options,
    list_options,
    model_specs,
    out_option,
    progress_option,
    split_values,
)
from weatkit.cli.tables import rich_correlations, rich_summary
from weatkit.config.schema import ENGINE, LISTS, LOADING, Source, named_by
from weatkit.engine.compat import COMPAT_PRESETS
from weatkit.engine.similarity import METRICS
from weatkit.engine.weat import ALTERNATIVES, CI_METHODS, EngineOptions
from weatkit.errors import WeatkitError
from weatkit.pipeline import RunConfig, RunResult, run
from weatkit.report.run_dir import run_tables, write_run_dir
from weatkit.report.tables import render

_MAX_SKIPPED_SHOWN = 3


@click.command("run")
@list_options()
@click.option(
    "--embeddings",
    "embeddings",
    multiple=True,
    default=["glove-6b-50d"],
    show_default=True,
    help="NAME=PATH (PATH may contain {lang}), a path, glove-6b-50d, or a transformer "
    "model NAME=hf:MODEL@LAYERS (e.g. XLM-R11=hf:xlm-roberta-large@11); repeatable.",
)
@click.option(
    "--lower/--no-lower",
    default=None,
    help="Lower-case list items (default: only for uncased embeddings such as GloVe).",
)
@click.option("--strip-accents", is_flag=True, help="Remove diacritics from list items.")
@click.option(
    "--min-coverage",
    type=float,
    default=0.8,
    show_default=True,
    help="Fraction of each set's items that must be in the vocabulary.",
)
@click.option(
    "--equalize",
    type=click.Choice(["none", "truncate", "subsample"]),
    default="none",
    show_default=True,
    help="Equalise set sizes after OOV removal.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail on the first test with too low coverage instead of skipping it.",
)
@click.option("--metric", type=click.Choice(METRICS), default="cosine", show_default=True)
@click.option(
    "--ddof",
    type=click.IntRange(0, 1),
    default=1,
    show_default=True,
    help="Std of Cohen's d: 1 = Caliskan et al.; 0 = WEFE, XWEAT, CA-WEAT code.",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=5000,
    show_default=True,
    help="Bootstrap resamples for the CIs (0: off).",
)
@click.option(
    "--permutations",
    type=click.IntRange(min=0),
    default=10000,
    show_default=True,
    help="Monte Carlo permutations for the p-value (0: off).",
)
@click.option(
    "--max-exact",
    type=click.IntRange(min=0),
    default=1_000_000,
    show_default=True,
    help="Enumerate all splits of X∪Y when there are at most this many.",
)
@click.option(
    "--alternative", type=click.Choice(ALTERNATIVES), default="greater", show_default=True
)
@click.option(
    "--ci", "ci_method", type=click.Choice(CI_METHODS), default="percentile", show_default=True
)
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@device_option()
@click.option(
    "--compat",
    type=click.Choice(sorted(COMPAT_PRESETS)),
    help="Use a reference tool's conventions (ddof, equalisation, ...).",
)
@allow_pickle_option("Allow pickle-based formats (gensim .kv).")
@click.option(
    "--fasttext-oov", is_flag=True, help="Build vectors of OOV words from fastText .bin sub-words."
)
@out_option("Write results.csv, summary.csv and manifest.json here.")
@format_option("Print a table to stdout in this format instead of the readable table.")
@click.option(
    "--table",
    type=click.Choice(["results", "summary", "isomorphism", "correlations"]),
    default="results",
    show_default=True,
    help="Which table --format prints.",
)
@click.option("--verbose", "-v", is_flag=True, help="Show every normalisation note.")
@progress_option()
@click.option(
    "--isomorphism",
    metavar="LANG",
    help="Add EV/GH isomorphism of each language's space to LANG's (e.g. en) to the summary, "
    "and their correlation with effect sizes.",
)
@click.option(
    "--iso-words",
    help="Word list per language, PATH with {lang}: each language's vocabulary for spaces "
    "shared by all languages (joint files, hf: models).",
)
@iso_options("iso-")
@contextual_options
@click.pass_context
@friendly
def run_command(ctx: click.Context, **opts: Any) -> None:
    """Run association tests and print or write the results."""
    if opts["compat"]:
        for key, value in COMPAT_PRESETS[opts["compat"]].items():
            if ctx.get_parameter_source(key) != ParameterSource.COMMANDLINE:
                opts[key] = value
    with named_by(Source.command_line(), ENGINE):  # messages name the flags
        engine = EngineOptions(
            metric=opts["metric"],
            ddof=opts["ddof"],
            n_bootstrap=opts["bootstrap"],
            n_permutations=opts["permutations"],
            max_exact=opts["max_exact"],
            alternative=opts["alternative"],
            ci_method=opts["ci_method"],
            confidence_level=opts["confidence"],
            seed=opts["seed"],
            device=opts["device"],
        )
        engine.validate()
    embeddings = list(opts["embeddings"])
    if opts["models"] and ctx.get_parameter_source("embeddings") != ParameterSource.COMMANDLINE:
        embeddings = []  # --model alone replaces the GloVe default
    with named_by(Source.command_line(), LISTS, LOADING):
        config = RunConfig(
            lists=split_values(opts["lists"]),
            langs=split_values(opts["langs"]) or None,
            tests=split_values(opts["tests"]) or None,
            embeddings=(*embeddings, *model_specs(opts)),
            lower=opts["lower"],
            strip_accents=opts["strip_accents"],
            min_coverage=opts["min_coverage"],
            equalize=opts["equalize"],
            strict=opts["strict"],
            allow_pickle=opts["allow_pickle"],
            fasttext_oov=opts["fasttext_oov"],
            engine=engine,
            contextual=contextual_from_opts(opts),
            isomorphism=opts["isomorphism"],
            iso=iso_from_opts(opts, "iso-"),
            iso_words=opts["iso_words"],
        )
    result = run(config, show_progress=opts["progress"])
    _report(result, opts["verbose"])
    tables = run_tables(result)
    if opts["out_dir"]:
        written = write_run_dir(result, opts["out_dir"])
        err_console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False)
    if opts["fmt"]:
        if opts["table"] not in tables:
            raise WeatkitError(f"--table {opts['table']} needs --isomorphism LANG")
        sys.stdout.buffer.write(render(tables[opts["table"]], opts["fmt"]))
        sys.stdout.flush()
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)
        console.print(rich_summary(result.summary, config.engine.confidence_level))
        if config.isomorphism:
            console.print(rich_correlations(result.correlations))


def _report(result: RunResult, verbose: bool) -> None:
    """Notes and skipped tests on stderr, one line each (the tables go to stdout).

    Per-item normalisation notes (duplicates, overlaps) are counted unless ``verbose``; the
    manifest always lists them all.
    """
    per_item = [line for line in result.report if _is_item_note(line)]
    for line in result.report:
        if verbose or line not in per_item:
            note(line)
    if per_item and not verbose:
        err_console.print(
            f"note: {len(per_item)} per-item notes (duplicates, items in two sets): --verbose "
            "shows them; --out writes them to manifest.json",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for skip in result.skipped[:_MAX_SKIPPED_SHOWN]:
        err_console.print(
            f"skipped: {skip['reason']}", markup=False, highlight=False, soft_wrap=True
        )
    rest = result.skipped[_MAX_SKIPPED_SHOWN:]
    if rest:
        per_lang = Counter(f"{s['embeddings']}/{s['lang']}" for s in rest)
        counts = ", ".join(f"{key} {n}" for key, n in per_lang.most_common())
        err_console.print(
            f"skipped: {len(rest)} more ({counts}); --out writes every reason to manifest.json",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    n_run = len(result.results)
    err_console.print(f"{n_run} test(s) run, {len(result.skipped)} skipped", highlight=False)


def _is_item_note(line: str) -> bool:
    return line.startswith(("warning:", "note:"))
