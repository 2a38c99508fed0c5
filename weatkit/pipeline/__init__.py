"""``weatkit run`` as a library call: lists × embeddings → engine → tidy tables.

Data flows one way: list sets are selected and normalised (:mod:`weatkit.lists`), each
embeddings source is loaded once per file with only the words the tests need
(:mod:`weatkit.embeddings`), out-of-vocabulary items are dropped per set, and all tests of all
embeddings go through the batched engine together (:mod:`weatkit.engine`). The CLI only parses
options into a :class:`RunConfig` and calls :func:`run`.

Modules, one job each:

- :mod:`~weatkit.pipeline.run_config`: :class:`RunConfig`, the options of a run.
- :mod:`~weatkit.pipeline.result`: :class:`RunResult`, its tables, and the lines counting what
  was skipped (:func:`skipped_by_language`, :func:`skipped_metric_lines`).
- :mod:`~weatkit.pipeline.jobs`: embeddings sources and the test jobs made of them.
- :mod:`~weatkit.pipeline.execute`: :func:`run`, the loop over sources, lists and tests.
- :mod:`~weatkit.pipeline.robustness`: null baselines, influence and the pooled layers.
- :mod:`~weatkit.pipeline.metrics`: the association metrics on every job.
- :mod:`~weatkit.pipeline.manifest`: the manifest (:func:`environment`).
- :mod:`~weatkit.pipeline.reliability`: the ``reliability`` table across parallel lists
  (:func:`reliability_frame`, :func:`reliability_line`).
"""

from __future__ import annotations

from weatkit.pipeline.execute import FASTTEXT_OOV_HINT, run
from weatkit.pipeline.manifest import environment
from weatkit.pipeline.reliability import reliability_frame, reliability_line
from weatkit.pipeline.result import RunResult, skipped_by_language, skipped_metric_lines
from weatkit.pipeline.robustness import layer_models
from weatkit.pipeline.run_config import RunConfig

__all__ = [
    "FASTTEXT_OOV_HINT",
    "RunConfig",
    "RunResult",
    "environment",
    "layer_models",
    "reliability_frame",
    "reliability_line",
    "run",
    "skipped_by_language",
    "skipped_metric_lines",
]
