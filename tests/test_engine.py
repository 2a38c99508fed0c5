"""The batched engine against slow, obvious implementations of each formula."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.stats
import torch

from tests import naive_weat as naive
from weatkit.engine.weat import EngineOptions, WeatInput, run_weat, weat
from weatkit.errors import WeatkitError
from weatkit.stats.intervals import bca_interval, linear_quantiles, percentile_interval
from weatkit.stats.resampling import bootstrap_indices, n_splits, permutation_plan


def naive_jackknife(X, Y, A, B) -> list[np.ndarray]:
    """Leave-one-out d for each of the four samples, by the formula, each ``(1, n_j)``."""
    jack = []
    for j, sample in enumerate((X, Y, A, B)):
        sets = [X, Y, A, B]
        values = []
        for i in range(len(sample)):
            sets[j] = np.delete(sample, i, axis=0)
            values.append(naive.effect_size(*sets, 1))
        jack.append(np.array([values]))
    return jack


def random_sets(seed: int, sizes=(6, 5, 4, 7), dim: int = 12):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, dim)) for n in sizes]


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_statistic_and_effect_size_match_formula(seed: int, ddof: int) -> None:
    X, Y, A, B = random_sets(seed)
    res = weat(X, Y, A, B, ddof=ddof, n_bootstrap=0, n_permutations=0)
    assert res.statistic == pytest.approx(naive.statistic(X, Y, A, B), abs=1e-12)
    assert res.effect_size == pytest.approx(naive.effect_size(X, Y, A, B, ddof), abs=1e-12)
    assert res.pvalue is None and res.statistic_ci is None and res.effect_size_ci is None


@pytest.mark.parametrize("sizes", [(7, 6, 6, 5), (12, 11, 10, 9)])
def test_euclidean_and_csls_match_reference_definitions(sizes) -> None:
    X, Y, A, B = random_sets(3, sizes=sizes)
    eu = weat(X, Y, A, B, metric="euclidean", n_bootstrap=0, n_permutations=0)
    assert eu.statistic == pytest.approx(naive.statistic(X, Y, A, B, naive.eucl_sim), abs=1e-12)
    # a word shared by X and A must count once in the CSLS neighbourhoods
    A = A.copy()
    A[0] = X[2]
    csls = naive.csls_sim_factory([*X, *Y, *A, *B], k=10)
    res = weat(X, Y, A, B, metric="csls", ddof=0, n_bootstrap=0, n_permutations=0)
    assert res.statistic == pytest.approx(naive.statistic(X, Y, A, B, csls), abs=1e-12)
    assert res.effect_size == pytest.approx(naive.effect_size(X, Y, A, B, 0, csls), abs=1e-12)


def test_bootstrap_distribution_equals_loop_over_same_indices() -> None:
    X, Y, A, B = random_sets(4)
    n_boot, seed = 60, 11
    res = weat(X, Y, A, B, n_bootstrap=n_boot, n_permutations=0, seed=seed, keep_distributions=True)
    idx = bootstrap_indices((len(X), len(Y), len(A), len(B)), n_boot, seed)
    loop_s, loop_d = [], []
    for r in range(n_boot):
        xs, ys, as_, bs = X[idx["X"][r]], Y[idx["Y"][r]], A[idx["A"][r]], B[idx["B"][r]]
        loop_s.append(naive.statistic(xs, ys, as_, bs))
        loop_d.append(naive.effect_size(xs, ys, as_, bs, ddof=1))
    np.testing.assert_allclose(res.bootstrap_statistic, loop_s, atol=1e-11)
    np.testing.assert_allclose(res.bootstrap_effect_size, loop_d, atol=1e-10)
    lo, hi = np.quantile(loop_d, [0.025, 0.975])
    assert res.effect_size_ci == pytest.approx((lo, hi), abs=1e-10)
    lo, hi = np.quantile(loop_s, [0.025, 0.975])
    assert res.statistic_ci == pytest.approx((lo, hi), abs=1e-10)


def test_bootstrap_is_seeded_and_recorded() -> None:
    X, Y, A, B = random_sets(5)
    a = weat(X, Y, A, B, n_bootstrap=200, n_permutations=0, seed=1)
    b = weat(X, Y, A, B, n_bootstrap=200, n_permutations=0, seed=1)
    c = weat(X, Y, A, B, n_bootstrap=200, n_permutations=0, seed=2)
    assert a.effect_size_ci == b.effect_size_ci != c.effect_size_ci
    assert a.options.seed == 1 and a.options.n_bootstrap == 200


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_exact_pvalue_equals_brute_force(alternative: str) -> None:
    X, Y, A, B = random_sets(6, sizes=(6, 6, 5, 5))
    res = weat(X, Y, A, B, n_bootstrap=0, alternative=alternative)
    assert res.permutation_method == "exact" and res.n_permutations == n_splits(6, 6) == 924
    assert res.pvalue == pytest.approx(naive.exact_pvalue(X, Y, A, B, alternative), abs=1e-15)


def test_unequal_target_sizes_enumerate_all_splits() -> None:
    X, Y, A, B = random_sets(7, sizes=(4, 7, 5, 5))
    res = weat(X, Y, A, B, n_bootstrap=0)
    assert res.n_permutations == 330
    assert res.pvalue == pytest.approx(naive.exact_pvalue(X, Y, A, B), abs=1e-15)


def test_monte_carlo_pvalue_uses_distinct_splits_and_plus_one_rule() -> None:
    X, Y, A, B = random_sets(8, sizes=(9, 9, 5, 5))
    sizes = (9, 9, 5, 5)
    res = weat(X, Y, A, B, n_bootstrap=0, n_permutations=500, max_exact=1000, seed=3)
    assert res.permutation_method == "monte-carlo" and res.n_permutations == 500
    plan = permutation_plan(9, 9, 500, 1000, 3, sizes)
    assert len({row.tobytes() for row in plan.membership}) == 500
    assert (plan.membership.sum(axis=1) == 9).all()
    union = [*X, *Y]
    observed = naive.statistic(X, Y, A, B)
    k = 0
    for row in plan.membership:
        xs = [w for w, m in zip(union, row, strict=True) if m]
        ys = [w for w, m in zip(union, row, strict=True) if not m]
        k += naive.statistic(xs, ys, A, B) >= observed - 1e-12
    assert res.pvalue == pytest.approx((k + 1) / 501, abs=1e-15)


@pytest.mark.parametrize("n_x, n_y", [(5, 4), (40, 35)])  # one packed word; several
def test_monte_carlo_splits_keep_the_first_draw_of_each_split(n_x: int, n_y: int) -> None:
    """The de-duplication equals a slow one over the same random stream: draw the missing
    splits, keep each split's first occurrence in draw order, repeat until there are enough."""
    sizes, wanted = (n_x, n_y, 3, 3), min(100, n_splits(n_x, n_y) - 10)
    plan = permutation_plan(n_x, n_y, wanted, 0, 11, sizes)
    rng = np.random.default_rng([11, *sizes, 1])  # the permutation stream
    base = np.array([1] * n_x + [0] * n_y, dtype=np.uint8)
    kept: list[tuple[int, ...]] = []
    while len(kept) < wanted:
        drawn = rng.permuted(np.tile(base, (wanted - len(kept), 1)), axis=1)
        for row in map(tuple, drawn):
            if row not in kept:
                kept.append(row)
    assert plan.membership.tolist() == [list(row) for row in kept]
    again = permutation_plan(n_x, n_y, wanted, 0, 11, sizes)  # from the cache, unchanged
    assert np.array_equal(again.membership, plan.membership)


def test_percentile_interval_ignores_failed_resamples_row_by_row() -> None:
    rng = np.random.default_rng(0)
    dist = rng.normal(size=(6, 400))
    dist[1, rng.random(400) < 0.1] = np.nan  # degenerate resamples (zero std)
    dist[4, :] = np.nan
    low, high = percentile_interval(dist, 0.9)
    for row, lo, hi in zip(dist, low, high, strict=True):
        kept = np.sort(row[~np.isnan(row)])
        if len(kept) == 0:
            assert np.isnan(lo) and np.isnan(hi)
            continue
        pos = 0.05 * (len(kept) - 1), 0.95 * (len(kept) - 1)  # linear interpolation
        want = [
            kept[int(p)] + (p - int(p)) * (kept[min(int(p) + 1, len(kept) - 1)] - kept[int(p)])
            for p in pos
        ]
        assert (lo, hi) == pytest.approx(want, rel=1e-13)


def test_percentile_interval_of_one_distribution_is_two_scalars() -> None:
    # the correlation and validity callers pass one (R,) distribution, as np.quantile took it
    dist = np.random.default_rng(1).normal(size=999)
    low, high = percentile_interval(dist, 0.95)
    assert np.ndim(low) == np.ndim(high) == 0
    alpha = 1 - 0.95  # 0.050000000000000044, as percentile_interval computes it
    assert (low, high) == tuple(np.quantile(dist, [alpha / 2, 1 - alpha / 2]))


def test_linear_quantiles_equal_numpy_bit_for_bit() -> None:
    """The selected order statistics and NumPy's interpolation: ties, NaN and infinite
    resamples, one to a few thousand resamples, quantiles at and inside the ends."""
    rng = np.random.default_rng(1)
    for trial in range(400):
        n = int(rng.choice([1, 2, 3, 5, 37, 200, 2001]))
        dist = rng.normal(size=(int(rng.integers(1, 5)), n))
        if trial % 3 == 0:
            dist = np.round(dist, 1)  # ties
        for value, every in ((np.nan, 5), (np.inf, 7), (-np.inf, 11)):
            if trial % every == 0:
                dist[rng.random(dist.shape) < 0.05] = value
        q = [0.0, 0.025, 0.5, 0.975, 1.0] if trial % 2 else [0.05, float(rng.random()), 0.95]
        with np.errstate(invalid="ignore"):  # inf − inf, as in NumPy
            want = np.quantile(dist, q, axis=-1)
            got = linear_quantiles(dist, q)
        np.testing.assert_array_equal(got, want)


def test_bca_interval_matches_scipy_on_the_same_distribution() -> None:
    """Feed scipy's own bootstrap distribution to our BCa; the jackknife comes from the formula."""
    X, Y, A, B = random_sets(9, sizes=(6, 5, 5, 4))

    def stat(xi, yi, ai, bi):
        pick = lambda M, i: M[np.asarray(i, dtype=int)]  # noqa: E731
        return naive.effect_size(pick(X, xi), pick(Y, yi), pick(A, ai), pick(B, bi), 1)

    data = tuple(np.arange(len(M), dtype=float) for M in (X, Y, A, B))
    sp = scipy.stats.bootstrap(
        data,
        stat,
        vectorized=False,
        paired=False,
        n_resamples=300,
        method="BCa",
        rng=np.random.default_rng(0),
    )
    observed = np.array([naive.effect_size(X, Y, A, B, 1)])
    jack = naive_jackknife(X, Y, A, B)
    lo, hi = bca_interval(sp.bootstrap_distribution[None, :], observed, jack, 0.95)
    assert (lo[0], hi[0]) == pytest.approx(
        (sp.confidence_interval.low, sp.confidence_interval.high), abs=1e-10
    )


def test_engine_bca_uses_its_own_jackknife() -> None:
    X, Y, A, B = random_sets(10)
    res = weat(
        X, Y, A, B, n_bootstrap=400, n_permutations=0, ci_method="bca", keep_distributions=True
    )
    jack = naive_jackknife(X, Y, A, B)
    lo, hi = bca_interval(
        res.bootstrap_effect_size[None, :], np.array([res.effect_size]), jack, 0.95
    )
    assert res.effect_size_ci == pytest.approx((lo[0], hi[0]), abs=1e-10)
    plo, phi = percentile_interval(res.bootstrap_effect_size[None, :], 0.95)
    assert res.effect_size_ci != pytest.approx((plo[0], phi[0]), abs=1e-6)


def test_batch_composition_does_not_change_results() -> None:
    tests = [WeatInput(*random_sets(s, sizes=(6, 6, 5, 5))) for s in range(5)]
    tests.append(WeatInput(*random_sets(99, sizes=(4, 5, 3, 3), dim=7)))
    opts = EngineOptions(n_bootstrap=300, n_permutations=100, max_exact=10, seed=4)
    together = run_weat(tests, opts)
    for t, r in zip(tests, together, strict=True):
        alone = run_weat([t], opts)[0]
        assert alone.statistic == pytest.approx(r.statistic, abs=1e-12)
        assert alone.effect_size_ci == pytest.approx(r.effect_size_ci, abs=1e-12)
        assert alone.pvalue == r.pvalue


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available on this machine")
def test_cpu_and_cuda_agree() -> None:
    tests = [WeatInput(*random_sets(s, sizes=(8, 8, 6, 6))) for s in range(4)]
    cpu = run_weat(tests, EngineOptions(device="cpu", n_bootstrap=500, ci_method="bca"))
    gpu = run_weat(tests, EngineOptions(device="cuda", n_bootstrap=500, ci_method="bca"))
    for a, b in zip(cpu, gpu, strict=True):
        assert a.effect_size == pytest.approx(b.effect_size, abs=1e-10)
        assert a.effect_size_ci == pytest.approx(b.effect_size_ci, abs=1e-10)
        assert a.statistic_ci == pytest.approx(b.statistic_ci, abs=1e-10)
        assert a.pvalue == b.pvalue


def mixed_tests() -> list[WeatInput]:
    """40 tests of one shape (blocks of their own in the padded batch) and 12 of assorted shapes
    and widths (blocks shared by several shapes), as after out-of-vocabulary removal."""
    tests = [WeatInput(*random_sets(s, sizes=(8, 8, 7, 7))) for s in range(40)]
    rng = np.random.default_rng(5)
    for s in range(12):
        sizes = tuple(int(n) for n in rng.integers(6, 9, size=4))
        tests.append(WeatInput(*random_sets(100 + s, sizes=sizes, dim=12 if s % 3 else 9)))
    return tests


MIXED_OPTIONS = EngineOptions(
    n_bootstrap=300,
    n_permutations=200,
    max_exact=1000,
    seed=3,
    ci_method="bca",
    influence=True,
    keep_distributions=True,
)


def test_padded_batch_equals_per_shape_batches() -> None:
    from weatkit.engine.batch_layout import batches, cells, resample_blocks, shape_segments

    tests = mixed_tests()
    order = sorted(range(len(tests)), key=lambda i: (cells(tests[i].sizes), tests[i].sizes))
    sizes = [tests[i].sizes for i in order]
    assert batches(sizes, MIXED_OPTIONS) == [slice(0, len(tests))]  # one padded batch
    blocks = resample_blocks(shape_segments(sizes), 2**18 // (16 * 256))
    one_shape = [len(set(sizes[a:b])) == 1 for a, b in blocks]
    assert any(one_shape) and not all(one_shape)  # blocks of one shape and of several
    padded = run_weat(tests, MIXED_OPTIONS)
    for shape in dict.fromkeys(t.sizes for t in tests):
        members = [i for i, t in enumerate(tests) if t.sizes == shape]
        alone = run_weat([tests[i] for i in members], MIXED_OPTIONS)
        for i, a in zip(members, alone, strict=True):
            b = padded[i]
            assert (b.n_x, b.n_y, b.n_a, b.n_b) == shape
            assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
            assert b.effect_size == pytest.approx(a.effect_size, abs=1e-12)
            assert b.statistic_ci == pytest.approx(a.statistic_ci, abs=1e-12)
            assert b.effect_size_ci == pytest.approx(a.effect_size_ci, abs=1e-12)
            assert b.effect_size_se == pytest.approx(a.effect_size_se, abs=1e-12)
            assert b.pvalue == a.pvalue and b.permutation_method == a.permutation_method
            assert b.sign_stability == a.sign_stability
            np.testing.assert_allclose(b.bootstrap_effect_size, a.bootstrap_effect_size, atol=1e-12)
            for key in "XYAB":
                np.testing.assert_allclose(b.influence[key], a.influence[key], atol=1e-12)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available on this machine")
def test_padded_batch_cpu_and_cuda_agree() -> None:
    tests = mixed_tests()
    cpu = run_weat(tests, replace(MIXED_OPTIONS, device="cpu"))
    gpu = run_weat(tests, replace(MIXED_OPTIONS, device="cuda"))
    for a, b in zip(cpu, gpu, strict=True):
        assert a.statistic == pytest.approx(b.statistic, abs=1e-10)
        assert a.effect_size == pytest.approx(b.effect_size, abs=1e-10)
        assert a.statistic_ci == pytest.approx(b.statistic_ci, abs=1e-10)
        assert a.effect_size_ci == pytest.approx(b.effect_size_ci, abs=1e-10)
        assert a.pvalue == b.pvalue


def test_bad_inputs_raise_clear_errors() -> None:
    X, Y, A, B = random_sets(0)
    with pytest.raises(WeatkitError, match=r"^weat: A has an all-zero vector$"):
        weat(X, Y, np.zeros_like(A), B)
    with pytest.raises(WeatkitError, match=r"^weat: B has NaN or infinite values$"):
        weat(X, Y, A, np.full_like(B, np.nan))
    with pytest.raises(WeatkitError, match=r"^weat: Y is empty$"):
        weat(X, Y[:0], A, B)
    with pytest.raises(WeatkitError, match="alternative"):
        weat(X, Y, A, B, alternative="bigger")
    with pytest.raises(WeatkitError, match="device"):
        weat(X, Y, A, B, device="tpu")


def test_cpu_engine_runs_with_one_thread_and_gives_the_threads_back() -> None:
    """On the CPU the engine holds torch to one thread while it runs (its blocks are small; two
    spinning OpenMP threads on shared cores made the paper grid many times slower), gives the
    setting back after, and computes the same numbers as with torch's own threads."""
    rng = np.random.default_rng(5)
    tests = [WeatInput(*(rng.normal(size=(n, 8)) for n in (4, 5, 6, 6))) for _ in range(3)]
    options = EngineOptions(n_bootstrap=200, n_permutations=200, device="cpu")
    before = torch.get_num_threads()
    seen: list[int] = []
    held = run_weat(tests, options, progress=lambda n: seen.append(torch.get_num_threads()))
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == before
    torch.set_num_threads(2)
    try:
        free = run_threads(tests, options, workers=1, hold=False)
    finally:
        torch.set_num_threads(before)
    for a, b in zip(held, free, strict=True):
        assert a.effect_size == pytest.approx(b.effect_size, rel=1e-12)
        np.testing.assert_allclose(a.effect_size_ci, b.effect_size_ci, rtol=1e-12)
        assert a.pvalue == b.pvalue


def run_threads(
    tests: list[WeatInput], options: EngineOptions, workers: int, hold: bool = True
) -> list:
    """The engine's run with its blocks shared out over ``workers`` threads (one torch thread
    each when ``hold``, as ``run_weat`` does)."""
    from weatkit.engine.device import cpu_threads, engine_dtype, resolve_device
    from weatkit.engine.weat import _Run, _run_all

    device = resolve_device(options.device)
    run = _Run(options, device, engine_dtype(device), workers)
    if not hold:
        return _run_all(tests, run, None)
    with cpu_threads(device):
        return _run_all(tests, run, None)


def test_threaded_blocks_equal_one_thread_bit_for_bit() -> None:
    """Plans, similarities, bootstrap blocks and per-shape intervals shared out over threads:
    every number is the one-thread run's, exactly."""
    options = replace(MIXED_OPTIONS, device="cpu")
    tests = mixed_tests()
    one = run_threads(tests, options, workers=1)
    for workers in (2, 3):
        many = run_threads(tests, options, workers=workers)
        for a, b in zip(one, many, strict=True):
            for field in (
                "statistic",
                "effect_size",
                "statistic_ci",
                "effect_size_ci",
                "effect_size_se",
                "pvalue",
                "sign_stability",
            ):
                assert getattr(a, field) == getattr(b, field), field
            np.testing.assert_array_equal(a.bootstrap_statistic, b.bootstrap_statistic)
            np.testing.assert_array_equal(a.bootstrap_effect_size, b.bootstrap_effect_size)
            for key in "XYAB":
                np.testing.assert_array_equal(a.influence[key], b.influence[key])


def test_engine_takes_torch_thread_count_as_its_workers() -> None:
    from weatkit.engine.device import cpu_workers, resolve_device

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(3)
        assert cpu_workers(resolve_device("cpu")) == 3
        torch.set_num_threads(1)
        assert cpu_workers(resolve_device("cpu")) == 1
    finally:
        torch.set_num_threads(before)


def test_in_threads_keeps_order_holds_one_thread_and_raises() -> None:
    import threading

    from weatkit.engine.device import in_threads

    seen: dict[int, tuple[str, int]] = {}

    def square(x: int) -> int:
        seen[x] = (threading.current_thread().name, torch.get_num_threads())
        return x * x

    assert in_threads(square, range(20), 2) == [x * x for x in range(20)]
    assert {threads for _, threads in seen.values()} == {1}  # one torch thread in each
    assert threading.main_thread().name not in {name for name, _ in seen.values()}

    def fail(x: int) -> int:
        if x == 7:
            raise WeatkitError("item 7 is bad")
        return x

    with pytest.raises(WeatkitError, match="item 7 is bad"):
        in_threads(fail, range(20), 2)
    assert in_threads(square, [], 2) == [] and in_threads(square, [3], 2) == [9]


def old_input_check(arr: np.ndarray) -> str:
    """The input rule by the norm: NaN/inf values first, then a zero-norm row."""
    if not np.all(np.isfinite(arr)):
        return "NaN"
    with np.errstate(all="ignore"):
        if np.any(np.linalg.norm(arr, axis=1) == 0):
            return "all-zero"
    return "ok"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64])
def test_input_check_agrees_with_the_norm_rule_at_the_edges(dtype) -> None:
    """Sums of squares for float32/float64 rows: the same verdicts as the norm, also where the
    squares underflow (tiny values) or overflow (huge ones)."""
    rng = np.random.default_rng(0)
    sets = [(10 * rng.normal(size=(4, 5))).astype(dtype) for _ in range(4)]
    values = [np.nan, np.inf, -np.inf, 0.0, 1e-30, 1e-23, 3e-23, 1e-200, 1e-4, 1e20, 1e200]
    for value in values:
        for where in ("row", "cell", "cell of a zero row"):
            A = sets[2].copy()
            with np.errstate(all="ignore"):
                v = np.array(value).astype(dtype) if np.isfinite(value) or dtype != np.int64 else 0
                if where == "row":
                    A[1] = v
                elif where == "cell":
                    A[1, 2] = v
                else:
                    A[1], A[1, 2] = 0, v
            want = old_input_check(A)
            if want == "ok":
                weat(sets[0], sets[1], A, sets[3], n_bootstrap=0, n_permutations=0)
            else:
                with pytest.raises(WeatkitError, match=want):
                    weat(sets[0], sets[1], A, sets[3], n_bootstrap=0, n_permutations=0)


def test_small_blocks_and_pieces_give_the_same_numbers(monkeypatch) -> None:
    """Bootstrap blocks, similarity chunks and the pieces of a shape's intervals and p-values
    cut small (a few tests each) give the numbers of the default cut."""
    from weatkit.engine import weat as engine

    options = replace(MIXED_OPTIONS, device="cpu")
    tests = mixed_tests()
    default = run_threads(tests, options, workers=2)
    monkeypatch.setattr(engine, "_block_budget", lambda device: 3 * 300)  # 3 tests a piece
    monkeypatch.setattr(engine, "_vector_budget", lambda device: 2 * 16 * 12)
    small = run_threads(tests, options, workers=2)
    for a, b in zip(default, small, strict=True):
        assert b.statistic == a.statistic and b.effect_size == a.effect_size
        assert b.statistic_ci == pytest.approx(a.statistic_ci, abs=1e-12)
        assert b.effect_size_ci == pytest.approx(a.effect_size_ci, abs=1e-12)
        assert b.effect_size_se == pytest.approx(a.effect_size_se, abs=1e-12)
        assert b.pvalue == a.pvalue and b.sign_stability == a.sign_stability
        for key in "XYAB":
            np.testing.assert_allclose(b.influence[key], a.influence[key], atol=1e-12)


def test_a_starved_thread_gives_its_items_to_the_other() -> None:
    """Items that use no CPU (a sleep: like a thread that waits for busy cores) make every
    thread but one stop after 50 ms; the last one does the rest, and nothing is lost."""
    import threading
    import time

    from weatkit.engine.device import in_threads

    names: list[str] = []

    def idle(x: int) -> int:
        time.sleep(0.005)
        names.append(threading.current_thread().name)
        return x

    assert in_threads(idle, range(40), 2) == list(range(40))
    assert len(set(names)) == 2 and len(set(names[-15:])) == 1
