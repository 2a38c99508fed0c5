"""CrowS-Pairs: social-bias scores of masked language models from minimal sentence pairs.

Nangia, N., Vania, C., Bhalerao, R. and Bowman, S. R. (2020). CrowS-Pairs: A Challenge Dataset
for Measuring Social Biases in Masked Language Models. EMNLP 2020 (github.com/nyu-mll/crows-pairs);
the Japanese and Russian gender pairs of Kaneko, M., Imankulova, A., Bollegala, D. and Okazaki, N.
(2022). Gender Bias in Masked Language Models for Multiple Languages. NAACL 2022.

:mod:`weatkit.crows.data` reads the pairs (and per-pair score files), :mod:`weatkit.crows.score`
scores them with a masked LM (pseudo-log-likelihood of the shared tokens, AUL or AULA) and
computes the metric: the % of pairs where the model prefers the more stereotypical sentence.
"""

from weatkit.crows.data import CROWS_FILES, load_crows, read_pair_scores
from weatkit.crows.score import (
    METHODS,
    REFERENCE_DECIMALS,
    bootstrap_indices,
    crows_metric,
    pair_outcomes,
    score_crows,
    shared_positions,
)

__all__ = [
    "CROWS_FILES",
    "METHODS",
    "REFERENCE_DECIMALS",
    "bootstrap_indices",
    "crows_metric",
    "load_crows",
    "pair_outcomes",
    "read_pair_scores",
    "score_crows",
    "shared_positions",
]
