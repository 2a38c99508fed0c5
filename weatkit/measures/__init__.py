"""Bias measures under one contract: a registry of measures and one result shape.

* :mod:`weatkit.measures.registry` — every measure registered once (neutral value, direction,
  citation, model kinds, languages): :data:`~weatkit.measures.registry.MEASURES`.
* :mod:`weatkit.measures.result` — :class:`~weatkit.measures.result.MeasureResult` and
  :func:`~weatkit.measures.result.to_frame`.
* :func:`gest`, :func:`stereoset`, :func:`crows`, :func:`mbe` — compute a sentence-level measure
  from a model (or from scores / predictions), returning the native result and ``.measures``.
* ``gest_measures``, ``stereoset_measures``, ``crows_measures``, ``mbe_measures``,
  ``weat_measures``, ``association_measures`` — the conversion of each native result to
  :class:`MeasureResult`.

The functions are imported on first use, so ``import weatkit.measures`` loads neither torch nor
transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

from weatkit.measures.registry import MEASURES, Measure, get_measure
from weatkit.measures.result import RESULT_COLUMNS, MeasureResult, to_frame

_LAZY = {
    "gest": "_gest",
    "GestResult": "_gest",
    "gest_measures": "_gest",
    "stereoset": "_stereoset",
    "StereosetResult": "_stereoset",
    "stereoset_measures": "_stereoset",
    "crows": "_crows",
    "CrowsResult": "_crows",
    "crows_measures": "_crows",
    "mbe": "_mbe",
    "MbeMeasure": "_mbe",
    "mbe_measures": "_mbe",
    "weat_measures": "_weat",
    "association_measures": "_weat",
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
        value = getattr(importlib.import_module(f"weatkit.measures.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'weatkit.measures' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
