"""Corpus asymmetry: effect sizes against the counts of the pleasant and unpleasant attributes.

CA-WEAT paper (España-Bonet & Barrón-Cedeño, EMNLP 2022), §5 "Comparable experiments with CCe",
Figure 3 and Appendix D (Table 5). The paper asks whether an asymmetry between how often the
positive (pleasant, A) and negative (unpleasant, B) attribute items occur in the training corpus
creates an artificial bias: it plots the effect size d of every list against "the difference
between the counts of the positive (pleasant) and the negative (unpleasant) attributes" and
reports R² of a straight line (R² = 0.493 for the 9 X-WEAT1 lists, 0.001 for all 91 *-WEAT1
lists, 0.334 and 0.008 for *-WEAT2). What is counted (Table 5: one number per set and language,
the occurrences of all the set's items in the corpus) is, for a test with attribute sets A, B::

    count(S)         = Σ_{w ∈ S} c(w)       c(w): occurrences of item w in the corpus
    count_difference = count(A) − count(B)

raw summed counts, with no log and no normalisation: the paper's CCe corpora have the same size
in every language (≈1.78·10⁹ words, Table 4), so counts are comparable across languages as they
are. (Table 5's caption says "billions", but its values are millions: en pleasant 5.32 cannot be
billions in a 1.8-billion-word corpus; the wordfreq proxy below gives 4.4 million for it.) Give
corpora of equal size per language for the same comparison. R² is the squared Pearson r of the
least-squares line d ~ count_difference, so it does not change under a rescaling of the counts.

Count sources (:func:`attribute_counts`): a corpus per language (:func:`count_items`: raw
occurrences) or ``"wordfreq"`` (:func:`wordfreq_counts`: frequency per million words from the
``wordfreq`` package, a proxy for the training corpus - it mixes Wikipedia, subtitles, news,
books, web text, Twitter and Reddit - and equivalent to counts in an equal-size corpus per
language).

``asymmetry`` table (:func:`asymmetry_table`) - one row per embeddings × list × test:

=================  ===========================================================================
embeddings         the embeddings name of the run (``results.csv``)
lang               language of the list
list_set           list set (``ca-weat:v1``, ``x-weat``, ``weat``, a file)
list_id            list id (``en_US1``, ``xweat-de``)
test               test id (``weat1``)
effect_size        Cohen's d of the run
count_a            count(A): summed counts of the distinct attribute items of A (pleasant)
count_b            count(B): summed counts of the distinct attribute items of B (unpleasant)
count_difference   count(A) − count(B)
counts_source      ``corpus:PATH`` (occurrences) or ``wordfreq:LANG (per million words)``,
                   LANG being the wordfreq list used (``sh`` for ``hr``)
=================  ===========================================================================

:func:`attribute_counts` gives the same rows without ``embeddings`` and ``effect_size``.

``asymmetry_correlations`` table (:func:`asymmetry_correlations`) - one row per embeddings ×
test × list-set group, effect size (y) against count difference (x) over the lists:

=================  ===========================================================================
embeddings, test   the group
list_sets          one list set's name, or ``all`` (every list set of the test together, as the
                   paper's "all 91 *-WEAT1 tests")
n                  number of lists (rows with both values)
pearson_r/_p       Pearson r and its two-sided permutation p
spearman_rho/_p    Spearman ρ and its two-sided permutation p
r2                 R² = r² of the least-squares line (``scipy.stats.linregress``)
slope, intercept   of the least-squares line d = intercept + slope · count_difference
permutation_method ``exact`` (all n! pairings, n ≤ 8) or ``monte-carlo`` (9,999 seeded)
n_permutations     pairings the p-values are computed over
n_min              fewest lists at which p can reach α = 1 − confidence level (5 at 95%)
flag               why the row cannot be read as significant (too few lists; no correlation);
                   '' otherwise
=================  ===========================================================================

The correlations and their p-values are those of every correlation in weatkit
(:func:`weatkit.stats.correlation.correlate_pair`): the p-value is a permutation test of
independence (Pitman 1937), exact over all n! re-pairings of the lists up to 8 lists, else
9,999 seeded pairings (Phipson & Smyth 2010), never the asymptotic t approximation (which gives
p = 0 for a perfect order of 3 lists, whose exact p is 2/6). With n < 3 or a constant x or y,
every statistic is NaN and ``flag`` says why.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from weatkit._io.textfile import decode
from weatkit.embeddings.loader_utils import reading
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest
from weatkit.stats.correlation import pearson_spearman

#: Join keys of the ``results`` and counts tables.
KEYS = ["lang", "list_set", "list_id", "test"]
COUNT_COLUMNS = [*KEYS, "count_a", "count_b", "count_difference", "counts_source"]
ASYMMETRY_COLUMNS = [
    "embeddings",
    *KEYS,
    "effect_size",
    "count_a",
    "count_b",
    "count_difference",
    "counts_source",
]
CORRELATION_COLUMNS = [
    "embeddings",
    "test",
    "list_sets",
    "n",
    "pearson_r",
    "pearson_p",
    "spearman_rho",
    "spearman_p",
    "r2",
    "slope",
    "intercept",
    "permutation_method",
    "n_permutations",
    "n_min",
    "flag",
]
WORDFREQ = "wordfreq"
#: A corpus path template, a mapping language -> corpus path, or ``"wordfreq"``.
CountSource = str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]]

#: wordfreq lists accepted for a language whose own code differs (same language, other code).
_WORDFREQ_ALIASES = {"hr": "sh", "sr": "sh", "bs": "sh", "no": "nb"}

#: f(w) of every item :func:`wordfreq_counts` has looked up, per wordfreq list, for the process:
#: wordfreq's own cache empties itself at 100,000 lookups, which a grid's null candidates (20,000
#: words per language and space) reach again and again, and each lookup tokenises anew.
_WORDFREQ_SEEN: dict[str, dict[str, float]] = {}

# ---------------------------------------------------------------------------------------------
# counting in a corpus


@cache
def _punctuation() -> str:
    """Every character of Unicode category P* (punctuation)."""
    chars = (chr(c) for c in range(sys.maxunicode + 1))
    return "".join(ch for ch in chars if unicodedata.category(ch).startswith("P"))


def tokenize(text: str, *, lower: bool = True) -> list[str]:
    """Tokens of ``text`` as :func:`count_items` sees them.

    ``str.lower`` (when ``lower``), Unicode NFC, split on whitespace (``str.split``), then every
    character of Unicode category P* (punctuation: ``.,;:!?"'()[]{}«»„“”¿¡-–—_`` ...) is
    stripped from both ends of each token; tokens made only of punctuation disappear. Inner
    punctuation stays (``l'amore``, ``tear-gas``, ``new_york`` are one token each).
    """
    text = unicodedata.normalize("NFC", text.lower() if lower else text)
    punctuation = _punctuation()
    tokens = [w if w.isalnum() else w.strip(punctuation) for w in text.split()]
    return [w for w in tokens if w] if "" in tokens else tokens


def _phrase(item: str, lower: bool) -> tuple[str, ...]:
    """An item as a token sequence: ``_`` and spaces separate words (phrase-joined items)."""
    return tuple(tokenize(item.replace("_", " "), lower=lower))


def _count_line(
    tokens: list[str],
    index: Mapping[str, list[tuple[str, ...]]],
    counts: dict[tuple[str, ...], int],
) -> None:
    """Add the occurrences of every indexed phrase in one line's tokens to ``counts``."""
    if index.keys().isdisjoint(tokens):
        return
    for i, token in enumerate(tokens):
        for phrase in index.get(token, ()):
            if len(phrase) == 1 or tuple(tokens[i : i + len(phrase)]) == phrase:
                counts[phrase] += 1


def count_items(
    items: Iterable[str], corpus: str | os.PathLike[str], *, lower: bool = True
) -> dict[str, int]:
    """Occurrences of each item in a corpus, in one streamed pass over its lines.

    The corpus is UTF-8 text, plain or ``.gz``/``.bz2``/``.xz`` (decompressed on the fly), read
    line by line and tokenised by :func:`tokenize` (whitespace, edge punctuation stripped,
    lower-cased when ``lower``); items are tokenised the same way after replacing ``_`` with a
    space. An item of k tokens is counted at every position of a line where its k tokens follow
    each other (phrases do not cross lines; overlapping occurrences all count), so
    c(w) = Σ_lines #{i : tokens[i : i+k] = tokens(w)}. An item with no token counts 0.

    Returns:
        ``{item: count}`` for every distinct item given.

    Raises:
        WeatkitError: the corpus is missing, unreadable, corrupt or not UTF-8 (naming the line).
    """
    phrases = {item: _phrase(item, lower) for item in items}
    index: dict[str, list[tuple[str, ...]]] = {}
    for phrase in set(phrases.values()) - {()}:
        index.setdefault(phrase[0], []).append(phrase)
    counts: dict[tuple[str, ...], int] = dict.fromkeys(phrases.values(), 0)
    path = Path(corpus).expanduser()
    if not path.is_file():
        raise WeatkitError(f"corpus not found: {path}")
    with reading(path) as lines:
        for number, raw in enumerate(lines, start=1):
            text = decode(raw, f"corpus {path}, line {number}")
            _count_line(tokenize(text, lower=lower), index, counts)
    return {item: counts[phrase] for item, phrase in phrases.items()}


# ---------------------------------------------------------------------------------------------
# wordfreq proxy


@cache
def wordfreq_language(lang: str) -> str:
    """The wordfreq list for ``lang``: the same language, possibly under another code
    (``pt-BR`` -> ``pt``, ``hr`` -> ``sh`` Serbo-Croatian, ``no`` -> ``nb``).

    Unlike wordfreq's own nearest match, a different language is never used (wordfreq would
    answer ``lb`` with German and ``ps`` with English).

    Raises:
        WeatkitError: wordfreq has no list for the language; the message lists those it has.
    """
    import langcodes
    import wordfreq

    available = sorted(wordfreq.available_languages())
    try:
        base = langcodes.Language.get(langcodes.standardize_tag(lang)).language or ""
        best, _ = langcodes.closest_match(lang, available, max_distance=60)
    except ValueError:
        base, best = "", "und"
    if best not in (base, _WORDFREQ_ALIASES.get(base)):
        raise WeatkitError(
            f"wordfreq has no word list for language {lang!r}; available: {', '.join(available)} "
            "(or count in a corpus with --corpus)"
        )
    return best


def wordfreq_counts(items: Iterable[str], lang: str) -> dict[str, float]:
    """Frequency of each item per million words, from the ``wordfreq`` package.

    f(w) = 10⁶ · ``wordfreq.word_frequency(w, L)`` (L = :func:`wordfreq_language`, wordlist
    ``best``): occurrences per million words of wordfreq's mix of Wikipedia, subtitles, news,
    books, web and social-media text, a proxy for the embeddings' training corpus (expected
    count in a corpus of N words = f(w) · N / 10⁶). ``_`` is read as a space; wordfreq tokenises
    and case-folds the item itself and combines the tokens of a phrase as
    1/f = Σ 1/f(token) (0 when one token is unknown). Unknown words count 0.

    Raises:
        WeatkitError: no wordfreq list for the language, or its tokenizer needs a package that is
            not installed (jieba for Chinese, MeCab for Japanese and Korean).
    """
    import wordfreq

    code = wordfreq_language(lang)
    known = _WORDFREQ_SEEN.setdefault(code, {})
    out: dict[str, float] = {}
    try:
        for w in items:
            f = known.get(w)
            if f is None:
                f = known[w] = 1e6 * wordfreq.word_frequency(w.replace("_", " "), code)
            out[w] = f
    except ImportError as err:
        raise WeatkitError(
            f"wordfreq needs the package {err.name or err} to tokenise {lang!r} (install "
            "wordfreq's cjk extra), or count in a corpus with --corpus"
        ) from None
    return out


# ---------------------------------------------------------------------------------------------
# tables


def corpus_for(source: CountSource, lang: str, n_langs: int) -> str:
    """The corpus path of ``lang``: a mapping entry, or a path with ``{lang}`` filled in.

    A path without ``{lang}`` is accepted for a single language only.
    """
    if isinstance(source, Mapping):
        if lang not in source:
            have = ", ".join(sorted(source)) or "none"
            raise WeatkitError(f"no corpus for language {lang!r} (corpora given for: {have})")
        return os.fspath(source[lang])
    template = os.fspath(source)
    if "{lang}" not in template and n_langs > 1:
        raise WeatkitError(
            f"corpus {template!r} has no {{lang}} but the tests have {n_langs} languages: "
            "use a path with {lang} or one LANG=PATH per language"
        )
    return template.replace("{lang}", lang)


def _language_counts(
    items: set[str], lang: str, source: CountSource, n_langs: int, lower: bool
) -> tuple[Mapping[str, float], str]:
    """Counts of one language's items and the ``counts_source`` label."""
    if isinstance(source, str) and source == WORDFREQ:
        label = f"wordfreq:{wordfreq_language(lang)} (per million words)"
        return wordfreq_counts(items, lang), label
    path = corpus_for(source, lang, n_langs)
    return count_items(items, path, lower=lower), f"corpus:{path}"


def attribute_counts(
    tests: Sequence[AssociationTest], counter: CountSource = WORDFREQ, *, lower: bool = True
) -> pd.DataFrame:
    """count(A), count(B) and count(A) − count(B) of every test (columns: :data:`COUNT_COLUMNS`).

    count(S) = Σ_{w ∈ S} c(w) over the distinct items of S, c from ``counter``: ``"wordfreq"``
    (:func:`wordfreq_counts`), a corpus path with ``{lang}``, or a mapping language -> corpus
    (:func:`count_items`, one pass per language for all its tests; ``lower`` applies there).
    """
    by_lang: dict[str, set[str]] = {}
    for test in tests:
        by_lang.setdefault(test.lang, set()).update(test.A, test.B)
    counted = {
        lang: _language_counts(items, lang, counter, len(by_lang), lower)
        for lang, items in by_lang.items()
    }
    rows = []
    for test in tests:
        counts, label = counted[test.lang]
        count_a = sum(counts[w] for w in set(test.A))
        count_b = sum(counts[w] for w in set(test.B))
        keys = (test.lang, test.list_set, test.list_id, test.test)
        rows.append((*keys, count_a, count_b, count_a - count_b, label))
    return pd.DataFrame(rows, columns=COUNT_COLUMNS)


def asymmetry_table(results: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """The ``results`` rows with the counts of their list (inner join on :data:`KEYS`).

    Raises:
        WeatkitError: a table lacks a column, or no result row has counts.
    """
    for name, table, needed in (
        ("results", results, ["embeddings", *KEYS, "effect_size"]),
        ("counts", counts, COUNT_COLUMNS),
    ):
        missing = [col for col in needed if col not in table.columns]
        if missing:
            raise WeatkitError(f"{name} table lacks column(s) {', '.join(missing)}")
    left = results[["embeddings", *KEYS, "effect_size"]].astype({k: str for k in KEYS})
    right = counts[COUNT_COLUMNS].astype({k: str for k in KEYS})
    try:
        table = left.merge(right, on=KEYS, how="inner", validate="many_to_one")
    except pd.errors.MergeError:
        raise WeatkitError("counts table has several rows for one list and test") from None
    if table.empty:
        raise WeatkitError("no result row matches a counted list (lang, list_set, list_id, test)")
    return table[ASYMMETRY_COLUMNS].reset_index(drop=True)


def _fit(
    x: np.ndarray, y: np.ndarray, confidence_level: float, seed: int
) -> dict[str, float | int | str]:
    """Pearson, Spearman (:func:`weatkit.stats.correlation.pearson_spearman`: permutation p) and
    the least-squares line of y on x; NaN with a ``flag`` when undefined."""
    out = pearson_spearman(x, y, confidence_level=confidence_level, seed=seed)
    if out["flag"] and np.isnan(out["pearson_r"]):
        return out | dict.fromkeys(("r2", "slope", "intercept"), np.nan)
    from scipy import stats  # imported when used: slow (the null's frequency source needs none)

    line = stats.linregress(x, y)
    return out | {
        "r2": float(line.rvalue**2),
        "slope": float(line.slope),
        "intercept": float(line.intercept),
    }


def asymmetry_correlations(
    table: pd.DataFrame, *, confidence_level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Effect size against count difference per embeddings × test, for each list set and for
    ``all`` of them together (columns: :data:`CORRELATION_COLUMNS`).

    p-values are permutation p-values (:func:`weatkit.stats.correlation.correlate_pair`:
    exact up to 8 lists, else 9,999 pairings drawn with ``seed``); ``n_min`` and ``flag`` are
    taken at α = 1 − ``confidence_level``.
    """
    rows = []
    data = table.dropna(subset=["effect_size", "count_difference"])
    for (embeddings, test), group in data.groupby(["embeddings", "test"], sort=False):
        parts = [*group.groupby("list_set", sort=False), ("all", group)]
        for list_sets, part in parts:
            x = part["count_difference"].to_numpy(dtype=float)
            y = part["effect_size"].to_numpy(dtype=float)
            rows.append(
                {"embeddings": embeddings, "test": test, "list_sets": list_sets, "n": len(part)}
                | _fit(x, y, confidence_level, seed)
            )
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)
