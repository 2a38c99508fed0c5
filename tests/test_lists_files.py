"""User list files: JSON, YAML and CA-WEAT TSV, good and bad."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from weatkit.errors import WeatkitError
from weatkit.lists import AssociationTest, load_list_file
from weatkit.lists.files import parse_list_bytes

HEADER_V1 = (
    "TYPE\tWHO\tLANG\tBORN PLACE\tWEAPONS\tFLOWERS\tINSTRUMENTS\tINSECTS\tPLEASANT\tUNPLEASANT"
)
ROW_V1 = "original\tme\txx_YY2\tHere, There\tw1, w2\tf1,f2\tm1 , m2\ti1, i2,\tp1\tu1, u2"


def _entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "test": "weat1",
        "lang": "en",
        "list_id": "mine",
        "X": ["aster", "clover"],
        "Y": ["ant", "flea"],
        "A": ["love", "peace"],
        "B": ["abuse", "crash"],
    }
    entry.update(changes)
    return {key: value for key, value in entry.items() if value is not None}


def _write(tmp_path: Path, name: str, document: Any) -> Path:
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["mylists.json", "mylists.yaml", "mylists.yml"])
def test_good_json_and_yaml(tmp_path: Path, name: str) -> None:
    document = {
        "description": "two tests",
        "meta": {"who": "me", "version": 2},
        "tests": [
            _entry(names={"X": "flowers", "Y": "insects"}, meta={"note": ""}),
            _entry(test="weat2", list_id=None, X=["cello"], Y=["gun"]),
        ],
    }
    path = _write(tmp_path, name, document)
    first, second = load_list_file(path)
    assert first == AssociationTest(
        test="weat1",
        lang="en",
        list_set=str(path),
        list_id="mine",
        X=("aster", "clover"),
        Y=("ant", "flea"),
        A=("love", "peace"),
        B=("abuse", "crash"),
        names=("flowers", "insects", "A", "B"),
    )
    assert first.meta == {"who": "me", "version": "2", "note": ""}
    assert second.list_id == "mylists" and second.X == ("cello",)
    assert load_list_file(path, list_set="custom")[0].list_set == "custom"


def test_yaml_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    path.write_text(
        "tests:\n"
        "  - test: weat1\n"
        "    lang: 'no'\n"
        "    X: [rose, tulip]\n"
        "    Y: [maur, flue]\n"
        "    A: [glede]\n"
        "    B: [sorg]\n",
        encoding="utf-8",
    )
    (test,) = load_list_file(path)
    assert test.lang == "no" and test.list_id == "hand"


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"tests": [_entry()]}).encode())
    assert len(load_list_file(path)) == 1


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "expected a mapping with a 'tests' list"),
        ({"test": []}, "expected a mapping with a 'tests' list"),
        ({"tests": []}, "tests must be a non-empty list"),
        ({"tests": [_entry()], "extra": 1}, "unknown top-level key 'extra'"),
        ({"tests": ["weat1"]}, r"tests\[1\] must be a mapping"),
        (
            {"tests": [_entry(), _entry(test="weat2"), _entry(A=[])]},
            r"tests\[3\]\.A must be a non-empty list",
        ),
        ({"tests": [_entry(A="love")]}, r"tests\[1\]\.A must be a non-empty list of strings"),
        ({"tests": [_entry(B=["x", 3])]}, r"tests\[1\]\.B\[2\] must be a non-empty string"),
        ({"tests": [_entry(B=["x", "  "])]}, r"tests\[1\]\.B\[2\] must be a non-empty string"),
        ({"tests": [_entry(test=None)]}, r"tests\[1\]\.test is required"),
        ({"tests": [_entry(lang=None)]}, r"tests\[1\]\.lang is required"),
        ({"tests": [_entry(Y=None)]}, r"tests\[1\]\.Y is required"),
        ({"tests": [_entry(lang=False)]}, r"tests\[1\]\.lang must be a non-empty string.*quote"),
        ({"tests": [_entry(list_id="")]}, r"tests\[1\]\.list_id must be a non-empty string"),
        ({"tests": [_entry(a=["x"])]}, r"tests\[1\] has an unknown field 'a'"),
        ({"tests": [_entry(names={"Z": "z"})]}, r"tests\[1\]\.names has an unknown key 'Z'"),
        ({"tests": [_entry(names=["a"])]}, r"tests\[1\]\.names must be a mapping"),
        ({"tests": [_entry(meta={"k": [1]})]}, r"tests\[1\]\.meta\.k must be a string"),
        ({"tests": [_entry(), _entry()]}, r"tests\[2\] repeats test 'weat1' .* tests\[1\]"),
    ],
)
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_bad_documents(tmp_path: Path, document: Any, message: str, suffix: str) -> None:
    path = _write(tmp_path, f"mylists{suffix}", document)
    with pytest.raises(WeatkitError, match=message) as info:
        load_list_file(path)
    assert str(info.value).startswith(f"{path}: ")


def test_yaml_booleans_are_explained(tmp_path: Path) -> None:
    path = tmp_path / "no.yaml"
    path.write_text(
        "tests:\n- {test: weat1, lang: no, X: [a], Y: [b], A: [c], B: [d]}\n", encoding="utf-8"
    )
    with pytest.raises(WeatkitError, match=r"no.yaml: tests\[1\]\.lang .*bool False.*quote them"):
        load_list_file(path)


@pytest.mark.parametrize(
    ("suffix", "content", "message"),
    [
        (".json", b'{"tests": [', "invalid JSON at line 1"),
        (".json", b'{"tests": [], "tests": []}', "duplicate key 'tests'"),
        (".json", b"\xff\xfe{}", "not valid UTF-8"),
        (".yaml", b"tests: [unclosed", "invalid YAML"),
        (".yaml", b"tests: !!python/object:os.system {}", "invalid YAML"),
        (".yaml", b"tests: 2021-02-30", "invalid YAML value"),
        (".yaml", b"caf\xe9: 1", "not valid UTF-8"),
        (".yaml", b"", "expected a mapping"),
        (".tsv", b"", "empty file"),
    ],
)
def test_unparsable_files(tmp_path: Path, suffix: str, content: bytes, message: str) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(content)
    with pytest.raises(WeatkitError, match=message) as info:
        load_list_file(path)
    assert str(info.value).startswith(str(path))


def test_unsupported_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WeatkitError, match=r"unsupported list file type '\.csv'"):
        load_list_file(tmp_path / "x.csv")
    with pytest.raises(WeatkitError, match="cannot read"):
        load_list_file(tmp_path / "absent.json")


def test_good_tsv_v1_layout(tmp_path: Path) -> None:
    path = tmp_path / "lists.tsv"
    path.write_text(f"{HEADER_V1}\n{ROW_V1}\n\n", encoding="utf-8")
    weat1, weat2 = load_list_file(path)
    assert (weat1.test, weat1.lang, weat1.list_id) == ("weat1", "xx", "xx_YY2")
    assert weat1.X == ("f1", "f2") and weat1.Y == ("i1", "i2") and weat1.B == ("u1", "u2")
    assert weat2.X == ("m1", "m2") and weat2.Y == ("w1", "w2") and weat2.A == ("p1",)
    assert weat2.names == ("instruments", "weapons", "pleasant", "unpleasant")
    assert weat1.meta == {"TYPE": "original", "WHO": "me", "BORN PLACE": "Here, There"}


def test_good_tsv_minimal_crlf_any_column_order(tmp_path: Path) -> None:
    path = tmp_path / "min.tsv"
    path.write_bytes(
        b"UNPLEASANT\tPLEASANT\tINSECTS\tFLOWERS\tWEAPONS\tINSTRUMENTS\tLANG\r\n"
        b'u\tp\ti\t"f, g"\tw\tm\tde3\r\n'
    )
    weat1, _ = load_list_file(path)
    assert weat1.X == ("f", "g") and weat1.lang == "de" and weat1.meta == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("LANG\tFLOWERS\tINSECTS\tINSTRUMENTS\tPLEASANT\tUNPLEASANT\n", "missing column WEAPONS"),
        ("FLOWERS\tINSECTS\tINSTRUMENTS\tWEAPONS\tPLEASANT\tUNPLEASANT\n", "missing column LANG"),
        (f"{HEADER_V1}\n", "no lists"),
        (f"{HEADER_V1}\n{ROW_V1}\noriginal\tme\tx2\n", "line 3: expected 10 tab-separated"),
        (f"{HEADER_V1}\n\n{ROW_V1}\t\n", "line 3: expected 10 tab-separated fields"),
        (f"{HEADER_V1}\n{ROW_V1}\n{ROW_V1}\n", "line 3: list 'xx_YY2' already defined on line 2"),
        (f"{HEADER_V1}\n{ROW_V1.replace('p1', ' , ')}\n", "line 2: PLEASANT of list 'xx_YY2'"),
        (f"{HEADER_V1}\n{ROW_V1.replace('xx_YY2', ' ')}\n", "line 2: empty LANG"),
        (f"{HEADER_V1}\tLANG\n", "column LANG appears more than once"),
    ],
)
def test_bad_tsv(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "lists.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WeatkitError, match=message) as info:
        load_list_file(path)
    assert str(info.value).startswith(f"{path}: ")


def test_caweat_files_parse_as_user_files(data_dir: Path) -> None:
    for name, count in (("CA-WEATv1.tsv", 208), ("CA-WEATv3.tsv", 376), ("X-WEATv1.tsv", 18)):
        path = data_dir / "ca-weat" / "data" / name
        assert len(parse_list_bytes(path.read_bytes(), "tsv", name)) == count
