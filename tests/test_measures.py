"""The measure contract: the registry's metadata are the papers', and every conversion to
:class:`MeasureResult` carries the native result's numbers."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from weatkit.crows.score import crows_metric
from weatkit.engine.weat import EngineOptions
from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import aggregate_scores
from weatkit.mbe.score import MbeResult
from weatkit.measures import (
    MEASURES,
    RESULT_COLUMNS,
    MeasureResult,
    crows,
    gest,
    get_measure,
    mbe_measures,
    stereoset,
    to_frame,
    weat_measures,
)
from weatkit.measures.registry import Measure, register
from weatkit.report.tables import results_frame, summary_frame
from weatkit.stereoset import load_stereoset

SS_LANGS = ("en", "de", "fr", "es", "tr")
CROWS_LANGS = ("en", "fr", "ja", "ru")
# Rowe et al. (2025), Table 1 / supported_languages.json: ISO codes, Norwegian "no"
EUROGEST_LANGS = (
    "bg", "ca", "cs", "da", "de", "el", "es", "et", "fi", "fr", "ga", "gl", "hr", "hu", "it",
    "lt", "lv", "mt", "nl", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sv", "tr", "uk",
)  # fmt: skip
# name: (neutral, stereotypical side, ideal, model kinds, languages, the paper's first author)
PAPERS = {
    "weat": (0.0, "above", None, ("static", "mlm", "glm"), None, "Caliskan"),
    "rnd": (0.0, "below", None, ("static", "mlm", "glm"), None, "Garg"),
    "rnsb": (0.0, "above", None, ("static", "mlm", "glm"), None, "Sweeney"),
    "mac": (None, None, None, ("static", "mlm", "glm"), None, "Manzini"),
    "ect": (1.0, "below", None, ("static", "mlm", "glm"), None, "Dev"),
    "ripa": (0.0, "above", None, ("static", "mlm", "glm"), None, "Ethayarajh"),
    "wefat": (0.0, "above", None, ("static", "mlm", "glm"), None, "Caliskan"),
    "sc-weat": (0.0, "above", None, ("static", "mlm", "glm"), None, "Toney"),
    "direct-bias": (0.0, "above", None, ("static", "mlm", "glm"), None, "Bolukbasi"),
    "gest:g_s": (1.0, "above", None, ("mlm", "glm"), ("en",), "Pikuliak"),
    "eurogest:g_s": (1.0, "above", None, ("mlm", "glm"), EUROGEST_LANGS, "Rowe"),
    "stereoset:ss_term": (50.0, "above", None, ("mlm", "glm"), SS_LANGS, "Nadeem"),
    "stereoset:lms_term": (None, None, 100.0, ("mlm", "glm"), SS_LANGS, "Nadeem"),
    "stereoset:icat_term": (None, None, 100.0, ("mlm", "glm"), SS_LANGS, "Nadeem"),
    "stereoset:ss_pooled": (50.0, "above", None, ("mlm", "glm"), SS_LANGS, "Nadeem"),
    "stereoset:lms_pooled": (None, None, 100.0, ("mlm", "glm"), SS_LANGS, "Nadeem"),
    "stereoset:icat_pooled": (None, None, 100.0, ("mlm", "glm"), SS_LANGS, "Nadeem"),
    "crows:pll": (50.0, "above", None, ("mlm",), CROWS_LANGS, "Nangia"),
    "crows:aul": (50.0, "above", None, ("mlm",), CROWS_LANGS, "Kaneko & Bollegala"),
    "crows:aula": (50.0, "above", None, ("mlm",), CROWS_LANGS, "Kaneko & Bollegala"),
    "crows:pll-word-l2r": (50.0, "above", None, ("mlm",), CROWS_LANGS, "Kauf & Ivanova"),
    "crows:sum": (50.0, "above", None, ("glm",), CROWS_LANGS, "Nangia"),
    "crows:shared": (50.0, "above", None, ("glm",), CROWS_LANGS, "Nangia"),
    "mbe:aula": (50.0, "above", None, ("mlm",), None, "Kaneko, Imankulova"),
    "mbe:aul": (50.0, "above", None, ("mlm",), None, "Kaneko, Imankulova"),
    "mbe:mean-ll": (50.0, "above", None, ("glm",), None, "Kaneko, Imankulova"),
    # the measure packages' entries (weatkit.measures.plugins)
    "ceat": (0.0, "above", None, ("mlm", "glm"), None, "Guo"),
    "lpbs": (0.0, "above", None, ("mlm",), None, "Kurita"),
    "seat": (0.0, "above", None, ("mlm", "glm"), ("en",), "May"),
}


def test_registry_metadata_are_the_papers() -> None:
    assert set(MEASURES) == set(PAPERS)
    for name, (neutral, side, ideal, kinds, langs, author) in PAPERS.items():
        m = get_measure(name)
        assert (m.neutral, m.stereotypical, m.ideal) == (neutral, side, ideal), name
        assert (tuple(m.model_kinds), m.languages) == (kinds, langs), name
        assert m.citation.startswith(author), name
        # the compare method computing it: EuroGEST is a language of the gest method
        assert m.family == {"eurogest": "gest"}.get(name.split(":")[0], name.split(":")[0])


def test_registry_languages_are_the_data_sets() -> None:
    from weatkit.crows.data import CROWS_FILES
    from weatkit.stereoset.data import LANGS

    for name in ("ss", "lms", "icat"):
        for convention in ("term", "pooled"):
            assert get_measure(f"stereoset:{name}_{convention}").languages == LANGS
    for name in ("crows:pll", "crows:pll-word-l2r", "crows:aul", "crows:aula", "crows:sum",
                 "crows:shared"):  # fmt: skip
        assert get_measure(name).languages == tuple(CROWS_FILES)
    from weatkit.gest.eurogest import LANGUAGES

    assert get_measure("eurogest:g_s").languages == tuple(sorted(LANGUAGES))


def test_applicability_and_side() -> None:
    crows_pll = get_measure("crows:pll")
    assert crows_pll.not_applicable("mlm", "en") is None
    assert crows_pll.not_applicable("mlm", "de") == "CrowS-Pairs has en, fr, ja, ru, not de"
    assert crows_pll.not_applicable("mlm", "fr") is None
    assert crows_pll.not_applicable("glm", "ja", "G") == (
        "CrowS-Pairs needs a masked LM; G is a causal LM"
    )
    assert get_measure("gest:g_s").not_applicable("glm", "fr") == "GEST is English only, not fr"
    eurogest = get_measure("eurogest:g_s")
    assert [eurogest.not_applicable(k, lang) for k in ("mlm", "glm") for lang in ("de", "it")] == [
        None
    ] * 4
    assert eurogest.not_applicable("glm", "en").startswith("EuroGEST has bg, ca, cs")
    assert eurogest.not_applicable("static", "de", "V") == (
        "EuroGEST needs a masked LM or a causal LM; V is word embeddings"
    )
    assert eurogest.side(1.1) == "stereotypical"
    assert get_measure("weat").not_applicable("static", "xx") is None
    g_s = get_measure("gest:g_s")
    assert (g_s.side(1.2), g_s.side(0.8), g_s.side(1.0), g_s.side(math.nan)) == (
        "stereotypical",
        "anti-stereotypical",
        "neutral",
        "",
    )
    assert get_measure("stereoset:icat_term").side(80.0) == ""


def test_each_measure_is_registered_once() -> None:
    with pytest.raises(WeatkitError, match="'weat' is already registered"):
        register(Measure("weat", "weat", "WEAT", "", 0.0, "above", "", ("static",)))
    with pytest.raises(WeatkitError, match="unknown measure 'crows:xyz'"):
        get_measure("crows:xyz")


def test_to_frame_has_stable_columns() -> None:
    rows = [
        MeasureResult("gest:g_s", "m", "en", 1.25, 1.1, 1.4, 0.95, 3000, "template 0"),
        MeasureResult("mbe:aula", "m", "de", 55.0),
    ]
    frame = to_frame(rows)
    assert list(frame.columns) == RESULT_COLUMNS == [
        "measure", "source", "lang", "value", "ci_low", "ci_high", "confidence_level", "n",
        "method", "test",
    ]  # fmt: skip
    assert frame["value"].tolist() == [1.25, 55.0]
    assert frame["n"].tolist()[0] == 3000 and frame["n"].isna().tolist() == [False, True]
    assert rows[0].confidence_interval == (1.1, 1.4) and rows[0].statistic == 1.25
    assert to_frame([]).columns.tolist() == RESULT_COLUMNS


def _gest_table(rng: np.random.Generator, template: int) -> pd.DataFrame:
    stereotype = np.repeat(np.arange(1, 17), 5)
    return pd.DataFrame(
        {
            "template": template,
            "stereotype": stereotype,
            "score": rng.normal(0.1 * (stereotype > 7), 0.3),
        }
    )


def _g_s_by_hand(table: pd.DataFrame) -> float:
    means = table.groupby("stereotype")["score"].mean()
    return math.exp(means.loc[8:16].mean() - means.loc[1:7].mean())


def test_gest_measure_is_the_mean_g_s_over_templates() -> None:
    rng = np.random.default_rng(0)
    one, two = _gest_table(rng, 0), _gest_table(rng, 3)
    both = gest(scores=pd.concat([one, two]), n_bootstrap=0, name="toy")
    (m,) = both.measures
    assert (m.measure, m.source, m.lang, m.n) == ("gest:g_s", "toy", "en", 160)
    assert m.value == pytest.approx((_g_s_by_hand(one) + _g_s_by_hand(two)) / 2, rel=1e-12)
    assert math.isnan(m.ci_low) and math.isnan(m.confidence_level)
    assert both.summary.summary["template"].tolist() == [0, 3]

    single = gest(scores=one, n_bootstrap=200, seed=4, confidence_level=0.9)
    native = aggregate_scores(one, n_bootstrap=200, seed=4, confidence_level=0.9).summary.iloc[0]
    (m,) = single.measures
    assert m.value == pytest.approx(_g_s_by_hand(one), rel=1e-12)
    assert (m.ci_low, m.ci_high) == (native["g_s_ci_low"], native["g_s_ci_high"])
    assert m.confidence_level == 0.9 and m.n == 80


def test_crows_measure_is_the_overall_metric() -> None:
    table = pd.DataFrame(
        {
            "bias_type": ["gender", "gender", "race", "race", "race"],
            "direction": ["stereo", "antistereo", "stereo", "stereo", "antistereo"],
            "score_more": [-1.0, -2.0, -3.0, -1.5, np.nan],
            "score_less": [-2.0, -1.0, -4.0, -1.5, -1.0],
        }
    )
    result = crows(pairs=table, method="aul", n_bootstrap=300, seed=2, name="toy")
    (m,) = result.measures
    # scored pairs 0..3: wins 1, 0, 1, 0 (a tie is no win)
    assert (m.measure, m.source, m.n, m.value) == ("crows:aul", "toy", 4, 50.0)
    native = crows_metric(table, n_bootstrap=300, seed=2).iloc[0]
    assert (m.ci_low, m.ci_high, m.confidence_level) == (native["ci_low"], native["ci_high"], 0.95)
    with pytest.raises(WeatkitError, match="not both or neither"):
        crows()


def test_stereoset_measures_are_both_conventions() -> None:
    dataset = load_stereoset("en")
    scores, pro, related, count = {}, defaultdict(int), defaultdict(int), defaultdict(int)
    for i, example in enumerate(dataset.intrasentence):
        s = {"stereotype": 3.0, "anti-stereotype": 2.0, "unrelated": 2.5 if i % 3 else 1.0}
        if i % 2:
            s["stereotype"], s["anti-stereotype"] = 2.0, 3.0
        for sentence in example.sentences:
            scores[sentence.id] = s[sentence.gold_label]
        count[example.term] += 1
        pro[example.term] += s["stereotype"] > s["anti-stereotype"]
        related[example.term] += (s["stereotype"] > s["unrelated"]) + (
            s["anti-stereotype"] > s["unrelated"]
        )
    result = stereoset(predictions={"intrasentence": scores}, name="toy")
    got = {m.measure: m for m in result.measures}
    assert list(got) == [
        "stereoset:ss_term", "stereoset:lms_term", "stereoset:icat_term",
        "stereoset:ss_pooled", "stereoset:lms_pooled", "stereoset:icat_pooled",
    ]  # fmt: skip
    # per term (StereoSet's scores): means over terms, ICAT of the means
    ss = np.mean([100 * pro[t] / count[t] for t in count])
    lms = np.mean([100 * related[t] / (2 * count[t]) for t in count])
    assert got["stereoset:ss_term"].value == pytest.approx(ss, rel=1e-12)
    assert got["stereoset:lms_term"].value == pytest.approx(lms, rel=1e-12)
    icat_term = got["stereoset:icat_term"].value
    assert icat_term == pytest.approx(lms * min(ss, 100 - ss) / 50, rel=1e-12)
    # pooled over the examples
    n = sum(count.values())
    ss_p = 100 * sum(pro.values()) / n
    lms_p = 100 * sum(related.values()) / (2 * n)
    assert got["stereoset:ss_pooled"].value == pytest.approx(ss_p, rel=1e-12)
    assert got["stereoset:lms_pooled"].value == pytest.approx(lms_p, rel=1e-12)
    icat_p = got["stereoset:icat_pooled"].value
    assert icat_p == pytest.approx(lms_p * min(ss_p, 100 - ss_p) / 50, rel=1e-12)
    assert abs(ss - ss_p) > 0.01  # the two conventions differ here
    assert {m.n for m in got.values()} == {len(dataset.intrasentence)}
    assert got["stereoset:ss_term"].method == "intrasentence, per target term"
    assert got["stereoset:ss_pooled"].method == "intrasentence, pooled over examples"


def test_mbe_measure_is_the_score() -> None:
    native = MbeResult("aul", "dot", 30, 40, 1200, 61.5, 5, 3, 0.125, 0.72, 0.72, 0.05, False, 0)
    (m,) = mbe_measures(native, source="toy", lang="de")
    assert (m.measure, m.value, m.n, m.lang) == ("mbe:aul", 61.5, 70, "de")
    assert math.isnan(m.ci_low)


def test_weat_measures_are_the_summary_effect_sizes() -> None:
    rows = [
        {"embeddings": emb, "lang": "de", "list_set": "ca-weat:v1", "list_id": f"de_{i}",
         "test": "weat1", "statistic": s, "effect_size": d}
        for emb in ("m@-2", "glove")
        for i, (s, d) in enumerate([(0.1, 0.5), (0.2, 0.9), (0.4, 1.1), (0.0, 0.2)])
    ]  # fmt: skip
    summary = summary_frame(results_frame(rows), EngineOptions())
    layer, static = weat_measures(summary)
    assert (layer.source, layer.test) == ("m", "ca-weat:v1:weat1@-2")
    assert layer.column == "ca-weat:v1:weat1@-2"
    assert (static.source, static.test) == ("glove", "ca-weat:v1:weat1")
    assert layer.value == pytest.approx(np.median([0.5, 0.9, 1.1, 0.2]))
    assert (layer.ci_low, layer.ci_high, layer.n) == (0.2, 1.1, 4)
    assert layer.confidence_level == pytest.approx(1 - 2 * 0.5**4)
    assert layer.method == "median-order-statistic"
    assert weat_measures(summary, source="M")[0].source == "M"
