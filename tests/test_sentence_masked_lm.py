"""AUL, AULA, sentence embeddings and masked-token log-probabilities against direct computations.

The direct computations follow the reference ``calculate_aul`` of
github.com/kanekomasahiro/bias_eval_in_multiple_mlm: one unpadded forward pass of one sentence
with eager attention, ``log_softmax`` of the logits gathered at the true tokens, the attention
weights averaged over layers, heads and query positions, the first and last token dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModelForMaskedLM

from tests.tiny_models import make_gest_glm, make_gest_mlm
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.sentence import MaskedLM, TokenizedSentence

SENTENCES = [
    'He said: "I am happy."',
    "She cried.",
    'The woman said: "I lift heavy weights every day!"',
    "I am happy.",
]
TOL = {"rtol": 1e-5, "atol": 1e-6}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(make_gest_mlm(tmp_path_factory.mktemp("mlm") / "mlm", split_words=True))


def _direct(model_dir: str, ids: list[int]) -> tuple[float, float, np.ndarray]:
    """AUL, AULA and the mean last-layer state of one sentence, computed plainly."""
    model = AutoModelForMaskedLM.from_pretrained(model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    logp = torch.log_softmax(out.logits[0], dim=-1)[torch.arange(len(ids)), torch.tensor(ids)]
    attention = torch.cat(out.attentions, 0).mean(0).mean(0).mean(0)  # layers, heads, queries
    inner = slice(1, len(ids) - 1)
    aul = logp[inner].mean().item()
    aula = (logp[inner] * attention[inner]).mean().item()
    embedding = out.hidden_states[-1][0, inner].mean(0).numpy()
    return aul, aula, embedding


def test_unmasked_scores_equal_direct_computation(model_dir: str) -> None:
    lm = MaskedLM(model_dir, ContextualOptions(batch_size=3, device="cpu", cache=False))
    sentences = lm.tokenize(SENTENCES)
    scores = lm.unmasked(sentences)
    for i, s in enumerate(sentences):
        aul, aula, embedding = _direct(model_dir, list(s.ids))
        assert scores.aul[i] == pytest.approx(aul, rel=1e-5)
        assert scores.aula[i] == pytest.approx(aula, rel=1e-5)
        np.testing.assert_allclose(scores.embedding[i], embedding, **TOL)
    # AULA weights are attention means: positive and smaller than 1, so |AULA| < |AUL|
    assert np.all(np.abs(scores.aula) < np.abs(scores.aul))


def test_batch_size_does_not_change_scores(model_dir: str) -> None:
    one = MaskedLM(model_dir, ContextualOptions(batch_size=1, device="cpu", cache=False))
    many = MaskedLM(model_dir, ContextualOptions(batch_size=8, device="cpu", cache=False))
    a = one.unmasked(one.tokenize(SENTENCES))
    b = many.unmasked(many.tokenize(SENTENCES))
    np.testing.assert_allclose(a.aula, b.aula, **TOL)
    np.testing.assert_allclose(a.embedding, b.embedding, **TOL)
    positions = [s.content for s in one.tokenize(SENTENCES)]
    for x, y in zip(
        one.masked_log_probs(one.tokenize(SENTENCES), positions),
        many.masked_log_probs(many.tokenize(SENTENCES), positions),
        strict=True,
    ):
        np.testing.assert_allclose(x, y, **TOL)


def test_masked_log_probs_equal_one_mask_at_a_time(model_dir: str) -> None:
    lm = MaskedLM(model_dir, ContextualOptions(batch_size=5, device="cpu", cache=False))
    sentences = lm.tokenize(SENTENCES[:2])
    positions = [s.content for s in sentences]
    got = lm.masked_log_probs(sentences, positions)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    for s, wanted, values in zip(sentences, positions, got, strict=True):
        assert len(values) == len(wanted)
        for p, value in zip(wanted, values, strict=True):
            ids = list(s.ids)
            ids[p] = lm.mask_id
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0, p]
            assert value == pytest.approx(torch.log_softmax(logits, -1)[s.ids[p]].item(), rel=1e-5)


@contextmanager
def base_rows(lm: MaskedLM) -> Iterator[list[int]]:
    """The rows of every input the network's base runs inside the block (the head-only path runs
    the base; its split's first check adds one row the first time, so run something before)."""
    seen: list[int] = []
    hook = lm.handle.network("mlm").base_model.register_forward_pre_hook(
        lambda _m, args, kwargs: seen.append(kwargs.get("input_ids", *args[:1]).shape[0]),
        with_kwargs=True,
    )
    try:
        yield seen
    finally:
        hook.remove()


def test_masked_candidates_read_several_tokens_in_one_pass(model_dir: str) -> None:
    """log P(c | T with p and the others masked) for each candidate c, equal to one plain pass
    per (input, candidate); one row per masked input; cached per candidate, so a later read of
    other candidates at the same mask computes those only, and masked_log_probs of the token
    the sentence has at p is the same cached read."""
    lm = MaskedLM(model_dir, ContextualOptions(batch_size=1, device="cpu"))
    sentences = lm.tokenize(SENTENCES[:2])
    lm.masked_log_probs(lm.tokenize(["I am happy."]), [[1]])  # the head split's first check
    positions, candidates, others = [2, 1], [[5, 9, 11], [7]], [[3], []]
    with base_rows(lm) as seen:
        got = lm.masked_candidates(sentences, positions, candidates, also_masked=others)
    assert seen == [1, 1] and [v.dtype for v in got] == [np.float64] * 2
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    for s, p, cs, more, values in zip(sentences, positions, candidates, others, got, strict=True):
        ids = list(s.ids)
        for q in (p, *more):
            ids[q] = lm.mask_id
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, p], -1)
        np.testing.assert_allclose(values, logp[cs].numpy(), rtol=1e-5)
    n_computed = lm.n_computed
    with base_rows(lm) as seen:
        again = lm.masked_candidates(sentences[:1], [2], [[9, 13]], also_masked=[[3]])
    assert again[0][0] == got[0][1] and seen == [1]
    assert (lm.n_computed - n_computed, lm.n_cached) == (1, 1)
    own = sentences[0].ids[2]
    read = lm.masked_log_probs(sentences[:1], [[2]], also_masked=[[[3]]])[0][0]
    assert read == lm.masked_candidates(sentences[:1], [2], [[own]], also_masked=[[3]])[0][0]
    assert lm.n_cached == 2
    vocabulary = lm.handle.config.vocab_size
    with pytest.raises(WeatkitError, match=f"candidate {vocabulary} is not a token id of .*"
                       f"\\(0 to {vocabulary - 1}\\)"):  # fmt: skip
        lm.masked_candidates(sentences[:1], [2], [[5, vocabulary]])
    with pytest.raises(WeatkitError, match="one position and one list of candidates"):
        lm.masked_candidates(sentences, [2], [[5], [5]])


def test_cache_serves_a_second_model_object_without_loading(model_dir: str) -> None:
    options = ContextualOptions(batch_size=4, device="cpu")
    first = MaskedLM(model_dir, options)
    sentences = first.tokenize(SENTENCES)
    a = first.unmasked(sentences)
    assert (first.n_computed, first.n_cached) == (4, 0)
    second = MaskedLM(model_dir, options)
    b = second.unmasked(sentences)
    assert (second.n_computed, second.n_cached) == (0, 4)
    assert second._network is None
    np.testing.assert_allclose(a.aula, b.aula, rtol=1e-6)


def test_scores_cached_with_one_batch_size_are_served_to_another(model_dir: str) -> None:
    # padded batches change a score's last bits only: the cache is not keyed on the batch size
    one = MaskedLM(model_dir, ContextualOptions(batch_size=1, device="cpu"))
    a = one.unmasked(one.tokenize(SENTENCES[:2]))
    many = MaskedLM(model_dir, ContextualOptions(batch_size=8, device="cpu"))
    b = many.unmasked(many.tokenize(SENTENCES[:2]))
    assert (many.n_computed, many.n_cached) == (0, 2)
    np.testing.assert_array_equal(a.aula, b.aula)


def test_token_id_sentences_treat_first_and_last_as_special(model_dir: str) -> None:
    lm = MaskedLM(model_dir, ContextualOptions(device="cpu", cache=False))
    tokenized = lm.tokenize(SENTENCES[:1])[0]
    from_ids = TokenizedSentence.from_ids(list(tokenized.ids))
    assert from_ids == tokenized
    assert from_ids.content == list(range(1, len(tokenized.ids) - 1))
    with pytest.raises(WeatkitError, match="special token at each end"):
        TokenizedSentence.from_ids([2, 3])


def test_errors(model_dir: str, tmp_path: Path) -> None:
    lm = MaskedLM(model_dir, ContextualOptions(device="cpu", cache=False))
    with pytest.raises(WeatkitError, match="sentence 1 is empty"):
        lm.tokenize(["I am happy.", "  "])
    with pytest.raises(WeatkitError, match="not one string"):
        lm.tokenize("I am happy.")
    long = TokenizedSentence.from_ids([2] + [10] * 100 + [3])
    with pytest.raises(WeatkitError, match="sentence 0 is 102 tokens long"):
        lm.unmasked([long])
    sentence = lm.tokenize(["I am happy."])[0]
    with pytest.raises(WeatkitError, match="position 0 is not a token"):
        lm.masked_log_probs([sentence], [[0]])
    glm = make_gest_glm(tmp_path / "glm")
    with pytest.raises(WeatkitError, match="causal LM"):
        MaskedLM(str(glm))
