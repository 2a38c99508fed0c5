"""The safetensors vector cache, the .vec export and the hf: spec parser."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.export import vec_bytes
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.models import cache as cache_module
from weatkit.models.cache import VectorCache, cache_key

INPUTS = {"model": "m", "revision": "abc", "subwords": "sum"}


def _vectors(n: int, dim: int = 5, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_cache_round_trip_per_layer_and_item(tmp_path: Path) -> None:
    vecs0, vecs3 = _vectors(3), _vectors(3, seed=1)
    VectorCache(INPUTS, tmp_path).put(["a", "b c", "Ä"], {0: vecs0, 3: vecs3})
    fresh = VectorCache(INPUTS, tmp_path)
    got = fresh.get(["Ä", "a", "zzz"], 3)
    assert sorted(got) == ["a", "Ä"]
    np.testing.assert_array_equal(got["Ä"], vecs3[2])
    np.testing.assert_array_equal(fresh.get(["b c"], 0)["b c"], vecs0[1])
    assert fresh.get(["a"], 1) == {}
    other = VectorCache({**INPUTS, "subwords": "mean"}, tmp_path)
    assert other.get(["a"], 0) == {}


def test_cache_key_depends_on_every_input() -> None:
    assert cache_key(INPUTS) == cache_key(dict(reversed(INPUTS.items())))
    for key in INPUTS:
        assert cache_key({**INPUTS, key: "other"}) != cache_key(INPUTS)


def test_corrupt_shard_is_ignored_and_removed(tmp_path: Path) -> None:
    cache = VectorCache(INPUTS, tmp_path)
    cache.put(["a"], {0: _vectors(1)})
    bad = cache.directory / "shard-bad.safetensors"
    bad.write_bytes(b"\x00\x01not a safetensors file")
    assert sorted(VectorCache(INPUTS, tmp_path).get(["a", "b"], 0)) == ["a"]
    assert not bad.exists()


def test_shards_are_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_SHARDS", 2)
    cache = VectorCache(INPUTS, tmp_path)
    expected = {}
    for i in range(4):
        vecs = _vectors(2, seed=i)
        cache.put([f"w{i}a", f"w{i}b"], {0: vecs})
        expected.update({f"w{i}a": vecs[0], f"w{i}b": vecs[1]})
    assert len(list(cache.directory.glob("shard-*.safetensors"))) <= 2
    got = VectorCache(INPUTS, tmp_path).get(expected, 0)
    assert sorted(got) == sorted(expected)
    for word, vec in expected.items():
        np.testing.assert_array_equal(got[word], vec)


def test_unwritable_cache_costs_only_time(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = VectorCache(INPUTS, blocker)
    cache.put(["a"], {0: _vectors(1)})  # no exception
    assert "a" in cache.get(["a"], 0)  # still served from memory


def test_vec_export_round_trips_float32_exactly(tmp_path: Path) -> None:
    words = ["doctor", "machine gun", "Ärztin"]
    wv = WordVectors("m", words, _vectors(3, dim=7) * 1e3)
    path = tmp_path / "out.vec"
    path.write_bytes(vec_bytes(wv))
    loaded = load_static(path)
    assert loaded.words == ["doctor", "machine_gun", "Ärztin"]
    np.testing.assert_array_equal(loaded.vectors, wv.vectors)


def test_vec_export_refuses_colliding_items() -> None:
    wv = WordVectors("m", ["a b", "a_b"], _vectors(2))
    with pytest.raises(WeatkitError, match="both become 'a_b'"):
        vec_bytes(wv)


@pytest.mark.parametrize(
    ("text", "names", "layers", "model"),
    [
        ("hf:bert-base-cased@-2", ["bert-base-cased@-2"], [-2], "bert-base-cased"),
        ("X11=hf:xlm-roberta-large@11", ["X11"], [11], "xlm-roberta-large"),
        ("X=hf:org/model@0, -2", ["X@0", "X@-2"], [0, -2], "org/model"),
        ("hf:/models/bert.{lang}/@0", ["bert@0"], [0], "/models/bert.{lang}/"),
    ],
)
def test_hf_specs(text: str, names: list[str], layers: list[int], model: str) -> None:
    specs = parse_embeddings_specs(text, ContextualOptions(subwords="mean"))
    assert [s.name for s in specs] == names
    assert [s.layer for s in specs] == layers
    assert all(s.layers == tuple(layers) and s.is_contextual for s in specs)
    assert all(s.contextual == ContextualOptions(subwords="mean") for s in specs)
    assert specs[0].path_for("de") == model.replace("{lang}", "de")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("hf:@=,-0123456789{}/ab. \\"), max_size=30))
def test_spec_parser_never_crashes(text: str) -> None:
    try:
        specs = parse_embeddings_specs(text)
    except WeatkitError as err:
        assert "\n" not in str(err)
    else:
        assert specs and all(s.name for s in specs)
