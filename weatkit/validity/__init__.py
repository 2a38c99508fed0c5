"""Whether the bias measures measure anything: reliability and validity (issue 28 §4).

* :func:`split_half` — split-half reliability with the Spearman–Brown correction over parallel
  forms (CA-WEAT's parallel lists, GEST's templates, a model's seeds), averaged over splits,
  with a bootstrap CI over the units; :func:`spearman_brown` the correction itself
  (:mod:`weatkit.validity.reliability`)
* :func:`icc` — the intraclass correlations ICC(1), ICC(2,1), ICC(3,1) and their average-measures
  forms with F-based CIs (Shrout & Fleiss 1979; McGraw & Wong 1996; :mod:`weatkit.validity.icc`)
* :func:`parallel_forms` — the ``reliability`` table of a run: split-half r_SB and ICC(2,1),
  ICC(2,k) across the parallel lists of each language × test, the embeddings as units
  (:mod:`weatkit.validity.parallel`)
* :func:`mtmm` — the multitrait–multimethod matrix (Campbell & Fiske 1959): convergent and
  discriminant correlations with CIs, permutation p and a verdict per pair
  (:mod:`weatkit.validity.mtmm`)

Results are frozen dataclasses with ``statistic``, ``confidence_interval`` and, where a test is
defined, ``pvalue``, as in :mod:`scipy.stats`::

    >>> import weatkit
    >>> round(weatkit.validity.spearman_brown(0.6), 4)
    0.75
"""

from weatkit.validity.icc import ICC_KINDS, ICCResult, icc
from weatkit.validity.mtmm import MTMM_COLUMNS, MTMMResult, mtmm, mtmm_shortfall
from weatkit.validity.parallel import (
    RELIABILITY_COLUMNS,
    parallel_forms,
    parallel_forms_shortfall,
)
from weatkit.validity.reliability import SplitHalfResult, spearman_brown, split_half

__all__ = [
    "ICC_KINDS",
    "MTMM_COLUMNS",
    "RELIABILITY_COLUMNS",
    "ICCResult",
    "MTMMResult",
    "SplitHalfResult",
    "icc",
    "mtmm",
    "mtmm_shortfall",
    "parallel_forms",
    "parallel_forms_shortfall",
    "spearman_brown",
    "split_half",
]
