"""Experiment tracking (issue 28 §3): a finished run, grid or compare directory logged to MLflow.

* :func:`log_to_mlflow` — log an output directory as one MLflow run: its resolved options as
  params, its summary with the CIs as metrics, version, seed and command as tags, its files as
  artifacts (:mod:`weatkit.tracking.mlflow`)
* :func:`tracked_run` — what would be logged, read from the directory (no MLflow needed);
  :func:`flatten_options` and :func:`metric_key` name its params and metrics
* :func:`open_experiment` — create (or find) the experiment first, so that a URI that cannot be
  written is refused before the long computation
* :class:`TrackingOptions` — ``--mlflow URI`` and ``--mlflow-experiment NAME``, the ``mlflow``
  and ``mlflow_experiment`` keys of grid and compare files
  (:data:`weatkit.config.schema.TRACKING`)

MLflow is an optional extra: ``pip install 'weatkit[mlflow]'``; it is imported only by the
functions that talk to it.
"""

from weatkit.tracking.mlflow import (
    DEFAULT_EXPERIMENT,
    MLFLOW_INSTALL,
    TrackedRun,
    TrackingOptions,
    flatten_options,
    import_mlflow,
    log_to_mlflow,
    metric_key,
    open_experiment,
    tracked_run,
)

__all__ = [
    "DEFAULT_EXPERIMENT",
    "MLFLOW_INSTALL",
    "TrackedRun",
    "TrackingOptions",
    "flatten_options",
    "import_mlflow",
    "log_to_mlflow",
    "metric_key",
    "open_experiment",
    "tracked_run",
]
