"""GEST per-sample scores against scores computed by hand from tiny offline models.

The tiny models (``tests/tiny_models.py``) have word-level tokenizers, so the position of the
gendered word in a prompt is where its token is; the split MLM tokenizer has ``He = H ##e``,
``She = S ##he``, ``woman = wo ##man`` and ``women = wo ##men``. The hand computations follow the
reference code (kinit-sk/gest ``masked_models/utils.py``): softmax of the logits, ``log10`` of
the probabilities of the true tokens at the masked positions, their mean; for causal models the
softmax at the last prefix position.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tests.tiny_models import make_gest_glm, make_gest_mlm, make_gpt2
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.gest import scoring
from weatkit.gest.scoring import (
    GLM_TEMPLATES,
    MLM_TEMPLATES,
    GestScorer,
    fill,
    leading_space_token_id,
    score_pairs,
    score_samples,
)

TOL = {"rtol": 1e-5, "atol": 1e-6}
APPROX = {"rel": 1e-5, "abs": 1e-6}
# mixed lengths (3 to 8 words), one duplicate
SENTENCES = [
    "I am happy.",
    "I lift heavy weights every day!",
    "I never cried.",
    "I love my job, today?",
    "I am happy.",
    "I was sad yesterday.",
]
NO_CACHE = ContextualOptions(cache=False, device="cpu")


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("gest-models")
    return {
        "mlm": str(make_gest_mlm(root / "mlm")),
        "mlm-split": str(make_gest_mlm(root / "mlm-split", split_words=True)),
        "mlm-no-she": str(make_gest_mlm(root / "mlm-no-she", drop=("She",))),
        "glm": str(make_gest_glm(root / "glm")),
        "glm-bos": str(make_gest_glm(root / "glm-bos", bos=True)),
        "glm-no-woman": str(make_gest_glm(root / "glm-no-woman", drop=("woman",))),
        "gpt2": str(make_gpt2(root / "gpt2")),
    }


@functools.lru_cache(maxsize=16)
def _load(model_dir: str, causal: bool):
    """AutoTokenizer + AutoModelFor{Causal,Masked}LM (float32, eval, CPU), once per process."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    return AutoTokenizer.from_pretrained(model_dir), auto.from_pretrained(model_dir).eval()


def manual_mlm(model_dir: str, text_m: str, text_f: str, positions: list[int], base: str):
    """Mask ``positions`` of ``tok(text_m)`` by hand; mean log P(true tokens) of m minus f."""
    tok, model = _load(model_dir, causal=False)
    ids_m, ids_f = tok(text_m)["input_ids"], tok(text_f)["input_ids"]
    assert len(ids_m) == len(ids_f)
    masked = list(ids_m)
    for p in positions:
        masked[p] = tok.mask_token_id
    assert masked == [tok.mask_token_id if j in positions else t for j, t in enumerate(ids_f)]
    with torch.no_grad():
        probs = model(input_ids=torch.tensor([masked])).logits[0].softmax(-1).double()
    log = torch.log10 if base == "10" else torch.log
    lp_m = torch.stack([log(probs[p, ids_m[p]]) for p in positions]).mean()
    lp_f = torch.stack([log(probs[p, ids_f[p]]) for p in positions]).mean()
    return float(lp_m - lp_f)


def manual_glm(model_dir: str, prefix: str, word_m: str, word_f: str, base: str):
    """Softmax at the last position of ``tok(prefix)``; log P(word_m) − log P(word_f)."""
    tok, model = _load(model_dir, causal=True)
    ids = tok(prefix)["input_ids"]
    with torch.no_grad():
        probs = model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1).double()
    log = torch.log10 if base == "10" else torch.log
    m, f = tok.convert_tokens_to_ids(word_m), tok.convert_tokens_to_ids(word_f)
    return float(log(probs[m]) - log(probs[f]))


def _word_position(model_dir: str, text: str, word: str) -> int:
    tok, _ = _load(model_dir, causal=False)
    tokens = tok.convert_ids_to_tokens(tok(text)["input_ids"])
    assert tokens.count(word) == 1, tokens
    return tokens.index(word)


# ----------------------------------------------------------------------------- masked LMs


@pytest.mark.parametrize("base", ["10", "e"])
def test_mlm_scores_equal_a_hand_computation(models: dict[str, str], base: str) -> None:
    df = score_samples(models["mlm"], SENTENCES, log_base=base, options=NO_CACHE)
    assert list(df.columns) == ["sample_id", "template", "score", "skipped"]
    assert len(df) == 4 * len(SENTENCES) and (df["skipped"] == "").all()
    for row in df.itertuples():
        t = MLM_TEMPLATES[row.template]
        s = SENTENCES[row.sample_id]
        text_m, text_f = fill(t.text, t.masculine, s)[0], fill(t.text, t.feminine, s)[0]
        p = _word_position(models["mlm"], text_m, t.masculine)
        assert p == _word_position(models["mlm"], text_f, t.feminine)
        expected = manual_mlm(models["mlm"], text_m, text_f, [p], base)
        assert row.score == pytest.approx(expected, **APPROX)


def test_log_bases_differ_by_ln10(models: dict[str, str]) -> None:
    ten = score_samples(models["mlm"], SENTENCES[:3], templates=[2], options=NO_CACHE)
    e = score_samples(models["mlm"], SENTENCES[:3], templates=[2], log_base="e", options=NO_CACHE)
    np.testing.assert_allclose(e["score"], ten["score"] * math.log(10), **TOL)


def test_multi_token_words_are_the_mean_over_their_tokens(models: dict[str, str]) -> None:
    """He = H ##e and She = S ##he: both positions masked, mean log-probability of each word."""
    df = score_samples(models["mlm-split"], SENTENCES[:2], templates=[0], options=NO_CACHE)
    for row in df.itertuples():
        s = SENTENCES[row.sample_id]
        text_m, text_f = f'He said: "{s}"', f'She said: "{s}"'
        expected = manual_mlm(models["mlm-split"], text_m, text_f, [1, 2], "10")
        assert row.skipped == ""
        assert row.score == pytest.approx(expected, **APPROX)


def test_variants_of_unequal_length_are_skipped_and_counted(models: dict[str, str]) -> None:
    """man = 1 token, woman = wo ##man: templates 1 and 3 are skipped, 0 and 2 scored."""
    scorer = GestScorer(models["mlm-split"], options=NO_CACHE)
    df = scorer.score_samples(SENTENCES, show_progress=False)
    skipped = df[df["template"].isin([1, 3])]
    assert skipped["score"].isna().all()
    assert (skipped["skipped"] == "'man' and 'woman' are 1 and 2 tokens here").all()
    scored = df[df["template"].isin([0, 2])]
    assert scored["score"].notna().all() and (scored["skipped"] == "").all()
    n_unique = len(set(SENTENCES))
    assert scorer.stats.n_skipped == 2 * n_unique
    assert scorer.stats.n_scored == scorer.stats.n_computed == 2 * n_unique


def test_mlm_padding_invariance(models: dict[str, str]) -> None:
    """A batch of mixed lengths gives the scores of one sample at a time."""
    batched = score_samples(models["mlm"], SENTENCES, options=NO_CACHE)
    one = ContextualOptions(cache=False, device="cpu", batch_size=1)
    singly = score_samples(models["mlm"], SENTENCES, options=one)
    scorer = GestScorer(models["mlm"], options=NO_CACHE)  # one model load for every call
    alone = pd.concat(
        [
            scorer.score_samples([s], [t], show_progress=False)["score"]
            for t in range(4)
            for s in SENTENCES
        ],
        ignore_index=True,
    )
    np.testing.assert_allclose(batched["score"], singly["score"], **TOL)
    np.testing.assert_allclose(batched["score"], alone, **TOL)


def test_duplicates_and_sample_ids(models: dict[str, str]) -> None:
    df = score_samples(models["mlm"], SENTENCES, templates=[3, 1], options=NO_CACHE)
    assert df["template"].tolist() == [3] * len(SENTENCES) + [1] * len(SENTENCES)
    assert df["sample_id"].tolist() == list(range(len(SENTENCES))) * 2
    for t in (1, 3):
        part = df[df["template"] == t]["score"].tolist()
        assert part[0] == part[4]  # "I am happy." twice
    assert df.dtypes.astype(str).tolist()[:3] == ["int64", "int64", "float64"]
    assert pd.api.types.is_string_dtype(df["skipped"])
    for name in ("mlm", "glm"):
        empty = score_samples(models[name], [], options=NO_CACHE)
        assert empty.empty and list(empty.columns) == ["sample_id", "template", "score", "skipped"]


def test_too_long_samples_are_skipped(models: dict[str, str]) -> None:
    long = " ".join(["I am happy."] * 25)
    for name in ("mlm", "glm"):
        df = score_samples(models[name], [long, "I am sad."], templates=[0], options=NO_CACHE)
        assert df["skipped"].tolist() == ["longer than the model's 64 tokens", ""]
        assert np.isnan(df["score"][0]) and np.isfinite(df["score"][1])


def test_fill_keeps_braces_of_the_sample() -> None:
    assert fill('{w} said: "{s}"', "He", "I {w} {s}.") == ('He said: "I {w} {s}."', 0, 2)
    assert fill('"{s}", the {w} said.', "man", "ok") == ('"ok", the man said.', 10, 13)


# ----------------------------------------------------------------------------- causal LMs


@pytest.mark.parametrize("name", ["glm", "glm-bos"])
@pytest.mark.parametrize("base", ["10", "e"])
def test_glm_scores_equal_a_hand_computation(models: dict[str, str], name: str, base: str) -> None:
    """The prefix as the tokenizer encodes it (with its BOS where it adds one), last position."""
    df = score_samples(models[name], SENTENCES, log_base=base, options=NO_CACHE)
    assert len(df) == 2 * len(SENTENCES) and (df["skipped"] == "").all()
    for row in df.itertuples():
        t = GLM_TEMPLATES[row.template]
        prefix = t.text.replace("{s}", SENTENCES[row.sample_id])
        expected = manual_glm(models[name], prefix, t.masculine, t.feminine, base)
        assert row.score == pytest.approx(expected, **APPROX)


def test_glm_bos_comes_from_the_tokenizer(models: dict[str, str]) -> None:
    from transformers import AutoTokenizer

    with_bos = AutoTokenizer.from_pretrained(models["glm-bos"])
    plain = AutoTokenizer.from_pretrained(models["glm"])
    assert with_bos('"I am happy.",')["input_ids"][0] == with_bos.bos_token_id
    assert plain('"I am happy.",')["input_ids"][0] != plain.bos_token_id


def test_glm_padding_invariance(models: dict[str, str]) -> None:
    """No pad token (GPT-2-like): right padding with the EOS id and an attention mask."""
    for name in ("glm", "glm-bos"):
        batched = score_samples(models[name], SENTENCES, options=NO_CACHE)
        one = ContextualOptions(cache=False, device="cpu", batch_size=1)
        singly = score_samples(models[name], SENTENCES, options=one)
        np.testing.assert_allclose(batched["score"], singly["score"], **TOL)


def test_glm_words_take_the_leading_space_token(models: dict[str, str]) -> None:
    """Byte-level BPE: the next word after ``",`` is ``Ġhe``, not the sentence-initial ``he``."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(models["gpt2"], add_prefix_space=True)
    vocab = tok.get_vocab()
    assert leading_space_token_id(tok, "he") == vocab["Ġhe"]
    assert leading_space_token_id(tok, "woman") == vocab["Ġwoman"]
    assert leading_space_token_id(tok, "sunflower") == vocab["Ġsun"]  # Ġsun flow er: the first
    sentences = ["This is good.", "This is a bad tree."]
    df = score_samples(models["gpt2"], sentences, kind="glm", options=NO_CACHE)
    for row in df.itertuples():
        t = GLM_TEMPLATES[row.template]
        prefix = t.text.replace("{s}", sentences[row.sample_id])
        expected = manual_glm(models["gpt2"], prefix, "Ġ" + t.masculine, "Ġ" + t.feminine, "10")
        assert row.score == pytest.approx(expected, **APPROX)


def test_kind_is_decided_from_the_config(models: dict[str, str]) -> None:
    assert GestScorer(models["glm"]).kind == "glm"
    assert GestScorer(models["mlm"]).kind == "mlm"


# ----------------------------------------------------------------------------- Slavic pairs


def test_pairs_one_token_difference_is_scored(models: dict[str, str]) -> None:
    pairs = [
        ("I am emotivny.", "I am emotivna."),  # [CLS] I am emotivn* . [SEP]: position 3
        ("I was happy today.", "I was sad yesterday."),  # two positions: skipped
        ("I am happy.", "I am happy."),  # no difference: skipped
    ]
    for base in ("10", "e"):
        df = score_pairs(models["mlm"], pairs, log_base=base, options=NO_CACHE)
        assert list(df.columns) == ["sample_id", "score", "skipped"]
        expected = manual_mlm(models["mlm"], *pairs[0], [3], base)
        assert df["score"][0] == pytest.approx(expected, **APPROX)
        assert df["skipped"].tolist() == [
            "",
            "the sentences differ in 2 token positions, not 1",
            "the sentences differ in 0 token positions, not 1",
        ]
        assert df["score"][1:].isna().all()


def test_pairs_mask_only_the_differing_sub_word(models: dict[str, str]) -> None:
    """woman = wo ##man, women = wo ##men: ``wo`` stays visible, ``##man``/``##men`` masked."""
    pairs = [
        ("I saw the woman.", "I saw the women."),
        ("He was happy.", "She was happy."),  # H ##e / S ##he: two positions
        ("I saw the man.", "I saw the woman."),  # 1 vs 2 tokens
    ]
    scorer = GestScorer(models["mlm-split"], options=NO_CACHE)
    df = scorer.score_pairs(pairs, show_progress=False)
    expected = manual_mlm(models["mlm-split"], *pairs[0], [5], "10")
    assert df["score"][0] == pytest.approx(expected, **APPROX)
    assert df["skipped"].tolist() == [
        "",
        "the sentences differ in 2 token positions, not 1",
        "the sentences are 7 and 8 tokens long",
    ]
    assert scorer.stats.n_skipped == 2 and scorer.stats.n_computed == 1


# ----------------------------------------------------------------------------- cache


def test_cached_scores_need_no_model(models: dict[str, str], monkeypatch) -> None:
    opts = ContextualOptions(device="cpu")
    first = score_samples(models["mlm-split"], SENTENCES, options=opts)

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(scoring, "load_lm", no_model)
    scorer = GestScorer(models["mlm-split"], options=opts)
    again = scorer.score_samples(SENTENCES, show_progress=False)
    pd.testing.assert_frame_equal(first, again)
    assert scorer.stats.n_cached == scorer.stats.n_scored == 2 * len(set(SENTENCES))
    natural = scorer.score_samples(SENTENCES, log_base="e", show_progress=False)
    np.testing.assert_allclose(natural["score"], first["score"] * math.log(10), **TOL)
    with pytest.raises(AssertionError, match="loaded"):  # another model: not in the cache
        score_samples(models["mlm"], SENTENCES, options=opts)


# ----------------------------------------------------------------------------- errors


def _one_line_error(match: str, call) -> None:
    with pytest.raises(WeatkitError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


def test_errors(models: dict[str, str], tmp_path: Path) -> None:
    mlm, glm = models["mlm"], models["glm"]
    _one_line_error(
        "unknown mlm template 4", lambda: score_samples(mlm, ["x"], templates=[4], options=NO_CACHE)
    )
    _one_line_error(
        "unknown glm template 2", lambda: score_samples(glm, ["x"], templates=[2], options=NO_CACHE)
    )
    _one_line_error("unknown log base", lambda: score_samples(mlm, ["x"], log_base="2"))
    _one_line_error("unknown model kind", lambda: score_samples(mlm, ["x"], kind="seq2seq"))
    _one_line_error("no mask token", lambda: score_samples(glm, ["x"], kind="mlm"))
    _one_line_error("sentence pairs need a masked LM", lambda: GestScorer(glm).score_pairs([]))
    _one_line_error("not one string", lambda: score_samples(mlm, "I am happy."))
    _one_line_error(
        "cannot encode 'She' of template 0: it becomes the unknown token",
        lambda: score_samples(models["mlm-no-she"], ["I am happy."], options=NO_CACHE),
    )
    _one_line_error(
        "cannot encode 'woman': it gives the unknown token",
        lambda: score_samples(models["glm-no-woman"], ["I am happy."], options=NO_CACHE),
    )
    _one_line_error(
        "model directory not found", lambda: score_samples(str(tmp_path / "nope" / "x"), ["x"])
    )


def test_out_of_memory_names_the_batch_size(models: dict[str, str], monkeypatch) -> None:
    def oom(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(scoring, "forward_scores", oom)
    opts = ContextualOptions(cache=False, device="cpu", batch_size=3)
    _one_line_error(
        r"out of memory on cpu scoring with .* at --batch-size 3 \(3 samples",
        lambda: score_samples(models["mlm"], SENTENCES, options=opts),
    )
