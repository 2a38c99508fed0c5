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

The names are imported on first use, so reading the package's plugin (:mod:`weatkit.crows.plugin`)
imports neither torch nor the data.
"""

from __future__ import annotations

from weatkit._lazy import lazy_exports

#: Public name -> the module it is imported from on first use.
_LAZY = {
    "CONTROL_KINDS": "weatkit.crows.controls",
    "CROWS_DATA": "weatkit.crows.data",
    "CROWS_FILES": "weatkit.crows.data",
    "DATA_SETS": "weatkit.crows.data",
    "METHODS": "weatkit.crows.score",
    "REFERENCE_DECIMALS": "weatkit.crows.score",
    "bootstrap_indices": "weatkit.crows.score",
    "control_summary": "weatkit.crows.controls",
    "crows_corrections": "weatkit.crows.data",
    "crows_metric": "weatkit.crows.score",
    "crows_pairs": "weatkit.crows.data",
    "load_controls": "weatkit.crows.controls",
    "load_crows": "weatkit.crows.data",
    "pair_outcomes": "weatkit.crows.score",
    "read_pair_scores": "weatkit.crows.data",
    "sample_pairs": "weatkit.crows.data",
    "score_controls": "weatkit.crows.controls",
    "score_crows": "weatkit.crows.score",
    "shared_positions": "weatkit.crows.align",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
