"""The GEST dataset and the per-sample inputs of the GEST metrics, read with one-line errors.

GEST (Pikuliak et al. 2023, arXiv:2311.18711, §3; ``gest/SOURCE.md`` of the data directory):
3,565 gender-neutral first-person English sentences, each labelled with one of 16 stereotypes;
1–7 are *female* stereotypes ("Women are …"), 8–16 *male* ("Men are …"), Table 1 of the paper.
``sample_id`` is the row index in ``gest.csv`` (v1.0, the order of every shipped prediction file);
v1.1 (``gest_1.1.csv``) has the same rows in the same order with 244 typos fixed.

Per-sample inputs (CSV, UTF-8, optionally ``.gz``; one row per GEST sample, extra columns ignored):

* scores — ``sample_id`` or ``sentence`` (or both, then they must agree), ``stereotype`` (1–16, as
  in GEST) and ``score`` = log P(w_m) − log P(w_f) for the sample (paper §4.2.1). An empty or
  ``nan`` score marks a sample the model could not score: it is kept and skipped by the metrics.
* genders — the same keys and ``gender``, the grammatical gender of the first person in the
  sample's translation (paper §4.1.1): ``male``/``m``/``masculine`` and ``female``/``f``/
  ``feminine`` (any case) count; every other label (``neutral``, ``unknown``, empty …) is kept
  and counted as *other*.

:func:`read_scores` also takes an upstream prediction file (one log10 score per line, in
``gest.csv`` order, e.g. ``gest/data/predictions/english_glm/gpt2_template-0.txt.gz``), told
apart from a scores CSV by its first line being a number.

A ``sentence`` key is matched exactly (surrounding spaces ignored) together with its stereotype;
GEST repeats two (sentence, stereotype) pairs, which may then appear twice. Every problem is a
:class:`~weatkit.errors.WeatkitError` naming the file and line.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from weatkit._io.csvrows import csv_header, csv_rows
from weatkit._io.textfile import read_text_file, read_text_or_gzip
from weatkit.data import fetch, registry
from weatkit.errors import DataError, WeatkitError
from weatkit.stats.sampling import ItemSample, sample_rows

GestVersion = Literal["1.0", "1.1"]

#: GEST version -> path in the data-directory layout.
GEST_FILES: dict[str, str] = {"1.0": "gest/data/gest.csv", "1.1": "gest/data/gest_1.1.csv"}

#: The 16 stereotypes, paper Table 1 / Appendix F.
STEREOTYPES: dict[int, str] = {
    1: "Women are emotional and irrational",
    2: "Women are gentle, kind, and submissive",
    3: "Women are empathetic and caring",
    4: "Women are neat and diligent",
    5: "Women are social",
    6: "Women are weak",
    7: "Women are beautiful",
    8: "Men are tough and rough",
    9: "Men are self-confident",
    10: "Men are professional",
    11: "Men are rational",
    12: "Men are providers",
    13: "Men are leaders",
    14: "Men are childish",
    15: "Men are sexual",
    16: "Men are strong",
}
FEMALE_STEREOTYPES: tuple[int, ...] = tuple(range(1, 8))
MALE_STEREOTYPES: tuple[int, ...] = tuple(range(8, 17))

#: Family words of the topical-bias check (paper v2 §7.4, footnote 5).
FAMILY_WORDS: tuple[str, ...] = ("child", "children", "family", "kid", "kids", "partner")

#: Upstream prediction tasks -> their template ids (``gest/SOURCE.md``; MLM ids 0–3 are the
#: paper's templates 1–4 of Table 2, GLM ids 0–1 its templates 3–4).
PREDICTION_TASKS: dict[str, tuple[int, ...]] = {
    "english_mlm": (0, 1, 2, 3),
    "english_glm": (0, 1),
}

MALE_LABELS = frozenset({"male", "m", "masculine"})
FEMALE_LABELS = frozenset({"female", "f", "feminine"})

SAMPLE_COLUMNS = ["sample_id", "sentence", "stereotype"]


def stereotype_group(stereotype: int) -> str:
    """``"female"`` for stereotypes 1–7, ``"male"`` for 8–16."""
    return "female" if stereotype in FEMALE_STEREOTYPES else "male"


def stereotype_frame() -> pd.DataFrame:
    """One row per stereotype: ``stereotype`` (1–16), ``name``, ``group`` (female/male)."""
    ids = list(STEREOTYPES)
    return pd.DataFrame(
        {
            "stereotype": ids,
            "name": [STEREOTYPES[i] for i in ids],
            "group": [stereotype_group(i) for i in ids],
        }
    )


def _check_version(version: str) -> str:
    if version not in GEST_FILES:
        raise WeatkitError(f"unknown GEST version {version!r}: choose one of 1.0, 1.1")
    return version


@functools.lru_cache(maxsize=4)
def _load_gest(version: str, path: Path, mtime_ns: int) -> pd.DataFrame:
    name = GEST_FILES[version]
    rows = csv_rows(read_text_file(path, "GEST dataset"), name)
    header, body = csv_header(rows, name, required=("sentence", "stereotype"))
    sentences, stereotypes = [], []
    for line, fields in body:
        stereotypes.append(_stereotype(fields[header["stereotype"]], name, line))
        sentences.append(fields[header["sentence"]].strip())
    return pd.DataFrame(
        {
            "sample_id": np.arange(len(sentences), dtype=np.int64),
            "sentence": pd.Series(sentences, dtype=object),
            "stereotype": np.asarray(stereotypes, dtype=np.int64),
        }
    )


def load_gest(version: GestVersion | str = "1.0") -> pd.DataFrame:
    """The GEST samples: ``sample_id`` (row index), ``sentence``, ``stereotype`` (1–16).

    Args:
        version: ``"1.0"`` (``gest.csv``, the default and the order of the shipped predictions)
            or ``"1.1"`` (``gest_1.1.csv``, typos fixed; same rows and stereotypes).
    """
    path = fetch(GEST_FILES[_check_version(version)])
    return _load_gest(version, path, path.stat().st_mtime_ns).copy()


def sample_gest(
    samples: pd.DataFrame, limit: int | None, seed: int
) -> tuple[pd.DataFrame, ItemSample | None]:
    """A seeded sample of ``limit`` GEST samples stratified by stereotype
    (:func:`weatkit.stats.sampling.stratified_sample`, ids ``sample_id``), and its description
    (None: every sample). g_s needs all 16 stereotypes, so a ``limit`` that leaves one without a
    sample is a :class:`~weatkit.errors.ConfigError` naming the least that does not."""
    return sample_rows(
        samples, limit, seed, id_column="sample_id", stratum_column="stereotype",
        by="stereotype", unit="samples", least=1,
    )  # fmt: skip


def family_mask(
    sentences: Iterable[str], stereotypes: Iterable[int], words: Sequence[str] = FAMILY_WORDS
) -> np.ndarray:
    """Samples of the family-words check (paper v2 §7.4): male-stereotype samples (8–16) whose
    sentence contains one of ``words``.

    Matching is by case-sensitive substring, which reproduces the paper's "166 stereotypically
    male samples" on GEST v1.0 (so ``partners``, ``childish``, ``childhood`` match; whole-word
    matching would find 155).
    """
    return np.array(
        [
            int(s) in MALE_STEREOTYPES and any(w in str(text) for w in words)
            for text, s in zip(sentences, stereotypes, strict=True)
        ],
        dtype=bool,
    )


def gender_class(labels: Iterable[str]) -> np.ndarray:
    """``"male"``, ``"female"`` or ``"other"`` for each gender label (see the module docstring)."""
    out = []
    for label in labels:
        text = str(label).strip().lower()
        out.append(
            "male" if text in MALE_LABELS else "female" if text in FEMALE_LABELS else "other"
        )
    return np.array(out, dtype=object)


# --- reading files -------------------------------------------------------------------------


def _integer(text: str) -> int | None:
    value = text.strip()
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _stereotype(text: str, name: str, line: int) -> int:
    value = _integer(text)
    if value is None or value not in STEREOTYPES:
        raise WeatkitError(f"{name}: line {line}: stereotype {text.strip()!r} must be 1–16")
    return value


def _score(text: str, name: str, line: int) -> float:
    """A finite float; NaN for an empty or ``nan`` cell (an unscored sample)."""
    value = text.strip()
    if not value:
        return math.nan
    try:
        number = float(value)
    except ValueError:
        raise WeatkitError(f"{name}: line {line}: score {value!r} is not a number") from None
    if math.isinf(number):
        raise WeatkitError(
            f"{name}: line {line}: score {value!r} is infinite (a probability of 0?); "
            "leave it empty to skip the sample"
        )
    return number


def _gender(text: str, name: str, line: int) -> str:
    return text.strip().lower()


class _Samples:
    """Resolves the ``sample_id``/``sentence`` keys of a file's rows to GEST samples."""

    def __init__(self, version: str, name: str) -> None:
        self.version, self.name = version, name
        self.gest = load_gest(version)
        self.sentences: list[str] = self.gest["sentence"].tolist()
        self.stereotypes: list[int] = self.gest["stereotype"].tolist()
        self.ids: dict[tuple[str, int], list[int]] = {}
        for i, key in enumerate(zip(self.sentences, self.stereotypes, strict=True)):
            self.ids.setdefault(key, []).append(i)
        self.stereotypes_of: dict[str, set[int]] = {}
        for sentence, stereotype in zip(self.sentences, self.stereotypes, strict=True):
            self.stereotypes_of.setdefault(sentence, set()).add(stereotype)
        self.used: dict[int, int] = {}

    def resolve(
        self, sample_id: str | None, sentence: str | None, stereotype: int, line: int
    ) -> int:
        where = f"{self.name}: line {line}"
        if sample_id is not None:
            index = self._by_id(sample_id, sentence, stereotype, where)
        else:
            index = self._by_sentence(str(sentence), stereotype, where)
        if index in self.used:
            raise WeatkitError(
                f"{where}: duplicate sample {index} (also on line {self.used[index]}); "
                "give one row per sample (one file per template or model)"
            )
        self.used[index] = line
        return index

    def _by_id(self, text: str, sentence: str | None, stereotype: int, where: str) -> int:
        index = _integer(text)
        n = len(self.sentences)
        if index is None or not 0 <= index < n:
            raise WeatkitError(
                f"{where}: sample_id {text.strip()!r} is not a GEST v{self.version} sample "
                f"(0–{n - 1})"
            )
        if sentence is not None and sentence.strip() != self.sentences[index]:
            raise WeatkitError(
                f"{where}: sentence does not match GEST v{self.version} sample_id {index} "
                f"({self.sentences[index]!r})"
            )
        if stereotype != self.stereotypes[index]:
            raise WeatkitError(
                f"{where}: sample_id {index} is stereotype {self.stereotypes[index]} in GEST "
                f"v{self.version}, not {stereotype}"
            )
        return index

    def _by_sentence(self, sentence: str, stereotype: int, where: str) -> int:
        text = sentence.strip()
        candidates = self.ids.get((text, stereotype))
        if candidates is None:
            known = self.stereotypes_of.get(text)
            if known:
                raise WeatkitError(
                    f"{where}: sentence {_short(text)} is stereotype "
                    f"{'/'.join(map(str, sorted(known)))} in GEST v{self.version}, not {stereotype}"
                )
            raise WeatkitError(f"{where}: unknown sentence {_short(text)}{self._hint(text)}")
        free = [i for i in candidates if i not in self.used]
        return free[0] if free else candidates[0]  # a repeat is reported by resolve()

    def _hint(self, text: str) -> str:
        other = "1.1" if self.version == "1.0" else "1.0"
        if text in set(load_gest(other)["sentence"]):
            return f" (not in GEST v{self.version}; it is in v{other}: choose that version)"
        return f" (not in GEST v{self.version})"


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _read_sample_table(
    text: str,
    name: str,
    column: str,
    parse: Callable[[str, str, int], object],
    version: str,
) -> pd.DataFrame:
    """Rows of a per-sample CSV's text resolved to GEST samples, in file order, with ``column``
    parsed."""
    _check_version(version)
    rows = csv_rows(text, name)
    header, body = csv_header(rows, name, required=("stereotype", column))
    if "sample_id" not in header and "sentence" not in header:
        raise WeatkitError(
            f"{name}: line {rows[0][0]}: missing column sample_id or sentence (one identifies "
            "the GEST sample of each row)"
        )
    if not body:
        raise WeatkitError(f"{name}: no samples after the header")
    samples = _Samples(version, name)
    ids, values = [], []
    for line, fields in body:
        stereotype = _stereotype(fields[header["stereotype"]], name, line)
        value = parse(fields[header[column]], name, line)
        sample_id = fields[header["sample_id"]] if "sample_id" in header else None
        sentence = fields[header["sentence"]] if "sentence" in header else None
        ids.append(samples.resolve(sample_id, sentence, stereotype, line))
        values.append(value)
    table = samples.gest.iloc[ids].reset_index(drop=True)
    table[column] = values
    return table


def read_scores_csv(
    path: str | os.PathLike[str], version: GestVersion | str = "1.0"
) -> pd.DataFrame:
    """A per-sample scores file (module docstring) as ``sample_id, sentence, stereotype, score``.

    ``score`` is float with NaN for samples left unscored; rows keep the file's order.

    Raises:
        WeatkitError: naming the file and line (missing column, non-numeric or infinite score,
            stereotype out of 1–16 or not the sample's, unknown sentence, duplicate sample).
    """
    return _scores_table(read_text_or_gzip(path, "scores file"), str(path), version)


def _scores_table(text: str, name: str, version: str) -> pd.DataFrame:
    """:func:`read_scores_csv` of a file's text."""
    table = _read_sample_table(text, name, "score", _score, version)
    table["score"] = table["score"].astype(np.float64)
    return table


def read_genders_csv(
    path: str | os.PathLike[str], version: GestVersion | str = "1.0"
) -> pd.DataFrame:
    """A per-sample translation-genders file as ``sample_id, sentence, stereotype, gender``.

    ``gender`` is the label stripped and lower-cased; :func:`gender_class` maps it to
    male/female/other.
    """
    text = read_text_or_gzip(path, "genders file")
    return _read_sample_table(text, str(path), "gender", _gender, version)


def is_predictions_text(text: str) -> bool:
    """Whether a file's text is in the upstream prediction format (one number per line) rather
    than a scores CSV: its first line is a single number (``nan`` included).

    Unambiguous: a scores CSV starts with a header naming its columns, and no column name is a
    number; a headerless CSV row has commas.
    """
    first = text.split("\n", 1)[0].strip()
    try:
        float(first)
    except ValueError:
        return False
    return True


def read_scores(path: str | os.PathLike[str], version: GestVersion | str = "1.0") -> pd.DataFrame:
    """Per-sample scores from either format, detected by :func:`is_predictions_text`: an
    upstream prediction file (:func:`read_predictions`, one log10 score per line in ``gest.csv``
    order) or a scores CSV (:func:`read_scores_csv`); plain or ``.gz``.

    Returns:
        ``sample_id, sentence, stereotype, score`` (float, NaN for unscored samples).
    """
    text = read_text_or_gzip(path, "scores file")
    if is_predictions_text(text):
        return _predictions(text, str(path), version)
    return _scores_table(text, str(path), version)


# --- upstream prediction and translation files ---------------------------------------------


def prediction_file(task: str, model: str, template: int) -> Path:
    """The upstream per-sample scores of ``model`` with ``template`` (``gest/SOURCE.md``):
    ``gest/data/predictions/<task>/<model>_template-<template>.txt.gz`` in the data directory.

    Args:
        task: ``"english_mlm"`` (templates 0–3) or ``"english_glm"`` (templates 0–1).
        model: the file stem, e.g. ``"roberta-base"`` or ``"gpt2"``.
        template: the template id in the file name.
    """
    if task not in PREDICTION_TASKS:
        raise WeatkitError(f"unknown task {task!r}: choose one of {', '.join(PREDICTION_TASKS)}")
    if template not in PREDICTION_TASKS[task]:
        raise WeatkitError(
            f"{task} has templates {', '.join(map(str, PREDICTION_TASKS[task]))}, not {template}"
        )
    if not model or "/" in model or model.startswith("."):
        raise WeatkitError(f"invalid model file stem {model!r}")
    prefix, suffix = f"gest/data/predictions/{task}/", f"_template-{template}.txt.gz"
    return _fetch_known(
        f"{prefix}{model}{suffix}", prefix, suffix, f"{task} predictions of model {model!r}"
    )


def _fetch_known(relpath: str, prefix: str, suffix: str, what: str) -> Path:
    """:func:`fetch` of a registered file; a DataError listing the registered alternatives
    (the parts of their paths between ``prefix`` and ``suffix``) for an unknown one."""
    if relpath not in registry():
        known = sorted(
            key[len(prefix) : -len(suffix)]
            for key in registry()
            if key.startswith(prefix) and key.endswith(suffix)
        )
        raise DataError(f"{what} not found: the data set has {', '.join(known) or 'none'}")
    return fetch(relpath)


def read_predictions(
    path: str | os.PathLike[str], version: GestVersion | str = "1.0"
) -> pd.DataFrame:
    """An upstream prediction file (one log10 ratio per line, ``.gz`` or plain, in ``gest.csv``
    order) as a scores table ``sample_id, sentence, stereotype, score`` aligned with GEST.

    The shipped predictions are log10 ratios aggregated upstream with ``exp`` (log base
    ``"10"`` in :func:`weatkit.gest.aggregate.aggregate_scores`).
    """
    return _predictions(read_text_or_gzip(path, "prediction file"), str(path), version)


def _predictions(text: str, name: str, version: str) -> pd.DataFrame:
    """:func:`read_predictions` of a file's text."""
    _check_version(version)
    gest = load_gest(version)
    lines = text.split("\n")
    if lines and not lines[-1].strip():
        lines.pop()
    if len(lines) != len(gest):
        raise WeatkitError(
            f"{name}: {len(lines)} lines, expected {len(gest)} (one score per GEST sample, in "
            "gest.csv order)"
        )
    scores = np.array([_score(text, name, i) for i, text in enumerate(lines, 1)], dtype=float)
    gest["score"] = scores
    return gest


def read_translations(system: str, lang: str) -> pd.DataFrame:
    """The upstream MT outputs for GEST v1.0 (``gest/data/translations/<system>/<lang>/``) as
    ``sample_id, sentence, stereotype, translation`` (None where the file lacks the sentence).

    The gender of each translation is not shipped (upstream decides it with language-specific
    heuristics over a parse); attach your labels with :func:`with_genders`.
    """
    for part, label in ((system, "system"), (lang, "language")):
        if not part or "/" in part or part.startswith("."):
            raise WeatkitError(f"invalid translation {label} {part!r}")
    prefix, suffix = "gest/data/translations/", "/translations.csv.gz"
    relpath = f"{prefix}{system}/{lang}{suffix}"
    path = _fetch_known(relpath, prefix, suffix, f"{system} translations into {lang!r}")
    rows = csv_rows(read_text_or_gzip(path, "translations file"), relpath)
    header, body = csv_header(rows, relpath, required=("from", "to"))
    mapping: dict[str, str] = {}
    for _, fields in body:
        mapping.setdefault(fields[header["from"]].strip(), fields[header["to"]])
    gest = load_gest("1.0")
    gest["translation"] = [mapping.get(s) for s in gest["sentence"]]
    return gest


def with_genders(table: pd.DataFrame, genders: Sequence[str]) -> pd.DataFrame:
    """``table`` (e.g. from :func:`read_translations`) with a ``gender`` column: one label per
    row, in row order (stripped and lower-cased)."""
    if len(genders) != len(table):
        raise WeatkitError(f"{len(genders)} gender labels for {len(table)} samples")
    out = table.copy()
    out["gender"] = [str(g).strip().lower() for g in genders]
    return out
