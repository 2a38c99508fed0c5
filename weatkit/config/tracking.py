"""The tracking options of a grid or compare file (:data:`~weatkit.config.schema.TRACKING`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weatkit.config.schema import TRACKING, Source, options_from_file
from weatkit.tracking import TrackingOptions


def tracking_from_file(data: Mapping[str, Any], source: Source) -> TrackingOptions:
    """The :data:`~weatkit.config.schema.TRACKING` keys of a file's top level (``mlflow``,
    ``mlflow_experiment``; the others are the caller's), checked when the file is read: MLflow
    must be installed (``exp.yaml: mlflow: needs MLflow: pip install 'weatkit[mlflow]'``)."""
    given = {k: v for k, v in data.items() if k in TRACKING.file_keys}
    return options_from_file(TrackingOptions, TRACKING, given, source)
