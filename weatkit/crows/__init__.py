"""CrowS-Pairs: social-bias scores of masked language models from minimal sentence pairs.

Nangia, N., Vania, C., Bhalerao, R. and Bowman, S. R. (2020). CrowS-Pairs: A Challenge Dataset
for Measuring Social Biases in Masked Language Models. EMNLP 2020 (github.com/nyu-mll/crows-pairs);
the Japanese and Russian gender pairs of Kaneko, M., Imankulova, A., Bollegala, D. and Okazaki, N.
(2022). Gender Bias in Masked Language Models for Multiple Languages. NAACL 2022.

:mod:`weatkit.crows.data` reads the pairs (and per-pair score files), :mod:`weatkit.crows.score`
scores them with a masked LM (pseudo-log-likelihood of the shared tokens, AUL or AULA) and
computes the metric: the % of pairs where the model prefers the more stereotypical sentence.
:mod:`weatkit.crows.controls` scores the negated and anti-stereotype control pairs of Pikuliak,
Beňová & Bachratý (EACL 2023) beside their originals (the flag:
:func:`weatkit.measures.controls.as_biased`).
"""

from weatkit.crows.align import shared_positions
from weatkit.crows.controls import (
    CONTROL_KINDS,
    control_summary,
    load_controls,
    score_controls,
)
from weatkit.crows.data import (
    CROWS_DATA,
    CROWS_FILES,
    DATA_SETS,
    crows_corrections,
    crows_pairs,
    load_crows,
    read_pair_scores,
    sample_pairs,
)
from weatkit.crows.score import (
    METHODS,
    REFERENCE_DECIMALS,
    bootstrap_indices,
    crows_metric,
    pair_outcomes,
    score_crows,
)

__all__ = [
    "CONTROL_KINDS",
    "CROWS_DATA",
    "CROWS_FILES",
    "DATA_SETS",
    "METHODS",
    "REFERENCE_DECIMALS",
    "bootstrap_indices",
    "control_summary",
    "crows_corrections",
    "crows_metric",
    "crows_pairs",
    "load_controls",
    "load_crows",
    "pair_outcomes",
    "read_pair_scores",
    "sample_pairs",
    "score_controls",
    "score_crows",
    "shared_positions",
]
