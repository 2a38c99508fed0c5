"""LPBS (weatkit.lpbs): scores against a plain transformers loop, the statistics against slow
obvious implementations, the reference code's convention, bad input, the template parser."""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import weatkit
from tests.test_sentence_masked_lm import base_rows
from tests.tiny_models import make_char_mlm, make_word_glm
from weatkit.cli import main
from weatkit.config import schema
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.lpbs.measure import lpbs
from weatkit.lpbs.options import LpbsOptions
from weatkit.lpbs.score import score_words
from weatkit.lpbs.stats import lpbs_statistics
from weatkit.lpbs.templates import parse_template
from weatkit.sentence import MaskedLM

MALE, FEMALE = ["he", "man"], ["she", "woman"]
CAREER, FAMILY = ["doctor", "job", "tall"], ["home", "kid", "nurse"]  # tall: t ##a ##l ##l
TEMPLATES = ["[TARGET] likes [ATTRIBUTE].", "The [ATTRIBUTE] suits [TARGET]."]


@pytest.fixture(scope="module")
def mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_char_mlm(tmp_path_factory.mktemp("lpbs") / "mlm")


@pytest.fixture(scope="module")
def reference(mlm: Path):
    """A plain loop: one forward pass per sentence, each slot written as one [MASK] in the text
    (as the reference code does), log_softmax at the target's mask in float64; a word of
    several WordPieces read as its first."""
    from transformers import AutoTokenizer, BertForMaskedLM

    tok = AutoTokenizer.from_pretrained(mlm)
    model = BertForMaskedLM.from_pretrained(mlm).eval()

    @functools.cache
    def logp(template: str, target: str, attribute: str | None) -> float:
        text = template.replace("[TARGET]", "[MASK]").replace(
            "[ATTRIBUTE]", "[MASK]" if attribute is None else attribute
        )
        ids = tok(text, return_tensors="pt")["input_ids"]
        masks = (ids[0] == tok.mask_token_id).nonzero().ravel().tolist()
        target_first = template.index("[TARGET]") < template.index("[ATTRIBUTE]")
        at = masks[0] if (target_first or attribute is not None) else masks[-1]
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, at].double()
        piece = tok(target, add_special_tokens=False)["input_ids"][0]
        return float(torch.log_softmax(logits, dim=-1)[piece])

    return logp


def _group_score(logp, template, words, attribute) -> float:
    """s(G, a, t) = log Σ p_tgt − log Σ p_prior, summed in probability space."""
    tgt = sum(math.exp(logp(template, w, attribute)) for w in words)
    prior = sum(math.exp(logp(template, w, None)) for w in words)
    return math.log(tgt) - math.log(prior)


def _bias(logp, x, y, templates, attributes) -> np.ndarray:
    """b(a, t), shape (templates, attributes)."""
    return np.array(
        [[_group_score(logp, t, x, a) - _group_score(logp, t, y, a) for a in attributes]
         for t in templates]
    )  # fmt: skip


def _slow_two_sided_exact(a: np.ndarray, b: np.ndarray) -> float:
    z = np.concatenate([a, b])
    observed = a.mean() - b.mean()
    stats = []
    for part in itertools.combinations(range(len(z)), len(a)):
        rest = [i for i in range(len(z)) if i not in part]
        stats.append(z[list(part)].mean() - z[rest].mean())
    stats = np.array(stats)
    ge = np.mean(stats >= observed - 1e-12)
    le = np.mean(stats <= observed + 1e-12)
    return min(1.0, 2 * min(ge, le))


def test_scores_statistic_and_intervals_match_plain_loops(mlm: Path, reference) -> None:
    res = lpbs(str(mlm), [MALE, FEMALE, CAREER, FAMILY], templates=TEMPLATES, n_bootstrap=300,
               seed=3)  # fmt: skip
    # the log-probabilities, word by word
    for row in res.words.itertuples():
        assert row.log_p_target == pytest.approx(
            reference(row.template, row.target, row.attribute), abs=2e-5
        )
        assert row.log_p_prior == pytest.approx(reference(row.template, row.target, None), abs=2e-5)
    assert len(res.words) == 2 * 4 * 6
    # b(a, t), then the paper's units (per attribute, mean over templates)
    b_a = _bias(reference, MALE, FEMALE, TEMPLATES, CAREER)
    b_b = _bias(reference, MALE, FEMALE, TEMPLATES, FAMILY)
    got = res.scores.set_index(["template", "attribute"])["bias"]
    for t, template in enumerate(TEMPLATES):
        for j, word in enumerate(CAREER):
            assert got[(template, word)] == pytest.approx(b_a[t, j], abs=1e-4)
    u_a, u_b = b_a.mean(axis=0), b_b.mean(axis=0)
    s = u_a.mean() - u_b.mean()
    d = s / np.concatenate([u_a, u_b]).std(ddof=1)
    assert res.statistic == pytest.approx(s, abs=1e-4)
    assert res.effect_size == pytest.approx(d, abs=1e-3)
    assert (res.n_a, res.n_b, res.permutation_method, res.n_permutations) == (3, 3, "exact", 20)
    assert res.pvalue == pytest.approx(_slow_two_sided_exact(u_a, u_b))
    # bootstrap: A and B resampled independently from default_rng([seed, n_a, n_b, 0])
    rng = np.random.default_rng([3, 3, 3, 0])
    ia, ib = rng.integers(0, 3, (300, 3)), rng.integers(0, 3, (300, 3))
    units_a = res.scores[res.scores["set"] == "A"].groupby("attribute", sort=False)["bias"].mean()
    units_b = res.scores[res.scores["set"] == "B"].groupby("attribute", sort=False)["bias"].mean()
    ua, ub = units_a.to_numpy(), units_b.to_numpy()
    boot = [ua[i].mean() - ub[k].mean() for i, k in zip(ia, ib, strict=True)]
    assert res.statistic_ci == pytest.approx(tuple(np.quantile(boot, [0.025, 0.975])))
    assert res.confidence_interval == res.effect_size_ci


def test_reference_convention_sentence_units_and_first_wordpiece(mlm: Path, reference) -> None:
    """keitakurita/contextual_embedding_bias_measure, weat_result_replication.ipynb: rows of
    (template, attribute) are the units; a group's probability is the sum of its words'; a word
    of several WordPieces is read as its first (tall -> t); d = (mean − mean) / pooled std
    (pandas, ddof 1)."""
    x = ["he", "tall"]
    res = lpbs(str(mlm), [x, FEMALE, CAREER, FAMILY], templates=TEMPLATES, unit="sentence",
               subtokens="first", n_bootstrap=0, n_permutations=0)  # fmt: skip
    rows_a = _bias(reference, x, FEMALE, TEMPLATES, CAREER).ravel()
    rows_b = _bias(reference, x, FEMALE, TEMPLATES, FAMILY).ravel()
    effect = (rows_a.mean() - rows_b.mean()) / np.concatenate([rows_a, rows_b]).std(ddof=1)
    assert res.statistic == pytest.approx(rows_a.mean() - rows_b.mean(), abs=1e-4)
    assert res.effect_size == pytest.approx(effect, abs=1e-3)
    assert (res.n_a, res.n_b, res.pvalue) == (6, 6, None)


def _score_words_counting_rows(mlm: Path, groups: dict, subtokens: str):
    """score_words's rows over TEMPLATES and CAREER + FAMILY, and the rows the network ran
    (batches of 7, so the passes span several batches)."""
    lm = MaskedLM(str(mlm), ContextualOptions(batch_size=7, device="cpu", cache=False))
    lm.masked_log_probs(lm.tokenize(["he likes it."]), [[1]])  # the head split's first check
    templates = [parse_template(t) for t in TEMPLATES]
    with base_rows(lm) as seen:
        words = score_words(lm, templates, groups, CAREER + FAMILY, subtokens=subtokens,
                            show_progress=False)  # fmt: skip
    return words, seen


def test_one_forward_pass_per_masked_input(mlm: Path, reference) -> None:
    """The masked input of (template, attribute) is the same for every target word, and the
    prior's (both slots masked) for every attribute too: 2 templates × (6 attributes + 1) = 14
    rows run, in two batches, not 2 × 4 words × 6 × 2 = 96; each word's values are the plain
    loop's."""
    words, seen = _score_words_counting_rows(mlm, {"X": MALE, "Y": FEMALE}, "refuse")
    assert seen == [7, 7] and len(words) == 48
    for row in words.itertuples():
        assert row.log_p_target == pytest.approx(
            reference(row.template, row.target, row.attribute), abs=2e-5
        )
        assert row.log_p_prior == pytest.approx(reference(row.template, row.target, None), abs=2e-5)


def test_first_subtoken_is_read_at_the_shared_mask(mlm: Path, reference) -> None:
    """subtokens='first': 'tall' (t ##a ##l ##l) reads 't' at the same mask as the other words
    (still 14 rows): its values are exactly those of the word 't' and the plain loop's."""
    groups = {"X": ["he", "tall"], "Y": ["t", *FEMALE]}
    words, seen = _score_words_counting_rows(mlm, groups, "first")
    assert sum(seen) == 14 and len(words) == 2 * 5 * 6
    columns = ["log_p_target", "log_p_prior"]
    tall = words[words["target"] == "tall"][columns].to_numpy()
    np.testing.assert_array_equal(tall, words[words["target"] == "t"][columns].to_numpy())
    for row in words[words["target"] == "tall"].itertuples():
        assert row.log_p_target == pytest.approx(
            reference(row.template, "t", row.attribute), abs=2e-5
        )
        assert row.log_p_prior == pytest.approx(reference(row.template, "t", None), abs=2e-5)


def test_swap_masks_the_attribute_sets_and_keeps_the_sign(mlm: Path, reference) -> None:
    # WEAT 7 shape: X/Y inserted (math/arts), A/B masked (male/female terms)
    res = lpbs(str(mlm), [CAREER, FAMILY, MALE, FEMALE], templates=TEMPLATES[:1], swap=True,
               n_bootstrap=0)  # fmt: skip
    b_x = _bias(reference, MALE, FEMALE, TEMPLATES[:1], CAREER)[0]
    b_y = _bias(reference, MALE, FEMALE, TEMPLATES[:1], FAMILY)[0]
    assert res.statistic == pytest.approx(b_x.mean() - b_y.mean(), abs=1e-4)
    assert set(res.words["group"]) == {"A", "B"}


def test_statistics_monte_carlo_and_one_sided() -> None:
    a, b = np.arange(12.0), np.arange(12.0) - 3.5
    r = lpbs_statistics(a, b, n_bootstrap=0, n_permutations=500, max_exact=10, seed=1,
                        alternative="greater")  # fmt: skip
    assert (r.permutation_method, r.n_permutations) == ("monte-carlo", 500)
    assert r.statistic == pytest.approx(3.5)
    assert r.effect_size == pytest.approx(3.5 / np.concatenate([a, b]).std(ddof=1))
    from weatkit.stats.resampling import permutation_plan

    plan = permutation_plan(12, 12, 500, 10, 1, (0, 0, 12, 12))
    z = np.concatenate([a, b])
    k = int(((plan.membership @ z) >= a.sum() - 1e-9).sum())
    assert r.pvalue == pytest.approx((k + 1) / 501)


def _cli(*args: str) -> object:
    return CliRunner().invoke(main, ["lpbs", *args])


def _one_line_error(result, *parts: str) -> None:
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("weatkit: error:"), result.output
    for part in parts:
        assert part in lines[0], lines[0]


@pytest.fixture
def list_file(tmp_path: Path) -> Path:
    def words(items: list[str]) -> str:
        return "[" + ", ".join(items) + "]"

    path = tmp_path / "gender.yaml"
    path.write_text(
        "tests:\n  - test: career\n    lang: en\n    list_id: gender\n"
        f"    X: {words(MALE)}\n    Y: {words(FEMALE)}\n"
        f"    A: {words(CAREER[:2])}\n    B: {words(FAMILY)}\n",
        encoding="utf-8",
    )
    return path


def test_cli_writes_tables_and_compat_kurita(mlm: Path, list_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _cli("--model", str(mlm), "--lists", str(list_file), "--template", TEMPLATES[0],
                  "--bootstrap", "50", "--compat", "kurita", "--out", str(out),
                  "--log-items", "csv", "--format", "csv")  # fmt: skip
    assert result.exit_code == 0, result.output
    import pandas as pd

    summary = pd.read_csv(out / "summary.csv")
    assert summary[["test", "unit", "n_a", "n_b", "templates"]].values.tolist() == [
        ["career", "sentence", 2, 3, 1]
    ]
    api = lpbs(str(mlm), [MALE, FEMALE, CAREER[:2], FAMILY], templates=TEMPLATES[:1],
               unit="sentence", subtokens="first", n_bootstrap=50)  # fmt: skip
    assert summary["statistic"][0] == pytest.approx(api.statistic)
    assert summary["pvalue"][0] == pytest.approx(api.pvalue)
    items = pd.read_csv(out / "items.csv")
    assert len(items) == 5 and set(items["measure"]) == {"lpbs"}
    assert items["text_group1"][0] == "[TARGET] likes doctor."
    # influence: S without the item − S
    first = api.scores.drop(index=0)
    s_without = (first[first["set"] == "A"]["bias"].mean()
                 - first[first["set"] == "B"]["bias"].mean())  # fmt: skip
    assert items["influence"][0] == pytest.approx(s_without - api.statistic)
    assert {"summary.csv", "scores.csv", "words.csv", "manifest.json"} <= {
        p.name for p in out.iterdir()
    }


@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (["--template", "[TARGET] likes it."], ["'[TARGET] likes it.'", "0 [ATTRIBUTE]"]),
        (["--template", "[MASK] likes [ATTRIBUTE]."], ["0 [TARGET]"]),
        (["--template", "[TARGET] likes [ATTRIBUTE] [MASK]."], ["has [MASK]"]),
        (["--unit", "word"], ["--unit", "'word'"]),
    ],
)
def test_bad_options_are_one_line_errors(mlm: Path, list_file: Path, args, parts) -> None:
    _one_line_error(_cli("--model", str(mlm), "--lists", str(list_file), *args), *parts)


def test_bad_words_and_models_are_one_line_errors(mlm: Path, tmp_path: Path) -> None:
    def run(x: list[str], model: str = str(mlm), **kw) -> str:
        with pytest.raises(WeatkitError) as info:
            lpbs(model, [x, FEMALE, CAREER[:2], FAMILY], n_bootstrap=0, **kw)
        assert "\n" not in str(info.value)
        return str(info.value)

    assert "target word 'tall' is 4 tokens" in run(["he", "tall"]) and "(t ##a ##l ##l)" in run(
        ["he", "tall"]
    )
    assert "target word 'über' is unknown" in run(["he", "über"])
    no_mask = _mlm_without_mask(tmp_path / "nomask")
    assert "has no mask token" in run(MALE, str(no_mask))
    glm = make_word_glm(tmp_path / "glm", ["he", "she"])
    assert "causal LM" in run(MALE, str(glm))
    assert "hf backend" in run(MALE, "openai:http://127.0.0.1:9/v1#m")
    _one_line_error(_cli("--model", str(mlm)), "give --lists")


def _mlm_without_mask(path: Path) -> Path:
    """A BertForMaskedLM whose tokenizer has no mask token."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    vocab = ["[PAD]", "[UNK]", *MALE, *FEMALE, *CAREER, *FAMILY, "likes", "."]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]")
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=16,
    )
    BertForMaskedLM(config).save_pretrained(path)  # fmt: skip
    tok.save_pretrained(path)
    return path


def test_public_api_and_declarations() -> None:
    assert weatkit.lpbs is lpbs
    default = LpbsOptions()
    for option in schema.SECTIONS["LPBS"].options:
        assert option.default == getattr(default, option.name), option.name


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12).filter(
    lambda s: "[" not in s
)


@settings(max_examples=150, deadline=None)
@given(
    head=_TEXT,
    middle=_TEXT,
    tail=_TEXT,
    target_first=st.booleans(),
    target=st.text(min_size=1, max_size=8),
    attribute=st.text(min_size=1, max_size=8),
)
def test_template_fill_puts_words_at_their_spans(
    head: str, middle: str, tail: str, target_first: bool, target: str, attribute: str
) -> None:
    first, second = ("[TARGET]", "[ATTRIBUTE]") if target_first else ("[ATTRIBUTE]", "[TARGET]")
    filled = parse_template(head + first + middle + second + tail).fill(target, attribute)
    assert filled.text[slice(*filled.target)] == target
    assert filled.text[slice(*filled.attribute)] == attribute
    expected = (
        (head + first + middle + second + tail)
        .replace("[TARGET]", "\0T")
        .replace("[ATTRIBUTE]", "\0A")
    )
    assert filled.text == expected.replace("\0T", target).replace("\0A", attribute)


_PIECES = st.sampled_from(["[TARGET]", "[ATTRIBUTE]", "[MASK]", "[TARGETS]", "a", " ", "]"])


@settings(max_examples=150, deadline=None)
@given(text=st.lists(_PIECES, max_size=6).map("".join))
def test_template_parser_accepts_exactly_one_of_each(text: str) -> None:
    valid = text.count("[TARGET]") == 1 and text.count("[ATTRIBUTE]") == 1
    valid = valid and "[MASK]" not in text and "[TARGETS]" not in text
    if valid:
        assert parse_template(text).text == text
    else:
        with pytest.raises(WeatkitError) as info:
            parse_template(text)
        assert str(info.value).startswith("template ") and "\n" not in str(info.value)
