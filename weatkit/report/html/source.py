"""What a report is made of: a run, grid, compare, sentence or measure plugin's directory, read
and checked.

:func:`read_source` tells the kinds apart by their files and ``manifest.json``:

* a measure plugin's (:mod:`weatkit.measures.plugins`): a manifest whose ``command`` is
  ``weatkit NAME`` of a plugin (:func:`measure_plugin`); the kind is the plugin's name, and the
  plugin's own report and figure functions read its tables (they know its files) with
  :func:`plugin_table` and :func:`read_items`;
* ``sentence``: a manifest whose ``command`` is a sentence command (:data:`SENTENCE_COMMANDS`:
  ``weatkit gest|crows|stereoset|mbe --out DIR``), whatever its tables;
* ``compare``: ``scores.csv`` and a manifest whose ``command`` is ``weatkit compare``
  (:mod:`weatkit.crossmethod.runner`);
* ``grid``: the tables of a run directory and a manifest with an ``experiment`` (:mod:`weatkit.
  grid.runner`);
* ``run``: ``results.csv`` or ``summary.csv`` and a run manifest (``weatkit run --out DIR``).

Run and grid directories are read by :func:`weatkit.report.run_dir.read_run_dir`, compare
and sentence directories table by table with :func:`weatkit.report.run_dir.read_table` (a
sentence directory: every ``*.csv`` but the per-item log, no column required): every field is
checked against its column's declared type, so a malformed table is a one-line error naming its
file, line and column. A per-item log (``items.parquet``, else ``items.csv``: one row per scored
item) is read when present, whatever its columns.

Versions: the manifest records the weatkit version that wrote the directory
(``weatkit_version``; ``environment.weatkit_version`` in a compare manifest). A report is made
only when its major and minor version equal those of the weatkit reading it (``0.1.0`` reads
``0.1.3``; ``0.2.0`` refuses it): before 1.0 a minor version may rename or retype columns, and
a report that silently showed them wrong would be worse than none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

import weatkit
from weatkit._io.atomic import check_complete
from weatkit.errors import WeatkitError
from weatkit.measures.plugins import Plugin, find
from weatkit.report.run_dir import (
    TABLE_NAMES,
    RunTables,
    read_manifest,
    read_run_dir,
    read_table,
)

#: The kinds of directory a report is made of (besides those of the measure plugins, by name).
KINDS = ("run", "grid", "compare", "sentence")
#: The ``command`` of the manifest a sentence command writes with ``--out``
#: (:func:`weatkit.cli.sentence_outputs.manifest_file`).
SENTENCE_COMMANDS = ("weatkit gest", "weatkit crows", "weatkit stereoset", "weatkit mbe")

#: The tables of a compare directory and the columns each must have (absent optional tables
#: are skipped: ``seeds``, ``validity`` and ``reliability`` are written only when computed).
COMPARE_TABLES: dict[str, list[str]] = {
    "table": ["model", "lang"],
    "scores": ["model", "lang", "method", "measure", "value"],
    "correlations": ["scope", "measure_x", "measure_y", "n"],
    "skipped": ["model", "lang", "method", "status", "reason"],
    "seeds": ["model", "lang", "method", "measure", "n_seeds", "seed_mean", "seed_sd"],
    "validity": ["measure_x", "measure_y", "kind", "n", "value", "verdict"],
    "reliability": ["measure", "n_units", "split_half", "icc2k"],
}
#: The per-item log's file names, the first present being read.
ITEMS_FILES = ("items.parquet", "items.csv")


@dataclass
class ReportSource:
    """A directory to report on.

    Attributes:
        kind: ``run``, ``grid``, ``compare``, ``sentence`` or a measure plugin's name.
        path: the directory.
        manifest: its ``manifest.json``.
        version: the weatkit version that wrote it.
        tables: its tables by name (file stem), only those present.
        run: a run or grid directory's tables as the figures read them (None for the others).
        items: the per-item log (None when absent).
        items_file: the file it was read from (``items.parquet`` or ``items.csv``).
        plugin: the measure plugin whose command wrote it (None for the other kinds).
    """

    kind: str
    path: Path
    manifest: dict
    version: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    run: RunTables | None = None
    items: pd.DataFrame | None = None
    items_file: str | None = None
    plugin: Plugin | None = None


def read_source(path: str | os.PathLike) -> ReportSource:
    """The run, grid, compare, sentence or measure plugin's directory at ``path``, every table
    checked (a plugin's: only its manifest, module docstring).

    Raises:
        WeatkitError: the directory does not exist, is none of the kinds, was written by
            another major or minor weatkit version (or records none), or a file is malformed.
    """
    root = Path(path)
    if not root.is_dir():
        raise WeatkitError(f"{root} does not exist or is not a directory")
    check_complete(root)  # not half one run, half another (a write killed mid-way)
    manifest_path = root / "manifest.json"
    peek = peek_manifest(root)
    plugin = measure_plugin(peek)
    if plugin is not None:
        version = _version(manifest_path, peek)
        return ReportSource(plugin.name, root, peek, version, plugin=plugin)
    if peek.get("command") in SENTENCE_COMMANDS:
        source = ReportSource("sentence", root, peek, _version(manifest_path, peek))
        for table in sorted(root.glob("*.csv")):
            if table.name not in ITEMS_FILES:
                source.tables[table.stem] = read_table(table)
    elif (root / "scores.csv").is_file():
        manifest = _compare_manifest(manifest_path)
        source = ReportSource("compare", root, manifest, _version(manifest_path, manifest))
        for name, required in COMPARE_TABLES.items():
            if (root / f"{name}.csv").is_file():
                text = ("statistic",) if name == "validity" else ()  # its name, not a value
                source.tables[name] = read_table(root / f"{name}.csv", required, text_columns=text)
    elif any((root / f"{name}.csv").is_file() for name in ("results", "summary")):
        manifest = read_manifest(manifest_path)
        version = _version(manifest_path, manifest)  # before reading tables of another version
        tables = read_run_dir(root)
        kind = "grid" if isinstance(manifest.get("experiment"), dict) else "run"
        source = ReportSource(kind, root, tables.manifest, version, run=tables)
        source.tables = {
            name: getattr(tables, name) for name in TABLE_NAMES if (root / f"{name}.csv").is_file()
        }
    else:
        raise WeatkitError(
            f"{root} is not a weatkit run, grid, compare or sentence directory: it has "
            "neither results.csv, summary.csv, scores.csv nor the manifest.json of a sentence "
            "command (write one with weatkit run --out DIR, weatkit grid, weatkit compare or "
            "weatkit gest|crows|stereoset|mbe --out DIR)"
        )
    source.items, source.items_file = read_items(root, source.manifest)
    return source


def measure_plugin(manifest: dict) -> Plugin | None:
    """The measure plugin whose command wrote a directory with ``manifest`` (its ``command``
    ``weatkit NAME``, :func:`weatkit.cli.sentence_outputs.manifest_file`) when it declares a
    report of its own (:attr:`~weatkit.measures.plugins.Plugin.report`), or None (a plugin
    without one writes a sentence directory)."""
    command = manifest.get("command")
    if not isinstance(command, str) or not command.startswith("weatkit "):
        return None
    plugin = find(command.removeprefix("weatkit "))
    return plugin if plugin is not None and plugin.report is not None else None


def peek_manifest(path: str | os.PathLike) -> dict:
    """The ``manifest.json`` of directory ``path`` as a JSON object; ``{}`` without one."""
    manifest_path = Path(path) / "manifest.json"
    return _json_object(manifest_path) if manifest_path.is_file() else {}


def plugin_table(source: ReportSource, name: str, required: Sequence[str] = ()) -> pd.DataFrame:
    """Table ``NAME.csv`` of a measure plugin's directory, checked
    (:func:`~weatkit.report.run_dir.read_table`, with its ``required`` columns), read once and
    then kept in ``source.tables``.

    Raises:
        WeatkitError: the file is missing (naming it and the command that writes it) or
            malformed.
    """
    if name not in source.tables:
        path = source.path / f"{name}.csv"
        if not path.is_file():
            raise WeatkitError(f"{path}: missing; {source.manifest['command']} --out writes it")
        source.tables[name] = read_table(path, required)
    return source.tables[name]


def _compare_manifest(path: Path) -> dict:
    """A compare directory's ``manifest.json``, which must say it was written by compare."""
    if not path.is_file():
        raise WeatkitError(f"{path}: missing; every compare directory has one")
    manifest = _json_object(path)
    if manifest.get("command") != "weatkit compare":
        raise WeatkitError(
            f"{path}: key command: expected 'weatkit compare' (a directory with scores.csv is "
            "read as a weatkit compare output)"
        )
    return manifest


def _json_object(path: Path) -> dict:
    """The JSON object in the file at ``path``; a one-line error naming it otherwise."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise WeatkitError(f"{path} is not valid JSON: {err}") from err
    except OSError as err:
        raise WeatkitError(f"cannot read {path}: {err.strerror}") from err
    if not isinstance(manifest, dict):
        raise WeatkitError(f"{path} is not a JSON object")
    return manifest


def _version(path: Path, manifest: dict) -> str:
    """The weatkit version recorded in ``manifest``, checked against this one (module
    docstring)."""
    environment = manifest.get("environment")
    nested = environment.get("weatkit_version") if isinstance(environment, dict) else None
    version = manifest.get("weatkit_version", nested)
    if not isinstance(version, str) or not version:
        raise WeatkitError(
            f"{path}: key weatkit_version: missing; cannot tell which weatkit wrote it"
        )
    if _major_minor(version) != _major_minor(weatkit.__version__):
        raise WeatkitError(
            f"{path}: written by weatkit {version}, this is weatkit {weatkit.__version__}: "
            f"rerun it with this version, or report it with weatkit "
            f"{'.'.join(_major_minor(version))}.x"
        )
    return version


def _major_minor(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:2])


def read_items(
    root: Path, manifest: dict, stem: str = "items"
) -> tuple[pd.DataFrame | None, str | None]:
    """The per-item log of ``root`` and its file name; ``(None, None)`` when there is none.

    A manifest with a ``log_items`` key (``weatkit compare``, a sentence command, a measure
    plugin's) names the file: ``STEM.parquet`` or ``STEM.csv`` by its format (``stem``:
    ``items``, or the name of a plugin's own log), none when it is off, so that the log
    of an earlier run left in the directory is not shown as this run's. Otherwise
    ``STEM.parquet``, else ``STEM.csv``, if present.

    Raises:
        WeatkitError: the file the manifest names is missing, or cannot be read as a table
            (naming it).
    """
    names = (f"{stem}.parquet", f"{stem}.csv")
    if "log_items" in manifest:
        fmt = manifest["log_items"]
        if not fmt:
            return None, None
        names = (f"{stem}.{fmt}",)
        if fmt not in ("parquet", "csv") or not (root / names[0]).is_file():
            raise WeatkitError(
                f"{root}: manifest.json has log_items {fmt!r}, but there is no {names[0]}"
            )
    for name in names:
        path = root / name
        if not path.is_file():
            continue
        if name.endswith(".csv"):
            return read_table(path), name
        try:
            return pd.read_parquet(path), name
        except Exception as err:  # pyarrow raises its own types for a bad file
            reason = " ".join(str(err).split()) or type(err).__name__
            raise WeatkitError(f"{path} is not a valid Parquet table: {reason}") from err
    return None, None
