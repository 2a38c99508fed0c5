"""Nothing scored is lost (issue 36 §3): the causal-score cache writes each batch a backend
finishes as it arrives (weatkit/scoring/arrivals.py), so a run stopped part-way resumes with the
texts it had not scored; and the writes are few (a shard each, merged beyond MAX_SHARDS). The
server case is in tests/test_scoring_openai.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO
from tests.tiny_models import make_causal_lm
from weatkit.data import cache_dir
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.models.cache import MAX_SHARDS, counting
from weatkit.scoring import TokenLogprobs, arrivals, get_scorer
from weatkit.scoring import hf as hf_backend
from weatkit.scoring.cache import LogprobCache

#: 12 distinct texts that share no prefix: one row, and one text, per batch item.
TEXTS = [f"{who} {did} {n}" for who in ("He", "She", "They") for did in ("slept", "ran")
         for n in (1, 22)]  # fmt: skip
BATCH = 2


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("arrivals") / "gpt2", "gpt2")


def _options(**kwargs: object) -> ContextualOptions:
    return ContextualOptions(device="cpu", **{"batch_size": BATCH, **kwargs})


def _shards() -> list[Path]:
    return sorted((cache_dir("scores") / "causal").glob("*/shard-*.safetensors"))


def _stop_at_batch(monkeypatch: pytest.MonkeyPatch, n: int, error: BaseException) -> None:
    """Batch ``n`` (1-based) of the hf backend raises ``error`` instead of running."""
    real = hf_backend._causal_batch
    calls = []

    def batch(*args: object, **kwargs: object) -> np.ndarray:
        calls.append(1)
        if len(calls) == n:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(hf_backend, "_causal_batch", batch)


def _resumed(gpt2: Path, cached: int) -> None:
    """A rerun scores only the texts not cached, and gives an uninterrupted run's numbers."""
    with counting() as count:
        resumed = get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS)
    assert (count.cached, count.computed) == (cached, len(TEXTS) - cached)
    whole = get_scorer(str(gpt2), _options(cache=False)).causal_logprobs(TEXTS)
    for a, b in zip(resumed, whole, strict=True):
        assert (a.text, a.tokens, a.offsets) == (b.text, b.tokens, b.offsets)
        # other batches than the uninterrupted run's: the last float32 bits may differ
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("error", [KeyboardInterrupt(), RuntimeError("a broken batch")])
def test_what_was_scored_before_an_interrupt_or_error_is_kept(
    gpt2: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    with monkeypatch.context() as patch, pytest.raises(type(error)):
        _stop_at_batch(patch, 4, error)
        get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS, show_progress=False)
    assert len(_shards()) == 1  # written once, when the call failed
    _resumed(gpt2, cached=3 * BATCH)


def test_read_from_entries_are_kept_too(gpt2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``read_from`` call (GEST) keeps its entries under their own key as they arrive."""
    offsets = [3] * len(TEXTS)
    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        _stop_at_batch(patch, 3, KeyboardInterrupt())
        get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS, read_from=offsets)
    with counting() as count:
        again = get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS, read_from=offsets)
    assert (count.cached, count.computed) == (2 * BATCH, len(TEXTS) - 2 * BATCH)
    assert all(np.isnan(s.logprobs[0]) for s in again)  # the words before the offset: NaN


@pytest.mark.slow
def test_a_killed_process_keeps_the_batches_written_before(gpt2: Path, tmp_path: Path) -> None:
    """SIGKILL in the middle of batch 4, in a process that writes every batch as it arrives
    (no wait): the first three batches are on disk, the rerun scores the rest."""
    script = textwrap.dedent(f"""
        import os, signal
        from weatkit.embeddings.contextual import ContextualOptions
        from weatkit.scoring import arrivals, get_scorer
        from weatkit.scoring import hf as hf_backend

        arrivals.WRITE_EVERY_S, arrivals.WRITE_SHARE = 0.0, float("inf")  # write every batch
        real, calls = hf_backend._causal_batch, []

        def batch(*args, **kwargs):
            calls.append(1)
            if len(calls) == 4:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)

        hf_backend._causal_batch = batch
        options = ContextualOptions(device="cpu", batch_size={BATCH})
        get_scorer({str(gpt2)!r}, options).causal_logprobs({TEXTS!r}, show_progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO, timeout=120)
    assert done.returncode == -9
    assert len(_shards()) == 3
    _resumed(gpt2, cached=3 * BATCH)


def test_every_text_is_reported_once_with_its_result(gpt2: Path) -> None:
    """``on_scored`` through the cache: the cached texts, then each batch; a text given twice
    at both its places; one token without a start token (no batch) too."""
    texts = ["He ran", "She ran", "He ran", "a", *TEXTS[:5]]
    scorer = get_scorer(str(gpt2), _options())
    scorer.causal_logprobs(texts[4:6], start="none")
    seen: dict[int, TokenLogprobs] = {}

    def record(indices: list[int], scored: list[TokenLogprobs]) -> None:
        assert len(indices) == len(scored) and not set(indices) & set(seen)
        seen.update(zip(indices, scored, strict=True))

    got = scorer.causal_logprobs(texts, start="none", on_scored=record)
    assert sorted(seen) == list(range(len(texts)))
    assert all(seen[i] is s for i, s in enumerate(got))


class _Ticking(LogprobCache):
    """A cache whose writes take ``put_s`` seconds of a test's clock."""

    def __init__(self, clock: list[float], put_s: float) -> None:
        super().__init__({"task": "test"}, root=cache_dir("scores") / "causal")
        self.clock, self.put_s = clock, put_s

    def put(self, items: list[str], vectors: dict) -> None:
        super().put(items, vectors)
        self.clock[0] += self.put_s


@pytest.mark.parametrize(("put_s", "wait_s"), [(0.0, 10.0), (1.0, 20.0)])
def test_writes_are_bounded_by_time_not_by_batches(put_s: float, wait_s: float) -> None:
    """1,000 batches over 100 s of a test clock: a write every WRITE_EVERY_S = 10 s at most;
    writes that take 1 s each wait 1 / WRITE_SHARE = 20 s. What was delivered is all on disk
    after the last flush, and the shards never exceed MAX_SHARDS (merged beyond)."""
    clock = [0.0]
    cache = _Ticking(clock, put_s)
    items = [f"text {i}" for i in range(1000)]
    writer = arrivals.ArrivalWriter(cache, items, clock=lambda: clock[0])
    value = TokenLogprobs("x", ("x",), ((0, 1),), np.array([-1.0]))
    for i in range(1000):
        clock[0] += 0.1
        writer([i], [value])
        assert len(_shards()) <= MAX_SHARDS
    writer.flush()
    timed = writer.writes - 1  # the last write is the flush
    assert clock[0] / (wait_s + put_s) - 2 <= timed <= clock[0] / wait_s  # one write per wait
    fresh = LogprobCache({"task": "test"}, root=cache_dir("scores") / "causal")
    assert len(fresh.get(items, 0)) == 1000
