"""StereoSet causal-LM scores through the scoring layer (issue 25): every backend that offers
``causal`` (:func:`weatkit.scoring.get_scorer`) scores the intrasentence task.

The hf numbers are checked against a plain loop written here (transformers forward, float64
log-softmax, the formula of :mod:`weatkit.stereoset.scoring`) on tiny GPT-2, Llama and Qwen2
models (byte-level BPE; Qwen2 has no BOS and starts with its EOS); the openai numbers against
the llama.cpp server's own per-token log-probabilities, read with the OpenAI SDK directly.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from tests.test_scoring_vllm import stand_in_vllm  # noqa: F401  (a fixture)
from tests.test_stereoset_scoring import _dataset_json
from tests.tiny_models import make_causal_lm
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.scoring import TokenLogprobs, parse_model_spec
from weatkit.stereoset import load_stereoset, read_predictions
from weatkit.stereoset import scoring as stereoset_scoring
from weatkit.stereoset.scoring import IntrasentenceScorer, StereosetScoring

RTOL = 1e-5
#: batches of 4: the 15 sentences run in several padded batches
OPTIONS = ContextualOptions(cache=False, device="cpu", batch_size=4)
SERVED = "openai:http://127.0.0.1:9/v1#m"  # nothing listens: only for what fails before a request


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("stereoset-causal") / "tiny.json"
    path.write_text(json.dumps(_dataset_json()))
    return load_stereoset(path=path)


@pytest.fixture(scope="module")
def causal_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("stereoset-causal-models")
    return {arch: str(make_causal_lm(root / arch, arch)) for arch in ("gpt2", "llama", "qwen2")}


@functools.lru_cache(maxsize=4)
def _load(model_dir: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir), AutoModelForCausalLM.from_pretrained(
        model_dir
    ).eval()


def plain_glm(model_dir: str, sentence: str, *, separate: bool = False) -> float:
    """exp(mean_j log P(t_j | ...)) over the sentence's tokens t_1 … t_n (no special tokens),
    with s = BOS, else EOS: joint, log P(t_j | s, t_<j) from one pass over s t_1 … t_n;
    separate, log P(t_1 | s) from a pass over s alone and log P(t_j | t_<j) from one over
    t_1 … t_n."""
    tok, model = _load(model_dir)
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    ids = tok(sentence, add_special_tokens=False)["input_ids"]

    def log_softmax(inputs: list[int]) -> torch.Tensor:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([inputs])).logits[0]
        return torch.log_softmax(logits.double(), dim=-1)

    if separate:
        rest = log_softmax(ids)
        values = [log_softmax([start])[0, ids[0]].item()]
        values += [rest[j - 1, ids[j]].item() for j in range(1, len(ids))]
    else:
        table = log_softmax([start, *ids])
        values = [table[j, ids[j]].item() for j in range(len(ids))]
    return math.exp(sum(values) / len(values))


@pytest.mark.parametrize("bos_pass", ["joint", "separate"])
@pytest.mark.parametrize("arch", ["gpt2", "llama", "qwen2"])
def test_hf_glm_scores_equal_a_plain_loop(
    causal_models: dict[str, str], dataset, arch: str, bos_pass: str
) -> None:
    model = causal_models[arch]
    scorer = IntrasentenceScorer(
        model, options=OPTIONS, scoring=StereosetScoring(bos_pass=bos_pass)
    )
    assert scorer.kind == "glm"
    scores = scorer.score(dataset, show_progress=False)
    assert len(scores) == 15
    for _, sentence in dataset.sentences("intrasentence"):
        expected = plain_glm(model, sentence.sentence, separate=bos_pass == "separate")
        assert scores[sentence.id] == pytest.approx(expected, rel=RTOL), sentence.id
    # the Scorer's pass, and with separate one pass without the BOS per sentence
    assert scorer.stats.n_steps == 15 * (1 + (bos_pass == "separate"))
    assert scorer.stats.n_computed == 15 and scorer.stats.n_cached == 0


def test_separate_runs_on_the_scorer_alone(
    causal_models: dict[str, str],
    dataset,
    stand_in_vllm: dict,  # noqa: F811
) -> None:
    """``bos_pass="separate"`` needs no hf handle: on ``vllm:`` (the stand-in of
    tests/test_scoring_vllm.py, a transformers forward pass per token prompt) the scores equal
    the plain loop, from one pass with the start token and one without (token prompts of the
    sentence's tokens alone)."""
    model = causal_models["llama"]
    scorer = IntrasentenceScorer(
        f"vllm:{model}", options=ContextualOptions(cache=False),
        scoring=StereosetScoring(bos_pass="separate"),
    )  # fmt: skip
    assert scorer.handle is None
    scores = scorer.score(dataset, show_progress=False)
    for _, sentence in dataset.sentences("intrasentence"):
        expected = plain_glm(model, sentence.sentence, separate=True)
        assert scores[sentence.id] == pytest.approx(expected, rel=RTOL), sentence.id
    tok, _ = _load(model)
    bare = [ids for ids in stand_in_vllm["prompts"] if ids[0] != tok.bos_token_id]
    assert len(bare) == len(stand_in_vllm["prompts"]) // 2 == 15
    assert scorer.stats.n_steps == 30 and scorer.stats.n_batches == 0


# ------------------------------------------------------------- any backend: the Scorer protocol


class _Served:
    """A Scorer as an OpenAI-compatible server answers: NaN for each text's first token."""

    spec = parse_model_spec(SERVED)
    identity = SERVED
    capabilities = frozenset({"causal"})

    def causal_logprobs(
        self, texts: Sequence[str], *, show_progress: bool | None = None
    ) -> list[TokenLogprobs]:
        out = []
        for text in texts:
            words = text.split(" ")
            starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
            spans = tuple((int(a), int(a) + len(w)) for a, w in zip(starts, words, strict=True))
            values = [math.nan] + [-float(len(w)) for w in words[1:]]  # log P = −len(word)
            out.append(TokenLogprobs(text, tuple(words), spans, np.array(values)))
        return out


def test_a_backend_without_a_first_token_value_averages_the_others(
    monkeypatch: pytest.MonkeyPatch, dataset
) -> None:
    monkeypatch.setattr(stereoset_scoring, "get_scorer", lambda spec, options: _Served())
    scorer = IntrasentenceScorer(SERVED)
    assert scorer.kind == "glm" and scorer.handle is None
    scores = scorer.score(dataset)
    for _, sentence in dataset.sentences("intrasentence"):
        rest = sentence.sentence.split(" ")[1:]
        expected = math.exp(-sum(len(w) for w in rest) / len(rest))
        assert scores[sentence.id] == pytest.approx(expected, rel=1e-12), sentence.id


class _Resplit(_Served):
    """A Scorer whose pass without the start token splits each text into characters."""

    def causal_logprobs(
        self, texts: Sequence[str], *, show_progress: bool | None = None, start: str = "bos-or-eos"
    ) -> list[TokenLogprobs]:
        if start != "none":
            return super().causal_logprobs(texts, show_progress=show_progress)
        return [
            TokenLogprobs(text, tuple(text), tuple((i, i + 1) for i in range(len(text))),
                          np.full(len(text), -1.0))
            for text in texts
        ]  # fmt: skip


def test_separate_passes_that_split_a_sentence_differently_are_an_error(
    monkeypatch: pytest.MonkeyPatch, dataset
) -> None:
    monkeypatch.setattr(stereoset_scoring, "get_scorer", lambda spec, options: _Resplit())
    scorer = IntrasentenceScorer(SERVED, scoring=StereosetScoring(bos_pass="separate"))
    with pytest.raises(WeatkitError) as err:
        scorer.score(dataset)
    first = next(iter(dataset.sentences("intrasentence")))[1].id
    assert str(err.value) == (
        f"sentence {first}: {SERVED} splits it into other tokens without the start token"
    )


def test_a_sentence_without_any_token_value_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = _dataset_json()
    data["data"]["intrasentence"] = [
        {"id": "w1", "target": "word", "bias_type": "gender", "context": "BLANK",
         "sentences": [{"id": f"w1-{label}", "sentence": word, "gold_label": label}
                       for label, word in zip(("stereotype", "anti-stereotype", "unrelated"),
                                              ("Kind", "Rude", "Table"), strict=True)]}
    ]  # fmt: skip
    path = tmp_path / "one-word.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(stereoset_scoring, "get_scorer", lambda spec, options: _Served())
    with pytest.raises(WeatkitError) as err:
        IntrasentenceScorer(SERVED).score(load_stereoset(path=path))
    assert (
        str(err.value)
        == f"sentence w1-stereotype: {SERVED} gives none of its tokens a log-probability"
    )


def test_masked_lm_scoring_on_a_server_is_refused_before_any_request() -> None:
    with pytest.raises(WeatkitError) as err:
        IntrasentenceScorer(SERVED, kind="mlm")
    assert str(err.value) == (
        f"{SERVED}: the openai backend scores causal LMs (kind 'glm'), not kind 'mlm'"
    )


# ----------------------------------------------------------------- a real OpenAI-compatible server


def server_score(client, model: str, sentence: str) -> float:
    """exp(mean log-probability) of the prompt tokens the server gives one for (all but the
    first), from ``/v1/completions`` with the prompt echoed and one token generated."""
    answer = client.completions.create(
        model=model, prompt=sentence, echo=True, logprobs=1, max_tokens=1, temperature=0.0
    )
    logprobs = answer.choices[0].logprobs
    values = [
        value
        for offset, value in zip(logprobs.text_offset, logprobs.token_logprobs, strict=True)
        if offset < len(sentence) and value is not None  # the generated token starts at the end
    ]
    assert len(values) == len(logprobs.text_offset) - 2  # no value for the first token
    return math.exp(sum(values) / len(values))


def test_cli_with_an_openai_server_equals_its_own_logprobs(
    llama_server: str, dataset, tmp_path: Path
) -> None:
    openai = pytest.importorskip("openai")
    from tests.llama_server import ALIAS

    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_dataset_json()))
    out = tmp_path / "out"
    res = CliRunner().invoke(main, [
        "stereoset", "--model", f"openai:{llama_server}#{ALIAS}", "--dataset", str(path),
        "--no-progress", "--format", "csv", "--out", str(out),
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "15 intrasentence sentences (glm)" in res.stderr
    predictions = read_predictions(out / "predictions.json")["intrasentence"]
    client = openai.OpenAI(api_key="EMPTY", base_url=llama_server)
    for _, sentence in dataset.sentences("intrasentence"):
        expected = server_score(client, ALIAS, sentence.sentence)
        assert predictions[sentence.id] == pytest.approx(expected, rel=RTOL), sentence.id


def test_compat_stereoset_on_a_server_is_one_line(llama_server: str, tmp_path: Path) -> None:
    """The reference's pass without the start token cannot be asked of an OpenAI-compatible
    server: ``--compat stereoset`` stops with the scoring layer's one line, writes nothing."""
    from tests.llama_server import ALIAS

    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_dataset_json()))
    out = tmp_path / "out"
    spec = f"openai:{llama_server}#{ALIAS}"
    res = CliRunner().invoke(main, [
        "stereoset", "--model", spec, "--dataset", str(path), "--compat", "stereoset",
        "--no-progress", "--format", "csv", "--out", str(out),
    ])  # fmt: skip
    assert res.exit_code != 0
    errors = [line for line in res.stderr.splitlines() if line.startswith("weatkit: error: ")]
    assert errors == [
        f"weatkit: error: {spec}: an OpenAI-compatible server cannot score a text without its "
        "start token (start 'none': the completions API encodes a text prompt with the "
        "model's special tokens); use an hf: or vllm: model"
    ]
    assert not out.exists() or not any(out.iterdir())
