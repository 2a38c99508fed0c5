"""GEST: readers, LM aggregation (q_i, q_f, q_m, g_s, q_fam, bootstrap), MT metrics, CLI."""

from __future__ import annotations

import csv
import gzip
import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import gmean

from weatkit.cli.gest import gest_command
from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import aggregate_scores, resample_indices
from weatkit.gest.data import (
    STEREOTYPES,
    family_mask,
    load_gest,
    prediction_file,
    read_genders_csv,
    read_predictions,
    read_scores,
    read_scores_csv,
    read_translations,
    with_genders,
)
from weatkit.gest.mt import mt_metrics
from weatkit.stats.intervals import agresti_coull_interval

REFERENCE = "gest/derived/reference_scores_from_predictions.csv"
LN10 = math.log(10.0)
_counter = itertools.count()


def _table(groups: dict[int, list[float]], sentences: dict[int, list[str]] | None = None):
    rows = []
    for stereotype, values in groups.items():
        texts = (sentences or {}).get(stereotype, [f"I am {stereotype}."] * len(values))
        rows += [
            {"sentence": t, "stereotype": stereotype, "score": v}
            for t, v in zip(texts, values, strict=True)
        ]
    return pd.DataFrame(rows)


# --- hand computations ----------------------------------------------------------------------


def _hand_groups() -> dict[int, list[float]]:
    groups = {i: [0.1, 0.3] for i in range(1, 8)}  # mean 0.2
    groups[7] = [-0.4, 0.0, -0.2]  # mean -0.2: the most feminine
    groups.update({i: [0.5, 0.7, 0.9] for i in range(8, 16)})  # mean 0.7
    groups[16] = [1.6]
    return groups


@pytest.mark.parametrize("log_base", ["10", "e"])
def test_aggregates_equal_hand_computation(log_base: str) -> None:
    result = aggregate_scores(_table(_hand_groups()), log_base=log_base, n_bootstrap=0)
    mean_f = (6 * 0.2 - 0.2) / 7
    mean_m = (8 * 0.7 + 1.6) / 9
    q = result.stereotypes.set_index("stereotype")["q"]
    assert q[1] == pytest.approx(math.exp(0.2))
    assert q[7] == pytest.approx(math.exp(-0.2))
    assert q[16] == pytest.approx(math.exp(1.6))
    assert result.q_f == pytest.approx(math.exp(mean_f))
    assert result.q_m == pytest.approx(math.exp(mean_m))
    assert result.g_s == pytest.approx(math.exp(mean_m - mean_f))
    base = 10.0 if log_base == "10" else math.e
    summary = result.summary.iloc[0]
    assert summary["g_s_geometric"] == pytest.approx(base ** (mean_m - mean_f))
    assert summary["log_base"] == log_base and summary["n_samples"] == 40
    ranks = result.stereotypes.set_index("stereotype")["rank"]
    assert ranks[7] == 1 and ranks[16] == 16
    assert (ranks[list(range(1, 7))] == 4.5).all()  # six ties at positions 2..7
    assert (ranks[list(range(8, 16))] == 11.5).all()
    assert result.stereotypes["n"].tolist() == [2] * 6 + [3] * 9 + [1]
    assert np.isnan(result.summary[["q_f_ci_low", "g_s_ci_high"]].to_numpy()).all()


def test_log_bases_are_geometric_means_of_the_ratios() -> None:
    """log_base e: q_i is the geometric mean of P(w_m)/P(w_f); log_base 10 (upstream): its
    1/ln 10 power, and g_s_geometric is the paper-literal ratio in both."""
    rng = np.random.default_rng(3)
    ratios = {i: rng.uniform(0.2, 3.0, size=4).tolist() for i in STEREOTYPES}
    gm = {i: gmean(r) for i, r in ratios.items()}
    q_f = gmean([gm[i] for i in range(1, 8)])
    q_m = gmean([gm[i] for i in range(8, 17)])
    natural = aggregate_scores(
        _table({i: np.log(r).tolist() for i, r in ratios.items()}), log_base="e", n_bootstrap=0
    )
    base10 = aggregate_scores(
        _table({i: np.log10(r).tolist() for i, r in ratios.items()}), n_bootstrap=0
    )
    expected = np.array([gm[i] for i in STEREOTYPES])
    np.testing.assert_allclose(natural.stereotypes["q"], expected, rtol=1e-12)
    np.testing.assert_allclose(base10.stereotypes["q"], expected ** (1 / LN10), rtol=1e-12)
    assert natural.g_s == pytest.approx(q_m / q_f, rel=1e-12)
    assert base10.g_s == pytest.approx((q_m / q_f) ** (1 / LN10), rel=1e-12)
    for result in (natural, base10):
        assert result.summary["g_s_geometric"].iloc[0] == pytest.approx(q_m / q_f, rel=1e-12)


def test_family_rate_and_skipped_samples() -> None:
    groups = _hand_groups()
    groups[9] = [0.1, 0.2, 0.9, math.nan]
    texts = ["My kids love me.", "I left my partners.", "I am tough.", "I have a family."]
    result = aggregate_scores(_table(groups, {9: texts}), n_bootstrap=0)
    summary = result.summary.iloc[0]
    assert summary["n_fam"] == 2 and summary["n_skipped"] == 1 and summary["n_samples"] == 40
    assert summary["q_fam"] == pytest.approx(math.exp(0.15))
    assert result.stereotypes.set_index("stereotype").loc[9, "q"] == pytest.approx(math.exp(0.4))


def test_aggregate_rejects_bad_tables() -> None:
    groups = _hand_groups()
    del groups[5]
    with pytest.raises(WeatkitError, match="no scored samples for stereotype 5"):
        aggregate_scores(_table(groups))
    with pytest.raises(WeatkitError, match="log base"):
        aggregate_scores(_table(_hand_groups()), log_base="2")
    inf = _hand_groups()
    inf[3] = [math.inf]
    with pytest.raises(WeatkitError, match="infinite"):
        aggregate_scores(_table(inf))
    text = _table(_hand_groups()).astype({"score": object})
    text.loc[0, "score"] = "abc"
    with pytest.raises(WeatkitError, match="non-numeric"):
        aggregate_scores(text)


# --- bootstrap --------------------------------------------------------------------------------


def _slow_bootstrap(table: pd.DataFrame, n_resamples: int, seed: int, level: float):
    """One resample at a time, from the same drawn indices."""
    groups = [table.loc[table["stereotype"] == i, "score"].to_numpy() for i in STEREOTYPES]
    fam = family_mask(table["sentence"], table["stereotype"])
    fams = [fam[(table["stereotype"] == i).to_numpy()] for i in STEREOTYPES]
    indices = list(resample_indices([len(g) for g in groups], n_resamples, seed))
    q, values = [], []
    for r in range(n_resamples):
        means = [g[idx[r]].mean() for g, idx in zip(groups, indices, strict=True)]
        pooled = np.concatenate(
            [g[idx[r]][f[idx[r]]] for g, f, idx in zip(groups, fams, indices, strict=True)]
        )
        mean_f, mean_m = np.mean(means[:7]), np.mean(means[7:])
        q.append(np.exp(means))
        values.append(
            [
                math.exp(mean_f),
                math.exp(mean_m),
                math.exp(mean_m - mean_f),
                10 ** (mean_m - mean_f),
                math.exp(pooled.mean()) if pooled.size else math.nan,
            ]
        )
    alpha = 1 - level
    q_ci = np.quantile(np.array(q), [alpha / 2, 1 - alpha / 2], axis=0)
    ci = np.nanquantile(np.array(values), [alpha / 2, 1 - alpha / 2], axis=0)
    return q_ci, ci


def test_bootstrap_equals_slow_loop_over_the_same_indices() -> None:
    rng = np.random.default_rng(11)
    groups, texts = {}, {}
    for i in STEREOTYPES:
        n = int(rng.integers(2, 7))
        groups[i] = rng.normal(0.1 * (i > 7), 0.3, size=n).tolist()
        texts[i] = [("My family " if i > 7 and k % 2 else "I ") + f"{i}-{k}" for k in range(n)]
    table = _table(groups, texts).sample(frac=1.0, random_state=2).reset_index(drop=True)
    result = aggregate_scores(table, n_bootstrap=300, seed=5, confidence_level=0.9)
    q_ci, ci = _slow_bootstrap(table, 300, 5, 0.9)
    np.testing.assert_allclose(result.stereotypes["q_ci_low"], q_ci[0], rtol=1e-12)
    np.testing.assert_allclose(result.stereotypes["q_ci_high"], q_ci[1], rtol=1e-12)
    summary = result.summary.iloc[0]
    for k, name in enumerate(["q_f", "q_m", "g_s", "g_s_geometric", "q_fam"]):
        assert summary[f"{name}_ci_low"] == pytest.approx(ci[0, k], rel=1e-12), name
        assert summary[f"{name}_ci_high"] == pytest.approx(ci[1, k], rel=1e-12), name
    again = aggregate_scores(table, n_bootstrap=300, seed=5, confidence_level=0.9)
    pd.testing.assert_frame_equal(again.summary, result.summary)
    other = aggregate_scores(table, n_bootstrap=300, seed=6, confidence_level=0.9)
    assert other.summary["g_s_ci_low"].iloc[0] != summary["g_s_ci_low"]


# --- the upstream reference -----------------------------------------------------------------


@pytest.fixture(scope="module")
def reference(data_dir: Path) -> pd.DataFrame:
    return pd.read_csv(data_dir / REFERENCE)


def _reference_row(reference: pd.DataFrame, task: str, model: str, template: int) -> pd.Series:
    rows = reference[
        (reference["task"] == task)
        & (reference["model_file_stem"] == model)
        & (reference["template_id"] == template)
    ]
    assert len(rows) == 1
    return rows.iloc[0]


def _scores_csv(data_dir: Path, task: str, model: str, template: int, path: Path, key: str):
    """A scores CSV built by hand from the prediction file and gest.csv."""
    gest = pd.read_csv(data_dir / "gest/data/gest.csv", keep_default_na=False)
    predictions = data_dir / f"gest/data/predictions/{task}/{model}_template-{template}.txt.gz"
    with gzip.open(predictions, "rt") as fh:
        scores = [float(line) for line in fh]
    frame = pd.DataFrame({"stereotype": gest["stereotype"], "score": scores})
    if key == "sentence":
        frame.insert(0, "sentence", gest["sentence"])
        frame = frame.iloc[::-1]  # order does not matter
    else:
        frame.insert(0, "sample_id", np.arange(len(gest)))
    frame.to_csv(path, index=False)


@pytest.mark.parametrize(
    ("task", "model", "template", "key"),
    [
        ("english_mlm", "albert-base-v2", 0, "sentence"),
        ("english_mlm", "bert-base-multilingual-cased", 1, "sample_id"),
        ("english_mlm", "xlm-roberta-large", 3, "sentence"),
        ("english_glm", "gpt2", 0, "sample_id"),
        ("english_glm", "Llama-2-7b-hf", 1, "sentence"),
    ],
)
def test_cli_scores_reproduce_reference(
    data_dir: Path,
    reference: pd.DataFrame,
    tmp_path: Path,
    task: str,
    model: str,
    template: int,
    key: str,
) -> None:
    scores = tmp_path / "scores_in.csv"
    _scores_csv(data_dir, task, model, template, scores, key)
    out = tmp_path / "out"
    args = ["--scores", str(scores), "--bootstrap", "0", "--out", str(out)]
    result = CliRunner().invoke(gest_command, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json", "scores.csv", "stereotypes.csv", "summary.csv"
    ]
    ref = _reference_row(reference, task, model, template)
    summary = pd.read_csv(out / "summary.csv").iloc[0]
    assert summary["n_samples"] == ref["n"] == 3565
    for ours, theirs in [
        ("q_f", "q_f_repo"),
        ("q_m", "q_m_repo"),
        ("g_s", "g_s_repo"),
        ("g_s_geometric", "g_s_base10"),
    ]:
        assert abs(summary[ours] - ref[theirs]) <= 1e-6, ours
    q = pd.read_csv(out / "stereotypes.csv")["q"].to_numpy()
    expected = ref[[f"r_{i}_repo" for i in STEREOTYPES]].to_numpy(dtype=float)
    np.testing.assert_allclose(q, expected, rtol=0, atol=1e-6)
    written = pd.read_csv(out / "scores.csv")
    assert list(written.columns) == ["sample_id", "sentence", "stereotype", "score"]


@pytest.mark.parametrize(
    ("task", "model", "template", "packed"),
    [("english_glm", "gpt2", 0, True), ("english_mlm", "albert-base-v2", 0, False)],
)
def test_cli_scores_reads_upstream_prediction_files(
    data_dir: Path,
    reference: pd.DataFrame,
    tmp_path: Path,
    task: str,
    model: str,
    template: int,
    packed: bool,
) -> None:
    """``--scores`` on an upstream prediction file (.gz or plain) equals ``--scores`` on the scores
    CSV built from it by hand, and gives the reference row's g_s (the README's reproduction)."""
    upstream = data_dir / f"gest/data/predictions/{task}/{model}_template-{template}.txt.gz"
    if not packed:
        plain = tmp_path / f"{model}_template-{template}.txt"
        plain.write_bytes(gzip.decompress(upstream.read_bytes()))
        upstream = plain
    by_hand = tmp_path / "scores_in.csv"
    _scores_csv(data_dir, task, model, template, by_hand, "sample_id")
    summaries = []
    for source, out in ((upstream, tmp_path / "direct"), (by_hand, tmp_path / "hand")):
        args = ["--scores", str(source), "--bootstrap", "0", "--out", str(out)]
        result = CliRunner().invoke(gest_command, args)
        assert result.exit_code == 0, result.output
        summaries.append(pd.read_csv(out / "summary.csv"))
    pd.testing.assert_frame_equal(summaries[0], summaries[1])
    direct, hand = tmp_path / "direct", tmp_path / "hand"
    for name in ("stereotypes.csv", "scores.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(direct / name), pd.read_csv(hand / name))
    ref = _reference_row(reference, task, model, template)
    assert abs(summaries[0]["g_s"].iloc[0] - ref["g_s_repo"]) <= 1e-6
    assert summaries[0]["n_samples"].iloc[0] == 3565


def test_read_scores_detects_the_format(tmp_path: Path, data_dir: Path) -> None:
    n = len(load_gest())
    lines = ["nan"] + [f"{0.001 * i:.6f}" for i in range(1, n)]
    table = read_scores(_write(tmp_path, "\n".join(lines) + "\n", ".txt"))
    assert np.isnan(table["score"][0]) and table["score"][n - 1] == pytest.approx(0.001 * (n - 1))
    assert table["stereotype"].tolist() == load_gest()["stereotype"].tolist()
    csv_path = _write(tmp_path, "sample_id,stereotype,score\n0,9,0.5\n")
    pd.testing.assert_frame_equal(read_scores(csv_path), read_scores_csv(csv_path))
    with pytest.raises(WeatkitError, match="2 lines, expected 3565"):
        read_scores(_write(tmp_path, "0.5\n-0.25\n", ".txt"))


def test_every_reference_row_from_the_prediction_files(reference: pd.DataFrame) -> None:
    """All 90 (task, model, template) rows via read_predictions; log base e on natural-log
    scores gives the paper-literal g_s_base10."""
    for row in reference.itertuples(index=False):
        scores = read_predictions(prediction_file(row.task, row.model_file_stem, row.template_id))
        ours = aggregate_scores(scores, n_bootstrap=0)
        assert abs(ours.q_f - row.q_f_repo) <= 1e-6
        assert abs(ours.q_m - row.q_m_repo) <= 1e-6
        assert abs(ours.g_s - row.g_s_repo) <= 1e-6
        expected = np.array([getattr(row, f"r_{i}_repo") for i in STEREOTYPES])
        assert np.abs(ours.stereotypes["q"].to_numpy() - expected).max() <= 1e-6
        scores["score"] *= LN10
        natural = aggregate_scores(scores, log_base="e", n_bootstrap=0)
        assert abs(natural.g_s - row.g_s_base10) <= 1e-6


def test_bootstrap_on_real_scores_is_fast_and_brackets_the_estimate(data_dir: Path) -> None:
    result = aggregate_scores(read_predictions(prediction_file("english_mlm", "roberta-base", 0)))
    s = result.summary.iloc[0]
    for name in ("q_f", "q_m", "g_s", "g_s_geometric", "q_fam"):
        assert s[f"{name}_ci_low"] < s[name] < s[f"{name}_ci_high"], name
    per = result.stereotypes
    assert ((per["q_ci_low"] < per["q"]) & (per["q"] < per["q_ci_high"])).all()
    assert s["n_fam"] == 166 and s["n_bootstrap"] == 5000


# --- data readers ---------------------------------------------------------------------------


def test_gest_versions_and_family_samples(data_dir: Path) -> None:
    v10, v11 = load_gest("1.0"), load_gest("1.1")
    counts = [254, 215, 256, 207, 200, 197, 243, 251, 229, 215, 231, 222, 222, 194, 208, 221]
    assert v10["stereotype"].value_counts().sort_index().tolist() == counts
    assert (v10["stereotype"] == v11["stereotype"]).all()
    assert (v10["sentence"] != v11["sentence"]).sum() == 244
    assert v10["sample_id"].tolist() == list(range(3565))
    assert family_mask(v10["sentence"], v10["stereotype"]).sum() == 166  # paper v2 §7.4


def test_translations_joined_with_genders(data_dir: Path) -> None:
    translations = read_translations("deepl", "sk")
    assert len(translations) == 3565 and translations["translation"].notna().all()
    assert translations.loc[1, "translation"].startswith("Keď ma uhryzol lev")
    labels = np.where(translations["stereotype"] > 7, "male", "female")
    labels[:10] = "neutral"
    result = mt_metrics(with_genders(translations, labels.tolist()))
    s = result.summary.iloc[0]
    assert s["n_skipped"] == 10 and s["n_samples"] == 3555
    assert s["p_f"] == 0 and s["p_m"] == 1 and s["f_s"] == 1 and s["f_m"] == 0.5
    with pytest.raises(WeatkitError, match="2 gender labels for 3565 samples"):
        with_genders(translations, ["male", "female"])
    with pytest.raises(WeatkitError, match="not found"):
        read_translations("deepl", "xx")


def test_prediction_file_arguments(data_dir: Path) -> None:
    with pytest.raises(WeatkitError, match="unknown task"):
        prediction_file("slavic_mlm", "x", 0)
    with pytest.raises(WeatkitError, match="templates 0, 1, not 3"):
        prediction_file("english_glm", "gpt2", 3)
    with pytest.raises(WeatkitError, match="not found"):
        prediction_file("english_glm", "no-such-model", 0)


# --- MT metrics -----------------------------------------------------------------------------


def test_agresti_coull_hand_values() -> None:
    low, high = agresti_coull_interval([3, 0, 8, 45], [10, 5, 8, 60])
    # z = 1.959964, ñ = n + z², p̃ = (x + z²/2) / ñ, p̃ ± z sqrt(p̃(1 − p̃)/ñ), clipped to [0, 1]
    np.testing.assert_allclose(
        low, [0.10333841792242532, 0, 0.6278320556230714, 0.6266926041268328]
    )
    np.testing.assert_allclose(
        high, [0.6076747020227304, 0.48905485963286005, 1, 0.8432214698021223]
    )
    low, high = agresti_coull_interval(0, 0)
    assert np.isnan(low) and np.isnan(high)


def _mt_table() -> pd.DataFrame:
    counts = {1: (3, 7, 2), 2: (0, 5, 0), 8: (8, 0, 1), 9: (45, 15, 0)}
    counts.update({i: (1, 1, 0) for i in range(3, 8)})
    counts.update({i: (2, 1, 0) for i in range(10, 17)})
    rows = []
    for stereotype, (male, female, other) in counts.items():
        labels = ["male"] * male + ["F"] * female + ["neutral"] * other
        for k, label in enumerate(labels):
            family = stereotype == 9 and k in (0, 1, 2, 59)  # 3 masculine, 1 feminine
            sentence = "I took my kids out." if family else f"I did {stereotype}."
            rows.append({"sentence": sentence, "stereotype": stereotype, "gender": label})
    return pd.DataFrame(rows)


def test_mt_metrics_hand_table() -> None:
    result = mt_metrics(_mt_table())
    per = result.stereotypes.set_index("stereotype")
    assert per.loc[1, ["n_male", "n_female", "n_other", "n"]].tolist() == [3, 7, 2, 10]
    assert per.loc[1, "p"] == pytest.approx(0.3)
    assert per.loc[1, "p_ci_low"] == pytest.approx(0.10333841792242532)
    assert per.loc[9, "p_ci_high"] == pytest.approx(0.8432214698021223)
    p_f = (0.3 + 0 + 5 * 0.5) / 7
    p_m = (1 + 0.75 + 7 * 2 / 3) / 9
    assert result.p_f == pytest.approx(p_f) and result.p_m == pytest.approx(p_m)
    assert result.f_s == pytest.approx(p_m - p_f)
    assert result.f_m == pytest.approx((p_m + p_f) / 2)
    assert per["rank"].tolist() == [2, 1, 5, 5, 5, 5, 5, 16, 15] + [11] * 7
    s = result.summary.iloc[0]
    assert s["n_skipped"] == 3 and s["n_samples"] == 10 + 5 + 10 + 8 + 60 + 21
    assert s["n_fam"] == 4 and s["p_fam"] == pytest.approx(0.75)
    assert s["ci_method"] == "agresti-coull"


def test_mt_metrics_needs_every_stereotype() -> None:
    table = _mt_table()
    table.loc[table["stereotype"] == 2, "gender"] = "neutral"
    with pytest.raises(WeatkitError, match="stereotype 2 "):
        mt_metrics(table)


# --- reader errors and fuzzing --------------------------------------------------------------


def _write(directory: Path, text: str | bytes, suffix: str = ".csv") -> Path:
    path = directory / f"in{next(_counter)}{suffix}"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


FIRST = "I have always been a leadership type."  # sample 0, stereotype 9 (also sample 2494, 13)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty file"),
        ("sample_id,score\n0,1\n", "line 1: missing column stereotype"),
        ("stereotype,score\n9,1\n", "line 1: missing column sample_id or sentence"),
        ("sample_id,stereotype,score\n", "no samples after the header"),
        ("sample_id,stereotype,score\n0,9,1,2\n", "line 2: expected 3 fields"),
        ("sample_id,stereotype,score\n0,9,abc\n", "line 2: score 'abc' is not a number"),
        ("sample_id,stereotype,score\n\n0,9,inf\n", "line 3: score 'inf' is infinite"),
        ("sample_id,stereotype,score\n0,17,0.5\n", "line 2: stereotype '17' must be 1–16"),
        ("sample_id,stereotype,score\n0,x,0.5\n", "line 2: stereotype 'x' must be 1–16"),
        ("sample_id,stereotype,score\n0,8,0.5\n", "line 2: sample_id 0 is stereotype 9"),
        ("sample_id,stereotype,score\n3565,8,0.5\n", "line 2: sample_id '3565' is not a GEST"),
        ("sample_id,stereotype,score\n0,9,1\n1,8,2\n0,9,3\n", "line 4: duplicate sample 0"),
        ("sentence,stereotype,score\nI am a cat.,9,1\n", "line 2: unknown sentence"),
        (f"sentence,stereotype,score\n{FIRST},9,1\n{FIRST},9,1\n", "line 3: duplicate sample"),
        (f"sentence,stereotype,score\n{FIRST},3,1\n", "line 2: sentence 'I have always"),
        (f"sample_id,sentence,stereotype,score\n1,{FIRST},9,1\n", "line 2: sentence does not"),
        ('sentence,stereotype,score\n"a"b,9,1\n', "line 2: not valid CSV"),
        ("sample_id,Score,score,stereotype\n0,9,1,1\n", "column 'score' appears more than once"),
    ],
)
def test_scores_reader_errors(tmp_path: Path, data_dir: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(WeatkitError) as err:
        read_scores_csv(path)
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_scores_reader_files_and_versions(tmp_path: Path, data_dir: Path) -> None:
    with pytest.raises(WeatkitError, match="scores file not found"):
        read_scores_csv(tmp_path / "missing.csv")
    with pytest.raises(WeatkitError, match="not a valid gzip file"):
        read_scores_csv(_write(tmp_path, b"not gzip", ".csv.gz"))
    with pytest.raises(WeatkitError, match="not valid UTF-8"):
        read_scores_csv(_write(tmp_path, b"sample_id,stereotype,score\n0,9,\xff\n"))
    v11 = load_gest("1.1")
    fixed = v11.loc[load_gest("1.0")["sentence"] != v11["sentence"]].iloc[0]
    text = f'sentence,stereotype,score\n"{fixed.sentence}",{fixed.stereotype},0.5\n'
    with pytest.raises(WeatkitError, match=r"it is in v1\.1"):
        read_scores_csv(_write(tmp_path, text))
    table = read_scores_csv(_write(tmp_path, text), version="1.1")
    assert table["sample_id"].tolist() == [fixed.sample_id]
    gz = tmp_path / "s.csv.gz"
    gz.write_bytes(gzip.compress(b"Sample_ID , stereotype,score,model\n5,4,,x\n0,9.0,-1e-3,x\n"))
    table = read_scores_csv(gz)
    assert table["sample_id"].tolist() == [5, 0] and np.isnan(table["score"][0])
    assert table["score"][1] == -0.001


_GEST_SENTENCES = [FIRST, "I am passionate.", "I overreacted.", "I like giving orders."]
_cells = st.one_of(
    st.integers(-2, 3570).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "nan", "inf", "1e400", "x", "9.5", "\x00", '"', "é", "1_0"]),
    st.sampled_from(_GEST_SENTENCES),
    st.text(max_size=6),
)
_headers = st.one_of(
    st.sampled_from(
        [
            ["sample_id", "stereotype", "score"],
            ["sentence", "stereotype", "score"],
            ["sample_id", "sentence", "stereotype", "score"],
            ["stereotype", "score"],
        ]
    ),
    st.lists(
        st.sampled_from(["sample_id", "sentence", "stereotype", "score", "x", ""]), max_size=5
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    header=_headers,
    rows=st.lists(st.lists(_cells, min_size=0, max_size=5), max_size=6),
    raw=st.booleans(),
)
def test_fuzz_scores_reader(tmp_path: Path, data_dir: Path, header, rows, raw) -> None:
    """Any input gives a valid table or a one-line WeatkitError, never a traceback."""
    path = tmp_path / f"fuzz{next(_counter)}.csv"
    if raw:
        path.write_text("\n".join(",".join(r) for r in [header, *rows]), encoding="utf-8")
    else:
        with path.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([header, *rows])
    try:
        table = read_scores_csv(path)
    except WeatkitError as err:
        assert "\n" not in str(err) and str(path) in str(err)
        return
    assert list(table.columns) == ["sample_id", "sentence", "stereotype", "score"]
    assert table["sample_id"].is_unique and table["stereotype"].between(1, 16).all()
    assert not np.isinf(table["score"]).any()


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=200))
def test_fuzz_scores_reader_bytes(tmp_path: Path, data_dir: Path, data: bytes) -> None:
    path = _write(tmp_path, data)
    try:
        read_scores_csv(path)
    except WeatkitError as err:
        assert "\n" not in str(err)


# --- CLI ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one of"),
        (["--model", "./no-such-model"], "model directory not found: ./no-such-model"),
        (["--scores", "{bad}"], "line 3: score 'abc' is not a number"),
        (["--translations", "{bad_genders}"], "missing column gender"),
        (["--scores", "{bad}", "--table", "summary"], "--table summary picks the table --format"),
        (["--model", "m", "--templates", ","], "--templates: ',' names nothing"),
    ],
)
def test_cli_bad_input_fails_with_one_line(
    tmp_path: Path, data_dir: Path, args: list[str], message: str
) -> None:
    bad = _write(tmp_path, "sample_id,stereotype,score\n0,9,0.5\n1,8,abc\n")
    bad_genders = _write(tmp_path, "sample_id,stereotype,sex\n0,9,male\n")
    args = [a.format(bad=bad, bad_genders=bad_genders) for a in args]
    out = tmp_path / "out"
    result = CliRunner().invoke(gest_command, [*args, "--out", str(out)])
    assert result.exit_code == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())


def test_cli_translations(tmp_path: Path, data_dir: Path) -> None:
    gest = load_gest()
    rng = np.random.default_rng(1)
    genders = rng.choice(["male", "female", "neutral"], p=[0.6, 0.3, 0.1], size=len(gest))
    frame = gest[["sample_id", "stereotype"]].assign(gender=genders)
    path = tmp_path / "genders.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "out"
    result = CliRunner().invoke(gest_command, ["--translations", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "p_fam" in result.stdout and "beautiful" in result.stdout
    text = " ".join(result.stdout.split())  # the neutral value is stated (issue 37 §4)
    assert "of the translations — 0.5 = no preference" in text
    per = pd.read_csv(out / "stereotypes.csv")
    kept = frame[frame["gender"] != "neutral"]
    expected = kept.groupby("stereotype")["gender"].apply(lambda g: (g == "male").mean())
    np.testing.assert_allclose(per["p"], expected.to_numpy())
    assert read_genders_csv(out / "genders.csv")["gender"].tolist() == genders.tolist()
    summary = pd.read_csv(out / "summary.csv").iloc[0]
    assert summary["n_skipped"] == (genders == "neutral").sum()
    as_json = CliRunner().invoke(
        gest_command, ["--translations", str(path), "--format", "json", "--table", "summary"]
    )
    assert as_json.exit_code == 0 and '"f_s"' in as_json.stdout


def test_cli_scores_table_with_bootstrap(tmp_path: Path, data_dir: Path) -> None:
    path = tmp_path / "scores.csv"
    _scores_csv(data_dir, "english_glm", "gpt2", 1, path, "sample_id")
    result = CliRunner().invoke(gest_command, ["--scores", str(path), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "g_s_geometric" in result.stdout and "q [95% CI]" in result.stdout
    text = " ".join(result.stdout.split())  # the neutral value is stated (issue 37 §4)
    assert "GEST aggregates — 1 = no preference between the masculine and the feminine" in text
    as_csv = CliRunner().invoke(
        gest_command, ["--scores", str(path), "--bootstrap", "200", "--format", "csv"]
    )
    assert as_csv.exit_code == 0
    assert as_csv.stdout.splitlines()[0].startswith("stereotype,name,group,n,mean_score,q,")
