"""Random-effects meta-analysis of effect sizes (DerSimonian & Laird 1986).

k effect sizes d_i with variances v_i (for WEAT: the square of d's bootstrap standard error,
:attr:`weatkit.engine.weat.WeatResult.effect_size_se`) are pooled as in CEAT (Guo & Caliskan
2021), which pools WEAT effect sizes of many contexts with a random-effects model:

* fixed-effect weights w_i = 1 / v_i, d̄ = Σ w_i d_i / Σ w_i;
* Cochran's Q = Σ w_i (d_i − d̄)², p = P(χ²_{k−1} ≥ Q);
* between-unit variance τ² = max(0, (Q − (k − 1)) / (Σ w_i − Σ w_i² / Σ w_i));
* random-effects weights w*_i = 1 / (v_i + τ²), pooled d* = Σ w*_i d_i / Σ w*_i,
  SE(d*) = 1 / √(Σ w*_i), CI d* ± z_{1−α/2} SE(d*);
* I² = max(0, (Q − (k − 1)) / Q) (Higgins & Thompson 2002): the share of the spread of the d_i
  that is between-unit heterogeneity rather than sampling error (0 when Q = 0);
* Hartung & Knapp (2001) CI: d* ± t_{k−1, 1−α/2} √(Σ w*_i (d_i − d*)² / ((k − 1) Σ w*_i)),
  as statsmodels computes it (its scale is not truncated at 1, so with units that agree
  closer than their variances say it can be narrower than the normal interval).

Computed in NumPy, with the arithmetic of ``statsmodels.stats.meta_analysis.combine_effects(
method_re="dl")`` step for step and the distribution functions ``scipy.stats`` itself calls
(``scipy.special.ndtri``, ``stdtrit``, ``chdtrc``): the tests check every field against
statsmodels and scipy.stats on random inputs. Not statsmodels itself because importing
``scipy.stats`` (which statsmodels' module does) costs about 0.6 s, more than a whole run's
``--pool``. Where statsmodels differs: its DerSimonian–Laird τ² is not truncated at 0 (0.15
returns (Q − (k − 1)) / c, negative when Q < k − 1, and I² = 1 − (k − 1) / Q); the truncation
of the published estimator is applied here: when Q ≤ k − 1, τ² = 0 and the random-effects
estimate is the fixed-effect one (which statsmodels also returns).

The units pooled are assumed independent; WEAT lists of one language share words and the layers
of one model share their input, so the pooled CI is then too narrow and Q, I² describe the
spread rather than test it.

DerSimonian, R. & Laird, N. (1986). Meta-analysis in clinical trials. Controlled Clinical
Trials 7:177–188. Hartung, J. & Knapp, G. (2001). On tests of the overall treatment effect in
meta-analysis with normally distributed responses. Stat. Med. 20:1771–1782. Higgins, J. P. T.
& Thompson, S. G. (2002). Quantifying heterogeneity in a meta-analysis. Stat. Med.
21:1539–1558. Guo, W. & Caliskan, A. (2021). Detecting emergent intersectional biases:
contextualized word embeddings contain a distribution of human-like biases. AIES 2021.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from weatkit.errors import WeatkitError


@dataclass(frozen=True)
class PooledEffect:
    """A DerSimonian–Laird random-effects estimate (see the module docstring).

    Attributes:
        estimate: the pooled effect size d*.
        se: its standard error 1 / √(Σ w*_i).
        ci_low, ci_high: the normal (Wald) interval d* ± z SE.
        hk_ci_low, hk_ci_high: the Hartung–Knapp interval (t with k − 1 degrees of freedom).
        tau2: the between-unit variance τ² (≥ 0).
        i2: I² in [0, 1].
        q: Cochran's Q; q_pvalue: its χ²_{k−1} p-value.
        k: the number of units pooled.
        confidence_level: of both intervals.
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    hk_ci_low: float
    hk_ci_high: float
    tau2: float
    i2: float
    q: float
    q_pvalue: float
    k: int
    confidence_level: float

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)`` (scipy-style alias)."""
        return (self.ci_low, self.ci_high)


def random_effects(
    effects: Sequence[float] | np.ndarray,
    variances: Sequence[float] | np.ndarray,
    confidence_level: float = 0.95,
) -> PooledEffect:
    """Pool ``effects`` with their ``variances`` by DerSimonian–Laird (module docstring).

    Args:
        effects: the k ≥ 2 effect sizes d_i.
        variances: their sampling variances v_i > 0.
        confidence_level: of the intervals.

    Raises:
        WeatkitError: fewer than two effects, lengths that differ, or a value that is not
            finite (or a variance ≤ 0).

    Example:
        >>> r = random_effects([0.5, 1.0, 1.4, 0.2], [0.04, 0.09, 0.05, 0.1])
        >>> round(r.estimate, 4), round(r.tau2, 4), round(r.i2, 4), r.k
        (0.7883, 0.222, 0.7776, 4)
    """
    from scipy.special import chdtrc, ndtri, stdtrit  # what scipy.stats' norm, t, chi2 call

    d = np.asarray(effects, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if d.shape != v.shape or d.ndim != 1:
        raise WeatkitError("effects and variances must be two lists of the same length")
    if len(d) < 2:
        raise WeatkitError(f"a meta-analysis needs at least two effect sizes, got {len(d)}")
    if not (np.isfinite(d).all() and np.isfinite(v).all() and (v > 0).all()):
        raise WeatkitError("effect sizes must be finite and their variances finite and > 0")
    if not 0.0 < confidence_level < 1.0:
        raise WeatkitError(f"the confidence level must be in (0, 1), not {confidence_level}")
    alpha = 1.0 - confidence_level
    k = len(d)
    w = 1 / v  # fixed-effect weights
    w_total = w.sum()
    fixed = (w / w_total * d).sum()
    q = float((w * d**2).sum() - (w * d).sum() ** 2 / w_total)
    c = w_total - (w**2).sum() / w_total
    tau2 = (q - (k - 1)) / c
    if tau2 > 0:
        w_re = 1 / (v + tau2)
        w_re_total = w_re.sum()
        estimate = float((w_re / w_re_total * d).sum())
        se = float(np.sqrt(1 / w_re_total))
        var_hk = float((w_re / w_re.sum() * (d - estimate) ** 2).sum() / (k - 1))
    else:  # the truncated estimator: τ² = 0, the random-effects model is the fixed-effect one
        tau2, estimate, se = 0.0, float(fixed), float(np.sqrt(1 / w_total))
        var_hk = float((w / w_total * (d - fixed) ** 2).sum() / (k - 1))
    z = float(-ndtri(alpha / 2))
    t = float(-stdtrit(k - 1, alpha / 2))
    hk_half = t * float(np.sqrt(var_hk))
    return PooledEffect(
        estimate=estimate,
        se=se,
        ci_low=estimate - z * se,
        ci_high=estimate + z * se,
        hk_ci_low=estimate - hk_half,
        hk_ci_high=estimate + hk_half,
        tau2=float(tau2),
        i2=max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0,
        q=q,
        q_pvalue=float(chdtrc(k - 1, max(q, 0.0))),  # scipy.stats: 1 below the support
        k=k,
        confidence_level=confidence_level,
    )
