"""A table of a report: a frame's rows as cells to show, with the numbers and their intervals.

Every row of the frame is one row of the HTML table, in the frame's order, so the page has as
many rows as the CSV file it was read from. A table has one number format
(:mod:`weatkit.report.numbers`): fixed point, the decimals of a column those that show 4
significant digits of its largest value (:func:`column_decimals`), counts whole, p-values as
:func:`~weatkit.report.numbers.format_p`; every number keeps its full value for sorting. A column
``X`` with ``X_ci_low`` and ``X_ci_high`` (or ``statistic``/``value`` with ``ci_low``/``ci_high``)
is shown as one cell ``x [low, high]`` by :func:`~weatkit.report.numbers.format_estimate`,
around the row's ``neutral`` value (0 for effect sizes, differences and correlations), and an
interval without its estimate (``hk_ci_low``, ``hk_ci_high``) as ``[low, high]``. Columns with
few distinct labels (:data:`FILTER_COLUMNS`) get a select box.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

from weatkit.report.numbers import MISSING, format_estimate, format_number, format_p

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


#: The columns whose neutral value is 0 where the row names none (``neutral``): effect sizes,
#: differences, correlations.
_NEUTRAL_ZERO = (
    *("effect_size", "difference", "d"),
    *("spearman", "kendall", "pearson_r", "spearman_rho"),
)
#: p-values and adjusted p-values: shown by :func:`~weatkit.report.numbers.format_p`.
_P_VALUE = re.compile(r"^(?:p_value\w*|p_holm|q_bh|p_null|pvalue)$|_p$|_pvalue$")
#: The fewest and most decimals a column gets (:func:`column_decimals`).
MIN_DECIMALS, MAX_DECIMALS = 0, 8


def column_decimals(values: pd.Series) -> int:
    """The decimals of a column of numbers: ``3 − ⌊log10 max |x|⌋`` (4 significant digits of
    its largest value), within [:data:`MIN_DECIMALS`, :data:`MAX_DECIMALS`]; whole-number
    columns get none."""
    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    finite = numbers[numbers.map(math.isfinite)]
    if finite.empty or bool((finite == finite.round()).all()):
        return 0
    largest = float(finite.abs().max())
    digits = 3 - math.floor(math.log10(largest)) if largest > 0 else MAX_DECIMALS
    return min(MAX_DECIMALS, max(MIN_DECIMALS, digits))


def html_table(frame: pd.DataFrame, *, id: str, source: str, interval: str = "") -> HtmlTable:
    """``frame`` as a :class:`HtmlTable` (module docstring)."""
    shown = _shown_columns(frame)
    columns = [label for label, _ in shown]
    decimals = {label: column_decimals(frame[names[0]]) for label, names in shown}
    rows = [
        [_cell(row, names, decimals[label]) for label, names in shown]
        for row in frame.to_dict("records")
    ]
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


def _cell(row: dict, names: tuple[str, ...], decimals: int) -> Cell:
    values = [row[n] for n in names]
    if len(values) == 1:
        p_value = _P_VALUE.search(names[0])
        text = format_p(values[0]) if p_value else format_value(values[0], decimals)
        return Cell(text, _sort_key(values[0]))
    if all(_missing(v) for v in values[-2:]):
        return Cell(format_value(values[0], decimals) if len(values) == 3 else "", None)
    neutral = row.get("neutral", 0.0 if names[0] in _NEUTRAL_ZERO else None)
    if len(values) == 2:
        text = format_estimate(math.nan, *values, neutral=neutral, decimals=decimals)
        return Cell(text.removeprefix(MISSING + " "), _sort_key(values[0]))
    return Cell(format_estimate(*values, neutral=neutral, decimals=decimals), _sort_key(values[0]))


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def format_value(value: object, decimals: int = 3) -> str:
    """A value as shown: empty for missing, a real number in fixed point with ``decimals``
    decimals (a count: 0), text as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return format_number(value, decimals)
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
