"""Invariants across computation paths (issue 36 §5): the same numbers whichever way they ran.

Each test names the invariant it checks. Models: tiny random-weight causal LMs
(:func:`tests.tiny_models.make_causal_lm`, 2 layers, hidden 24, byte-level BPE, so every
sentence of the real data has tokens); data: the real CrowS-Pairs, GEST and StereoSet files of
``$WEATKIT_DATA`` (seeded samples), MBE on the parallel sentences of :mod:`tests.test_mbe`.

======  ==========================================  ==============================  ============
name    invariant                                   tolerance, per kind of number   why
======  ==========================================  ==============================  ============
I1      batch size 1, 7, 64 and ``auto`` give the   token log-probs: 1e-5 abs;      (a)
        same token log-probabilities                tokens, spans: equal
I2      ``auto`` after out-of-memory halvings       token log-probs: 1e-5 abs       (a)
        (256 → … → 8) gives those of batch size 1
I3      batch sizes 1, 7, 64, ``auto`` give the     per-item scores: 1e-4 abs;      (b)
        same CrowS-Pairs (``sum``), MBE             verdicts (win, neutral): equal,
        (``mean-ll``), GEST and StereoSet tables    and every margin > 2e-4;
                                                    tables of verdicts (CrowS,
                                                    StereoSet): exact; tables of
                                                    means of scores (GEST, MBE):
                                                    1e-5 rel + 1e-4 abs
I4      cache cold (batch size 7), then warm        every table: bit for bit;       (c)
        (batch size 64): the same tables, and the   MBE's score: 1e-5 rel (its
        warm run scores nothing                     embeddings are not cached)
I5      ``weatkit compare --executor local`` and    scores.csv, table.csv,          (d)
        ``--executor ray`` write the same tables    correlations.csv, skipped.csv:
        (causal LMs, the cache on; slow)            byte for byte
I6      float32 on the CPU and on CUDA give the     token log-probs: 1e-4 abs;      (e)
        same log-probs and CrowS-Pairs verdicts     pair scores: 1e-3 abs;
        (skipped without CUDA:                      verdicts and summary: equal
        ``benchmarks/gpu_check.sh`` runs it)        (margins > 2e-3)
======  ==========================================  ==============================  ============

Why those tolerances:

(a) float32 kernels: a padded batch is another matrix shape, so the matmuls sum in another
    order and the last bits move (observed ≤ 1e-6 on these log-probs of magnitude ≤ 30);
    1e-5 is float32's relative precision at that magnitude times a few.
(b) an item's score is a sum or mean of up to ~150 token log-probs each within (a), so 1e-4
    bounds it. A verdict is a comparison of two scores: it is only invariant where the two
    differ by more than twice the tolerance, so the test also checks that every margin does
    (else an equal verdict would be luck). Tables built from verdicts and a seeded bootstrap
    are then exactly equal; tables of means of scores (GEST's mean score and its exponential
    q, MBE's win rate weighted by cosines of float32 embeddings) move in their last bits
    (observed ≤ 5e-7).
(c) the cache stores the float64 values that were computed and hands them back unchanged; the
    batch size is not part of the key (a padded batch changes the last bits only), so a warm
    run at another batch size returns the cold run's bits, not its own. Token log-probs are
    cached, sentence embeddings are not: MBE's cosine weights are recomputed (bound of (b)).
(d) the same jobs with the same seeds on the same CPU code: the executor only decides where
    and in which order jobs run, and the tables are written in a fixed order.
(e) cuBLAS and the CPU's BLAS are different float32 kernels (TF32 is off for float32 matmuls
    by default), so log-probs agree to about 1e-5 relative; 1e-4 leaves room for magnitudes up
    to ~30, and pair scores sum ~100 of them. Untested here: no CUDA device on the development
    machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from tests.test_compare_ray import TABLES
from tests.test_mbe import _write_tsv
from tests.tiny_models import make_causal_lm
from weatkit.cli import main
from weatkit.crows import load_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.measures import crows, gest, mbe, stereoset
from weatkit.models import batching
from weatkit.models.cache import counting
from weatkit.scoring import get_scorer

#: I1, I2: tolerance on token log-probabilities of two batch sizes (float32 kernels).
LOGPROB_ATOL = 1e-5
#: I3: tolerance on an item's score (a sum or mean of token log-probabilities).
SCORE_ATOL = 1e-4
#: I3: relative tolerance on tables of means of scores and their exponentials (GEST, MBE),
#: with :data:`SCORE_ATOL` as the absolute one.
TABLE_RTOL = 1e-5
#: I6: CPU against CUDA, float32.
CUDA_LOGPROB_ATOL = 1e-4
CUDA_SCORE_ATOL = 1e-3

BATCH_SIZES: tuple[int | str, ...] = (1, 7, 64, "auto")
#: Items per measure: small samples of the real data, several padded batches at size 7.
N_CROWS, N_GEST, N_STEREOSET = 24, 24, 16
BOOTSTRAP = 200


def options(
    batch_size: int | str, *, cache: bool = False, device: str = "cpu"
) -> ContextualOptions:
    """float32 on ``device``; the cache off unless asked (a second scorer would read the first
    one's values back and hide a difference)."""
    return ContextualOptions(batch_size=batch_size, device=device, cache=cache)


@pytest.fixture(autouse=True)
def _fresh_auto_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` starts at AUTO_START in every test: no size remembered from an earlier one."""
    monkeypatch.setattr(batching, "_FITTED", {})


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(make_causal_lm(tmp_path_factory.mktemp("invariance") / "llama", "llama"))


@pytest.fixture(scope="module")
def texts(data_dir: Path) -> list[str]:
    """40 real CrowS-Pairs sentences of mixed lengths (both sides of 20 pairs)."""
    table = load_crows().iloc[::75].head(20)
    return [*table.sent_more, *table.sent_less]


@pytest.fixture(scope="module")
def parallel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_tsv(tmp_path_factory.mktemp("mbe") / "parallel.tsv")


def run_measures(model: str, opts: ContextualOptions, parallel: Path) -> dict[str, Any]:
    """CrowS-Pairs (``sum``), GEST, StereoSet and MBE (``mean-ll``) of ``model`` under
    ``opts``: the native results, by measure."""
    quiet: dict[str, Any] = {"options": opts, "show_progress": False}
    return {
        "crows": crows(model, method="sum", limit=N_CROWS, n_bootstrap=BOOTSTRAP, **quiet),
        "gest": gest(model, limit=N_GEST, n_bootstrap=BOOTSTRAP, **quiet),
        "stereoset": stereoset(model, limit=N_STEREOSET, n_bootstrap=BOOTSTRAP, **quiet),
        "mbe": mbe(model, corpus=parallel, lang="de", method="mean-ll", seed=3, **quiet),
    }


@pytest.fixture(scope="module")
def by_batch_size(llama: str, parallel: Path, data_dir: Path) -> dict[int | str, dict[str, Any]]:
    """Every measure at every batch size of :data:`BATCH_SIZES` (computed once per module)."""
    out = {}
    for size in BATCH_SIZES:
        batching._FITTED.clear()
        out[size] = run_measures(llama, options(size), parallel)
    batching._FITTED.clear()
    return out


# --- I1, I2: token log-probabilities ---------------------------------------------------------


def assert_same_logprobs(got: list[Any], expected: list[Any], atol: float) -> None:
    """The same tokens and spans, log-probabilities within ``atol`` (NaN where NaN)."""
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert (a.tokens, a.offsets) == (b.tokens, b.offsets)
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=atol)


def test_I1_batch_sizes_give_the_same_token_logprobs(llama: str, texts: list[str]) -> None:
    one = get_scorer(f"hf:{llama}", options(1)).causal_logprobs(texts, show_progress=False)
    assert sum(len(x.tokens) for x in one) > 40 * 20  # real sentences, many tokens each
    for size in BATCH_SIZES[1:]:
        got = get_scorer(f"hf:{llama}", options(size)).causal_logprobs(texts, show_progress=False)
        assert_same_logprobs(got, one, LOGPROB_ATOL)
    assert batching.auto_batch_sizes() == {llama: batching.AUTO_START}  # all in one


def test_I2_auto_after_out_of_memory_halvings(
    llama: str, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of more than 8 texts raises torch's out-of-memory error, as CUDA would: ``auto``
    halves 256 → 128 → … → 8, keeps 8 for the batches after, and its numbers are those of batch
    size 1."""
    import weatkit.scoring.hf as hf

    tried: list[int] = []
    real = batching.run_batches

    def run_with_a_memory_limit(items: Any, compute: Callable[..., Any], **kw: Any) -> Any:
        def limited(batch: list[Any]) -> Any:
            tried.append(len(batch))
            if len(batch) > 8:
                raise torch.OutOfMemoryError("CUDA out of memory (a test's limit of 8 texts)")
            return compute(batch)

        return real(items, limited, **kw)

    monkeypatch.setattr(hf, "run_batches", run_with_a_memory_limit)
    auto = get_scorer(f"hf:{llama}", options("auto")).causal_logprobs(texts, show_progress=False)
    # 256, 128, 64, 32, 16 rows (fewer where the token budget of the batching cuts the batch
    # first) all fail; then batches of at most 8 texts run
    assert all(n > 8 for n in tried[:5]) and max(tried[5:]) <= 8 and sum(tried[5:]) == 40
    assert batching.auto_batch_sizes() == {llama: 8}
    monkeypatch.setattr(hf, "run_batches", real)
    one = get_scorer(f"hf:{llama}", options(1)).causal_logprobs(texts, show_progress=False)
    assert_same_logprobs(auto, one, LOGPROB_ATOL)


# --- I3: the measures' tables at every batch size --------------------------------------------


def assert_verdicts_hold(score_a: pd.Series, score_b: pd.Series, same_a: pd.Series,
                         same_b: pd.Series) -> None:  # fmt: skip
    """Scores of two runs within :data:`SCORE_ATOL`, each pair's margin larger than it (so the
    comparison cannot flip within the tolerance)."""
    np.testing.assert_allclose(score_a, same_a, rtol=0, atol=SCORE_ATOL)
    np.testing.assert_allclose(score_b, same_b, rtol=0, atol=SCORE_ATOL)
    assert (np.abs(score_a - score_b) > 2 * SCORE_ATOL).all()


@pytest.mark.parametrize("size", BATCH_SIZES[1:])
def test_I3_crows_tables_at_every_batch_size(
    by_batch_size: dict[int | str, dict[str, Any]], size: int | str
) -> None:
    base, other = by_batch_size[1]["crows"], by_batch_size[size]["crows"]
    assert len(base.pairs) == N_CROWS
    assert_verdicts_hold(base.pairs.score_more, base.pairs.score_less,
                         other.pairs.score_more, other.pairs.score_less)  # fmt: skip
    verdicts = ["pair_id", "bias_type", "direction", "win", "neutral", "skipped"]
    pd.testing.assert_frame_equal(base.pairs[verdicts], other.pairs[verdicts])
    pd.testing.assert_frame_equal(base.summary, other.summary, check_exact=True)
    assert base.measures == other.measures


@pytest.mark.parametrize("size", BATCH_SIZES[1:])
def test_I3_gest_tables_at_every_batch_size(
    by_batch_size: dict[int | str, dict[str, Any]], size: int | str
) -> None:
    base, other = by_batch_size[1]["gest"], by_batch_size[size]["gest"]
    assert len(base.scores) >= N_GEST and base.scores.score.notna().all()
    keys = [c for c in base.scores.columns if c != "score"]
    pd.testing.assert_frame_equal(base.scores[keys], other.scores[keys])
    np.testing.assert_allclose(base.scores.score, other.scores.score, rtol=0, atol=SCORE_ATOL)
    for name in ("stereotypes", "summary"):
        pd.testing.assert_frame_equal(
            getattr(base.summary, name),
            getattr(other.summary, name),
            rtol=TABLE_RTOL,
            atol=SCORE_ATOL,
        )
    assert base.measures[0].value == pytest.approx(other.measures[0].value, rel=TABLE_RTOL)


@pytest.mark.parametrize("size", BATCH_SIZES[1:])
def test_I3_stereoset_tables_at_every_batch_size(
    by_batch_size: dict[int | str, dict[str, Any]], size: int | str
) -> None:
    base, other = by_batch_size[1]["stereoset"], by_batch_size[size]["stereoset"]
    assert base.table.n.sum() > 0
    pd.testing.assert_frame_equal(base.table, other.table, check_exact=True)
    assert base.measures == other.measures


@pytest.mark.parametrize("size", BATCH_SIZES[1:])
def test_I3_mbe_tables_at_every_batch_size(
    by_batch_size: dict[int | str, dict[str, Any]], size: int | str
) -> None:
    base, other = by_batch_size[1]["mbe"].run, by_batch_size[size]["mbe"].run
    keys = [c for c in base.sentences.columns if c != "mean_ll"]
    pd.testing.assert_frame_equal(base.sentences[keys], other.sentences[keys])
    np.testing.assert_allclose(base.sentences.mean_ll, other.sentences.mean_ll, atol=SCORE_ATOL)
    value = by_batch_size[1]["mbe"].measures[0].value
    assert by_batch_size[size]["mbe"].measures[0].value == pytest.approx(value, rel=TABLE_RTOL)


# --- I4: the cache, cold then warm ------------------------------------------------------------


def frames(results: dict[str, Any]) -> Iterator[tuple[str, pd.DataFrame]]:
    """Every table of :func:`run_measures`' results, named."""
    yield "crows.pairs", results["crows"].pairs
    yield "crows.summary", results["crows"].summary
    yield "gest.scores", results["gest"].scores
    yield "gest.stereotypes", results["gest"].summary.stereotypes
    yield "gest.summary", results["gest"].summary.summary
    yield "stereoset.table", results["stereoset"].table
    yield "mbe.sentences", results["mbe"].run.sentences


def test_I4_cache_cold_then_warm_bit_for_bit(llama: str, parallel: Path, data_dir: Path) -> None:
    """The cold run (batch size 7) writes the cache; the warm run (batch size 64: not part of the
    key) scores nothing and returns the cold run's tables bit for bit."""
    with counting() as cold_count:
        cold = run_measures(llama, options(7, cache=True), parallel)
    assert cold_count.computed > 0 and cold_count.cached == 0
    with counting() as warm_count:
        warm = run_measures(llama, options(64, cache=True), parallel)
    assert warm_count.computed == 0 and warm_count.cached > 0
    assert warm_count.writers and all("batch size 7" in w for w in warm_count.writers), (
        warm_count.writers
    )
    for (name, a), (_, b) in zip(frames(cold), frames(warm), strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=name)
    for measure in ("crows", "gest", "stereoset"):
        assert cold[measure].measures == warm[measure].measures, measure
    # MBE's cosine weights come from sentence embeddings, which the cache does not keep: the warm
    # run embeds again at its own batch size, so its score moves in the last bits (I3's bound)
    mbe_cold, mbe_warm = cold["mbe"].measures[0].value, warm["mbe"].measures[0].value
    assert mbe_warm == pytest.approx(mbe_cold, rel=TABLE_RTOL)


# --- I5: compare, local against ray -----------------------------------------------------------

CAUSAL_STUDY = """
output: out
languages: [en]
models:
  - {name: G, model: gpt2}
  - {name: L, model: llama}
  - {name: Q, model: qwen2}
contextual: {device: cpu, batch_size: 16}
crows: {method: sum, limit: 8}
gest: {limit: 16}
scores: {n_bootstrap: 50}
correlation: {n_bootstrap: 50}
"""


@pytest.fixture(scope="module")
def causal_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three tiny causal LMs (a correlation needs three) with CrowS-Pairs and GEST, the cache
    on."""
    root = tmp_path_factory.mktemp("causal-study")
    for arch in ("gpt2", "llama", "qwen2"):
        make_causal_lm(root / arch, arch)
    (root / "cmp.yaml").write_text(CAUSAL_STUDY)
    return root / "cmp.yaml"


@pytest.mark.slow
def test_I5_compare_local_and_ray_write_the_same_tables(
    ray_cluster: str, causal_study: Path, data_dir: Path, tmp_path: Path
) -> None:
    outputs = {}
    for executor in ("local", "ray"):
        out = outputs[executor] = tmp_path / executor
        args = ["compare", str(causal_study), "--out", str(out), "--no-plot", "--no-progress"]
        result = CliRunner().invoke(main, [*args, "--executor", executor])
        assert result.exit_code == 0, result.output
    table = (outputs["local"] / "table.csv").read_text().splitlines()
    assert table[0].startswith("model,lang,") and len(table) == 4  # 3 models, en
    for name in TABLES:
        local, ray = (outputs[e] / name for e in ("local", "ray"))
        assert local.read_bytes() == ray.read_bytes(), name


# --- I6: CPU against CUDA, float32 ------------------------------------------------------------


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (gpu_check.sh runs it)")
def test_I6_float32_cpu_and_cuda_agree(llama: str, texts: list[str], data_dir: Path) -> None:
    cpu = get_scorer(f"hf:{llama}", options(7)).causal_logprobs(texts, show_progress=False)
    gpu_scorer = get_scorer(f"hf:{llama}", options(7, device="cuda"))
    assert_same_logprobs(gpu_scorer.causal_logprobs(texts, show_progress=False), cpu,
                         CUDA_LOGPROB_ATOL)  # fmt: skip
    on = {d: crows(llama, method="sum", limit=N_CROWS, n_bootstrap=BOOTSTRAP, show_progress=False,
                   options=options(7, device=d)) for d in ("cpu", "cuda")}  # fmt: skip
    a, b = on["cpu"].pairs, on["cuda"].pairs
    np.testing.assert_allclose(a.score_more, b.score_more, rtol=0, atol=CUDA_SCORE_ATOL)
    np.testing.assert_allclose(a.score_less, b.score_less, rtol=0, atol=CUDA_SCORE_ATOL)
    assert (np.abs(a.score_more - a.score_less) > 2 * CUDA_SCORE_ATOL).all()
    pd.testing.assert_frame_equal(a[["win", "neutral"]], b[["win", "neutral"]])
    pd.testing.assert_frame_equal(on["cpu"].summary, on["cuda"].summary, check_exact=True)
