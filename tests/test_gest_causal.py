"""GEST and EuroGEST of causal LMs through the Scorer (issue 25): tiny GPT-2 and Llama models
with byte-level BPE (template words of several tokens) against plain transformers loops, and
``weatkit gest --model openai:…`` on llama.cpp's server against the same model run in process
through llama.cpp's Python binding."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from tests.tiny_models import make_causal_lm
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import ModelError
from weatkit.gest import scoring
from weatkit.gest.eurogest_scoring import score_items
from weatkit.gest.scoring import GLM_TEMPLATES, GestScorer, GestTemplate, fill, score_samples
from weatkit.scoring import hf as hf_backend

SENTENCES = ["I am happy.", "I lift heavy weights every day!", "Ünïcödé ½, I cried."]
NO_CACHE = ContextualOptions(cache=False, device="cpu", batch_size=4)
#: EuroGEST-like items: strings that differ in the middle, at the end, or in length.
ITEMS = pd.DataFrame({
    "stereotype": [1, 2, 3],
    "masculine": ["Lui ha detto: sono stanco.", "Er ist müde", "He said so"],
    "feminine": ["Lei ha detto: sono stanca.", "Sie ist müde", "She said so, too"],
})  # fmt: skip


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def causal(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("causal") / request.param, request.param)


@functools.lru_cache(maxsize=4)
def _load(model_dir: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    return AutoTokenizer.from_pretrained(model_dir), model


def _log_softmax(model_dir: Path, ids: list[int]) -> torch.Tensor:
    _, model = _load(model_dir)
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)


def plain_word(model_dir: Path, prefix: str, word: str) -> tuple[float, int]:
    """``Σ log P(t_j | t_<j)`` over the tokens ``tok(prefix + " " + word)`` has after those of
    ``tok(prefix)`` (the tokenizer's own special tokens), and how many there are."""
    tok, _ = _load(model_dir)
    head = tok(prefix)["input_ids"]
    full = tok(f"{prefix} {word}")["input_ids"]
    assert full[: len(head)] == head
    logp = _log_softmax(model_dir, full)
    return sum(float(logp[j - 1, full[j]]) for j in range(len(head), len(full))), len(full) - len(
        head
    )


def test_glm_gest_equals_a_plain_loop(causal: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a third template whose words are several tokens (Ġsun flow er, …) in these vocabularies
    templates = (*GLM_TEMPLATES, GestTemplate('"{s}", the', "sunflower", "tulips"))
    monkeypatch.setitem(scoring.TEMPLATES, "glm", templates)
    df = score_samples(str(causal), SENTENCES, log_base="e", options=NO_CACHE)
    assert (df["skipped"] == "").all() and len(df) == 3 * len(SENTENCES)
    lengths = set()
    for row in df.itertuples():
        t = templates[row.template]
        prefix = fill(t.text, "", SENTENCES[row.sample_id])[0]
        (m, n_m), (f, n_f) = plain_word(causal, prefix, t.masculine), plain_word(
            causal, prefix, t.feminine
        )
        lengths |= {n_m, n_f}
        assert row.score == pytest.approx(m - f, rel=1e-5, abs=1e-5)
    assert max(lengths) > 1  # all the tokens of a word count


def test_glm_gest_runs_the_lm_head_at_the_words_only(causal: Path) -> None:
    """The LM head runs once per token of the two words (``read_from``), never over the
    sentence: the cost of a template is one forward pass of its prefix."""
    scorer = GestScorer(str(causal), options=NO_CACHE)
    first = scorer.score_samples(SENTENCES, templates=[0])  # the head split's check runs here
    seen: list[int] = []
    head = scorer.handle.network("glm").get_output_embeddings()
    hook = head.register_forward_pre_hook(lambda _m, args: seen.append(args[0].shape[0]))
    try:
        again = scorer.score_samples(SENTENCES, templates=[0])
    finally:
        hook.remove()
    pd.testing.assert_frame_equal(again, first)
    t = GLM_TEMPLATES[0]
    words = sum(plain_word(causal, fill(t.text, "", s)[0], w)[1] for s in SENTENCES
                for w in (t.masculine, t.feminine))  # fmt: skip
    assert sum(seen) == words


def _plain_r(model_dir: Path, m: str, f: str, code: str) -> float:
    """EuroGEST's r by a plain loop over ``tok(text)`` (the tokenizer's special tokens)."""
    tok, _ = _load(model_dir)
    scores = []
    for text, other in ((m, f), (f, m)):
        ids, other_ids = tok(text)["input_ids"], tok(other)["input_ids"]
        start = 1
        if code == "2026-04":
            diff = [j for j, (a, b) in enumerate(zip(ids, other_ids, strict=False)) if a != b]
            start = max(diff[0] if diff else min(len(ids), len(other_ids)) - 1, 1)
        logp = _log_softmax(model_dir, ids)
        terms = [float(logp[j - 1, ids[j]]) for j in range(start, len(ids))]
        scores.append(sum(terms) / len(terms) if code == "2026-04" else sum(terms) - math.log(
            len(ids)))  # fmt: skip
    return 1.0 / (1.0 + math.exp(scores[1] - scores[0]))


@pytest.mark.parametrize("code", ["2025-12", "2026-04"])
def test_glm_eurogest_equals_a_plain_loop(causal: Path, code: str) -> None:
    scored = score_items(str(causal), ITEMS, code=code, options=NO_CACHE)
    assert (scored["skipped"] == "").all()
    direct = [_plain_r(causal, m, f, code) for m, f in zip(ITEMS.masculine, ITEMS.feminine,
                                                            strict=True)]  # fmt: skip
    np.testing.assert_allclose(scored["r"], direct, rtol=0, atol=1e-6)
    assert np.ptp(direct) > 1e-3


def test_cached_gest_and_eurogest_run_no_model(
    causal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = ContextualOptions(device="cpu", batch_size=4)
    gest = score_samples(str(causal), SENTENCES, options=options)
    euro = score_items(str(causal), ITEMS, options=options)

    def no_forward(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model ran")

    monkeypatch.setattr(hf_backend, "_causal_batch", no_forward)
    scorer = GestScorer(str(causal), options=ContextualOptions(device="cpu", batch_size=1))
    pd.testing.assert_frame_equal(scorer.score_samples(SENTENCES), gest)
    distinct_texts = 2 * 2 * len(SENTENCES)  # two templates, two words
    assert (scorer.stats.n_cached, scorer.stats.n_computed) == (distinct_texts, 0)
    pd.testing.assert_frame_equal(score_items(str(causal), ITEMS, options=options), euro)


def test_too_long_texts_and_kinds(causal: Path) -> None:
    long = "tree " * 300
    df = score_samples(str(causal), [long, "I am sad."], templates=[0], options=NO_CACHE)
    assert df["skipped"].tolist() == ["longer than the model's 256 tokens", ""]
    items = pd.DataFrame({"stereotype": [1, 1], "masculine": [long + "he", "he said"],
                          "feminine": [long + "she", "she said"]})  # fmt: skip
    scored = score_items(str(causal), items, options=NO_CACHE)
    assert scored["skipped"].tolist() == ["longer than the model's 256 tokens", ""]
    with pytest.raises(ModelError, match=r"^unknown model kind 'x': choose mlm or glm$"):
        score_samples(str(causal), ["I am sad."], kind="x", options=NO_CACHE)
    with pytest.raises(ModelError, match=r"^openai:http://127.0.0.1:9/v1#m: masked-LM \(mlm\) "):
        score_samples("openai:http://127.0.0.1:9/v1#m", ["I am sad."], kind="mlm")


# ------------------------------------------------------------- an OpenAI-compatible server


@pytest.fixture(scope="module")
def llama_logprobs():
    """``ids -> log P(ids_j | ids_<j)`` for j ≥ 1 from SmolLM2 run in process through llama.cpp's
    Python binding (the model the server serves, with its BOS), and its tokenizer."""
    pytest.importorskip("llama_cpp", reason="the llama extra is not installed")
    from tests.llama_server import in_process

    llm = in_process(logits_all=True)

    def tokenize(text: str) -> list[int]:
        return llm.tokenize(text.encode(), add_bos=True, special=True)

    def logprobs(ids: list[int]) -> list[float]:
        llm.reset()
        llm.eval(ids)
        z = np.asarray(llm.scores[: len(ids)], dtype=np.float64)
        top = z.max(axis=1, keepdims=True)
        table = z - top - np.log(np.exp(z - top).sum(axis=1, keepdims=True))
        return [float(table[j - 1, ids[j]]) for j in range(1, len(ids))]

    yield tokenize, logprobs
    llm.close()


def test_cli_gest_and_eurogest_through_an_openai_server(
    llama_server: str,
    llama_logprobs,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Template 1 on a 16-sample GEST sample through the CLI (one request per text, 32:
    llama-cpp-python sorts the vocabulary for every prompt token, about a second a request),
    six of its scores and EuroGEST on two items through the API against the same model run in
    process."""
    pytest.importorskip("openai", reason="the openai backend needs the openai extra")
    from tests.llama_server import ALIAS
    from weatkit.scoring.openai import OpenAIScorer

    tokenize, logprobs = llama_logprobs
    spec = f"openai:{llama_server}#{ALIAS}"
    args = ["gest", "--model", spec, "--templates", "1", "--limit", "16", "--seed", "2",
            "--bootstrap", "0", "--no-progress"]  # fmt: skip
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "gest")])
    assert res.exit_code == 0, res.output
    scores = pd.read_csv(tmp_path / "gest" / "scores.csv", keep_default_na=False)
    assert set(scores["template"]) == {1} and len(scores) == 16
    t = GLM_TEMPLATES[1]
    for row in scores.head(6).itertuples():  # log P(word | prefix): the tokens after the prefix
        prefix = fill(t.text, "", row.sentence)[0]
        head = tokenize(prefix)
        words = []
        for word in (t.masculine, t.feminine):
            full = tokenize(f"{prefix} {word}")
            assert full[: len(head)] == head
            words.append(sum(logprobs(full)[len(head) - 1 :]))
        assert row.score == pytest.approx((words[0] - words[1]) / math.log(10), abs=1e-4)

    # EuroGEST's code 2025-12: the server gives no value for the first token after the BOS, so
    # the string's terms are those of ids_2 … and n counts the string's own tokens
    scored = score_items(spec, ITEMS.head(2))
    for row in scored.itertuples():
        s = []
        for text in (row.masculine, row.feminine):
            ids = tokenize(text)
            s.append(sum(logprobs(ids)[1:]) - math.log(len(ids) - 1))
        assert row.r == pytest.approx(1 / (1 + math.exp(s[1] - s[0])), abs=1e-4)

    # again: every token log-probability from the cache, no request
    def no_request(*args: object, **kwargs: object) -> None:
        raise AssertionError("a request was sent")

    monkeypatch.setattr(OpenAIScorer, "_causal_chunk", no_request)
    res = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "again")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "again" / "scores.csv").read_bytes() == (
        tmp_path / "gest" / "scores.csv"
    ).read_bytes()
    pd.testing.assert_frame_equal(score_items(spec, ITEMS.head(2)), scored)
