"""Write a run directory (``weatkit run --out DIR``) and read one back for exports and plots.

A run directory holds ``results.csv`` and ``summary.csv`` (see :mod:`weatkit.report.tables`),
``manifest.json``, and optionally ``isomorphism.csv`` and ``correlations.csv`` (``weatkit run
--isomorphism LANG``), ``comparisons.csv`` and ``asymmetry.csv`` (``weatkit grid``). Absent
tables read as empty frames. Identifier columns (languages, list ids, ...) are always read as
strings, so ``1`` or ``NA`` stay the strings they were written as; only empty fields are missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from weatkit.errors import WeatkitError

if TYPE_CHECKING:
    from weatkit.pipeline import RunResult

#: The tables of a run directory, in the order they are listed to users.
TABLE_NAMES = (
    "results",
    "summary",
    "isomorphism",
    "correlations",
    "comparisons",
    "asymmetry",
    "asymmetry_correlations",
)

#: Columns a table must have to be used; any others are kept as they are.
REQUIRED_COLUMNS: dict[str, list[str]] = {
    "results": ["embeddings", "lang", "list_set", "list_id", "test", "effect_size"],
    "summary": [
        "embeddings",
        "lang",
        "list_set",
        "test",
        "n_lists",
        "effect_size",
        "effect_size_ci_low",
        "effect_size_ci_high",
    ],
    "isomorphism": ["embeddings", "lang", "measure", "value"],
    "correlations": ["embeddings", "list_set", "test", "measure", "n_languages", "r2"],
    "comparisons": [
        "embeddings",
        "baseline",
        "lang",
        "list_set",
        "test",
        "effect_size",
        "baseline_effect_size",
        "difference",
    ],
    "asymmetry": [
        "embeddings",
        "lang",
        "list_set",
        "list_id",
        "test",
        "effect_size",
        "count_difference",
    ],
    "asymmetry_correlations": ["embeddings", "test", "list_sets", "n", "r2"],
}

#: Identifier and text columns, read as strings wherever they occur.
STRING_COLUMNS = (
    "embeddings",
    "baseline",
    "lang",
    "list_set",
    "list_id",
    "test",
    "measure",
    "src",
    "tgt",
    "detail",
    "ci_method",
    "permutation_method",
    "oov_items",
    "counts_source",
)

#: What writes each optional table (for "missing table" messages).
_WRITTEN_BY = {
    "isomorphism": "weatkit run --isomorphism LANG",
    "correlations": "weatkit run --isomorphism LANG",
    "comparisons": "weatkit grid with a baseline",
    "asymmetry": "weatkit asymmetry RUN_DIR, or weatkit grid with asymmetry",
    "asymmetry_correlations": "weatkit asymmetry RUN_DIR, or weatkit grid with asymmetry",
}


@dataclass
class RunTables:
    """The tables and manifest of one run directory (absent tables are empty frames).

    Attributes:
        path: the run directory.
        results, summary, isomorphism, correlations, comparisons, asymmetry,
            asymmetry_correlations: the tables.
        manifest: ``manifest.json`` as a dict (empty when absent).
    """

    path: Path
    results: pd.DataFrame = field(default_factory=pd.DataFrame)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    isomorphism: pd.DataFrame = field(default_factory=pd.DataFrame)
    correlations: pd.DataFrame = field(default_factory=pd.DataFrame)
    comparisons: pd.DataFrame = field(default_factory=pd.DataFrame)
    asymmetry: pd.DataFrame = field(default_factory=pd.DataFrame)
    asymmetry_correlations: pd.DataFrame = field(default_factory=pd.DataFrame)
    manifest: dict = field(default_factory=dict)

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name``; a :class:`WeatkitError` when it is unknown or was not written."""
        if name not in TABLE_NAMES:
            raise WeatkitError(f"unknown table {name!r}: choose one of {', '.join(TABLE_NAMES)}")
        frame: pd.DataFrame = getattr(self, name)
        if frame.empty and not (self.path / f"{name}.csv").is_file():
            hint = f" (written by {_WRITTEN_BY[name]})" if name in _WRITTEN_BY else ""
            raise WeatkitError(f"{self.path} has no {name}.csv{hint}")
        return frame

    @property
    def reference_lang(self) -> str | None:
        """The ``--isomorphism`` reference language recorded in the manifest, if any."""
        config = self.manifest.get("config")
        return config.get("isomorphism") if isinstance(config, dict) else None


def run_tables(result: RunResult) -> dict[str, pd.DataFrame]:
    """The tables of a run by name: ``results`` and ``summary``, and ``isomorphism`` and
    ``correlations`` when the run measured isomorphism (``RunConfig.isomorphism``)."""
    tables = {"results": result.results, "summary": result.summary}
    config = result.manifest.get("config")
    if isinstance(config, dict) and config.get("isomorphism"):
        tables.update(isomorphism=result.isomorphism, correlations=result.correlations)
    return tables


def write_run_dir(result: RunResult, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``result`` as a run directory: ``results.csv``, ``summary.csv``, with isomorphism
    also ``isomorphism.csv`` and ``correlations.csv``, and ``manifest.json``.

    The files are written atomically (:func:`weatkit.report.tables.write_outputs`);
    :func:`read_run_dir` reads them back.

    Returns:
        The paths written, in that order.

    Example:
        >>> from weatkit import RunConfig, run                        # doctest: +SKIP
        >>> write_run_dir(run(RunConfig(lists=("weat",))), "out")    # doctest: +SKIP
    """
    # imported here: weatkit.report.tables loads the engine (torch); the readers need neither
    from weatkit.report.tables import manifest_bytes, render, write_outputs

    files = {f"{name}.csv": render(table, "csv") for name, table in run_tables(result).items()}
    files["manifest.json"] = manifest_bytes(result.manifest)
    return write_outputs(out_dir, files)


def read_run_dir(path: str | os.PathLike) -> RunTables:
    """Read every table of a run directory.

    Raises:
        WeatkitError: the directory does not exist, has neither ``results.csv`` nor
            ``summary.csv``, or a file is malformed or lacks a required column.
    """
    root = Path(path)
    if not root.is_dir():
        raise WeatkitError(f"run directory {root} does not exist")
    if not any((root / f"{name}.csv").is_file() for name in ("results", "summary")):
        raise WeatkitError(
            f"{root} is not a run directory: it has neither results.csv nor summary.csv "
            "(write one with weatkit run --out DIR)"
        )
    tables = {
        name: read_table(root / f"{name}.csv", REQUIRED_COLUMNS[name]) for name in TABLE_NAMES
    }
    return RunTables(path=root, manifest=read_manifest(root / "manifest.json"), **tables)


def read_run_results(path: str | os.PathLike) -> tuple[pd.DataFrame, dict]:
    """``results.csv`` (identifiers as text) and the run ``config`` of ``manifest.json``: what
    is needed to redo a step of the run on its tests (e.g. ``weatkit asymmetry RUN_DIR``).

    Raises:
        WeatkitError: no ``results.csv``, a malformed one, or a manifest that is missing or
            names no list sets.
    """
    root = Path(path)
    results_path = root / "results.csv"
    if not results_path.is_file():
        raise WeatkitError(f"no results.csv in {root}: write one with weatkit run --out DIR")
    results = read_table(results_path, REQUIRED_COLUMNS["results"])
    manifest_path = root / "manifest.json"
    config = read_manifest(manifest_path).get("config")
    if not isinstance(config, dict) or not config.get("lists"):
        raise WeatkitError(f"{manifest_path}: missing, or no list sets in its config")
    return results, config


def read_table(path: Path, required: Sequence[str] = ()) -> pd.DataFrame:
    """One CSV table with string identifiers; an empty frame when the file does not exist."""
    if not path.is_file():
        return pd.DataFrame()
    try:
        frame = pd.read_csv(
            path,
            dtype=dict.fromkeys(STRING_COLUMNS, str),
            keep_default_na=False,
            na_values=[""],
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError) as err:
        raise WeatkitError(f"{path} is not a valid CSV table: {err}") from err
    except OSError as err:
        raise WeatkitError(f"cannot read {path}: {err.strerror}") from err
    missing = [col for col in required if col not in frame.columns]
    if missing:
        raise WeatkitError(f"{path} lacks the column(s) {', '.join(missing)}")
    return frame


def read_manifest(path: Path) -> dict:
    """``manifest.json`` as a dict; empty when the file does not exist."""
    if not path.is_file():
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise WeatkitError(f"{path} is not valid JSON: {err}") from err
    if not isinstance(manifest, dict):
        raise WeatkitError(f"{path} is not a JSON object")
    return manifest


def filter_rows(
    frame: pd.DataFrame,
    *,
    table: str,
    tests: Sequence[str] | None = None,
    list_sets: Sequence[str] | None = None,
    embeddings: Sequence[str] | None = None,
    langs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The rows of ``frame`` matching every given filter (None or empty: no filter).

    Raises:
        WeatkitError: no row is left; the message names the filter that removed the last rows
            and the values available for it.
    """
    filters = [
        ("test", tests),
        ("list_set", list_sets),
        ("embeddings", embeddings),
        ("lang", langs),
    ]
    for column, wanted in filters:
        if not wanted or column not in frame.columns:
            continue
        wanted = as_list(wanted)
        kept = frame[frame[column].isin(wanted)]
        if kept.empty:
            flag = column.replace("_", "-")
            available = ", ".join(sorted(frame[column].dropna().unique())) or "none"
            raise WeatkitError(
                f"no rows in {table} for --{flag} {','.join(wanted)} (available: {available})"
            )
        frame = kept
    if frame.empty:
        raise WeatkitError(f"{table} has no rows")
    return frame


def as_list(values: str | Sequence[str]) -> list[str]:
    """``values`` as a list; a single string is one value (not its characters)."""
    return [values] if isinstance(values, str) else list(values)


def lang_order(frame: pd.DataFrame, langs: Sequence[str] | None = None) -> list[str]:
    """The languages of ``frame`` in the order of ``langs`` when given, else alphabetically."""
    present = set(frame["lang"])
    if langs:
        return [lang for lang in as_list(langs) if lang in present]
    return sorted(present)
