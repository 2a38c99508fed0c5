"""Experiment grids: embeddings × languages from one YAML/TOML file, resumable, with baselines.

See :mod:`weatkit.grid.config` (the file format), :mod:`weatkit.grid.jobs` (jobs and their
keys), :mod:`weatkit.grid.runner` (running and collating) and :mod:`weatkit.grid.compare`
(paired differences to a baseline).
"""

from weatkit.grid.config import GridConfig, load_grid_config
from weatkit.grid.runner import GridResult, plan, run_grid

__all__ = ["GridConfig", "GridResult", "load_grid_config", "plan", "run_grid"]
