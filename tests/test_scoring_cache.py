"""The scoring layer's on-disk cache of causal scores (weatkit/scoring/cache.py) on a tiny GPT-2:
values come back bit for bit without a forward pass; the key holds the dtype and the start, not
the batch size; ``cache=False`` neither reads nor writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.tiny_models import make_causal_lm
from weatkit.data import cache_dir
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.models.cache import counting
from weatkit.scoring import Scorer, TokenLogprobs, get_scorer
from weatkit.scoring import hf as hf_backend

TEXTS = ["The nurse said hello.", "He is a doctor", "Ünïcödé ½ €", "He is a doctor", "a"]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("causal") / "gpt2", "gpt2")


def _options(**kwargs: object) -> ContextualOptions:
    return ContextualOptions(device="cpu", **{"batch_size": 2, **kwargs})


def _no_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    def forward(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model ran")

    monkeypatch.setattr(hf_backend, "_causal_batch", forward)


def _same(a: list[TokenLogprobs], b: list[TokenLogprobs]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (x.text, x.tokens, x.offsets) == (y.text, y.tokens, y.offsets)
        assert x.logprobs.dtype == y.logprobs.dtype == np.float64
        assert np.array_equal(x.logprobs, y.logprobs, equal_nan=True)  # bit for bit


def _shards() -> list[Path]:
    return sorted((cache_dir("scores") / "causal").glob("*/shard-*.safetensors"))


def test_a_second_scorer_reads_every_value_back_without_the_model(
    gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = get_scorer(str(gpt2), _options())
    assert isinstance(first, Scorer) and repr(first) == f"HfScorer('hf:{gpt2}')"
    with counting() as count:
        computed = first.causal_logprobs(TEXTS, show_progress=False)
    assert (count.cached, count.computed) == (0, 4)  # 4 distinct texts
    assert [c.text for c in computed] == TEXTS
    assert len(_shards()) == 1

    _no_forward(monkeypatch)
    again = get_scorer(f"hf:{gpt2}", _options(batch_size=7))  # another batch size: same key
    with counting() as count:
        cached = again.causal_logprobs(TEXTS[::-1], show_progress=False)
    _same(cached, computed[::-1])
    assert (count.cached, count.computed) == (4, 0)
    assert count.describe() == (
        "reused 4 cached scores (written by the Python API, batch size 2); scored 0"
    )
    # the tokenizer's start: another key; GPT-2 adds no BOS, so the first token has no value
    monkeypatch.undo()
    with counting() as count:
        (own,) = again.causal_logprobs(["He is a doctor"], start="tokenizer")
    assert (count.cached, count.computed) == (0, 1)
    assert np.isnan(own.logprobs[0]) and not np.isnan(own.logprobs[1:]).any()
    _no_forward(monkeypatch)
    _same(get_scorer(str(gpt2), _options()).causal_logprobs(["He is a doctor"], start="tokenizer"),
          [own])  # fmt: skip
    # no start token: a third key (GPT-2's "tokenizer" start has none either, but the key is the
    # start asked for), read back bit for bit
    monkeypatch.undo()
    with counting() as count:
        (bare,) = again.causal_logprobs(["He is a doctor"], start="none")
    assert (count.cached, count.computed) == (0, 1)
    _same([bare], [own])
    _no_forward(monkeypatch)
    _same(get_scorer(str(gpt2), _options()).causal_logprobs(["He is a doctor"], start="none"),
          [bare])  # fmt: skip


def test_only_new_texts_are_scored(gpt2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = get_scorer(str(gpt2), _options())
    scorer.causal_logprobs(TEXTS[:2])
    asked: list[list[str]] = []
    real = hf_backend.HfScorer.causal_logprobs

    def spy(self, texts, **kwargs):
        asked.append(list(texts))
        return real(self, texts, **kwargs)

    monkeypatch.setattr(hf_backend.HfScorer, "causal_logprobs", spy)
    with counting() as count:
        got = get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS)
    assert asked == [["Ünïcödé ½ €", "a"]]
    assert (count.cached, count.computed) == (2, 2)
    fresh = get_scorer(str(gpt2), _options(cache=False)).causal_logprobs(TEXTS)
    for a, b in zip(got, fresh, strict=True):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-5)  # other batches


def test_a_text_read_from_an_offset_has_its_own_entries(
    gpt2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``read_from`` call (GEST) is served by a whole text's entry where one is cached; a text
    it computes (NaN before its offset) is kept under a key of its own, served again to the
    same call without the model, never to a call for every token nor one from another offset."""
    get_scorer(str(gpt2), _options()).causal_logprobs(["He is a doctor"])
    texts = ["He is a doctor", "She is a nurse", "She is a nurse"]
    with counting() as count:
        first = get_scorer(str(gpt2), _options()).causal_logprobs(texts, read_from=[6, 9, 6])
    assert (count.cached, count.computed) == (1, 1)
    assert not np.isnan(first[0].logprobs).any()  # the whole text's entry
    read = np.array([end > 6 for _, end in first[1].offsets])  # the smaller offset of the two
    assert np.isnan(first[1].logprobs[~read]).all() and not np.isnan(first[1].logprobs[read]).any()
    assert len({s.parent for s in _shards()}) == 2
    _no_forward(monkeypatch)
    with counting() as count:
        again = get_scorer(str(gpt2), _options()).causal_logprobs(texts, read_from=[6, 6, 6])
    _same(again, first)
    assert (count.cached, count.computed) == (2, 0)  # distinct texts
    for read_from in (None, [3]):
        with pytest.raises(AssertionError, match="the model ran"):
            get_scorer(str(gpt2), _options()).causal_logprobs(texts[1:2], read_from=read_from)


def test_the_dtype_is_in_the_key(gpt2: Path) -> None:
    get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS)
    with counting() as count:
        half = get_scorer(str(gpt2), _options(dtype="bfloat16")).causal_logprobs(TEXTS)
    assert (count.cached, count.computed) == (0, 4)
    assert len({s.parent for s in _shards()}) == 2
    info = {p.read_text() for p in (cache_dir("scores") / "causal").glob("*/info.json")}
    assert any('"dtype": "bfloat16"' in text for text in info)
    assert all('"batch_size"' not in text and '"device"' not in text for text in info)
    assert all(np.isfinite(s.logprobs).all() for s in half)


def test_no_cache_neither_reads_nor_writes(gpt2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scorer = get_scorer(str(gpt2), _options(cache=False))
    with counting() as count:
        scorer.causal_logprobs(TEXTS)
    assert (count.cached, count.computed) == (0, 5) and _shards() == []
    get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS)
    _no_forward(monkeypatch)
    with pytest.raises(AssertionError, match="the model ran"):
        scorer.causal_logprobs(TEXTS)


def test_an_unreadable_shard_is_dropped_and_scored_again(gpt2: Path) -> None:
    get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS)
    (shard,) = _shards()
    shard.write_bytes(shard.read_bytes()[:40])
    with counting() as count:
        get_scorer(str(gpt2), _options()).causal_logprobs(TEXTS)
    assert (count.cached, count.computed) == (0, 4)
    assert len(_shards()) == 1 and _shards()[0] != shard


def test_texts_the_cache_cannot_key_go_to_the_backend(gpt2: Path) -> None:
    from weatkit.errors import ModelError

    scorer = get_scorer(str(gpt2), _options())
    scorer.causal_logprobs(["ok"])
    with pytest.raises(ModelError, match=r"^text 1 is empty or not text: ' '$"):
        scorer.causal_logprobs(["ok", " "])
    with pytest.raises(ModelError, match="a list of texts, not one string"):
        scorer.causal_logprobs("ok")
