"""The score tables the validity statistics read: units in rows, forms, raters or measures in
columns; checked once, with one-line errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from weatkit.errors import DataError


def score_matrix(
    scores: pd.DataFrame | Mapping[str, pd.Series] | np.ndarray | Sequence[Sequence[float]],
    *,
    what: str,
    columns: str,
) -> tuple[np.ndarray, list[str]]:
    """``(n units, k columns)`` float array and the column names (``0``, ``1``... for an array).

    ``scores`` is a table (rows: units), an array, or a mapping of column name -> scores by
    unit (a :class:`pandas.Series` indexed by unit), which must all score the same units.

    Raises:
        DataError: series of different units (naming a unit one of them lacks), not
            two-dimensional, fewer than 2 columns (``what`` needs them) or 2 units,
            or a missing / infinite value (naming its unit and column).
    """
    if isinstance(scores, Mapping):
        scores = _aligned({str(k): pd.Series(v) for k, v in scores.items()}, what, columns[:-1])
    if isinstance(scores, pd.DataFrame):
        names = [str(c) for c in scores.columns]
        index = [str(i) for i in scores.index]
        values = scores.to_numpy(dtype=np.float64)
    else:
        values = np.asarray(scores, dtype=np.float64)
        if values.ndim != 2:
            raise DataError(
                f"{what} needs a table of units × {columns}, got an array of shape {values.shape}"
            )
        names = [str(j) for j in range(values.shape[1])]
        index = [str(i) for i in range(values.shape[0])]
    n, k = values.shape
    if k < 2:
        raise DataError(f"{what} needs at least 2 {columns}, got {k}")
    if n < 2:
        raise DataError(f"{what} needs at least 2 units, got {n}")
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        i, j = bad[0]
        raise DataError(
            f"{what}: missing or infinite score of unit {index[i]!r} in {columns[:-1]} "
            f"{names[j]!r} ({len(bad)} in all); every unit needs a score in every {columns[:-1]}"
        )
    return values, names


def _aligned(series: dict[str, pd.Series], what: str, column: str) -> pd.DataFrame:
    """The series side by side, in the first one's unit order, after checking they score the
    same units."""
    if not series:
        return pd.DataFrame()
    (first, units), *others = series.items()
    for name, values in others:
        missing = units.index.difference(values.index, sort=False)
        extra = values.index.difference(units.index, sort=False)
        if len(missing) or len(extra):
            if len(missing):
                unit, lacks, has = missing[0], name, first
            else:
                unit, lacks, has = extra[0], first, name
            raise DataError(
                f"{what}: mismatched units: {column} {lacks!r} has no score of unit {unit!r}, "
                f"which {column} {has!r} scores"
            )
    return pd.DataFrame({name: values.reindex(units.index) for name, values in series.items()})
