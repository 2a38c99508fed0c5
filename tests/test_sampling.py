"""The seeded, stratified sample of ``--limit N`` (weatkit.stats.sampling), by hand."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from weatkit.errors import ConfigError
from weatkit.stats.sampling import (
    ItemSample,
    allocate,
    check_limit,
    sample_rows,
    stratified_sample,
)

# 10 items: stratum a has 5, b has 3, c has 2
IDS = [f"i{k}" for k in range(10)]
STRATA = ["a", "b", "a", "c", "a", "b", "a", "c", "b", "a"]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        # q = 4·(5, 3, 2)/10 = (2.0, 1.2, 0.8): floors (2, 1, 0), the one left to c (.8)
        (4, {"a": 2, "b": 1, "c": 1}),
        # q = (2.5, 1.5, 1.0): floors (2, 1, 1), the one left: a and b tie at .5, a is larger
        (5, {"a": 3, "b": 1, "c": 1}),
        # q = (0.5, 0.3, 0.2): the one item to a
        (1, {"a": 1, "b": 0, "c": 0}),
        # q = (3.5, 2.1, 1.4): floors (3, 2, 1), the one left to a (.5)
        (7, {"a": 4, "b": 2, "c": 1}),
        (10, {"a": 5, "b": 3, "c": 2}),
        (99, {"a": 5, "b": 3, "c": 2}),
    ],
)
def test_allocation_by_hand(limit: int, expected: dict[str, int]) -> None:
    assert allocate({"a": 5, "b": 3, "c": 2}, limit) == expected


def test_ties_of_equal_strata_go_to_the_label_that_sorts_first() -> None:
    # 3 of (2, 2): q = (1.5, 1.5), floors (1, 1), the one left: a tie of equal strata -> x
    assert allocate({"y": 2, "x": 2}, 3) == {"x": 2, "y": 1}
    # numbers sort as numbers: stereotype 2 before 10
    assert allocate({10: 1, 2: 1}, 1) == {2: 1, 10: 0}


def test_sample_counts_and_description() -> None:
    keep, sample = stratified_sample(IDS, STRATA, 4, 0, by="letter", unit="things")
    kept = [STRATA[p] for p in keep]
    assert sorted(kept) == ["a", "a", "b", "c"]
    assert list(keep) == sorted(keep)  # in the items' order
    assert sample == ItemSample(
        4, 0, 10, "letter", "things", {"a": (2, 5), "b": (1, 3), "c": (1, 2)}
    )
    assert sample.describe() == "sample of 4 of 10 things, stratified by letter (seed 0)"
    assert sample.to_dict() == {
        "limit": 4,
        "seed": 0,
        "n_items": 10,
        "unit": "things",
        "stratified_by": "letter",
        "strata": {"a": {"n": 2, "of": 5}, "b": {"n": 1, "of": 3}, "c": {"n": 1, "of": 2}},
    }


def test_sample_depends_only_on_seed_limit_and_ids() -> None:
    def chosen(ids: list[str], strata: list[str], seed: int, limit: int = 5) -> set[str]:
        keep, _ = stratified_sample(ids, strata, limit, seed, by="letter")
        return {ids[p] for p in keep}

    first = chosen(IDS, STRATA, 7)
    assert chosen(IDS, STRATA, 7) == first  # deterministic
    order = list(range(10))
    random.Random(1).shuffle(order)
    shuffled = chosen([IDS[i] for i in order], [STRATA[i] for i in order], 7)
    assert shuffled == first  # the items' order does not matter
    assert any(chosen(IDS, STRATA, seed) != first for seed in range(1, 6))  # the seed does
    # a larger sample keeps the smaller one's items of each stratum
    assert chosen(IDS, STRATA, 7, limit=4) <= chosen(IDS, STRATA, 7, limit=7)


def test_limit_at_least_the_items_is_no_sample() -> None:
    for limit in (None, 10, 11):
        keep, sample = stratified_sample(IDS, STRATA, limit, 0, by="letter")
        assert list(keep) == list(range(10)) and sample is None
    table = pd.DataFrame({"id": IDS, "s": STRATA})
    rows, sample = sample_rows(table, 10, 0, id_column="id", stratum_column="s", by="letter")
    assert rows is table and sample is None
    rows, sample = sample_rows(table, 3, 0, id_column="id", stratum_column="s", by="letter")
    assert len(rows) == 3 and list(rows.index) == [0, 1, 2] and sample is not None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "limit: must be at least 1, got 0"),
        (-3, "limit: must be at least 1, got -3"),
        (2.5, "limit: expected a whole number of items, got 2.5"),
        (True, "limit: expected a whole number of items, got True"),
        ("5", "limit: expected a whole number of items, got '5'"),
    ],
)
def test_bad_limits(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_limit(value)
    assert str(info.value) == message and info.value.field == "limit"


def test_a_stratum_the_measure_needs_must_not_be_empty() -> None:
    # 2 items: q = (1.0, 0.6, 0.4), floors (1, 0, 0), the one left to b: c gets none;
    # 3 items: q = (1.5, 0.9, 0.6), floors (1, 0, 0), the two left to b and c: one each
    with pytest.raises(ConfigError) as info:
        stratified_sample(IDS, STRATA, 2, 0, by="letter", unit="things", least=1)
    assert str(info.value) == (
        "limit: 2 leaves letter c without things; the measure needs 1 in each letter: give at "
        "least 3"
    )
    keep, _ = stratified_sample(IDS, STRATA, 3, 0, by="letter", least=1)
    assert sorted(STRATA[p] for p in keep) == ["a", "b", "c"]


def test_repeated_ids_are_refused() -> None:
    with pytest.raises(Exception, match="repeated ids"):
        stratified_sample(["x", "x", "y"], ["a", "a", "b"], 2, 0, by="letter")
