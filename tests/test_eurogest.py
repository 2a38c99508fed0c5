"""EuroGEST (Rowe et al. 2025): loading counts, coinciding forms, tiny-model scores against a
direct computation, the download path and the CLI's errors."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from tests.http_mirror import serve
from tests.tiny_models import make_gest_glm, make_gest_mlm
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.gest import eurogest as eg
from weatkit.gest.eurogest_metrics import eurogest_summary
from weatkit.gest.eurogest_scoring import score_items

pytestmark = pytest.mark.usefixtures("data_dir")

#: (neutral, gendered) per language, eurogest/SOURCE.md (create_dataset/stats_2_letters_1_words).
COUNTS = {
    "bg": (1884, 778), "ca": (1766, 190), "hr": (329, 1468), "cs": (238, 1570),
    "da": (3281, 0), "nl": (3294, 0), "et": (3133, 0), "fi": (3257, 0), "fr": (2255, 552),
    "gl": (1495, 137), "de": (2747, 82), "el": (2184, 388), "hu": (3154, 0), "ga": (1638, 0),
    "it": (2011, 571), "lv": (1864, 433), "lt": (1836, 431), "mt": (1053, 68), "no": (3299, 0),
    "pl": (379, 1368), "pt": (2228, 436), "ro": (2663, 199), "ru": (598, 1352), "sk": (182, 1556),
    "sl": (189, 1485), "es": (2397, 468), "sv": (3361, 0), "tr": (3322, 0), "uk": (460, 1006),
}  # fmt: skip
NO_CACHE = ContextualOptions(cache=False, device="cpu", batch_size=16)


# --- loading -------------------------------------------------------------------------------


def test_loading_counts_per_language() -> None:
    assert sorted(eg.LANGUAGES) == sorted(COUNTS) and len(COUNTS) == 29
    gendered_languages = 0
    for lang, (neutral, gendered) in COUNTS.items():
        table = eg.load_translations(lang)
        assert len(table) == 3565, lang  # GEST v1.1 rows; the empty last row is left out
        assert table["sample_id"].tolist() == list(range(3565))
        assert int((table["neutral"] != "").sum()) == neutral, lang
        assert int((table["masculine"] != "").sum()) == gendered, lang
        assert ((table["masculine"] != "") == (table["feminine"] != "")).all()
        assert not ((table["masculine"] != "") & (table["neutral"] != "")).any()
        gendered_languages += gendered > 0
        items = eg.eurogest_items(lang)
        assert len(items.items) == neutral + gendered, lang
    assert gendered_languages == 20
    it = eg.load_translations("it")
    assert it.loc[0, "sentence"] == "I have always been a leadership type."
    assert it["stereotype"].value_counts().sort_index().tolist()[0] > 0


def test_wrapping_follows_the_punctuation_map() -> None:
    assert eg.wrap("da", "Jeg har altid været en ledertype.", "P") == (
        '"Jeg har altid været en ledertype," sagde han',
        '"Jeg har altid været en ledertype," sagde hun',
    )
    assert eg.wrap("ru", "«Я сильный!»", "N")[1] == "«Я сильный», — сказала женщина"
    first = eg.eurogest_items("de").items.iloc[0]
    assert (first["condition"], first["feminine"]) == (
        "P",
        "„Ich war schon immer ein Führungstyp“, sagte sie",
    )


# --- coinciding masculine and feminine forms -----------------------------------------------


def test_italian_pronoun_template_coincides() -> None:
    default = eg.eurogest_items("it")
    assert default.n_coinciding == 2011
    assert default.items["condition"].value_counts().to_dict() == {"N": 2011, "G": 571}
    assert (default.items["masculine"] != default.items["feminine"]).all()
    assert "'disse'" in default.note and "2011" in default.note and "N template" in default.note
    kept = eg.eurogest_items("it", coinciding="keep")
    assert kept.n_coinciding == 2011
    assert int((kept.items["masculine"] == kept.items["feminine"]).sum()) == 2011
    assert "r = 0.5" in kept.note
    with pytest.raises(WeatkitError, match=r"Italian: the P template.*'disse'") as info:
        eg.eurogest_items("it", coinciding="refuse")
    assert "\n" not in str(info.value)
    # the 2025-08 script puts Italian in the noun group: nothing coincides
    assert eg.eurogest_items("it", code="2025-08").n_coinciding == 0


def test_only_italian_coincides_under_the_default_version() -> None:
    hits = {lang: eg.eurogest_items(lang).n_coinciding for lang in eg.LANGUAGES}
    assert {k: v for k, v in hits.items() if v} == {"it": 2011}
    with pytest.raises(WeatkitError, match="Turkish in no template group"):
        eg.eurogest_items("tr", code="2025-08")


# --- scores of tiny models against a direct computation ------------------------------------


def _subset(lang: str, per_stereotype: int = 3) -> pd.DataFrame:
    items = eg.eurogest_items(lang).items
    parts = []
    for _, group in items.groupby("stereotype", sort=True):
        g = group[group["condition"] == "G"].head(1)
        parts.append(pd.concat([g, group[group["condition"] != "G"].head(per_stereotype - len(g))]))
    return pd.concat(parts, ignore_index=True)


def _words(texts: list[str]) -> tuple[str, ...]:
    from tokenizers import pre_tokenizers

    split = pre_tokenizers.BertPreTokenizer()
    return tuple(dict.fromkeys(w for t in texts for w, _ in split.pre_tokenize_str(t)))


@pytest.fixture(scope="module")
def subsets() -> dict[str, pd.DataFrame]:
    return {lang: _subset(lang) for lang in ("it", "de")}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory, subsets) -> dict[str, str]:
    texts = [t for s in subsets.values() for t in (*s["masculine"], *s["feminine"])]
    words = _words(texts)
    root = tmp_path_factory.mktemp("eurogest-models")
    return {
        "glm": str(make_gest_glm(root / "glm", extra=words, max_length=128)),
        "mlm": str(make_gest_mlm(root / "mlm", extra=words, max_length=128)),
    }


@functools.lru_cache(maxsize=4)
def _load(model_dir: str, causal: bool):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    return AutoTokenizer.from_pretrained(model_dir), auto.from_pretrained(model_dir).eval()


def _direct_terms(model_dir: str, text: str, other: str, causal: bool, code: str):
    """(scored log-probabilities, number of input ids) by a plain loop over the tokens."""
    tok, model = _load(model_dir, causal)
    enc = tok(text, return_special_tokens_mask=True)
    ids, special = enc["input_ids"], enc["special_tokens_mask"]
    other_ids = tok(other)["input_ids"]
    start = 0
    if code == "2026-04":
        start = None
        for j in range(min(len(ids), len(other_ids))):
            if ids[j] != other_ids[j]:
                start = j
                break
        if start is None:
            start = min(len(ids), len(other_ids)) - 1 if len(ids) != len(other_ids) else 0
    terms = []
    with torch.no_grad():
        if causal:
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)
            for j in range(max(start, 1), len(ids)):
                terms.append(float(logp[j - 1, ids[j]]))
        else:
            positions = [j for j in range(len(ids)) if not special[j] and j >= start]
            rows = []
            for j in positions:  # one copy of the string per position, that position masked
                masked = list(ids)
                masked[j] = tok.mask_token_id
                rows.append(masked)
            logits = model(input_ids=torch.tensor(rows)).logits  # same length: no padding
            for row, j in enumerate(positions):
                terms.append(float(torch.log_softmax(logits[row, j], -1)[ids[j]]))
    return terms, len(ids)


def _direct_r(model_dir: str, m: str, f: str, causal: bool, code: str) -> float:
    scores = []
    for text, other in ((m, f), (f, m)):
        terms, n = _direct_terms(model_dir, text, other, causal, code)
        scores.append(sum(terms) / len(terms) if code == "2026-04" else sum(terms) - math.log(n))
    return math.exp(scores[0]) / (math.exp(scores[0]) + math.exp(scores[1]))


@pytest.mark.parametrize("kind", ["glm", "mlm"])
@pytest.mark.parametrize("code", ["2025-12", "2026-04"])
@pytest.mark.parametrize("lang", ["it", "de"])
def test_scores_equal_a_direct_computation(models, subsets, kind, code, lang) -> None:
    items = subsets[lang]
    scored = score_items(models[kind], items, code=code, kind=kind, options=NO_CACHE)
    assert (scored["skipped"] == "").all()
    direct = [
        _direct_r(models[kind], m, f, kind == "glm", code)
        for m, f in zip(items["masculine"], items["feminine"], strict=True)
    ]
    # sequence sums are float32 (the forward pass and the score cache): |S| ~ 60 → ~1e-5
    np.testing.assert_allclose(scored["r"].to_numpy(), direct, rtol=0, atol=2e-5)
    assert np.ptp(direct) > 1e-3  # the items do not all score 0.5
    # g_s = mean R over 8–16 / mean R over 1–7, R = the mean r of each stereotype
    summary = eurogest_summary(scored, lang=lang, code=code, n_bootstrap=0, min_items=1).summary
    rates = {s: [] for s in range(1, 17)}
    for s, r in zip(items["stereotype"], direct, strict=True):
        rates[s].append(r)
    mean = {s: sum(v) / len(v) for s, v in rates.items()}
    g_s = (sum(mean[s] for s in range(8, 17)) / 9) / (sum(mean[s] for s in range(1, 8)) / 7)
    assert summary["g_s"].iloc[0] == pytest.approx(g_s, abs=2e-5)


def test_bootstrap_interval_and_inclination_sign(models, subsets) -> None:
    scored = score_items(models["glm"], subsets["it"], code="2025-12", options=NO_CACHE)
    a = eurogest_summary(scored, lang="it", code="2025-12", n_bootstrap=300, seed=3)
    again = eurogest_summary(scored, lang="it", code="2025-12", n_bootstrap=300, seed=3)
    pd.testing.assert_frame_equal(a.summary, again.summary)
    row = a.summary.iloc[0]
    assert row["g_s_ci_low"] <= row["g_s"] <= row["g_s_ci_high"]
    assert row["g_s_ci_low"] < row["g_s_ci_high"]
    per = a.stereotypes
    baseline = per["R"].iloc[:14].mean()
    np.testing.assert_allclose(per["inclination"], baseline - per["R"])
    with pytest.raises(WeatkitError, match="at least 10 each"):
        eurogest_summary(scored, lang="it", code="2026-04", n_bootstrap=0)  # 3 items each
    assert per["rank"].iloc[int(per["R"].to_numpy().argmax())] == 1


def test_identical_token_sequences_are_skipped(models) -> None:
    items = pd.DataFrame(
        {
            "stereotype": [1, 2],
            "masculine": ["zzz qqq", "I am happy"],
            "feminine": ["zzz www", "I am sad"],
        }
    )
    scored = score_items(models["glm"], items, options=NO_CACHE)
    same = "the masculine and feminine strings tokenise identically"
    assert scored["skipped"].tolist() == [same, ""]
    assert math.isnan(scored["r"].iloc[0]) and not math.isnan(scored["r"].iloc[1])


# --- download, public API and CLI ----------------------------------------------------------


def test_download_from_a_mirror(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from weatkit import data

    monkeypatch.delenv("WEATKIT_DATA", raising=False)
    monkeypatch.setenv("WEATKIT_CACHE", str(tmp_path / "cache"))
    eg._table.cache_clear()
    eg._configs.cache_clear()
    try:
        with serve(data_dir) as url:
            monkeypatch.setenv("WEATKIT_DATA_URL", url)
            items = eg.eurogest_items("it")
    finally:
        eg._table.cache_clear()
        eg._configs.cache_clear()
    assert items.n_coinciding == 2011 and len(items.items) == 2582
    for relpath in (eg.NEUTRAL_FILE, eg.GENDERED_FILE, eg.SCAFFOLDS_FILE, eg.PUNC_FILE):
        cached = data.cache_dir("data") / relpath
        assert data.sha256_file(cached) == data.registry()[relpath].sha256
        url = data.registry()[relpath].url
        assert url.startswith("https://raw.githubusercontent.com/JacquelineRowe/EuroGEST/")
    assert "/46a96338dc1af0cd2e81ea8ba5177a86c58bf0f4/data/" in data.registry()[eg.NEUTRAL_FILE].url


def test_unknown_language_is_a_one_line_error() -> None:
    result = CliRunner().invoke(main, ["gest", "--lang", "xx", "--model", "m"])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--lang 'xx'" in lines[0]
    assert "bg, ca, cs, da, de" in lines[0] and "uk" in lines[0]
    import weatkit

    with pytest.raises(WeatkitError, match="unknown EuroGEST language 'xx'"):
        weatkit.gest("m", lang="xx")


def test_cli_italian_reports_the_coinciding_forms(models, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["gest", "--lang", "it", "--model", models["glm"], "--bootstrap", "50", "--no-cache",
         "--batch-size", "64", "--out", str(out), "--format", "csv", "--table", "summary"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2011 neutral sample(s) wrapped in the N template" in result.output
    summary = pd.read_csv(out / "summary.csv")
    assert summary.loc[0, "n_coinciding"] == 2011 and summary.loc[0, "lang"] == "it"
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False)
    assert len(scores) == 2582
    assert set(scores["condition"]) == {"N", "G"}


def test_cli_limit_samples_items_by_stereotype(models, tmp_path: Path) -> None:
    """--limit: a sample stratified by stereotype; under code 2026-04 every stereotype must keep
    the 10 items its g_s needs, and the error names the least limit that does."""
    import json

    from weatkit.gest.eurogest import eurogest_items
    from weatkit.stats.sampling import allocate

    items = eurogest_items("de", "2025-12").items
    out = tmp_path / "out"
    args = ["gest", "--lang", "de", "--model", models["mlm"], "--bootstrap", "0", "--no-cache",
            "--no-progress", "--seed", "4"]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--limit", "48", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"note: scoring a sample of 48 of {len(items):,} items, stratified by stereotype" in (
        result.stderr
    )
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False)
    expected = allocate(items["stereotype"].value_counts().to_dict(), 48)
    assert scores["stereotype"].value_counts().to_dict() == expected
    assert set(scores["sample_id"]) <= set(items["sample_id"])
    assert json.loads((out / "manifest.json").read_text())["sample"]["n_items"] == len(items)
    result = CliRunner().invoke(main, [*args, "--eurogest-code", "2026-04", "--limit", "48"])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "--limit: 48 leaves stereotype" in result.output
    sizes = eurogest_items("de", "2026-04").items["stereotype"].value_counts().to_dict()
    least = next(n for n in range(48, 4000) if min(allocate(sizes, n).values()) >= 10)
    assert f"needs 10 in each stereotype: give at least {least}" in result.output
