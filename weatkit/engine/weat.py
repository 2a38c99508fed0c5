"""The batched WEAT engine: effect sizes, bootstrap CIs and permutation p-values for many tests.

For each test the similarities of its targets to its attributes are computed once
(:mod:`weatkit.engine.similarity`). Every resample then reuses them: bootstrap and permutation
distributions are matrix products of resample weight/membership matrices with the similarity
matrix (:mod:`weatkit.engine.association`), on the GPU when there is one.

Batches: tests are ordered by shape and each batch pads every set to the batch's largest size
with members of weight 0, so one batch holds tests of every shape (how tests are cut into
batches and blocks is :mod:`weatkit.engine.batch_layout`). The bootstrap goes through a batch
in blocks of tests × resamples (:func:`_bootstrap`): a shape with enough tests gets blocks of
its own, where each resample's weights serve all its tests (one matrix product); smaller shapes
share blocks, each test with its own weights (a batched product). On a CPU a block is sized to
stay in a core's cache, and the blocks (like the plans, the similarities and each shape's
intervals and p-values) are shared out over the cores by Python threads, each running torch's
kernels on one thread (:func:`weatkit.engine.device.in_threads`). Resample plans depend only on
the seed and the set sizes (:mod:`weatkit.stats.resampling`), so results do not depend on how
tests are batched, on the threads or on the device. The options, input and result types are in
:mod:`weatkit.engine.weat_types`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from weatkit.arguments import vector_sets
from weatkit.engine.association import (
    associations,
    attribute_weights,
    flat_similarities,
    pad_weights,
    padded_positions,
    statistic_from_sums,
    unit_weights,
    weighted_statistics,
    weighted_sums,
)
from weatkit.engine.batch_layout import (
    batches,
    cells,
    padded_widths,
    resample_blocks,
    shape_segments,
)
from weatkit.engine.device import (
    cpu_threads,
    cpu_workers,
    engine_dtype,
    in_threads,
    resolve_device,
)
from weatkit.engine.leave_one_out import leave_one_out, split_by_set
from weatkit.engine.similarity import similarity_matrix
from weatkit.engine.weat_types import ALTERNATIVES as ALTERNATIVES
from weatkit.engine.weat_types import CI_METHODS as CI_METHODS
from weatkit.engine.weat_types import PERMUTATION_COUNTS as PERMUTATION_COUNTS
from weatkit.engine.weat_types import EngineOptions, WeatInput, WeatResult
from weatkit.errors import WeatkitError
from weatkit.stats.intervals import bca_interval, percentile_interval
from weatkit.stats.resampling import (
    PermutationPlan,
    Sizes,
    bootstrap_indices,
    padded_counts,
    permutation_plan,
    pvalue_from_counts,
    pvalue_from_normal,
)


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

    Raises:
        ArgumentError: X, Y, A or B is not an ``(n, dim)`` array of finite numbers of one width
            with a row and no all-zero row (:mod:`weatkit.arguments`).
        ConfigError: an option out of its range, naming it.
    """
    sets = vector_sets("weat", {"X": X, "Y": Y, "A": A, "B": B})
    return run_weat([WeatInput(**sets)], EngineOptions(**options))[0]  # type: ignore[arg-type]


def run_weat(
    tests: Sequence[WeatInput],
    options: EngineOptions | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[WeatResult]:
    """Run many tests in padded batches. ``progress(n)`` is called as tests finish.

    Tests are ordered by shape and cut into batches bounded by memory; in a batch every set is
    padded to the batch's largest size with members of weight 0 (:func:`_run_batch`), so one
    batch holds every shape.
    """
    options = options or EngineOptions()
    options.validate()
    device = resolve_device(options.device)
    run = _Run(options, device, engine_dtype(device), cpu_workers(device))
    with cpu_threads(device):  # small blocks, one thread each, spread over the cores
        return _run_all(tests, run, progress)


@dataclass(frozen=True)
class _Run:
    """What every step of a run needs: the options, where and in what precision it computes,
    and how many threads share out its blocks (:func:`weatkit.engine.device.in_threads`)."""

    options: EngineOptions
    device: torch.device
    dtype: torch.dtype
    workers: int


def _run_all(
    tests: Sequence[WeatInput], run: _Run, progress: Callable[[int], None] | None
) -> list[WeatResult]:
    options = run.options
    for i, t in enumerate(tests):
        _check_input(t, i, options.ddof)
    order = sorted(range(len(tests)), key=lambda i: (cells(tests[i].sizes), tests[i].sizes))
    results: list[WeatResult | None] = [None] * len(tests)
    plans: dict[Sizes, _Plan] = {}
    for batch in batches([tests[i].sizes for i in order], options):
        idx = order[batch]
        shapes = list(dict.fromkeys(tests[i].sizes for i in idx))
        widths = padded_widths(shapes)
        new = [s for s in shapes if s not in plans or plans[s].widths != widths]
        built = in_threads(lambda s, w=widths: _Plan.build(s, w, run), new, run.workers)
        plans = {s: plans[s] for s in shapes if s in plans} | dict(zip(new, built, strict=True))
        batch_results = _run_batch([tests[i] for i in idx], plans, run)
        for i, res in zip(idx, batch_results, strict=True):
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
        # Σ v² per row in the rows' precision, as the norm has it (the norm itself for other
        # types): finite when every value is (unless it overflows), zero exactly when the norm is
        fast = arr.dtype in (np.float32, np.float64)
        sq = np.einsum("ij,ij->i", arr, arr) if fast else np.linalg.norm(arr, axis=1)
        if not np.isfinite(sq).all() and not np.isfinite(arr).all():
            raise WeatkitError(f"{where}: set {key} has NaN or infinite values")
        if not sq.all():
            raise WeatkitError(f"{where}: set {key} has an all-zero vector")
    if len(t.X) + len(t.Y) - ddof <= 0:
        raise WeatkitError(f"{where}: too few target words for the standard deviation")


@dataclass
class _Plan:
    """Resample weights for one shape, on the device, the bootstrap's padded to a batch's widths
    (:func:`pad_weights`): attribute weights (:func:`attribute_weights`) and target weights, X
    then Y, ``(R, ·)`` each."""

    sizes: Sizes
    widths: Sizes
    boot: tuple[torch.Tensor, torch.Tensor] | None
    permutations: PermutationPlan | None

    @classmethod
    def build(cls, sizes: Sizes, widths: Sizes, run: _Run) -> _Plan:
        options, device, dtype = run.options, run.device, run.dtype
        boot = None
        if options.n_bootstrap > 0:
            idx = bootstrap_indices(sizes, options.n_bootstrap, options.seed)

            def counts(keys: str, set_widths: tuple[int, ...]) -> torch.Tensor:
                c = padded_counts([idx[k] for k in keys], set_widths)
                return torch.as_tensor(c, dtype=dtype, device=device)

            ab, n_a = counts("AB", widths[2:]), widths[2]
            boot = attribute_weights(ab[:, :n_a], ab[:, n_a:]), counts("XY", widths[:2])
        perm = None
        if options.n_permutations > 0:
            perm = permutation_plan(
                sizes[0], sizes[1], options.n_permutations, options.max_exact, options.seed, sizes
            )
        return cls(sizes, widths, boot, perm)


def _padded_similarity(tests: Sequence[WeatInput], widths: Sizes, run: _Run) -> torch.Tensor:
    """``(T, N_X + N_Y, N_A + N_B)``: each test's similarities at its items' padded positions
    (:func:`padded_positions`), 0 at the padding. Computed per chunk of a run of one shape and
    width, on the real vectors only (a padding member has no vector: its similarity is never
    used); the chunks are shared out over the run's threads."""
    sim = torch.zeros(
        len(tests), widths[0] + widths[1], widths[2] + widths[3], dtype=run.dtype, device=run.device
    )
    keys = [(t.sizes, t.X.shape[1]) for t in tests]
    chunks: list[tuple[int, int, Sizes]] = []
    for start, stop, (sizes, dim) in shape_segments(keys):  # type: ignore[arg-type]
        step = max(1, _vector_budget(run.device) // (sum(sizes) * dim))
        chunks.extend((c0, min(c0 + step, stop), sizes) for c0 in range(start, stop, step))

    def fill(chunk: tuple[int, int, Sizes]) -> None:
        c0, c1, sizes = chunk
        rows = padded_positions(sizes[:2], widths[:2]).to(run.device)
        cols = padded_positions(sizes[2:], widths[2:]).to(run.device)

        def stack(keys: str) -> torch.Tensor:
            rows = [np.concatenate([getattr(t, k) for k in keys]) for t in tests[c0:c1]]
            return torch.as_tensor(np.stack(rows), dtype=run.dtype, device=run.device)

        block = similarity_matrix(stack("XY"), stack("AB"), run.options.metric, run.options.csls_k)
        sim[c0:c1, rows[:, None], cols] = block

    in_threads(fill, chunks, run.workers)
    return sim


def _run_batch(
    tests: Sequence[WeatInput], plans: dict[Sizes, _Plan], run: _Run
) -> list[WeatResult]:
    """The tests of one padded batch: every set padded to the batch's largest size with members
    of weight 0 (:mod:`weatkit.engine.association`); tests of one shape are consecutive. The
    intervals and p-values are computed in the run's threads, a few dozen tests of one shape at
    a time (row by row, so the pieces do not change them)."""
    options, device, dtype = run.options, run.device, run.dtype
    sizes_of = [t.sizes for t in tests]
    widths = padded_widths(sizes_of)
    sim = _padded_similarity(tests, widths, run)
    segments = shape_segments(sizes_of)
    stat_t = torch.empty(len(tests), dtype=dtype, device=device)
    eff_t = torch.empty_like(stat_t)
    for a, b, sizes in segments:
        ones = pad_weights(unit_weights(sizes, sim), widths)
        s_seg, e_seg = weighted_statistics(sim[a:b], widths[0], widths[2], ones, options.ddof)
        stat_t[a:b], eff_t[a:b] = s_seg[:, 0], e_seg[:, 0]
    stat, eff = stat_t.cpu().numpy(), eff_t.cpu().numpy()

    boot_stat = boot_eff = None
    stability: np.ndarray | None = None
    if options.n_bootstrap > 0:
        boot_stat, boot_eff, stability = _bootstrap(
            sim, widths, sizes_of, segments, plans, run, eff
        )

    n = len(tests)
    stat_ci: list[tuple[float, float] | None] = [None] * n
    eff_ci: list[tuple[float, float] | None] = [None] * n
    influence: list[dict[str, np.ndarray] | None] = [None] * n
    pvalues: list[float | None] = [None] * n
    perm_stat: list[np.ndarray | None] = [None] * n
    eff_se: list[float | None] = [None] * n

    def segment(seg: tuple[int, int, Sizes]) -> None:
        a, b, sizes = seg
        plan = plans[sizes]
        jk_stat = jk_eff = None
        if options.influence or (boot_stat is not None and options.ci_method == "bca"):
            real = sim[a:b][:, padded_positions(sizes[:2], widths[:2]).to(device)]
            real = real[:, :, padded_positions(sizes[2:], widths[2:]).to(device)]
            jk_stat, jk_eff = (
                split_by_set(v.cpu().numpy(), sizes)
                for v in leave_one_out(real, sizes, options.ddof)
            )
            if options.influence:
                influence[a:b] = [
                    {k: jk_eff[j][i] for j, k in enumerate("XYAB")} for i in range(b - a)
                ]
        if boot_stat is not None and boot_eff is not None:
            if jk_stat is not None and jk_eff is not None and options.ci_method == "bca":
                cis = (
                    bca_interval(boot_stat[a:b], stat[a:b], jk_stat, options.confidence_level),
                    bca_interval(boot_eff[a:b], eff[a:b], jk_eff, options.confidence_level),
                )
            else:
                cis = (
                    percentile_interval(boot_stat[a:b], options.confidence_level),
                    percentile_interval(boot_eff[a:b], options.confidence_level),
                )
            stat_ci[a:b], eff_ci[a:b] = (
                [(float(lo), float(hi)) for lo, hi in zip(*ci, strict=True)] for ci in cis
            )
            eff_se[a:b] = _bootstrap_se(boot_eff[a:b]).tolist()
        if plan.permutations is not None:
            ones = pad_weights(unit_weights(sizes, sim), widths)
            s_obs = associations(sim[a:b], widths[2], ones.A, ones.B)[0]
            s_obs = s_obs[:, padded_positions(sizes[:2], widths[:2]).to(device)]
            p, kept = _permutation_pvalues(s_obs, stat[a:b], plan.permutations, options, dtype)
            pvalues[a:b] = [float(v) for v in p]
            if kept is not None:
                perm_stat[a:b] = list(kept)

    # each shape's tests in pieces of at most one block of bootstrap values (rows alone count)
    rows = max(1, _block_budget(device) // max(options.n_bootstrap, 1))
    pieces = [(r0, min(r0 + rows, b), k) for a, b, k in segments for r0 in range(a, b, rows)]
    in_threads(segment, pieces, run.workers)
    keep = options.keep_distributions and boot_stat is not None
    results = []
    for i, sizes in enumerate(sizes_of):
        perm = plans[sizes].permutations
        method = None if perm is None else ("exact" if perm.exact else "monte-carlo")
        if method is not None and options.pvalue_method == "parametric":
            method = f"normal-{method}"
        results.append(
            WeatResult(
                statistic=float(stat[i]),
                effect_size=float(eff[i]),
                pvalue=pvalues[i],
                statistic_ci=stat_ci[i],
                effect_size_ci=eff_ci[i],
                n_x=sizes[0],
                n_y=sizes[1],
                n_a=sizes[2],
                n_b=sizes[3],
                permutation_method=method,
                n_permutations=0 if perm is None else perm.n,
                options=options,
                bootstrap_statistic=boot_stat[i] if keep and boot_stat is not None else None,
                bootstrap_effect_size=boot_eff[i] if keep and boot_eff is not None else None,
                permutation_statistic=perm_stat[i],
                effect_size_se=eff_se[i],
                sign_stability=None if stability is None else float(stability[i]),
                influence=influence[i],
            )
        )
    return results


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
    sim: torch.Tensor,
    widths: Sizes,
    sizes_of: Sequence[Sizes],
    segments: Sequence[tuple[int, int, Sizes]],
    plans: dict[Sizes, _Plan],
    run: _Run,
    eff: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap distributions of S and d, ``(T, R)`` each, and the sign stability of d:
    #{r : sign(d_r) = sign(d)} / #{r : d_r defined}, ``(T,)``.

    Computed in blocks of tests × resamples of at most ``_block_budget`` associations: on a
    CPU a block stays in cache, which matters more than its size. The blocks of tests are
    shared out over the run's threads (each block its own rows of the outputs)."""
    n_boot, n_t, ddof = run.options.n_bootstrap, widths[0] + widths[1], run.options.ddof
    budget = _block_budget(sim.device)
    out_s = torch.empty(sim.shape[0], n_boot, dtype=sim.dtype, device=sim.device)
    out_d = torch.empty_like(out_s)
    weights = {k: w for k in dict.fromkeys(sizes_of) if (w := plans[k].boot) is not None}
    totals = {  # the target weights of X and of Y in each resample, (2, R)
        k: torch.stack([tw[:, : widths[0]].sum(dim=1), tw[:, widths[0] :].sum(dim=1)])
        for k, (_, tw) in weights.items()
    }
    observed = torch.sign(torch.as_tensor(eff, dtype=sim.dtype, device=sim.device))[:, None]
    same = torch.empty(sim.shape[0], dtype=torch.int64, device=sim.device)
    defined = torch.empty_like(same)

    def block(bounds: tuple[int, int]) -> None:
        t0, t1 = bounds
        step = max(1, budget // (n_t * (t1 - t0)))
        shapes = sizes_of[t0:t1]
        shared = len(set(shapes)) == 1
        flat = flat_similarities(sim[t0:t1]) if shared else sim[t0:t1].mT
        sums = torch.empty(3, t1 - t0, n_boot, dtype=sim.dtype, device=sim.device)
        for r0 in range(0, n_boot, step):
            r1 = r0 + step
            if shared:  # one product for the block: (r, n_att) @ (n_att, tests · n_t)
                att, tw = weights[shapes[0]]
                assoc = (att[r0:r1] @ flat).view(-1, t1 - t0, n_t)
                part = weighted_sums(assoc, widths[0], tw[r0:r1, None])
                sums[:, :, r0:r1] = torch.stack(part).mT
            else:  # each test its own weights: a batched product
                assoc = torch.bmm(torch.stack([weights[k][0][r0:r1] for k in shapes]), flat)
                tw = torch.stack([weights[k][1][r0:r1] for k in shapes])
                sums[:, :, r0:r1] = torch.stack(weighted_sums(assoc, widths[0], tw))
        n_w = torch.stack([totals[k] for k in shapes], dim=1)  # (2, tests, R)
        out_s[t0:t1], out_d[t0:t1] = statistic_from_sums(*sums, *n_w, ddof)
        same[t0:t1] = (torch.sign(out_d[t0:t1]) == observed[t0:t1]).sum(dim=1)
        defined[t0:t1] = (~torch.isnan(out_d[t0:t1])).sum(dim=1)

    blocks = resample_blocks(segments, max(1, budget // (n_t * min(n_boot, 256))))
    in_threads(block, blocks, run.workers)
    n_same, n_defined = same.cpu().numpy(), defined.cpu().numpy()
    stability = n_same / np.maximum(n_defined, 1)
    stability[(n_defined == 0) | ~(np.abs(eff) > 0)] = np.nan
    return out_s.cpu().numpy(), out_d.cpu().numpy(), stability


def _vector_budget(device: torch.device) -> int:
    """float64 elements of stacked vectors per similarity chunk: 4 MiB on a CPU (fresh arrays
    of 32 MiB cost their pages and the cache: three times slower per test), 32 MiB on a GPU."""
    return 2**19 if device.type == "cpu" else 2**22


def _block_budget(device: torch.device) -> int:
    """Associations per block: 2 MiB of float64 on a CPU (a core's cache), 512 MiB on a GPU."""
    return 2**18 if device.type == "cpu" else 2**26


def _permutation_pvalues(
    s_obs: torch.Tensor,
    stat: np.ndarray,
    plan: PermutationPlan,
    options: EngineOptions,
    dtype: torch.dtype,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The p-values, and with ``keep_distributions`` the ``(tests, N)`` re-splits' S_perm.

    ``permutation``: count re-splits with S_perm ≥ S and ≤ S (``gt``: > S and < S); S_perm =
    2 Σ_{X'} s − Σ_{X∪Y} s. Values within ``tol`` of S count as equal to it. ``parametric``:
    Σ (S_perm − S) and Σ (S_perm − S)² of the same re-splits give a normal's p-value
    (:func:`pvalue_from_normal`)."""
    total = s_obs.sum(dim=1, keepdim=True)
    observed = torch.as_tensor(stat, dtype=dtype, device=s_obs.device)[:, None]
    tol = 1e-9 * torch.clamp(observed.abs(), min=1.0)
    ge = torch.zeros(len(stat), dtype=torch.int64, device=s_obs.device)
    le = torch.zeros_like(ge)
    sums = torch.zeros(len(stat), dtype=dtype, device=s_obs.device)
    sums_sq = torch.zeros_like(sums)
    kept = []
    step = max(1, _block_budget(s_obs.device) // max(s_obs.shape[0], 1))  # S_perm: (tests, step)
    for p0 in range(0, plan.n, step):
        m = torch.as_tensor(plan.membership[p0 : p0 + step], dtype=dtype, device=s_obs.device)
        s_perm = 2.0 * (s_obs @ m.T) - total
        if options.keep_distributions:
            kept.append(s_perm.cpu().numpy())
        if options.pvalue_method == "parametric":
            centred = s_perm - observed
            sums += centred.sum(dim=1)
            sums_sq += (centred * centred).sum(dim=1)
        elif options.permutation_count == "gt":
            ge += (s_perm > observed + tol).sum(dim=1)
            le += (s_perm < observed - tol).sum(dim=1)
        else:
            ge += (s_perm >= observed - tol).sum(dim=1)
            le += (s_perm <= observed + tol).sum(dim=1)
    distribution = np.concatenate(kept, axis=1) if kept else None
    if options.pvalue_method == "parametric":
        p = pvalue_from_normal(sums.cpu().numpy(), sums_sq.cpu().numpy(), plan.n,
                               options.alternative)  # fmt: skip
    else:
        p = pvalue_from_counts(ge.cpu().numpy(), le.cpu().numpy(), plan.n, plan.exact,
                               options.alternative)  # fmt: skip
    return p, distribution
