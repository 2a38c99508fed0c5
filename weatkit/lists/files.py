"""User list files: JSON, YAML and TSV in the CA-WEAT layout, validated strictly.

JSON / YAML (``.json``, ``.yaml``, ``.yml``; YAML is read with ``yaml.safe_load`` only)::

    {"tests": [{"test": "weat1", "lang": "en", "list_id": "mine",
                "X": ["aster", ...], "Y": [...], "A": [...], "B": [...],
                "names": {"X": "flowers", "Y": "insects", "A": "pleasant", "B": "unpleasant"},
                "meta": {"who": "me"},
                "pairs": [["she", "he"], ["woman", "man"]]}],
     "description": "optional", "meta": {"optional": "applies to every test"},
     "pairs": [["she", "he"]]}

``test``, ``lang``, ``X``, ``Y``, ``A`` and ``B`` are required; ``list_id`` defaults to the file
stem; ``names`` may name some or all sets. ``pairs`` are the definitional pairs ``[x, y]`` of
RIPA and DirectBias (``weatkit run --metrics ripa,direct_bias``), given per test or once at the
top level for every test without its own (a test's own win). Unknown fields are errors (they are
usually typos).

TSV (``.tsv``) uses the layout of CA-WEAT (``ca-weat/SOURCE.md``): a header row with at least
``LANG`` and the concept columns FLOWERS, INSECTS, INSTRUMENTS, WEAPONS, PLEASANT, UNPLEASANT, then
one row per list; each concept cell is a comma-separated list of items. Every row gives two tests,
WEAT1 (FLOWERS/INSECTS x PLEASANT/UNPLEASANT) and WEAT2 (INSTRUMENTS/WEAPONS x PLEASANT/UNPLEASANT).
The list id is the ``LANG`` value (e.g. ``es_MX2``), the language its ISO code (``es``); the other
columns (``TYPE``, ``WHO``, ``BORN PLACE``, ...) are kept in ``meta``.

SEAT (``.json``/``.jsonl``/YAML): one test in the shape of the SEAT files (May et al. 2019;
:mod:`weatkit.lists.seat`), ``{"targ1": {"category": "Flowers", "examples": [...]}, "targ2",
"attr1", "attr2"}``; its test id and list id are the file stem, its language ``en`` (the shape
has no language field: write the format above for another language).

Every problem is a :class:`~weatkit.errors.WeatkitError` naming the file and the test index and
field (entries counted from 1), or the line number, e.g. ``mylists.yaml: tests[2].A must be a
non-empty list of strings``.
"""

from __future__ import annotations

import os
import re
import reprlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from weatkit._io.jsonfile import load_json
from weatkit._io.textfile import decode
from weatkit.config.files import entry
from weatkit.errors import WeatkitError
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.seat import is_seat_document, seat_test

Format = Literal["json", "yaml", "tsv"]

#: File suffix -> format.
SUFFIXES: dict[str, Format] = {
    ".json": "json",
    ".jsonl": "json",  # the SEAT files: one JSON object despite the suffix
    ".yaml": "yaml",
    ".yml": "yaml",
    ".tsv": "tsv",
}

#: The CA-WEAT concept columns.
CONCEPTS = ("FLOWERS", "INSECTS", "INSTRUMENTS", "WEAPONS", "PLEASANT", "UNPLEASANT")

#: Test id -> the concept columns that give X, Y, A, B (CA-WEAT paper, Section 3 / Table 3).
CAWEAT_TESTS: dict[str, tuple[str, str, str, str]] = {
    "weat1": ("FLOWERS", "INSECTS", "PLEASANT", "UNPLEASANT"),
    "weat2": ("INSTRUMENTS", "WEAPONS", "PLEASANT", "UNPLEASANT"),
}

_TEST_FIELDS = ("test", "lang", "list_id", *SET_KEYS, "names", "meta", "pairs")
_TOP_FIELDS = ("tests", "description", "meta", "pairs")
_YAML_HINT = " (YAML reads unquoted yes/no/on/off/null and numbers as non-strings: quote them)"


def format_of(path: str | os.PathLike[str]) -> Format:
    """The format implied by a file name's suffix; WeatkitError for an unsupported suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        allowed = ", ".join(SUFFIXES)
        raise WeatkitError(f"{path}: unsupported list file type {suffix!r}; use one of {allowed}")
    return SUFFIXES[suffix]


def language_of(list_id: str) -> str:
    """The language code of a CA-WEAT list id: ``es_MX2`` -> ``es``, ``zh_Hans1`` -> ``zh``,
    ``de24`` -> ``de``, ``bn`` -> ``bn`` (the part before ``_``/``-``, without trailing digits)."""
    head = re.split(r"[_\-]", list_id.strip(), maxsplit=1)[0].rstrip("0123456789")
    return head.lower() or list_id.strip()


def split_cell(cell: str) -> tuple[str, ...]:
    """Items of a CA-WEAT cell: split on ``","``, strip, drop empty pieces (trailing commas)."""
    return tuple(piece.strip() for piece in cell.split(",") if piece.strip())


# ---------------------------------------------------------------------------------------------
# reading


def load_list_file(
    path: str | os.PathLike[str], *, list_set: str | None = None
) -> list[AssociationTest]:
    """Read a user list file (``.json``, ``.yaml``/``.yml``, ``.tsv``).

    Args:
        path: the file. Its stem is the default ``list_id`` (JSON/YAML).
        list_set: the ``list_set`` of the tests; default: the path as given.
    """
    name = str(path)
    fmt = format_of(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise WeatkitError(f"{name}: cannot read list file ({err.strerror or err})") from None
    return parse_list_bytes(data, fmt, name, list_set=list_set)


def parse_list_bytes(
    data: bytes, fmt: Format, name: str, *, list_set: str | None = None
) -> list[AssociationTest]:
    """Parse the bytes of a list file; ``name`` is used in messages and for the default list id."""
    text = decode(data, name)
    if fmt == "tsv":
        return parse_caweat_tsv(text, name, list_set=list_set if list_set is not None else name)
    if fmt == "json":
        document = load_json(text, name)
    elif fmt == "yaml":
        document = _load_yaml(text, name)
    else:
        raise WeatkitError(f"{name}: unsupported list format {fmt!r}")
    return tests_from_document(
        document,
        name,
        list_set=list_set if list_set is not None else name,
        default_list_id=Path(name).stem or "list",
    )


def _load_yaml(text: str, name: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        where = f" at line {err.problem_mark.line + 1}" if err.problem_mark else ""
        raise WeatkitError(f"{name}: invalid YAML{where}: {err.problem or err}") from None
    except yaml.YAMLError as err:
        raise WeatkitError(f"{name}: invalid YAML: {err}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as err:
        # safe_load raises these for e.g. impossible dates ("2021-02-30") or absurd nesting.
        raise WeatkitError(f"{name}: invalid YAML value: {err or type(err).__name__}") from None


# ---------------------------------------------------------------------------------------------
# JSON / YAML documents


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 40, 40


def _describe(value: Any) -> str:
    """A short description of a wrong value for messages, e.g. ``bool False``."""
    return f"{type(value).__name__} {_REPR.repr(value)}"


def _string(value: Any, where: str) -> str:
    """A non-empty string without lone surrogates, else WeatkitError naming ``where``."""
    if not isinstance(value, str) or not value.strip():
        hint = _YAML_HINT if not isinstance(value, str) and value is not None else ""
        got = "an empty string" if isinstance(value, str) else _describe(value)
        raise WeatkitError(f"{where} must be a non-empty string, got {got}{hint}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise WeatkitError(f"{where} contains an invalid character (lone surrogate)") from None
    return value


def _string_map(
    value: Any, where: str, allowed: Sequence[str] | None = None, *, nonempty: bool = True
) -> dict[str, str]:
    """A mapping of string keys (from ``allowed`` if given) to scalar values, as strings."""
    if not isinstance(value, dict):
        raise WeatkitError(f"{where} must be a mapping, got {_describe(value)}")
    result: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or (allowed is not None and key not in allowed):
            expected = f" (allowed: {', '.join(allowed)})" if allowed is not None else ""
            raise WeatkitError(f"{where} has an unknown key {key!r}{expected}")
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise WeatkitError(f"{where}.{key} must be a string, got {_describe(item)}")
        text = str(item)
        result[key] = _string(text, f"{where}.{key}") if nonempty or text.strip() else text
    return result


def _meta(mapping: dict[Any, Any], where: str) -> dict[str, str]:
    """The optional ``meta`` mapping of a document or test (values may be empty strings)."""
    return _string_map(mapping["meta"], where, nonempty=False) if "meta" in mapping else {}


def _items(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise WeatkitError(f"{where} must be a non-empty list of strings, got {_describe(value)}")
    return tuple(_string(item, entry(where, i)) for i, item in enumerate(value, 1))


def _pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """Definitional pairs: a non-empty list of ``[x, y]`` lists of two words."""
    if not isinstance(value, list) or not value:
        raise WeatkitError(
            f"{where} must be a non-empty list of pairs [x, y], got {_describe(value)}"
        )
    pairs = []
    for i, pair in enumerate(value, 1):
        at = entry(where, i)
        if not isinstance(pair, list) or len(pair) != 2:
            raise WeatkitError(f"{at} must be a pair of two words [x, y], got {_describe(pair)}")
        x, y = (_string(word, entry(at, j)) for j, word in enumerate(pair, 1))
        pairs.append((x, y))
    return tuple(pairs)


def tests_from_document(
    document: Any, name: str, *, list_set: str, default_list_id: str
) -> list[AssociationTest]:
    """Validate a parsed JSON/YAML document and build its tests (see the module doc): a
    weatkit list file, or one SEAT test (:mod:`weatkit.lists.seat`)."""
    if is_seat_document(document):
        return [seat_test(document, name, test=default_list_id, list_set=list_set,
                          list_id=default_list_id)]  # fmt: skip
    if not isinstance(document, dict) or "tests" not in document:
        raise WeatkitError(
            f"{name}: expected a mapping with a 'tests' list at the top level (or a SEAT test: "
            f"targ1, targ2, attr1, attr2), got {_describe(document)}"
        )
    for key in document:
        if key not in _TOP_FIELDS:
            raise WeatkitError(
                f"{name}: unknown top-level key {key!r} (allowed: {', '.join(_TOP_FIELDS)})"
            )
    if "description" in document:
        _string(document["description"], f"{name}: description")
    common = (
        _string_map(document["meta"], f"{name}: meta", nonempty=False) if "meta" in document else {}
    )
    pairs = _pairs(document["pairs"], f"{name}: pairs") if "pairs" in document else ()
    entries = document["tests"]
    if not isinstance(entries, list) or not entries:
        raise WeatkitError(f"{name}: tests must be a non-empty list, got {_describe(entries)}")

    tests: list[AssociationTest] = []
    first_index: dict[tuple[str, str, str, str], int] = {}
    for index, item in enumerate(entries, 1):
        where = f"{name}: {entry('tests', index)}"
        test = _test_from_entry(item, where, list_set, default_list_id, common, pairs)
        if test.key in first_index:
            raise WeatkitError(
                f"{where} repeats test {test.test!r} of list {test.list_id!r} "
                f"({test.lang}) from {entry('tests', first_index[test.key])}"
            )
        first_index[test.key] = index
        tests.append(test)
    return tests


def _test_from_entry(
    entry: Any,
    where: str,
    list_set: str,
    default_list_id: str,
    common: dict[str, str],
    pairs: tuple[tuple[str, str], ...],
) -> AssociationTest:
    if not isinstance(entry, dict):
        raise WeatkitError(f"{where} must be a mapping, got {_describe(entry)}")
    for key in entry:
        if key not in _TEST_FIELDS:
            raise WeatkitError(
                f"{where} has an unknown field {key!r} (allowed: {', '.join(_TEST_FIELDS)})"
            )
    for key in ("test", "lang", *SET_KEYS):
        if key not in entry:
            raise WeatkitError(f"{where}.{key} is required")
    test_id = _string(entry["test"], f"{where}.test").strip()
    lang = _string(entry["lang"], f"{where}.lang").strip()
    list_id = (
        _string(entry["list_id"], f"{where}.list_id").strip()
        if "list_id" in entry
        else default_list_id
    )
    sets = {key: _items(entry[key], f"{where}.{key}") for key in SET_KEYS}
    given = _string_map(entry["names"], f"{where}.names", SET_KEYS) if "names" in entry else {}
    names = tuple(given.get(key, key).strip() for key in SET_KEYS)
    meta = {
        **common,
        **(_string_map(entry["meta"], f"{where}.meta", nonempty=False) if "meta" in entry else {}),
    }
    return AssociationTest(
        test=test_id,
        lang=lang,
        list_set=list_set,
        list_id=list_id,
        names=names,  # type: ignore[arg-type]
        meta=meta,
        pairs=_pairs(entry["pairs"], f"{where}.pairs") if "pairs" in entry else pairs,
        **sets,
    )


# ---------------------------------------------------------------------------------------------
# TSV in the CA-WEAT layout


def _field(raw: str) -> str:
    """A TSV field: stripped, one pair of enclosing double quotes removed (spreadsheet exports)."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1].replace('""', '"').strip()
    return value


def parse_caweat_tsv(
    text: str,
    name: str,
    *,
    list_set: str,
    list_id: Callable[[str], str] = lambda lang_cell: lang_cell,
) -> list[AssociationTest]:
    """Parse a TSV in the CA-WEAT layout (v1 or v3 header, or X-WEAT's) into WEAT1/WEAT2 tests.

    Args:
        text: the file's text.
        name: the file name for messages.
        list_set: the ``list_set`` of the tests.
        list_id: maps the ``LANG`` cell to the list id (X-WEAT uses ``xweat-<lang>``).

    Returns:
        Two tests per row (``weat1``, ``weat2``), in file order.
    """
    lines = [(number, line.rstrip("\r")) for number, line in enumerate(text.split("\n"), 1)]
    lines = [(number, line) for number, line in lines if line.strip()]
    if not lines:
        raise WeatkitError(f"{name}: empty file; expected a header row with LANG and {CONCEPTS}")
    header_line, header_text = lines[0]
    header = [_field(col) for col in header_text.split("\t")]
    upper = [col.upper() for col in header]
    repeated = sorted({col for col in upper if upper.count(col) > 1})
    if repeated:
        raise WeatkitError(
            f"{name}: line {header_line}: column {repeated[0]} appears more than once"
        )
    missing = [col for col in ("LANG", *CONCEPTS) if col not in upper]
    if missing:
        raise WeatkitError(
            f"{name}: line {header_line}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} (the header needs LANG and {', '.join(CONCEPTS)})"
        )
    column = {col: upper.index(col) for col in ("LANG", *CONCEPTS)}
    meta_columns = [i for i, col in enumerate(upper) if col not in column]

    tests: list[AssociationTest] = []
    seen: dict[str, int] = {}
    for number, line in lines[1:]:
        fields = [_field(value) for value in line.split("\t")]
        if len(fields) != len(header):
            raise WeatkitError(
                f"{name}: line {number}: expected {len(header)} tab-separated fields "
                f"(as in the header), found {len(fields)}"
            )
        lang_cell = fields[column["LANG"]]
        if not lang_cell:
            raise WeatkitError(f"{name}: line {number}: empty LANG")
        if lang_cell in seen:
            raise WeatkitError(
                f"{name}: line {number}: list {lang_cell!r} already defined on line "
                f"{seen[lang_cell]}"
            )
        seen[lang_cell] = number
        items = {col: split_cell(fields[column[col]]) for col in CONCEPTS}
        for col in CONCEPTS:
            if not items[col]:
                raise WeatkitError(f"{name}: line {number}: {col} of list {lang_cell!r} is empty")
        meta = {header[i]: fields[i] for i in meta_columns}
        for test_id, cols in CAWEAT_TESTS.items():
            x, y, a, b = (items[col] for col in cols)
            tests.append(
                AssociationTest(
                    test=test_id,
                    lang=language_of(lang_cell),
                    list_set=list_set,
                    list_id=list_id(lang_cell),
                    X=x,
                    Y=y,
                    A=a,
                    B=b,
                    names=tuple(col.lower() for col in cols),  # type: ignore[arg-type]
                    meta=dict(meta),
                )
            )
    if not tests:
        raise WeatkitError(f"{name}: no lists (only a header row)")
    return tests
