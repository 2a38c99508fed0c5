"""The openai backend against a real server (issue 25 §6): llama.cpp's OpenAI-compatible server
started on 127.0.0.1 with the real SmolLM2-135M GGUF. Per-token log-probabilities and embeddings
through HTTP equal the same model run in process through llama.cpp's Python binding, with the
log-softmax of its logits and the mean of its token vectors computed here."""

from __future__ import annotations

import logging
from itertools import pairwise

import numpy as np
import pytest

pytest.importorskip("openai", reason="the openai backend needs the openai extra")

from tests.llama_server import ALIAS, in_process, serve, server, smollm2_gguf
from weatkit.errors import ModelError
from weatkit.models.cache import counting
from weatkit.scoring import Scorer, get_scorer
from weatkit.scoring.openai import OpenAIOptions

#: Plain words, leading spaces and digits, accents (multi-byte characters), one token.
TEXTS = ["The nurse was tired.", "  Two spaces, 1984.", "Él habló con la médica.", "x"]


@pytest.fixture(scope="module")
def llama_cpp():
    return pytest.importorskip("llama_cpp", reason="the llama extra is not installed")


@pytest.fixture(scope="module")
def scorer(llama_server: str) -> Scorer:
    return get_scorer(f"openai:{llama_server}#{ALIAS}", OpenAIOptions(concurrency=2))


@pytest.fixture(scope="module")
def scored(scorer: Scorer) -> list:
    return scorer.causal_logprobs(TEXTS)


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """``z_j − log Σ_k exp z_k`` row by row, in float64."""
    z = logits.astype(np.float64)
    top = z.max(axis=1, keepdims=True)
    return z - top - np.log(np.exp(z - top).sum(axis=1, keepdims=True))


@pytest.fixture(scope="module")
def plain_causal(llama_cpp):
    """``text -> log P(w_i | w_<i)`` per token from the in-process model's logits, BOS left
    out, NaN for the first token (the OpenAI API gives none for it)."""
    llm = in_process(logits_all=True)
    bos = llm.token_bos() if llm._model.add_bos_token() else None

    def score(text: str) -> np.ndarray:
        ids = llm.tokenize(text.encode(), add_bos=bos is not None, special=True)
        llm.reset()
        llm.eval(ids)
        table = _log_softmax(np.asarray(llm.scores[: len(ids)]))
        values = [np.nan] + [table[i - 1, ids[i]] for i in range(1, len(ids))]
        keep = [i for i in range(len(ids)) if ids[i] != bos]
        expected = np.array([values[i] for i in keep])
        expected[0] = np.nan
        return expected

    yield score
    llm.close()


def test_causal_logprobs_equal_the_in_process_logits(scored: list, plain_causal) -> None:
    assert [s.text for s in scored] == TEXTS
    for item in scored:
        expected = plain_causal(item.text)
        assert len(item.tokens) == len(expected)
        np.testing.assert_allclose(item.logprobs, expected, rtol=0, atol=1e-4, equal_nan=True)
        assert item.logprobs.dtype == np.float64
        # the spans tile the text: each starts where the one before ends
        assert item.offsets[-1][1] == len(item.text)
        assert all(a[1] == b[0] for a, b in pairwise(item.offsets))
        assert "".join(item.text[s:e] for s, e in item.offsets) == item.text
        assert item.total() == pytest.approx(np.nansum(expected), abs=1e-3)


def test_causal_logprobs_keep_the_input_order_under_concurrency(
    llama_server: str, scored: list
) -> None:
    four = get_scorer(f"openai:{llama_server}#{ALIAS}", OpenAIOptions(concurrency=4))
    empty, *rest = four.causal_logprobs(["", *TEXTS[::-1]])
    assert (empty.text, empty.tokens, empty.offsets, empty.logprobs.shape) == ("", (), (), (0,))
    for a, b in zip(rest, scored[::-1], strict=True):
        assert a.text == b.text and a.tokens == b.tokens and a.offsets == b.offsets
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5, equal_nan=True)


def test_embeddings_equal_the_mean_of_the_in_process_token_vectors(
    scorer: Scorer, llama_cpp
) -> None:
    got = scorer.embed(TEXTS)
    assert got.dtype == np.float32 and got.shape[0] == len(TEXTS)
    per_token = in_process(embedding=True, pooling_type=0)  # LLAMA_POOLING_TYPE_NONE: per token
    try:
        expected = np.array([np.mean(per_token.embed(text), axis=0) for text in TEXTS])
    finally:
        per_token.close()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    # another order of the texts in a request gives each text its own vector back. Not to the
    # last bit: llama.cpp's server embeds a request's texts in one forward pass, and a native
    # build's kernels depend on a row's place in the batch (up to 8e-3 absolute measured on
    # vectors of norm ~30; 1e-6 on a GGML_NATIVE=OFF build)
    unit = got / np.linalg.norm(got, axis=1, keepdims=True)
    again = scorer.embed(TEXTS[::-1])[::-1]
    cosines = (again / np.linalg.norm(again, axis=1, keepdims=True)) @ unit.T
    assert cosines.argmax(axis=1).tolist() == list(range(len(TEXTS)))
    assert np.diag(cosines).min() > 1 - 1e-4


def test_identity_names_server_and_model(llama_server: str, scorer: Scorer) -> None:
    assert scorer.identity == f"openai:{llama_server}#{ALIAS}"
    assert scorer.capabilities == frozenset({"causal", "embed"})
    assert repr(scorer) == f"OpenAIScorer('openai:{llama_server}#{ALIAS}')"


def test_the_api_key_is_in_no_identity_repr_or_log(
    llama_server: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-weatkit-test-4f1d9c"
    monkeypatch.setenv("WEATKIT_OPENAI_API_KEY", key)
    with caplog.at_level(logging.DEBUG):
        keyed = get_scorer(f"openai:{llama_server}#{ALIAS}", OpenAIOptions())
        keyed.causal_logprobs(TEXTS[:2])
        keyed.embed(TEXTS[:2])
    assert caplog.records  # the SDK and its HTTP client logged the requests
    for text in (keyed.identity, repr(keyed), str(keyed.spec), caplog.text):
        assert key not in text
    from weatkit.data import cache_root  # nor in the cache of the causal scores

    written = [path.read_bytes() for path in cache_root().rglob("*") if path.is_file()]
    assert any(path.suffix == ".safetensors" for path in cache_root().rglob("*"))
    assert all(key.encode() not in data for data in written)


def test_a_model_the_server_does_not_serve(llama_server: str) -> None:
    with pytest.raises(ModelError) as err:
        get_scorer(f"openai:{llama_server}#gpt-5", OpenAIOptions(max_retries=0))
    assert str(err.value) == (
        f"openai:{llama_server}#gpt-5: the server does not serve model 'gpt-5' "
        f"(it serves: {ALIAS})"
    )


def test_a_wrong_base_url_is_a_404(llama_server: str) -> None:
    url = llama_server.removesuffix("/v1") + "/v2"
    with pytest.raises(ModelError) as err:
        get_scorer(f"openai:{url}#{ALIAS}").causal_logprobs(["a"])
    assert str(err.value).startswith(f"openai:{url}#{ALIAS}: not found on the server (404): ")
    assert str(err.value).endswith("; check the base URL (…/v1) and the model name")


def test_a_server_without_prompt_logprobs_says_so(llama_server: str, llama_cpp) -> None:
    with serve(smollm2_gguf(), logits_all=False) as url:
        scorer = get_scorer(f"openai:{url}#{ALIAS}", OpenAIOptions(max_retries=0))
        with pytest.raises(ModelError) as err:
            scorer.causal_logprobs(["The nurse said."])
        assert scorer.embed(["nurse"]).shape[0] == 1  # embeddings still work
    assert str(err.value) == (
        f"openai:{url}#{ALIAS}: the server gives no prompt log-probabilities "
        "(/v1/completions with echo and logprobs), which causal scores need; start it with "
        "them (llama.cpp: --logits_all True) or use another server (server error (500) after "
        "0 retries: logprobs is not supported for models created with logits_all=False)"
    )


#: 12 distinct short sentences (a request takes about 0.3 s on a busy 2-core machine).
SENTENCES = [
    f"The {who} {did} today."
    for who in ("nurse", "doctor", "teacher", "pilot")
    for did in ("slept", "worked", "cried")
]


@pytest.mark.slow
def test_a_server_killed_mid_run_keeps_what_it_answered(llama_cpp) -> None:
    """Issue 36 §3: the server is killed (SIGKILL) once half of the texts are answered; the
    run fails in one line, and a rerun on a new server sends only the texts that were not
    answered, with the numbers of an uninterrupted run."""
    gguf = smollm2_gguf()
    options = OpenAIOptions(concurrency=1, max_retries=0)
    answered: list[int] = []
    with server(gguf) as first:
        spec = f"openai:{first.url}#{ALIAS}"

        def kill_at_half(indices: list[int], scored: list) -> None:
            answered.extend(indices)
            if len(answered) >= len(SENTENCES) // 2 and first.process.poll() is None:
                first.kill()

        with pytest.raises(ModelError) as err:
            get_scorer(spec, options).causal_logprobs(SENTENCES, on_scored=kill_at_half)
    assert str(err.value).startswith(f"{spec}: ") and "\n" not in str(err.value)
    assert len(SENTENCES) // 2 <= len(answered) < len(SENTENCES)
    with server(gguf, port=first.port) as second:  # the same URL: the same cache key
        scorer = get_scorer(spec, options)
        scorer.scorer.probe()  # its completions (once per scorer) are not the texts'
        probed = second.requests()
        with counting() as count:
            resumed = scorer.causal_logprobs(SENTENCES)
        assert second.requests() - probed == len(SENTENCES) - len(answered)
        assert (count.cached, count.computed) == (len(answered), len(SENTENCES) - len(answered))
        whole = scorer.scorer.causal_logprobs(SENTENCES)  # the backend: uncached, in one go
        assert second.requests() - probed == 2 * len(SENTENCES) - len(answered)
    for a, b in zip(resumed, whole, strict=True):
        assert (a.text, a.tokens, a.offsets) == (b.text, b.tokens, b.offsets)
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-4, equal_nan=True)
