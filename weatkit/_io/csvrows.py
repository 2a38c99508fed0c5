"""CSV records with the line each starts on, and a checked header: one-line errors naming the
file and line."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from weatkit.errors import WeatkitError

#: ``(line, fields)`` per non-blank CSV record.
Rows = list[tuple[int, list[str]]]


def csv_rows(text: str, name: str, *, delimiter: str = ",") -> Rows:
    """Non-blank CSV records of ``text`` with the line each starts on (``name`` for errors);
    ``delimiter="\\t"`` for tab-separated files (quoted as CSV)."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True, delimiter=delimiter)
    rows: Rows = []
    start = 1
    try:
        for fields in reader:
            if any(field.strip() for field in fields):
                rows.append((start, fields))
            start = reader.line_num + 1
    except csv.Error as err:
        raise WeatkitError(f"{name}: line {start}: not valid CSV ({err})") from None
    return rows


def csv_header(rows: Rows, name: str, required: Sequence[str]) -> tuple[dict[str, int], Rows]:
    """Column positions (names stripped and lower-cased) and the data rows, checked for width.

    Raises:
        WeatkitError: empty file, a repeated or missing column, a row of another width.
    """
    if not rows:
        raise WeatkitError(f"{name}: empty file; expected a header row with {', '.join(required)}")
    line, header = rows[0]
    columns = [col.strip().lower() for col in header]
    repeated = sorted({col for col in columns if columns.count(col) > 1})
    if repeated:
        raise WeatkitError(f"{name}: line {line}: column {repeated[0]!r} appears more than once")
    missing = [col for col in required if col not in columns]
    if missing:
        raise WeatkitError(
            f"{name}: line {line}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (found {', '.join(repr(c) for c in columns)})"
        )
    for number, fields in rows[1:]:
        if len(fields) != len(columns):
            raise WeatkitError(
                f"{name}: line {number}: expected {len(columns)} fields (as in the header), "
                f"found {len(fields)}"
            )
    return {col: i for i, col in enumerate(columns)}, rows[1:]
