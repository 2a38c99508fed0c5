"""OOV handling: coverage numbers, the min_coverage error, and set equalisation."""

from __future__ import annotations

import numpy as np
import pytest

from weatkit.embeddings.coverage import CoverageError, CoveredTest, cover_test
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest

VOCAB = [f"x{i}" for i in range(10)] + [f"y{i}" for i in range(10)]
VOCAB += [f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)]


def vectors() -> WordVectors:
    vecs = np.arange(len(VOCAB) * 3, dtype=np.float32).reshape(-1, 3) + 1
    return WordVectors(name="toy", words=VOCAB, vectors=vecs, source="test")


def make_test(x, y, a, b) -> AssociationTest:
    return AssociationTest(
        test="weat1",
        lang="de",
        list_set="ca-weat:v1",
        list_id="de_DE1",
        X=tuple(x),
        Y=tuple(y),
        A=tuple(a),
        B=tuple(b),
        names=("flowers", "insects", "pleasant", "unpleasant"),
    )


def test_coverage_numbers_and_vectors() -> None:
    test = make_test(
        ["x0", "x1", "oov1", "x2"],  # 3/4
        ["y0", "y1", "y2", "y3", "y4"],  # 5/5
        ["a0", "oovA", "a1", "a2", "a3"],  # 4/5
        ["b0", "b1", "b2", "b2", "oovB"],  # duplicate counted once: 3/4 distinct
    )
    wv = vectors()
    cov = cover_test(test, wv, min_coverage=0.75)
    assert isinstance(cov, CoveredTest)
    assert cov.coverage == {"X": 0.75, "Y": 1.0, "A": 0.8, "B": 0.75}
    assert cov.missing == {"X": ("oov1",), "Y": (), "A": ("oovA",), "B": ("oovB",)}
    assert cov.n_oov == 3
    assert cov.items["X"] == ("x0", "x1", "x2")
    assert cov.items["B"] == ("b0", "b1", "b2", "b2")  # order and list duplicates preserved
    assert cov.dropped_by_equalisation == {"X": (), "Y": (), "A": (), "B": ()}
    for key, items in cov.items.items():
        assert cov.vectors[key].dtype == np.float32
        np.testing.assert_array_equal(cov.vectors[key], wv.lookup(items))
    # x1 is row 1 of the vocabulary: values 4, 5, 6
    np.testing.assert_array_equal(cov.vectors["X"][1], [4, 5, 6])


def test_min_coverage_failure_message() -> None:
    missing = [f"zz{i}" for i in range(10)]
    test = make_test(["x0", "x1", *missing], ["y0"], ["a0"], ["b0"])
    with pytest.raises(CoverageError) as info:
        cover_test(test, vectors())
    msg = str(info.value)
    assert isinstance(info.value, WeatkitError)
    assert "\n" not in msg
    for part in ("'toy'", "'weat1'", "'de'", "'de_DE1'", "ca-weat:v1", "X (flowers)"):
        assert part in msg
    assert "coverage 16.7% (2/12 found)" in msg
    assert "'zz0'" in msg and "'zz7'" in msg and "'zz8'" not in msg and "and 2 more" in msg
    assert "minimum coverage 80%" in msg
    # the same test passes with a lower threshold
    assert cover_test(test, vectors(), min_coverage=0.1).coverage["X"] == pytest.approx(2 / 12)


def test_exactly_at_threshold_passes() -> None:
    test = make_test(["x0", "x1", "x2", "x3", "zz"], ["y0"], ["a0"], ["b0"])
    assert cover_test(test, vectors(), min_coverage=0.8).coverage["X"] == 0.8
    with pytest.raises(CoverageError, match="X"):
        cover_test(test, vectors(), min_coverage=0.81)


def test_empty_set_is_always_an_error() -> None:
    test = make_test(["x0"], ["y0"], ["zz1", "zz2"], ["b0"])
    with pytest.raises(CoverageError, match=r"set A \(pleasant\) coverage 0\.0% \(0/2 found\)"):
        cover_test(test, vectors(), min_coverage=0.0)
    empty = make_test(["x0"], [], ["a0"], ["b0"])
    with pytest.raises(CoverageError, match=r"set Y \(insects\) is empty"):
        cover_test(empty, vectors(), min_coverage=0.0)


def test_several_failing_sets_in_one_line() -> None:
    test = make_test(["zz"], ["y0"], ["a0"], ["qq"])
    with pytest.raises(CoverageError) as info:
        cover_test(test, vectors())
    msg = str(info.value)
    assert "set X (flowers)" in msg and "set B (unpleasant)" in msg and "\n" not in msg


def test_truncate_pops_from_the_end() -> None:
    test = make_test(
        ["x0", "x1", "zz", "x2", "x3", "x4"],  # 5 found
        ["y0", "y1", "y2"],
        ["a0", "a1"],
        ["b0", "b1", "b2", "b3"],
    )
    cov = cover_test(test, vectors(), min_coverage=0.5, equalize="truncate")
    assert cov.items == {
        "X": ("x0", "x1", "x2"),
        "Y": ("y0", "y1", "y2"),
        "A": ("a0", "a1"),
        "B": ("b0", "b1"),
    }
    assert cov.dropped_by_equalisation == {"X": ("x3", "x4"), "Y": (), "A": (), "B": ("b2", "b3")}
    assert cov.vectors["X"].shape == (3, 3)
    assert cov.missing["X"] == ("zz",)


def test_subsample_is_seeded_and_keeps_order() -> None:
    test = make_test([f"x{i}" for i in range(10)], ["y0", "y1", "y2", "y3"], ["a0"], ["b1", "b0"])
    first = cover_test(test, vectors(), equalize="subsample", seed=7)
    again = cover_test(test, vectors(), equalize="subsample", seed=7)
    assert first.items == again.items
    kept = first.items["X"]
    assert len(kept) == 4 and first.items["Y"] == ("y0", "y1", "y2", "y3")
    assert list(kept) == sorted(kept, key=lambda w: int(w[1:]))  # original order kept
    assert set(kept) | set(first.dropped_by_equalisation["X"]) == {f"x{i}" for i in range(10)}
    assert len(first.dropped_by_equalisation["X"]) == 6
    # A/B: B has 2, A has 1 -> one of B dropped, the survivor keeps its position
    assert len(first.items["B"]) == 1
    expected = np.sort(np.random.default_rng(7).choice(10, size=4, replace=False))
    assert kept == tuple(f"x{i}" for i in expected)
    seeds = {cover_test(test, vectors(), equalize="subsample", seed=s).items["X"] for s in range(8)}
    assert len(seeds) > 1


def test_bad_options() -> None:
    test = make_test(["x0"], ["y0"], ["a0"], ["b0"])
    with pytest.raises(WeatkitError, match="unknown equalize mode 'shuffle'"):
        cover_test(test, vectors(), equalize="shuffle")
    with pytest.raises(WeatkitError, match="min_coverage"):
        cover_test(test, vectors(), min_coverage=1.5)
