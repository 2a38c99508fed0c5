"""A finished ``weatkit run``, ``grid`` or ``compare`` directory logged as one MLflow run.

What is logged is read from the directory the command wrote, never from the process
(:func:`tracked_run`), so it is what the files say:

* **params** — the resolved options of ``manifest.json`` (a run's and a grid's ``config``; a
  comparison's ``languages``, ``models``, ``methods``, ``contextual``, ``correlation``,
  ``scores`` and ``validity``), flattened to dotted keys: ``engine.n_bootstrap = 200``; a list
  of mappings is numbered from 1 (``embeddings.2.name``); a list of values, and a mapping whose
  keys are not plain names (``validity.traits``), is one JSON value (``tests = ["weat1",
  "weat2"]``); strings as they are, other values as JSON (``lower = null``, ``strict = false``).
  A value longer than MLflow's limit (:data:`MAX_PARAM_LENGTH` characters) is cut and says so;
  ``manifest.json`` (an artifact) has it whole.
* **metrics** — one per row and value column of the summary: ``summary.csv`` of a run or grid
  (key ``EMBEDDINGS/LANG/LIST_SET/TEST/COLUMN``, the columns of
  :data:`~weatkit.report.tables.VALUE_COLUMNS`: ``statistic``, ``effect_size``, each with
  ``_ci_low``/``_ci_high``, ``p_value``, ``p_holm``, ``q_bh``) and ``scores.csv`` of a
  comparison (``MODEL/LANG/MEASURE/COLUMN``: ``value``, ``ci_low``, ``ci_high``,
  ``p_value_neutral``). Missing values (NaN) are not logged. Each part of a key is
  :func:`metric_key`: a character MLflow does not allow in keys (only letters, digits, ``_ - .
  /`` and space) becomes ``_``, and a row whose key another row already has gets ``_2``,
  ``_3``, ... (in file order).
* **tags** — ``weatkit.version``, ``weatkit.kind`` (run, grid, compare), ``weatkit.command``
  (the command line), ``weatkit.seed`` (a comparison's: the seed of its score CIs) and
  ``weatkit.output`` (the directory).
* **artifacts** — every file of the directory (``jobs/`` of a grid or comparison included),
  at the same relative paths; not the lock file.

No secret is logged: weatkit reads API keys only from environment variables, which are never
read here; the user part of a URL (``https://user:token@host``) is replaced by ``***`` in
params and tags, and an option whose name says it is a key, token, secret or password would be
left out.

MLflow 3 refuses its file store (``./mlruns``, ``file:``) unless ``MLFLOW_ALLOW_FILE_STORE=true``
is set: a local store is a SQLite file, ``sqlite:///mlflow.db`` (the ``mlflow`` extra installs
``mlflow-skinny`` with SQLAlchemy and Alembic for it). An experiment this module creates in a
SQLite store keeps its artifacts beside the database, in ``mlartifacts/`` (MLflow's default is
``./mlruns`` of the current folder).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shlex
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlparse

from weatkit._io.lock import LOCK_NAME
from weatkit.errors import ConfigError, WeatkitError, one_line
from weatkit.scoring.spec import mask_credentials

#: How the optional dependency is installed (named in every message about it).
MLFLOW_INSTALL = "pip install 'weatkit[mlflow]'"
#: The experiment runs are logged to unless another is named.
DEFAULT_EXPERIMENT = "weatkit"
#: MLflow's limits: characters of a param's value, of a param, metric or tag key.
MAX_PARAM_LENGTH = 6000
MAX_KEY_LENGTH = 250
#: Where an experiment created in a SQLite store keeps its artifacts (beside the database).
ARTIFACTS_FOLDER = "mlartifacts"

#: The value columns of a comparison's ``scores.csv`` logged as metrics.
_COMPARE_VALUES = ("value", "ci_low", "ci_high", "p_value_neutral")
#: The manifest keys of a comparison that are its resolved options.
_COMPARE_OPTIONS = (
    *("languages", "models", "methods", "contextual", "correlation", "scores", "validity"),
)
#: Manifest entries that are not options (notes written with the validity options).
_NOT_OPTIONS = ("notes",)

_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. ]")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_\-]+")
_SECRET_NAME = re.compile(r"(^|_)(api_?key|token|secret|password)$", re.IGNORECASE)


@dataclass(frozen=True)
class TrackingOptions:
    """Where a command logs its output directory (``--mlflow``, ``--mlflow-experiment``).

    Attributes:
        mlflow: the MLflow tracking URI (``sqlite:///mlflow.db``, ``http://127.0.0.1:5000``),
            or None: nothing is logged.
        mlflow_experiment: the experiment's name (created when missing).
    """

    mlflow: str | None = None
    mlflow_experiment: str = DEFAULT_EXPERIMENT

    def validate(self) -> None:
        """A URI needs MLflow installed (checked here, when the options are read, before any
        work) and a name; so does the experiment."""
        if self.mlflow is None:
            return
        if not self.mlflow.strip():
            raise ConfigError(
                "give an MLflow tracking URI, e.g. sqlite:///mlflow.db", field="mlflow"
            )
        if not self.mlflow_experiment.strip():
            raise ConfigError("give the experiment a name", field="mlflow_experiment")
        import_mlflow()


def import_mlflow() -> ModuleType:
    """The ``mlflow`` module, or a one-line :class:`ConfigError` (field ``mlflow``) saying how
    to install it."""
    try:
        import mlflow
    except ImportError as err:
        raise ConfigError(f"needs MLflow: {MLFLOW_INSTALL}", field="mlflow") from err
    return mlflow


@dataclass(frozen=True)
class TrackedRun:
    """What :func:`log_to_mlflow` logs of an output directory.

    Attributes:
        kind: ``run``, ``grid`` or ``compare``.
        params: flattened options (key -> text).
        metrics: summary values (key -> number).
        tags: version, kind, command, seed, output (those the manifest has).
        artifacts: the files, as paths relative to the directory (POSIX), sorted.
    """

    kind: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    artifacts: tuple[str, ...] = ()


def tracked_run(out_dir: str | os.PathLike) -> TrackedRun:
    """What an output directory of ``weatkit run --out``, ``grid`` or ``compare`` logs (the
    module docstring says how each part is named).

    Raises:
        WeatkitError: no ``manifest.json`` of one of those commands, or a summary table that
            cannot be read (naming the file).
    """
    from weatkit.report.run_dir import read_manifest, read_table

    folder = Path(out_dir)
    manifest_path = folder / "manifest.json"
    if (folder / "scores.csv").is_file() and manifest_path.is_file():
        manifest = _read_json(manifest_path)
        kind = "compare"
        options = {k: _without_notes(manifest[k]) for k in _COMPARE_OPTIONS if k in manifest}
        environment = manifest.get("environment", {})
        seed = manifest.get("scores", {}).get("seed")
        table, keys, values = "scores.csv", ("model", "lang", "measure"), _COMPARE_VALUES
    else:
        from weatkit.report.tables import VALUE_COLUMNS

        manifest = read_manifest(manifest_path)
        kind = "grid" if "experiment" in manifest else "run"
        options, environment, seed = manifest["config"], manifest, manifest.get("seed")
        keys = ("embeddings", "lang", "list_set", "test")
        table, values = "summary.csv", VALUE_COLUMNS
    frame = read_table(folder / table, required=keys)
    command = environment.get("command") or []
    tags = {
        "weatkit.version": environment.get("weatkit_version"),
        "weatkit.kind": kind,
        "weatkit.command": _cut(mask_credentials(shlex.join(["weatkit", *command[1:]]))),
        "weatkit.seed": seed,
        "weatkit.output": str(folder.resolve()),
    }
    return TrackedRun(
        kind=kind,
        params=flatten_options(options),
        metrics=_metrics(frame, keys, values),
        tags={k: str(v) for k, v in tags.items() if v is not None},
        artifacts=tuple(
            sorted(
                p.relative_to(folder).as_posix()
                for p in folder.rglob("*")
                if p.is_file() and p.name != LOCK_NAME
            )
        ),
    )


def flatten_options(options: Mapping[str, Any]) -> dict[str, str]:
    """Options as MLflow params (the module docstring's rules), secrets left out.

    Example:
        >>> flatten_options({"engine": {"seed": 0}, "tests": ["weat1"], "lower": None})
        {'engine.seed': '0', 'tests': '["weat1"]', 'lower': 'null'}
    """
    return dict(_flatten(options, ""))


def _flatten(value: Any, key: str) -> Iterator[tuple[str, str]]:
    if key and _SECRET_NAME.search(key.rpartition(".")[2]):
        return
    if (
        isinstance(value, Mapping)
        and value
        and all(isinstance(k, str) and _PLAIN_KEY.fullmatch(k) for k in value)
    ):
        for name, item in value.items():
            yield from _flatten(item, f"{key}.{name}" if key else name)
        return
    if isinstance(value, list | tuple) and any(isinstance(item, Mapping) for item in value):
        for number, item in enumerate(value, 1):
            yield from _flatten(item, f"{key}.{number}")
        return
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    yield key, _cut(mask_credentials(text))


def _cut(text: str) -> str:
    """``text``, or its start and a mark when it is longer than :data:`MAX_PARAM_LENGTH`."""
    if len(text) <= MAX_PARAM_LENGTH:
        return text
    mark = f"... ({len(text)} characters; manifest.json has them all)"
    return text[: MAX_PARAM_LENGTH - len(mark)] + mark


def metric_key(part: object) -> str:
    """One part of a metric key: each character MLflow does not allow (only letters, digits,
    ``_ - .`` and space; ``/`` separates the parts) becomes ``_``; an empty part, ``.`` or
    ``..`` is ``_``.

    Example:
        >>> metric_key("ca-weat:v1"), metric_key("weat:weat1@0"), metric_key("MultiBERTs#2")
        ('ca-weat_v1', 'weat_weat1_0', 'MultiBERTs_2')
    """
    text = _UNSAFE.sub("_", str(part))
    return "_" if text in ("", ".", "..") else text


def _metrics(frame: Any, keys: Sequence[str], values: Sequence[str]) -> dict[str, float]:
    """``ROW/COLUMN -> value`` of every present number in ``values`` columns; rows named by
    their ``keys`` (:func:`metric_key`), a repeated name numbered ``_2``, ``_3``, ..."""
    metrics: dict[str, float] = {}
    if frame.empty:
        return metrics
    columns = [c for c in values if c in frame.columns]
    room = MAX_KEY_LENGTH - 1 - max(len(c) for c in columns) - 4  # "/column" and a "_NNN"
    rows: set[str] = set()
    for record in frame[[*keys, *columns]].itertuples(index=False):
        row = "/".join(metric_key(v) for v in record[: len(keys)])[:room].rstrip("/. ")
        name, number = row, 2
        while name in rows:
            name, number = f"{row}_{number}", number + 1
        rows.add(name)
        for column, value in zip(columns, record[len(keys) :], strict=True):
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                metrics[f"{name}/{column}"] = float(value)
    return metrics


def _without_notes(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k not in _NOT_OPTIONS}
    return value


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise WeatkitError(f"{path}: cannot be read as JSON ({one_line(err)})") from err
    if not isinstance(data, dict):
        raise WeatkitError(f"{path} is not a JSON object")
    return data


# --- MLflow ----------------------------------------------------------------------------------


@contextmanager
def _quiet() -> Iterator[None]:
    """MLflow's and its database's INFO lines and deprecation warnings kept off stderr."""
    loggers = [logging.getLogger(name) for name in ("mlflow", "alembic")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _store_error(uri: str, err: BaseException) -> WeatkitError:
    """One line naming the URI and what MLflow (or the file system) said."""
    hint = f"; {MLFLOW_INSTALL} installs it" if isinstance(err, ModuleNotFoundError) else ""
    return WeatkitError(
        f"MLflow tracking URI {mask_credentials(uri)}: cannot log to it ({one_line(err)}{hint})"
    )


def _sqlite_file(uri: str) -> Path | None:
    """The database file of a ``sqlite:///PATH`` URI (relative) or ``sqlite:////PATH``."""
    parsed = urlparse(uri)
    path = parsed.path[1:]
    if parsed.scheme != "sqlite" or not path or path == ":memory:":
        return None
    return Path(path)


def open_experiment(uri: str, experiment: str = DEFAULT_EXPERIMENT) -> str:
    """The id of the experiment named ``experiment`` in the MLflow store at ``uri``, created
    when missing: a command calls it before its work, so that a URI that cannot be written
    (an unknown scheme, a folder that cannot be created, a server that does not answer) is
    refused before the long computation. The folder of a SQLite database is created; a new
    experiment there keeps its artifacts in :data:`ARTIFACTS_FOLDER` beside it.

    Raises:
        ConfigError: MLflow is not installed.
        WeatkitError: the store cannot be opened or written, in one line naming the URI.
    """
    mlflow = import_mlflow()
    database = _sqlite_file(uri)
    with _quiet():
        try:
            location = None
            if database is not None:
                database.parent.mkdir(parents=True, exist_ok=True)
                location = (database.parent.resolve() / ARTIFACTS_FOLDER).as_uri()
            client = mlflow.MlflowClient(tracking_uri=uri)
            found = client.get_experiment_by_name(experiment)
            if found is not None:
                return str(found.experiment_id)
            return str(client.create_experiment(experiment, artifact_location=location))
        except Exception as err:
            raise _store_error(uri, err) from err


def log_to_mlflow(
    out_dir: str | os.PathLike,
    uri: str,
    *,
    experiment: str = DEFAULT_EXPERIMENT,
    run_name: str | None = None,
) -> str:
    """Log the output directory of ``weatkit run --out``, ``grid`` or ``compare`` as one MLflow
    run of ``experiment`` (created when missing) at tracking URI ``uri``: the params, metrics,
    tags and artifacts of :func:`tracked_run`. The run is marked FINISHED, or FAILED when
    logging stopped half-way; the directory is only read.

    Args:
        out_dir: the directory the command wrote.
        uri: MLflow tracking URI (``sqlite:///mlflow.db``, ``http://HOST:PORT``, ...).
        experiment: the experiment's name.
        run_name: the MLflow run's name (default: the directory's name).

    Returns:
        The MLflow run id.

    Raises:
        ConfigError: MLflow is not installed.
        WeatkitError: the directory is not one of those commands', or the store cannot be
            written (one line naming the URI).

    Example:
        >>> from weatkit.tracking import log_to_mlflow
        >>> log_to_mlflow("out", "sqlite:///mlflow.db")         # doctest: +SKIP
        '3f9c0e5b2a7d4c1e8b6a9d0f1e2c3b4a'
    """
    folder = Path(out_dir)
    tracked = tracked_run(folder)  # a directory that cannot be read fails before MLflow
    experiment_id = open_experiment(uri, experiment)
    mlflow = import_mlflow()
    from mlflow.entities import Metric, Param, RunStatus

    tags = {"mlflow.source.type": "LOCAL", "mlflow.source.name": f"weatkit {tracked.kind}"}
    with _quiet():
        client = mlflow.MlflowClient(tracking_uri=uri)
        try:
            run = client.create_run(
                experiment_id, run_name=run_name or folder.resolve().name, tags=tracked.tags | tags
            )
        except Exception as err:
            raise _store_error(uri, err) from err
        run_id = run.info.run_id
        try:
            now = int(time.time() * 1000)
            client.log_batch(
                run_id,
                metrics=[Metric(k, v, now, 0) for k, v in tracked.metrics.items()],
                params=[Param(k, v) for k, v in tracked.params.items()],
            )
            for relative in tracked.artifacts:
                parent = Path(relative).parent.as_posix()
                client.log_artifact(
                    run_id, str(folder / relative), None if parent == "." else parent
                )
        except Exception as err:
            with suppress(Exception):  # the store may fail again: the first error counts
                client.set_terminated(run_id, RunStatus.to_string(RunStatus.FAILED))
            raise _store_error(uri, err) from err
        client.set_terminated(run_id, RunStatus.to_string(RunStatus.FINISHED))
    return run_id
