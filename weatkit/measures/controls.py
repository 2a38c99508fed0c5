"""The "control as biased" flag of the sentence measures' control sets, one rule for all.

Pikuliak, M., Beňová, I. and Bachratý, V. (2023). In-Depth Look at Word Filling Societal Bias
Measures. EACL 2023, §5: a control set keeps what a measure might react to instead of the
stereotype (the group words, the keywords) and removes the stereotype itself — CrowS-Pairs'
negated and anti-stereotype pairs (:mod:`weatkit.crows.controls`), StereoSet's gender-swapped
items (:mod:`weatkit.stereoset.controls`). A measure that reflects the stereotype scores the
control set markedly closer to 50 (or past it) than the matched originals.

Both measures are percentages with 50 = no preference. With o the score of the matched
originals and [c_lo, c_hi] the percentile bootstrap CI of the control score (the same resample
plan as the originals')::

    as_biased = c_hi ≥ o   if o ≥ 50
    as_biased = c_lo ≤ o   if o < 50

— the control's CI reaches the original's score on the biased side of 50: the data cannot show
that the control items are scored as less biased than the originals, so the score cannot be
told apart from a reaction to what the control keeps.
"""

from __future__ import annotations

import math

#: The columns of a controls summary table (one row per control kind): ``original*`` = the
#: matched originals' score and CI, ``metric``/``ci_*`` = the control's, and the flag.
CONTROL_SUMMARY_COLUMNS = [
    "control", "n", "original", "original_ci_low", "original_ci_high", "metric", "ci_low",
    "ci_high", "as_biased",
]  # fmt: skip


def as_biased(original: float, control_low: float, control_high: float) -> bool:
    """The "control as biased" flag (module docstring): the control's CI reaches the
    original's score on the biased side of 50. False when either is unknown (NaN)."""
    if any(math.isnan(v) for v in (original, control_low, control_high)):
        return False
    return control_high >= original if original >= 50 else control_low <= original
