"""weatkit: social-bias measures of word and sentence representations across languages.

WEAT / X-WEAT / CA-WEAT association tests on static vectors and Hugging Face models, the other
association metrics of the field (RND, RNSB, MAC, ECT, RIPA, WEFAT, SC-WEAT, DirectBias) with
bootstrap intervals, the isomorphism of embedding spaces, the sentence-level measures GEST,
StereoSet, CrowS-Pairs and MBE, and their comparison. The public entry points are imported on
first use, so ``import weatkit`` stays cheap (no torch)::

    >>> import weatkit
    >>> res = weatkit.weat(X, Y, A, B)                          # doctest: +SKIP
    >>> out = weatkit.run(weatkit.RunConfig(lists=("weat",)))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from weatkit.errors import WeatkitError
from weatkit.measures.plugins import lazy_api

__version__ = "0.1.0"

#: Public name -> ``module:attribute`` it is imported from on first use (or ``module``).
_LAZY: dict[str, str] = {
    "weat": "weatkit.engine.weat:weat",
    "influence": "weatkit.engine.influence:influence",
    "null_baseline": "weatkit.engine.null:null_baseline",
    "run": "weatkit.pipeline:run",
    "RunConfig": "weatkit.pipeline:RunConfig",
    "load_vectors": "weatkit.embeddings.load:load_vectors",
    "WordVectors": "weatkit.embeddings.vectors:WordVectors",
    "iso": "weatkit.isomorphism:iso",
    "grid": "weatkit.grid:grid",
    "compare": "weatkit.crossmethod:compare",
    "rnd": "weatkit.association.rnd:rnd",
    "rnsb": "weatkit.association.rnsb:rnsb",
    "mac": "weatkit.association.mac:mac",
    "ect": "weatkit.association.ect:ect",
    "ripa": "weatkit.association.ripa:ripa",
    "wefat": "weatkit.association.wefat:wefat",
    "sc_weat": "weatkit.association.sc_weat:sc_weat",
    "direct_bias": "weatkit.association.direct_bias:direct_bias",
    "validity": "weatkit.validity",  # a module: reliability and validity statistics
    "write_report": "weatkit.report.html:write_report",
    "log_to_mlflow": "weatkit.tracking:log_to_mlflow",
    **lazy_api(),  # the measure packages' own (weatkit.measures.plugins)
}


def _unbind_packages(names: list[str]) -> None:
    """Reading the plugins imported their packages, which bound ``weatkit.<name>`` to the
    package: unbind it, so that the public function of :data:`_LAZY` wins."""
    for name in names:
        if isinstance(globals().get(name), types.ModuleType):
            del globals()[name]


_unbind_packages(list(lazy_api()))

__all__ = [
    "RunConfig",
    "WeatkitError",
    "WordVectors",
    "__version__",
    "compare",
    "crows",
    "direct_bias",
    "ect",
    "gest",
    "grid",
    "influence",
    "iso",
    "load_vectors",
    "log_to_mlflow",
    "mac",
    "mbe",
    "null_baseline",
    "ripa",
    "rnd",
    "rnsb",
    "run",
    "sc_weat",
    "stereoset",
    "validity",
    "weat",
    "wefat",
    "write_report",
    *lazy_api(),
]

if TYPE_CHECKING:  # pragma: no cover
    from weatkit import validity
    from weatkit.association.direct_bias import direct_bias
    from weatkit.association.ect import ect
    from weatkit.association.mac import mac
    from weatkit.association.ripa import ripa
    from weatkit.association.rnd import rnd
    from weatkit.association.rnsb import rnsb
    from weatkit.association.sc_weat import sc_weat
    from weatkit.association.wefat import wefat
    from weatkit.embeddings.load import load_vectors
    from weatkit.embeddings.vectors import WordVectors
    from weatkit.engine.influence import influence
    from weatkit.engine.null import null_baseline
    from weatkit.engine.weat import weat
    from weatkit.grid import grid
    from weatkit.isomorphism import iso
    from weatkit.pipeline import RunConfig, run
    from weatkit.report.html import write_report
    from weatkit.tracking import log_to_mlflow


def __getattr__(name: str) -> Any:
    """Import a public name of :data:`_LAZY` on first access (PEP 562); a target without
    ``:attribute`` is the module itself."""
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'weatkit' has no attribute {name!r}")
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise
        raise AttributeError(f"weatkit.{name} needs {module_name}, which is missing") from err
    value = getattr(module, attribute) if attribute else module
    globals()[name] = value  # later accesses skip __getattr__
    return value


class _Package(types.ModuleType):
    """``weatkit`` itself: its public functions keep their names when a subpackage of the same
    name (``weatkit.grid``, ``weatkit.gest``, ...) is imported, which would otherwise bind the
    subpackage to ``weatkit.grid`` (the subpackage stays in ``sys.modules``: ``from
    weatkit.grid.config import GridConfig`` works as ever)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
