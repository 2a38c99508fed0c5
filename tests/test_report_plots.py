"""``weatkit plot``: valid PNG/PDF/SVG files, and figures that show the run's numbers."""

from __future__ import annotations

import re
import shutil
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from matplotlib.collections import LineCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from tests.test_atomic import full_disk
from tests.test_report_exports import (
    TOY,
    assert_one_line_error,
    copy_without_isomorphism,
    make_run_dir,
)
from weatkit.cli.plot import plot_command
from weatkit.crossmethod.plot import correlation_heatmap
from weatkit.errors import WeatkitError
from weatkit.report.figures import save_figure
from weatkit.report.forest_plot import LIST_GREY, forest_plot
from weatkit.report.heatmap_plot import heatmap_plot
from weatkit.report.influence_plot import influence_plot
from weatkit.report.null_plot import null_plot
from weatkit.report.plot_style import LISTS_LABEL, MARKERS, interval_label, run_style
from weatkit.report.run_dir import RunTables, read_run_dir
from weatkit.report.scatter_plot import least_squares, scatter_plot
from weatkit.stats.correlation import correlation_table

MODELS = ["glove-6b-50d", TOY]
TITLES = {
    "weat1": "WEAT 1: flowers/insects vs pleasant/unpleasant",
    "weat2": "WEAT 2: instruments/weapons vs pleasant/unpleasant",
}
MEDIAN_LABELS = {  # n_lists -> interval label (n = 1 is a single list, n >= 6 reaches 95%)
    2: "50% median interval (order statistics)",
    3: "75% median interval (order statistics)",
    4: "87.5% median interval (order statistics)",
    5: "93.8% median interval (order statistics)",
}
INTERVAL_LABELS = [
    "≥ 95% median interval (order statistics)",
    "93.8% median interval (order statistics)",
    "87.5% median interval (order statistics)",
    "75% median interval (order statistics)",
    "95% bootstrap CI (percentile)",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("plots"))


@pytest.fixture(scope="module")
def tables(run_dir: Path) -> RunTables:
    return read_run_dir(run_dir)


def plot(*args: str):
    return CliRunner().invoke(plot_command, list(args))


def legend_labels(fig: Figure) -> list[str]:
    (legend,) = fig.legends
    return [text.get_text() for text in legend.get_texts()]


def title(ax) -> str:
    return ax.get_title().replace("\n", " ")  # long titles are wrapped


def grey_points(fig: Figure) -> int:
    return sum(
        len(c.get_offsets())
        for ax in fig.axes
        for c in ax.collections
        if c.get_label() == LISTS_LABEL
    )


# --- files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("suffix", "magic"),
    [(".png", b"\x89PNG\r\n\x1a\n"), (".pdf", b"%PDF-"), (".svg", b"<?xml")],
)
@pytest.mark.parametrize("kind", ["forest", "scatter", "heatmap"])
def test_cli_writes_valid_files(
    run_dir: Path, tmp_path: Path, kind: str, suffix: str, magic: bytes
) -> None:
    out = tmp_path / f"{kind}{suffix.upper() if suffix == '.pdf' else suffix}"
    result = plot(str(run_dir), "--kind", kind, "--out", str(out), "--dpi", "60")
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    data = out.read_bytes()
    assert data.startswith(magic) and len(data) > 1000
    if suffix == ".svg":
        assert b"<svg" in data[:2000] and data.rstrip().endswith(b"</svg>")
    if suffix == ".pdf":
        assert data.rstrip().endswith(b"%%EOF")
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left


@pytest.mark.parametrize("dpi", [50, 120])
def test_png_size_is_figsize_times_dpi(tables: RunTables, tmp_path: Path, dpi: int) -> None:
    fig = forest_plot(tables, tests=["weat1"])
    path = save_figure(fig, tmp_path / "forest.png", dpi=dpi)
    header = path.read_bytes()[:24]
    assert header[12:16] == b"IHDR"
    width, height = struct.unpack(">II", header[16:24])
    expected = fig.get_size_inches() * dpi
    assert abs(width - expected[0]) <= 1 and abs(height - expected[1]) <= 1


def test_same_figure_same_bytes(tables: RunTables, tmp_path: Path) -> None:
    for suffix in (".pdf", ".svg"):
        first, second = (
            save_figure(heatmap_plot(tables, tests="weat1", list_sets="x-weat"), tmp_path / name)
            for name in (f"a{suffix}", f"b{suffix}")
        )
        assert first.read_bytes() == second.read_bytes()


# --- what the figures show -------------------------------------------------------------------


def test_forest_shows_languages_models_and_every_list(tables: RunTables) -> None:
    fig = forest_plot(tables)
    assert [title(ax) for ax in fig.axes] == [TITLES["weat1"], TITLES["weat2"]]
    assert all(ax.get_xlabel() == "effect size d" for ax in fig.axes)
    assert fig.axes[0].get_ylabel() == "language"
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["de", "en", "it", "pooled"]
    assert legend_labels(fig) == [
        *MODELS,
        "ca-weat:v1: median of lists",
        "x-weat: single list",
        *INTERVAL_LABELS,
        LISTS_LABEL,
        "pooled over languages (random effects, 95% CI)",  # the run has pooled.csv
    ]
    ca_lists = tables.results[tables.results["list_set"] == "ca-weat:v1"]
    assert grey_points(fig) == len(ca_lists) > 40
    for ax in fig.axes:  # the vertical line at 0
        assert any(list(line.get_xdata()) == [0, 0] for line in ax.get_lines())
    for ax, test in zip(fig.axes, ["weat1", "weat2"], strict=True):
        points = [c for c in ax.collections if c.get_label() == LISTS_LABEL]
        (grey,) = points
        assert np.allclose(grey.get_facecolor()[0][:3], [float(LIST_GREY)] * 3)
        expected = ca_lists.loc[ca_lists["test"] == test, "effect_size"].to_numpy()
        np.testing.assert_allclose(np.sort(grey.get_offsets()[:, 0]), np.sort(expected))


def test_forest_draws_the_pooled_diamond_of_pooled_csv(run_dir: Path, tables: RunTables) -> None:
    """Per test panel, one diamond per embeddings × list set: tips at pooled.csv's CI of the
    ``languages`` level, centre at its effect size, in the space's colour, labelled with I²."""
    pooled = pd.read_csv(run_dir / "pooled.csv")
    languages = pooled[pooled["level"] == "languages"]
    # GloVe has English only: the toy space's 2 list sets × 2 tests, each over 3 languages
    assert len(languages) == 4 and set(languages["embeddings"]) == {TOY}
    assert (languages["k"] == 3).all()
    fig = forest_plot(tables)
    (legend,) = fig.legends
    handles = zip(legend.get_texts(), legend.legend_handles, strict=True)
    colours = {text.get_text(): handle.get_color() for text, handle in handles}
    seen = 0
    for ax, test in zip(fig.axes, ["weat1", "weat2"], strict=True):
        diamonds = [p for p in ax.patches if isinstance(p, Polygon)]
        assert len(diamonds) == 2
        y_pooled = [t.get_text() for t in fig.axes[0].get_yticklabels()].index("pooled")
        for diamond in diamonds:
            (low, y), (d, bottom), (high, y2), (d2, top) = diamond.get_xy()[:4]
            assert y == y2 and d == d2 and top - y == y - bottom > 0
            assert abs(y - y_pooled) < 0.5  # in the pooled row
            (row,) = languages[
                (languages["test"] == test) & np.isclose(languages["effect_size"], d)
            ].itertuples()
            assert (low, high) == (row.effect_size_ci_low, row.effect_size_ci_high)
            assert diamond.get_label() == f"pooled (random effects, I² = {100 * row.i2:.0f}%)"
            assert to_hex(diamond.get_facecolor()) == to_hex(colours[row.embeddings])
            seen += 1
    assert seen == len(languages)
    # filtered to some languages, the pooled row (over all of them) is left out
    filtered = forest_plot(tables, langs=["de", "en"])
    assert not [p for ax in filtered.axes for p in ax.patches if isinstance(p, Polygon)]


def test_forest_without_pooled_csv_has_no_pooled_row(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    (copy / "pooled.csv").unlink()
    fig = forest_plot(read_run_dir(copy))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["de", "en", "it"]
    assert not [p for ax in fig.axes for p in ax.patches if isinstance(p, Polygon)]


def test_forest_filters_and_language_order(tables: RunTables) -> None:
    fig = forest_plot(tables, tests="weat2", langs=["it", "de"], embeddings=[TOY])
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["it", "de"]
    assert legend_labels(fig)[0] == TOY and "glove-6b-50d" not in legend_labels(fig)
    results = tables.results
    expected = results[
        (results["embeddings"] == TOY)
        & (results["test"] == "weat2")
        & results["lang"].isin(["it", "de"])
        & (results["list_set"] == "ca-weat:v1")
    ]
    assert grey_points(fig) == len(expected) == 48


def _r2_in_legend(ax) -> dict[str, float]:
    """Each space's R² in the panel's legend of fits."""
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    found = [re.fullmatch(r"(.+): least squares, R² = (\d\.\d{3})", text) for text in texts]
    return {match.group(1): float(match.group(2)) for match in found}


def _points(ax) -> np.ndarray:
    """The (x, d) of every scatter point of a panel (its lines with a marker)."""
    lines = [line for line in ax.get_lines() if line.get_marker() in MARKERS]
    return np.concatenate([line.get_xydata() for line in lines])


def _numpy_r2(x: np.ndarray, y: np.ndarray) -> float:
    design = np.column_stack([x, np.ones_like(x)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    return 1 - residual @ residual / ((y - y.mean()) @ (y - y.mean()))


@pytest.mark.parametrize("x", ["iso_gh", "iso_ev"])
def test_scatter_against_isomorphism(tables: RunTables, x: str) -> None:
    fig = scatter_plot(tables, x=x)
    summary = tables.summary.dropna(subset=[x])
    assert set(summary["embeddings"]) == {TOY}
    for ax, test in zip(fig.axes, ["weat1", "weat2"], strict=True):
        assert title(ax) == TITLES[test]
        points = summary[summary["test"] == test]
        assert len(points) == 4  # de, it x (ca-weat, x-weat)
        r2 = _numpy_r2(points[x].to_numpy(), points["effect_size"].to_numpy())
        assert _r2_in_legend(ax) == {TOY: round(r2, 3)}
        r = np.corrcoef(points[x], points["effect_size"])[0, 1]
        assert r2 == pytest.approx(r**2)
        assert (
            ax.get_xlabel().endswith("to en") and x.removeprefix("iso_").upper() in ax.get_xlabel()
        )
        assert len(_points(ax)) == len(points)
    assert fig.axes[0].get_ylabel() == "effect size d"
    assert legend_labels(fig) == [TOY, "ca-weat:v1: median of lists", "x-weat: single list"]


def test_scatter_against_count_difference(tables: RunTables) -> None:
    fig = scatter_plot(tables, x="count_difference", tests=["weat1"], list_sets=["ca-weat:v1"])
    (ax,) = fig.axes
    points = tables.asymmetry.query("test == 'weat1' and list_set == 'ca-weat:v1'")
    r2 = _numpy_r2(points["count_difference"].to_numpy(float), points["effect_size"].to_numpy())
    assert _r2_in_legend(ax) == {TOY: round(r2, 3)}
    assert len(_points(ax)) == len(points) == 53
    assert ax.get_xlabel().startswith("count(A) − count(B)")


def test_least_squares_edge_cases() -> None:
    assert least_squares(np.array([1.0]), np.array([2.0])) is None
    assert least_squares(np.array([1.0, 1.0]), np.array([2.0, 3.0])) is None
    slope, intercept, r2 = least_squares(np.array([0.0, 1, 2]), np.array([1.0, 3, 5]))
    assert (slope, intercept, r2) == pytest.approx((2.0, 1.0, 1.0))


def test_heatmap_cells_and_centred_colours(tables: RunTables) -> None:
    fig = heatmap_plot(tables, list_sets=["ca-weat:v1"], tests=["weat1"])
    ax, colorbar = fig.axes
    assert title(ax) == f"{TITLES['weat1']} (ca-weat:v1)"
    assert colorbar.get_ylabel() == "effect size d"
    assert [t.get_text() for t in ax.get_yticklabels()] == MODELS
    assert [t.get_text() for t in ax.get_xticklabels()] == ["de", "en", "it"]
    (image,) = ax.get_images()
    vmin, vmax = image.get_clim()
    assert vmin == -vmax > -np.inf
    rows = tables.summary.query("list_set == 'ca-weat:v1' and test == 'weat1'")
    grid = rows.pivot(index="embeddings", columns="lang", values="effect_size")
    grid = grid.reindex(index=MODELS, columns=["de", "en", "it"]).to_numpy()
    np.testing.assert_array_equal(image.get_array().filled(np.nan), grid)
    labels = sorted(float(t.get_text()) for t in ax.texts)
    assert labels == sorted(round(v, 2) for v in grid[~np.isnan(grid)])


def test_all_panels_share_one_colour_scale(tables: RunTables) -> None:
    fig = heatmap_plot(tables)
    images = [image for ax in fig.axes for image in ax.get_images()]
    assert len(images) == 4
    assert len({image.get_clim() for image in images}) == 1
    limit = np.nanmax(np.abs(tables.summary["effect_size"]))
    assert images[0].get_clim() == pytest.approx((-limit, limit))


# --- one run, one look (issue 17 item 7) ------------------------------------------------------


def _space_looks(fig: Figure, tables: RunTables, x: str) -> dict[str, set[tuple[str, str]]]:
    """(colour, marker) of the marks of each space, the space found from the marks' positions:
    a forest marker's d (x = effect size), a scatter point's (x, d)."""
    source = tables.asymmetry if x == "count_difference" else tables.summary
    looks: dict[str, set[tuple[str, str]]] = {}
    test_of = {text: test for test, text in TITLES.items()}
    for ax in fig.axes:
        rows = source[source["test"] == test_of.get(title(ax), title(ax))]
        marks: list[tuple[tuple[float, float], tuple[str, str]]] = []
        for line in ax.get_lines():
            if line.get_marker() not in MARKERS:
                continue
            look = (to_hex(line.get_markeredgecolor()), line.get_marker())
            if x == "effect_size":  # a forest marker: d on the x axis
                marks.append(((line.get_xdata()[0], np.nan), look))
            else:  # a scatter's points: (x, d)
                marks += [((px, d), look) for px, d in line.get_xydata()]
        for (px, d), look in marks:
            if np.isnan(d):  # a forest marker: d on the x axis
                hit = rows[np.isclose(rows["effect_size"], px)]
            else:
                hit = rows[np.isclose(rows[x], px) & np.isclose(rows["effect_size"], d)]
            (space,) = set(hit["embeddings"])
            looks.setdefault(space, set()).add(look)
    return looks


def test_one_colour_and_marker_per_space_in_every_plot(tables: RunTables) -> None:
    figures = {
        "forest": (forest_plot(tables), "effect_size"),
        "forest of toy": (forest_plot(tables, embeddings=[TOY], tests=["weat2"]), "effect_size"),
        "scatter": (scatter_plot(tables, x="iso_gh"), "iso_gh"),
        "scatter of counts": (scatter_plot(tables, x="count_difference"), "count_difference"),
    }
    looks = {name: _space_looks(fig, tables, x) for name, (fig, x) in figures.items()}
    assert set(looks["forest"]) == set(MODELS)
    assert set(looks["scatter"]) == set(looks["scatter of counts"]) == {TOY}  # iso: toy only
    everywhere = {
        space: set().union(*(found.get(space, set()) for found in looks.values()))
        for space in MODELS
    }
    assert all(len(found) == 1 for found in everywhere.values()), everywhere
    assert everywhere["glove-6b-50d"] != everywhere[TOY]
    ((toy_colour, toy_marker),) = everywhere[TOY]
    assert legend_labels(figures["scatter"][0])[0] == TOY
    (legend,) = figures["scatter"][0].legends
    handle = legend.legend_handles[0]
    assert (to_hex(handle.get_color()), handle.get_marker()) == (toy_colour, toy_marker)


def test_forest_panels_share_the_x_axis(tables: RunTables) -> None:
    fig = forest_plot(tables)
    first, second = fig.axes
    assert first.get_shared_x_axes().joined(first, second)
    assert first.get_xlim() == second.get_xlim()
    low, high = first.get_xlim()
    summary = tables.summary
    assert low < summary["effect_size_ci_low"].min() and summary["effect_size_ci_high"].max() < high


def test_forest_intervals_are_labelled_with_their_level(tables: RunTables) -> None:
    """Each interval line's label states its kind and level: the order-statistic interval of
    the median of n lists covers 1 − 2·2⁻ⁿ (n ≤ 5, below 95%), a single list has a 95%
    bootstrap CI; lines of different labels are drawn differently."""
    fig = forest_plot(tables)
    summary = tables.summary
    styles: dict[str, set[tuple[float, str]]] = {}
    seen = 0
    for ax, test in zip(fig.axes, ["weat1", "weat2"], strict=True):
        rows = summary[summary["test"] == test]
        for line in ax.collections:
            if not isinstance(line, LineCollection) or line.get_label() == LISTS_LABEL:
                continue
            (((low, _), (high, _)),) = line.get_segments()
            (row,) = rows[
                np.isclose(rows["effect_size_ci_low"], low)
                & np.isclose(rows["effect_size_ci_high"], high)
            ].itertuples()
            if row.n_lists == 1:
                expected = "95% bootstrap CI (percentile)"
            elif row.n_lists <= 5:
                assert row.ci_level == pytest.approx(1 - 2 * 0.5**row.n_lists)
                expected = MEDIAN_LABELS[row.n_lists]
            else:
                expected = "≥ 95% median interval (order statistics)"
            assert line.get_label() == expected
            dashes = str(line.get_linestyle()[0])
            styles.setdefault(expected, set()).add((float(line.get_linewidth()[0]), dashes))
            seen += 1
    assert seen == len(summary)
    assert "75% median interval (order statistics)" in styles  # GloVe, en, weat1: 3 lists
    assert all(len(style) == 1 for style in styles.values())  # one look per label ...
    assert len({next(iter(style)) for style in styles.values()}) == len(styles)  # ... and kind
    assert set(styles) <= set(legend_labels(fig))


def test_titles_name_the_sets(tables: RunTables) -> None:
    figures = [forest_plot(tables), scatter_plot(tables), heatmap_plot(tables, tests=["weat1"])]
    titles = [title(ax) for fig in figures for ax in fig.axes if ax.get_title()]
    assert titles == [
        TITLES["weat1"],
        TITLES["weat2"],
        TITLES["weat1"],
        TITLES["weat2"],
        f"{TITLES['weat1']} (ca-weat:v1)",
        f"{TITLES['weat1']} (x-weat)",
    ]


# --- figures a reviewer would send back (issue 24 item 3.6) ------------------------------------


def _clashes(fig: Figure) -> list[str]:
    """Every legend that overlaps a panel's data area or a title, after drawing the figure."""
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    found = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in panels:
            title = ax.title.get_window_extent(renderer)
            for what, other in (("data", ax.get_window_extent(renderer)), ("title", title)):
                if box.overlaps(other):
                    found.append(f"legend {legend.get_texts()[0].get_text()!r} on {what} "
                                 f"of {title_text(ax)!r}")  # fmt: skip
    return found


def title_text(ax) -> str:
    return ax.get_title().replace("\n", " ")


def test_legends_sit_outside_the_data_and_the_titles(tables: RunTables) -> None:
    figures = {
        "forest": forest_plot(tables),
        "gh": scatter_plot(tables, x="iso_gh"),
        "counts": scatter_plot(tables, x="count_difference"),
        "influence": influence_plot(tables, langs=["en"], embeddings=[TOY]),
        "null": null_plot(tables, langs=["en"], embeddings=[TOY]),
    }
    clashes = {name: _clashes(fig) for name, fig in figures.items()}
    assert clashes == {name: [] for name in figures}


def test_influence_and_null_titles_name_the_sets_and_the_list(tables: RunTables) -> None:
    for plot_of in (influence_plot, null_plot):
        fig = plot_of(tables, embeddings=["glove-6b-50d"], tests=["weat1"], list_sets=["x-weat"])
        (ax,) = fig.axes
        expected = f"{TITLES['weat1']} glove-6b-50d, en, x-weat list xweat-en "
        assert title_text(ax).startswith(expected)
        fig = plot_of(tables, embeddings=[TOY], langs=["en"], tests=["weat2"])
        lists = tables.results.query(f"embeddings == '{TOY}' and lang == 'en' and test == 'weat2'")
        named = [
            f"{TITLES['weat2']} {TOY}, en, {row.list_set} list {row.list_id} "
            for row in lists.itertuples()
        ]
        shown = [title_text(ax) for ax in fig.axes if ax.get_visible()]
        assert len(shown) == len(named) > 2
        assert all(t.startswith(n) for t, n in zip(shown, named, strict=True)), shown
    null = null_plot(tables, embeddings=["glove-6b-50d"], tests=["weat1"], list_sets=["x-weat"])
    row = tables.results.query("embeddings == 'glove-6b-50d' and test == 'weat1'").query(
        "list_set == 'x-weat'"
    ).iloc[0]
    assert title_text(null.axes[0]).endswith(
        f"d = {row.effect_size:.2f}, percentile {row.null_percentile:.1f}, "
        f"p_null {row.p_null:.3g}, K = 20"
    )
    assert legend_labels(null) == ["null d: frequency-matched random X, Y", "observed d"]


def _two_spaces(tables: RunTables) -> RunTables:
    """The run with a second space on the isomorphism axis: the toy space's summary rows again,
    as ``toy2``, at other distances and effect sizes."""
    toy = tables.summary[tables.summary["embeddings"] == TOY].dropna(subset=["iso_gh"])
    rng = np.random.default_rng(1)
    other = toy.assign(
        embeddings="toy2",
        iso_gh=toy["iso_gh"] + 0.5 + rng.uniform(0, 0.1, len(toy)),
        effect_size=-toy["effect_size"] + rng.normal(0, 0.3, len(toy)),
    )
    return replace(tables, summary=pd.concat([tables.summary, other], ignore_index=True))


def test_scatter_fits_one_line_per_space_and_labels_the_languages(tables: RunTables) -> None:
    both = _two_spaces(tables)
    style = run_style(both)
    fig = scatter_plot(both, x="iso_gh", tests=["weat1"])
    (ax,) = fig.axes
    rows = both.summary.dropna(subset=["iso_gh"]).query("test == 'weat1'")
    want = {}
    for space, own in rows.groupby("embeddings"):
        want[space] = round(_numpy_r2(own["iso_gh"].to_numpy(), own["effect_size"].to_numpy()), 3)
    assert _r2_in_legend(ax) == want and len(want) == 2
    fits = [line for line in ax.get_lines() if "least squares" in line.get_label()]
    assert {to_hex(line.get_color()) for line in fits} == {
        to_hex(style.spaces[space].colour) for space in want
    }
    labels = sorted((t.get_text(), *np.round(t.xy, 9)) for t in ax.texts)
    assert labels == sorted(
        (r.lang, round(r.iso_gh, 9), round(r.effect_size, 9)) for r in rows.itertuples()
    )
    assert _clashes(fig) == []


def test_every_list_set_has_its_own_marker_face(tables: RunTables) -> None:
    fig = scatter_plot(tables, x="count_difference")
    (legend,) = fig.legends
    faces = {
        handle.get_label(): (handle.get_fillstyle(), to_hex(handle.get_markerfacecolor()))
        for handle in legend.legend_handles
        if handle.get_label().endswith(LISTS_LABEL)
    }
    assert faces == {
        f"ca-weat:v1: {LISTS_LABEL}": ("full", "#4c4c4c"),
        f"x-weat: {LISTS_LABEL}": ("full", "#ffffff"),
    }
    points = tables.asymmetry.set_index(["count_difference", "effect_size"])["list_set"]
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_marker() in MARKERS:
                (list_set,) = {points[tuple(xy)] for xy in line.get_xydata()}
                filled = to_hex(line.get_markerfacecolor()) != "#ffffff"
                assert filled == (list_set == "ca-weat:v1")


@pytest.mark.parametrize(
    ("method", "level", "nominal", "label"),
    [
        ("bootstrap-bca", 0.9, 0.9, "90% bootstrap CI (BCa)"),
        ("bootstrap-percentile", 0.99, 0.99, "99% bootstrap CI (percentile)"),
        ("median-order-statistic", 0.5, 0.95, "50% median interval (order statistics)"),
        ("median-order-statistic", 0.9375, 0.9, "≥ 90% median interval (order statistics)"),
        ("median-order-statistic", float("nan"), 0.95, "median interval (order statistics)"),
        (float("nan"), float("nan"), 0.95, "interval"),
    ],
)
def test_interval_labels(method: object, level: float, nominal: float, label: str) -> None:
    assert interval_label(method, level, nominal) == label


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_compare_heatmap_states_the_level_of_its_intervals(level: float) -> None:
    rng = np.random.default_rng(1)
    wide = pd.DataFrame({"model": list("abcdefgh"), "lang": "en"})
    wide["m1"] = rng.standard_normal(8)
    wide["m2"] = wide["m1"] + 0.1 * rng.standard_normal(8)
    table = correlation_table(wide, ["m1", "m2"], n_bootstrap=200, confidence_level=level)
    (ax, _) = correlation_heatmap(table, confidence_level=level).axes
    percent = {0.9: "90%", 0.95: "95%"}[level]
    assert f"* = {percent} bootstrap CI (percentile) excludes 0" in ax.get_title()
    (row,) = table.itertuples()
    (cell,) = ax.texts
    star = "*" if row.spearman_ci_low > 0 or row.spearman_ci_high < 0 else ""
    assert cell.get_text() == f"{row.spearman:.2f}{star}\nn=8"


def test_compare_heatmap_stars_only_by_the_one_rule() -> None:
    """6 tied units: the 95% interval excludes 0 but the exact p is 0.1 (flagged): no star."""
    wide = pd.DataFrame({"model": list("abcdef"), "lang": "en"})
    wide["m1"] = [2.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    wide["m2"] = [0.0, 0.0, 0.0, 3.0, 2.0, 3.0]
    table = correlation_table(wide, ["m1", "m2"], n_bootstrap=1000)
    (row,) = table.itertuples()
    assert row.spearman_ci_high < 0 and row.spearman_p == pytest.approx(0.1) and row.flag
    (ax, _) = correlation_heatmap(table).axes
    (cell,) = ax.texts
    assert cell.get_text() == "-0.90\nn=6"
    assert "p ≤ 0.05, not flagged" in ax.get_title()
    # the same rows read back from correlations.csv (empty flags become NaN) at 90%: a star
    table90 = correlation_table(wide, ["m1", "m2"], n_bootstrap=1000, confidence_level=0.9)
    assert table90["flag"].iloc[0] == ""
    table90["flag"] = np.nan
    (ax, _) = correlation_heatmap(table90, confidence_level=0.9).axes
    assert ax.texts[0].get_text() == "-0.90*\nn=6"


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "pie"], "unknown plot kind 'pie': choose one of forest, scatter, heatmap"),
        (["--kind", "forest", "--lang", "xx"], "no rows in summary.csv for --lang xx"),
        (["--kind", "heatmap", "--test", "weat9"], "(available: weat1, weat2)"),
        (["--kind", "scatter", "--x", "n_x"], "unknown --x 'n_x'"),
        (["--kind", "scatter", "--x", "iso_gw"], "--isomorphism LANG --iso-measures gw"),
        (["--kind", "scatter", "--lang", "en"], "no rows of summary.csv have both"),
        (["--kind", "forest", "--x", "iso_gh"], "--x is for --kind scatter"),
        (["--kind", "forest", "--dpi", "0"], "--dpi must be positive"),
    ],
)
def test_plot_errors(run_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "fig.png"
    assert_one_line_error(plot(str(run_dir), *args, "--out", str(out)), message)
    assert list(tmp_path.iterdir()) == []


def test_plot_errors_without_isomorphism_or_with_bad_paths(run_dir: Path, tmp_path: Path) -> None:
    plain = copy_without_isomorphism(run_dir, tmp_path / "plain")
    out = tmp_path / "fig.png"
    result = plot(str(plain), "--kind", "scatter", "--out", str(out))
    assert_one_line_error(result, "summary.csv has no iso_gh column: it needs a run with")
    result = plot(str(plain), "--kind", "scatter", "--x", "count_difference", "--out", str(out))
    assert_one_line_error(
        result, "has no asymmetry.csv (written by weatkit asymmetry RUN_DIR, or weatkit grid"
    )
    result = plot(str(run_dir), "--kind", "forest", "--out", str(tmp_path / "fig.jpg"))
    assert_one_line_error(result, "give a file ending in .png, .pdf, .svg")
    result = plot(str(tmp_path / "nowhere"), "--kind", "forest", "--out", str(out))
    assert_one_line_error(result, "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
    with pytest.raises(WeatkitError, match="cannot tell the figure format"):
        save_figure(forest_plot(read_run_dir(run_dir)), tmp_path / "fig")


def test_full_disk_leaves_no_figure_and_no_temporary(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "figs").mkdir()
    full_disk(monkeypatch)
    result = plot(str(run_dir), "--kind", "forest", "--out", str(tmp_path / "figs" / "f.png"))
    assert_one_line_error(result, "No space left on device")
    assert [p.name for p in tmp_path.rglob("*")] == ["figs"]  # nothing, hidden or not
