"""Isomorphism end to end: space preparation, `weatkit iso`, `weatkit run --isomorphism`."""

from __future__ import annotations

import json
from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

from tests.test_cli_run import write_vec
from weatkit.cli import main
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.engine.weat import EngineOptions
from weatkit.errors import WeatkitError
from weatkit.isomorphism.across_languages import correlation_table
from weatkit.isomorphism.measures import IsoOptions, measure_spaces, prepare_space, read_word_list
from weatkit.pipeline import RunConfig, run

DIM = 12
WORDS = [f"w{i:03d}" for i in range(160)]
SMALL = {"ev": 120, "gh": 100, "gw": 40}


def _space(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((len(WORDS), DIM)) + 0.3


def _rotation(seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((DIM, DIM)))
    return q


def _write(path: Path, matrix: np.ndarray, words: list[str] = WORDS) -> Path:
    return write_vec(path, dict(zip(words, matrix, strict=True)))


def _manual_normalised(matrix: np.ndarray) -> np.ndarray:
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    centred = unit - unit.mean(axis=0)
    return centred / np.linalg.norm(centred, axis=1, keepdims=True)


@pytest.mark.parametrize("center_over", ["all", "subset"])
def test_prepare_space_follows_the_reference_normalisation(tmp_path: Path, center_over) -> None:
    matrix = _space()
    path = _write(tmp_path / "a.vec", matrix)
    (spec,) = parse_embeddings_specs(str(path))
    options = IsoOptions(measures=("ev",), n_words={"ev": 50}, center_over=center_over)
    space = prepare_space(spec, "", options)
    rows = matrix if center_over == "all" else matrix[:50]
    expected = _manual_normalised(rows)
    assert space.n_candidates == len(rows)
    np.testing.assert_allclose(space.first(50), expected[:50], atol=1e-6)


def test_word_list_orders_and_selects_the_subspace(tmp_path: Path) -> None:
    matrix = _space()
    path = _write(tmp_path / "joint.vec", matrix)
    wanted = ["w010", "absent", "w003", "w010", "w150"]
    listing = tmp_path / "en.txt"
    listing.write_text("3 12\n" + "\n".join(f"{w} 7" for w in wanted) + "\n", encoding="utf-8")
    words = read_word_list(listing)
    assert words == ["w010", "absent", "w003", "w150"]
    (spec,) = parse_embeddings_specs(str(path))
    space = prepare_space(spec, "", IsoOptions(measures=("gh",)), words=words)
    assert space.words == ["w010", "w003", "w150"]
    rows = matrix[[10, 3, 150]]
    np.testing.assert_allclose(space.vectors, _manual_normalised(rows), atol=1e-6)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "word list not found"), ("", "is empty"), (b"\xff\xfe", "not valid UTF-8")],
)
def test_bad_word_lists(tmp_path: Path, content, message: str) -> None:
    path = tmp_path / "words.txt"
    if isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(WeatkitError, match=message):
        read_word_list(path)


def test_rotated_copy_is_isomorphic_and_noise_is_not(tmp_path: Path) -> None:
    matrix = _space()
    options = IsoOptions(measures=("ev", "gh", "gw"), n_words=SMALL, device="cpu")
    base = _write(tmp_path / "en.vec", matrix)
    rotated = _write(tmp_path / "rot.vec", matrix @ _rotation(1))
    noisy = _write(
        tmp_path / "noisy.vec", matrix + np.random.default_rng(2).normal(size=matrix.shape)
    )
    spaces = {
        name: prepare_space(parse_embeddings_specs(str(p))[0], "", options)
        for name, p in (("base", base), ("rotated", rotated), ("noisy", noisy))
    }
    same = measure_spaces(spaces["base"], spaces["rotated"], options).set_index("measure")
    different = measure_spaces(spaces["base"], spaces["noisy"], options).set_index("measure")
    assert same.loc["ev", "value"] == pytest.approx(0, abs=1e-8)
    assert same.loc["gh", "value"] == pytest.approx(0, abs=1e-6)  # float32 file round trip
    assert same.loc["gw", "value"] == pytest.approx(0, abs=1e-6)
    assert (different["value"] > same["value"] + 1e-6).all()
    assert list(same["n_words"]) == [SMALL["ev"], SMALL["gh"], SMALL["gw"]]


def test_iso_command_outputs(tmp_path: Path) -> None:
    matrix = _space()
    _write(tmp_path / "toy.en.vec", matrix)
    _write(tmp_path / "toy.de.vec", matrix @ _rotation(3))
    out = tmp_path / "out"
    args = [
        "iso",
        "--src", f"{tmp_path}/toy.{{lang}}.vec", "--src-lang", "en",
        "--tgt", f"{tmp_path}/toy.{{lang}}.vec", "--tgt-lang", "de",
        "--measures", "ev,gh", "--n-words", "ev=120", "--n-words", "gh=80", "--device", "cpu",
    ]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--format", "csv", "--out", str(out)])
    assert result.exit_code == 0, result.output
    printed = pd.read_csv(pd.io.common.StringIO(result.stdout))
    assert list(printed.columns) == ["measure", "value", "n_words"]
    assert list(printed["measure"]) == ["ev", "gh"] and list(printed["n_words"]) == [120, 80]
    assert np.allclose(printed["value"], 0, atol=1e-6)
    written = pd.read_csv(out / "isomorphism.csv")
    assert list(written["src"]) == ["toy/en", "toy/en"] and written["tgt"].iloc[0] == "toy/de"
    as_json = CliRunner().invoke(main, [*args, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    assert {row["measure"] for row in json.loads(as_json.stdout)} == {"ev", "gh"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--measures", "xx"], "unknown isomorphism measure 'xx'"),
        (["--n-words", "ev=abc"], "expected N or MEASURE=N"),
        (["--n-words", "ev=1"], "need at least 2 words"),
        (["--gh-dims", "2"], "--gh-dims: must be 0 or 0,1"),
    ],
)
def test_iso_command_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    path = _write(tmp_path / "a.vec", _space())
    result = CliRunner().invoke(main, ["iso", "--src", str(path), "--tgt", str(path), *extra])
    assert result.exit_code == 1
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_iso_needs_lang_for_templates_and_words_for_models(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.vec", _space())
    result = CliRunner().invoke(main, ["iso", "--src", f"{tmp_path}/{{lang}}.vec", "--tgt", path])
    assert result.exit_code == 1 and "give --src-lang" in result.stderr


def _lists_file(tmp_path: Path, langs: list[str]) -> Path:
    tests = [
        {
            "test": "weat1",
            "lang": lang,
            "list_id": lang,
            "X": WORDS[0:8],
            "Y": WORDS[8:16],
            "A": WORDS[16:24],
            "B": WORDS[24:32],
        }
        for lang in langs
    ]
    path = tmp_path / "lists.yaml"
    path.write_text(yaml.safe_dump({"tests": tests}), encoding="utf-8")
    return path


def test_run_with_isomorphism_adds_measures_and_correlations(tmp_path: Path) -> None:
    langs = ["en", "de", "fr", "it", "es"]
    matrix = _space()
    rng = np.random.default_rng(5)
    for i, lang in enumerate(langs):
        noisy = matrix @ _rotation(10 + i) + (0.4 * i) * rng.standard_normal(matrix.shape)
        _write(tmp_path / f"toy.{lang}.vec", noisy)
    config = RunConfig(
        lists=(str(_lists_file(tmp_path, langs)),),
        embeddings=(f"T={tmp_path}/toy.{{lang}}.vec",),
        engine=EngineOptions(n_bootstrap=0, n_permutations=0),
        isomorphism="en",
        iso=IsoOptions(measures=("ev", "gh"), n_words=SMALL, device="cpu"),
    )
    result = run(config, show_progress=False)
    iso = result.isomorphism
    assert sorted(iso["lang"].unique()) == ["de", "es", "fr", "it"]
    summary = result.summary.set_index("lang")
    assert np.isnan(summary.loc["en", "iso_ev"])
    for lang in ("de", "fr", "it", "es"):
        ev = iso.query("lang == @lang and measure == 'ev'")["value"].item()
        assert summary.loc[lang, "iso_ev"] == pytest.approx(ev)
    corr = result.correlations.query("embeddings == 'T' and measure == 'gh'").iloc[0]
    points = summary.dropna(subset=["iso_gh"])
    assert corr["n_languages"] == 4
    expected = stats.pearsonr(points["effect_size"], points["iso_gh"])
    assert corr["pearson_r"] == pytest.approx(expected.statistic)
    assert corr["r2"] == pytest.approx(expected.statistic**2)


def test_run_skips_shared_spaces_without_word_lists(tmp_path: Path) -> None:
    _write(tmp_path / "joint.vec", _space())
    config = RunConfig(
        lists=(str(_lists_file(tmp_path, ["en", "de"])),),
        embeddings=(f"J={tmp_path}/joint.vec",),
        engine=EngineOptions(n_bootstrap=0, n_permutations=0),
        isomorphism="en",
        iso=IsoOptions(measures=("ev",), n_words=SMALL, device="cpu"),
    )
    result = run(config, show_progress=False)
    assert result.isomorphism.empty
    assert any("--iso-words" in line for line in result.report)
    with_words = tmp_path / "vocab.{lang}.txt"
    (tmp_path / "vocab.en.txt").write_text("\n".join(WORDS[:140]))
    (tmp_path / "vocab.de.txt").write_text("\n".join(WORDS[20:]))
    config = RunConfig(**{**config.__dict__, "iso_words": str(with_words)})
    measured = run(config, show_progress=False).isomorphism
    assert list(measured["lang"]) == ["de"] and measured["value"].item() > 0


def test_correlation_table_against_scipy() -> None:
    rng = np.random.default_rng(0)
    summary = pd.DataFrame(
        {
            "embeddings": ["A"] * 5 + ["B"] * 5,
            "lang": ["de", "fr", "it", "es", "ru"] * 2,
            "list_set": "x",
            "test": "weat1",
            "effect_size": rng.normal(size=10),
            "iso_ev": rng.normal(size=10),
        }
    )
    table = correlation_table(summary).set_index("embeddings")
    for name, frame in [("A", summary[:5]), ("B", summary[5:]), ("all", summary)]:
        row = table.loc[name]
        r = np.corrcoef(frame["effect_size"], frame["iso_ev"])[0, 1]
        rho = stats.spearmanr(frame["effect_size"], frame["iso_ev"]).statistic
        assert row["pearson_r"] == pytest.approx(r)
        assert row["spearman_rho"] == pytest.approx(rho)
        assert row["r2"] == pytest.approx(r * r)
        assert row["n_languages"] == len(frame)


def test_correlations_of_few_languages_use_exact_permutation_p() -> None:
    """Three languages: ρ = 1 has exact p = 2/3! (scipy's asymptotic p is 0) and is flagged;
    four languages: both p-values equal an enumeration of all 4! orders."""
    three = pd.DataFrame(
        {
            "embeddings": "A",
            "lang": ["de", "fr", "it"],
            "list_set": "x",
            "test": "weat1",
            "effect_size": [0.1, 0.5, 0.9],
            "iso_ev": [1.0, 2.0, 4.0],
        }
    )
    row = correlation_table(three).set_index("embeddings").loc["A"]
    assert stats.spearmanr(three["effect_size"], three["iso_ev"]).pvalue == 0
    assert row["spearman_rho"] == pytest.approx(1.0)
    assert row["spearman_p"] == pytest.approx(1 / 3)
    assert (row["permutation_method"], row["n_permutations"], row["n_min"]) == ("exact", 6, 5)
    assert row["flag"].startswith("n=3 < 5")
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=4), rng.normal(size=4)
    four = three.iloc[[0, 1, 2, 2]].assign(lang=["de", "fr", "it", "es"], effect_size=x, iso_ev=y)
    row = correlation_table(four).set_index("embeddings").loc["A"]
    for name, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
        t = function(x, y).statistic
        null = np.array([function(x[list(p)], y).statistic for p in permutations(range(4))])
        exact = min(1.0, 2 * min(np.mean(null <= t + 1e-9), np.mean(null >= t - 1e-9)))
        assert row[f"{name}_p"] == pytest.approx(exact)
    assert row["flag"].startswith("n=4 < 5")
    two = three.iloc[:2]
    row = correlation_table(two).iloc[0]
    assert np.isnan(row["spearman_p"]) and row["flag"] == "n=2 < 3: no correlation"


def test_printed_correlations_show_the_exact_p_and_the_flag() -> None:
    from io import StringIO

    from rich.console import Console

    from weatkit.cli.tables import rich_correlations

    summary = pd.DataFrame(
        {
            "embeddings": "A",
            "lang": ["de", "fr", "it"],
            "list_set": "x",
            "test": "weat1",
            "effect_size": [0.1, 0.5, 0.9],
            "iso_gh": [1.0, 2.0, 4.0],
        }
    )
    console = Console(width=200, file=StringIO(), record=True)
    console.print(rich_correlations(correlation_table(summary)))
    text = console.export_text()
    assert "1.00 (0.3333)" in text and "1.00 (0.0000)" not in text
    assert "3 †" in text
    assert "† n=3 < 5: the smallest possible p is 2/3! = 0.333 > 0.05" in text


def test_printed_correlations_star_by_the_one_rule() -> None:
    """A star where p ≤ α and the row is not flagged; never on a † row, whatever its p."""
    from io import StringIO

    from rich.console import Console

    from weatkit.cli.tables import rich_correlations

    langs = ["de", "fr", "it", "es", "pt", "nl"]
    summary = pd.DataFrame(
        {
            "embeddings": "A",
            "lang": langs,
            "list_set": "x",
            "test": "weat1",
            "effect_size": [0.1, 0.5, 0.9, 1.2, 1.3, 1.7],
            "iso_gh": [1.0, 2.0, 4.0, 5.0, 7.0, 8.0],
        }
    )
    table = correlation_table(summary)
    row = table[table.embeddings == "A"].iloc[0]
    assert row.flag == "" and row.spearman_p == pytest.approx(2 / 720)
    console = Console(width=200, file=StringIO(), record=True)
    console.print(rich_correlations(table))
    text = console.export_text()
    assert "1.00* (0.0028)" in text and "* p ≤ 0.05 (never on a † row)" in text
    console = Console(width=200, file=StringIO(), record=True)
    console.print(rich_correlations(table, confidence_level=0.999))
    assert "*" not in console.export_text()  # 2/720 > 0.001
    three = correlation_table(summary.head(3))
    console = Console(width=200, file=StringIO(), record=True)
    console.print(rich_correlations(three.assign(pearson_p=0.001, spearman_p=0.001)))
    text = console.export_text()
    assert "(0.0010)" in text and "*" not in text and "3 †" in text
