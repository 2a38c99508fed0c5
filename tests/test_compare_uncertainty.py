"""``weatkit compare``'s sentence-level CIs and neutral tests (issue 19.7), and checkpoints of one
model as seeds (issue 19.8), on tiny masked LMs.

The method functions run on a tiny model with small slices of the data sets (the loaders are
replaced by slices of the real data: the scoring and the statistics are the real ones). Every
CI is checked against a plain percentile bootstrap written here as a loop over resamples, drawn
with the documented index plan (``numpy.random.default_rng(0).integers(0, n, (R, n))`` per
stratum, strata in order), from per-item outcomes computed here from the per-item scores; every
p-value against ``scipy.stats.binomtest`` on counts made here.
"""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from tests.compare_fixtures import make_char_mlm
from weatkit.crossmethod import load_compare_config, run_compare
from weatkit.crossmethod import methods as cm
from weatkit.crossmethod.config import ModelEntry
from weatkit.crows import compare as crows_compare
from weatkit.crows.compare import CrowsSection, crows_rows
from weatkit.crows.data import load_crows
from weatkit.crows.score import score_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.gest import compare as gest_compare
from weatkit.gest.aggregate import aggregate_scores
from weatkit.gest.compare import GestSection, gest_rows
from weatkit.gest.data import load_gest
from weatkit.gest.scoring import score_samples
from weatkit.mbe.compare import MbeSection, mbe_rows
from weatkit.mbe.run import run_mbe_parallel
from weatkit.sentence import MaskedLM
from weatkit.stereoset import compare as stereoset_compare
from weatkit.stereoset.compare import StereosetSection, stereoset_rows
from weatkit.stereoset.data import load_stereoset
from weatkit.stereoset.scoring import score_intrasentence

OPTIONS = ContextualOptions(device="cpu", batch_size=64, cache=False)
R = 1000  # compare's resamples
PARALLEL = [
    ("He is strong.", "Er ist stark."),
    ("She cried often.", "Sie weinte oft."),
    ("The man said nothing.", "Der Mann sagte nichts."),
    ("The woman lifts heavy weights.", "Die Frau hebt schwere Gewichte."),
    ("My father loves flowers.", "Mein Vater liebt Blumen."),
    ("Her mother was sad.", "Ihre Mutter war traurig."),
    ("The boy ran.", "Der Junge rannte."),
    ("He and she talked.", "Er und sie sprachen."),
    ("My son sang.", "Mein Sohn sang."),
]


def _crows_slice(lang: str = "en"):
    return load_crows(lang=lang).iloc[:60].reset_index(drop=True)


def _gest_slice(version: str = "1.0"):
    samples = load_gest(version)
    part = samples.groupby("stereotype", sort=False).head(4).reset_index(drop=True)
    return part.assign(sample_id=range(len(part)))  # sample_id: the index in the sentences


def _stereoset_slice(lang: str = "en"):
    data = load_stereoset(lang)
    return dataclasses.replace(data, intrasentence=data.intrasentence[:150], intersentence=())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("uncertainty")
    for seed in (1, 2):
        make_char_mlm(root / f"m{seed}", seed=seed)
    (root / "parallel.tsv").write_text("".join(f"{e}\t{d}\n" for e, d in PARALLEL))
    return root


@pytest.fixture(scope="module")
def sliced():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(crows_compare, "load_crows", _crows_slice)
        mp.setattr(gest_compare, "load_gest", _gest_slice)
        mp.setattr(stereoset_compare, "load_stereoset", _stereoset_slice)
        yield


def _ctx() -> cm.MethodContext:
    return cm.MethodContext(OPTIONS, False)


def _plain_percentile(replicates: list[float]) -> tuple[float, float]:
    low, high = np.quantile(np.array(replicates), [0.025, 0.975])
    return float(low), float(high)


def _one(rows: list[dict], measure: str) -> dict:
    [row] = [r for r in rows if r["measure"] == measure]
    return row


def test_crows_ci_and_binomial_p(tiny: Path, sliced) -> None:
    model = str(tiny / "m1")
    row = _one(
        crows_rows(ModelEntry("A", model), "mlm", "en", CrowsSection("aul"), _ctx()),
        "crows:aul",
    )
    pairs = score_crows(MaskedLM(model, OPTIONS), _crows_slice(), method="aul")
    wins = (pairs["score_more"] > pairs["score_less"]).to_numpy(int)  # every pair is scored
    n = len(wins)
    idx = np.random.default_rng(0).integers(0, n, size=(R, n))
    low, high = _plain_percentile([100 * wins[idx[r]].mean() for r in range(R)])
    assert row["value"] == pytest.approx(100 * wins.mean())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    assert row["ci_level"] == 0.95 and row["neutral"] == 50.0 and row["n"] == n == 60
    assert row["p_value_neutral"] == pytest.approx(binomtest(int(wins.sum()), n, 0.5).pvalue)
    assert row["ci_excludes_neutral"] == (not low <= 50 <= high)


def test_gest_ci_of_the_template_mean(tiny: Path, sliced) -> None:
    model = str(tiny / "m1")
    section = GestSection(mlm_templates=(0, 2))
    row = _one(gest_rows(ModelEntry("A", model), "mlm", "en", section, _ctx()), "gest:g_s")
    samples = _gest_slice()
    scores = score_samples(model, samples["sentence"].tolist(), kind="mlm", templates=[0, 2])
    scores = scores.merge(samples, on="sample_id")
    replicates = np.zeros(R)
    values = []
    for template in (0, 2):
        part = scores[scores["template"] == template]
        values.append(aggregate_scores(part, n_bootstrap=0).g_s)
        groups = [part.loc[part["stereotype"] == i, "score"].to_numpy() for i in range(1, 17)]
        rng = np.random.default_rng(0)  # the same plan for every template
        draws = [rng.integers(0, len(g), size=(R, len(g))) for g in groups]
        for r in range(R):
            means = [g[d[r]].mean() for g, d in zip(groups, draws, strict=True)]
            replicates[r] += np.exp(np.mean(means[7:]) - np.mean(means[:7])) / 2
    low, high = _plain_percentile(list(replicates))
    assert row["value"] == pytest.approx(np.mean(values), rel=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-9)
    assert row["neutral"] == 1.0 and np.isnan(row["p_value_neutral"])
    assert row["ci_excludes_neutral"] == (not low <= 1.0 <= high)
    # one template: weatkit gest's own interval
    one = _one(
        gest_rows(ModelEntry("A", model), "mlm", "en", GestSection((2,)), _ctx()), "gest:g_s"
    )
    own = aggregate_scores(scores[scores["template"] == 2], n_bootstrap=R).summary.iloc[0]
    assert (one["ci_low"], one["ci_high"]) == pytest.approx(
        (own["g_s_ci_low"], own["g_s_ci_high"]), rel=1e-12
    )


def test_stereoset_ci_per_term_and_binomial_p(tiny: Path, sliced) -> None:
    model = str(tiny / "m1")
    rows = stereoset_rows(ModelEntry("A", model), "mlm", "en", StereosetSection(), _ctx())
    data = _stereoset_slice()
    scores = score_intrasentence(model, data, kind="mlm", options=OPTIONS)
    terms: dict[str, list[tuple[int, int]]] = {}
    for ex in data.intrasentence:
        s = {label: scores[ex.sentence(label).id] for label in ("stereotype", "anti-stereotype")}
        u = scores[ex.sentence("unrelated").id]
        pro = int(s["stereotype"] > s["anti-stereotype"])
        related = int(s["stereotype"] > u) + int(s["anti-stereotype"] > u)
        terms.setdefault(ex.term, []).append((pro, related))
    rng = np.random.default_rng(0)
    draws = {t: rng.integers(0, len(v), size=(R, len(v))) for t, v in terms.items()}
    ss, lms, icat = [], [], []
    for r in range(R):
        ss_t = [100 * np.mean([v[i][0] for i in draws[t][r]]) for t, v in terms.items()]
        lms_t = [100 * np.mean([v[i][1] for i in draws[t][r]]) / 2 for t, v in terms.items()]
        ss.append(np.mean(ss_t))
        lms.append(np.mean(lms_t))
        icat.append(lms[-1] * min(ss[-1], 100 - ss[-1]) / 50)
    for measure, replicates in (("ss", ss), ("lms", lms), ("icat", icat)):
        row = _one(rows, f"stereoset:{measure}_term")
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            _plain_percentile(replicates), rel=1e-9
        )
    pro = [p for v in terms.values() for p, _ in v]
    ss_row = _one(rows, "stereoset:ss_term")
    assert ss_row["p_value_neutral"] == pytest.approx(binomtest(sum(pro), len(pro), 0.5).pvalue)
    assert ss_row["n"] == len(pro) == 150
    lms_row = _one(rows, "stereoset:lms_term")
    assert np.isnan(lms_row["p_value_neutral"]) and lms_row["ci_excludes_neutral"] is None


def test_mbe_ci_over_sentences_and_binomial_p(tiny: Path) -> None:
    model = str(tiny / "m1")
    section = MbeSection(corpora={"de": str(tiny / "parallel.tsv")})
    row = _one(mbe_rows(ModelEntry("A", model), "mlm", "de", section, _ctx()), "mbe:aula")
    lm = MaskedLM(model, OPTIONS)
    run = run_mbe_parallel(lm, str(tiny / "parallel.tsv"))
    male = run.sentences[run.sentences["set"] == "male"]
    female = run.sentences[run.sentences["set"] == "female"]
    a_m, a_f = male["aula"].to_numpy(), female["aula"].to_numpy()
    e_m = lm.unmasked(lm.tokenize(list(male["target"]))).embedding.astype(float)
    e_f = lm.unmasked(lm.tokenize(list(female["target"]))).embedding.astype(float)
    n_m, n_f = len(a_m), len(a_f)
    assert (n_m, n_f) == (3, 3)  # MBE down-samples the 5 male sentences to 3

    def mbe(rows_m, rows_f) -> float:
        num = den = 0.0
        for i in rows_m:
            for j in rows_f:
                c = e_m[i] @ e_f[j] / np.linalg.norm(e_m[i]) / np.linalg.norm(e_f[j])
                num += c * (a_m[i] > a_f[j])
                den += c
        return 100 * num / den

    assert row["value"] == pytest.approx(mbe(range(n_m), range(n_f)), rel=1e-6)
    rng = np.random.default_rng(0)
    draw_m = rng.integers(0, n_m, size=(R, n_m))
    draw_f = rng.integers(0, n_f, size=(R, n_f))
    low, high = _plain_percentile([mbe(draw_m[r], draw_f[r]) for r in range(R)])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-6)
    wins = sum(int(x > y) for x in a_m for y in a_f)
    assert row["p_value_neutral"] == pytest.approx(binomtest(wins, n_m * n_f, 0.5).pvalue)


CONFIG = """
output: out
languages: [de]
models:
  - {name: S, checkpoints: [m1, m2]}
  - {name: B, model: m1}
contextual: {device: cpu, batch_size: 64, cache: false}
mbe: {corpora: {de: parallel.tsv}}
"""


def test_checkpoints_are_seeds(tiny: Path) -> None:
    (tiny / "cmp.yaml").write_text(CONFIG)
    (tiny / "mean.yaml").write_text(CONFIG + "correlation: {seed_units: mean}\n")
    result = run_compare(load_compare_config(tiny / "cmp.yaml"), show_progress=False)
    direct = [
        run_mbe_parallel(MaskedLM(str(tiny / m), OPTIONS), str(tiny / "parallel.tsv")).result.score
        for m in ("m1", "m2")
    ]
    assert direct[0] != direct[1]  # different seeds, different models
    scores = result.scores.set_index("model")["value"]
    assert scores["S#1"] == pytest.approx(direct[0]) and scores["S#2"] == pytest.approx(direct[1])
    assert scores["B"] == pytest.approx(direct[0])
    # each checkpoint is a unit of the correlated table
    assert list(result.table["model"]) == ["S#1", "S#2", "B"]
    assert list(result.table["mbe:aula"]) == pytest.approx([*direct, direct[0]])
    [seed] = result.seeds.to_dict("records")
    assert (seed["model"], seed["lang"], seed["measure"], seed["n_seeds"]) == (
        "S",
        "de",
        "mbe:aula",
        2,
    )
    assert seed["seed_mean"] == pytest.approx(statistics.mean(direct))
    assert seed["seed_sd"] == pytest.approx(statistics.stdev(direct))
    assert result.manifest["units"] == ["S#1", "S#2", "B"]
    # seed_units: mean -> one unit per model, the seed mean
    means = run_compare(load_compare_config(tiny / "mean.yaml"), show_progress=False).table
    assert list(means["model"]) == ["S", "B"]
    assert list(means["mbe:aula"]) == pytest.approx([statistics.mean(direct), direct[0]])
    assert isinstance(result.seeds, pd.DataFrame)
