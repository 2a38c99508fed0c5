"""``--log-items`` (issue 28 §2): one row per scored item in items.parquet / items.csv, the
same schema for every sentence measure, and each item's leave-one-out influence equal to the
measure recomputed without the item through its own public function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.test_crows import tiny_pairs
from tests.tiny_models import make_gest_mlm
from weatkit.cli import main
from weatkit.crows.score import crows_metric
from weatkit.items.log import ITEM_COLUMNS

LEADING = ITEM_COLUMNS[:6]
pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tiny models


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gest_mlm(tmp_path_factory.mktemp("items") / "mlm")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def check_schema(items: pd.DataFrame, options: list[str]) -> None:
    option_columns = [f"{kind}_{o}" for o in options for kind in ("text", "score")]
    assert list(items.columns) == [*LEADING, *option_columns, "outcome", "influence"]


# --- CrowS-Pairs ---------------------------------------------------------------------------


def crows_slow_influence(pairs: pd.DataFrame) -> list[float]:
    """The metric without each scored pair, by crows_metric on the table without it."""
    value = crows_metric(pairs, n_bootstrap=0)["metric"].iloc[0]
    return [
        crows_metric(pairs.drop(index=i), n_bootstrap=0)["metric"].iloc[0] - value
        for i in pairs.index
    ]


def test_crows_items(tiny: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    tiny_pairs().rename(columns={"direction": "stereo_antistereo"}).to_csv(data, index=False)
    out = tmp_path / "out"
    res = invoke("crows", "--model", str(tiny), "--data", str(data), "--out", str(out),
                 "--bootstrap", "0", "--no-progress", "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_parquet(out / "items.parquet")
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False, na_values=[""])
    check_schema(items, ["more", "less"])
    assert len(items) == len(pairs) == 5
    assert set(items.measure) == {"crows"} and set(items.method) == {"pll"}
    assert set(items.model) == {str(tiny)} and set(items.language) == {"en"}
    assert items.item_id.tolist() == [str(i) for i in pairs.pair_id]
    assert items.bias_type.tolist() == pairs.bias_type.tolist()
    assert items.text_more.tolist() == pairs.sent_more.tolist()
    assert np.array_equal(items.score_more, pairs.score_more)
    assert np.array_equal(items.score_less, pairs.score_less)
    expected = np.where(pairs.neutral, "tie", np.where(pairs.win == 1, "stereotype",
                                                       "anti-stereotype"))  # fmt: skip
    assert items.outcome.tolist() == expected.tolist()
    assert np.allclose(items.influence, crows_slow_influence(pairs))
    # --scores mode, as CSV
    res = invoke("crows", "--scores", str(out / "pairs.csv"), "--decimals", "3", "--out",
                 str(tmp_path / "again"), "--bootstrap", "0", "--log-items", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    again = pd.read_csv(tmp_path / "again" / "items.csv", keep_default_na=False)
    assert again.outcome.tolist() == items.outcome.tolist()
    assert set(again.method) == {"scores"}
    assert np.allclose(again.influence, items.influence)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log-items", "xlsx"], "weatkit: error: --log-items: unknown format 'xlsx': choose "
         "parquet or csv"),
        (["--log-items"], "weatkit: error: --log-items writes items.parquet into the output "
         "directory: give --out DIR"),
    ],
)  # fmt: skip
def test_bad_log_items_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    scores = tmp_path / "s.csv"
    pd.DataFrame({"bias_type": ["gender"], "direction": ["stereo"], "score_more": [1.0],
                  "score_less": [0.0]}).to_csv(scores, index=False)  # fmt: skip
    for command in (["crows", "--scores", str(scores)], ["gest", "--scores", str(scores)]):
        res = invoke(*command, *args)
        assert res.exit_code == 1
        assert res.output.strip() == message


# --- GEST and EuroGEST ---------------------------------------------------------------------


def slow_influence(table: pd.DataFrame, value_of) -> list[float]:
    """``value_of(table without row i) − value_of(table)`` per row; NaN where the measure
    refuses the reduced table (a stereotype left without items)."""
    from weatkit.errors import WeatkitError

    value = value_of(table)
    out = []
    for i in table.index:
        try:
            out.append(value_of(table.drop(index=i)) - value)
        except WeatkitError:
            out.append(np.nan)
    return out


def test_gest_items(tiny: Path, tmp_path: Path, data_dir: Path) -> None:
    import weatkit
    from weatkit.gest.data import STEREOTYPES

    out = tmp_path / "out"
    res = invoke("gest", "--model", str(tiny), "--kind", "mlm", "--templates", "0,3", "--limit",
                 "40", "--seed", "2", "--bootstrap", "0", "--out", str(out), "--no-progress",
                 "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_parquet(out / "items.parquet")
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False, na_values=[""])
    scored = scores[scores.score.notna()].reset_index(drop=True)
    check_schema(items, ["sentence"])
    assert len(items) == len(scored) == 80
    assert set(items.measure) == {"gest"} and set(items.language) == {"en"}
    assert items.method.tolist() == [f"template {t}" for t in scored.template]
    assert items.item_id.tolist() == [str(i) for i in scored.sample_id]
    assert items.bias_type.tolist() == [STEREOTYPES[s] for s in scored.stereotype]
    assert items.text_sentence.tolist() == scored.sentence.tolist()
    assert np.array_equal(items.score_sentence, scored.score)
    sign = np.sign(scored.score)
    assert (
        items.outcome.tolist()
        == np.where(sign > 0, "male", np.where(sign < 0, "female", "tie")).tolist()
    )
    slow = slow_influence(
        scored, lambda t: weatkit.gest(scores=t, n_bootstrap=0).measures[0].value
    )  # fmt: skip
    assert np.allclose(items.influence, slow, equal_nan=True)
    assert np.isfinite(items.influence).sum() > 60


def test_gest_items_of_a_scores_file(tmp_path: Path, data_dir: Path) -> None:
    import weatkit
    from weatkit.gest.data import load_gest

    gest = load_gest()
    table = gest.groupby("stereotype").head(3).sort_values("sample_id").reset_index(drop=True)
    table["score"] = np.random.default_rng(1).normal(size=len(table))
    table.loc[5, "score"] = np.nan  # unscored: no row
    table.to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "out"
    res = invoke("gest", "--scores", str(tmp_path / "s.csv"), "--bootstrap", "0", "--out",
                 str(out), "--log-items", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_csv(out / "items.csv", keep_default_na=False, na_values=[""])
    scored = table.dropna().reset_index(drop=True)
    assert len(items) == 47
    assert items.item_id.astype(str).tolist() == [str(i) for i in scored.sample_id]
    assert set(items.method) == {"scores"} and items.model.isna().all()  # no model: ""
    slow = slow_influence(scored, lambda t: weatkit.gest(scores=t, n_bootstrap=0).measures[0].value)
    assert np.allclose(items.influence, slow, equal_nan=True)


@pytest.fixture(scope="module")
def eurogest_mlm(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> str:
    """The tiny masked LM of tests/test_eurogest.py, which knows the words of its items."""
    from tests.test_eurogest import _subset, _words

    texts = [t for lang in ("it", "de") for s in [_subset(lang)] for t in
             (*s["masculine"], *s["feminine"])]  # fmt: skip
    root = tmp_path_factory.mktemp("eurogest")
    return str(make_gest_mlm(root / "mlm", extra=_words(texts), max_length=128))


def test_eurogest_items(eurogest_mlm: str, tmp_path: Path) -> None:
    from weatkit.gest.eurogest_metrics import eurogest_summary

    out = tmp_path / "out"
    res = invoke("gest", "--lang", "de", "--model", eurogest_mlm, "--limit", "48",
                 "--bootstrap", "0", "--no-cache", "--no-progress", "--out", str(out),
                 "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_parquet(out / "items.parquet")
    scores = pd.read_csv(out / "scores.csv", keep_default_na=False, na_values=[""])
    scored = scores[scores.r.notna()].reset_index(drop=True)
    check_schema(items, ["male", "female"])
    assert len(items) == len(scored) and len(scored) > 30
    assert set(items.measure) == {"eurogest"} and set(items.language) == {"de"}
    assert set(items.method) == {"code 2025-12"}
    assert items.text_male.tolist() == scored.masculine.tolist()
    assert np.array_equal(items.score_male, scored.score_m)
    assert np.array_equal(items.score_female, scored.score_f)
    r = scored.r.to_numpy()
    assert (
        items.outcome.tolist()
        == np.where(r > 0.5, "male", np.where(r < 0.5, "female", "tie")).tolist()
    )

    def g_s(table: pd.DataFrame) -> float:
        summary = eurogest_summary(table, lang="de", code="2025-12", n_bootstrap=0)
        return float(summary.summary["g_s"].iloc[0])

    assert np.allclose(items.influence, slow_influence(scored, g_s), equal_nan=True)


# --- StereoSet -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stereoset_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The tiny causal LM and data set of tests/test_stereoset_scoring.py."""
    import json

    from tests.test_stereoset_scoring import _dataset_json
    from tests.tiny_models import make_stereoset_glm

    root = tmp_path_factory.mktemp("stereoset")
    path = root / "tiny.json"
    path.write_text(json.dumps(_dataset_json()))
    return str(make_stereoset_glm(root / "glm")), path


def stereoset_slow_influence(dataset, predictions) -> list[float]:
    """ss_term of evaluate's last split (overall when both are scored) without each example."""
    from dataclasses import replace

    from weatkit.stereoset.metrics import evaluate

    def ss_term(data) -> float:
        table = evaluate(data, predictions)
        last = table[(table.split == table.split.iloc[-1]) & (table.bias_type == "overall")]
        return float(last.ss_term.iloc[0])

    value = ss_term(dataset)
    out = []
    for split in ("intrasentence", "intersentence"):
        examples = dataset.split(split)
        if not any(s.id in predictions.get(split, {}) for ex in examples for s in ex.sentences):
            continue
        for k in range(len(examples)):
            reduced = replace(dataset, **{split: examples[:k] + examples[k + 1 :]})
            out.append(ss_term(reduced) - value)
    return out


def test_stereoset_items(stereoset_files: tuple[str, Path], tmp_path: Path) -> None:
    from weatkit.stereoset import load_stereoset, read_predictions

    model, path = stereoset_files
    out = tmp_path / "out"
    res = invoke("stereoset", "--model", model, "--kind", "glm", "--dataset", str(path),
                 "--device", "cpu", "--no-cache", "--no-progress", "--out", str(out),
                 "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_parquet(out / "items.parquet")
    check_schema(items, ["stereotype", "anti_stereotype", "unrelated"])
    dataset = load_stereoset(path=path)
    predictions = read_predictions(out / "predictions.json")
    scores = predictions["intrasentence"]
    examples = dataset.intrasentence
    assert len(items) == len(examples) == 5
    assert items.item_id.tolist() == [ex.id for ex in examples]
    assert items.bias_type.tolist() == [ex.bias_type for ex in examples]
    assert set(items.method) == {"ss_term"} and set(items.model) == {model}
    for label in ("stereotype", "anti-stereotype", "unrelated"):
        column = label.replace("-", "_")
        assert items[f"text_{column}"].tolist() == [ex.sentence(label).sentence for ex in examples]
        expected = [scores[ex.sentence(label).id] for ex in examples]
        assert np.allclose(items[f"score_{column}"], expected, rtol=1e-12)
    pro = items.score_stereotype > items.score_anti_stereotype
    assert items.outcome.tolist() == np.where(pro, "stereotype", "anti-stereotype").tolist()
    assert np.allclose(items.influence, stereoset_slow_influence(dataset, predictions))


def test_stereoset_items_of_both_splits_with_ties(
    stereoset_files: tuple[str, Path], tmp_path: Path
) -> None:
    """A predictions file of both splits: the terms pool across them (ss_term of overall); a
    tie is its own outcome (counted as anti-stereotypical by SS)."""
    import json

    from weatkit.stereoset import load_stereoset, read_predictions

    _, path = stereoset_files
    dataset = load_stereoset(path=path)
    rng = np.random.default_rng(3)
    nested = {
        split: [{"id": s.id, "score": float(rng.integers(0, 3))} for _, s in
                dataset.sentences(split)]
        for split in ("intrasentence", "intersentence")
    }  # fmt: skip
    (tmp_path / "p.json").write_text(json.dumps(nested))
    out = tmp_path / "out"
    res = invoke("stereoset", "--predictions", str(tmp_path / "p.json"), "--dataset", str(path),
                 "--out", str(out), "--log-items", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_csv(out / "items.csv", keep_default_na=False, na_values=[""])
    predictions = read_predictions(tmp_path / "p.json")
    assert len(items) == 6
    diff = items.score_stereotype - items.score_anti_stereotype
    expected = np.where(diff > 0, "stereotype", np.where(diff < 0, "anti-stereotype", "tie"))
    assert items.outcome.tolist() == expected.tolist() and "tie" in expected
    assert np.allclose(items.influence, stereoset_slow_influence(dataset, predictions),
                       equal_nan=True)  # fmt: skip


# --- MBE -----------------------------------------------------------------------------------


@pytest.mark.parametrize("weight", ["cosine", "dot"])
def test_mbe_items(tiny: Path, data_dir: Path, tmp_path: Path, weight: str) -> None:
    from tests.test_mbe import _write_tsv
    from weatkit.mbe.score import evaluate_mbe
    from weatkit.sentence import MaskedLM

    out = tmp_path / "out"
    res = invoke("mbe", "--parallel", str(_write_tsv(tmp_path / "p.tsv")), "--model", str(tiny),
                 "--weight", weight, "--seed", "3", "--out", str(out), "--no-progress",
                 "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_parquet(out / "items.parquet")
    sentences = pd.read_csv(out / "sentences.csv")
    check_schema(items, ["male", "female"])
    assert len(items) == len(sentences) == 8
    assert items.item_id.tolist() == [f"{s}:{i}" for s, i in zip(sentences.set, sentences["index"],
                                                                  strict=True)]  # fmt: skip
    assert set(items.measure) == {"mbe"} and set(items.method) == {"aula"}
    assert set(items.bias_type) == {"gender"} and set(items.language) == {""}
    male = (sentences.set == "male").to_numpy()
    assert items.text_male.tolist() == np.where(male, sentences.target, "").tolist()
    assert np.array_equal(items.score_male[male], sentences.aula[male])
    assert items.score_male[~male].isna().all() and items.score_female[male].isna().all()
    assert np.array_equal(items.score_female[~male], sentences.aula[~male])
    # the score without each sentence, by evaluate_mbe on the sentences without it
    lm = MaskedLM(str(tiny))
    texts = {side: sentences.loc[sentences.set == side, "target"].tolist()
             for side in ("male", "female")}  # fmt: skip

    def score(m: list[str], f: list[str]) -> float:
        return evaluate_mbe(lm, lm.tokenize(m), lm.tokenize(f), weight=weight)[0].score

    value = score(texts["male"], texts["female"])
    slow = [score(texts["male"][:k] + texts["male"][k + 1 :], texts["female"]) - value
            for k in range(4)]  # fmt: skip
    slow += [score(texts["male"], texts["female"][:k] + texts["female"][k + 1 :]) - value
             for k in range(4)]  # fmt: skip
    assert np.allclose(items.influence, slow, atol=1e-9)
    # outcome: which side wins the (similarity-weighted) majority of the sentence's pairs
    scores = lm.unmasked(lm.tokenize([*texts["male"], *texts["female"]]))
    emb = scores.embedding.astype(np.float64)
    if weight == "cosine":
        emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    c = emb[:4] @ emb[4:].T
    won = c * (scores.aula[:4, None] > scores.aula[None, 4:])
    share = np.concatenate([won.sum(1) / c.sum(1), won.sum(0) / c.sum(0)])
    expected = np.where(share > 0.5, "male", np.where(share < 0.5, "female", "tie"))
    assert items.outcome.tolist() == expected.tolist()


# --- compare -------------------------------------------------------------------------------

COMPARE = """
output: out
languages: [en, de]
models:
  - {name: A, model: m1}
  - {name: B, model: m2}
contextual: {device: cpu, batch_size: 64, cache: false}
gest: {mlm_templates: [0, 2], eurogest: false}
stereoset: {}
crows: {method: pll}
mbe: {corpora: {de: parallel.tsv}}
"""


@pytest.fixture(scope="module")
def compare_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.compare_fixtures import make_char_mlm
    from tests.test_compare_uncertainty import PARALLEL

    root = tmp_path_factory.mktemp("compare-items")
    for seed in (1, 2):
        make_char_mlm(root / f"m{seed}", seed=seed)
    (root / "parallel.tsv").write_text("".join(f"{e}\t{d}\n" for e, d in PARALLEL))
    return root


#: CrowS pairs and StereoSet examples of the comparison: the first ones of the slices of
#: tests/test_compare_uncertainty.py, fewer (the comparison runs twice and model A's CrowS once
#: more; every property below holds for any number of items).
N_CROWS, N_STEREOSET = 20, 40


def _crows_slice(lang: str = "en") -> pd.DataFrame:
    from tests import test_compare_uncertainty as slices

    return slices._crows_slice(lang).iloc[:N_CROWS]


def _stereoset_slice(lang: str = "en"):
    import dataclasses

    from tests import test_compare_uncertainty as slices

    data = slices._stereoset_slice(lang)
    return dataclasses.replace(data, intrasentence=data.intrasentence[:N_STEREOSET])


@pytest.fixture
def sliced(monkeypatch: pytest.MonkeyPatch) -> None:
    """GEST: the slice of tests/test_compare_uncertainty.py; CrowS and StereoSet: the first
    items of its slices."""
    from tests import test_compare_uncertainty as slices
    from weatkit.crows import compare as crows_compare
    from weatkit.gest import compare as gest_compare
    from weatkit.stereoset import compare as stereoset_compare

    monkeypatch.setattr(crows_compare, "load_crows", _crows_slice)
    monkeypatch.setattr(gest_compare, "load_gest", slices._gest_slice)
    monkeypatch.setattr(stereoset_compare, "load_stereoset", _stereoset_slice)


def test_compare_items_of_every_job_and_after_a_resume(compare_dir: Path, sliced) -> None:
    import json

    from tests import test_compare_uncertainty as slices
    from weatkit.crossmethod import compare
    from weatkit.crows.score import score_crows
    from weatkit.sentence import MaskedLM

    (compare_dir / "cmp.yaml").write_text(COMPARE + "log_items: true\n")
    result = compare(compare_dir / "cmp.yaml", plot=False, show_progress=False)
    statuses = {job["status"] for job in result.manifest["jobs"]}
    assert statuses == {"ran"}
    items = pd.read_parquet(compare_dir / "out" / "items.parquet")
    pd.testing.assert_frame_equal(items, result.items)
    counts = items.groupby(["measure", "model", "language"]).size().to_dict()
    n_gest = 2 * len(slices._gest_slice())
    assert counts == {
        **{("crows", m, "en"): N_CROWS for m in "AB"},
        **{("gest", m, "en"): n_gest for m in "AB"},
        **{("stereoset", m, lang): N_STEREOSET for m in "AB" for lang in ("en", "de")},
        **{("mbe", m, "de"): 6 for m in "AB"},
    }
    # the rows are the builders' on the jobs' own per-item tables: CrowS of model A
    options = {"device": "cpu", "batch_size": 64, "cache": False}
    from weatkit.embeddings.contextual import ContextualOptions

    lm = MaskedLM(str(compare_dir / "m1"), ContextualOptions(**options))
    pairs = score_crows(lm, _crows_slice(), method="pll")
    crows = items[(items.measure == "crows") & (items.model == "A")].reset_index(drop=True)
    assert crows.item_id.tolist() == [str(i) for i in pairs.pair_id]
    assert np.allclose(crows.score_more, pairs.score_more)
    assert np.allclose(crows.influence, crows_slow_influence(pairs))
    values = result.scores.set_index(["model", "measure"]).value
    wins = (crows.outcome == "stereotype").mean() * 100
    assert wins == pytest.approx(values[("A", "crows:pll")])
    # a resumed comparison reuses every job and writes the same complete file, as CSV too
    (compare_dir / "csv.yaml").write_text(COMPARE + "log_items: csv\n")
    again = compare(compare_dir / "csv.yaml", plot=False, show_progress=False)
    assert {job["status"] for job in again.manifest["jobs"]} == {"reused"}
    assert json.loads((compare_dir / "out" / "manifest.json").read_text())["log_items"] == "csv"
    written = pd.read_csv(compare_dir / "out" / "items.csv", keep_default_na=False)
    assert len(written) == len(items)
    assert written.columns.tolist() == items.columns.tolist()
    assert np.allclose(written.influence, items.influence, equal_nan=True)
    # the report shows the log the manifest names (items.csv now; items.parquet is stale)
    from tests.test_report_html import table_rows
    from weatkit.report.html import write_report

    page = write_report(compare_dir / "out").read_text(encoding="utf-8")
    assert len(table_rows(page, "t-items")) == len(written)
    assert "items.csv</code>" in page or "items.csv<" in page
    # the same jobs not logging: their keys change (the records of logging jobs keep the logs)
    (compare_dir / "off.yaml").write_text(COMPARE)
    off = compare(compare_dir / "off.yaml", plot=False, show_progress=False)
    assert {job["status"] for job in off.manifest["jobs"]} == {"ran"}
    assert off.items is None
    page = write_report(compare_dir / "out").read_text(encoding="utf-8")
    assert 'id="t-items"' not in page  # logging off: the files of earlier runs are not shown


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("xlsx", "cmp.yaml: log_items: unknown format 'xlsx': choose parquet or csv"),
        ("3", "cmp.yaml: log_items: expected str, got int 3"),
    ],
)
def test_compare_log_items_is_checked(tmp_path: Path, value: str, message: str) -> None:
    from weatkit.crossmethod import load_compare_config
    from weatkit.errors import ConfigError

    (tmp_path / "cmp.yaml").write_text(COMPARE + f"log_items: {value}\n")
    with pytest.raises(ConfigError) as info:
        load_compare_config(tmp_path / "cmp.yaml")
    assert str(info.value).endswith(message)


def test_one_declaration_for_the_option_and_the_key(tmp_path: Path) -> None:
    from weatkit.config import schema
    from weatkit.crossmethod import load_compare_config
    from weatkit.items.log import ITEM_FORMATS, ItemLogOptions

    option = schema.ITEM_LOG["log_items"]
    assert option.default == ItemLogOptions().log_items is None
    assert option.choices == ITEM_FORMATS and option.flag == "--log-items"
    for value, expected in (("true", "parquet"), ("false", None), ("csv", "csv"), ("~", None)):
        (tmp_path / "cmp.yaml").write_text(COMPARE + f"log_items: {value}\n")
        assert load_compare_config(tmp_path / "cmp.yaml").log_items == expected
