"""Built-in list sets: contents as documented in ca-weat/SOURCE.md and cbn/SOURCE.md."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from unittest import mock

import pytest

from weatkit.errors import WeatkitError
from weatkit.lists import (
    LIST_SETS,
    Normalization,
    available_languages,
    language_of,
    load_list_set,
    select_lists,
)

REPO = Path(__file__).resolve().parents[1]
WEAT_JSON = REPO / "weatkit" / "wordlists" / "weat.json"

V1_LANGS = {
    "ar": 1, "bg": 1, "bn": 1, "ca": 2, "de": 24, "el": 3, "en": 5, "es": 10, "fa": 2, "fr": 1,
    "hr": 12, "id": 1, "it": 24, "ko": 1, "lb": 1, "mr": 1, "nl": 2, "no": 1, "pl": 1, "pt": 1,
    "ro": 1, "ru": 2, "tr": 2, "uk": 1, "vi": 1, "zh": 2,
}  # fmt: skip


def _lists(tests: list) -> Counter[str]:
    """Number of lists (list ids) per language."""
    return Counter(lang for lang, _ in {(t.lang, t.list_id) for t in tests})


def test_list_sets_are_described() -> None:
    weathub = {"weathub", "weathub:human", "weathub:gt", "weathub:all"}
    older = {"weat", "ca-weat", "ca-weat:v1", "ca-weat:v3", "x-weat", "caliskan"}
    assert set(LIST_SETS) == older | weathub | {"seat"}
    assert all(isinstance(d, str) and d and "\n" not in d for d in LIST_SETS.values())


@pytest.mark.parametrize(
    ("list_id", "lang"),
    [("es_MX2", "es"), ("zh_Hans1", "zh"), ("de24", "de"), ("bn", "bn"), ("pt_BR", "pt"),
     ("en_US5", "en"), ("fr_FR1", "fr")],
)  # fmt: skip
def test_language_of_list_ids(list_id: str, lang: str) -> None:
    assert language_of(list_id) == lang


def test_caweat_v1(data_dir: Path) -> None:
    tests = load_list_set("ca-weat:v1")
    assert len(tests) == 208
    assert dict(_lists(tests)) == V1_LANGS
    assert sum(V1_LANGS.values()) == 104 and len(V1_LANGS) == 26
    assert Counter(t.test for t in tests) == {"weat1": 104, "weat2": 104}
    assert {t.list_set for t in tests} == {"ca-weat:v1"}
    assert load_list_set("ca-weat") == tests
    it1 = next(t for t in tests if t.list_id == "it1" and t.test == "weat2")
    assert it1.lang == "it" and it1.names == ("instruments", "weapons", "pleasant", "unpleasant")
    assert it1.X[:2] == ("viola", "violino") and "fucile mitragliatore" in it1.Y
    assert it1.meta == {"TYPE": "original", "WHO": "anonymous", "BORN PLACE": "Giulianova, Italia"}
    weat1 = next(t for t in tests if t.list_id == "it1" and t.test == "weat1")
    assert weat1.X[0] == "margherita" and weat1.Y[0] == "mosca" and weat1.A[0] == "pace"


def test_caweat_v1_language_filter(data_dir: Path) -> None:
    de = load_list_set("ca-weat:v1", ["de"])
    assert len({t.list_id for t in de}) == 24 and {t.lang for t in de} == {"de"}
    mx2 = load_list_set("ca-weat:v1", ["es_MX2"])
    assert {(t.list_id, t.lang) for t in mx2} == {("es_MX2", "es")}
    assert len(load_list_set("ca-weat:v1", ["DE", "en_US1"], tests=["WEAT2"])) == 25
    assert available_languages("ca-weat:v1") == sorted(V1_LANGS)


def test_caweat_v3(data_dir: Path) -> None:
    tests = load_list_set("ca-weat:v3")
    lists = _lists(tests)
    assert sum(lists.values()) == 188 and len(lists) == 33
    assert lists["zh"] == 17 and lists["es"] == 33 and lists["de"] == 27
    ids = {t.list_id for t in tests}
    assert {"zh_Hans1", "de_AT2", "bn1", "fr_FR1"} <= ids and "de24" not in ids
    first = tests[0]
    assert first.list_id == "ar1" and first.meta["VERSION"] == "1.0"
    assert "BIRTH PLACE" in first.meta
    assert all(all(t.sets().values()) for t in tests)  # trailing commas gave no empty items
    assert not any("" in s for t in tests for s in t.sets().values())


def test_xweat(data_dir: Path) -> None:
    tests = load_list_set("x-weat")
    assert {t.lang for t in tests} == {"en", "es", "ca", "de", "it", "hr", "tr", "ru", "ar"}
    assert len(tests) == 18
    en = next(t for t in tests if t.lang == "en" and t.test == "weat1")
    assert en.list_id == "xweat-en" and en.meta["REFERENCE"] == "original"
    de = load_list_set("x-weat", ["de"])
    assert {t.meta["REFERENCE"] for t in de} == {"Lausher et al. 2019"}


def test_caliskan(data_dir: Path) -> None:
    tests = load_list_set("caliskan")
    assert [t.test for t in tests] == [f"weat{i}" for i in range(1, 11)]
    sizes = {t.test: tuple(len(s) for s in t.sets().values()) for t in tests}
    assert sizes["weat1"] == sizes["weat2"] == (25, 25, 25, 25)
    assert sizes["weat3"] == (32, 32, 25, 25)
    assert sizes["weat4"] == (16, 16, 25, 25) and sizes["weat5"] == (16, 16, 8, 8)
    assert sizes["weat6"] == sizes["weat7"] == sizes["weat8"] == sizes["weat10"] == (8, 8, 8, 8)
    assert sizes["weat9"] == (6, 6, 7, 7)
    by_id = {t.test: t for t in tests}
    weat6 = by_id["weat6"]
    assert weat6.X[0] == "John" and weat6.Y[0] == "Amy" and weat6.A[0] == "executive"
    assert weat6.names == ("MaleNames", "FemaleNames", "Career", "Family")
    assert by_id["weat8"].names == ("Science", "Arts", "MaleTerms", "FemaleTerms")
    assert by_id["weat8"].X[0] == "science"
    assert by_id["weat1"].X[0] == "aster"
    assert {t.lang for t in tests} == {"en"} and {t.list_id for t in tests} == {"caliskan"}


def test_weat_json(data_dir: Path) -> None:
    tests = load_list_set("weat")
    assert [(t.test, t.lang, t.list_id, t.list_set) for t in tests] == [
        ("weat1", "en", "weat", "weat"),
        ("weat2", "en", "weat", "weat"),
    ]
    weat1, weat2 = tests
    assert len(weat1.X) == 25 and weat1.X[0] == "aster"
    assert weat1.names == ("flowers", "insects", "pleasant", "unpleasant")
    assert weat2.names == ("instruments", "weapons", "pleasant", "unpleasant")
    # equals the English X-WEAT row up to spacing (X-WEAT spells "blue-bell")
    rows = csv.DictReader(
        (data_dir / "ca-weat/data/X-WEATv1.tsv").open(encoding="utf-8"), delimiter="\t"
    )
    en = next(row for row in rows if row["LANG"] == "en")

    def cell(name: str) -> list[str]:
        return [w.strip().replace("-", "") for w in en[name].split(",")]

    assert list(weat1.X) == cell("FLOWERS") and list(weat1.Y) == cell("INSECTS")
    assert list(weat2.X) == cell("INSTRUMENTS") and list(weat2.Y) == cell("WEAPONS")
    assert list(weat1.A) == cell("PLEASANT") and list(weat1.B) == cell("UNPLEASANT")
    assert weat2.A == weat1.A and weat2.B == weat1.B
    # and the Caliskan item sets of cbn (same words, same order)
    caliskan = {t.test: t for t in load_list_set("caliskan")}
    for test in tests:
        assert test.sets() == caliskan[test.test].sets()


def test_weat_json_is_our_own_file(data_dir: Path) -> None:
    document = json.loads(WEAT_JSON.read_text(encoding="utf-8"))
    assert [t["test"] for t in document["tests"]] == ["weat1", "weat2"]
    ours = WEAT_JSON.read_bytes()
    assert not any(p.read_bytes() == ours for p in data_dir.rglob("*.json") if p.is_file())


def test_unknown_language_lists_available(data_dir: Path) -> None:
    with pytest.raises(WeatkitError, match=r"available languages: .*de.*en"):
        load_list_set("ca-weat:v1", ["xx"])


def test_unknown_test_lists_available(data_dir: Path) -> None:
    with pytest.raises(WeatkitError, match="available tests: weat1, weat2"):
        load_list_set("x-weat", tests=["weat9"])


def test_unknown_list_set_lists_names(tmp_path: Path) -> None:
    with pytest.raises(WeatkitError, match="weat, ca-weat, ca-weat:v1"):
        load_list_set("nonsense")
    with pytest.raises(WeatkitError, match="list file not found"):
        load_list_set(str(tmp_path / "missing.yaml"))


def test_user_file_as_spec(tmp_path: Path) -> None:
    path = tmp_path / "mine.tsv"
    path.write_text(
        "LANG\tFLOWERS\tINSECTS\tINSTRUMENTS\tWEAPONS\tPLEASANT\tUNPLEASANT\n"
        "xx1\tf1, f2\ti1\tm1\tw1\tp1\tu1\n",
        encoding="utf-8",
    )
    tests = load_list_set(str(path))
    assert {t.list_set for t in tests} == {str(path)}
    assert available_languages(str(path)) == ["xx"]


def test_a_file_is_parsed_once_per_content(tmp_path: Path) -> None:
    """A grid selects the lists once per job: the same bytes of a file are parsed once; a file
    changed since is parsed again."""
    from weatkit.lists import sources

    path = tmp_path / "mine.tsv"
    header = "LANG\tFLOWERS\tINSECTS\tINSTRUMENTS\tWEAPONS\tPLEASANT\tUNPLEASANT\n"
    path.write_text(header + "xx1\tf1, f2\ti1\tm1\tw1\tp1\tu1\n", encoding="utf-8")
    with mock.patch.object(sources, "parse_list_bytes", wraps=sources.parse_list_bytes) as parse:
        first = select_lists([str(path)]).tests
        again = select_lists([str(path)]).tests
        assert parse.call_count == 1 and again == first
        path.write_text(header + "xx1\tf3\ti1\tm1\tw1\tp1\tu1\n", encoding="utf-8")
        changed = select_lists([str(path)]).tests
        assert parse.call_count == 2 and changed[0].X == ("f3",)


def test_select_lists(data_dir: Path) -> None:
    selection = select_lists(
        ["ca-weat", "x-weat", "ca-weat:v1"], ["ru"], normalization=Normalization(lower=True)
    )
    assert {t.list_id for t in selection.tests} == {"ru1", "ru2", "xweat-ru"}
    assert any("given more than once" in line for line in selection.report)
    assert any("'пчела' is in both" in line for line in selection.report)
    assert selection.report[-1].startswith("normalisation:")
    assert [s["list_set"] for s in selection.sources] == ["ca-weat:v1", "x-weat"]
    for source in selection.sources:
        assert len(source["sha256"]) == 64 and source["licence"] and Path(source["path"]).is_file()
    # phrases are joined by default
    it = select_lists(["ca-weat"], ["it1"], tests=["weat2"]).tests[0]
    assert "fucile_mitragliatore" in it.Y


def test_select_lists_filters_across_sets(data_dir: Path) -> None:
    selection = select_lists(["caliskan", "x-weat"], ["en"], tests=["weat6", "weat1"])
    assert sorted(t.key for t in selection.tests) == [
        ("caliskan", "en", "caliskan", "weat1"),
        ("caliskan", "en", "caliskan", "weat6"),
        ("x-weat", "en", "xweat-en", "weat1"),
    ]
    with pytest.raises(WeatkitError, match="no lists for language 'bn'"):
        select_lists(["caliskan", "x-weat"], ["bn"])
    with pytest.raises(WeatkitError, match="no tests match"):
        select_lists(["caliskan", "ca-weat"], ["de"], tests=["weat6"])
