"""Built-in list sets (WEAT, CA-WEAT v1/v3, X-WEAT, Caliskan WEAT1-10, WEATHub, SEAT) and list
selection.

- ``weat``: the original English WEAT1/WEAT2 lists, ``weatkit/wordlists/weat.json`` (typed in
  from Table 3 of the CA-WEAT paper, España-Bonet & Barrón-Cedeño, EMNLP 2022).
- ``ca-weat:v1`` (alias ``ca-weat``): ``ca-weat/data/CA-WEATv1.tsv``, the paper version, 104 lists
  in 26 languages; ``ca-weat:v3``: ``CA-WEATv3.tsv``, 188 lists in 33 languages (renamed ids, some
  lists cleaned). One row = one annotator's list = two tests (WEAT1, WEAT2); see
  ``ca-weat/SOURCE.md``.
- ``x-weat``: ``ca-weat/data/X-WEATv1.tsv``, translations of the English WEAT1/WEAT2 lists into 8
  languages plus the English original (list ids ``xweat-<lang>``).
- ``caliskan``: WEAT1-WEAT10 of Caliskan et al. (2017) with the exact post-exclusion item sets,
  from ``cbn/cbn_items.tsv`` (``cbn/SOURCE.md``); WEFAT rows are skipped. Their ``names`` are the
  cbn condition names, e.g. ``("MaleNames", "FemaleNames", "Career", "Family")`` for WEAT6.
- ``weathub:human`` (alias ``weathub``), ``weathub:gt``, ``weathub:all``: WEATHub (Mukherjee et
  al., EMNLP 2023), 24 languages + English, ``weathub/data/*/weat*.json``; the variant picks the
  source of WEAT 1, 2, 6-9, the culture- and India-specific WEAT 11-26 are in all three
  (:mod:`weatkit.lists.weathub`).
- ``seat``: the SEAT tests (May et al., NAACL 2019) of sent-bias via bias-bench,
  ``bias-bench/data/seat/*.jsonl``: WEAT 1-10 as words (``weat6``) and in bleached sentence
  templates (``sent-weat6``), angry black woman, Heilman double bind and religion tests; pick one
  with ``--test sent-weat6b`` (:mod:`weatkit.lists.seat`).

A spec that is both a built-in name and an existing file is taken as the built-in set.

Third-party files are opened through :func:`weatkit.data.fetch` (``$WEATKIT_DATA`` or a checked
download); nothing third-party is shipped with weatkit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path

from weatkit import data
from weatkit._io.textfile import decode
from weatkit.errors import WeatkitError
from weatkit.lists.files import (
    CAWEAT_TESTS,
    SUFFIXES,
    format_of,
    parse_caweat_tsv,
    parse_list_bytes,
)
from weatkit.lists.model import AssociationTest
from weatkit.lists.normalize import DEFAULT, Normalization, normalize_tests_report
from weatkit.lists.seat import LIST_SET as SEAT
from weatkit.lists.seat import load_seat
from weatkit.lists.weathub import VARIANTS as WEATHUB_VARIANTS
from weatkit.lists.weathub import check_variant, load_weathub

#: Built-in list sets: name -> one-line description.
LIST_SETS: dict[str, str] = {
    "weat": "original English WEAT1/WEAT2 lists (Caliskan et al. 2017; CA-WEAT paper Table 3)",
    "ca-weat": "alias of ca-weat:v1",
    "ca-weat:v1": "CA-WEAT v1 (EMNLP 2022 paper): 104 culture-aware lists, 26 languages",
    "ca-weat:v3": "CA-WEAT v3 (2025): 188 culture-aware lists, 33 languages",
    "x-weat": "X-WEAT v1: the English WEAT1/WEAT2 lists and translations, 9 languages",
    "caliskan": "Caliskan et al. (2017) WEAT1-WEAT10, exact item sets (cbn), English",
    "weathub": "alias of weathub:human",
    "weathub:human": "WEATHub (EMNLP 2023): WEAT 1, 2, 6-9 human-translated + culture-specific "
    "WEAT 11-15 and India-specific 16-26; 24 languages + English",
    "weathub:gt": "WEATHub with WEAT 1, 2, 6-9 machine-translated (Google Translate)",
    "weathub:all": "WEATHub with WEAT 1, 2, 6-9 from all words the annotators supplied",
    SEAT: "SEAT (May et al. 2019): 50 tests, WEAT 1-10 as words (weat6) and in sentence "
    "templates (sent-weat6), angry black woman, Heilman double bind, religion; English "
    "(pick with --test)",
}

_ALIASES = {"ca-weat": "ca-weat:v1", "weathub": "weathub:human"}

_CAWEAT_FILES = {
    "ca-weat:v1": "ca-weat/data/CA-WEATv1.tsv",
    "ca-weat:v3": "ca-weat/data/CA-WEATv3.tsv",
}
_XWEAT_FILE = "ca-weat/data/X-WEATv1.tsv"
_CBN_FILE = "cbn/cbn_items.tsv"
_WEAT_RESOURCE = ("wordlists", "weat.json")
_WEAT_LICENCE = "Apache-2.0 (weatkit); lists of Caliskan et al. (2017) via CA-WEAT paper Table 3"

#: Caliskan et al. (2017) Table 1 roles: the cbn conditions that are X, Y, A, B of each WEAT
#: (``cbn/SOURCE.md``). The file lists WEAT8's Arts before Science, so the order is not taken
#: from the file.
CALISKAN_ROLES: dict[str, tuple[str, str, str, str]] = {
    "WEAT1": ("Flowers", "Insects", "Pleasant", "Unpleasant"),
    "WEAT2": ("Instruments", "Weapons", "Pleasant", "Unpleasant"),
    "WEAT3": ("EuropeanAmericanNames", "AfricanAmericanNames", "Pleasant", "Unpleasant"),
    "WEAT4": ("EuropeanAmericanNames", "AfricanAmericanNames", "Pleasant", "Unpleasant"),
    "WEAT5": ("EuropeanAmericanNames", "AfricanAmericanNames", "Pleasant", "Unpleasant"),
    "WEAT6": ("MaleNames", "FemaleNames", "Career", "Family"),
    "WEAT7": ("Math", "Arts", "MaleTerms", "FemaleTerms"),
    "WEAT8": ("Science", "Arts", "MaleTerms", "FemaleTerms"),
    "WEAT9": ("MentalDisease", "PhysicalDisease", "Temporary", "Permanent"),
    "WEAT10": ("YoungNames", "OldNames", "Pleasant", "Unpleasant"),
}

#: Tests, provenance, and report lines about the source files (e.g. placeholder items dropped).
_Loaded = tuple[list[AssociationTest], list[dict[str, str]], list[str]]


@dataclass
class ListSelection:
    """The tests of a run, with the report lines and the provenance of every file read.

    Attributes:
        tests: the selected, normalised tests.
        report: human-readable lines (skipped list sets, normalisation warnings, summary).
        sources: one dict per file read (one per list set for WEATHub): ``path``, ``sha256``,
            ``list_set``, ``licence``, ``citation``.
        skipped: tests selected but not runnable, each with the reason (two identical target
            sets, see :func:`weatkit.lists.normalize.normalize_tests_report`).
    """

    tests: list[AssociationTest]
    report: list[str] = field(default_factory=list)
    sources: list[dict[str, str]] = field(default_factory=list)
    skipped: list[tuple[AssociationTest, str]] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# loaders


def _source(path: str, raw: bytes, list_set: str, licence: str, citation: str) -> dict[str, str]:
    return {
        "path": path,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "list_set": list_set,
        "licence": licence,
        "citation": citation,
    }


def _fetch(relpath: str, list_set: str) -> tuple[str, dict[str, str]]:
    """Text of a registered data file and its provenance record."""
    path = data.fetch(relpath)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise WeatkitError(f"{path}: cannot read ({err.strerror or err})") from None
    entry = data.registry_entry(relpath)
    return decode(raw, str(path)), _source(str(path), raw, list_set, entry.licence, entry.citation)


def _load_weat() -> _Loaded:
    resource = resources.files("weatkit").joinpath(*_WEAT_RESOURCE)
    raw = resource.read_bytes()
    tests = parse_list_bytes(raw, "json", "weat.json", list_set="weat")
    citation = data.registry_entry(_XWEAT_FILE).citation.split(";")[0]
    return tests, [_source(str(resource), raw, "weat", _WEAT_LICENCE, citation)], []


#: Parsed list files by (list set, path, SHA-256 of the bytes): a grid selects the lists once per
#: job, and parsing them is most of that work. The tests are frozen; each caller gets its own list.
_PARSED: dict[tuple[str, str, str], list[AssociationTest]] = {}


def _parsed(
    source: dict[str, str], parse: Callable[[], list[AssociationTest]]
) -> list[AssociationTest]:
    """``parse()``, or its tests from an earlier call on the same bytes of the same file."""
    key = (source["list_set"], source["path"], source["sha256"])
    if key not in _PARSED:
        _PARSED[key] = parse()
    return list(_PARSED[key])


def _load_caweat(name: str) -> _Loaded:
    text, source = _fetch(_CAWEAT_FILES[name], name)
    tests = _parsed(source, lambda: parse_caweat_tsv(text, source["path"], list_set=name))
    return tests, [source], []


def _load_xweat() -> _Loaded:
    text, source = _fetch(_XWEAT_FILE, "x-weat")
    tests = _parsed(
        source,
        lambda: parse_caweat_tsv(
            text, source["path"], list_set="x-weat", list_id=lambda lang: f"xweat-{lang}"
        ),
    )
    return tests, [source], []


def _load_caliskan() -> _Loaded:
    text, source = _fetch(_CBN_FILE, "caliskan")
    return parse_cbn_items(text, source["path"]), [source], []


def parse_cbn_items(text: str, name: str) -> list[AssociationTest]:
    """WEAT1-WEAT10 from ``cbn_items.tsv`` (columns Study, Condition, Word, Role; WEFAT skipped).

    Roles follow :data:`CALISKAN_ROLES`; a study not listed there takes its targets (X, Y) and
    attributes (A, B) in order of first appearance.
    """
    reader = csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    missing = {"Study", "Condition", "Word", "Role"} - set(reader.fieldnames or ())
    if missing:
        raise WeatkitError(f"{name}: missing column(s) {', '.join(sorted(missing))}")
    studies: dict[str, dict[str, dict[str, list[str]]]] = {}
    for row in reader:
        study = (row["Study"] or "").strip()
        if not re.fullmatch(r"WEAT\d+", study):
            continue
        role = (row["Role"] or "").strip()
        if role not in ("target", "attribute"):
            raise WeatkitError(f"{name}: line {reader.line_num}: unknown Role {role!r}")
        conditions = studies.setdefault(study, {"target": {}, "attribute": {}})[role]
        conditions.setdefault((row["Condition"] or "").strip(), []).append(
            (row["Word"] or "").strip()
        )

    tests = []
    for study in sorted(studies, key=lambda s: int(s[4:])):
        targets, attributes = studies[study]["target"], studies[study]["attribute"]
        if len(targets) != 2 or len(attributes) != 2:
            raise WeatkitError(f"{name}: {study} needs 2 target and 2 attribute conditions")
        order = [*targets, *attributes]
        canonical = CALISKAN_ROLES.get(study)
        if (
            canonical
            and set(canonical[:2]) == set(targets)
            and set(canonical[2:]) == set(attributes)
        ):
            order = list(canonical)
        sets = [tuple(targets.get(c) or attributes[c]) for c in order]
        tests.append(
            AssociationTest(
                test=study.lower(),
                lang="en",
                list_set="caliskan",
                list_id="caliskan",
                X=sets[0],
                Y=sets[1],
                A=sets[2],
                B=sets[3],
                names=tuple(order),  # type: ignore[arg-type]
                meta={"Study": study},
            )
        )
    return tests


_LOADERS: dict[str, Callable[[], _Loaded]] = {
    "weat": _load_weat,
    "ca-weat:v1": lambda: _load_caweat("ca-weat:v1"),
    "ca-weat:v3": lambda: _load_caweat("ca-weat:v3"),
    "x-weat": _load_xweat,
    "caliskan": _load_caliskan,
    **{f"weathub:{v}": partial(load_weathub, v) for v in WEATHUB_VARIANTS},
    SEAT: load_seat,
}


def canonical_name(spec: str) -> str | None:
    """The canonical built-in list-set name of ``spec`` (``ca-weat`` -> ``ca-weat:v1``), or None."""
    name = spec.strip().lower()
    name = _ALIASES.get(name, name)
    return name if name in _LOADERS else None


def _load(spec: str) -> _Loaded:
    """Tests, provenance and source notes of a spec: a built-in name first, else a list file."""
    name = canonical_name(spec)
    if name is not None:
        return _LOADERS[name]()
    if spec.strip().lower().startswith("weathub:"):
        check_variant(spec)  # raises for an unknown variant
    path = Path(spec)
    if path.is_file():
        fmt = format_of(path)
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise WeatkitError(f"{spec}: cannot read list file ({err.strerror or err})") from None
        source = _source(spec, raw, spec, "user-supplied", "")
        tests = _parsed(source, lambda: parse_list_bytes(raw, fmt, spec, list_set=spec))
        return tests, [source], []
    if path.suffix.lower() in SUFFIXES:
        raise WeatkitError(f"list file not found: {spec}")
    raise WeatkitError(
        f"unknown list set {spec!r}: use one of {', '.join(LIST_SETS)} "
        f"or a list file ({', '.join(SUFFIXES)})"
    )


# ---------------------------------------------------------------------------------------------
# filtering


def _matches(test: AssociationTest, wanted: set[str]) -> bool:
    return test.lang.casefold() in wanted or test.list_id.casefold() in wanted


def _filter(
    tests: list[AssociationTest], langs: Sequence[str] | None, test_ids: Sequence[str] | None
) -> tuple[list[AssociationTest], set[str], set[str]]:
    """Tests matching the filters, and the filter values (casefolded) that matched something."""
    want_langs = {lang.strip().casefold() for lang in langs} if langs is not None else None
    want_tests = {t.strip().casefold() for t in test_ids} if test_ids is not None else None
    kept, seen_langs, seen_tests = [], set(), set()
    for test in tests:
        lang_ok = want_langs is None or _matches(test, want_langs)
        test_ok = want_tests is None or test.test.casefold() in want_tests
        if lang_ok and want_langs is not None:
            seen_langs |= {test.lang.casefold(), test.list_id.casefold()} & want_langs
        if test_ok and want_tests is not None:
            seen_tests.add(test.test.casefold())
        if lang_ok and test_ok:
            kept.append(test)
    return kept, seen_langs, seen_tests


def _check_filters(
    where: str,
    tests: list[AssociationTest],
    langs: Sequence[str] | None,
    test_ids: Sequence[str] | None,
    seen_langs: set[str],
    seen_tests: set[str],
) -> None:
    """WeatkitError for the first filter value that matched nothing, listing what is available."""
    for lang in langs or ():
        if lang.strip().casefold() not in seen_langs:
            available = ", ".join(sorted({t.lang for t in tests}))
            raise WeatkitError(
                f"no lists for language {lang!r} in {where}; available languages: {available} "
                "(list ids such as en_US1 are accepted too)"
            )
    for test_id in test_ids or ():
        if test_id.strip().casefold() not in seen_tests:
            available = ", ".join(dict.fromkeys(t.test for t in tests))
            raise WeatkitError(f"no test {test_id!r} in {where}; available tests: {available}")


def load_list_set(
    spec: str, langs: Sequence[str] | None = None, *, tests: Sequence[str] | None = None
) -> list[AssociationTest]:
    """The tests of a built-in list set or a list file, unnormalised, in source order.

    Args:
        spec: a name from :data:`LIST_SETS` or a path to a ``.json``/``.yaml``/``.yml``/``.tsv``.
        langs: keep only these languages (``"de"``) or list ids (``"en_US1"``).
        tests: keep only these test ids (``"weat1"``).

    Raises:
        WeatkitError: unknown list set or file, a language or test that the set does not have.
    """
    loaded, _, _ = _load(spec)
    kept, seen_langs, seen_tests = _filter(loaded, langs, tests)
    _check_filters(spec, loaded, langs, tests, seen_langs, seen_tests)
    return kept


def available_languages(spec: str) -> list[str]:
    """The sorted language codes of a list set or list file."""
    return sorted({test.lang for test in _load(spec)[0]})


def has_language(specs: Sequence[str], lang: str) -> bool:
    """Whether a list set or file of ``specs`` has a test in ``lang``."""
    return any(lang in available_languages(spec) for spec in specs)


def lists_identity(
    specs: Sequence[str], lang: str, tests: Sequence[str] | None = None
) -> list[str] | dict[str, str]:
    """What a job's key holds of its word lists in ``lang``: each source's SHA-256 (its path
    without one), or ``{"error": ...}`` when the selection fails (the job reports it when it
    runs, so that planning never fails on a list)."""
    try:
        selection = select_lists(list(specs), (lang,), tests=tests)
    except WeatkitError as err:
        return {"error": str(err)}
    return [s.get("sha256", s.get("path")) for s in selection.sources]


def select_lists(
    specs: Sequence[str],
    langs: Sequence[str] | None = None,
    *,
    normalization: Normalization = DEFAULT,
    tests: Sequence[str] | None = None,
) -> ListSelection:
    """Load, filter and normalise the tests of several list sets / files.

    A language or test filter must match something in at least one of the sets; a set in which it
    matches nothing is skipped with a report line. A set given twice is read once.

    Raises:
        WeatkitError: no specs, an unknown spec, a filter value that matches nothing anywhere, or
            no test left.
    """
    if isinstance(specs, str):
        specs = [specs]
    if not specs:
        raise WeatkitError(f"no list set given; use one of {', '.join(LIST_SETS)} or a list file")
    selected: list[AssociationTest] = []
    everything: list[AssociationTest] = []
    report: list[str] = []
    sources: list[dict[str, str]] = []
    seen_langs: set[str] = set()
    seen_tests: set[str] = set()
    done: set[str] = set()
    keys: set[tuple[str, str, str, str]] = set()
    for spec in specs:
        name = canonical_name(spec) or spec
        if name in done:
            report.append(f"{spec}: given more than once, read once")
            continue
        done.add(name)
        loaded, read, notes = _load(spec)
        kept, spec_langs, spec_tests = _filter(loaded, langs, tests)
        report += [n for n in notes if _concerns(n, kept)]
        seen_langs |= spec_langs
        seen_tests |= spec_tests
        everything += loaded
        sources += read
        if not kept:
            report.append(f"{name}: no lists match the language/test selection, skipped")
        for test in kept:
            if test.key in keys:
                report.append(f"{name}: {test.list_id} {test.test} already selected, skipped")
                continue
            keys.add(test.key)
            selected.append(test)
    where = ", ".join(specs)
    _check_filters(where, everything, langs, tests, seen_langs, seen_tests)
    if not selected:
        raise WeatkitError(f"no tests match the language/test selection in {where}")
    normalized, norm_report = normalize_tests_report(selected, normalization)
    if not normalized:
        reason = norm_report.skipped[0][1] if norm_report.skipped else "normalisation"
        raise WeatkitError(f"no tests left in {where} ({reason})")
    by_key = {test.key: test for test in selected}
    return ListSelection(
        tests=normalized,
        report=report + norm_report.messages + [norm_report.summary()],
        sources=sources,
        skipped=[(by_key[key], reason) for key, reason in norm_report.skipped],
    )


def _concerns(note: str, tests: list[AssociationTest]) -> bool:
    """Whether a source note (``warning: <list_set> <list_id> <test> ...``) is about one of
    ``tests`` (notes about tests not selected are not shown)."""
    words = note.split(" ", 4)
    return len(words) < 4 or any(
        (t.list_set, t.list_id, t.test) == tuple(words[1:4]) for t in tests
    )


def title_of(test: str) -> str:
    """A test's title with its sets' names: ``weat1`` -> ``WEAT 1: flowers/insects vs
    pleasant/unpleasant``.

    The names are the concepts of :data:`weatkit.lists.files.CAWEAT_TESTS` (WEAT1, WEAT2), else
    Caliskan et al.'s roles of :data:`weatkit.lists.sources.CALISKAN_ROLES` (WEAT3-WEAT10); a
    test id known to neither is its own title.
    """
    match = re.fullmatch(r"weat(\d+)", test, flags=re.IGNORECASE)
    if match is None:
        return test
    if test.lower() in CAWEAT_TESTS:
        names = [name.lower() for name in CAWEAT_TESTS[test.lower()]]
    elif test.upper() in CALISKAN_ROLES:
        names = [_words(name) for name in CALISKAN_ROLES[test.upper()]]
    else:
        return test
    x, y, a, b = names
    return f"WEAT {int(match.group(1))}: {x}/{y} vs {a}/{b}"


_PROPER = {"European", "African", "American"}


def _words(name: str) -> str:
    """``EuropeanAmericanNames`` -> ``European American names``, ``MaleTerms`` -> ``male
    terms``."""
    words = re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)
    return " ".join(w if w in _PROPER else w.lower() for w in words)
