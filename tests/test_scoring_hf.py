"""The ``hf`` scoring backend on tiny random-weight GPT-2, Llama, Qwen2 and BERT models: per-token
causal log-probabilities and embeddings against plain per-text loops."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.tiny_models import CAUSAL_ARCHS, make_causal_lm, make_char_mlm
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import ModelError
from weatkit.scoring import Scorer, TokenLogprobs, get_scorer
from weatkit.scoring.tokens import start_token_id

TEXTS = [
    "The nurse said hello.",
    "He is a doctor",
    "She",
    "Women don't like it, said the man.",
    "sunflower tulips roses",
    "Ünïcödé bytes: ½ €",
    "a",
    "this is a tree and this is a sun",
]


@pytest.fixture(scope="module", params=CAUSAL_ARCHS)
def causal(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("causal") / request.param, request.param)


@pytest.fixture(scope="module")
def mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_char_mlm(tmp_path_factory.mktemp("mlm") / "bert")


def _plain(model_dir: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    return tok, model


def plain_logprobs(model_dir: Path, text: str) -> tuple[list[str], np.ndarray]:
    """One unbatched forward pass over ``[BOS or EOS] + tokens``, log_softmax, gather."""
    tok, model = _plain(model_dir)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    full = [start, *ids]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([full])).logits[0]
    logp = torch.log_softmax(logits.double(), dim=-1)
    values = [float(logp[j - 1, full[j]]) for j in range(1, len(full))]
    return tok.convert_ids_to_tokens(ids), np.array(values)


def test_texts_that_differ_in_their_last_token_share_one_row(causal: Path) -> None:
    """GEST's completed templates ("…, he" / "…, she") run as one row: the values equal the plain
    loop's, and the network sees one row per prefix (3 rows for 4 texts)."""
    texts = ['"I cook", he', '"I cook", she', '"I sing", he', "x"]
    scorer = get_scorer(f"hf:{causal}", ContextualOptions(device="cpu", cache=False))
    seen: list[int] = []
    base = scorer.handle.network("glm").base_model  # the head-only path runs the base network
    hook = base.register_forward_pre_hook(
        lambda _m, args, kwargs: seen.append(kwargs.get("input_ids", *args[:1]).shape[0]),
        with_kwargs=True,
    )
    try:
        got = scorer.causal_logprobs(texts, show_progress=False)
    finally:
        hook.remove()
    for text, result in zip(texts, got, strict=True):
        _, expected = plain_logprobs(causal, text)
        np.testing.assert_allclose(result.logprobs, expected, rtol=0, atol=1e-5)
    tok = scorer.handle.tokenizer
    ids = [tuple(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    prefixes = {i[:-1] for i in ids}
    assert len(prefixes) == 3 and max(seen) == 3  # one batch of 3 rows (+ the head check's 1)


def test_read_from_runs_the_head_where_read_only(causal: Path) -> None:
    """With ``read_from`` (GEST's word after its prefix) the tokens ending after a text's offset
    have the values of the whole call, those before are NaN, and the LM head runs once per
    token read: the shared last position of '…, he' / '…, she', the tokens of a word of
    several."""
    texts = ['"I cook", he', '"I cook", she', '"I sing", sunflower', "a tree here"]
    offsets = [9, 9, 9, 6]
    scorer = get_scorer(f"hf:{causal}", ContextualOptions(device="cpu", cache=False))
    whole = scorer.causal_logprobs(texts, show_progress=False)
    seen: list[int] = []  # positions the head runs at (after the split's first check above)
    hook = scorer.handle.network("glm").get_output_embeddings().register_forward_pre_hook(
        lambda _m, args: seen.append(args[0].shape[0])
    )
    try:
        got = scorer.causal_logprobs(texts, show_progress=False, read_from=offsets)
    finally:
        hook.remove()
    n_read = 0
    for full, part, offset in zip(whole, got, offsets, strict=True):
        read = np.array([end > offset for _, end in full.offsets])
        assert (part.tokens, part.offsets) == (full.tokens, full.offsets)
        np.testing.assert_allclose(part.logprobs[read], full.logprobs[read], rtol=0, atol=1e-6)
        assert np.isnan(part.logprobs[~read]).all() and read.any() and not read.all()
        n_read += int(read.sum())
    assert len(whole[2].logprobs) - np.isnan(got[2].logprobs).sum() > 1  # ' sunflower': several
    assert sum(seen) == n_read


def test_the_start_token_is_the_one_the_tokenizer_puts_in_front(tmp_path: Path) -> None:
    """XGLM's tokenizer starts a text with ``</s>`` (its BOS ``<s>`` is never seen in front of
    a document): ``bos-or-eos`` starts with ``</s>`` too, and the values equal a plain loop over
    ``</s> w_1 … w_n``."""
    model = make_causal_lm(tmp_path / "xglm", "xglm")
    tok, net = _plain(model)
    eos = tok.convert_tokens_to_ids("</s>")
    assert tok.bos_token_id != eos and start_token_id(tok) == eos
    scorer = get_scorer(f"hf:{model}", ContextualOptions(device="cpu", cache=False))
    (result,) = scorer.causal_logprobs(["she is here"], show_progress=False)
    ids = tok("she is here", add_special_tokens=False)["input_ids"]
    full = [eos, *ids]
    with torch.no_grad():
        logp = torch.log_softmax(net(input_ids=torch.tensor([full])).logits[0].double(), -1)
    expected = [float(logp[j - 1, full[j]]) for j in range(1, len(full))]
    np.testing.assert_allclose(result.logprobs, expected, rtol=0, atol=1e-5)


def plain_embedding(model_dir: Path, text: str) -> np.ndarray:
    tok, model = _plain(model_dir)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    with torch.no_grad():
        out = model(input_ids=torch.tensor([[start, *ids]]), output_hidden_states=True)
    return out.hidden_states[-1][0, 1:].mean(0).numpy()


def test_causal_logprobs_equal_a_plain_loop(causal: Path) -> None:
    scorer = get_scorer(f"hf:{causal}", ContextualOptions(batch_size=3, device="cpu"))
    assert isinstance(scorer, Scorer)
    assert scorer.capabilities == frozenset({"causal", "embed"})
    got = scorer.causal_logprobs(TEXTS, show_progress=False)
    assert [g.text for g in got] == TEXTS
    for text, result in zip(TEXTS, got, strict=True):
        tokens, expected = plain_logprobs(causal, text)
        assert isinstance(result, TokenLogprobs) and result.logprobs.dtype == np.float64
        assert list(result.tokens) == tokens
        np.testing.assert_allclose(result.logprobs, expected, rtol=0, atol=1e-5)
        assert result.total() == pytest.approx(expected.sum(), abs=1e-5)
        assert not np.isnan(result.logprobs).any()  # the start token conditions the first one
        # spans are the tokens' characters: in order, covering the text (consecutive for ASCII;
        # the byte tokens of one non-ASCII character share its span)
        spans = result.offsets
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in itertools.pairwise(spans))
        if text.isascii():
            assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert np.std([g.total() for g in got]) > 1.0  # random weights still tell texts apart


def test_batching_does_not_change_the_values(causal: Path) -> None:
    # the cache off: the second scorer would read the first one's values back
    one = get_scorer(f"hf:{causal}", ContextualOptions(batch_size=1, device="cpu", cache=False))
    seven = get_scorer(f"hf:{causal}", ContextualOptions(batch_size=7, device="cpu", cache=False))
    texts = TEXTS * 2  # 16 texts of mixed lengths: padded batches of 7, 7, 2
    for a, b in zip(one.causal_logprobs(texts), seven.causal_logprobs(texts), strict=True):
        assert a.tokens == b.tokens and a.offsets == b.offsets
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-5)
    e1, e7 = one.embed(texts), seven.embed(texts)
    np.testing.assert_allclose(e1, e7, rtol=0, atol=1e-5)


def test_an_automatic_batch_size(causal: Path) -> None:
    auto = get_scorer(str(causal), ContextualOptions(batch_size="auto", device="cpu", cache=False))
    one = get_scorer(str(causal), ContextualOptions(batch_size=1, device="cpu", cache=False))
    for a, b in zip(auto.causal_logprobs(TEXTS), one.causal_logprobs(TEXTS), strict=True):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-5)


def test_embeddings_equal_a_plain_loop(causal: Path) -> None:
    scorer = get_scorer(str(causal), ContextualOptions(batch_size=4, device="cpu"))
    got = scorer.embed(TEXTS[:4])
    assert got.dtype == np.float32 and got.shape == (4, 24)
    for text, row in zip(TEXTS[:4], got, strict=True):
        np.testing.assert_allclose(row, plain_embedding(causal, text), rtol=0, atol=1e-5)


def test_masked_lm_embeds_and_refuses_causal_scores(mlm: Path) -> None:
    from transformers import AutoModel, AutoTokenizer

    scorer = get_scorer(f"hf:{mlm}", ContextualOptions(batch_size=2, device="cpu"))
    assert scorer.capabilities == frozenset({"embed"})
    texts = ["The nurse said hello.", "tall she"]
    got = scorer.embed(texts)
    tok = AutoTokenizer.from_pretrained(mlm)
    model = AutoModel.from_pretrained(mlm).eval()
    for text, row in zip(texts, got, strict=True):
        ids = tok(text)["input_ids"]
        with torch.no_grad():
            hidden = model(input_ids=torch.tensor([ids]), output_hidden_states=True)
        expected = hidden.hidden_states[-1][0, 1:-1].mean(0).numpy()  # [CLS], [SEP] left out
        np.testing.assert_allclose(row, expected, rtol=0, atol=1e-5)
    with pytest.raises(ModelError, match=r"is a masked LM: it gives no causal"):
        scorer.causal_logprobs(texts)


def test_without_a_start_token_the_first_token_is_nan(tmp_path: Path) -> None:
    model = make_causal_lm(tmp_path / "gpt2", "gpt2")
    scorer = get_scorer(str(model), ContextualOptions(device="cpu"))
    scorer.handle.tokenizer.bos_token = None
    scorer.handle.tokenizer.eos_token = None
    assert start_token_id(scorer.handle.tokenizer) is None
    (result,) = scorer.causal_logprobs(["He is a doctor"])
    assert np.isnan(result.logprobs[0]) and not np.isnan(result.logprobs[1:]).any()
    tok, net = _plain(model)
    ids = tok("He is a doctor", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(net(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    expected = [float(logp[j - 1, ids[j]]) for j in range(1, len(ids))]
    np.testing.assert_allclose(result.logprobs[1:], expected, rtol=0, atol=1e-5)
    assert result.total() == pytest.approx(sum(expected), abs=1e-5)


def test_bad_texts_are_one_line_errors(causal: Path) -> None:
    scorer = get_scorer(str(causal), ContextualOptions(device="cpu"))
    with pytest.raises(ModelError, match=r"^text 1 is empty or not text: ' '$"):
        scorer.causal_logprobs(["ok", " "])
    with pytest.raises(ModelError, match="a list of texts, not one string"):
        scorer.causal_logprobs("ok")
    with pytest.raises(ModelError, match=r"^text 0 is \d+ tokens long; .* takes 256"):
        scorer.causal_logprobs(["tree " * 300])
    assert scorer.causal_logprobs([]) == []


def test_the_tokenizer_start_equals_a_plain_loop(causal: Path) -> None:
    """``start="tokenizer"``: the text as ``tok(text)`` encodes it, Llama's ``<s>`` in front,
    nothing for GPT-2 and Qwen2, whose first token then has no value."""
    scorer = get_scorer(str(causal), ContextualOptions(batch_size=3, device="cpu", cache=False))
    got = scorer.causal_logprobs(TEXTS, start="tokenizer")
    tok, model = _plain(causal)
    for text, result in zip(TEXTS, got, strict=True):
        ids = tok(text)["input_ids"]
        lead = int(ids[0] == tok.bos_token_id and causal.name == "llama")
        assert lead == (causal.name == "llama")
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
        values = [np.nan] + [float(logp[j - 1, ids[j]]) for j in range(1, len(ids))]
        assert list(result.tokens) == tok.convert_ids_to_tokens(ids[lead:])
        np.testing.assert_allclose(result.logprobs, values[lead:], rtol=0, atol=1e-5)
        assert np.isnan(result.logprobs[0]) == (not lead)
    with pytest.raises(
        ModelError, match=r"^unknown start 'bos': choose bos-or-eos, tokenizer, none$"
    ):
        scorer.causal_logprobs(TEXTS, start="bos")


def test_no_start_equals_a_plain_loop(causal: Path) -> None:
    """``start="none"``: the text's tokens with nothing in front (StereoSet's reference pass
    without the BOS): token j ≥ 2 from ``log_softmax(model(ids))[j − 1]``, the first NaN (a
    one-token text: only NaN); the tokens and spans are the ``bos-or-eos`` start's."""
    scorer = get_scorer(str(causal), ContextualOptions(batch_size=3, device="cpu", cache=False))
    got = scorer.causal_logprobs(TEXTS, start="none")
    started = scorer.causal_logprobs(TEXTS)
    tok, model = _plain(causal)
    for text, result, other in zip(TEXTS, got, started, strict=True):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
        values = [np.nan] + [float(logp[j - 1, ids[j]]) for j in range(1, len(ids))]
        assert list(result.tokens) == tok.convert_ids_to_tokens(ids)
        assert (result.tokens, result.offsets) == (other.tokens, other.offsets)
        np.testing.assert_allclose(result.logprobs, values, rtol=0, atol=1e-5)
    assert np.isnan(got[TEXTS.index("a")].logprobs).all()


def test_every_text_too_long_is_named(causal: Path) -> None:
    from weatkit.errors import TextTooLongError

    scorer = get_scorer(str(causal), ContextualOptions(device="cpu", cache=False))
    long = ["tree " * 300, "sun " * 300]
    with pytest.raises(TextTooLongError) as err:
        scorer.causal_logprobs(["ok", long[0], "x", long[1]])
    assert err.value.texts == tuple(long) and err.value.limit == 256
    assert str(err.value).startswith("text 1 is ") and str(err.value).endswith("(and 1 more)")
