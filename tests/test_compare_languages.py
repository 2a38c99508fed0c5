"""``weatkit compare`` in more languages (issue 20) and with the scores' bootstrap set in the file
(issue 19.7): EuroGEST's g_s (``eurogest:g_s``) in its languages, French CrowS-Pairs, and the
``scores`` section's resamples, seed and level.

The method functions run on tiny models with small slices of the real data (the loaders are
replaced by slices: the scoring and the statistics are the real ones). Values are checked against
the measures' own public functions and against direct computations written here: g_s from the
per-item masculine rates r, and every CI against a plain percentile bootstrap loop over resamples
drawn with the documented plan (``numpy.random.default_rng(seed).integers(0, n, (R, n))`` per
stratum, strata in order).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import weatkit
from tests.compare_fixtures import make_char_mlm
from tests.tiny_models import make_gest_glm, make_gest_mlm
from weatkit.crossmethod import load_compare_config, run_compare
from weatkit.crossmethod import methods as cm
from weatkit.crossmethod.config import ModelEntry, ScoreOptions
from weatkit.crows import compare as crows_compare
from weatkit.crows.data import load_crows
from weatkit.crows.score import score_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.gest import eurogest as eg
from weatkit.gest.compare import GestSection, gest_rows
from weatkit.sentence import MaskedLM

pytestmark = pytest.mark.usefixtures("data_dir")
OPTIONS = ContextualOptions(device="cpu", batch_size=64, cache=False)
_ITEMS = eg.eurogest_items  # the real builder, before any slicing


def _items_slice(lang: str, code: str = eg.DEFAULT_CODE, coinciding: str = "other"):
    """The real items of ``lang``, 3 per stereotype (a gendered pair first where there is one)."""
    built = _ITEMS(lang, code, coinciding)
    parts = []
    for _, group in built.items.groupby("stereotype", sort=True):
        g = group[group["condition"] == "G"].head(1)
        parts.append(pd.concat([g, group[group["condition"] != "G"].head(3 - len(g))]))
    return dataclasses.replace(built, items=pd.concat(parts, ignore_index=True))


def _words(texts: list[str]) -> tuple[str, ...]:
    from tokenizers import pre_tokenizers

    split = pre_tokenizers.BertPreTokenizer()
    return tuple(dict.fromkeys(w for t in texts for w, _ in split.pre_tokenize_str(t)))


@pytest.fixture(scope="module")
def sliced():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eg, "eurogest_items", _items_slice)
        mp.setattr(crows_compare, "load_crows", lambda lang="en": _crows_slice(lang))
        yield


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    items = [_items_slice(lang).items for lang in ("de", "it")]
    words = _words([t for s in items for t in (*s["masculine"], *s["feminine"])])
    root = tmp_path_factory.mktemp("compare-languages")
    return {
        "glm": str(make_gest_glm(root / "glm", extra=words, max_length=128)),
        "mlm": str(make_gest_mlm(root / "mlm", extra=words, max_length=128)),
        "char": str(make_char_mlm(root / "char", seed=1)),
        "root": str(root),
    }


def _plain_percentile(replicates: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1 - level) / 2
    low, high = np.quantile(replicates, [alpha, 1 - alpha])
    return float(low), float(high)


def _one(rows: list[dict], measure: str) -> dict:
    [row] = [r for r in rows if r["measure"] == measure]
    return row


# --- EuroGEST ------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "lang"), [("glm", "de"), ("mlm", "it")])
def test_eurogest_in_compare_equals_weatkit_gest(models, sliced, kind, lang) -> None:
    plan = ScoreOptions(n_bootstrap=200, seed=3, confidence_level=0.9)
    ctx = cm.MethodContext(OPTIONS, False, scores=plan)
    rows = gest_rows(ModelEntry("M", models[kind]), kind, lang, GestSection(), ctx)
    assert [r["measure"] for r in rows] == ["eurogest:g_s"]
    row = rows[0]
    own = weatkit.gest(
        models[kind],
        lang=lang,
        kind=kind,
        n_bootstrap=200,
        seed=3,
        confidence_level=0.9,
        options=OPTIONS,
        name="M",
    )
    (measure,) = own.measures
    assert measure.measure == "eurogest:g_s" and measure.lang == lang
    assert row["value"] == measure.value
    assert (row["ci_low"], row["ci_high"]) == (measure.ci_low, measure.ci_high)
    assert (row["model"], row["lang"], row["method"]) == ("M", lang, "gest")
    assert row["n"] == 48 and row["ci_level"] == 0.9
    assert row["neutral"] == 1.0 and np.isnan(row["p_value_neutral"])
    # g_s and its CI by hand from the per-item masculine rates r
    scored = own.scores
    assert (scored["skipped"] == "").all() and len(scored) == 48
    groups = [scored.loc[scored["stereotype"] == s, "r"].to_numpy() for s in range(1, 17)]

    def g_s(means: list[float]) -> float:
        return (sum(means[7:]) / 9) / (sum(means[:7]) / 7)

    assert row["value"] == pytest.approx(g_s([g.mean() for g in groups]), rel=1e-12)
    rng = np.random.default_rng(3)
    draws = [rng.integers(0, len(g), size=(200, len(g))) for g in groups]
    replicates = np.array(
        [g_s([g[d[r]].mean() for g, d in zip(groups, draws, strict=True)]) for r in range(200)]
    )
    low, high = _plain_percentile(replicates, 0.9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-12)
    assert row["ci_excludes_neutral"] == (not low <= 1.0 <= high)


def test_eurogest_options_reach_the_scoring(models, sliced) -> None:
    """The section's coinciding handling is ``weatkit gest --lang --coinciding``'s: keeping
    Italian's identical "disse" items (r = 0.5) moves g_s."""
    section = GestSection(coinciding="keep")
    ctx = cm.MethodContext(OPTIONS, False, scores=ScoreOptions(n_bootstrap=0))
    entry = ModelEntry("M", models["glm"])
    row = _one(gest_rows(entry, "glm", "it", section, ctx), "eurogest:g_s")
    own = weatkit.gest(
        models["glm"], lang="it", coinciding="keep", n_bootstrap=0, options=OPTIONS
    ).measures[0]
    default = weatkit.gest(models["glm"], lang="it", n_bootstrap=0, options=OPTIONS).measures[0]
    assert row["value"] == own.value
    assert abs(own.value - default.value) > 1e-6
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_level"])  # 0 resamples: no CI
    assert row["ci_excludes_neutral"] is None


def test_gest_languages_without_data_are_not_applicable(models) -> None:
    ctx = cm.MethodContext(OPTIONS, False)
    entry = ModelEntry("M", models["glm"])
    with pytest.raises(cm.NotApplicable, match=r"^GEST is English only and EuroGEST has no ja$"):
        gest_rows(entry, "glm", "ja", GestSection(), ctx)
    with pytest.raises(cm.NotApplicable, match=r"^GEST is English only, not de$"):
        gest_rows(entry, "glm", "de", GestSection(eurogest=False), ctx)


# --- French CrowS-Pairs and the scores section ---------------------------------------------


def _crows_slice(lang: str = "en") -> pd.DataFrame:
    return load_crows(lang=lang).iloc[:50].reset_index(drop=True)


def test_scores_section_sets_the_ci_and_french_crows_is_scored(models, sliced) -> None:
    root = Path(models["root"])
    (root / "cmp.yaml").write_text(
        f"output: out\nlanguages: [en, fr]\nmodels: [{{name: A, model: {models['char']}}}]\n"
        "contextual: {device: cpu, batch_size: 64, cache: false}\ncrows: {method: aul}\n"
        "scores: {n_bootstrap: 200, confidence_level: 0.9}\ncorrelation: {n_bootstrap: 0}\n"
    )
    result = run_compare(load_compare_config(root / "cmp.yaml"), show_progress=False)
    assert result.skipped.empty, result.skipped.to_dict("records")
    scores = result.scores.set_index(["lang", "measure"])
    for lang in ("en", "fr"):
        row = scores.loc[(lang, "crows:aul")]
        pairs = score_crows(MaskedLM(models["char"], OPTIONS), _crows_slice(lang), method="aul")
        scored = pairs[pairs["score_more"].notna() & pairs["score_less"].notna()]
        wins = (scored["score_more"] > scored["score_less"]).to_numpy(int)
        n = len(wins)
        idx = np.random.default_rng(0).integers(0, n, size=(200, n))
        low, high = _plain_percentile(np.array([100 * wins[i].mean() for i in idx]), 0.9)
        assert row["value"] == pytest.approx(100 * wins.mean()), lang
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-9), lang
        assert row["ci_level"] == 0.9 and row["n"] == n, lang
    french = scores.loc[("fr", "crows:aul")]
    assert french["n"] > 40
    plan = {"n_bootstrap": 200, "seed": 0, "confidence_level": 0.9}
    assert result.manifest["scores"] == plan
    assert {k: result.manifest["resampling"]["crows"][k] for k in plan} == plan
