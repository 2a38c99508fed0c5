"""CrowS-Pairs with causal LMs (``sum``, ``shared``), PLL-word-l2r of masked LMs and MBE's
``mean-ll``, each against a plain loop written here, on real CrowS-Pairs pairs and tiny
random-weight GPT-2, Llama, Qwen2 and BERT models; the CLI and the kind errors."""

from __future__ import annotations

import difflib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from tests.test_mbe import _write_tsv, brute_force
from tests.tiny_models import CAUSAL_ARCHS, make_causal_lm, make_char_mlm
from weatkit.cli import main
from weatkit.crows import load_crows, score_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.measures import crows, mbe
from weatkit.scoring import get_scorer
from weatkit.sentence.masked_lm import MaskedLM

#: Real CrowS-Pairs pairs (short ones, each bias type, both directions).
PAIR_IDS = [4, 6, 10, 14, 15, 17, 18, 20, 23, 26, 35, 114]
OPTIONS = ContextualOptions(device="cpu", batch_size=5, cache=False)


@pytest.fixture(scope="module")
def pairs(data_dir: Path) -> pd.DataFrame:
    table = load_crows()
    return table[table.pair_id.isin(PAIR_IDS)].reset_index(drop=True)


@pytest.fixture(scope="module", params=CAUSAL_ARCHS)
def causal(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("causal") / request.param, request.param)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("gpt2") / "gpt2", "gpt2")


@pytest.fixture(scope="module")
def mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_char_mlm(tmp_path_factory.mktemp("mlm") / "bert")


def _write_pairs(table: pd.DataFrame, path: Path) -> Path:
    table = table[["pair_id", "sent_more", "sent_less", "direction", "bias_type"]]
    table.rename(columns={"direction": "stereo_antistereo"}).to_csv(path, index=False)
    return path


# --- the plain loops --------------------------------------------------------------------------


def _causal_model(model_dir: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    return tok, AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


def plain_token_logprobs(tok, model, text: str) -> tuple[list[str], list[float]]:
    """The text's tokens and ``log P(w_i | start, w_<i)``: one forward pass of one text."""
    ids = tok(text, add_special_tokens=False)["input_ids"]
    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    full = [start, *ids]
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([full])).logits[0].double(), -1)
    values = [float(logp[j - 1, full[j]]) for j in range(1, len(full))]
    return tok.convert_ids_to_tokens(ids), values


def plain_causal_pair(tok, model, more: str, less: str, method: str) -> tuple[float, float]:
    tokens_m, lp_m = plain_token_logprobs(tok, model, more)
    tokens_l, lp_l = plain_token_logprobs(tok, model, less)
    if method == "sum":
        return sum(lp_m), sum(lp_l)
    total_m = total_l = 0.0
    matcher = difflib.SequenceMatcher(None, tokens_m, tokens_l)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            total_m += sum(lp_m[i1:i2])
            total_l += sum(lp_l[j1:j2])
    return total_m, total_l


def plain_pll_word_l2r(model_dir: Path, more: str, less: str) -> tuple[float, float]:
    """Each shared token masked with the later sub-tokens of its word, log-softmax summed."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    enc = [tok(more), tok(less)]
    ids = [e["input_ids"] for e in enc]
    shared: list[list[int]] = [[], []]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ids[0], ids[1]).get_opcodes():
        if op == "equal":
            shared[0] += list(range(i1, i2))
            shared[1] += list(range(j1, j2))
    scores = []
    for e, sentence, positions in zip(enc, ids, shared, strict=True):
        words = e.word_ids()
        total = 0.0
        for p in positions[1:-1]:  # [CLS] and [SEP] are the first and last shared tokens
            masked = list(sentence)
            q = p
            while q < len(sentence) and words[q] == words[p]:
                masked[q] = tok.mask_token_id
                q += 1
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([masked])).logits[0, p]
            total += float(torch.log_softmax(logits, dim=-1)[sentence[p]])
        scores.append(total)
    return scores[0], scores[1]


# --- CrowS-Pairs with causal LMs -------------------------------------------------------------


@pytest.mark.parametrize("method", ["sum", "shared"])
def test_causal_crows_equals_a_plain_loop(
    causal: Path, pairs: pd.DataFrame, tmp_path: Path, method: str
) -> None:
    scorer = get_scorer(str(causal), OPTIONS)
    scores = score_crows(scorer, pairs, method=method, show_progress=False)
    tok, model = _causal_model(causal)
    wins = []
    for row in scores.itertuples():
        more, less = plain_causal_pair(tok, model, row.sent_more, row.sent_less, method)
        assert row.score_more == pytest.approx(more, abs=1e-5)
        assert row.score_less == pytest.approx(less, abs=1e-5)
        wins.append(more > less)
    assert scores.win.tolist() == [int(w) for w in wins] and (scores.skipped == "").all()
    assert 0 < sum(wins) < len(wins)  # the tiny model does not prefer one side throughout
    # the measure: the percent of pairs preferring the more stereotypical sentence
    data = _write_pairs(pairs, tmp_path / "pairs.csv")
    result = crows(str(causal), data=data, method=method, n_bootstrap=0, options=OPTIONS)
    assert result.measures[0].measure == f"crows:{method}"
    assert result.measures[0].value == pytest.approx(100 * np.mean(wins))
    assert result.measures[0].n == len(pairs)


def test_shared_leaves_the_modified_tokens_out(gpt2: Path, pairs: pd.DataFrame) -> None:
    scorer = get_scorer(str(gpt2), OPTIONS)
    total = score_crows(scorer, pairs, method="sum")
    shared = score_crows(scorer, pairs, method="shared")
    # fewer (negative) terms: every shared score is above the whole-sentence sum
    assert (shared.score_more > total.score_more).all()
    assert (shared.score_less > total.score_less).all()
    same = pd.DataFrame({"pair_id": [0], "sent_more": ["Men know how to drive."],
                         "sent_less": ["Men know how to drive."], "direction": ["stereo"],
                         "bias_type": ["gender"]})  # fmt: skip
    for method in ("sum", "shared"):
        row = score_crows(scorer, same, method=method).iloc[0]
        assert row.score_more == row.score_less and row.neutral and row.win == 0


# --- PLL-word-l2r -----------------------------------------------------------------------------


def test_pll_word_l2r_equals_a_plain_loop(mlm: Path, pairs: pd.DataFrame, tmp_path: Path) -> None:
    lm = MaskedLM(str(mlm), OPTIONS)
    scores = score_crows(lm, pairs, method="pll-word-l2r", decimals=None, show_progress=False)
    pll = score_crows(lm, pairs, method="pll", decimals=None)
    wins = []
    for row in scores.itertuples():
        more, less = plain_pll_word_l2r(mlm, row.sent_more, row.sent_less)
        assert row.score_more == pytest.approx(more, abs=1e-4)
        assert row.score_less == pytest.approx(less, abs=1e-4)
        wins.append(round(more, 3) > round(less, 3))
    # words of several tokens (n ##u ##r ##s ##e) are masked together: not the plain PLL
    assert np.abs(scores.score_more - pll.score_more).max() > 0.1
    data = _write_pairs(pairs, tmp_path / "pairs.csv")
    result = crows(str(mlm), data=data, method="pll-word-l2r", n_bootstrap=0, options=OPTIONS)
    assert result.measures[0].measure == "crows:pll-word-l2r"
    assert result.measures[0].value == pytest.approx(100 * np.mean(wins))


# --- MBE with causal LMs ----------------------------------------------------------------------


def test_mbe_mean_ll_equals_a_plain_loop(causal: Path, data_dir: Path, tmp_path: Path) -> None:
    tsv = _write_tsv(tmp_path / "p.tsv")
    result = mbe(str(causal), corpus=tsv, lang="de", method="mean-ll", seed=3, options=OPTIONS)
    run = result.run
    assert result.measures[0].measure == "mbe:mean-ll"
    assert list(run.sentences.columns) == ["set", "index", "n_tokens", "mean_ll", "english",
                                           "target"]  # fmt: skip
    tok, model = _causal_model(causal)
    values, embeddings = [], []
    for text in run.sentences["target"]:
        _, logprobs = plain_token_logprobs(tok, model, text)
        values.append(np.mean(logprobs))
        ids = tok(text, add_special_tokens=False)["input_ids"]
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        with torch.no_grad():
            out = model(input_ids=torch.tensor([[start, *ids]]), output_hidden_states=True)
        embeddings.append(out.hidden_states[-1][0, 1:].mean(0).numpy())
    values, emb = np.array(values), np.array(embeddings, dtype=np.float64)
    np.testing.assert_allclose(run.sentences["mean_ll"], values, rtol=0, atol=1e-5)
    male = (run.sentences["set"] == "male").to_numpy()
    assert male.sum() == (~male).sum() == 4
    expected = brute_force(values[male], values[~male], emb[male], emb[~male], "cosine")
    assert run.result.score == pytest.approx(expected, abs=1e-6)
    assert result.measures[0].value == run.result.score


# --- the CLI and the kind errors ---------------------------------------------------------------


def invoke(*args: str):
    return CliRunner().invoke(
        main, [*args, "--no-progress", "--device", "cpu", "--no-cache", "--batch-size", "5"]
    )


@pytest.mark.parametrize("method", ["sum", "shared"])
def test_cli_crows_causal(gpt2: Path, pairs: pd.DataFrame, tmp_path: Path, method: str) -> None:
    data = _write_pairs(pairs, tmp_path / "pairs.csv")
    res = invoke("crows", "--model", f"hf:{gpt2}", "--data", str(data), "--method", method,
                 "--format", "csv", "--table", "pairs")  # fmt: skip
    assert res.exit_code == 0, res.output
    printed = pd.read_csv(io.StringIO(res.stdout))
    direct = score_crows(get_scorer(str(gpt2), OPTIONS), pairs, method=method)
    np.testing.assert_allclose(printed.score_more, direct.score_more, rtol=0, atol=1e-9)
    assert printed.win.tolist() == direct.win.tolist()
    res = invoke("crows", "--model", str(gpt2), "--data", str(data), "--method", method)
    assert res.exit_code == 0, res.output
    assert f"({method})" in res.stdout


def test_cli_crows_pll_word_l2r(mlm: Path, pairs: pd.DataFrame, tmp_path: Path) -> None:
    data = _write_pairs(pairs, tmp_path / "pairs.csv")
    res = invoke("crows", "--model", str(mlm), "--data", str(data), "--method", "pll-word-l2r",
                 "--format", "csv", "--table", "pairs")  # fmt: skip
    assert res.exit_code == 0, res.output
    printed = pd.read_csv(io.StringIO(res.stdout))
    direct = score_crows(MaskedLM(str(mlm), OPTIONS), pairs, method="pll-word-l2r")
    np.testing.assert_allclose(printed.score_more, direct.score_more, rtol=0, atol=1e-9)


def test_cli_mbe_mean_ll(gpt2: Path, data_dir: Path, tmp_path: Path) -> None:
    tsv = _write_tsv(tmp_path / "p.tsv")
    out = tmp_path / "out"
    res = invoke("mbe", "--parallel", str(tsv), "--model", str(gpt2), "--method", "mean-ll",
                 "--seed", "3", "--out", str(out), "--format", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    summary = pd.read_csv(out / "summary.csv")
    direct = mbe(str(gpt2), corpus=tsv, lang="de", method="mean-ll", seed=3, options=OPTIONS)
    assert summary.loc[0, "method"] == "mean-ll"
    assert summary.loc[0, "score"] == pytest.approx(direct.run.result.score, abs=1e-9)


@pytest.mark.parametrize(
    ("command", "model", "method", "message"),
    [
        ("crows", "gpt2", "pll", "--method pll needs a masked LM; {m} is a causal LM (for a causal "
         "LM: --method sum or shared)"),
        ("crows", "gpt2", "aula", "--method aula needs a masked LM; {m} is a causal LM"),
        ("crows", "gpt2", "pll-word-l2r", "--method pll-word-l2r needs a masked LM; {m} is a "
         "causal LM"),
        ("crows", "mlm", "sum", "--method sum needs a causal LM; {m} is a masked LM (for a masked "
         "LM: --method pll or aul or aula or pll-word-l2r)"),
        ("crows", "mlm", "shared", "--method shared needs a causal LM; {m} is a masked LM"),
        ("mbe", "gpt2", "aula", "--method aula needs a masked LM; {m} is a causal LM (for a "
         "causal LM: --method mean-ll)"),
        ("mbe", "mlm", "mean-ll", "--method mean-ll needs a causal LM; {m} is a masked LM"),
    ],
)  # fmt: skip
def test_a_method_of_the_other_kind_is_a_one_line_error(
    gpt2: Path, mlm: Path, data_dir: Path, tmp_path: Path, command, model, method, message
) -> None:
    path = str(gpt2 if model == "gpt2" else mlm)
    if command == "crows":
        args = ["crows", "--model", path, "--method", method]
    else:
        args = ["mbe", "--parallel", str(_write_tsv(tmp_path / "p.tsv")), "--model", path,
                "--method", method]  # fmt: skip
    res = invoke(*args)
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("weatkit: error: ")
    assert message.format(m=path) in " ".join(res.output.split())
    with pytest.raises(WeatkitError, match=f"--method {method} needs"):
        if command == "crows":
            crows(path, method=method, options=OPTIONS)
        else:
            mbe(path, corpus=tmp_path / "p.tsv", lang="de", method=method, options=OPTIONS)
