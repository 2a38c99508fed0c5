"""Presets that reproduce a reference tool's conventions.

Each preset names the :class:`~weatkit.engine.weat.EngineOptions` / run options a reference
implementation uses; options given explicitly (on the command line or in a file) still win.

* ``caliskan`` — Caliskan, Bryson & Narayanan (Science 2017): sample standard deviation
  (``ddof=1``) in Cohen's d, one-sided test, no equalisation of set sizes;
* ``ca-weat`` — the CA-WEAT paper's code (España-Bonet & Barrón-Cedeño 2022): population
  standard deviation (``ddof=0``), sets truncated to equal size;
* ``xweat`` — XWEAT (Lauscher & Glavaš 2019): as ``ca-weat``;
* ``wefe`` — WEFE (Badilla et al. 2020): ``ddof=0``, no equalisation.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

#: Preset name -> option values (keys are the ``weatkit run`` option names).
COMPAT_PRESETS: MappingProxyType[str, MappingProxyType[str, Any]] = MappingProxyType(
    {
        name: MappingProxyType(values)
        for name, values in {
            "caliskan": {
                "ddof": 1,
                "metric": "cosine",
                "equalize": "none",
                "alternative": "greater",
            },
            "ca-weat": {"ddof": 0, "metric": "cosine", "equalize": "truncate"},
            "xweat": {"ddof": 0, "metric": "cosine", "equalize": "truncate"},
            "wefe": {"ddof": 0, "metric": "cosine", "equalize": "none"},
        }.items()
    }
)
