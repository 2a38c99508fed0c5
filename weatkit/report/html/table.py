"""A table of a report: a frame's rows as cells to show, with the numbers and their intervals.

Every row of the frame is one row of the HTML table, in the frame's order, so the page has as
many rows as the CSV file it was read from. Numbers are shown with 4 significant digits
(counts whole) and keep their full value for sorting; a column ``X`` with ``X_ci_low`` and
``X_ci_high`` (or ``statistic``/``value`` with ``ci_low``/``ci_high``) is shown as one cell
``x [low, high]``, and an interval without its estimate (``hk_ci_low``, ``hk_ci_high``) as
``[low, high]``. Columns with few distinct labels (:data:`FILTER_COLUMNS`) get a select box.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

#: Text columns offered as select-box filters when a table has them (at most
#: :data:`MAX_CHOICES` values each).
FILTER_COLUMNS = (
    "embeddings",
    "model",
    "lang",
    "list_set",
    "test",
    "level",
    "metric",
    "method",
    "measure",
    "scope",
    "kind",
    "status",
    "bias_type",
    "outcome",
)
MAX_CHOICES = 60
#: The estimates a bare ``ci_low``/``ci_high`` belongs to, the first present that holds numbers
#: (``validity.csv``'s ``statistic`` is the statistic's name, its ``value`` the number).
_BARE_CI_OF = ("statistic", "value", "effect_size")
_CI_LOW = re.compile(r"^(?:(.+)_)?ci_low$")


@dataclass(frozen=True)
class Cell:
    """What a cell shows and, for a number, the value it sorts by."""

    text: str
    sort: float | None = None


@dataclass
class HtmlTable:
    """One table of a report.

    Attributes:
        id: the table's HTML id (unique in the page).
        source: where its rows come from (``summary.csv``, ...).
        columns: the column headers.
        rows: the cells, one list per row of the source.
        filters: ``(column index, values)`` of the columns with a select box.
        interval: how its intervals were computed, in words (empty: none).
    """

    id: str
    source: str
    columns: list[str]
    rows: list[list[Cell]]
    filters: list[tuple[int, list[str]]] = field(default_factory=list)
    interval: str = ""


def html_table(frame: pd.DataFrame, *, id: str, source: str, interval: str = "") -> HtmlTable:
    """``frame`` as a :class:`HtmlTable` (module docstring)."""
    shown = _shown_columns(frame)
    columns = [label for label, _ in shown]
    rows = [[_cell(row, names) for _, names in shown] for row in frame.to_dict("records")]
    filters = []
    for index, (label, names) in enumerate(shown):
        if label in FILTER_COLUMNS and len(names) == 1:
            values = sorted({c.text for c in (r[index] for r in rows)} - {""})
            if 1 < len(values) <= MAX_CHOICES:
                filters.append((index, values))
    return HtmlTable(id, source, columns, rows, filters, interval)


def _shown_columns(frame: pd.DataFrame) -> list[tuple[str, tuple[str, ...]]]:
    """``(header, source columns)`` per shown column: an estimate with its interval is one
    column of three sources, an interval without one a column of two."""
    names = [str(c) for c in frame.columns]
    merged: dict[str, tuple[str, str]] = {}  # estimate (or interval label) -> (low, high)
    for name in names:
        match = _CI_LOW.match(name)
        high = name.replace("ci_low", "ci_high")
        if match is None or high not in names:
            continue
        stem = match.group(1)
        if stem is None:
            numeric = [c for c in _BARE_CI_OF if c in names and _is_number(frame[c])]
            stem = next((c for c in numeric if c not in merged), "CI")
        merged[stem if stem in names else f"{stem} CI"] = (name, high)
    parts = {c for pair in merged.values() for c in pair}
    shown: list[tuple[str, tuple[str, ...]]] = []
    for name in names:
        if name in merged:
            shown.append((f"{name} [CI]", (name, *merged[name])))
        elif name in parts:  # an interval without its estimate goes where its low was
            label = next((k for k, v in merged.items() if v[0] == name), None)
            if label is not None and label not in names:
                shown.append((label, merged[label]))
        else:
            shown.append((name, (name,)))
    return shown


def _is_number(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _cell(row: dict, names: tuple[str, ...]) -> Cell:
    values = [row[n] for n in names]
    if len(values) == 1:
        return Cell(format_value(values[0]), _sort_key(values[0]))
    texts = [format_value(v) for v in values]
    interval = f"[{texts[-2]}, {texts[-1]}]" if texts[-2] or texts[-1] else ""
    if len(values) == 2:
        return Cell(interval, _sort_key(values[0]))
    return Cell(f"{texts[0]} {interval}".strip(), _sort_key(values[0]))


def format_value(value: object) -> str:
    """A value as shown: empty for missing, 4 significant digits for a real number, whole
    numbers without a decimal point."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value.is_integer() and abs(value) < 1e12:
            return str(int(value))
        return f"{value:.4g}"
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value)


def _sort_key(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)
