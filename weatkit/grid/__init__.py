"""Experiment grids: embeddings × languages from one YAML/TOML file, resumable, with baselines.

See :mod:`weatkit.grid.config` (the file format), :mod:`weatkit.grid.jobs` (jobs and their
keys), :mod:`weatkit.grid.runner` (running and collating), :mod:`weatkit.grid.executors` and
:mod:`weatkit.grid.ray_executor` (where jobs run) and :mod:`weatkit.grid.compare` (paired
differences to a baseline).
"""

from weatkit.grid.config import GridConfig, load_grid_config
from weatkit.grid.executors import LocalExecutor
from weatkit.grid.ray_executor import RayExecutor
from weatkit.grid.runner import GridResult, plan, run_grid

__all__ = [
    "GridConfig",
    "GridResult",
    "LocalExecutor",
    "RayExecutor",
    "load_grid_config",
    "plan",
    "run_grid",
]
