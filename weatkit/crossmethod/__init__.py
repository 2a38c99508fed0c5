"""Word-level and sentence-level bias measures side by side, and how well they agree."""

from weatkit.crossmethod.config import CompareConfig, load_compare_config
from weatkit.crossmethod.runner import CompareResult, run_compare, write_compare

__all__ = ["CompareConfig", "CompareResult", "load_compare_config", "run_compare", "write_compare"]
