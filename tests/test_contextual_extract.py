"""ContextualExtractor against vectors recomputed by hand from tiny offline models.

Token positions are worked out by hand from the vocabularies in ``tests/tiny_models.py``:

* every model puts one special token in front (``[CLS]``, ``<s>``, or the prepended GPT-2 BOS),
  so an item's own tokens start at position 1;
* ``sunflower`` = ``sun ##flow ##er`` / ``▁sun flow er`` / ``sun flow er`` (3 tokens),
  ``roses`` = ``rose ##s`` (2), ``tulips`` = ``tul ##ip ##s`` (3), ``doctor`` and ``she`` are one
  token, ``sun flower`` is two whole words (``sun`` + ``flower`` / ``Ġflower`` / ``▁flower``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.tiny_models import make_bart, make_bert, make_gpt2, make_xlmr, manual_word_vector
from weatkit.data import cache_dir
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.errors import WeatkitError

TOL = {"rtol": 1e-5, "atol": 1e-5}
LAYERS = [0, 1, -1, -2]
N_HIDDEN_STATES = 3  # every tiny model: embeddings + 2 layers

# item -> positions of its own tokens when encoded with special tokens (worked out by hand)
POSITIONS = {
    "doctor": [1],
    "she": [1],
    "roses": [1, 2],
    "tulips": [1, 2, 3],
    "sunflower": [1, 2, 3],
    "sun flower": [1, 2],
}
# the same without special tokens
POSITIONS_NO_SPECIALS = {w: [p - 1 for p in ps] for w, ps in POSITIONS.items()}

BUILDERS = {"bert": make_bert, "xlmr": make_xlmr, "gpt2": make_gpt2, "bart": make_bart}


@pytest.fixture(scope="session")
def tiny_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    dirs = {name: build(root / name) for name, build in BUILDERS.items()}
    dirs["bert-uncased"] = make_bert(root / "bert-uncased", lowercase=True)
    return dirs


def _extract(model_dir: Path, items, layers, **options):
    options.setdefault("cache", False)
    ext = ContextualExtractor(str(model_dir), ContextualOptions(**options))
    return ext, ext.extract(list(items), list(layers), show_progress=False)


# ----------------------------------------------------------------- 1. layers x models x words


@pytest.mark.parametrize("name", list(BUILDERS))
def test_vectors_match_manual_per_layer(tiny_dirs: dict[str, Path], name: str) -> None:
    items = list(POSITIONS)
    _, out = _extract(tiny_dirs[name], items, LAYERS)
    assert sorted(out) == sorted(LAYERS)
    for layer in LAYERS:
        wv = out[layer]
        assert wv.words == items
        assert wv.vectors.dtype == np.float32
        assert wv.vectors.shape == (len(items), 24)
        for word, positions in POSITIONS.items():
            expected = manual_word_vector(tiny_dirs[name], word, positions, layer)
            got = wv.lookup([word])[0]
            np.testing.assert_allclose(got, expected, **TOL, err_msg=f"{name} {word} L{layer}")
            np.testing.assert_allclose(wv.vectors[wv.index(word)], expected, **TOL)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_layers_differ(tiny_dirs: dict[str, Path], name: str) -> None:
    """Sanity: the layers really are different hidden states (guards against a wrong index)."""
    _, out = _extract(tiny_dirs[name], ["sunflower"], [0, 1, 2, -1])
    np.testing.assert_array_equal(out[2].vectors, out[-1].vectors)
    assert not np.allclose(out[0].vectors, out[1].vectors)
    assert not np.allclose(out[1].vectors, out[2].vectors)


# --------------------------------------------------------------------------------- 2. pooling


@pytest.mark.parametrize("name", ["bert", "gpt2", "xlmr"])
@pytest.mark.parametrize("pool", ["sum", "mean", "first", "last"])
def test_pooling_modes(tiny_dirs: dict[str, Path], name: str, pool: str) -> None:
    items = ["sunflower", "roses", "doctor"]
    _, out = _extract(tiny_dirs[name], items, [-1, 1], subwords=pool)
    for layer in (-1, 1):
        for word in items:
            expected = manual_word_vector(tiny_dirs[name], word, POSITIONS[word], layer, pool)
            np.testing.assert_allclose(out[layer].lookup([word])[0], expected, **TOL)


def test_pooling_modes_differ_for_multi_piece_words(tiny_dirs: dict[str, Path]) -> None:
    vecs = {
        pool: _extract(tiny_dirs["bert"], ["sunflower", "doctor"], [-1], subwords=pool)[1][-1]
        for pool in ("sum", "mean", "first", "last")
    }
    np.testing.assert_allclose(
        vecs["sum"].lookup(["sunflower"]), 3 * vecs["mean"].lookup(["sunflower"]), **TOL
    )
    assert not np.allclose(vecs["first"].lookup(["sunflower"]), vecs["last"].lookup(["sunflower"]))
    for pool in ("mean", "first", "last"):  # one piece: every pooling is the same
        np.testing.assert_allclose(
            vecs[pool].lookup(["doctor"]), vecs["sum"].lookup(["doctor"]), **TOL
        )


# ------------------------------------------------------------------------ 3. no special tokens


@pytest.mark.parametrize("name", list(BUILDERS))
def test_without_special_tokens(tiny_dirs: dict[str, Path], name: str) -> None:
    items = ["sunflower", "roses", "doctor", "sun flower"]
    _, out = _extract(tiny_dirs[name], items, [0, -1], special_tokens=False)
    for layer in (0, -1):
        for word in items:
            expected = manual_word_vector(
                tiny_dirs[name], word, POSITIONS_NO_SPECIALS[word], layer, add_special_tokens=False
            )
            np.testing.assert_allclose(out[layer].lookup([word])[0], expected, **TOL)


def test_special_tokens_matter(tiny_dirs: dict[str, Path]) -> None:
    _, with_specials = _extract(tiny_dirs["bert"], ["sunflower"], [-1])
    _, without = _extract(tiny_dirs["bert"], ["sunflower"], [-1], special_tokens=False)
    assert not np.allclose(with_specials[-1].vectors, without[-1].vectors)


# -------------------------------------------------------------------------------- 4. template

# "This is {}." -> [CLS] This is <item tokens> . [SEP]: the item starts at position 3
TEMPLATE_POSITIONS = {"roses": [3, 4], "sunflower": [3, 4, 5], "doctor": [3], "sun flower": [3, 4]}


@pytest.mark.parametrize("pool", ["sum", "mean"])
def test_template_bert(tiny_dirs: dict[str, Path], pool: str) -> None:
    items = list(TEMPLATE_POSITIONS)
    _, out = _extract(tiny_dirs["bert"], items, [0, -1], template="This is {}.", subwords=pool)
    for layer in (0, -1):
        for word, positions in TEMPLATE_POSITIONS.items():
            expected = manual_word_vector(
                tiny_dirs["bert"], f"This is {word}.", positions, layer, pool
            )
            np.testing.assert_allclose(out[layer].lookup([word])[0], expected, **TOL)


@pytest.mark.parametrize("name", ["xlmr", "gpt2", "bart"])
def test_template_other_tokenizers(tiny_dirs: dict[str, Path], name: str) -> None:
    # <s>/BOS This ▁is/Ġis <item>: "This is roses." = [BOS, This, Ġis, Ġrose, s, ., (</s>)]
    positions = {"roses": [3, 4], "doctor": [3]}
    _, out = _extract(tiny_dirs[name], list(positions), [-1], template="This is {}.")
    for word, pos in positions.items():
        expected = manual_word_vector(tiny_dirs[name], f"This is {word}.", pos, -1)
        np.testing.assert_allclose(out[-1].lookup([word])[0], expected, **TOL)


def test_template_differs_from_bare_word(tiny_dirs: dict[str, Path]) -> None:
    _, bare = _extract(tiny_dirs["bert"], ["roses"], [-1])
    _, templ = _extract(tiny_dirs["bert"], ["roses"], [-1], template="This is {}.")
    assert not np.allclose(bare[-1].vectors, templ[-1].vectors)


# ---------------------------------------------------------------------- 5. padding invariance

LONG = [
    "sunflower sunflower tulips roses sunflower tulips",
    "tulips tulips tulips tulips tulips tulips tulips tulips",
]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_padding_invariance(tiny_dirs: dict[str, Path], name: str) -> None:
    _, alone = _extract(tiny_dirs[name], ["she"], [0, -1])
    ext_big, big = _extract(tiny_dirs[name], ["she", *LONG, "roses"], [0, -1], batch_size=64)
    ext_one, one = _extract(tiny_dirs[name], ["she", *LONG, "roses"], [0, -1], batch_size=1)
    assert ext_big.stats.n_batches == 1
    assert ext_one.stats.n_batches == 4
    for layer in (0, -1):
        np.testing.assert_allclose(big[layer].lookup(["she"]), alone[layer].vectors, **TOL)
        np.testing.assert_allclose(one[layer].lookup(["she"]), alone[layer].vectors, **TOL)
        np.testing.assert_allclose(big[layer].vectors, one[layer].vectors, **TOL)
    expected = manual_word_vector(tiny_dirs[name], "roses", POSITIONS["roses"], -1)
    np.testing.assert_allclose(big[-1].lookup(["roses"])[0], expected, **TOL)


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_padding_invariance_with_template(tiny_dirs: dict[str, Path], name: str) -> None:
    kw = {"template": "This is {}."}
    _, alone = _extract(tiny_dirs[name], ["roses"], [-1], **kw)
    _, big = _extract(tiny_dirs[name], [*LONG, "roses"], [-1], batch_size=64, **kw)
    np.testing.assert_allclose(big[-1].lookup(["roses"]), alone[-1].vectors, **TOL)


# ----------------------------------------------------------------------- 6. multi-word items


@pytest.mark.parametrize("name", list(BUILDERS))
def test_multi_word_item_sums_both_words(tiny_dirs: dict[str, Path], name: str) -> None:
    _, out = _extract(tiny_dirs[name], ["sun flower", "sun"], [-1, 0])
    for layer in (-1, 0):
        both = manual_word_vector(tiny_dirs[name], "sun flower", [1, 2], layer)
        np.testing.assert_allclose(out[layer].lookup(["sun flower"])[0], both, **TOL)
        first = manual_word_vector(tiny_dirs[name], "sun flower", [1], layer)
        second = manual_word_vector(tiny_dirs[name], "sun flower", [2], layer)
        np.testing.assert_allclose(out[layer].lookup(["sun flower"])[0], first + second, **TOL)
        assert not np.allclose(out[layer].lookup(["sun flower"]), out[layer].lookup(["sun"]))


# ---------------------------------------------------------------------------------- 7. errors


@pytest.mark.parametrize("layer", [99, -99, 3, -4])
def test_bad_layer(tiny_dirs: dict[str, Path], layer: int) -> None:
    ext = ContextualExtractor(str(tiny_dirs["bert"]), ContextualOptions(cache=False))
    with pytest.raises(WeatkitError) as info:
        ext.extract(["doctor"], [0, layer], show_progress=False)
    message = str(info.value)
    assert str(layer) in message
    assert re.search(r"\b[23]\b", message), message  # 2 layers / 3 hidden states


def test_bad_subwords(tiny_dirs: dict[str, Path]) -> None:
    with pytest.raises(WeatkitError, match="median"):
        _extract(tiny_dirs["bert"], ["doctor"], [-1], subwords="median")


@pytest.mark.parametrize("template", ["This is a word.", "{x}"])
def test_bad_template(tiny_dirs: dict[str, Path], template: str) -> None:
    with pytest.raises(WeatkitError):
        _extract(tiny_dirs["bert"], ["doctor"], [-1], template=template)


# ----------------------------------------------------------------------------------- 8. cache


def test_cache_hit_and_miss(tiny_dirs: dict[str, Path]) -> None:
    items = ["sunflower", "roses", "doctor", "sun flower"]
    layers = [0, -1]
    first, out1 = _extract(tiny_dirs["bert"], items, layers, cache=True)
    assert first.stats.n_items == len(items)
    assert first.stats.n_computed == len(items)
    assert first.stats.n_cached == 0
    assert first.stats.n_batches >= 1
    assert (cache_dir("vectors")).is_dir()
    assert any(p.is_file() for p in (cache_dir("vectors")).rglob("*"))

    second, out2 = _extract(tiny_dirs["bert"], items, layers, cache=True)
    assert second.stats.n_computed == 0
    assert second.stats.n_batches == 0
    assert second.stats.n_cached == len(items)
    for layer in layers:
        assert out2[layer].words == items
        np.testing.assert_array_equal(out2[layer].vectors, out1[layer].vectors)
        expected = manual_word_vector(tiny_dirs["bert"], "roses", POSITIONS["roses"], layer)
        np.testing.assert_allclose(out2[layer].lookup(["roses"])[0], expected, **TOL)

    # a subset, in another order, is served from the cache too
    third, out3 = _extract(tiny_dirs["bert"], ["doctor", "roses"], layers, cache=True)
    assert third.stats.n_computed == 0
    assert third.stats.n_batches == 0
    np.testing.assert_array_equal(out3[-1].lookup(["roses"]), out1[-1].lookup(["roses"]))

    # different options must not be served the cached sum
    mean, out_mean = _extract(tiny_dirs["bert"], items, layers, cache=True, subwords="mean")
    assert mean.stats.n_computed == len(items)
    assert mean.stats.n_batches >= 1
    np.testing.assert_allclose(
        out_mean[-1].lookup(["sunflower"]) * 3, out1[-1].lookup(["sunflower"]), **TOL
    )
    templ, _ = _extract(tiny_dirs["bert"], items, layers, cache=True, template="This is {}.")
    assert templ.stats.n_computed == len(items)
    nospec, _ = _extract(tiny_dirs["bert"], items, layers, cache=True, special_tokens=False)
    assert nospec.stats.n_computed == len(items)

    # another model must not be served this model's vectors
    other, _ = _extract(tiny_dirs["bert-uncased"], items, layers, cache=True)
    assert other.stats.n_computed == len(items)


def test_cache_is_shared_across_batch_sizes(tiny_dirs: dict[str, Path]) -> None:
    # padded batches change a vector's last bits only (docs/guides/caching.md): a cache written
    # with batch size 1 serves batch size 64, and the vectors agree to rounding
    items = ["sunflower", "roses", "doctor"]
    one, out_one = _extract(tiny_dirs["xlmr"], items, [-1], cache=True, batch_size=1)
    assert one.stats.n_computed == len(items)
    big, out_big = _extract(tiny_dirs["xlmr"], items, [-1], cache=True, batch_size=64)
    assert big.stats.n_cached == len(items) and big.stats.n_batches == 0
    np.testing.assert_array_equal(out_big[-1].vectors, out_one[-1].vectors)
    _, out_fresh = _extract(tiny_dirs["xlmr"], items, [-1], cache=False, batch_size=64)
    np.testing.assert_allclose(out_fresh[-1].vectors, out_one[-1].vectors, **TOL)


def test_cache_partial_hit(tiny_dirs: dict[str, Path]) -> None:
    _extract(tiny_dirs["gpt2"], ["roses", "doctor"], [-1], cache=True)
    ext, out = _extract(tiny_dirs["gpt2"], ["roses", "sunflower", "doctor"], [-1], cache=True)
    assert ext.stats.n_cached == 2
    assert ext.stats.n_computed == 1
    assert out[-1].words == ["roses", "sunflower", "doctor"]
    expected = manual_word_vector(tiny_dirs["gpt2"], "sunflower", POSITIONS["sunflower"], -1)
    np.testing.assert_allclose(out[-1].lookup(["sunflower"])[0], expected, **TOL)


def test_cache_off_recomputes(tiny_dirs: dict[str, Path]) -> None:
    _extract(tiny_dirs["bert"], ["roses"], [-1], cache=False)
    ext, _ = _extract(tiny_dirs["bert"], ["roses"], [-1], cache=False)
    assert ext.stats.n_cached == 0
    assert ext.stats.n_computed == 1
    assert ext.stats.n_batches == 1


# ----------------------------------------------------------------------------- 9. uncased BERT


def test_uncased_tokenizer_lowercases(tiny_dirs: dict[str, Path]) -> None:
    ext, out = _extract(tiny_dirs["bert-uncased"], ["Doctor", "doctor", "Sunflower"], [0, -1])
    assert any("uncased" in note and "2 item(s)" in note for note in ext.notes)
    for layer in (0, -1):
        wv = out[layer]
        assert wv.words == ["Doctor", "doctor", "Sunflower"]
        np.testing.assert_allclose(wv.lookup(["Doctor"]), wv.lookup(["doctor"]), **TOL)
        expected = manual_word_vector(tiny_dirs["bert-uncased"], "sunflower", [1, 2, 3], layer)
        np.testing.assert_allclose(wv.lookup(["Sunflower"])[0], expected, **TOL)


def test_cased_tokenizer_keeps_case(tiny_dirs: dict[str, Path]) -> None:
    # cased vocabulary: "This" and "this" are different whole-word tokens
    ext, out = _extract(tiny_dirs["bert"], ["This", "this"], [0])
    assert not any("uncased" in note for note in ext.notes)
    assert not np.allclose(out[0].lookup(["This"]), out[0].lookup(["this"]))


def test_lower_option_lowercases_items(tiny_dirs: dict[str, Path]) -> None:
    _, lowered = _extract(tiny_dirs["bert"], ["This"], [0], lower=True)
    # "this" is encoded; the vector answers for the item as written (issue 15, bug 7a)
    assert lowered[0].words == ["This"]
    expected = manual_word_vector(tiny_dirs["bert"], "this", [1], 0)
    np.testing.assert_allclose(lowered[0].vectors[0], expected, **TOL)
