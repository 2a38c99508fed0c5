"""Normalisation of list items before lookup, with a report of everything it changed.

Always applied (they never change what a word *is*):

- Unicode NFC, so that "é" typed as e + U+0301 matches the precomposed "é" of the vocabulary;
- removal of invisible formatting characters: zero-width space U+200B, word joiner U+2060,
  BOM U+FEFF and the directional marks/embeddings/isolates U+200E, U+200F, U+202A-U+202E,
  U+2066-U+2069 (CA-WEAT v1 has three LRMs in Arabic items, see ``ca-weat/SOURCE.md``);
  ``invisible="keep"`` keeps them, as the CA-WEAT and XWEAT code do (they look items up as
  written);
- stripping of leading/trailing whitespace and collapsing of inner whitespace runs to one space.

Zero-width non-joiner U+200C and zero-width joiner U+200D are **kept**: they are orthographic in
Persian (e.g. the five ZWNJs in the CA-WEAT ``fa`` lists) and in Indic scripts, where removing them
changes the spelling and the vocabulary lookup.

Optional (:class:`Normalization`): lowercasing (``str.lower`` after NFC; German nouns are
capitalised in CA-WEAT, so this is the caller's choice), accent stripping (``accent_removal``:
``"marks"`` = NFD, drop combining marks of category Mn, NFC again - meant for
Latin/Greek/Cyrillic; it destroys vowel signs of Indic scripts and Arabic diacritics;
``"transliterate"`` = ``unidecode.unidecode``, ASCII transliteration as the CA-WEAT code's
``--accents True`` does: ß → ss, пчела → pchela, Arabic and Persian to Latin letters), and
joining multi-word items (~5% of CA-WEAT v1 items, e.g.
"fucile mitragliatore") with ``"_"`` as static phrase vectors expect (the CA-WEAT tool's
``--phrases``); ``join_phrases=None`` keeps the spaces, for contextual models.

After normalisation, empty items are dropped, duplicates within a set are removed (the first
occurrence is kept, with a warning; 35 v1 cells have one; ``duplicates="keep"`` keeps every
occurrence, so that each enters the means, as the CA-WEAT and XWEAT code do), and items shared
by the two target sets or the two attribute sets are reported but kept (e.g. ru1 FLOWERS and
INSECTS both contain "пчела" in CA-WEAT v1). A test whose two target sets hold the same items
(WEAT 17 and 18 of WEATHub ``en_india`` and ``bn_india``, where the gendered Hindi verbs and
adjectives become the same English/Bengali words) is skipped with that reason: every
s(w, A, B) of X is also one of Y, so the statistic is 0 by construction, not a measurement.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from weatkit.errors import ConfigError
from weatkit.lists.model import SET_KEYS, AssociationTest

#: Invisible characters that are removed. ZWNJ (U+200C) and ZWJ (U+200D) are deliberately absent.
REMOVED_CHARS = frozenset(
    [0x200B, 0x200E, 0x200F, 0x2060, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)
_REMOVE_TABLE = {cp: None for cp in REMOVED_CHARS}
_SPACE = re.compile(r"\s+")

#: Why a test whose two target sets hold the same items is skipped.
IDENTICAL_TARGETS = "identical target sets"

#: Rule names used in :attr:`NormalizationReport.counts`, in the order they are applied.
RULES = (
    "nfc",
    "invisible",
    "whitespace",
    "lower",
    "accents",
    "phrases",
    "empty",
    "duplicates",
)


#: How ``strip_accents`` removes accents: combining marks only, or ``unidecode`` to ASCII.
ACCENT_REMOVALS = ("marks", "transliterate")
#: What happens to an item repeated within a set.
DUPLICATES = ("drop", "keep")
#: What happens to the invisible characters of :data:`REMOVED_CHARS`.
INVISIBLE = ("drop", "keep")


@dataclass(frozen=True)
class Normalization:
    """Which optional normalisation rules to apply (the always-on rules are in the module doc).

    Attributes:
        lower: lowercase items (``str.lower`` after NFC).
        strip_accents: remove accents, as ``accent_removal`` says.
        join_phrases: replace the spaces of multi-word items with this string (``"_"`` for static
            vectors); None keeps phrases as they are (contextual models).
        accent_removal: ``"marks"`` (NFD, drop category Mn, NFC) or ``"transliterate"``
            (``unidecode``, the CA-WEAT code; needs the optional ``unidecode`` package).
        duplicates: ``"drop"`` (keep the first occurrence) or ``"keep"`` (every occurrence).
        invisible: ``"drop"`` or ``"keep"`` the characters of :data:`REMOVED_CHARS`.
    """

    lower: bool = False
    strip_accents: bool = False
    join_phrases: str | None = "_"
    accent_removal: str = "marks"
    duplicates: str = "drop"
    invisible: str = "drop"

    def __post_init__(self) -> None:
        """:class:`ConfigError` naming the field of a value that is not one of its choices."""
        check_choice("accent_removal", self.accent_removal, ACCENT_REMOVALS)
        check_choice("duplicates", self.duplicates, DUPLICATES)
        check_choice("invisible", self.invisible, INVISIBLE)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """:class:`ConfigError` naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ConfigError(f"must be one of {', '.join(choices)}, got {value!r}", field=name)


def transliterate(text: str) -> str:
    """ASCII transliteration with ``unidecode.unidecode`` (the CA-WEAT code's accent removal).

    unidecode is GPL-licensed and optional (``pip install 'weatkit[compat]'``): it is imported
    here, when first needed.
    """
    try:
        from unidecode import unidecode
    except ImportError:
        raise ConfigError(
            "accent_removal transliterate needs the optional package unidecode: "
            "pip install 'weatkit[compat]' (or pip install unidecode)"
        ) from None
    return unidecode(text)


#: The default: only the always-on rules, phrases joined with "_".
DEFAULT = Normalization()


@dataclass
class NormalizationReport:
    """What :func:`normalize_tests` did.

    Attributes:
        messages: human-readable lines: one per removed duplicate, dropped empty item, cross-set
            overlap and dropped test.
        counts: for each rule in :data:`RULES`, how many item occurrences it changed or removed.
        overlaps: number of items found in both target sets or both attribute sets of a test.
        dropped_tests: keys of tests dropped because a set became empty.
        skipped: ``(key, reason)`` of tests skipped because their two target sets are identical.
    """

    messages: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    overlaps: int = 0
    dropped_tests: list[tuple[str, str, str, str]] = field(default_factory=list)
    skipped: list[tuple[tuple[str, str, str, str], str]] = field(default_factory=list)

    def summary(self) -> str:
        """One line: how many items each rule changed, e.g. ``"normalisation: nfc 3, ..."``."""
        parts = [f"{rule} {self.counts[rule]}" for rule in RULES if self.counts[rule]]
        if self.overlaps:
            parts.append(f"cross-set overlaps {self.overlaps} (kept)")
        if self.dropped_tests:
            parts.append(f"tests dropped {len(self.dropped_tests)}")
        if self.skipped:
            parts.append(f"tests skipped (identical target sets) {len(self.skipped)}")
        return "normalisation: " + (", ".join(parts) if parts else "no changes")


@lru_cache(maxsize=1 << 16)  # a grid normalises the same items once per job
def _steps(item: str, norm: Normalization) -> tuple[tuple[str, str], ...]:
    """The item after each rule, as ``(rule, value)`` pairs in :data:`RULES` order."""
    out: list[tuple[str, str]] = []
    value = unicodedata.normalize("NFC", item)
    out.append(("nfc", value))
    if norm.invisible == "drop":
        value = value.translate(_REMOVE_TABLE)
        out.append(("invisible", value))
    value = _SPACE.sub(" ", value).strip()
    out.append(("whitespace", value))
    if norm.lower:
        value = unicodedata.normalize("NFC", value.lower())
        out.append(("lower", value))
    if norm.strip_accents and norm.accent_removal == "transliterate":
        value = transliterate(value)
        out.append(("accents", value))
    elif norm.strip_accents:
        decomposed = unicodedata.normalize("NFD", value)
        value = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
        value = unicodedata.normalize("NFC", value)
        out.append(("accents", value))
    if norm.join_phrases is not None:
        value = value.replace(" ", norm.join_phrases)
        out.append(("phrases", value))
    return tuple(out)


def normalize_item(item: str, norm: Normalization = DEFAULT) -> str:
    """Normalise one item; the result may be ``""`` (callers drop empty items)."""
    return _steps(item, norm)[-1][1]


def _label(test: AssociationTest, key: str) -> str:
    name = test.names[SET_KEYS.index(key)]
    suffix = f" ({name})" if name != key else ""
    return f"{test.list_set} {test.list_id} {test.test} {key}{suffix}"


def _normalize_set(
    test: AssociationTest, key: str, norm: Normalization, report: NormalizationReport
) -> tuple[str, ...]:
    kept: list[str] = []
    seen: set[str] = set()
    for item in test.sets()[key]:
        previous = item
        for rule, value in _steps(item, norm):
            if value != previous:
                report.counts[rule] += 1
            previous = value
        if not previous:
            report.counts["empty"] += 1
            report.messages.append(f"{_label(test, key)}: empty item {item!r} dropped")
        elif previous in seen and norm.duplicates == "keep":
            kept.append(previous)
            report.messages.append(
                f"note: {_label(test, key)}: duplicate item {previous!r} kept "
                "(duplicates: keep; every occurrence enters the means)"
            )
        elif previous in seen:
            report.counts["duplicates"] += 1
            report.messages.append(
                f"warning: {_label(test, key)}: duplicate item {previous!r} removed "
                "(first occurrence kept)"
            )
        else:
            seen.add(previous)
            kept.append(previous)
    return tuple(kept)


def _normalize_pairs(
    pairs: tuple[tuple[str, str], ...], norm: Normalization
) -> tuple[tuple[str, str], ...]:
    """The definitional pairs with both words normalised as the sets' items are; a pair with a
    word left empty is dropped."""
    out = [(normalize_item(x, norm), normalize_item(y, norm)) for x, y in pairs]
    return tuple((x, y) for x, y in out if x and y)


def _report_overlap(
    test: AssociationTest, pair: tuple[str, str], report: NormalizationReport
) -> None:
    first, second = (test.sets()[k] for k in pair)
    shared = [item for item in dict.fromkeys(first) if item in set(second)]
    for item in shared:
        report.overlaps += 1
        a, b = (f"{k} ({test.names[SET_KEYS.index(k)]})" for k in pair)
        report.messages.append(
            f"note: {test.list_set} {test.list_id} {test.test}: {item!r} is in both {a} and {b} "
            "(kept in both)"
        )


def normalize_tests_report(
    tests: Sequence[AssociationTest],
    norm: Normalization = DEFAULT,
) -> tuple[list[AssociationTest], NormalizationReport]:
    """Normalise every set of every test; like :func:`normalize_tests` with a structured report.

    Tests in which a set becomes empty are dropped (and reported), since no statistic is defined;
    tests whose target sets X and Y hold the same items are skipped (and reported, with the reason
    in :attr:`NormalizationReport.skipped`).
    """
    report = NormalizationReport()
    result: list[AssociationTest] = []
    for test in tests:
        sets = {key: _normalize_set(test, key, norm, report) for key in SET_KEYS}
        new = replace(test, **sets, pairs=_normalize_pairs(test.pairs, norm))
        empty = [key for key in SET_KEYS if not sets[key]]
        if empty:
            report.dropped_tests.append(test.key)
            report.messages.append(
                f"warning: {test.list_set} {test.list_id} {test.test}: test dropped, set "
                f"{', '.join(empty)} is empty after normalisation"
            )
            continue
        if set(new.X) == set(new.Y):
            reason = (
                f"{test.list_set} {test.list_id} {test.test}: {IDENTICAL_TARGETS} "
                f"(X {test.names[0]!r} and Y {test.names[1]!r} hold the same "
                f"{len(set(new.X))} items; the statistic is 0 by construction)"
            )
            report.skipped.append((test.key, reason))
            report.messages.append(f"warning: {reason}, test skipped")
            continue
        _report_overlap(new, ("X", "Y"), report)
        _report_overlap(new, ("A", "B"), report)
        result.append(new)
    return result, report


def normalize_tests(
    tests: Sequence[AssociationTest],
    norm: Normalization = DEFAULT,
) -> tuple[list[AssociationTest], list[str]]:
    """Normalise every set of every test.

    Returns:
        The normalised tests and report lines: one per removed duplicate (``warning: ...``),
        dropped empty item, cross-set overlap (``note: ...``) and dropped test, then a summary line
        counting what each rule changed (see :meth:`NormalizationReport.summary`).
    """
    result, report = normalize_tests_report(tests, norm)
    return result, [*report.messages, report.summary()]
