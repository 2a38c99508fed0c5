"""EuroGEST: GEST in 29 European languages (Rowe et al., EMNLP 2025, arXiv:2506.03867).

The data (``eurogest/SOURCE.md`` of the data directory; github.com/JacquelineRowe/EuroGEST):

* ``data/gest_translations_gender_insensitive.csv`` — gender-**neutral** translations of the
  3,565 GEST v1.1 sentences (row index = GEST sample id), one column per language; an empty cell
  = no neutral translation. A neutral sentence ``x`` is wrapped in a gendered template: leading
  and trailing whitespace and punctuation (Unicode category P) are stripped and the result is
  ``open + x + close + " " + scaffold`` with the language's quotes from
  ``evaluate_models/configs/punc_map.json`` and the scaffold from ``prompt_scaffolds.json``:
  template **P** ("he said" / "she said") or **N** ("the man said" / "the woman said").
* ``data/gest_translations_gender_sensitive.csv`` — gendered minimal pairs (condition **G**) for
  20 languages, masculine column first (two header lines); scored as they are (surrounding
  whitespace stripped: the French cells start with a space).

Each (language, sample) is one item with one (masculine, feminine) string pair: G when the
language has a gendered pair for the sample, else the neutral sentence in the language's
template. Which template a language uses is what the upstream code versions (:data:`CODE`)
disagree on (:data:`WRAPPERS`).

**Coinciding forms.** In Italian (and Estonian, Finnish, Greek, Hungarian, Spanish, Turkish) the
P scaffold is the same word for both genders (Italian ``disse``), so a P item has identical
masculine and feminine strings and a score fixed at r = 0.5. :func:`eurogest_items` detects
every item whose two strings coincide and, by ``coinciding``: ``"other"`` (default) wraps it in
the language's other template (N), ``"refuse"`` raises a one-line error, ``"keep"`` keeps it (the
upstream behaviour, r = 0.5), never silently: the count is in :attr:`EuroGestItems.n_coinciding`.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from weatkit._io.csvrows import csv_rows
from weatkit._io.textfile import read_text_file
from weatkit.data import fetch
from weatkit.errors import DataError, WeatkitError

NEUTRAL_FILE = "eurogest/data/gest_translations_gender_insensitive.csv"
GENDERED_FILE = "eurogest/data/gest_translations_gender_sensitive.csv"
SCAFFOLDS_FILE = "eurogest/evaluate_models/configs/prompt_scaffolds.json"
PUNC_FILE = "eurogest/evaluate_models/configs/punc_map.json"

#: ISO 639-1 code -> the language's name in the EuroGEST files (``supported_languages.json``;
#: Norwegian is ``no``).
LANGUAGES: dict[str, str] = {
    "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "es": "Spanish", "et": "Estonian", "fi": "Finnish", "fr": "French",
    "ga": "Irish", "gl": "Galician", "hr": "Croatian", "hu": "Hungarian", "it": "Italian",
    "lt": "Lithuanian", "lv": "Latvian", "mt": "Maltese", "nl": "Dutch", "no": "Norwegian",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian",
}  # fmt: skip

#: Upstream code versions (``eurogest/SOURCE.md``, "How the scores are computed"):
#: ``2025-12`` = version A (``evaluate_models/model_eval.py`` + ``calculate_scores.py``, the
#: default), ``2026-04`` = version B (HEAD ``main.py`` + ``utils/scoring.py``), ``2025-08`` =
#: ``scripts/stereotype_rates.py`` (the paper-era aggregation with other template groups).
CODE: tuple[str, ...] = ("2025-12", "2026-04", "2025-08")
DEFAULT_CODE = "2025-12"
CodeVersion = Literal["2025-12", "2026-04", "2025-08"]

_N_ONLY_A = {"et", "fi", "hu", "tr", "el", "es", "gl"}
#: code version -> language -> the template of its neutral sentences ("P" or "N"); a language
#: missing from a version's table is not scored by that version.
WRAPPERS: dict[str, dict[str, str]] = {
    "2025-12": {c: "N" if c in _N_ONLY_A else "P" for c in LANGUAGES},
    # B: no_gendered_pronouns (et fi hu tr el es gl) -> N, gendered_pronouns -> P: the same split
    "2026-04": {c: "N" if c in _N_ONLY_A else "P" for c in LANGUAGES},
    "2025-08": {
        c: "N" if c in {"et", "fi", "hu", "el", "es", "it"} else "P"
        for c in LANGUAGES
        if c not in {"tr", "mt"}
    },
}
#: template -> the (masculine, feminine) keys of ``prompt_scaffolds.json``.
SCAFFOLD_KEYS = {"P": ("he said", "she said"), "N": ("the man said", "the woman said")}
COINCIDING: tuple[str, ...] = ("other", "refuse", "keep")
Coinciding = Literal["other", "refuse", "keep"]

ITEM_COLUMNS = ["sample_id", "stereotype", "sentence", "condition", "masculine", "feminine"]


def language_name(lang: str) -> str:
    """The EuroGEST name of an ISO code; a one-line error listing the codes for an unknown one."""
    code = str(lang).strip().lower()
    if code not in LANGUAGES:
        raise WeatkitError(
            f"unknown EuroGEST language {lang!r}: choose one of {', '.join(sorted(LANGUAGES))}"
        )
    return LANGUAGES[code]


def check_code(code: str) -> str:
    if code not in CODE:
        raise WeatkitError(
            f"unknown EuroGEST code version {code!r}: choose one of {', '.join(CODE)}"
        )
    return code


@functools.lru_cache(maxsize=4)
def _table(relpath: str, header_lines: int) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header (first line) and data rows of a translations CSV, checked for width."""
    path: Path = fetch(relpath)
    rows = csv_rows(read_text_file(path, "EuroGEST translations"), relpath)
    if len(rows) <= header_lines:
        raise DataError(f"{relpath}: no rows after the header")
    header = [c.strip() for c in rows[0][1]]
    for line, fields in rows[header_lines:]:
        if len(fields) != len(header):
            raise DataError(
                f"{relpath}: line {line}: {len(fields)} fields, header has {len(header)}"
            )
    return header, rows[header_lines:]


def _stereotype(text: str, relpath: str, line: int) -> int | None:
    value = text.strip()
    if not value:
        return None  # the empty last row
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not number.is_integer() or not 1 <= number <= 16:
        raise DataError(f"{relpath}: line {line}: stereotype {value!r} must be 1–16")
    return int(number)


def load_translations(lang: str) -> pd.DataFrame:
    """One row per GEST v1.1 sample: ``sample_id, stereotype, sentence`` (English),
    ``neutral`` (the neutral translation or ""), ``masculine``, ``feminine`` (the gendered pair
    or ""); rows without a stereotype (the files' empty last row) are left out."""
    name = language_name(lang)
    header, rows = _table(NEUTRAL_FILE, 1)
    if name not in header or "stereotype_number" not in header:
        raise DataError(f"{NEUTRAL_FILE}: line 1: no column {name!r}")
    col, st, src = header.index(name), header.index("stereotype_number"), 1
    records: dict[int, dict[str, object]] = {}
    for line, fields in rows:
        stereotype = _stereotype(fields[st], NEUTRAL_FILE, line)
        if stereotype is None:
            continue
        sid = int(fields[0])
        records[sid] = {
            "sample_id": sid,
            "stereotype": stereotype,
            "sentence": fields[src].strip(),
            "neutral": fields[col].strip(),
            "masculine": "",
            "feminine": "",
        }
    g_header, g_rows = _table(GENDERED_FILE, 2)
    if name in g_header:
        m = g_header.index(name)
        if g_header[m + 1] != name:
            raise DataError(f"{GENDERED_FILE}: line 1: {name} needs two columns (masc., fem.)")
        for line, fields in g_rows:
            if not fields[0].strip() or int(fields[0]) not in records:
                continue
            masc, fem = fields[m].strip(), fields[m + 1].strip()
            if bool(masc) != bool(fem):
                raise DataError(f"{GENDERED_FILE}: line {line}: {name} has only one form")
            record = records[int(fields[0])]
            if masc and record["neutral"]:
                raise DataError(
                    f"{GENDERED_FILE}: line {line}: {name} sample {fields[0]} is both "
                    "neutral and gendered"
                )
            record["masculine"], record["feminine"] = masc, fem
    table = pd.DataFrame(list(records.values()))
    table["sample_id"] = table["sample_id"].astype(np.int64)
    table["stereotype"] = table["stereotype"].astype(np.int64)
    return table.sort_values("sample_id", ignore_index=True)


@functools.lru_cache(maxsize=1)
def _configs() -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    scaffolds = json.loads(read_text_file(fetch(SCAFFOLDS_FILE), "EuroGEST scaffolds"))
    punc = json.loads(read_text_file(fetch(PUNC_FILE), "EuroGEST punctuation map"))
    return scaffolds, punc


def scaffolds(lang: str, template: str) -> tuple[str, str]:
    """The (masculine, feminine) scaffolds of template ``"P"`` or ``"N"`` in ``lang``."""
    name = language_name(lang)
    table, _ = _configs()
    try:
        return tuple(table[key][name] for key in SCAFFOLD_KEYS[template])  # type: ignore[return-value]
    except KeyError:
        raise DataError(f"{SCAFFOLDS_FILE}: no {template} scaffold for {name}") from None


def _strip_punctuation(text: str) -> str:
    def edge(c: str) -> bool:
        return c.isspace() or unicodedata.category(c).startswith("P")

    start, end = 0, len(text)
    while start < end and edge(text[start]):
        start += 1
    while end > start and edge(text[end - 1]):
        end -= 1
    return text[start:end]


def wrap(lang: str, sentence: str, template: str) -> tuple[str, str]:
    """The neutral ``sentence`` in template ``"P"`` or ``"N"``: (masculine, feminine) strings,
    ``open + stripped + close + " " + scaffold`` (module docstring)."""
    name = language_name(lang)
    _, punc = _configs()
    if name not in punc:
        raise DataError(f"{PUNC_FILE}: no quotes for {name}")
    opening, closing = punc[name]
    body = f"{opening}{_strip_punctuation(sentence)}{closing} "
    masc, fem = scaffolds(lang, template)
    return body + masc, body + fem


@dataclass(frozen=True)
class EuroGestItems:
    """The string pairs of one language under one code version.

    Attributes:
        lang: ISO code.
        code: upstream code version (:data:`CODE`).
        items: :data:`ITEM_COLUMNS`; ``condition`` is ``G``, ``P`` or ``N``.
        n_coinciding: items whose masculine and feminine strings were identical in the
            version's template (handled by ``coinciding``).
        coinciding: the handling: ``other``, ``refuse`` or ``keep``.
        note: a one-line description of what was done with them ("" when none).
    """

    lang: str
    code: str
    items: pd.DataFrame
    n_coinciding: int
    coinciding: str
    note: str


def eurogest_items(
    lang: str, code: CodeVersion | str = DEFAULT_CODE, coinciding: Coinciding | str = "other"
) -> EuroGestItems:
    """Every scorable item of ``lang``: the gendered pair (G) or the wrapped neutral sentence.

    Raises:
        WeatkitError: unknown language or code version, a language the version does not score
            (``2025-08`` has no group for Turkish and Maltese), coinciding strings with
            ``coinciding="refuse"`` or with no other template that tells the genders apart.
    """
    code = check_code(code)
    name = language_name(lang)
    lang = lang.strip().lower()
    if coinciding not in COINCIDING:
        raise WeatkitError(
            f"unknown coinciding-forms handling {coinciding!r}: "
            f"choose one of {', '.join(COINCIDING)}"
        )
    if lang not in WRAPPERS[code]:
        raise WeatkitError(
            f"EuroGEST code version {code} puts {name} in no template group (upstream "
            "scripts/stereotype_rates.py); choose another version"
        )
    template = WRAPPERS[code][lang]
    other = "N" if template == "P" else "P"
    table = load_translations(lang)
    rows = []
    n_same = 0
    for rec in table.itertuples(index=False):
        if rec.masculine:
            rows.append(
                (rec.sample_id, rec.stereotype, rec.sentence, "G", rec.masculine, rec.feminine)
            )
            continue
        if not rec.neutral:
            continue
        masc, fem = wrap(lang, rec.neutral, template)
        used = template
        if masc == fem:
            n_same += 1
            if coinciding == "refuse":
                s_m, _ = scaffolds(lang, template)
                raise WeatkitError(
                    f"EuroGEST {name}: the {template} template's masculine and feminine forms "
                    f"coincide ({s_m!r}) for neutral samples such as {rec.sample_id}; use "
                    "coinciding 'other' (the language's other template) or 'keep' (r = 0.5)"
                )
            if coinciding == "other":
                masc, fem = wrap(lang, rec.neutral, other)
                used = other
                if masc == fem:
                    raise WeatkitError(
                        f"EuroGEST {name}: both templates give identical masculine and feminine "
                        f"strings for sample {rec.sample_id}"
                    )
        rows.append((rec.sample_id, rec.stereotype, rec.sentence, used, masc, fem))
    items = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    items["sample_id"] = items["sample_id"].astype(np.int64)
    items["stereotype"] = items["stereotype"].astype(np.int64)
    note = ""
    if n_same:
        s_m, _ = scaffolds(lang, template)
        what = {
            "other": f"wrapped in the {other} template instead",
            "keep": "kept with identical strings (r = 0.5 each, as upstream)",
        }[coinciding]
        note = (
            f"{name}: the {template} template's masculine and feminine forms coincide "
            f"({s_m!r}); {n_same} neutral sample(s) {what}"
        )
    return EuroGestItems(lang, code, items, n_same, coinciding, note)
