"""Word-level and sentence-level bias measures side by side, and how well they agree.

:func:`compare` is the public entry point (``weatkit.compare``); ``weatkit compare`` runs it.
"""

from weatkit.crossmethod.config import CompareConfig, load_compare_config
from weatkit.crossmethod.runner import CompareResult, compare, run_compare, write_compare

__all__ = [
    "CompareConfig",
    "CompareResult",
    "compare",
    "load_compare_config",
    "run_compare",
    "write_compare",
]
