"""``--compat`` presets of the sentence measures (issue 18.3) against the reference tools'
conventions, reproduced here with plain loops over the tiny models' logits.

* StereoSet (moinnadeem/StereoSet ``eval_discriminative_models.py``, ``dataloader.py``,
  ``eval_generative_models.py``): every BLANK replaced by ``decode(t_<i) + [MASK]`` and the
  first mask read; GPT-2's first token from a pass over ``<|endoftext|>`` alone, the rest from
  the sentence without it, ``2 ** mean(log2 p)``.
* MBE (kanekomasahiro/bias_eval_in_multiple_mlm ``eval.py``): ``calculate_aul`` per sentence and
  the weights ``F·Mᵀ / (‖F‖_F ‖M‖_F)`` of its ``cos_sim`` of two matrices.
* GEST (kinit-sk/gest ``masked_models/utils.py``): ``mean log10 P`` at the masked positions
  where the two sentences' tokens differ, masculine minus feminine.

Tolerances: both sides run the same float32 forward pass; weatkit reads float32
``log_softmax`` (exponentiated or summed in float64), the loops here float32 ``softmax``
probabilities and take logs in float64, so values agree to a few float32 ulps of the
log-probabilities (relative 1e-5 is ~100 ulps); MBE's reference sums float32 weights, weatkit
float64 (1e-4 absolute on a 0–100 score).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from tests.test_stereoset_scoring import _dataset_json
from tests.tiny_models import _byte_level_bpe, make_stereoset_glm, make_stereoset_mlm
from weatkit.cli.gest import gest_command
from weatkit.cli.mbe import mbe_command
from weatkit.cli.stereoset import stereoset_command
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import ConfigError, WeatkitError
from weatkit.mbe import run_mbe
from weatkit.mbe.run import MbeSentence
from weatkit.measures.compat import SENTENCE_PRESETS, apply_preset, preset_line, preset_summary
from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence
from weatkit.stereoset import load_stereoset
from weatkit.stereoset.scoring import StereosetScoring, score_intrasentence

RTOL = 1e-5
NO_CACHE = ContextualOptions(cache=False, device="cpu")
REFERENCE = StereosetScoring(**SENTENCE_PRESETS["stereoset"]["stereoset"])


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("compat-models")
    return {
        "mlm": str(make_stereoset_mlm(root / "mlm", split_words=True)),
        "glm": str(make_stereoset_glm(root / "glm")),
        "bpe": str(_make_roberta(root / "bpe")),
    }


def _make_roberta(path: Path) -> Path:
    """A 2-layer RoBERTa MLM (hidden 24) with the tiny byte-level BPE of ``tiny_models``
    (``Ġdoctor`` and ``doctor`` are different tokens)."""
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab, merges = _byte_level_bpe(["<s>", "<pad>", "</s>", "<unk>"], ["<mask>"])
    tok = RobertaTokenizerFast(vocab=vocab, merges=merges)
    tok.model_max_length = 60
    torch.manual_seed(5)
    config = RobertaConfig(
        vocab_size=len(vocab), hidden_size=24, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=48, max_position_embeddings=64, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, type_vocab_size=1,
    )  # fmt: skip
    RobertaForMaskedLM(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("compat-data") / "tiny.json"
    path.write_text(json.dumps(_dataset_json()))
    return load_stereoset(path=path)


@functools.lru_cache(maxsize=4)
def _load(model_dir: str, causal: bool):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    return AutoTokenizer.from_pretrained(model_dir), auto.from_pretrained(model_dir).eval()


def reference_mlm(model_dir: str, context: str, word: str, *, space: bool = False) -> float:
    """StereoSet's masked-LM score at batch size 1: every BLANK → ``decode(t_<i) + mask``, the
    probability of ``t_i`` at the first mask, the mean over i. ``space``: the word tokenised as
    ``" " + word`` with the decoded prefix's leading space dropped (the bias-bench fix)."""
    tok, model = _load(model_dir, causal=False)
    pieces = tok.encode((" " if space else "") + word, add_special_tokens=False)
    probabilities = []
    for i, token in enumerate(pieces):
        prefix = tok.decode(pieces[:i]).lstrip(" ") if i else ""
        ids = tok(context.replace("BLANK", prefix + tok.mask_token))["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0]
        first = ids.index(tok.mask_token_id)
        probabilities.append(torch.softmax(logits[first], dim=-1)[token].item())
    return float(np.mean(probabilities))


def reference_glm(model_dir: str, sentence: str) -> float:
    """``eval_generative_models.py``: P(t_1) from a pass over ``<|endoftext|>`` alone,
    P(t_j | t_<j) from one pass over the sentence without it, ``2 ** mean(log2 p)``."""
    tok, model = _load(model_dir, causal=True)
    tokens = tok.encode(sentence)
    with torch.no_grad():
        initial = torch.softmax(model(torch.tensor([[tok.bos_token_id]])).logits[0], dim=-1)
        output = torch.softmax(model(torch.tensor([tokens])).logits[0], dim=-1)
    probs = [initial[0, tokens[0]].item()]
    probs += [output[j - 1, tokens[j]].item() for j in range(1, len(tokens))]
    return 2 ** (sum(math.log2(p) for p in probs) / len(probs))


# --- the preset table -------------------------------------------------------------------------


def test_apply_preset_keeps_explicit_options_and_reports_them() -> None:
    values = {"blanks": "last", "bos_pass": "joint", "leading_space": False, "lang": "en"}
    applied = apply_preset("stereoset", "stereoset", {"bos_pass"}, values)
    assert applied == {"blanks": "all", "bos_pass": "joint", "leading_space": False, "lang": "en"}
    assert apply_preset("stereoset", None, (), values) == values
    summary = preset_summary("stereoset", "stereoset", applied)
    assert summary["applied"] == {"blanks": "all", "leading_space": False}
    assert summary["given"] == {"bos_pass": {"value": "joint", "preset": "separate"}}
    assert preset_line("stereoset", "stereoset", applied) == (
        "compat stereoset: blanks=all, leading_space=false; given: bos_pass=joint "
        "(preset: separate)"
    )
    assert apply_preset("mbe", "mbe", (), {"weight": "cosine"}) == {"weight": "dot"}
    assert apply_preset("gest", "gest", (), {"log_base": "e"}) == {"log_base": "10"}
    with pytest.raises(ConfigError, match="unknown --compat 'nope' for mbe"):
        apply_preset("mbe", "nope", (), {})
    with pytest.raises(ConfigError, match="the iso command has no --compat presets"):
        apply_preset("iso", "x", (), {})


def test_bad_scoring_values_are_one_line_errors() -> None:
    with pytest.raises(WeatkitError, match="unknown StereoSet blanks 'first': choose from"):
        StereosetScoring(blanks="first").validate()
    with pytest.raises(WeatkitError, match="unknown StereoSet bos_pass"):
        StereosetScoring(bos_pass="none").validate()


# --- StereoSet --------------------------------------------------------------------------------


def test_stereoset_preset_reproduces_the_reference_mlm(models, dataset) -> None:
    scores = score_intrasentence(models["mlm"], dataset, kind="mlm", options=NO_CACHE,
                                 scoring=REFERENCE)  # fmt: skip
    default = score_intrasentence(models["mlm"], dataset, kind="mlm", options=NO_CACHE)
    for example, sentence in dataset.sentences("intrasentence"):
        expected = reference_mlm(models["mlm"], example.context, sentence.word)
        assert scores[sentence.id] == pytest.approx(expected, rel=RTOL), sentence.id
        if example.context.count("BLANK") == 1:  # one BLANK: both conventions agree
            assert default[sentence.id] == pytest.approx(expected, rel=RTOL)
        else:  # two: weatkit fills the first with the word, the reference masks both
            assert default[sentence.id] != pytest.approx(expected, rel=1e-3)


def test_stereoset_preset_reproduces_the_reference_glm(models, dataset) -> None:
    scores = score_intrasentence(models["glm"], dataset, options=NO_CACHE, scoring=REFERENCE)
    default = score_intrasentence(models["glm"], dataset, options=NO_CACHE)
    n_differ = 0
    for _, sentence in dataset.sentences("intrasentence"):
        expected = reference_glm(models["glm"], sentence.sentence)
        assert scores[sentence.id] == pytest.approx(expected, rel=RTOL), sentence.id
        n_differ += default[sentence.id] != pytest.approx(expected, rel=1e-3)
    assert n_differ == 15  # conditioning on the BOS changes every sentence's score


def test_leading_space_scores_the_spaced_bpe_token(models, tmp_path: Path) -> None:
    data = _dataset_json()
    data["data"]["intrasentence"] = [
        {"id": "e1", "target": "doctor", "bias_type": "profession", "context": "This is BLANK.",
         "sentences": [
             {"id": f"e1-{label}", "sentence": f"This is {word}.", "gold_label": label}
             for label, word in zip(("stereotype", "anti-stereotype", "unrelated"),
                                    ("doctor", "nurse", "flower"), strict=True)
         ]}
    ]  # fmt: skip
    path = tmp_path / "bpe.json"
    path.write_text(json.dumps(data))
    dataset = load_stereoset(path=path)
    tok, _ = _load(models["bpe"], causal=False)
    assert tok.tokenize("doctor") == ["doctor"] and tok.tokenize(" doctor") == ["Ġdoctor"]
    spaced = score_intrasentence(models["bpe"], dataset, kind="mlm", options=NO_CACHE,
                                 scoring=StereosetScoring(leading_space=True))  # fmt: skip
    plain = score_intrasentence(models["bpe"], dataset, kind="mlm", options=NO_CACHE,
                                scoring=REFERENCE)  # fmt: skip
    for example, sentence in dataset.sentences("intrasentence"):
        for scores, space in ((spaced, True), (plain, False)):
            expected = reference_mlm(models["bpe"], example.context, sentence.word, space=space)
            assert scores[sentence.id] == pytest.approx(expected, rel=RTOL), (sentence.id, space)
        assert spaced[sentence.id] != pytest.approx(plain[sentence.id], rel=1e-3)


def test_stereoset_cli_applies_the_preset(models, tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(_dataset_json()))
    common = ["--model", models["glm"], "--dataset", str(path), "--no-cache", "--format", "csv"]
    runner = CliRunner()
    preset = runner.invoke(stereoset_command, [*common, "--compat", "stereoset"])
    assert preset.exit_code == 0, preset.output
    assert "compat stereoset: blanks=all, bos_pass=separate, leading_space=false" in (
        preset.stderr
    )
    explicit = runner.invoke(
        stereoset_command, [*common, "--compat", "stereoset", "--bos-pass", "joint"]
    )
    assert "given: bos_pass=joint (preset: separate)" in explicit.stderr
    plain = runner.invoke(stereoset_command, [*common, "--bos-pass", "joint"])
    assert explicit.stdout == plain.stdout
    assert preset.stdout != plain.stdout  # the tiny GPT-2's SS/LMS move with the convention


# --- MBE --------------------------------------------------------------------------------------


def reference_mbe(model_dir: str, male: list[list[int]], female: list[list[int]]) -> float:
    """``eval.py`` with ``--method aula``: ``calculate_aul`` per sentence (attention averaged
    over layers, heads and query positions; mean of the weighted log-probabilities of tokens
    1..-2), the mean last hidden state as embedding, ``cos_sim(F, M.T)`` of the matrices."""
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(model_dir, attn_implementation="eager").eval()

    def aula(ids: list[int]) -> tuple[float, np.ndarray]:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
        log_probs = torch.log_softmax(out.logits[0], dim=1)
        token = log_probs.gather(1, torch.tensor(ids)[:, None])[1:-1, 0]
        attention = torch.cat(out.attentions, 0).mean(0).mean(0).mean(0)
        score = torch.mean(token * attention[1:-1]).item()
        return score, out.hidden_states[-1][0, 1:-1].mean(0).numpy()

    fs, fe = zip(*(aula(s) for s in female), strict=True)
    ms, me = zip(*(aula(s) for s in male), strict=True)
    bias = np.array(ms)[None, :] > np.array(fs)[:, None]
    f_emb, m_emb = np.stack(fe), np.stack(me)
    weights = (f_emb @ m_emb.T) / (np.linalg.norm(f_emb) * np.linalg.norm(m_emb))
    return float(np.sum(bias * weights) / np.sum(weights) * 100)


def test_mbe_preset_reproduces_eval_py(models) -> None:
    tok, _ = _load(models["mlm"], causal=False)
    texts_m = ["The doctor was kind.", "My friend said hello.", "The doctor is very smart!"]
    texts_f = ["The nurse was caring.", "The nurse was rude and lazy.", "My friend left."]
    male = [tok(t)["input_ids"] for t in texts_m]
    female = [tok(t)["input_ids"] for t in texts_f]
    lm = MaskedLM(models["mlm"], NO_CACHE)
    settings = apply_preset("mbe", "mbe", (), {"method": "aula", "weight": "cosine"})
    run = run_mbe(
        lm,
        [MbeSentence(TokenizedSentence.from_ids(s)) for s in male],
        [MbeSentence(TokenizedSentence.from_ids(s)) for s in female],
        data="test",
        show_progress=False,
        **settings,
    )
    assert run.result.weight == "dot"
    assert run.result.score == pytest.approx(reference_mbe(models["mlm"], male, female), abs=1e-4)


# --- GEST and the CLI lines -------------------------------------------------------------------


def test_mbe_and_gest_cli_print_the_preset_line() -> None:
    runner = CliRunner()
    # the option is parsed and the line printed before any input is read
    result = runner.invoke(mbe_command, ["--model", "none", "--compat", "mbe"])
    assert "compat mbe: weight=dot" in result.stderr
    result = runner.invoke(gest_command, ["--compat", "gest", "--log-base", "e"])
    assert "compat gest: no value applied; given: log_base=e (preset: 10)" in result.stderr


def reference_gest(model_dir: str, text_m: str, text_f: str) -> float:
    """``english_mlm_score``: ``masked_logprob_score(m, f) − masked_logprob_score(f, m)``, each
    the mean log10 softmax probability of its own tokens at the positions where the two
    tokenisations differ, those positions masked."""
    tok, model = _load(model_dir, causal=False)

    def masked_logprob(a: str, b: str) -> float:
        ids_a, ids_b = tok(a)["input_ids"], tok(b)["input_ids"]
        where = [j for j, (x, y) in enumerate(zip(ids_a, ids_b, strict=False)) if x != y]
        masked = [tok.mask_token_id if j in where else t for j, t in enumerate(ids_a)]
        with torch.no_grad():
            probs = model(torch.tensor([masked])).logits[0].softmax(dim=-1)
        return float(np.mean([math.log10(probs[j, ids_a[j]].item()) for j in where]))

    return masked_logprob(text_m, text_f) - masked_logprob(text_f, text_m)


def test_gest_preset_reproduces_the_reference_mlm(tmp_path: Path) -> None:
    from tests.test_gest_scoring import SENTENCES
    from tests.tiny_models import make_gest_mlm
    from weatkit.gest.scoring import MLM_TEMPLATES, fill, score_samples

    model = str(make_gest_mlm(tmp_path / "gest"))
    settings = apply_preset("gest", "gest", (), {"log_base": "e"})
    df = score_samples(model, SENTENCES, options=NO_CACHE, **settings)
    assert (df["skipped"] == "").all()
    for row in df.itertuples():
        t = MLM_TEMPLATES[row.template]
        s = SENTENCES[row.sample_id]
        expected = reference_gest(model, fill(t.text, t.masculine, s)[0],
                                  fill(t.text, t.feminine, s)[0])  # fmt: skip
        assert row.score == pytest.approx(expected, rel=RTOL, abs=1e-6)
