"""Preprocessing shared by the isomorphism measures, and small input checks.

The reference scripts of the iso-study (Vulić et al. 2020, cambridgeltl/iso-study,
``scripts/evs_script.py`` and ``scripts/gh_script.py``, function ``load_word_vectors``) prepare a
vector file in three steps before taking its first (most frequent) rows:

1. length-normalise every row, ``x ← x / ‖x‖₂``;
2. centre every dimension, ``x ← x − mean(X)`` (mean over all rows, per column);
3. length-normalise every row again.

:func:`normalize_space` does exactly this in float64 (the scripts worked in float32).
"""

from __future__ import annotations

import numpy as np
import torch

from weatkit.engine.device import resolve_device
from weatkit.errors import WeatkitError


def check_matrix(values: object, what: str, *, min_rows: int = 1) -> np.ndarray:
    """``values`` as a finite float64 ``(n, d)`` array with ``n >= min_rows`` and ``d >= 1``.

    Raises:
        WeatkitError: wrong shape, too few rows, or a non-finite value (the row is named).
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise WeatkitError(f"{what}: not a numeric matrix ({err})") from err
    if arr.ndim != 2:
        raise WeatkitError(f"{what}: expected a 2-d array (rows × dims), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise WeatkitError(f"{what}: needs at least {min_rows} rows, got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise WeatkitError(f"{what}: has no columns")
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise WeatkitError(
            f"{what}: row {int(bad[0])} has a NaN or infinite value "
            f"({bad.size} such row{'s' if bad.size > 1 else ''})"
        )
    return arr


def float64_device(spec: str | torch.device) -> torch.device:
    """:func:`~weatkit.engine.device.resolve_device`, but never MPS (it has no float64).

    The measures compute in float64 so that CPU and CUDA agree to rounding; on Apple MPS they run
    on the CPU instead.
    """
    device = resolve_device(spec)
    return torch.device("cpu") if device.type == "mps" else device


def normalize_space(vectors: np.ndarray) -> np.ndarray:
    """Unit length → mean-centre → unit length, in float64 (the iso-study preprocessing).

    For rows ``x_i`` of ``vectors``::

        u_i = x_i / ‖x_i‖₂,    c_i = u_i − (1/n) Σ_j u_j,    y_i = c_i / ‖c_i‖₂

    Source: cambridgeltl/iso-study ``scripts/evs_script.py`` and ``scripts/gh_script.py``,
    ``load_word_vectors`` (sklearn ``normalize``; ``npvectors - npvectors.mean(0)``;
    ``normalize``), used by Vulić et al. (2020) and the CA-WEAT paper §5. The scripts apply it to
    the whole vector file and only then keep the first ``FREQ`` rows; do the same (normalise
    everything you load, then cut).

    Args:
        vectors: ``(n, d)`` array.

    Returns:
        ``(n, d)`` float64 array with unit-norm rows.

    Raises:
        WeatkitError: not a 2-d array; a NaN/infinite value; a zero row; a row that is zero after
            centring (it equals the mean of the unit rows). The message names the row index. (The
            reference's sklearn ``normalize`` would silently leave such rows at zero.)
    """
    arr = check_matrix(vectors, "normalize_space")
    norms = np.linalg.norm(arr, axis=1)
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise WeatkitError(
            f"normalize_space: row {int(zero[0])} has zero norm ({zero.size} zero row"
            f"{'s' if zero.size > 1 else ''})"
        )
    unit = arr / norms[:, None]
    centred = unit - unit.mean(axis=0)
    norms = np.linalg.norm(centred, axis=1)
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise WeatkitError(
            f"normalize_space: row {int(zero[0])} has zero norm after mean-centring "
            "(it equals the mean direction)"
        )
    return centred / norms[:, None]


__all__ = ["normalize_space"]
