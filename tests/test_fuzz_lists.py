"""Fuzz the list-file parsers: any input gives AssociationTests or a WeatkitError, nothing else."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from weatkit.errors import WeatkitError
from weatkit.lists import AssociationTest
from weatkit.lists.files import CONCEPTS, parse_list_bytes
from weatkit.lists.normalize import Normalization, normalize_tests

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMATS = st.sampled_from(["json", "yaml", "tsv"])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["weat1", "en", "X", "A", "tests", "names", "meta", "", " "]),
)
json_like = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(
            st.one_of(st.sampled_from(["tests", "test", "lang", "list_id", "X", "Y", "A", "B",
                                       "names", "meta", "description"]), st.text(max_size=6)),
            children,
            max_size=6,
        ),
    ),
    max_leaves=30,
)  # fmt: skip


def mostly(valid: st.SearchStrategy[Any], invalid: st.SearchStrategy[Any]) -> st.SearchStrategy:
    """``valid`` nine times in ten, else ``invalid`` (so that some documents get through)."""
    return st.integers(0, 9).flatmap(lambda i: invalid if i == 0 else valid)


words = st.text(st.characters(exclude_categories=("Zs", "Cc", "Cs")), min_size=1, max_size=8)
items = mostly(st.lists(mostly(words, scalars), min_size=1, max_size=4), json_like)
entries = st.fixed_dictionaries(
    {
        "test": mostly(st.sampled_from(["weat1", "weat2"]), scalars),
        "lang": mostly(st.sampled_from(["en", "de", "no"]), scalars),
        "X": items,
        "Y": items,
        "A": items,
        "B": items,
    },
    optional={
        "list_id": mostly(st.text(min_size=1, max_size=5), scalars),
        "names": mostly(st.dictionaries(st.sampled_from("XYAB"), words, max_size=4), json_like),
        "meta": mostly(st.dictionaries(st.text(max_size=4), st.text(max_size=4)), json_like),
    },
)
documents = st.fixed_dictionaries({"tests": st.lists(entries, min_size=1, max_size=3)})


def _check(data: bytes, fmt: str) -> None:
    try:
        tests = parse_list_bytes(data, fmt, "fuzz." + fmt)  # type: ignore[arg-type]
    except WeatkitError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert isinstance(tests, list) and tests
    assert all(isinstance(t, AssociationTest) for t in tests)
    for test in tests:
        assert all(isinstance(s, tuple) and s for s in test.sets().values())
        assert all(isinstance(w, str) for w in test.vocabulary())
    normalize_tests(tests, Normalization(lower=True, strip_accents=True))


@FUZZ
@given(data=st.binary(max_size=300), fmt=FORMATS)
def test_arbitrary_bytes(data: bytes, fmt: str) -> None:
    _check(data, fmt)


@FUZZ
@given(text=st.text(max_size=300), fmt=FORMATS)
def test_arbitrary_text(text: str, fmt: str) -> None:
    _check(text.encode("utf-8", "surrogatepass"), fmt)


def _dump(document: Any, fmt: str) -> bytes:
    if fmt == "json":
        return json.dumps(document).encode()
    return yaml.safe_dump(document, allow_unicode=True).encode("utf-8", "surrogatepass")


@FUZZ
@given(document=json_like, fmt=st.sampled_from(["json", "yaml"]))
def test_arbitrary_structures(document: Any, fmt: str) -> None:
    _check(_dump(document, fmt), fmt)


@FUZZ
@given(document=documents, fmt=st.sampled_from(["json", "yaml"]))
def test_near_valid_documents(document: Any, fmt: str) -> None:
    _check(_dump(document, fmt), fmt)


cells = st.text(alphabet=st.sampled_from('ab ,\t"\n\r\u200e'), max_size=10)


@FUZZ
@given(
    header=st.permutations(["LANG", *CONCEPTS, "WHO"]),
    drop=st.integers(min_value=0, max_value=8),
    rows=st.lists(st.lists(cells, min_size=6, max_size=9), max_size=4),
)
def test_tsv_tables(header: list[str], drop: int, rows: list[list[str]]) -> None:
    columns = [c for i, c in enumerate(header) if i != drop]
    lines = ["\t".join(columns)] + ["\t".join(row) for row in rows]
    _check("\n".join(lines).encode(), "tsv")
