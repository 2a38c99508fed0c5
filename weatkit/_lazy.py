"""Lazy exports of a package: its public names imported from their modules on first use, so
that importing the package (``import weatkit``, reading a measure's plugin) loads neither torch
nor the data. Python's module ``__getattr__`` (PEP 562) does the work; :func:`lazy_exports`
writes it once for every package that needs it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: a name of ``table`` (name -> module)
    is imported from its module on first use and kept in the package's namespace.

    Example (in a package's ``__init__``)::

        __getattr__, __dir__ = lazy_exports(__name__, _LAZY)
    """

    def __getattr__(name: str) -> Any:
        if name in table:
            value = getattr(importlib.import_module(table[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
