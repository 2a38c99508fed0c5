"""The options of the commands that run studies: where their jobs run and where their outputs
are logged, each declared once.

* where jobs run: :func:`executor_options` and :func:`make_executor` (``grid`` and ``compare``:
  ``--executor local|ray``, ``--address``, ``--num-cpus``, ``--retries``, ``--cpus-per-job``,
  ``--gpus-per-job``), :func:`resumable` (Ctrl-C keeps the finished jobs);
* experiment tracking: :func:`tracking_options` (``--mlflow``, ``--mlflow-experiment``: the
  schema's :data:`~weatkit.config.schema.TRACKING`), :func:`tracking` and :func:`log_tracking`
  (``run``, ``grid``, ``compare``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from weatkit.cli.errors import note
from weatkit.cli.options import Decorator, stack
from weatkit.config.schema import TRACKING, Source, build, click_options, values_from_cli
from weatkit.errors import WeatkitError

if TYPE_CHECKING:
    from weatkit.grid.executors import Executor
    from weatkit.tracking import TrackingOptions


# --- where jobs run (grid, compare) ----------------------------------------------------------

#: ``--executor`` values: jobs one by one in this process, or as Ray tasks.
EXECUTORS = ("local", "ray")
#: The options only the Ray executor takes (an error with ``--executor local``).
_RAY_ONLY = ("address", "num_cpus", "gpus_per_job")


def executor_options() -> Decorator:
    """``--executor`` and the Ray executor's options (:class:`~weatkit.grid.ray_executor.
    RayExecutor`); :func:`make_executor` reads them. ``--executor`` is checked there, so an unknown
    one is a one-line error as every other bad value of the group."""
    return stack(
        [
            click.option(
                "--executor",
                default="local",
                show_default=True,
                metavar="[" + "|".join(EXECUTORS) + "]",
                help="Run jobs one by one here, or as Ray tasks (pip install 'weatkit[ray]').",
            ),
            click.option(
                "--address",
                help="Ray cluster to join: 'auto' (started here with `ray start`), HOST:PORT or "
                "ray://HOST:PORT (default: start a local Ray instance for this run).",
            ),
            click.option(
                "--num-cpus",
                type=click.IntRange(min=1),
                help="CPUs of a local Ray instance (default: all).",
            ),
            click.option(
                "--retries",
                type=click.IntRange(min=0),
                default=2,
                show_default=True,
                help="Ray: times a failing job is retried before it is reported as failed.",
            ),
            click.option(
                "--cpus-per-job",
                type=click.FloatRange(min=0, min_open=True),
                default=1.0,
                show_default=True,
                help="Ray: CPUs each job reserves.",
            ),
            click.option(
                "--gpus-per-job",
                type=click.FloatRange(min=0),
                help="Ray: GPUs each job of a model reserves; fractions share a GPU (default: 1 "
                "when the cluster has GPUs, else 0). Static vectors, openai: models and models "
                "on the CPU reserve none; a model sharded by --device-map over the k GPUs of "
                "--max-memory reserves k.",
            ),
        ]
    )


def make_executor(opts: Mapping[str, Any]) -> Executor:
    """The executor :func:`executor_options` describe: a
    :class:`~weatkit.grid.executors.LocalExecutor`, or a
    :class:`~weatkit.grid.ray_executor.RayExecutor` once Ray is known to be installed.

    Raises:
        WeatkitError: an unknown ``--executor``, a Ray option with the local executor, or Ray
            missing (naming the ``ray`` extra).
    """
    from weatkit.grid.executors import LocalExecutor
    from weatkit.grid.ray_executor import RayExecutor, import_ray

    name = opts["executor"]
    if name not in EXECUTORS:
        raise WeatkitError(f"--executor {name!r}: choose {' or '.join(EXECUTORS)}")
    if name == "local":
        given = [f"--{key.replace('_', '-')}" for key in _RAY_ONLY if opts[key] is not None]
        if given:
            raise WeatkitError(f"{', '.join(given)}: only with --executor ray")
        return LocalExecutor()
    import_ray()
    return RayExecutor(
        address=opts["address"],
        num_cpus=opts["num_cpus"],
        retries=opts["retries"],
        cpus_per_job=opts["cpus_per_job"],
        gpus_per_model_job=opts["gpus_per_job"],
    )


@contextmanager
def resumable(output: Path) -> Iterator[None]:
    """Run a study whose finished jobs are kept in ``output / "jobs"`` (grid, compare): Ctrl-C
    prints how to resume and exits 130."""
    from weatkit.cli.errors import err_console

    try:
        yield
    except KeyboardInterrupt:
        err_console.print(
            f"weatkit: interrupted; finished jobs are kept in {output / 'jobs'}; rerun the same "
            "command to resume",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(130)


# --- experiment tracking (run, grid, compare) ------------------------------------------------


def tracking_options() -> Decorator:
    """``--mlflow URI`` and ``--mlflow-experiment NAME``: the schema's :data:`TRACKING`, the
    ``mlflow`` and ``mlflow_experiment`` keys of grid and compare files; :func:`tracking` reads
    them."""
    return click_options(TRACKING)


def tracking(
    opts: Mapping[str, Any], file: TrackingOptions | None = None, *, open_store: bool = True
) -> TrackingOptions:
    """The tracking options: the flags given on the command line over a file's keys, checked
    (MLflow installed: ``--mlflow: needs MLflow: pip install 'weatkit[mlflow]'``); with
    ``open_store`` the experiment is opened (created when missing) so that a store that cannot
    be written is a one-line error before any work
    (:func:`~weatkit.tracking.open_experiment`)."""
    from dataclasses import asdict

    from weatkit.tracking import TrackingOptions, open_experiment

    ctx = click.get_current_context()
    given = {
        name: value
        for name, value in opts.items()
        if name in TRACKING and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
    }
    source = Source.command_line()
    values = asdict(file) if file is not None else {}
    options = build(TrackingOptions, TRACKING, values | values_from_cli(TRACKING, given), source)
    if open_store and options.mlflow is not None:
        open_experiment(options.mlflow, options.mlflow_experiment)
    return options


def log_tracking(options: TrackingOptions, out_dir: str | Path) -> None:
    """Log the written ``out_dir`` where ``options`` say (nothing without ``--mlflow``), and
    say so in one ``note:`` line (:func:`~weatkit.tracking.log_to_mlflow`)."""
    if options.mlflow is None:
        return
    from weatkit.tracking import log_to_mlflow

    run_id = log_to_mlflow(out_dir, options.mlflow, experiment=options.mlflow_experiment)
    note(f"logged {out_dir} to MLflow: run {run_id} of experiment {options.mlflow_experiment!r}")
