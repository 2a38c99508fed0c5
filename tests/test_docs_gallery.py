"""The docs gallery hook (docs/hooks/gallery.py): its figures, its data check and its page."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_gallery_hook", REPO / "docs/hooks/gallery.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as mkdocs loads hooks (dataclasses look the module up)
    spec.loader.exec_module(module)
    return module


gallery = _load_hook()


def check_png(path: Path) -> None:
    """A PNG file with its signature and an IHDR of a figure-sized image."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    assert data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 300 and height >= 200, (path, width, height)


@pytest.mark.slow  # 16 s on a busy 2-core machine, 8 s of it importing torch
def test_glove_figures_are_pngs_and_weatkit_caches_nothing_at_home(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("WEATKIT_CACHE")
    figures = [f for f in gallery.FIGURES if f.run == "run-glove"]
    assert {f.kind for f in figures} == {"influence", "null"}

    paths = gallery.make_figures(tmp_path / "out", tmp_path / "work", figures)

    assert [p.name for p in paths] == [f.file for f in figures]
    for path in paths:
        check_png(path)
    assert not (tmp_path / "work" / "run-languages").exists()  # only the runs the figures need
    # matplotlib keeps its font list in ~/.cache/matplotlib, as for any user of matplotlib
    assert not (home / ".cache" / "weatkit").exists()
    assert not (home / ".cache" / "huggingface").exists()
    assert "WEATKIT_CACHE" not in gallery.os.environ  # restored


def test_missing_data_fails_in_one_line_naming_weatkit_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path / "nowhere"))

    with pytest.raises(gallery.GalleryError) as caught:
        gallery.make_figures(tmp_path / "out")

    message = str(caught.value)
    assert message == (
        f"gallery: WEATKIT_DATA {tmp_path / 'nowhere'} has no ca-weat/: set WEATKIT_DATA to a "
        "copy of the word lists (the layout of shared/data)"
    )
    assert not (tmp_path / "out").exists()


def test_commands_in_the_gallery_page() -> None:
    assert (
        gallery.FIGURES[2].command
        == "weatkit plot run-languages --kind scatter --x iso_gh --out gh.png"
    )
    assert gallery.FIGURES[4].command == (
        "weatkit plot run-glove --kind influence --test weat1,weat6 --out influence.png"
    )
    page = (REPO / "docs" / gallery.PAGE).read_text(encoding="utf-8")
    for needed in gallery.shown_on_page():
        assert needed in page, needed


def test_a_page_without_a_figure_fails_the_build() -> None:
    from mkdocs.exceptions import PluginError

    page = SimpleNamespace(file=SimpleNamespace(src_uri=gallery.PAGE))
    text = (REPO / "docs" / gallery.PAGE).read_text(encoding="utf-8")
    assert gallery.on_page_markdown(text, page, None, None) == text
    broken = text.replace("--kind null", "--kind nul")

    with pytest.raises(PluginError, match="does not show 'weatkit plot run-glove --kind null"):
        gallery.on_page_markdown(broken, page, None, None)
    other = SimpleNamespace(file=SimpleNamespace(src_uri="measures/weat.md"))
    assert gallery.on_page_markdown("no figures", other, None, None) == "no figures"


def test_a_failed_grid_job_fails_in_one_line(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import weatkit

    failed = SimpleNamespace(failed=[{"job": "GloVe/en", "error": "vectors.vec:3: bad line"}])
    monkeypatch.setattr(weatkit, "grid", lambda *args, **kwargs: failed)

    with pytest.raises(gallery.GalleryError) as caught:
        gallery.make_figures(tmp_path / "out", tmp_path / "work", gallery.FIGURES[-1:])

    assert str(caught.value) == "gallery: glove.yaml: job GloVe/en: vectors.vec:3: bad line"
    assert not (tmp_path / "out").exists()
