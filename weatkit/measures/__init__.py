"""Bias measures under one contract: a registry of measures and one result shape.

* :mod:`weatkit.measures.registry` — every measure registered once (neutral value, direction,
  citation, model kinds, languages): :data:`~weatkit.measures.registry.MEASURES`.
* :mod:`weatkit.measures.result` — :class:`~weatkit.measures.result.MeasureResult` and
  :func:`~weatkit.measures.result.to_frame`.
* :func:`gest`, :func:`stereoset`, :func:`crows`, :func:`mbe` — compute a sentence-level measure
  from a model (or from scores / predictions), returning the native result and ``.measures``;
  each lives in its measure's package (``weatkit.gest.measure``, ``weatkit.crows.measure``,
  ``weatkit.stereoset.measure``, ``weatkit.mbe.measure``) and is re-exported here.
* ``gest_measures``, ``stereoset_measures``, ``crows_measures``, ``mbe_measures``,
  ``weat_measures`` — the conversion of each native result to :class:`MeasureResult`.

The functions are imported on first use, so ``import weatkit.measures`` loads neither torch nor
transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

from weatkit.measures.registry import MEASURES, Measure, get_measure
from weatkit.measures.result import RESULT_COLUMNS, MeasureResult, to_frame

_LAZY = {
    "gest": "weatkit.gest.measure",
    "GestResult": "weatkit.gest.measure",
    "gest_measures": "weatkit.gest.measure",
    "stereoset": "weatkit.stereoset.measure",
    "StereosetResult": "weatkit.stereoset.measure",
    "stereoset_measures": "weatkit.stereoset.measure",
    "crows": "weatkit.crows.measure",
    "CrowsResult": "weatkit.crows.measure",
    "crows_measures": "weatkit.crows.measure",
    "mbe": "weatkit.mbe.measure",
    "MbeMeasure": "weatkit.mbe.measure",
    "mbe_measures": "weatkit.mbe.measure",
    "weat_measures": "weatkit.measures._weat",
}

__all__ = [
    "MEASURES",
    "RESULT_COLUMNS",
    "Measure",
    "MeasureResult",
    "get_measure",
    "to_frame",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'weatkit.measures' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
