"""MBE inputs: English gender word lists, parallel corpora, sentence selection, shipped sets.

Step 1 of MBE (Kaneko et al., NAACL 2022, §3): given a parallel corpus of English sentences
``E`` and target-language sentences ``T`` and English word lists ``V_m`` (male) and ``V_f``
(female), an English sentence is *male* when it contains a word of ``V_m`` and none of ``V_f``,
*female* symmetrically; sentences with both or neither are dropped. ``T_m`` and ``T_f`` are the
target sides of the male and female English sentences; the paper then down-samples both to the
same size (§4).

Files (UTF-8, a leading BOM dropped, ``.gz`` read gunzipped; every problem is a one-line
:class:`~weatkit.errors.WeatkitError` naming the file and line):

* word lists — one word (or phrase) per line; blank lines and repeats ignored, lower-cased. The
  default lists are GN-GloVe's ``wordlist/male_word_file.txt`` and ``female_word_file.txt``
  (``gn_glove/`` of the data directory), the Bolukbasi et al. lists the paper cites (without the
  CrowS-Pairs names, which were never published).
* parallel TSV — ``English<TAB>target`` per line, exactly two fields (no quoting: a tab cannot
  occur inside a sentence). Blank lines are skipped. The first line is a header, and skipped,
  when its first field is ``en`` or ``english`` (any case, surrounding spaces ignored), e.g.
  ``english<TAB>target`` or ``en<TAB>de``; every other first line is data.
* aligned plain texts (OPUS "Moses" format) — line ``i`` of the English file translates line
  ``i`` of the target file; both must have the same number of lines (a final newline does not
  start a line). Blank lines are kept so that alignment is preserved.

Lines are split on ``\\n`` only (a trailing ``\\r`` is removed), so line numbers are what an
editor shows.

The shipped sets (``mbe/parallel_data/{corpus}/{lang}_{m,f}.json.gz``, converted from the
reference repository's pickles, ``mbe/SOURCE.md``) hold token ids of the model that
``eval.py`` used for the language (:data:`MBE_MODELS`), special tokens included.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from weatkit._io.textfile import read_text_or_gzip
from weatkit.data import fetch
from weatkit.errors import WeatkitError

T = TypeVar("T")

#: The default English word lists (data-directory paths).
MALE_WORDS = "gn_glove/wordlist/male_word_file.txt"
FEMALE_WORDS = "gn_glove/wordlist/female_word_file.txt"

#: Language -> the masked LM whose tokenizer produced the shipped ids (``eval.py`` of the
#: reference repository; the paper names ``aubmindlab/bert-base-arabertv01`` for ar and
#: ``cahya/bert-base-indonesian-522M`` for id, the code the models below).
MBE_MODELS: dict[str, str] = {
    "de": "deepset/gbert-base",
    "ja": "cl-tohoku/bert-base-japanese-whole-word-masking",
    "ar": "aubmindlab/bert-base-arabertv02",
    "es": "dccuchile/bert-base-spanish-wwm-uncased",
    "pt": "neuralmind/bert-base-portuguese-cased",
    "ru": "blinoff/roberta-base-russian-v0",
    "id": "cahya/bert-base-indonesian-1.5G",
    "zh": "hfl/chinese-bert-wwm-ext",
}

#: Corpus -> language -> sentences per side of the shipped sets (``mbe/SOURCE.md``; male and
#: female sides are equal). Spanish news is absent from the reference repository.
MBE_SETS: dict[str, dict[str, int]] = {
    "ted": {
        "de": 2373,
        "ja": 3082,
        "ar": 3497,
        "es": 3578,
        "pt": 2828,
        "ru": 3349,
        "id": 1438,
        "zh": 3406,
    },
    "news": {"de": 1057, "ja": 913, "ar": 861, "pt": 1078, "ru": 1970, "id": 241, "zh": 1686},
}


# --- files ------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """Lines split on ``\\n`` (a trailing ``\\r`` removed); a final newline ends the last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


# --- word lists -------------------------------------------------------------------------------


def _word_list(path: str | os.PathLike[str], what: str) -> list[str]:
    lines = _lines(read_text_or_gzip(path, what))
    words = dict.fromkeys(" ".join(line.split()).lower() for line in lines if line.strip())
    if not words:
        raise WeatkitError(f"{path}: the {what} has no words")
    return list(words)


def load_gender_words(
    male: str | os.PathLike[str] | None = None, female: str | os.PathLike[str] | None = None
) -> tuple[list[str], list[str]]:
    """The English male and female word lists ``V_m`` and ``V_f`` (MBE paper §3 and §4).

    Args:
        male: one word per line; default GN-GloVe's ``male_word_file.txt`` (data directory).
        female: likewise; default ``female_word_file.txt``.

    Returns:
        ``(male_words, female_words)``, lower-cased, spaces collapsed, in file order without
        repeats.

    Raises:
        WeatkitError: a file missing, unreadable, not UTF-8, without words, or a word on both
            lists (naming it).
    """
    male_path = Path(male) if male is not None else fetch(MALE_WORDS)
    female_path = Path(female) if female is not None else fetch(FEMALE_WORDS)
    male_words = _word_list(male_path, "male word list")
    female_words = _word_list(female_path, "female word list")
    both = sorted(set(male_words) & set(female_words))
    if both:
        more = f" (and {len(both) - 1} more)" if len(both) > 1 else ""
        raise WeatkitError(
            f"{both[0]!r}{more} is on both the male list {male_path} and the female list "
            f"{female_path}"
        )
    return male_words, female_words


# --- parallel corpora -------------------------------------------------------------------------


def read_parallel_tsv(path: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """English and target sentences of a ``English<TAB>target`` file (module docstring).

    Returns:
        ``(english, target)``, aligned lists of the fields, surrounding spaces stripped.

    Raises:
        WeatkitError: naming the file and line of a line without exactly two fields.
    """
    name = str(path)
    english: list[str] = []
    target: list[str] = []
    for number, line in enumerate(_lines(read_text_or_gzip(path, "parallel corpus")), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise WeatkitError(
                f"{name}: line {number}: expected 2 tab-separated fields (English, target), "
                f"found {len(fields)}"
            )
        if number == 1 and fields[0].strip().lower() in ("en", "english"):
            continue  # header
        english.append(fields[0].strip())
        target.append(fields[1].strip())
    return english, target


def read_parallel_texts(
    english_path: str | os.PathLike[str], target_path: str | os.PathLike[str]
) -> tuple[list[str], list[str]]:
    """Aligned English and target plain-text files, one sentence per line (module docstring).

    Raises:
        WeatkitError: a file unreadable, or the two files with different numbers of lines
            (naming both files and both counts).
    """
    english = [s.strip() for s in _lines(read_text_or_gzip(english_path, "English corpus"))]
    target = [s.strip() for s in _lines(read_text_or_gzip(target_path, "target corpus"))]
    if len(english) != len(target):
        raise WeatkitError(
            f"the English file {english_path} has {len(english)} lines but the target file "
            f"{target_path} has {len(target)}; they must be aligned line by line"
        )
    return english, target


# --- Step 1: selection ------------------------------------------------------------------------


def word_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """One case-insensitive regex matching any of ``words`` as a whole word.

    ``(?<!\\w)(?:w1|w2|…)(?!\\w)`` with the words escaped and longest first; for words that
    begin and end with a letter or digit this is ``\\b(?:…)\\b`` (so ``he`` matches in
    ``He's`` but not in ``the`` or ``hello``).
    """
    unique = sorted({w for w in words if w}, key=lambda w: (-len(w), w))
    if not unique:
        raise WeatkitError("an empty word list matches no sentence")
    body = "|".join(re.escape(w) for w in unique)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


def gendered_indices(
    english: Sequence[str],
    target: Sequence[str],
    male_words: Sequence[str],
    female_words: Sequence[str],
) -> tuple[list[int], list[int]]:
    """Positions of the male and female pairs of a parallel corpus (see :func:`select_gendered`)."""
    if len(english) != len(target):
        raise WeatkitError(f"{len(english)} English sentences but {len(target)} target sentences")
    is_male = word_pattern(male_words).search
    is_female = word_pattern(female_words).search
    male: list[int] = []
    female: list[int] = []
    for i, (en, tgt) in enumerate(zip(english, target, strict=True)):
        if not tgt.strip():
            continue
        m, f = is_male(en) is not None, is_female(en) is not None
        if m and not f:
            male.append(i)
        elif f and not m:
            female.append(i)
    return male, female


def select_gendered(
    english: Sequence[str],
    target: Sequence[str],
    male_words: Sequence[str],
    female_words: Sequence[str],
) -> tuple[list[str], list[str]]:
    """Step 1 of MBE: the target sentences ``T_m`` and ``T_f`` whose English side is gendered.

    An English sentence is male when it contains at least one male word and no female word
    (whole words, case-insensitive, :func:`word_pattern`), female symmetrically; sentences with
    words of both lists or of neither are dropped, as are empty target sentences.

    Returns:
        ``(male_targets, female_targets)`` in corpus order, stripped.
    """
    male, female = gendered_indices(english, target, male_words, female_words)
    return [target[i].strip() for i in male], [target[i].strip() for i in female]


def downsample(
    male: Sequence[T], female: Sequence[T], seed: int, limit: int | None = None
) -> tuple[list[T], list[T]]:
    """Both sides down-sampled to ``n = min(len(male), len(female), limit)`` (paper §4).

    A side longer than ``n`` keeps ``n`` items drawn without replacement with
    ``np.random.default_rng(seed)`` (the male side drawn first), in their original order; a side
    of length ``n`` is kept whole. Deterministic for a given seed.
    """
    n = min(len(male), len(female))
    if limit is not None:
        if limit < 1:
            raise WeatkitError(f"the sentence limit must be at least 1, not {limit}")
        n = min(n, limit)
    rng = np.random.default_rng(seed)

    def pick(items: Sequence[T]) -> list[T]:
        if len(items) == n:
            return list(items)
        keep = np.sort(rng.choice(len(items), size=n, replace=False))
        return [items[int(i)] for i in keep]

    return pick(male), pick(female)


# --- shipped token-id sets --------------------------------------------------------------------


def _check_set(lang: str, corpus: str) -> None:
    if corpus not in MBE_SETS:
        raise WeatkitError(f"unknown MBE corpus {corpus!r}: choose one of {', '.join(MBE_SETS)}")
    if lang not in MBE_SETS[corpus]:
        if corpus == "news" and lang == "es":
            why = "the Spanish news set is absent from the reference repository"
        else:
            why = f"unknown MBE language {lang!r}"
        raise WeatkitError(f"{why}; {corpus} sets exist for {', '.join(sorted(MBE_SETS[corpus]))}")


def _ids_file(path: Path, relpath: str) -> list[list[int]]:
    try:
        data: Any = json.loads(read_text_or_gzip(path, "MBE set"))
    except json.JSONDecodeError as err:
        raise WeatkitError(f"{relpath}: not valid JSON (line {err.lineno}: {err.msg})") from None
    if not isinstance(data, list):
        raise WeatkitError(f"{relpath}: expected a JSON list of token-id lists")
    for i, ids in enumerate(data):
        ok = isinstance(ids, list) and len(ids) >= 3
        if not ok or not all(type(t) is int and t >= 0 for t in ids):
            raise WeatkitError(
                f"{relpath}: entry {i}: expected a list of at least 3 non-negative token ids "
                "(special token, tokens, special token)"
            )
    return data


def load_mbe_set(lang: str, corpus: str) -> tuple[list[list[int]], list[list[int]]]:
    """The shipped male and female sentences of ``lang`` in ``corpus`` (``ted`` or ``news``).

    Token ids of :data:`MBE_MODELS`\\ ``[lang]``'s tokenizer with the special tokens first and
    last (:meth:`weatkit.sentence.masked_lm.TokenizedSentence.from_ids`).

    Returns:
        ``(male_ids, female_ids)``, one list of ids per sentence.

    Raises:
        WeatkitError: unknown language or corpus (listing those that exist), a file missing from
            the data directory, or an entry that is not a list of ids (naming file and index).
    """
    _check_set(lang, corpus)
    out = []
    for side in ("m", "f"):
        relpath = f"mbe/parallel_data/{corpus}/{lang}_{side}.json.gz"
        out.append(_ids_file(fetch(relpath), relpath))
    return out[0], out[1]


def _ids_of(tokenizer: Any, names: Sequence[str]) -> set[int]:
    ids = (getattr(tokenizer, f"{name}_token_id", None) for name in names)
    return {int(i) for i in ids if i is not None}


def check_tokenizer(tokenizer: Any, ids_sets: Sequence[Sequence[Sequence[int]]], lang: str) -> None:
    """WeatkitError unless ``tokenizer`` could have produced the shipped ids of ``lang``.

    Every id must be below ``len(tokenizer)``; every sentence must start with the tokenizer's
    ``[CLS]``/``<s>`` id and end with its ``[SEP]``/``</s>`` id.
    """
    if lang not in MBE_MODELS:
        raise WeatkitError(f"unknown MBE language {lang!r}: choose one of {', '.join(MBE_MODELS)}")
    source = f"the MBE {lang} sets were tokenised with {MBE_MODELS[lang]}"
    size = len(tokenizer)
    firsts = _ids_of(tokenizer, ("cls", "bos"))
    lasts = _ids_of(tokenizer, ("sep", "eos"))
    for ids_set in ids_sets:
        for i, ids in enumerate(ids_set):
            top = max(ids)
            if top >= size:
                raise WeatkitError(
                    f"{source}, and this model's tokenizer does not match: sentence {i} has token "
                    f"id {top} but the vocabulary has {size} ids"
                )
            if ids[0] not in firsts or ids[-1] not in lasts:
                raise WeatkitError(
                    f"{source}, and this model's tokenizer does not match: sentence {i} starts "
                    f"with id {ids[0]} and ends with id {ids[-1]}, but its [CLS]/<s> id is "
                    f"{_show(firsts)} and its [SEP]/</s> id is {_show(lasts)}"
                )


def _show(ids: set[int]) -> str:
    return "/".join(map(str, sorted(ids))) if ids else "undefined"
