"""``weatkit report DIR`` and ``weatkit plot DIR --kind K`` on the ``--out`` directories of the
measure plugins (``weatkit ceat``, ``weatkit lpbs``), as their plugins declare them.

Each directory is written by the real command on a tiny BERT (tests/tiny_models.py) with a corpus
and list files written here; the page's numbers are read back and compared with the CSV files,
the figures' artists with the tables and the draws log, and bad input must be a one-line error
that writes nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.collections import LineCollection

from tests.test_report_exports import assert_one_line_error
from tests.test_report_html import table_rows
from tests.tiny_models import make_char_mlm
from weatkit.cli import main
from weatkit.report.html.source import read_source

CEAT_LISTS = {
    "tests": [
        {"test": "home", "lang": "en", "list_id": "gest",
         "X": ["family", "home", "mother"], "Y": ["office", "career", "father"],
         "A": ["good", "happy"], "B": ["bad", "sad"]},
        {"test": "kin", "lang": "en", "list_id": "gest",
         "X": ["mother", "family"], "Y": ["father", "office"],
         "A": ["happy", "good"], "B": ["sad", "bad"]},
    ]
}  # fmt: skip
CORPUS = [
    "We had a happy day at home.", "The office was sad and quiet.",
    "My mother said it was good.", "Her career made her happy.",
    "The family was good at home.", "His father felt bad.", "Office work is sad.",
    "A mother and her family.", "The career of my father.", "Bad news came to the office.",
]  # fmt: skip
LPBS_LIST = """tests:
  - test: career
    lang: en
    list_id: gender
    X: [he, man]
    Y: [she, woman]
    A: [doctor, job]
    B: [home, kid, nurse]
  - test: family
    lang: en
    list_id: gender
    X: [he, man]
    Y: [she, woman]
    A: [home, kid]
    B: [doctor, job, boss]
"""
ESTIMATE = re.compile(r"^(\S+) \[(\S+), (\S+)\]$")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plugin-report")
    make_char_mlm(root / "bert")
    (root / "lists.json").write_text(json.dumps(CEAT_LISTS))
    (root / "corpus.txt").write_text("\n".join(CORPUS * 2) + "\n")
    (root / "gender.yaml").write_text(LPBS_LIST)
    return root


def _ceat(inputs: Path, out: Path, *extra: str) -> Path:
    result = invoke("ceat", "--model", str(inputs / "bert"), "--corpus", str(inputs / "corpus.txt"),
                    "--lists", str(inputs / "lists.json"), "--no-cache", "--draws", "300",
                    "--contexts-per-word", "4", "--device", "cpu", "--layer", "-1", "--layer",
                    "1", "--out", str(out), *extra)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def ceat_dir(inputs: Path) -> Path:
    """``weatkit ceat`` with every draw logged (``draws.parquet``)."""
    return _ceat(inputs, inputs / "ceat", "--log-items", "parquet")


@pytest.fixture(scope="module")
def ceat_bare(inputs: Path) -> Path:
    """``weatkit ceat`` without ``--log-items``: no draws log."""
    return _ceat(inputs, inputs / "ceat-bare")


@pytest.fixture(scope="module")
def lpbs_dir(inputs: Path) -> Path:
    out = inputs / "lpbs"
    result = invoke("lpbs", "--model", str(inputs / "bert"), "--lists",
                    str(inputs / "gender.yaml"), "--bootstrap", "50", "--out", str(out),
                    "--log-items", "csv")  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _page(directory: Path) -> str:
    result = invoke("report", str(directory))
    assert result.exit_code == 0, result.output
    return (directory / "report.html").read_text(encoding="utf-8")


def _columns(page: str, table_id: str) -> list[str]:
    match = re.search(rf'<table id="{table_id}">\s*<thead>(.*?)</thead>', page, re.DOTALL)
    assert match is not None, table_id
    return re.findall(r"<th[^>]*>(.*?)</th>", match.group(1))


def _shown(page: str, table_id: str, column: str) -> list[str]:
    index = _columns(page, table_id).index(column)
    return [row[index] for row in table_rows(page, table_id)]


def _assert_shows(text: str, *values: float) -> None:
    """``text`` (``x [low, high]`` or ``x``) is ``values`` rounded to the decimals it shows."""
    match = ESTIMATE.match(text)
    shown = match.groups() if match else (text,)
    assert len(shown) == len(values), text
    for digits, value in zip(shown, values, strict=True):
        decimals = len(digits.partition(".")[2])
        assert abs(float(digits) - value) <= 0.5 * 10**-decimals + 1e-12, (text, values)


def _forest_points(fig) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(row label, slot label) -> (estimate, low, high) as drawn by estimate_forest."""
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    segments = {
        round(float(seg[0][1]), 9): (float(seg[0][0]), float(seg[1][0]))
        for c in ax.collections if isinstance(c, LineCollection) for seg in c.get_segments()
    }  # fmt: skip
    points = {}
    for line in ax.get_lines():
        if line.get_linestyle() != "None":
            continue
        x, y = float(line.get_xdata()[0]), float(line.get_ydata()[0])
        points[(labels[round(y)], line.get_label())] = (x, *segments[round(y, 9)])
    neutral = [line for line in ax.get_lines() if list(line.get_xdata()) == [0, 0]]
    assert len(neutral) == 1 and neutral[0].get_linestyle() == "--"
    return points


# --- CEAT ----------------------------------------------------------------------------------------


def test_ceat_report_shows_results_contexts_draws_and_manifest(ceat_dir: Path) -> None:
    page = _page(ceat_dir)
    results = pd.read_csv(ceat_dir / "results.csv")
    assert len(results) == 4  # 2 tests x 2 layers
    shown = _shown(page, "t-results", "ces [CI]")
    for text, row in zip(shown, results.itertuples(), strict=True):
        _assert_shows(text, row.ces, row.ci_low, row.ci_high)
    assert _shown(page, "t-results", "test") == list(results["test"])
    assert _shown(page, "t-results", "layer") == [str(v) for v in results["layer"]]
    assert "intervals: 95% normal CI (CES ± z·SE)" in page
    contexts = pd.read_csv(ceat_dir / "contexts.csv")
    assert table_rows(page, "t-contexts") == [
        [r.word, str(r.found), str(r.kept)] for r in contexts.itertuples()
    ]
    draws = pd.read_parquet(ceat_dir / "draws.parquet")
    assert len(draws) == 4 * 300  # the page: the first 200 of each test and layer, said
    assert len(table_rows(page, "t-draws")) == 4 * 200
    assert "The first 200 draws of each test and layer: 800 of 1,200; every draw is in" in page
    for figure in ("fig-forest", "fig-draws-0", "fig-draws-1"):
        assert re.search(rf'<figure id="{figure}">.*?<svg\b', page, re.DOTALL), figure
    links = set(re.findall(r'class="docs" href="([^"]+)"', page))
    assert links == {"https://weatkit.github.io/weatkit/measures/ceat/"}
    assert re.findall(r'<section id="([^"]+)"', page) == [
        "results", "figures", "contexts", "draws", "manifest"
    ]  # fmt: skip
    assert "<title>weatkit ceat report: ceat</title>" in page


def test_ceat_report_without_the_draws_log_says_so(ceat_bare: Path) -> None:
    page = _page(ceat_bare)
    assert "t-draws" not in page and "fig-draws" not in page
    assert (
        "Histograms of the draws: not drawn: no draws.parquet or draws.csv (written by weatkit "
        "ceat --log-items parquet)"
    ) in page


def test_ceat_forest_draws_each_ces_with_its_interval(ceat_dir: Path, tmp_path: Path) -> None:
    from weatkit.ceat.plots import draws, forest

    results = pd.read_csv(ceat_dir / "results.csv")
    expected = {
        (f"gest/{r.test}, en", f"layer {r.layer}"): (r.ces, r.ci_low, r.ci_high)
        for r in results.itertuples()
    }
    points = _forest_points(forest(read_source(ceat_dir)))
    assert points.keys() == expected.keys()
    for key, values in expected.items():
        np.testing.assert_allclose(points[key], values, rtol=1e-12)
    kin = _forest_points(forest(read_source(ceat_dir), tests=["kin"]))
    assert set(kin) == {("gest/kin, en", "layer -1"), ("gest/kin, en", "layer 1")}
    # the histograms: numpy's counts of each test and layer's draws, CES marked
    log = pd.read_parquet(ceat_dir / "draws.parquet")
    fig = draws(read_source(ceat_dir))
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 4
    for ax, row in zip(panels, results.itertuples(), strict=True):
        assert ax.get_title().startswith(f"gest/{row.test}, en, layer {row.layer}\n")
        values = log[(log["test"] == row.test) & (log["layer"] == row.layer)]["effect_size"]
        counts, edges = np.histogram(values.to_numpy(), bins=30)
        assert [p.get_height() for p in ax.patches] == counts.tolist()
        np.testing.assert_allclose([p.get_x() for p in ax.patches], edges[:-1])
        (ces,) = [line.get_xdata()[0] for line in ax.get_lines()]
        assert ces == pytest.approx(row.ces, rel=1e-12)
    # the command writes them as files in the format of their suffix
    for kind, name in (("forest", "forest.png"), ("draws", "draws.svg")):
        result = invoke("plot", str(ceat_dir), "--kind", kind, "--out", str(tmp_path / name))
        assert result.exit_code == 0, result.output
    assert (tmp_path / "forest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "draws.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and svg.rstrip().endswith("</svg>")


@pytest.mark.parametrize(
    ("fixture", "args", "message"),
    [
        ("ceat_dir", ["--kind", "null"],
         "unknown plot kind 'null' for a weatkit ceat directory: choose one of forest, draws"),
        ("ceat_bare", ["--kind", "draws"],
         "has no draws.parquet or draws.csv: rerun weatkit ceat with --log-items parquet"),
        ("ceat_dir", ["--kind", "forest", "--embeddings", "glove"],
         "--embeddings is for run directories, not a weatkit ceat one"),
        ("ceat_dir", ["--kind", "forest", "--test", "weat1"],
         "no rows in results.csv for --test weat1 (available: home, kin)"),
        ("lpbs_dir", ["--kind", "draws"],
         "unknown plot kind 'draws' for a weatkit lpbs directory: choose one of forest"),
    ],
)  # fmt: skip
def test_bad_plots_are_one_line_errors_and_write_nothing(
    request: pytest.FixtureRequest, fixture: str, args: list[str], message: str, tmp_path: Path
) -> None:
    out = tmp_path / "figure.png"
    directory = request.getfixturevalue(fixture)
    assert_one_line_error(invoke("plot", str(directory), *args, "--out", str(out)), message)
    assert not out.exists()


# --- LPBS ----------------------------------------------------------------------------------------


def test_lpbs_report_shows_the_summary_tables_and_items(lpbs_dir: Path) -> None:
    page = _page(lpbs_dir)
    summary = pd.read_csv(lpbs_dir / "summary.csv")
    assert list(summary["test"]) == ["career", "family"]
    for column, stem in (("effect_size [CI]", "effect_size"), ("statistic [CI]", "statistic")):
        for text, row in zip(_shown(page, "t-summary", column), summary.to_dict("records"),
                             strict=True):  # fmt: skip
            _assert_shows(text, row[stem], row[f"{stem}_low"], row[f"{stem}_high"])
    assert _shown(page, "t-summary", "pvalue") == [f"{p:.4f}" for p in summary["pvalue"]]
    assert "intervals: 95% bootstrap CI (percentile)" in page
    for name in ("scores", "words", "items"):
        assert len(table_rows(page, f"t-{name}")) == len(pd.read_csv(lpbs_dir / f"{name}.csv"))
    assert re.search(r'<figure id="fig-forest">.*?<svg\b', page, re.DOTALL)
    links = set(re.findall(r'class="docs" href="([^"]+)"', page))
    assert links == {"https://weatkit.github.io/weatkit/measures/lpbs/"}


def test_lpbs_forest_draws_each_d_with_its_interval(lpbs_dir: Path, tmp_path: Path) -> None:
    from weatkit.lpbs.plots import forest

    summary = pd.read_csv(lpbs_dir / "summary.csv")
    points = _forest_points(forest(read_source(lpbs_dir)))
    model = str(summary["model"][0])
    assert points.keys() == {("gender/career, en", model), ("gender/family, en", model)}
    for row in summary.itertuples():
        np.testing.assert_allclose(
            points[(f"gender/{row.test}, en", model)],
            (row.effect_size, row.effect_size_low, row.effect_size_high),
            rtol=1e-12,
        )
    result = invoke("plot", str(lpbs_dir), "--kind", "forest", "--out", str(tmp_path / "f.svg"))
    assert result.exit_code == 0, result.output
    assert "<svg" in (tmp_path / "f.svg").read_text(encoding="utf-8")
