"""``weatkit grid``: run an experiment file (embeddings × languages), resumable."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import (
    out_option,
    progress_option,
    verbose_option,
)
from weatkit.cli.study_options import (
    executor_options,
    log_tracking,
    make_executor,
    resumable,
    tracking,
    tracking_options,
)
from weatkit.cli.tables import (
    rich_association,
    rich_comparisons,
    rich_correlations,
    rich_summary,
)
from weatkit.errors import WeatkitError
from weatkit.grid.config import GridConfig, load_grid_config, missing_inputs
from weatkit.grid.runner import PlannedJob, plan, run_grid
from weatkit.pipeline import reliability_line, skipped_metric_lines


@click.command("grid")
@click.argument("experiment", type=click.Path(dir_okay=False))
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show the jobs and the work left, then every missing input file (exit status 1 when "
    "one is missing); run nothing.",
)
@out_option("Output directory (overrides the file's `output`).", dest="output")
@click.option("--force", is_flag=True, help="Recompute every job, even finished ones.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failing job.")
@progress_option()
@executor_options()
@verbose_option()
@tracking_options()
@friendly
def grid_command(**opts: Any) -> None:
    """Run the experiment in EXPERIMENT (.yaml or .toml): one job per embeddings × language.

    Finished jobs are kept in OUTPUT/jobs/; rerunning skips them unless their options or
    inputs changed, so an interrupted grid resumes where it stopped. Writes results.csv,
    summary.csv, manifest.json and, when configured, isomorphism.csv, correlations.csv,
    comparisons.csv and asymmetry.csv into the output directory.

    With --executor ray, each job is a Ray task (GPUs for model jobs where the cluster has
    them); a failing job is retried, then reported in manifest.json while the rest finish.
    On a cluster, every node must see the inputs at the same paths.

    With --mlflow URI (or the file's mlflow key), the output directory is logged to MLflow
    once written (docs/guides/tracking.md).
    """
    config = load_grid_config(opts["experiment"], opts["output"])
    executor = make_executor(opts)
    tracked = tracking(opts, config.tracking, open_store=not opts["dry_run"])
    if opts["dry_run"]:
        missing = missing_inputs(config)
        try:
            _print_plan(config, plan(config, force=opts["force"]))
        except WeatkitError as err:  # planning reads the list files
            if not missing:
                raise
            note(f"no plan without the missing inputs: {err}")
        _check_missing(missing)
        return
    with resumable(config.output):
        result = run_grid(
            config,
            force=opts["force"],
            fail_fast=opts["fail_fast"],
            show_progress=opts["progress"],
            executor=executor,
        )
    ran = sum(1 for j in result.manifest["jobs"] if j["status"] == "ran")
    reused = sum(1 for j in result.manifest["jobs"] if j["status"] == "reused")
    note(f"{ran} job(s) run, {reused} reused, {len(result.failed)} failed")
    skipped = result.manifest["skipped"]
    if opts["verbose"]:
        for skip in skipped:
            _err_line(f"skipped: {skip['reason']}")
    else:
        for line in result.skipped_by_language():
            _err_line(f"skipped: {line}")
    for line in skipped_metric_lines(result.manifest.get("skipped_metrics", []), opts["verbose"]):
        _err_line(f"skipped: {line}")
    if skipped:
        where = "reasons in manifest.json" + ("" if opts["verbose"] else "; --verbose prints them")
        note(f"{len(skipped)} test(s) skipped ({where})")
    if len(result.reliability):
        _err_line(f"{reliability_line(result.reliability)} (reliability.csv)")
    elif "reliability" in result.manifest:
        note(result.manifest["reliability"])
    err_console.print(f"wrote {config.output}", highlight=False)
    console = Console() if Console().is_terminal else Console(width=160)
    if "weat" in config.run.metrics:
        level = config.run.engine.confidence_level
        console.print(rich_summary(result.summary, level, results=result.results))
    if not result.association.empty:
        console.print(rich_association(result.association, config.run.engine.confidence_level))
    if not result.correlations.empty:
        console.print(rich_correlations(result.correlations, config.run.engine.confidence_level))
    if not result.comparisons.empty:
        console.print(rich_comparisons(result.comparisons))
    log_tracking(tracked, config.output)  # every output is written and printed
    if result.failed:
        first = result.failed[0]
        raise WeatkitError(
            f"{len(result.failed)} job(s) failed (first: {first['job']}: {first['error']}); "
            "the tables hold the other jobs; rerun to retry"
        )
    if not result.computed:
        raise WeatkitError(
            "nothing computed: every test of every job was skipped (the skipped: lines above; "
            f"every reason in {config.output / 'manifest.json'})"
        )


def _print_plan(config: GridConfig, planned: list[PlannedJob]) -> None:
    table = Table(title=f"Plan of {config.path} → {config.output}")
    for col in ("job", "kind", "tests", "status"):
        table.add_column(col, justify="right" if col == "tests" else "left")
    for p in planned:
        table.add_row(p.job.id, p.job.kind, str(p.job.n_tests), "done" if p.done else "to run")
    Console().print(table)
    todo = [p.job for p in planned if not p.done]
    engine = config.run.engine
    n_tests = sum(j.n_tests for j in todo)
    err_console.print(
        f"{len(planned)} job(s): {len(planned) - len(todo)} done, {len(todo)} to run "
        f"({n_tests} test runs, each with {engine.n_bootstrap} bootstraps and up to "
        f"{engine.n_permutations} permutations)",
        highlight=False,
        soft_wrap=True,
    )


def _check_missing(missing: list[str]) -> None:
    """The dry run's ``missing inputs:`` list under the plan, and a one-line error (exit
    status 1) when there is one."""
    if not missing:
        return
    console = Console(soft_wrap=True)
    console.print("missing inputs:", highlight=False)
    for line in missing:
        console.print(f"  {line}", markup=False, highlight=False)
    n = len(missing)
    raise WeatkitError(
        f"{n} missing input{'s' if n > 1 else ''} (listed above): the grid cannot run"
    )


def _err_line(text: str) -> None:
    err_console.print(text, markup=False, highlight=False, soft_wrap=True)
