"""``weatkit compare``'s validity section: ``validity.csv`` against a direct computation.

Six small word-vector "models" (random vectors, seeded) scored with WEAT, RND and ECT on a
gender and a race test of a list file: three methods × two traits. Every number of
``validity.csv`` is recomputed here from ``table.csv``: the kind of each pair by its traits and
methods, Spearman's ρ with scipy, the exact permutation p over all 6! pairings by brute force,
and the percentile bootstrap interval as a plain loop over the documented plan.
"""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

from weatkit.cli import main

LISTS = """\
tests:
  - {test: gender, lang: en, list_id: toy, X: [he, him, man, boy, father],
     Y: [she, her, woman, girl, mother], A: [office, salary, career, boss, work],
     B: [home, family, kids, wedding, cousin]}
  - {test: race, lang: en, list_id: toy, X: [adam, harry, roger, alan, ryan],
     Y: [jamal, leroy, tyrone, lamar, darnell], A: [love, peace, happy, gift, friend],
     B: [hatred, war, ugly, filth, poison]}
"""
WORDS = sorted({w for t in yaml.safe_load(LISTS)["tests"] for s in "XYAB" for w in t[s]})
CONFIG = """\
output: out
languages: [en]
models: [{models}]
weat:
  lists: [lists.yaml]
  metrics: [weat, rnd, ect]
  engine: {{n_bootstrap: 20, n_permutations: 0}}
correlation: {{n_bootstrap: 200, seed: 3}}
"""
TRAITS = 'validity: {traits: {"*gender*": gender, "*race*": race}}\n'
N_MODELS = 6


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare-validity")
    (root / "lists.yaml").write_text(LISTS, encoding="utf-8")
    for m in range(N_MODELS):
        rng = np.random.default_rng(m)
        rows = [f"{w} " + " ".join(f"{v:.6f}" for v in rng.normal(size=8)) for w in WORDS]
        (root / f"m{m}.vec").write_text(f"{len(WORDS)} 8\n" + "\n".join(rows) + "\n")
    models = ", ".join(f"{{name: M{m}, path: m{m}.vec}}" for m in range(N_MODELS))
    (root / "plain.yaml").write_text(CONFIG.format(models=models), encoding="utf-8")
    (root / "cmp.yaml").write_text(CONFIG.format(models=models) + TRAITS, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ran(study: Path) -> tuple[object, Path]:
    out = study / "out"
    cli = CliRunner().invoke(main, ["compare", str(study / "cmp.yaml"), "--no-plot", "-v"])
    assert cli.exit_code == 0, cli.output
    return cli, out


def _trait(column: str) -> str:
    return "gender" if "gender" in column else "race"


def test_validity_csv_equals_a_direct_computation(ran) -> None:
    _, out = ran
    validity = pd.read_csv(out / "validity.csv", keep_default_na=False, na_values=[""])
    table = pd.read_csv(out / "table.csv")
    scores = pd.read_csv(out / "scores.csv")
    method = scores.drop_duplicates("measure").set_index("measure")["method"]
    measures = [c for c in table.columns if c not in ("model", "lang")]
    assert set(method[measures]) == {"weat", "rnd", "ect"}
    n = len(measures)
    assert len(validity) == n * (n - 1) // 2
    rows = np.random.default_rng(3).integers(0, N_MODELS, (200, N_MODELS))  # the plan
    for r in validity.itertuples():
        x, y = table[r.measure_x].to_numpy(), table[r.measure_y].to_numpy()
        assert (r.trait_x, r.method_x) == (_trait(r.measure_x), method[r.measure_x])
        same_trait, same_method = r.trait_x == r.trait_y, r.method_x == r.method_y
        if same_trait:
            assert r.kind == ("monotrait-monomethod" if same_method else "convergent")
        else:
            assert r.kind == f"heterotrait-{'mono' if same_method else 'hetero'}method"
        rho = stats.spearmanr(x, y).statistic
        assert r.n == N_MODELS and r.value == pytest.approx(rho)
        null = np.array([stats.spearmanr(x[list(p)], y).statistic for p in permutations(range(6))])
        p = min(1.0, 2 * min(np.mean(null >= rho - 1e-12), np.mean(null <= rho + 1e-12)))
        assert r.p == pytest.approx(p)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = [stats.spearmanr(x[i], y[i]).statistic for i in rows]
        boot = np.array(boot)[np.isfinite(boot)]
        assert (r.ci_low, r.ci_high) == pytest.approx(tuple(np.quantile(boot, [0.025, 0.975])))
        assert r.verdict.startswith(f"{r.kind}: ρ = {rho:.2f}")


def test_the_verdicts_of_convergent_pairs_are_printed(ran) -> None:
    cli, out = ran
    validity = pd.read_csv(out / "validity.csv")
    convergent = validity[validity["kind"] == "convergent"]
    assert len(convergent) > 0
    assert "Validity (multitrait–multimethod matrix" in cli.stdout
    printed = " ".join(cli.stdout.split())
    for r in convergent.itertuples():
        assert " ".join(r.verdict.split()) in printed
    discriminant = validity[validity["kind"].str.startswith("heterotrait")]
    below = discriminant["verdict"].str.contains("; below every convergent").sum()
    valid = (
        convergent["verdict"].str.contains(", significant;")
        & convergent["verdict"].str.contains("; above every discriminant")
    ).sum()
    assert (
        f"{valid} of {len(convergent)} convergent correlation(s) significant and above every "
        f"discriminant one of their row and column; {below} of {len(discriminant)} "
        "discriminant correlation(s) (different traits) below every convergent one of their "
        "measures."
    ) in printed


def test_without_traits_a_one_line_note_and_no_table(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "plain"
    cli = CliRunner().invoke(
        main, ["compare", str(study / "plain.yaml"), "--out", str(out), "--no-plot"]
    )
    assert cli.exit_code == 0, cli.output
    assert not (out / "validity.csv").exists()
    assert "validity: no MTMM matrix (name the measures' traits in validity.traits)" in cli.output


def test_one_trait_is_a_note_not_an_error(study: Path, tmp_path: Path) -> None:
    path = study / "one.yaml"
    path.write_text((study / "plain.yaml").read_text() + 'validity: {traits: {"*gender*": g}}\n')
    cli = CliRunner().invoke(
        main, ["compare", str(path), "--out", str(tmp_path / "o"), "--no-plot"]
    )
    assert cli.exit_code == 0, cli.output
    assert "validity: no MTMM matrix: one trait only: no discriminant correlation" in cli.output
    assert not (tmp_path / "o" / "validity.csv").exists()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            "validity: {statistic: cosine}\n",
            "validity.statistic: choose pearson, spearman, kendall, not 'cosine'",
        ),
        ("validity: {traits: [gender]}\n", "validity.traits: expected a mapping"),
        ("validity: {trait: {a: b}}\n", "validity: unknown option 'trait'"),
    ],
)
def test_a_bad_validity_section_is_a_one_line_error(
    study: Path, tmp_path: Path, section: str, message: str
) -> None:
    path = study / "bad.yaml"
    path.write_text((study / "plain.yaml").read_text() + section)
    cli = CliRunner().invoke(main, ["compare", str(path), "--out", str(tmp_path / "o")])
    assert cli.exit_code != 0
    assert message in cli.output
    assert len(cli.output.strip().splitlines()) == 1, cli.output
    assert not (tmp_path / "o").exists()


# --- test–retest reliability over the seeds of `checkpoints` entries ------------------------

SEEDED = """\
output: out
languages: [en, de]
models:
  - {name: A, checkpoints: [org/a1, org/a2, org/a3]}
  - {name: B, checkpoints: [org/b1, org/b2, org/b3, org/b4]}
  - {name: C, checkpoints: [org/c1, org/c2, org/c3]}
  - {name: D, model: org/d}
crows: {}
correlation: {n_bootstrap: 150, seed: 5}
"""


def _seeded_scores() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for entry, k in (("A", 3), ("B", 4), ("C", 3), ("D", 0)):
        for lang in ("en", "de"):
            level = rng.normal()
            for seed in range(1, k + 1) if k else [0]:
                model = f"{entry}#{seed}" if k else entry
                for measure in ("crows:pll", "other"):
                    value = level + 0.3 * rng.normal()
                    if (measure, entry, lang, seed) == ("crows:pll", "C", "de", 2):
                        value = np.nan  # this unit lacks a seed: left out of crows:pll
                    rows.append({"model": model, "lang": lang, "method": "crows",
                                 "measure": measure, "value": value})  # fmt: skip
    return pd.DataFrame(rows)


def test_reliability_over_seeds_equals_the_table_built_by_hand(tmp_path: Path) -> None:
    from weatkit.crossmethod import load_compare_config
    from weatkit.crossmethod.validity import RELIABILITY_COLUMNS, seed_reliability
    from weatkit.validity import icc, split_half

    (tmp_path / "seeded.yaml").write_text(SEEDED)
    config = load_compare_config(tmp_path / "seeded.yaml")
    scores = _seeded_scores()
    table, note = seed_reliability(scores, config)
    assert note == "" and list(table.columns) == RELIABILITY_COLUMNS
    assert list(table["measure"]) == ["crows:pll", "other"]
    for row in table.itertuples():
        units = []
        for entry in ("A", "B", "C"):  # D has no checkpoints; B's 4th seed is beyond K = 3
            for lang in ("en", "de"):
                values = [
                    scores.loc[(scores["model"] == f"{entry}#{s}") & (scores["lang"] == lang)
                               & (scores["measure"] == row.measure), "value"].item()
                    for s in (1, 2, 3)
                ]  # fmt: skip
                if not np.isnan(values).any():
                    units.append(values)
        forms = np.array(units)
        assert (row.n_units, row.n_seeds) == (len(forms), 3)
        assert row.n_units == (5 if row.measure == "crows:pll" else 6)
        half = split_half(forms, n_bootstrap=150, seed=5)
        assert (row.split_half, row.split_half_ci_low, row.split_half_ci_high) == pytest.approx(
            (half.statistic, *half.confidence_interval)
        )
        both = icc(forms)
        assert (row.icc2, row.icc2_ci_low, row.icc2_ci_high, row.icc2_p) == pytest.approx(
            (both["ICC2"].statistic, *both["ICC2"].confidence_interval, both["ICC2"].pvalue)
        )
        assert (row.icc2k, row.icc2k_ci_low, row.icc2k_ci_high) == pytest.approx(
            (both["ICC2k"].statistic, *both["ICC2k"].confidence_interval)
        )


def test_reliability_over_seeds_with_too_few_units_is_a_note(tmp_path: Path) -> None:
    from weatkit.crossmethod import load_compare_config
    from weatkit.crossmethod.validity import seed_reliability

    (tmp_path / "seeded.yaml").write_text(SEEDED.replace("[en, de]", "[en]"))
    config = load_compare_config(tmp_path / "seeded.yaml")
    scores = _seeded_scores()
    table, note = seed_reliability(scores[scores["lang"] == "en"].iloc[:0], config)
    assert table.empty and note == ""  # nothing scored: nothing to say
    scores = scores[(scores["lang"] == "en") & ~scores["model"].str.startswith("C")]
    table, note = seed_reliability(scores, config)
    assert table.empty
    assert note == (
        "validity: no test–retest reliability over seeds: 3 checkpoints model(s) × 1 "
        "language(s) give fewer than 3 units with a value at every seed for each measure"
    )


def test_reliability_is_written_and_printed(tmp_path: Path) -> None:
    from io import StringIO

    from rich.console import Console

    from weatkit.cli.compare import print_compare
    from weatkit.crossmethod import load_compare_config, write_compare
    from weatkit.crossmethod.runner import CompareResult
    from weatkit.crossmethod.validity import seed_reliability

    (tmp_path / "seeded.yaml").write_text(SEEDED)
    reliability, _ = seed_reliability(
        _seeded_scores(), load_compare_config(tmp_path / "seeded.yaml")
    )
    table = pd.DataFrame({"model": ["A#1", "A#2"], "lang": ["en", "en"], "other": [1.0, 2.0]})
    result = CompareResult(
        scores=pd.DataFrame(), table=table, correlations=pd.DataFrame(),
        skipped=pd.DataFrame(columns=["status"]), reliability=reliability,
        manifest={"correlation": {"confidence_level": 0.95}},
    )  # fmt: skip
    write_compare(result, tmp_path / "o", plot=False)
    written = pd.read_csv(tmp_path / "o" / "reliability.csv")
    pd.testing.assert_frame_equal(written, reliability, check_dtype=False)
    console = Console(width=80, file=StringIO(), record=True)
    print_compare(result, console)
    text = " ".join(console.export_text().split())
    r = reliability.iloc[1]
    assert "Test–retest reliability over seeds (95% CIs; reliability.csv):" in text
    assert (
        f"other: split-half r_SB = {r.split_half:.3f} [{r.split_half_ci_low:.3f}, "
        f"{r.split_half_ci_high:.3f}], ICC(2,1) = {r.icc2:.3f} [{r.icc2_ci_low:.3f}, "
        f"{r.icc2_ci_high:.3f}], ICC(2,k) = {r.icc2k:.3f}"
    ) in text
