"""``weatkit run``: association tests on word vectors, printed or written as a run directory."""

from __future__ import annotations

import sys
from dataclasses import asdict, replace
from itertools import islice
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import (
    check_table,
    format_option,
    model_options,
    model_specs,
    out_option,
    progress_option,
    verbose_option,
)
from weatkit.cli.study_options import (
    log_tracking,
    tracking,
    tracking_options,
)
from weatkit.cli.tables import rich_association, rich_correlations, rich_pooled, rich_summary
from weatkit.config.run import run_config_from_cli
from weatkit.config.schema import (
    ASSOCIATION,
    ENGINE,
    ISO,
    LISTS,
    LOADING,
    METRICS,
    POOLING,
    click_options,
)
from weatkit.errors import WeatkitError
from weatkit.pipeline import RunResult, reliability_line, run, skipped_metric_lines
from weatkit.report.run_dir import requested_tables, run_tables, write_run_dir
from weatkit.report.tables import render

_SELECTION = ("lists", "langs", "tests")


@click.command("run")
@click_options(LISTS, only=_SELECTION)
@click.option(
    "--embeddings",
    "embeddings",
    multiple=True,
    default=["glove-6b-50d"],
    show_default=True,
    help="NAME=PATH (PATH may contain {lang}), a path, glove-6b-50d, or a transformer "
    "model NAME=hf:MODEL@LAYERS (e.g. XLM-R11=hf:xlm-roberta-large@11), or an embeddings "
    "API NAME=openai:BASE_URL#MODEL; repeatable.",
)
@click_options(LISTS, only=[o.name for o in LISTS.options if o.name not in _SELECTION])
@click_options(ENGINE)
@click_options(LOADING)
@click_options(POOLING)
@click_options(METRICS)
@click_options(ASSOCIATION)
@out_option("Write results.csv, summary.csv and manifest.json here.")
@click.option(
    "--force", is_flag=True, help="Overwrite the run already in --out (else it is refused)."
)
@format_option("Print a table to stdout in this format instead of the readable table.")
@click.option(
    "--table",
    type=click.Choice(
        [
            *("results", "summary", "isomorphism", "correlations", "pooled", "influence", "null"),
            *("association", "association_items", "association_influence"),
            "association_pooled",
            "reliability",
        ]
    ),
    default="results",
    show_default=True,
    help="Which table --format prints.",
)
@verbose_option("every normalisation note and ")
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
@click_options(ISO, prefix="iso-")
@model_options(exclude=("device", "allow_pickle"))  # --device and --allow-pickle: above
@tracking_options()
@click.pass_context
@friendly
def run_command(ctx: click.Context, **opts: Any) -> None:
    """Run association tests and print or write the results."""
    if opts["force"] and not opts["out_dir"]:
        raise WeatkitError("--force is for --out DIR (overwrite the run written there)")
    if opts["mlflow"] is not None and not opts["out_dir"]:
        raise WeatkitError("--mlflow logs the run directory: give --out DIR")
    if opts["out_dir"] and not opts["force"]:
        _refuse_previous_run(Path(opts["out_dir"]))
    embeddings = list(opts["embeddings"])
    if opts["models"] and ctx.get_parameter_source("embeddings") != ParameterSource.COMMANDLINE:
        embeddings = []  # --model alone replaces the GloVe default
    explicit = {k for k in opts if ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE}
    config = run_config_from_cli(
        opts, embeddings=(*embeddings, *model_specs(opts)), explicit=explicit
    )
    if opts["table"] not in [*requested_tables(asdict(replace(config, embeddings=()))),
                             *(("reliability",) if config.reliability else ())]:  # fmt: skip
        raise WeatkitError(f"--table {opts['table']} needs {_TABLE_NEEDS[opts['table']]}")
    check_table(opts)
    tracked = tracking(opts)  # an MLflow store that cannot be written: refused before the run
    result = run(config, show_progress=opts["progress"])
    if "compat" in result.manifest:  # a preset's values, and the options given instead
        err_console.print(
            result.manifest["compat"]["line"], markup=False, highlight=False, soft_wrap=True
        )
    _report(result, opts["verbose"])
    if config.engine.influence and "weat" in config.metrics:
        _print_influence(result.influence, written_to=opts["out_dir"])
    if config.engine.null:
        where = "null.csv has every draw" if opts["out_dir"] else "--out writes null.csv"
        _err_line(
            f"null baseline: {config.engine.null} frequency-matched random X/Y pairs per test; "
            f"results have null_mean, null_sd, null_percentile, p_null; {where}"
        )
    if len(result.reliability):
        where = "reliability.csv" if opts["out_dir"] else "--out writes reliability.csv"
        _err_line(f"{reliability_line(result.reliability)} ({where})")
    tables = run_tables(result)
    if opts["out_dir"]:
        written = write_run_dir(result, opts["out_dir"])
        err_console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False)
    if opts["fmt"]:
        if opts["table"] not in tables:  # reliability: its lists and embeddings gave no rows
            raise WeatkitError(f"--table {opts['table']} needs {_TABLE_NEEDS[opts['table']]}")
        sys.stdout.buffer.write(render(tables[opts["table"]], opts["fmt"]))
        sys.stdout.flush()
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)
        if "weat" in config.metrics:
            console.print(
                rich_summary(result.summary, config.engine.confidence_level, results=result.results)
            )
        if len(result.association):
            console.print(rich_association(result.association, config.engine.confidence_level))
        if config.isomorphism:
            console.print(rich_correlations(result.correlations, config.engine.confidence_level))
        if config.pool:
            console.print(rich_pooled(result.pooled, config.engine.confidence_level))
    if opts["out_dir"]:
        log_tracking(tracked, opts["out_dir"])  # last: every output is written and printed


_OTHER_METRIC = "--metrics with a metric other than weat"
#: What each ``--table`` beyond ``results`` and ``summary`` needs.
_TABLE_NEEDS = {
    "isomorphism": "--isomorphism LANG",
    "correlations": "--isomorphism LANG",
    "pooled": "--pool LEVELS (and weat in --metrics)",
    "influence": "--influence (and weat in --metrics)",
    "null": "--null K (and weat in --metrics)",
    "association": _OTHER_METRIC,
    "association_items": _OTHER_METRIC,
    "association_influence": f"{_OTHER_METRIC} and --influence",
    "association_pooled": f"{_OTHER_METRIC} and --pool LEVELS",
    "reliability": "--reliability, 2 parallel lists of a test (e.g. --lists ca-weat) and 3 "
    "embeddings",
}


def _refuse_previous_run(out: Path) -> None:
    """Refuse to write into ``out`` when it holds a previous run (its ``manifest.json``).

    Checked before any work, so that a run is never computed only to be refused.
    """
    if (out / "manifest.json").exists():
        raise WeatkitError(
            f"{out} holds a previous run ({out / 'manifest.json'}): give --force to overwrite "
            "it, or another --out"
        )


def _report(result: RunResult, verbose: bool) -> None:
    """Notes and skipped tests on stderr (the tables go to stdout).

    Per-item normalisation notes (duplicates, overlaps) are counted and skipped tests are
    counted per embeddings × language (:meth:`RunResult.skipped_by_language`) unless
    ``verbose``, which prints each with its reason; the manifest always lists them all.
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
    if verbose:
        for skip in result.skipped:
            _err_line(f"skipped: {skip['reason']}")
    else:
        for line in result.skipped_by_language():
            _err_line(f"skipped: {line}")
    for line in skipped_metric_lines(result.skipped_metrics, verbose):
        _err_line(f"skipped: {line}")
    where = ""
    if result.skipped or result.skipped_metrics:
        where = "; --out writes every reason to manifest.json"
        if not verbose:
            where = "; --verbose prints every reason, --out writes them to manifest.json"
    counts = f"{result.n_tests_run} test(s) run, {result.n_tests_skipped} skipped"
    if result.skipped_metrics:
        counts += f", {len(result.skipped_metrics)} metric result(s) not computed"
    _err_line(counts + where)


def _err_line(text: str) -> None:
    err_console.print(text, markup=False, highlight=False, soft_wrap=True)


#: Items printed per test by ``--influence``, and tests printed at most.
INFLUENCE_TOP = 3
_MAX_INFLUENCE_TESTS = 10


def _print_influence(influence: Any, written_to: str | None) -> None:
    """The items that move d most (largest |delta|, NaN left out), one line per test on stderr:
    ``influence EMBEDDINGS LANG LIST_SET LIST_ID TEST: X:item +0.123, ...``."""
    from weatkit.report.tables import KEY_COLUMNS

    groups = influence.dropna(subset=["delta"]).groupby(KEY_COLUMNS, sort=False)
    for keys, group in islice(groups, _MAX_INFLUENCE_TESTS):  # a grid has thousands
        order = group["delta"].abs().sort_values(ascending=False, kind="stable").index
        top = group.loc[order[:INFLUENCE_TOP]]
        items = ", ".join(f"{r.set}:{r.item} {r.delta:+.3f}" for r in top.itertuples())
        line = f"influence {' '.join(map(str, keys))}: {items}"
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)
    where = "influence.csv has every item" if written_to else "--out writes influence.csv"
    more = groups.ngroups - _MAX_INFLUENCE_TESTS
    err_console.print(
        f"influence: {f'{more} more test(s); ' if more > 0 else ''}{where} (delta = d without "
        "the item - d)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _is_item_note(line: str) -> bool:
    return line.startswith(("warning:", "note:"))
