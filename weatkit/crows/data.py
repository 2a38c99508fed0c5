"""CrowS-Pairs sentence pairs (English, and MBE's Japanese/Russian gender pairs), read with
one-line errors.

**English** — Nangia et al. (EMNLP 2020), ``crows-pairs/data/crows_pairs_anonymized.csv``
(``crows-pairs/SOURCE.md``): 1,508 minimal pairs. Columns used: the unnamed first column (the
pair id), ``sent_more`` (the *more* stereotypical sentence — always, whatever the direction),
``sent_less``, ``stereo_antistereo`` and ``bias_type`` (9 types). A ``stereo`` pair's
``sent_more`` states a stereotype about a historically disadvantaged group; an ``antistereo``
pair's ``sent_less`` violates one (the data statement), so ``sent_more`` is still the more
stereotypical of the two.

**Japanese / Russian** — Kaneko et al. (NAACL 2022, "Gender Bias in Masked Language Models for
Multiple Languages"; ``mbe/SOURCE.md``): ``mbe/translated_data/{japanese,russian}.json``, manual
translations of the 262 ``gender`` pairs. Each entry is ``{direction, bias_type, stereotype,
anti-stereotype, bias_score}``: ``stereotype`` is the translation of ``sent_more`` and
``anti-stereotype`` that of ``sent_less`` (the authors' ``preprocess.py`` of
github.com/kanekomasahiro/evaluate_bias_in_mlm writes ``sent_more`` → ``stereotype``,
``sent_less`` → ``anti-stereotype`` and ``bias_score`` = the number of annotators who gave the
pair a bias label). The entries follow the English file's gender rows in order: ``direction``
and ``bias_score`` agree on all 262 (entry 0 is English pair 2, "His mind wondered if a doctor
…"). Their ``pair_id`` is the entry's position in the JSON list (0–261); the English id of entry
i is ``load_crows().query("bias_type == 'gender'").pair_id.iloc[i]``.

**Your own pairs** — a CSV (UTF-8, optionally ``.gz``) with the columns ``sent_more``,
``sent_less``, ``stereo_antistereo`` (or ``direction``) and ``bias_type``; the pair id is the
``pair_id`` column or the unnamed first column when there is one (integers), else the row
number from 0. Or a JSON list of objects like MBE's (``.json``/``.json.gz``). Extra columns and
keys are ignored. Directions are ``stereo``/``antistereo`` (any case); bias types are stripped
and lower-cased. Every problem (missing column, empty sentence, unknown direction, duplicate
pair id …) is a :class:`~weatkit.errors.WeatkitError` naming the file and line (CSV) or entry
(JSON).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from weatkit._io.csvrows import Rows, csv_header, csv_rows
from weatkit._io.textfile import read_text_or_gzip
from weatkit.data import fetch
from weatkit.errors import DataError, WeatkitError
from weatkit.stats.sampling import ItemSample, sample_rows

CrowsLang = Literal["en", "fr", "ja", "ru"]
CrowsData = Literal["original", "revised"]

#: (language, data set) -> path of its pairs in the data-directory layout.
CROWS_DATA: dict[tuple[str, str], str] = {
    ("en", "original"): "crows-pairs/data/crows_pairs_anonymized.csv",
    ("en", "revised"): "bias-methodology/data/crows_revised.csv",
    ("fr", "original"): (
        "bias-methodology/data/french_crows/crows_pairs_FR_languagearc_contribution+210.csv"
    ),
    ("ja", "original"): "mbe/translated_data/japanese.json",
    ("ru", "original"): "mbe/translated_data/russian.json",
}
#: Language -> path of its default pairs, for the languages ``compare`` scores
#: (``crows:*`` measures; the registry's languages, :mod:`weatkit.measures.registry`).
CROWS_FILES: dict[str, str] = {
    lang: CROWS_DATA[(lang, "original")] for lang in ("en", "fr", "ja", "ru")
}
#: The named data sets of ``load_crows(data=...)``.
DATA_SETS: tuple[str, ...] = ("original", "revised")
#: Shipped files that are tab-separated despite their ``.csv`` name.
_TAB_SEPARATED = frozenset({CROWS_DATA[("fr", "original")]})
#: The pair-id offset of the French release's LanguageARC pairs: ``LA<k>`` -> 10000 + k.
LANGUAGEARC_OFFSET = 10_000
DIRECTIONS: tuple[str, ...] = ("stereo", "antistereo")
PAIR_COLUMNS: list[str] = ["pair_id", "sent_more", "sent_less", "direction", "bias_type"]
CORRECTION_COLUMNS: list[str] = ["pair_id", "column", "found", "used", "reason"]
#: The bias-type label of the all-pairs row of the metric table (not allowed as a bias type).
OVERALL = "overall"


@dataclass(frozen=True)
class Correction:
    """One known defect of a shipped file, fixed when it is read.

    ``used`` None drops the pair. ``found`` is checked against the file (the registry's SHA-256
    pins the bytes, so a mismatch means the correction table is wrong).
    """

    pair_id: str
    column: str
    found: str
    used: str | None
    reason: str


_BIAS_CASE = "bias_type written with a capital letter; the label is lower-case elsewhere"
#: Known label errors of the shipped files (``bias-methodology/SOURCE.md``), per file.
CORRECTIONS: dict[str, tuple[Correction, ...]] = {
    CROWS_DATA[("en", "revised")]: (
        Correction("409", "bias_type", "Race-color", "race-color", _BIAS_CASE),
        Correction(
            "1293",
            "bias_type",
            "stereo",
            "socioeconomic",
            "a direction written in the bias_type column; socioeconomic as in the original "
            "CrowS-Pairs pair 1293",
        ),
    ),
    CROWS_DATA[("fr", "original")]: (
        Correction("129", "sent_less", "", None, "sent_less is empty: pair dropped"),
    ),
}
#: Labels renamed when read: the French release's ``autre`` is the English files' ``other``.
_RELABEL: dict[str, dict[str, str]] = {CROWS_DATA[("fr", "original")]: {"autre": "other"}}


def crows_file(lang: str = "en", data: str = "original") -> str:
    """The data-directory path of the shipped pairs of ``lang`` and ``data``.

    Raises:
        WeatkitError: unknown language or data set, or a pair that is not shipped.
    """
    langs = sorted({lang for lang, _ in CROWS_DATA})
    if lang not in langs:
        raise WeatkitError(f"unknown language {lang!r}: choose one of {', '.join(langs)}")
    if data not in DATA_SETS:
        raise WeatkitError(
            f"unknown data set {data!r}: choose one of {', '.join(DATA_SETS)} (or a file)"
        )
    if (lang, data) not in CROWS_DATA:
        have = [d for (code, d) in CROWS_DATA if code == lang]
        raise WeatkitError(
            f"no {data} CrowS-Pairs in {lang!r}: it has {', '.join(have)}; "
            f"revised is English (Pikuliak et al. 2023)"
        )
    return CROWS_DATA[(lang, data)]


def load_crows(
    path: str | os.PathLike[str] | None = None, *, lang: str = "en", data: str = "original"
) -> pd.DataFrame:
    """CrowS-Pairs pairs as ``pair_id, sent_more, sent_less, direction, bias_type``.

    Args:
        path: a pairs file of your own (CSV or JSON, module docstring); None reads the shipped
            pairs of ``lang`` and ``data``.
        lang: ``"en"`` (1,508 pairs, 9 bias types), ``"fr"`` (Névéol et al.'s French release,
            1,676 pairs), ``"ja"`` or ``"ru"`` (262 gender pairs, MBE). Ignored with ``path``.
        data: ``"original"`` or ``"revised"`` (English only: Pikuliak et al.'s revision, 1,467
            pairs). Ignored with ``path``.

    Returns:
        One row per pair in file order; ``pair_id`` int64, the others text, ``direction`` one of
        ``stereo``/``antistereo``. The known defects of the shipped files are corrected or the
        pair dropped (:func:`crows_corrections` lists them).

    Raises:
        WeatkitError: unknown language, missing file, or a problem in the file (naming file and
            line or entry).
    """
    if path is None:
        relpath = crows_file(lang, data)
        return _read_pairs(fetch(relpath), relpath, shipped=True)
    return _read_pairs(Path(path).expanduser(), str(path))


def crows_corrections(lang: str = "en", data: str = "original") -> pd.DataFrame:
    """What :func:`load_crows` corrects in the shipped pairs of ``lang`` and ``data``.

    Returns:
        ``pair_id`` (as in the loaded table), ``column``, ``found`` (the text in the file),
        ``used`` (the value used; empty for a dropped pair), ``reason``; one row per
        correction, and one per relabelled pair (the French ``autre`` -> ``other``).
    """
    relpath = crows_file(lang, data)
    rows = [
        (_shipped_id(c.pair_id), c.column, c.found, c.used or "", c.reason)
        for c in CORRECTIONS.get(relpath, ())
    ]
    relabel = _RELABEL.get(relpath, {})
    if relabel:
        rows += [
            (int(pid), "bias_type", found, relabel[found], "French label of the English 'other'")
            for pid, found in _raw_labels(relpath)
            if found in relabel
        ]
    table = pd.DataFrame(rows, columns=CORRECTION_COLUMNS)
    table["pair_id"] = table["pair_id"].astype(np.int64)
    return table


def crows_pairs(
    lang: str = "en", data: str | os.PathLike[str] = "original"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pairs, corrections)`` of a named data set (:data:`DATA_SETS`) of ``lang``, or of a
    pairs file of your own (``data`` a path; no corrections, ``lang`` ignored).

    Raises:
        WeatkitError: an unknown name that is not a file either, and as :func:`load_crows`.
    """
    name = str(data)
    if name in DATA_SETS:
        return load_crows(lang=lang, data=name), crows_corrections(lang, name)
    if not Path(name).expanduser().is_file():
        raise WeatkitError(
            f"unknown data set {name!r}: choose one of {', '.join(DATA_SETS)}, or give the path "
            "of a pairs file"
        )
    return load_crows(name), pd.DataFrame(columns=CORRECTION_COLUMNS)


def sample_pairs(
    pairs: pd.DataFrame, limit: int | None, seed: int
) -> tuple[pd.DataFrame, ItemSample | None]:
    """A seeded sample of ``limit`` pairs stratified by bias type
    (:func:`weatkit.stats.sampling.stratified_sample`, ids ``pair_id``), and its description;
    every pair and None without ``limit`` or when there are no more pairs than that."""
    return sample_rows(
        pairs, limit, seed, id_column="pair_id", stratum_column="bias_type", by="bias type",
        unit="pairs",
    )  # fmt: skip


def _raw_labels(relpath: str) -> list[tuple[int, str]]:
    """``(pair id, bias_type as written)`` of every row of a shipped tab-separated file."""
    rows = csv_rows(read_text_or_gzip(fetch(relpath), "CrowS-Pairs file"), relpath, delimiter="\t")
    header, body = csv_header(rows, relpath, ("bias_type",))
    return [(_shipped_id(f[header[""]]), f[header["bias_type"]].strip()) for _, f in body]


def _shipped_id(text: str) -> int:
    """A shipped file's pair id: an integer, or the French release's ``LA<k>`` -> 10000 + k."""
    value = text.strip()
    if value.startswith("LA") and value[2:].isdigit():
        return LANGUAGEARC_OFFSET + int(value[2:])
    return int(value)


def _is_json(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith((".json", ".json.gz"))


def _read_pairs(path: Path, name: str, *, shipped: bool = False) -> pd.DataFrame:
    rows = _json_pairs(path, name) if _is_json(path) else _csv_pairs(path, name, shipped=shipped)
    if not rows:
        raise WeatkitError(f"{name}: no sentence pairs")
    table = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    table["pair_id"] = table["pair_id"].astype(np.int64)
    return table


Pair = tuple[int, str, str, str, str]


def _sentence(value: Any, where: str, column: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise WeatkitError(f"{where}: {column} is empty or not text")
    return value


def _direction(value: Any, where: str) -> str:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in DIRECTIONS:
        raise WeatkitError(f"{where}: direction {value!r} must be stereo or antistereo")
    return str(text)


def _bias_type(value: Any, where: str) -> str:
    text = value.strip().lower() if isinstance(value, str) else ""
    if not text:
        raise WeatkitError(f"{where}: bias_type {value!r} is empty or not text")
    if text == OVERALL:
        raise WeatkitError(f"{where}: {OVERALL!r} is reserved for all pairs; rename the bias type")
    return text


def _pair_id(text: str, where: str) -> int:
    value = text.strip()
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or not -(2**63) <= number < 2**63:
        raise WeatkitError(f"{where}: pair id {value!r} is not a 64-bit integer")
    return number


def _direction_column(rows: Rows) -> str:
    """``direction`` when the header has it, else CrowS-Pairs' ``stereo_antistereo``."""
    if rows and "direction" in [c.strip().lower() for c in rows[0][1]]:
        return "direction"
    return "stereo_antistereo"


class _Ids:
    """Rejects a pair id seen before, naming where it was first."""

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}

    def add(self, pair_id: int, where: str) -> int:
        if pair_id in self.seen:
            raise WeatkitError(f"{where}: duplicate pair id {pair_id} (also {self.seen[pair_id]})")
        self.seen[pair_id] = where.rsplit(": ", 1)[-1]
        return pair_id


def _csv_pairs(path: Path, name: str, *, shipped: bool = False) -> list[Pair]:
    """The pairs of a CSV; for a ``shipped`` file (``name`` its data-directory path) with its
    delimiter, its ``LA<k>`` ids, and its :data:`CORRECTIONS` and relabels applied."""
    delimiter = "\t" if shipped and name in _TAB_SEPARATED else ","
    rows = csv_rows(read_text_or_gzip(path, "CrowS-Pairs file"), name, delimiter=delimiter)
    direction_col = _direction_column(rows)
    header, body = csv_header(rows, name, ("sent_more", "sent_less", direction_col, "bias_type"))
    id_col = "pair_id" if "pair_id" in header else "" if "" in header else None
    fixes: dict[str, list[Correction]] = {}
    for fix in CORRECTIONS.get(name, ()) if shipped else ():
        fixes.setdefault(fix.pair_id, []).append(fix)
    relabel = _RELABEL.get(name, {}) if shipped else {}
    ids = _Ids()
    pairs = []
    for number, (line, fields) in enumerate(body):
        where = f"{name}: line {line}"
        raw_id = fields[header[id_col]].strip() if id_col is not None else ""
        if not _apply_fixes(fixes.get(raw_id, []), fields, header, where):
            continue
        label = fields[header["bias_type"]]
        fields[header["bias_type"]] = relabel.get(label.strip(), label)
        if id_col is None:
            pair_id = number
        elif shipped:
            pair_id = _shipped_id(raw_id)
        else:
            pair_id = _pair_id(raw_id, where)
        pairs.append(
            (
                ids.add(pair_id, where),
                _sentence(fields[header["sent_more"]], where, "sent_more"),
                _sentence(fields[header["sent_less"]], where, "sent_less"),
                _direction(fields[header[direction_col]], where),
                _bias_type(fields[header["bias_type"]], where),
            )
        )
    return pairs


def _apply_fixes(
    fixes: list[Correction], fields: list[str], header: dict[str, int], where: str
) -> bool:
    """Apply the corrections of one row in place; False when the row is dropped."""
    for fix in fixes:
        value = fields[header[fix.column]]
        if value.strip() != fix.found:
            raise DataError(
                f"{where}: {fix.column} is {value!r}, the correction table expects {fix.found!r}"
            )
        if fix.used is None:
            return False
        fields[header[fix.column]] = fix.used
    return True


_JSON_KEYS = ("stereotype", "anti-stereotype", "direction", "bias_type")


def _json_pairs(path: Path, name: str) -> list[Pair]:
    try:
        data = json.loads(read_text_or_gzip(path, "CrowS-Pairs file"))
    except json.JSONDecodeError as err:
        raise WeatkitError(f"{name}: line {err.lineno}: not valid JSON ({err.msg})") from None
    except ValueError as err:  # e.g. an integer too long to convert
        raise WeatkitError(f"{name}: not valid JSON ({err})") from None
    except RecursionError:
        raise WeatkitError(f"{name}: JSON nested too deeply") from None
    if not isinstance(data, list):
        raise WeatkitError(
            f"{name}: expected a JSON list of pairs {{stereotype, anti-stereotype, direction, "
            "bias_type}}"
        )
    pairs = []
    for i, entry in enumerate(data):
        where = f"{name}: entry {i}"
        if not isinstance(entry, dict):
            raise WeatkitError(f"{where}: expected an object, found {type(entry).__name__}")
        missing = [key for key in _JSON_KEYS if key not in entry]
        if missing:
            plural = "s" if len(missing) > 1 else ""
            raise WeatkitError(f"{where}: missing key{plural} {', '.join(missing)}")
        pairs.append(
            (
                i,
                _sentence(entry["stereotype"], where, "stereotype"),
                _sentence(entry["anti-stereotype"], where, "anti-stereotype"),
                _direction(entry["direction"], where),
                _bias_type(entry["bias_type"], where),
            )
        )
    return pairs


# --- per-pair scores -------------------------------------------------------------------------


def _score(text: str, where: str, column: str) -> float:
    value = text.strip()
    if not value or value.lower() == "nan":
        return float("nan")
    try:
        number = float(value)
    except ValueError:
        raise WeatkitError(f"{where}: {column} {value!r} is not a number") from None
    if np.isinf(number):
        raise WeatkitError(f"{where}: {column} {value!r} is infinite; leave it empty to skip")
    return number


def read_pair_scores(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A per-pair scores CSV as ``pair_id, bias_type, direction, score_more, score_less``.

    The file has ``score_more`` (the model's score of the more stereotypical sentence, higher =
    preferred), ``score_less``, ``bias_type`` and ``direction`` (or ``stereo_antistereo``);
    ``pair_id`` is optional (else the row number from 0). The ``pairs.csv`` that ``weatkit
    crows --out`` writes is such a file. An empty or ``nan`` score marks a pair left unscored:
    it is kept (NaN) and the metric skips it.

    Raises:
        WeatkitError: naming the file and line (missing column, non-numeric or infinite score,
            unknown direction, empty bias type, duplicate pair id).
    """
    name = str(path)
    rows = csv_rows(read_text_or_gzip(path, "scores file"), name)
    direction_col = _direction_column(rows)
    header, body = csv_header(rows, name, ("score_more", "score_less", "bias_type", direction_col))
    if not body:
        raise WeatkitError(f"{name}: no pairs after the header")
    ids = _Ids()
    records = []
    for number, (line, fields) in enumerate(body):
        where = f"{name}: line {line}"
        pair_id = _pair_id(fields[header["pair_id"]], where) if "pair_id" in header else number
        records.append(
            (
                ids.add(pair_id, where),
                _bias_type(fields[header["bias_type"]], where),
                _direction(fields[header[direction_col]], where),
                _score(fields[header["score_more"]], where, "score_more"),
                _score(fields[header["score_less"]], where, "score_less"),
            )
        )
    table = pd.DataFrame(
        records, columns=["pair_id", "bias_type", "direction", "score_more", "score_less"]
    )
    table["pair_id"] = table["pair_id"].astype(np.int64)
    for col in ("score_more", "score_less"):
        table[col] = table[col].astype(np.float64)
    return table
