"""``weatkit compare`` end to end on tiny models: every cell equals the method's own API.

Three masked LMs (:func:`tests.compare_fixtures.make_char_mlm`, different random weights) and
one causal LM, English and German. Each value of the joined table is checked against a direct
call of that method's public function on the same model; the correlations against scipy.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from tests.compare_fixtures import make_char_mlm
from tests.tiny_models import make_gest_glm
from weatkit.cli import main
from weatkit.crossmethod import compare, load_compare_config, run_compare, write_compare
from weatkit.crows.data import load_crows
from weatkit.crows.score import crows_metric, score_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.gest.aggregate import aggregate_scores
from weatkit.gest.data import load_gest
from weatkit.gest.scoring import score_samples
from weatkit.mbe.run import run_mbe_parallel
from weatkit.pipeline import RunConfig, run
from weatkit.sentence import MaskedLM
from weatkit.stereoset.data import load_stereoset
from weatkit.stereoset.metrics import evaluate
from weatkit.stereoset.scoring import score_intrasentence

pytestmark = pytest.mark.slow  # compare runs every method on four tiny models
OPTIONS = ContextualOptions(device="cpu", batch_size=64)
# German side: words of the tiny vocabulary (letters spell anything else)
PARALLEL = [
    ("He is strong.", "Er ist stark."),
    ("She cried often.", "Sie weinte oft."),
    ("The man said nothing.", "Der Mann sagte nichts."),
    ("The woman lifts heavy weights.", "Die Frau hebt schwere Gewichte."),
    ("My father loves flowers.", "Mein Vater liebt Blumen."),
    ("Her mother was sad.", "Ihre Mutter war traurig."),
    ("He and she talked.", "Er und sie sprachen."),
    ("It rained.", "Es regnete."),
]
CONFIG = """
output: out
languages: [en, de]
models:
  - {name: A, model: m1}
  - {name: B, model: m2}
  - {name: C, model: m3}
  - {name: G, model: glm}
contextual: {device: cpu, batch_size: 64}
weat: {lists: [weat], engine: {n_bootstrap: 200, n_permutations: 0}}
gest: {mlm_templates: [2], glm_templates: [0], eurogest: false}  # de: EuroGEST is slow
crows: {method: aul}
mbe: {corpora: {de: parallel.tsv}}
correlation: {n_bootstrap: 300, seed: 3}
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> Path:
    root = tmp_path_factory.mktemp("compare")
    for i in (1, 2, 3):
        make_char_mlm(root / f"m{i}", seed=i)
    make_gest_glm(root / "glm")
    (root / "parallel.tsv").write_text("".join(f"{e}\t{d}\n" for e, d in PARALLEL))
    (root / "cmp.yaml").write_text(CONFIG)
    return root


@pytest.fixture(scope="module")
def result(setup: Path):
    """The comparison, its job records kept in ``setup/out`` (the CLI test reuses them)."""
    return compare(setup / "cmp.yaml", output=setup / "out", plot=False, show_progress=False)


@functools.cache
def _direct_crows(model: str) -> float:
    per_pair = score_crows(MaskedLM(model, OPTIONS), load_crows(lang="en"), method="aul")
    summary = crows_metric(per_pair, n_bootstrap=0)
    return float(summary.loc[summary["bias_type"] == "overall", "metric"].iloc[0])


def _value(result, model: str, lang: str, measure: str) -> float:
    table = result.table
    row = table[(table["model"] == model) & (table["lang"] == lang)]
    return float(row[measure].iloc[0])


def test_each_model_is_loaded_once_for_all_its_methods(result) -> None:
    """WEAT vectors, GEST, CrowS, StereoSet and MBE of one model share one set of weights."""
    assert result.manifest["weights_loaded"] == {"A": 1, "B": 1, "C": 1, "G": 1}


def test_table_layout(result) -> None:
    table = result.table
    assert list(table[["model", "lang"]].itertuples(index=False, name=None)) == [
        (m, lang) for m in "ABCG" for lang in ("en", "de")
    ]
    measures = set(table.columns) - {"model", "lang"}
    assert measures == {
        "weat:weat1@0",
        "weat:weat2@0",
        "weat:weat1@-2",
        "weat:weat2@-2",
        "gest:g_s",
        "crows:aul",
        "mbe:aula",
    }
    assert result.n_failed == 0, result.skipped[result.skipped["status"] == "failed"].to_dict(
        "records"
    )
    long = result.scores
    assert set(long["method"]) == {"weat", "gest", "crows", "mbe"}
    assert long[["model", "lang", "measure"]].duplicated().sum() == 0


def test_not_applicable_combinations_are_recorded(result) -> None:
    skipped = result.skipped
    assert set(skipped["status"]) == {"not applicable"}
    reasons = {(r.model, r.lang, r.method): r.reason for r in skipped.itertuples()}
    assert "English only" in reasons[("A", "de", "gest")]
    assert "no lists for de" in reasons[("A", "de", "weat")]
    assert "not de" in reasons[("A", "de", "crows")]
    assert "no parallel corpus for en" in reasons[("A", "en", "mbe")]
    assert "needs a masked LM" in reasons[("G", "en", "crows")]
    assert "needs a masked LM" in reasons[("G", "de", "mbe")]


def test_every_reported_measure_is_registered(result) -> None:
    from weatkit.measures import get_measure

    for r in result.scores.itertuples():
        registered = get_measure("weat" if r.method == "weat" else r.measure)
        assert registered.family == r.method
    for r in result.skipped.itertuples():  # the registry's decisions, word for word
        if r.method in ("gest", "crows") and r.lang == "de":
            measure = "gest:g_s" if r.method == "gest" else "crows:aul"
            assert r.reason == get_measure(measure).not_applicable("mlm", "de")


def test_word_level_cells_equal_a_direct_run(setup: Path, result) -> None:
    for name, model in (("A", "m1"), ("G", "glm")):
        specs = parse_embeddings_specs(f"{name}=hf:{setup / model}@0,-2", OPTIONS)
        config = RunConfig(
            lists=("weat",),
            langs=("en",),
            embeddings=tuple(specs),
            contextual=OPTIONS,
            engine=load_compare_config(setup / "cmp.yaml").weat.engine,
        )
        summary = run(config, show_progress=False).summary
        for r in summary.itertuples():
            layer = r.embeddings.rsplit("@", 1)[1]
            got = _value(result, name, "en", f"weat:{r.test}@{layer}")
            assert got == pytest.approx(r.effect_size, rel=1e-9, nan_ok=True)  # G: all <unk>
    cis = result.scores[result.scores["method"] == "weat"]
    cis = cis[cis["model"] != "G"]  # the causal LM's word-level vocabulary: all <unk>
    assert (cis["ci_low"] <= cis["value"]).all() and (cis["value"] <= cis["ci_high"]).all()


def test_sentence_level_cells_equal_the_methods(setup: Path, result) -> None:
    samples = load_gest("1.0")
    for name, model, kind, template in (("B", "m2", "mlm", 2), ("G", "glm", "glm", 0)):
        sentences = samples["sentence"].tolist()
        scores = score_samples(
            str(setup / model), sentences, kind=kind, templates=[template], options=OPTIONS
        )
        merged = scores.merge(samples, on="sample_id")
        expected = aggregate_scores(merged, n_bootstrap=0).g_s
        assert _value(result, name, "en", "gest:g_s") == pytest.approx(expected, rel=1e-9)
    for name, model in (("A", "m1"), ("C", "m3")):
        assert _value(result, name, "en", "crows:aul") == pytest.approx(
            _direct_crows(str(setup / model))
        )
        mbe = run_mbe_parallel(MaskedLM(str(setup / model), OPTIONS), str(setup / "parallel.tsv"))
        assert _value(result, name, "de", "mbe:aula") == pytest.approx(mbe.result.score)


def test_correlations_equal_scipy(result) -> None:
    table = result.table
    corr = result.correlations
    assert set(corr["scope"]) == {"all", "en"}  # de has one measure with values
    pick = (corr["measure_x"] == "weat:weat1@0") & (corr["measure_y"] == "gest:g_s")
    row = corr[(corr["scope"] == "en") & pick].iloc[0]
    both = table[table["lang"] == "en"][["weat:weat1@0", "gest:g_s"]].dropna()
    assert row["n"] == len(both) >= 3
    assert row["spearman"] == pytest.approx(stats.spearmanr(*both.to_numpy().T).statistic)
    assert row["kendall"] == pytest.approx(stats.kendalltau(*both.to_numpy().T).statistic)
    assert row["spearman_ci_low"] <= row["spearman_ci_high"]
    crows = corr[(corr["measure_x"] == "weat:weat1@0") & (corr["measure_y"] == "crows:aul")]
    assert set(crows["n"]) == {3}  # the causal LM has no CrowS score


def test_printed_tables_fit_80_columns(result) -> None:
    """The real comparison printed at 80 columns: every value whole, nothing cut (…)."""
    from io import StringIO

    from rich.console import Console

    from weatkit.cli.compare import print_compare

    console = Console(width=80, file=StringIO(), record=True)
    print_compare(result, console)
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    cells = {cell.strip() for line in text.splitlines() for cell in line.split("│")}
    for row in result.table.itertuples(index=False):
        for value in row[2:]:
            if pd.notna(value):
                assert f"{value:.3f}" in cells
    flagged = result.correlations[result.correlations["n"] < result.correlations["n_min"]]
    assert not flagged.empty and "†" in text  # CrowS pairs: 3 units


def test_stereoset_cells(setup: Path) -> None:
    """StereoSet's row is the per-term intrasentence SS, LMS and ICAT (of the means)."""
    from weatkit.crossmethod.config import ModelEntry
    from weatkit.crossmethod.methods import MethodContext
    from weatkit.stereoset.compare import StereosetSection, stereoset_rows

    rows = stereoset_rows(
        ModelEntry("G", str(setup / "glm")), "glm", "en", StereosetSection(), MethodContext(OPTIONS)
    )
    dataset = load_stereoset("en")
    scores = score_intrasentence(str(setup / "glm"), dataset, kind="glm", options=OPTIONS)
    table = evaluate(dataset, {"intrasentence": scores})
    overall = table[(table["split"] == "intrasentence") & (table["bias_type"] == "overall")]
    got = {r["measure"]: r["value"] for r in rows}
    assert set(got) == {"stereoset:ss_term", "stereoset:lms_term", "stereoset:icat_term"}
    assert got["stereoset:ss_term"] == pytest.approx(overall["ss_term"].iloc[0])
    assert got["stereoset:lms_term"] == pytest.approx(overall["lms_term"].iloc[0])
    assert got["stereoset:icat_term"] == pytest.approx(overall["icat_term"].iloc[0])
    assert 0 <= got["stereoset:ss_term"] <= 100


def test_outputs_and_cli(setup: Path, result, tmp_path: Path) -> None:
    paths = write_compare(result, tmp_path / "direct")
    assert {p.name for p in paths} == {
        "scores.csv",
        "table.csv",
        "correlations.csv",
        "skipped.csv",
        "manifest.json",
        "correlations.png",
    }
    assert (tmp_path / "direct" / "correlations.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the CLI over the fixture's output: every job's record is reused, the table printed
    cli = CliRunner().invoke(
        main,
        ["compare", str(setup / "cmp.yaml"), "--out", str(setup / "out"), "--format", "csv"],
    )
    assert cli.exit_code == 0, cli.output
    printed = pd.read_csv(pd.io.common.StringIO(cli.stdout))
    written = pd.read_csv(setup / "out" / "table.csv")
    pd.testing.assert_frame_equal(printed, written)
    np.testing.assert_allclose(
        written.drop(columns=["model", "lang"]).to_numpy(float),
        result.table.drop(columns=["model", "lang"]).to_numpy(float),
        rtol=1e-6,
    )


def test_a_failing_model_is_reported_and_the_others_finish(setup: Path, tmp_path: Path) -> None:
    text = CONFIG.replace("{name: G, model: glm}", "{name: G, model: ./no-such-model}")
    text = text.replace("mbe: {corpora: {de: parallel.tsv}}\n", "").replace("[en, de]", "[en]")
    text = text.replace("  - {name: B, model: m2}\n  - {name: C, model: m3}\n", "")
    text = text.replace("weat: {lists: [weat], ", "weat: {lists: [weat], tests: [weat1], ")
    path = setup / "failing.yaml"
    path.write_text(text)
    out = tmp_path / "out"
    cli = CliRunner().invoke(main, ["compare", str(path), "--out", str(out), "--no-plot"])
    assert cli.exit_code == 1
    assert "failed" in cli.output and "no-such-model" in cli.output
    skipped = pd.read_csv(out / "skipped.csv")
    assert set(skipped.loc[skipped["model"] == "G", "status"]) == {"failed"}
    table = pd.read_csv(out / "table.csv")
    assert table.loc[table["model"] == "A", "crows:aul"].notna().all()
    assert not (out / "correlations.png").exists()


def test_a_library_error_inside_one_method_is_recorded_as_failed(
    setup: Path, tmp_path: Path
) -> None:
    """Bug 7e: an exception from torch/transformers (not a WeatkitError) raised while one model
    runs one method is that (model, method)'s ``failed`` row with a one-line reason; the other
    models finish and the command exits 1."""
    from transformers import BertConfig, BertForMaskedLM

    broken = make_char_mlm(tmp_path / "broken", seed=4)
    config = BertConfig.from_pretrained(broken)
    config.vocab_size = 8  # the tokenizer's ids run past the embedding table: IndexError
    BertForMaskedLM(config).save_pretrained(broken)
    path = tmp_path / "broken.yaml"
    path.write_text(
        "output: out\nlanguages: [en]\n"
        f"models: [{{name: A, model: {setup / 'm1'}}}, {{name: X, model: {broken}}}]\n"
        "contextual: {device: cpu, batch_size: 64}\n"
        "gest: {mlm_templates: [2]}\ncrows: {method: aul}\ncorrelation: {n_bootstrap: 0}\n"
    )
    out = tmp_path / "out"
    cli = CliRunner().invoke(main, ["compare", str(path), "--out", str(out), "--no-plot"])
    assert cli.exit_code == 1, cli.output
    skipped = pd.read_csv(out / "skipped.csv")
    failed = skipped[skipped["model"] == "X"]
    assert sorted(failed["method"]) == ["crows", "gest"]
    assert set(failed["status"]) == {"failed"}
    for reason in failed["reason"]:
        assert reason.startswith("IndexError: index out of range")
        assert "\n" not in reason
    assert (skipped["model"] == "A").sum() == 0
    table = pd.read_csv(out / "table.csv").set_index("model")
    assert table.loc["A", "crows:aul"] == pytest.approx(_direct_crows(str(setup / "m1")))
    assert np.isnan(table.loc["X", "crows:aul"]) and np.isnan(table.loc["X", "gest:g_s"])


def test_keyboard_interrupt_is_not_swallowed(
    setup: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from weatkit.crossmethod import execute

    def interrupted(*args: object) -> list:
        raise KeyboardInterrupt

    monkeypatch.setattr(execute, "weat_rows", interrupted)  # the first method
    config = load_compare_config(setup / "cmp.yaml")
    with pytest.raises(KeyboardInterrupt):
        run_compare(config, show_progress=False)


def test_compare_entry_point(setup: Path, tmp_path: Path) -> None:
    from weatkit.crossmethod import compare

    path = tmp_path / "small.yaml"
    path.write_text(
        f"output: {tmp_path / 'from-file'}\nlanguages: [en]\n"
        f"models: [{{name: A, model: {setup / 'm1'}}}]\ncontextual: {{device: cpu}}\n"
        "weat: {lists: [weat], tests: [weat1], layers: [0], "
        "engine: {n_bootstrap: 0, n_permutations: 0}}\n"
    )
    written = compare(path, plot=False)
    assert pd.read_csv(tmp_path / "from-file" / "table.csv").columns.tolist() == [
        "model",
        "lang",
        "weat:weat1@0",
    ]
    again = compare(load_compare_config(path), output=tmp_path / "other", write=False)
    assert not (tmp_path / "other").exists()
    pd.testing.assert_frame_equal(written.table, again.table)
    assert written.table["weat:weat1@0"].notna().all()


def test_bad_config_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\n")
    cli = CliRunner().invoke(main, ["compare", str(path)])
    assert cli.exit_code == 1
    assert "at least one method" in cli.output
    assert len(cli.output.strip().splitlines()) == 1


def test_a_comparison_that_computes_nothing_exits_1_with_the_reason(
    setup: Path, tmp_path: Path
) -> None:
    """GEST of a masked LM in German only (English GEST; EuroGEST off): every combination is
    not applicable (issue 37 §2: it exited 0 with empty tables)."""
    path = tmp_path / "none.yaml"
    path.write_text(
        f"output: {tmp_path / 'out'}\nlanguages: [de]\n"
        f"models: [{{name: A, model: {setup / 'm1'}}}]\ngest: {{eurogest: false}}\n"
    )
    cli = CliRunner().invoke(main, ["compare", str(path), "--no-plot"])
    assert cli.exit_code == 1, cli.output
    assert cli.output.strip().splitlines()[-1].startswith(
        "weatkit: error: nothing computed: no configured method applies to any model × language"
    )
