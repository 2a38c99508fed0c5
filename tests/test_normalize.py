"""weatkit.lists.normalize: each rule on hand-made strings, and the report on CA-WEAT quirks."""

from __future__ import annotations

from pathlib import Path

import pytest

from weatkit.lists import AssociationTest, load_list_set
from weatkit.lists.normalize import (
    Normalization,
    normalize_item,
    normalize_tests,
    normalize_tests_report,
)

KEEP = Normalization(join_phrases=None)


def _test(**sets: tuple[str, ...]) -> AssociationTest:
    defaults = {"X": ("x",), "Y": ("y",), "A": ("a",), "B": ("b",)}
    return AssociationTest(
        test="weat1",
        lang="xx",
        list_set="hand",
        list_id="l1",
        names=("flowers", "insects", "pleasant", "unpleasant"),
        **{**defaults, **sets},
    )


def test_nfd_becomes_nfc() -> None:
    assert normalize_item("cafe\u0301", KEEP) == "caf\u00e9"


@pytest.mark.parametrize("mark", ["\u200b", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066"])
def test_invisible_marks_are_removed(mark: str) -> None:
    assert normalize_item(f"عود{mark}", KEEP) == "عود"
    assert normalize_item(f"{mark}a{mark}b", KEEP) == "ab"


@pytest.mark.parametrize("mark", ["\u2069", "\ufeff", "\u2060"])
def test_bom_and_word_joiner_are_removed(mark: str) -> None:
    assert normalize_item(f"x{mark}y", KEEP) == "xy"


def test_zwnj_and_zwj_are_kept() -> None:
    persian = "می\u200cخواهم"  # ZWNJ is part of the Persian spelling
    assert normalize_item(persian, KEEP) == persian
    assert normalize_item("क्\u200dष", KEEP) == "क्\u200dष"


def test_whitespace_is_stripped_and_collapsed() -> None:
    assert normalize_item("  fucile \t  mitragliatore \n", KEEP) == "fucile mitragliatore"
    assert normalize_item("a\u00a0b", KEEP) == "a b"  # no-break space counts as a space


def test_phrases_are_joined() -> None:
    assert normalize_item(" fucile  mitragliatore ", Normalization()) == "fucile_mitragliatore"
    assert normalize_item("a b", Normalization(join_phrases="-")) == "a-b"
    assert normalize_item("a b", KEEP) == "a b"


def test_lowercase_is_optional() -> None:
    assert normalize_item("Überraschungen", KEEP) == "Überraschungen"
    assert normalize_item("Überraschungen", Normalization(lower=True)) == "überraschungen"


def test_accents_are_stripped_on_request() -> None:
    assert normalize_item("Überraschungen", Normalization(strip_accents=True)) == "Uberraschungen"
    assert normalize_item("tranquillità", Normalization(strip_accents=True)) == "tranquillita"
    both = Normalization(lower=True, strip_accents=True)
    assert normalize_item("E\u0301TE\u0301", both) == "ete"
    assert normalize_item("tranquillità", KEEP) == "tranquillità"


def test_empty_items_are_dropped_and_reported() -> None:
    tests, messages = normalize_tests([_test(X=("rose", "\u200e", "   "))], KEEP)
    assert tests[0].X == ("rose",)
    assert sum("empty item" in m for m in messages) == 2


def test_duplicates_after_normalisation_are_removed_with_a_warning() -> None:
    tests, messages = normalize_tests([_test(A=("fisarmonica", " fisarmonica", "tromba"))], KEEP)
    assert tests[0].A == ("fisarmonica", "tromba")
    (line,) = [m for m in messages if m.startswith("warning:")]
    assert "duplicate item" in line
    assert messages[-1] == "normalisation: whitespace 1, duplicates 1"
    for part in ("hand", "l1", "weat1", "A (pleasant)", "'fisarmonica'"):
        assert part in line


def test_lowercasing_can_create_duplicates() -> None:
    tests, _ = normalize_tests([_test(X=("Rose", "rose"))], Normalization(lower=True))
    assert tests[0].X == ("rose",)


def test_cross_set_overlap_is_reported_and_kept() -> None:
    tests, messages = normalize_tests([_test(X=("bee", "rose"), Y=("bee", "ant"))], KEEP)
    assert tests[0].X == ("bee", "rose") and tests[0].Y == ("bee", "ant")
    (line,) = [m for m in messages if m.startswith("note:")]
    assert "'bee'" in line and "X (flowers)" in line and "Y (insects)" in line


def test_attribute_overlap_is_reported() -> None:
    _, report = normalize_tests_report([_test(A=("surprise",), B=("surprise",))], KEEP)
    assert report.overlaps == 1


def test_counts_per_rule() -> None:
    item = " Cafe\u0301\u200e  au lait "
    _, report = normalize_tests_report([_test(X=(item, "x"))], Normalization(lower=True))
    assert report.counts["nfc"] == 1
    assert report.counts["invisible"] == 1
    assert report.counts["whitespace"] == 1
    assert report.counts["lower"] == 1
    assert report.counts["phrases"] == 1
    assert report.counts["accents"] == 0
    summary = report.summary()
    assert summary.startswith("normalisation:") and "nfc 1" in summary
    _, messages = normalize_tests([_test()], KEEP)
    assert messages == ["normalisation: no changes"]


def test_test_with_an_empty_set_is_dropped() -> None:
    tests, report = normalize_tests_report([_test(B=("\u200b",)), _test(X=("ok",))], KEEP)
    assert len(tests) == 1
    assert report.dropped_tests == [("hand", "xx", "l1", "weat1")]


def test_input_is_not_modified() -> None:
    original = _test(X=("a b",))
    normalize_tests([original], Normalization())
    assert original.X == ("a b",)


def test_caweat_v1_quirks(data_dir: Path) -> None:
    tests = load_list_set("ca-weat:v1", ["ru", "de6", "ar", "fa", "it2"])
    normalized, messages = normalize_tests(tests, Normalization())
    text = "\n".join(messages)
    assert "ca-weat:v1 ru1 weat1: 'пчела' is in both X (flowers) and Y (insects)" in text
    assert "de6" in text and "'Überraschungen' is in both A (pleasant) and B (unpleasant)" in text
    assert "it2 weat2 X (instruments): duplicate item 'fisarmonica'" in text
    by_key = {(t.list_id, t.test): t for t in normalized}
    assert "пчела" in by_key["ru1", "weat1"].X and "пчела" in by_key["ru1", "weat1"].Y
    # the three LRMs of ar1 are gone, the five ZWNJs of the Persian lists are kept
    assert not any("\u200e" in w for t in normalized for w in t.vocabulary())
    raw_zwnj = sum(w.count("\u200c") for t in tests if t.lang == "fa" for w in t.vocabulary())
    new_zwnj = sum(w.count("\u200c") for t in normalized if t.lang == "fa" for w in t.vocabulary())
    assert raw_zwnj == new_zwnj > 0
