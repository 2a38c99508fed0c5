"""The contexts of CEAT: where each list word occurs in a corpus, at most N per word.

A corpus is read as a stream of texts (one context unit each):

* a text file: one sentence or document per line (``.gz`` read as gzip);
* a JSON Lines file (``.jsonl``, ``.jsonl.gz``): one object per line, the text under
  ``text_field`` (default ``text``);
* ``hf:NAME_OR_PATH``: a Hugging Face ``datasets`` dataset, streamed (``split``, default
  ``train``; ``hf:NAME:CONFIG`` picks a configuration; a local folder written by
  ``Dataset.save_to_disk`` is read with ``load_from_disk``), the text under ``text_field``.

Texts are NFC-normalised. A word occurs where its text (NFC) matches as a **whole word**: the
character before the match and the one after it are not word characters (``\\w``: letters and
digits of every script, and ``_``), except characters of the scripts written without spaces
(Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar), which never end a word: a Chinese or
Japanese item is found inside a sentence, a Latin item next to a Han character. So ``he`` is
found in "he said" and "(he)" but not in "she" or "the"; ``Grün`` in "Grün-Weiß"; an apostrophe
or hyphen ends a word ("he's" holds ``he``). ``ignore_case`` matches case-insensitively (Python's
``re.IGNORECASE``: simple Unicode case folding). Each occurrence is one context (a text with
two occurrences gives two, with different spans).

At most ``max_contexts`` contexts are kept per word, sampled uniformly from all its occurrences
while streaming (reservoir sampling, Vitter's Algorithm R: the k-th occurrence, k ≥ N, replaces
a kept one at random with probability N / (k + 1)), from ``numpy.random.default_rng([seed,
h(word)])``, ``h`` the first 8 bytes of the word's SHA-256: a word's sample depends only on the
seed, the word and the corpus, not on the other words asked for. ``window`` keeps only that
many whitespace-separated words on each side of the occurrence (CEAT's BERT script keeps about
four).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from weatkit.errors import DataError, WeatkitError

#: Scripts written without spaces between words: their characters never end a word.
_CONTINUOUS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
)
_WORD_CHAR = rf"(?![{_CONTINUOUS}])\w"  # a word character that ends a word
_IS_CONTINUOUS = re.compile(rf"[{_CONTINUOUS}]")
HF_PREFIX = "hf:"


@dataclass(frozen=True)
class Context:
    """One occurrence of a word: ``text[start:end]`` is the word; ``where`` names its line or
    record (``corpus.txt:12``)."""

    text: str
    start: int
    end: int
    where: str


@dataclass
class ContextSample:
    """The contexts kept per word and how many occurrences each word has in the corpus.

    Attributes:
        contexts: word -> its kept contexts (at most ``max_contexts``; in corpus order while
            fewer than ``max_contexts`` occurrences were met, in reservoir order after).
        found: word -> occurrences in the corpus (before the cap).
        n_texts: texts read.
        corpus: the corpus as given.
    """

    contexts: dict[str, list[Context]]
    found: dict[str, int]
    n_texts: int
    corpus: str

    def counts(self) -> dict[str, int]:
        """word -> contexts kept."""
        return {w: len(c) for w, c in self.contexts.items()}


def word_pattern(word: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """The regular expression of ``word`` as a whole word (module docstring)."""
    word = unicodedata.normalize("NFC", word)
    if not word.strip():
        raise WeatkitError(f"cannot look for an empty word {word!r} in a corpus")
    before = "" if _IS_CONTINUOUS.match(word[0]) else rf"(?<!{_WORD_CHAR})"
    after = "" if _IS_CONTINUOUS.match(word[-1]) else rf"(?!{_WORD_CHAR})"
    return re.compile(before + re.escape(word) + after, re.IGNORECASE if ignore_case else 0)


def find_contexts(
    corpus: str | os.PathLike[str],
    words: Iterable[str],
    *,
    max_contexts: int = 1000,
    seed: int = 0,
    ignore_case: bool = False,
    window: int | None = None,
    text_field: str = "text",
    split: str = "train",
) -> ContextSample:
    """Stream ``corpus`` once and sample at most ``max_contexts`` contexts of each word.

    Raises:
        DataError: a corpus that is missing, empty, not UTF-8, a JSON line that is not an object
            with a text under ``text_field`` (naming the file and line), a dataset that cannot
            be loaded or has no ``text_field``.
        WeatkitError: ``max_contexts`` < 1 or ``window`` < 0.
    """
    if max_contexts < 1:
        raise WeatkitError(f"contexts per word must be >= 1, not {max_contexts}")
    if window is not None and window < 0:
        raise WeatkitError(f"the context window must be >= 0 words, not {window}")
    wanted = list(dict.fromkeys(words))
    patterns = {w: word_pattern(w, ignore_case=ignore_case) for w in wanted}
    flags = re.IGNORECASE if ignore_case else 0
    longest_first = sorted({unicodedata.normalize("NFC", w) for w in wanted}, key=len, reverse=True)
    any_word = re.compile("|".join(re.escape(w) for w in longest_first), flags)
    kept: dict[str, list[Context]] = {w: [] for w in wanted}
    found = dict.fromkeys(wanted, 0)
    rngs = {w: np.random.default_rng([int(seed), _word_hash(w)]) for w in wanted}
    n_texts = 0
    for where, raw in _texts(str(corpus), text_field=text_field, split=split):
        n_texts += 1
        text = unicodedata.normalize("NFC", raw)
        if not any_word.search(text):
            continue
        for word, pattern in patterns.items():
            for match in pattern.finditer(text):
                k = found[word]
                found[word] = k + 1
                slot = k if k < max_contexts else int(rngs[word].integers(0, k + 1))
                if slot < max_contexts:
                    ctx = _windowed(text, match.start(), match.end(), window, where)
                    if slot == len(kept[word]):
                        kept[word].append(ctx)
                    else:
                        kept[word][slot] = ctx
    if n_texts == 0:
        raise DataError(f"corpus {corpus}: empty (no text to look for words in)")
    return ContextSample(kept, found, n_texts, str(corpus))


def _word_hash(word: str) -> int:
    return int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")


def _windowed(text: str, start: int, end: int, window: int | None, where: str) -> Context:
    """The context, cut to ``window`` whitespace-separated words on each side of the ones the
    occurrence touches (the spacing between the words kept is the text's)."""
    if window is None:
        return Context(text, start, end, where)
    tokens = [m.span() for m in re.finditer(r"\S+", text)]
    touched = [i for i, (a, b) in enumerate(tokens) if a < end and b > start]
    lo = tokens[max(0, touched[0] - window)][0]
    hi = tokens[min(len(tokens) - 1, touched[-1] + window)][1]
    return Context(text[lo:hi], start - lo, end - lo, where)


# -- reading a corpus -------------------------------------------------------------------------


def _texts(corpus: str, *, text_field: str, split: str) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of every line or record of ``corpus``."""
    if corpus.startswith(HF_PREFIX):
        yield from _dataset_texts(corpus[len(HF_PREFIX) :], text_field=text_field, split=split)
        return
    path = Path(corpus)
    if not path.is_file():
        raise DataError(f"corpus {corpus}: no such file")
    name = path.name.lower().removesuffix(".gz")
    jsonl = name.endswith(".jsonl")
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as fh:
        for number, line in enumerate(fh, start=1):
            where = f"{corpus}:{number}"
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataError(f"{where}: not UTF-8 ({err.reason} at byte {err.start})") from None
            if number == 1:
                text = text.removeprefix("\ufeff")
            if not text.strip():
                continue
            yield where, _json_text(text, text_field, where) if jsonl else text.rstrip("\r\n")


def _json_text(line: str, text_field: str, where: str) -> str:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise DataError(f"{where}: not JSON ({err.msg})") from None
    if not isinstance(record, dict) or text_field not in record:
        raise DataError(f"{where}: no field {text_field!r} (give the text field with --text-field)")
    value = record[text_field]
    if not isinstance(value, str):
        raise DataError(f"{where}: field {text_field!r} is not text: {value!r}"[:200])
    return value


def _dataset_texts(spec: str, *, text_field: str, split: str) -> Iterator[tuple[str, str]]:
    """The texts of a Hugging Face dataset, streamed (a ``save_to_disk`` folder: memory-mapped)."""
    try:
        import datasets
    except ModuleNotFoundError:
        raise WeatkitError(
            "hf: corpora need the datasets library: pip install 'weatkit[corpus]'"
        ) from None
    name, _, config = spec.partition(":") if not Path(spec).exists() else (spec, "", "")
    try:
        if (Path(name) / "state.json").is_file() or (Path(name) / "dataset_dict.json").is_file():
            data = datasets.load_from_disk(name)
            if isinstance(data, datasets.DatasetDict):
                data = data[split]
        else:
            data = datasets.load_dataset(name, config or None, split=split, streaming=True)
        columns = data.column_names
    except Exception as err:  # datasets raises many kinds; one line naming the dataset
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataError(f"corpus hf:{spec}: cannot be loaded ({message})") from None
    if columns is not None and text_field not in columns:
        raise DataError(
            f"corpus hf:{spec}: no column {text_field!r} (it has {', '.join(columns)}; give "
            "--text-field)"
        )
    for index, record in enumerate(data):
        value = record.get(text_field)
        if isinstance(value, str) and value.strip():
            yield f"hf:{spec}:{index}", value
