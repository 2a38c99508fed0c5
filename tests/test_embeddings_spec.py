"""Parsing ``NAME=PATH`` embeddings specs and loading them per language."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from weatkit.embeddings.default import DEFAULT_EMBEDDINGS
from weatkit.embeddings.spec import EmbeddingsSpec, load_embeddings, parse_embeddings_spec
from weatkit.errors import WeatkitError


@pytest.mark.parametrize(
    ("text", "name", "location"),
    [
        ("WP=vecs/wiki.{lang}.vec", "WP", "vecs/wiki.{lang}.vec"),
        ("vecs/wiki.en.vec", "wiki.en", "vecs/wiki.en.vec"),
        ("vecs/wiki.en.vec.gz", "wiki.en", "vecs/wiki.en.vec.gz"),
        ("vecs/wiki.{lang}.vec", "wiki", "vecs/wiki.{lang}.vec"),
        ("vecs/{lang}/model.bin", "model", "vecs/{lang}/model.bin"),
        ("cc_{lang}_300.vec", "cc_300", "cc_{lang}_300.vec"),
        ("  FT = /data/cc.de.300.bin ", "FT", "/data/cc.de.300.bin"),
        ("dir/a=b.vec", "a=b", "dir/a=b.vec"),
        ("glove-6b-50d", DEFAULT_EMBEDDINGS, DEFAULT_EMBEDDINGS),
        ("GloVe-6B-50d", DEFAULT_EMBEDDINGS, DEFAULT_EMBEDDINGS),
        ("G=glove-6b-50d", "G", DEFAULT_EMBEDDINGS),
    ],
)
def test_parse(text: str, name: str, location: str) -> None:
    spec = parse_embeddings_spec(text)
    assert (spec.name, spec.location, spec.fmt) == (name, location, "auto")


def test_properties() -> None:
    per_lang = parse_embeddings_spec("WP=vecs/wiki.{lang}.vec")
    assert per_lang.per_language
    assert not per_lang.is_default
    assert not per_lang.uncased
    assert per_lang.path_for("de") == "vecs/wiki.de.vec"
    fixed = parse_embeddings_spec("vecs/wiki.en.vec")
    assert not fixed.per_language
    assert fixed.path_for("de") == "vecs/wiki.en.vec"
    default = parse_embeddings_spec("glove-6b-50d")
    assert default.is_default and default.uncased and not default.per_language
    assert default.path_for("en") == DEFAULT_EMBEDDINGS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty embeddings spec"),
        ("   ", "empty embeddings spec"),
        ("=vecs/a.vec", "empty name"),
        ("WP=", "empty path"),
        ("WP=  ", "empty path"),
        ("WP=vecs/wiki.{language}.vec", "unknown placeholder '{language}'"),
        ("vecs/{}.vec", "unknown placeholder '{}'"),
        ("WP=vecs/wiki.{lang.vec", "unbalanced"),
        ("WP=vecs/", "no file name"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(WeatkitError, match=message.replace("{", r"\{").replace("}", r"\}")):
        parse_embeddings_spec(text)


def _write(path: Path, rows: dict[str, list[float]]) -> None:
    dim = len(next(iter(rows.values())))
    lines = [f"{len(rows)} {dim}"] + [f"{w} " + " ".join(map(str, v)) for w, v in rows.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_load_embeddings_per_language(tmp_path: Path) -> None:
    _write(tmp_path / "wiki.en.vec", {"the": [1, 2], "flower": [3, 4], "bee": [5, 6]})
    _write(tmp_path / "wiki.de.vec", {"der": [7, 8], "Blume": [9, 10], "Biene": [11, 12]})
    spec = parse_embeddings_spec(f"WP={tmp_path}/wiki.{{lang}}.vec")
    en = load_embeddings(spec, "en", words=["flower", "Blume"])
    de = load_embeddings(spec, "de", words=["flower", "Blume"], first_n=1)
    assert (en.name, en.words) == ("WP", ["flower"])
    np.testing.assert_array_equal(en.vectors, [[3, 4]])
    assert (de.name, de.words) == ("WP", ["der", "Blume"])
    np.testing.assert_array_equal(de.vectors, [[7, 8], [9, 10]])
    assert de.source == str(tmp_path / "wiki.de.vec")
    with pytest.raises(WeatkitError, match=r"language 'fr'.*wiki\.fr\.vec not found"):
        load_embeddings(spec, "fr")


def test_load_embeddings_single_file_and_format(tmp_path: Path) -> None:
    _write(tmp_path / "vectors.data", {"a": [1, 0], "b": [0, 1]})
    spec = EmbeddingsSpec(name="X", location=str(tmp_path / "vectors.data"), fmt="text")
    wv = load_embeddings(spec, "any", words=["b"])
    assert (wv.name, wv.words) == ("X", ["b"])
    with pytest.raises(WeatkitError, match=r"'missing': file not found: .*nothere\.vec"):
        load_embeddings(parse_embeddings_spec(f"missing={tmp_path}/nothere.vec"), "en")


def test_load_embeddings_default() -> None:
    spec = parse_embeddings_spec("G=glove-6b-50d")
    wv = load_embeddings(spec, "en", words=["flower", "Flower"])
    assert (wv.name, wv.words, wv.dim) == ("G", ["flower"], 50)
