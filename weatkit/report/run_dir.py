"""Write a run directory (``weatkit run --out DIR``) and read one back for exports and plots.

A run directory holds ``results.csv`` and ``summary.csv`` (see :mod:`weatkit.report.tables`),
``manifest.json``, and optionally ``isomorphism.csv`` and ``correlations.csv`` (``weatkit run
--isomorphism LANG``), ``pooled.csv`` (``weatkit run --pool LEVELS`` or a grid's ``pool``),
``influence.csv`` (``weatkit run --influence``), ``null.csv`` (``weatkit run --null K``),
``association.csv`` and ``association_items.csv`` (``weatkit run --metrics rnd,...``; with
``--influence`` also ``association_influence.csv``, with ``--pool`` ``association_pooled.csv``),
``reliability.csv`` (a run or grid with 2 parallel lists of a test scored by 3 embeddings:
:mod:`weatkit.pipeline.reliability`), ``comparisons.csv`` and ``asymmetry.csv``
(``weatkit grid``). Absent tables read as empty frames. Identifier columns (languages, list
ids, ...) are always read as strings, so ``1`` or ``NA`` stay the strings they were written as;
only empty fields are missing.

Nothing read is trusted: every field is checked against the column types declared with the
writers (:data:`weatkit.report.tables.COLUMN_TYPES`); every row must have as many fields as the
header and the file must end with a line break (a file cut mid-row is refused); the
identifiers a table needs must not be empty; ``manifest.json`` must be present and hold a
``config`` object of the expected shape. Errors name the file, the line (counted as in an
editor, the header being line 1) and the column.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from weatkit._io.atomic import check_complete
from weatkit.errors import WeatkitError
from weatkit.report.tables import COLUMN_TYPES, COUNT, TEXT, column_type

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
    "pooled",
    "influence",
    "null",
    "association",
    "association_items",
    "association_influence",
    "association_pooled",
    "reliability",
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
    "pooled": ["level", "embeddings", "list_set", "test", "k", "effect_size"],
    "influence": ["embeddings", "lang", "list_set", "list_id", "test", "set", "item", "delta"],
    "null": ["embeddings", "lang", "list_set", "list_id", "test", "draw", "d"],
    "association": ["embeddings", "lang", "list_set", "list_id", "test", "metric", "set"],
    "association_items": [
        "embeddings",
        "lang",
        "list_set",
        "list_id",
        "test",
        "metric",
        "set",
        "item",
        "value",
    ],
    "association_influence": [
        "embeddings",
        "lang",
        "list_set",
        "list_id",
        "test",
        "metric",
        "row_set",
        "set",
        "item",
        "delta",
    ],
    "association_pooled": ["level", "embeddings", "list_set", "test", "metric", "set", "k"],
    "reliability": ["lang", "list_set", "test", "n_units", "n_forms", "split_half", "icc2k"],
}

#: Identifier and text columns, read as strings wherever they occur.
STRING_COLUMNS = tuple(name for name, kind in COLUMN_TYPES.items() if kind == TEXT)

#: What writes each optional table (for "missing table" messages).
_WRITTEN_BY = {
    "isomorphism": "weatkit run --isomorphism LANG",
    "correlations": "weatkit run --isomorphism LANG",
    "comparisons": "weatkit grid with a baseline",
    "asymmetry": "weatkit asymmetry RUN_DIR, or weatkit grid with asymmetry",
    "asymmetry_correlations": "weatkit asymmetry RUN_DIR, or weatkit grid with asymmetry",
    "pooled": "weatkit run --pool LEVELS, or weatkit grid with pool",
    "influence": "weatkit run --influence",
    "null": "weatkit run --null K",
    "association": "weatkit run --metrics with a metric other than weat",
    "association_items": "weatkit run --metrics with a metric other than weat",
    "association_influence": "weatkit run --metrics with a metric other than weat --influence",
    "association_pooled": "weatkit run --metrics with a metric other than weat --pool LEVELS",
    "reliability": "weatkit run or grid with 2 parallel lists of a test and 3 embeddings",
}


@dataclass
class RunTables:
    """The tables and manifest of one run directory (absent tables are empty frames).

    Attributes:
        path: the run directory.
        results, summary, isomorphism, correlations, comparisons, asymmetry,
            asymmetry_correlations, pooled, influence, null, association, association_items,
            association_influence, association_pooled, reliability: the tables.
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
    pooled: pd.DataFrame = field(default_factory=pd.DataFrame)
    influence: pd.DataFrame = field(default_factory=pd.DataFrame)
    null: pd.DataFrame = field(default_factory=pd.DataFrame)
    association: pd.DataFrame = field(default_factory=pd.DataFrame)
    association_items: pd.DataFrame = field(default_factory=pd.DataFrame)
    association_influence: pd.DataFrame = field(default_factory=pd.DataFrame)
    association_pooled: pd.DataFrame = field(default_factory=pd.DataFrame)
    reliability: pd.DataFrame = field(default_factory=pd.DataFrame)
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
    """The tables of a run by name: ``results`` and ``summary``, ``isomorphism`` and
    ``correlations`` when the run measured isomorphism (``RunConfig.isomorphism``), and
    ``pooled`` when it pooled (``RunConfig.pool``), ``influence`` with
    ``RunConfig.engine.influence``, ``null`` with ``RunConfig.engine.null``, ``association``
    and ``association_items`` when ``RunConfig.metrics`` names an association metric (with
    ``association_influence`` and ``association_pooled`` when they are asked for too), and
    ``reliability`` when it has rows (:mod:`weatkit.pipeline.reliability`)."""
    config = result.manifest.get("config")
    names = requested_tables(config if isinstance(config, dict) else {})
    tables = {name: getattr(result, name) for name in names}
    if len(result.reliability):
        tables["reliability"] = result.reliability
    return tables


def requested_tables(config: Mapping[str, Any]) -> list[str]:
    """The tables a run's configuration asks for (:func:`run_tables`; ``config``: a manifest's
    ``config``, a :class:`~weatkit.pipeline.RunConfig` as a dict), all but ``reliability``,
    whose rows depend on the lists and embeddings."""
    names = ["results", "summary"]
    if config.get("isomorphism"):
        names += ["isomorphism", "correlations"]
    metrics = config.get("metrics")
    on_d = not isinstance(metrics, list | tuple) or "weat" in metrics  # d's tables
    engine = config.get("engine")
    engine = engine if isinstance(engine, dict) else {}
    wanted = {"pooled": config.get("pool"), "influence": engine.get("influence"),
              "null": engine.get("null")}  # fmt: skip
    names += [name for name, asked in wanted.items() if asked and on_d]
    if isinstance(metrics, list | tuple) and any(m != "weat" for m in metrics):
        names += ["association", "association_items"]
        names += ["association_influence"] if engine.get("influence") else []
        names += ["association_pooled"] if config.get("pool") else []
    return names


def write_run_dir(result: RunResult, out_dir: str | os.PathLike) -> list[Path]:
    """Write ``result`` as a run directory: ``results.csv``, ``summary.csv``, with isomorphism
    also ``isomorphism.csv`` and ``correlations.csv``, with pooling ``pooled.csv``, with
    influence ``influence.csv``, with a null baseline ``null.csv``, with association metrics
    ``association.csv`` and ``association_items.csv``, and ``manifest.json``.

    The files are written atomically (:func:`weatkit.report.tables.write_outputs`);
    :func:`read_run_dir` reads them back.

    Returns:
        The paths written, in that order.

    Example:
        >>> from weatkit import RunConfig, run                        # doctest: +SKIP
        >>> write_run_dir(run(RunConfig(lists=("weat",))), "out")    # doctest: +SKIP
    """
    from weatkit.report.tables import manifest_bytes, render, write_outputs

    files = {f"{name}.csv": render(table, "csv") for name, table in run_tables(result).items()}
    files["manifest.json"] = manifest_bytes(result.manifest)
    return write_outputs(out_dir, files, reads=manifest_inputs(result.manifest))


def manifest_inputs(manifest: dict) -> list[str]:
    """The files a run read, as its manifest records them (list files, embeddings files): what
    its outputs may not overwrite (:func:`weatkit._io.paths.check_not_input`)."""
    paths = [s.get("path") for s in manifest.get("list_sources") or [] if isinstance(s, dict)]
    for entry in manifest.get("embeddings") or []:
        if isinstance(entry, dict) and isinstance(entry.get("fingerprint"), dict):
            paths.append(entry["fingerprint"].get("path"))
    return [p for p in paths if isinstance(p, str)]


def read_run_dir(path: str | os.PathLike) -> RunTables:
    """Read and check every table and the manifest of a run directory.

    Raises:
        WeatkitError: the directory does not exist, has neither ``results.csv`` nor
            ``summary.csv``, lacks ``manifest.json``, or a file is malformed (see
            :func:`read_table` and :func:`read_manifest`).
    """
    root = Path(path)
    if not root.is_dir():
        raise WeatkitError(f"run directory {root} does not exist")
    check_complete(root)  # not half one run, half another (a write killed mid-way)
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
    """``results.csv`` and the run ``config`` of ``manifest.json``, checked as by
    :func:`read_run_dir`: what is needed to redo a step of the run on its tests (e.g.
    ``weatkit asymmetry RUN_DIR``).

    Raises:
        WeatkitError: no ``results.csv``, a malformed one, or a manifest that is missing,
            malformed or names no list sets.
    """
    root = Path(path)
    check_complete(root)  # not half one run, half another (a write killed mid-way)
    results_path = root / "results.csv"
    if not results_path.is_file():
        raise WeatkitError(f"no results.csv in {root}: write one with weatkit run --out DIR")
    results = read_table(results_path, REQUIRED_COLUMNS["results"])
    manifest_path = root / "manifest.json"
    config = read_manifest(manifest_path)["config"]
    if not config.get("lists"):
        raise WeatkitError(f"{manifest_path}: no list sets in its config (key config.lists)")
    return results, config


def read_table(
    path: Path, required: Sequence[str] = (), *, text_columns: Sequence[str] = ()
) -> pd.DataFrame:
    """One CSV table, checked; an empty frame when the file does not exist.

    Columns declared in :data:`weatkit.report.tables.COLUMN_TYPES` are checked and typed:
    text columns are strings, number columns floats, count columns whole numbers ≥ 0 (empty
    fields are missing values). The text columns among ``required`` must have a value in every
    row. Other columns are kept as pandas reads them. ``text_columns`` names columns that are
    text in this table whatever their declared type (``validity.csv``'s ``statistic``, a name).

    Raises:
        WeatkitError: not UTF-8 or not CSV, a row with more or fewer fields than the header, no
            line break at the end (a file cut short), a missing required column, an empty
            required identifier, or a field that is not of its column's type; the message
            names the file, the line and the column.
    """
    if not path.is_file():
        return pd.DataFrame()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise WeatkitError(f"{path} is not a valid CSV table: not UTF-8 ({err.reason})") from err
    except OSError as err:
        raise WeatkitError(f"cannot read {path}: {err.strerror}") from err
    lines, rows = _records(path, text)
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            dtype=dict.fromkeys([*STRING_COLUMNS, *text_columns], str),
            keep_default_na=False,
            na_values=[""],
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as err:
        raise WeatkitError(f"{path} is not a valid CSV table: {err}") from err
    missing = [col for col in required if col not in frame.columns]
    if missing:
        raise WeatkitError(f"{path} lacks the column(s) {', '.join(missing)}")
    if len(lines) != len(frame):  # pandas and csv disagree on what a record is: no line numbers
        lines = [None] * len(frame)
    for position, column in enumerate(frame.columns):
        kind = TEXT if column in text_columns else column_type(str(column))
        if kind is None:
            continue
        where = _Where(path, str(column), lines, rows, position)
        if kind == TEXT:
            if column in required:
                where.check_present(frame[column])
        else:
            frame[column] = where.numbers(frame[column], whole=kind == COUNT)
    return frame


def _records(path: Path, text: str) -> tuple[list[int | None], list[list[str]]]:
    """The line each data record starts on and its fields, every record checked to have as
    many fields as the header and the file to end with a line break (a file cut mid-row has a
    short last record, or a last field cut short)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    lines: list[int | None] = []
    rows: list[list[str]] = []
    start = 1
    try:
        for fields in reader:
            if fields:  # pandas skips blank lines too
                if header is None:
                    header = fields
                elif len(fields) != len(header):
                    raise WeatkitError(
                        f"{path} is not a valid CSV table: line {start} has {len(fields)} "
                        f"field(s), the header has {len(header)}"
                        + (" (a row cut short?)" if len(fields) < len(header) else "")
                    )
                else:
                    lines.append(start)
                    rows.append(fields)
            start = reader.line_num + 1
    except csv.Error as err:
        raise WeatkitError(f"{path} is not a valid CSV table: line {start}: {err}") from None
    if text and not text.endswith(("\n", "\r")):  # every table is written with line ends
        raise WeatkitError(
            f"{path} is not a valid CSV table: line {reader.line_num} ends without a line "
            "break (the file was cut short?)"
        )
    return lines, rows


@dataclass(frozen=True)
class _Where:
    """One column of one file, to name the line and value at fault."""

    path: Path
    column: str
    lines: list[int | None]
    rows: list[list[str]]
    position: int

    def _at(self, index: int) -> str:
        line = self.lines[index]
        return f"{self.path}: line {line}" if line is not None else f"{self.path}: row {index + 1}"

    def _raw(self, index: int, value: object) -> str:
        if self.lines[index] is not None:
            return self.rows[index][self.position]
        return str(value)

    def check_present(self, values: pd.Series) -> None:
        empty = values.isna().to_numpy().nonzero()[0]
        if len(empty):
            raise WeatkitError(f"{self._at(int(empty[0]))}: column {self.column} is empty")

    def numbers(self, values: pd.Series, *, whole: bool) -> pd.Series:
        """``values`` as floats (whole numbers: as read), or the first bad field named."""
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            for index, value in enumerate(values):
                if pd.isna(value):
                    continue
                try:
                    float(str(value))
                except ValueError:
                    raise WeatkitError(
                        f"{self._at(index)}: column {self.column}: "
                        f"{self._raw(index, value)!r} is not a number"
                    ) from None
            values = pd.to_numeric(values.astype(object).map(_as_float), errors="raise")
        if whole:
            for index, value in enumerate(values):
                if not pd.isna(value) and not (
                    math.isfinite(value) and float(value).is_integer() and value >= 0
                ):
                    raise WeatkitError(
                        f"{self._at(index)}: column {self.column}: "
                        f"{self._raw(index, value)!r} is not a whole number >= 0"
                    )
        return values


def _as_float(value: object) -> float:
    return math.nan if pd.isna(value) else float(str(value))


def read_manifest(path: Path) -> dict:
    """``manifest.json``, checked: a JSON object whose ``config`` is an object, with
    ``config.lists`` a list of strings, ``config.isomorphism`` a string or null and
    ``config.engine.confidence_level`` a number in (0, 1) where present.

    Raises:
        WeatkitError: the file is missing, not UTF-8 JSON, or not of that shape (naming the
            key at fault).
    """
    if not path.is_file():
        raise WeatkitError(
            f"{path}: missing; every run directory has one (written by weatkit run --out DIR "
            "with the tables)"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise WeatkitError(f"{path} is not valid JSON: {err}") from err
    except UnicodeDecodeError as err:
        raise WeatkitError(f"{path} is not valid JSON: not UTF-8 ({err.reason})") from err
    except OSError as err:
        raise WeatkitError(f"cannot read {path}: {err.strerror}") from err
    if not isinstance(manifest, dict):
        raise WeatkitError(f"{path} is not a JSON object")
    config = manifest.get("config")
    if not isinstance(config, dict):
        raise WeatkitError(f"{path}: key config: missing or not an object")
    lists = config.get("lists", [])
    if not isinstance(lists, list) or not all(isinstance(item, str) for item in lists):
        raise WeatkitError(f"{path}: key config.lists: expected a list of list-set names")
    if not isinstance(config.get("isomorphism"), str | None):
        raise WeatkitError(f"{path}: key config.isomorphism: expected a language or null")
    engine = config.get("engine", {})
    if not isinstance(engine, dict):
        raise WeatkitError(f"{path}: key config.engine: expected an object")
    level = engine.get("confidence_level", 0.95)
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise WeatkitError(
            f"{path}: key config.engine.confidence_level: expected a number between 0 and 1, "
            f"not {level!r}"
        )
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
