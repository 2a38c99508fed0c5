"""The StereoSet dataset and reference prediction files, read with one-line errors.

StereoSet (Nadeem et al., ACL 2021; ``stereoset/SOURCE.md`` of the data directory) has two
tasks. An *intrasentence* example is a context with a ``BLANK`` ("The chess player was BLANK.")
and three sentences filling it with a stereotypical, an anti-stereotypical and an unrelated
word; an *intersentence* example is a context sentence followed by one of three such sentences.
Each example names a target term (``target``, e.g. "chess player") and a bias type (gender,
profession, race, religion).

Files (schema of StereoSet's ``dev.json``, plain or ``.gz``)::

    {"version": ..., "data": {"intrasentence": [example, ...], "intersentence": [...]}}
    example  = {"id", "target", "bias_type", "context",
                "sentences": [{"id", "sentence", "gold_label", "labels", ["word"]}, ...]}

* ``en``: the StereoSet dev set, ``stereotypes-multi/derived/dev.json.gz`` (2,106 intra + 2,123
  inter examples; StereoSet's own copy is not in the data directory, see its ``SOURCE.md``);
* ``de``, ``fr``, ``es``, ``tr``: the translations of Öztürk et al.
  (``stereotypes-multi/derived/stereoset_<lang>.json.gz``), with ``target_original`` (the English
  target) on every example and ``word`` (the translated candidate word) on every intrasentence
  sentence. Per-term metrics group these by ``target_original``, as the multilingual reference
  (slds-lmu/stereotypes-multi ``code/evaluation.py``) does.

:attr:`Example.term` is ``target_original`` when the file has it, else ``target``. The candidate
word of an intrasentence sentence is its ``word`` when present, else derived as StereoSet's
``dataloader.py`` does: the index of the last word of ``context.split(" ")`` that contains
``BLANK``, the sentence's word at that index in ``sentence.split(" ")``, with ASCII punctuation
removed (``str.translate(str.maketrans("", "", string.punctuation))``).

Prediction files (StereoSet's ``predictions_*.json``, plain or ``.gz``) hold one score per
sentence, higher = more likely: ``{"intrasentence": [{"id", "score"}, ...], "intersentence":
[...]}``; either split may be absent.
"""

from __future__ import annotations

import functools
import json
import math
import os
import string
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from weatkit._io.textfile import read_text_or_gzip
from weatkit.data import fetch
from weatkit.errors import WeatkitError
from weatkit.stats.sampling import ItemSample, stratified_sample

#: Languages with a dataset in the data directory.
LANGS: tuple[str, ...] = ("en", "de", "fr", "es", "tr")
#: Language -> path in the data-directory layout.
DATASET_FILES: dict[str, str] = {
    "en": "stereotypes-multi/derived/dev.json.gz",
    **{lang: f"stereotypes-multi/derived/stereoset_{lang}.json.gz" for lang in LANGS[1:]},
}
SPLITS: tuple[str, ...] = ("intrasentence", "intersentence")
GOLD_LABELS: tuple[str, ...] = ("stereotype", "anti-stereotype", "unrelated")
#: The bias types of StereoSet, in the order of its evaluation.
BIAS_TYPES: tuple[str, ...] = ("gender", "profession", "race", "religion")
BLANK = "BLANK"

_PUNCTUATION = str.maketrans("", "", string.punctuation)


@dataclass(frozen=True)
class Sentence:
    """One candidate sentence.

    Attributes:
        id: the sentence id (the key of the prediction files).
        sentence: the text.
        gold_label: ``stereotype``, ``anti-stereotype`` or ``unrelated``.
        word: the word filling ``BLANK`` (intrasentence), None for intersentence sentences.
    """

    id: str
    sentence: str
    gold_label: str
    word: str | None = None


@dataclass(frozen=True)
class Example:
    """One example: a context, a target term and its three sentences.

    Attributes:
        id: the example id.
        target: the target term of the file (translated in the translations).
        term: what per-term metrics group by: ``target_original`` when the file has it (the
            English target of a translation), else ``target``.
        bias_type: gender, profession, race or religion.
        context: the context (intrasentence: with ``BLANK``).
        sentences: the three sentences, in file order, one per gold label.
    """

    id: str
    target: str
    term: str
    bias_type: str
    context: str
    sentences: tuple[Sentence, ...]

    def sentence(self, gold_label: str) -> Sentence:
        """The sentence with ``gold_label``."""
        for s in self.sentences:
            if s.gold_label == gold_label:
                return s
        raise KeyError(gold_label)


@dataclass(frozen=True)
class StereoSet:
    """The examples of both tasks.

    Attributes:
        intrasentence: fill-in-the-blank examples.
        intersentence: next-sentence examples.
        lang: the language (``en``, ``de``, ...; for a user file the ``lang`` it was loaded with).
        source: the file it was read from.
    """

    intrasentence: tuple[Example, ...]
    intersentence: tuple[Example, ...]
    lang: str = "en"
    source: str = ""

    def split(self, name: str) -> tuple[Example, ...]:
        """The examples of ``intrasentence`` or ``intersentence``."""
        if name not in SPLITS:
            raise WeatkitError(
                f"unknown StereoSet split {name!r}: choose one of {', '.join(SPLITS)}"
            )
        return self.intrasentence if name == "intrasentence" else self.intersentence

    def sentences(self, split: str | None = None) -> Iterator[tuple[Example, Sentence]]:
        """(example, sentence) pairs of one split (both splits by default), in file order."""
        for name in SPLITS if split is None else (split,):
            for example in self.split(name):
                for sentence in example.sentences:
                    yield example, sentence


# ------------------------------------------------------------------------------- dataset


def dataset_file(lang: str) -> Path:
    """The dataset file of ``lang``: from ``$WEATKIT_DATA``, the cache, or a checked download
    (:func:`weatkit.data.fetch`; the files are conversions, so a download needs a mirror)."""
    if lang not in DATASET_FILES:
        raise WeatkitError(f"unknown StereoSet language {lang!r}: choose one of {', '.join(LANGS)}")
    return fetch(DATASET_FILES[lang])


def load_stereoset(lang: str = "en", path: str | os.PathLike[str] | None = None) -> StereoSet:
    """The StereoSet examples of ``lang`` (see the module docstring), or of the file ``path``.

    Args:
        lang: ``en`` (dev set), ``de``, ``fr``, ``es`` or ``tr``; with ``path`` only a label.
        path: a dataset file in StereoSet's schema (``.json`` or ``.json.gz``).

    Raises:
        WeatkitError: naming the file (and example id) at fault: not JSON, a missing or
            mistyped field, an example without exactly one stereotype, anti-stereotype and
            unrelated sentence, an intrasentence context without ``BLANK``, repeated ids.
    """
    p = dataset_file(lang) if path is None else Path(path).expanduser()
    try:
        stat = p.stat()
    except OSError as err:
        read_text_or_gzip(p, "StereoSet dataset")  # raises the one-line error of a missing file
        raise WeatkitError(f"cannot read StereoSet dataset {p}: {err.strerror or err}") from None
    return _load(str(p), stat.st_mtime_ns, stat.st_size, lang)


def other_languages(dataset: StereoSet) -> dict[str, StereoSet]:
    """The data sets of the other languages of :data:`LANGS`, for a built-in ``dataset`` (none
    for a user's file): those whose file lies beside its file (data directory or cache), so
    that nothing is downloaded."""
    source = Path(dataset.source).as_posix()
    own = DATASET_FILES.get(dataset.lang)
    if own is None or not source.endswith("/" + own):
        return {}
    root = Path(source[: -len(own)])
    return {
        lang: load_stereoset(lang, root / relpath)
        for lang, relpath in DATASET_FILES.items()
        if lang != dataset.lang and (root / relpath).is_file()
    }


def sample_examples(
    dataset: StereoSet, limit: int | None, seed: int
) -> tuple[StereoSet, ItemSample | None]:
    """``dataset`` with a seeded sample of ``limit`` intrasentence examples (the split a model
    scores) stratified by bias type (:func:`weatkit.stats.sampling.stratified_sample`, ids the
    example ids), and its description; the dataset itself and None without ``limit`` or when
    there are no more examples than that. The intersentence split is kept as it is."""
    examples = dataset.intrasentence
    keep, sample = stratified_sample(
        [e.id for e in examples], [e.bias_type for e in examples], limit, seed,
        by="bias type", unit="examples",
    )  # fmt: skip
    if sample is None:
        return dataset, None
    return replace(dataset, intrasentence=tuple(examples[i] for i in keep)), sample


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int, lang: str) -> StereoSet:
    obj = _parse_json(read_text_or_gzip(path, "StereoSet dataset"), path)
    if not isinstance(obj, dict) or not isinstance(obj.get("data"), dict):
        raise WeatkitError(f'{path}: expected a JSON object with "data": {{"intrasentence": ...}}')
    data = obj["data"]
    if not any(name in data for name in SPLITS):
        raise WeatkitError(f'{path}: "data" has neither "intrasentence" nor "intersentence"')
    splits: dict[str, tuple[Example, ...]] = {}
    seen_examples: set[str] = set()
    seen_sentences: set[str] = set()
    for name in SPLITS:
        items = data.get(name, [])
        if not isinstance(items, list):
            raise WeatkitError(f'{path}: "{name}" must be a list of examples')
        examples = []
        for i, item in enumerate(items):
            example = _example(item, name, path, i)
            if example.id in seen_examples:
                raise WeatkitError(f"{path}: example id {example.id} appears more than once")
            seen_examples.add(example.id)
            for s in example.sentences:
                if s.id in seen_sentences:
                    raise WeatkitError(
                        f"{path}: example {example.id}: sentence id {s.id} appears more than once"
                    )
                seen_sentences.add(s.id)
            examples.append(example)
        splits[name] = tuple(examples)
    return StereoSet(splits["intrasentence"], splits["intersentence"], lang=lang, source=path)


def _example(item: Any, split: str, path: str, index: int) -> Example:
    if not isinstance(item, dict):
        raise WeatkitError(f"{path}: {split}[{index}] is not an object")
    label = item.get("id")
    where = f"{path}: {split} example {label if isinstance(label, str) else f'#{index + 1}'}"
    ex_id = _text(item, "id", where)
    target = _text(item, "target", where)
    term = _text(item, "target_original", where) if "target_original" in item else target
    bias_type = _text(item, "bias_type", where)
    context = _text(item, "context", where)
    raw = item.get("sentences")
    if not isinstance(raw, list):
        raise WeatkitError(f"{where}: missing or invalid 'sentences' (a list of 3 sentences)")
    labels = []
    sentences = []
    for j, s in enumerate(raw):
        if not isinstance(s, dict):
            raise WeatkitError(f"{where}: sentence {j + 1} is not an object")
        label = s.get("id")
        s_where = f"{where}: sentence {label if isinstance(label, str) else f'#{j + 1}'}"
        gold = _text(s, "gold_label", s_where)
        labels.append(gold)
        text = _text(s, "sentence", s_where)
        word = None
        if split == "intrasentence":
            word = _text(s, "word", s_where) if "word" in s else template_word(context, text, where)
        sentences.append(Sentence(_text(s, "id", s_where), text, gold, word))
    if sorted(labels) != sorted(GOLD_LABELS):
        found = ", ".join(labels) or "none"
        raise WeatkitError(
            f"{where}: needs exactly one stereotype, anti-stereotype and unrelated sentence; "
            f"found {found}"
        )
    if split == "intrasentence" and BLANK not in context:
        raise WeatkitError(f"{where}: the context has no {BLANK}: {context!r}")
    return Example(ex_id, target, term, bias_type, context, tuple(sentences))


def _text(obj: dict, key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        what = "missing" if value is None else f"not text ({type(value).__name__})"
        raise WeatkitError(f"{where}: {key!r} is {what}")
    return value


def template_word(context: str, sentence: str, where: str = "") -> str:
    """The candidate word of an intrasentence sentence, as StereoSet's ``dataloader.py``: the word
    of ``sentence.split(" ")`` at the index of the last word of ``context.split(" ")`` that
    contains ``BLANK``, ASCII punctuation removed."""
    index = None
    for i, word in enumerate(context.split(" ")):
        if BLANK in word:
            index = i
    prefix = f"{where}: " if where else ""
    if index is None:
        raise WeatkitError(f"{prefix}the context has no {BLANK}: {context!r}")
    words = sentence.split(" ")
    if index >= len(words):
        raise WeatkitError(
            f"{prefix}sentence {sentence!r} has no word {index + 1} (the {BLANK} of the context)"
        )
    return words[index].translate(_PUNCTUATION)


# --------------------------------------------------------------------------- predictions


def read_predictions(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """A StereoSet predictions file as ``{split: {sentence_id: score}}``.

    The file is ``{"intrasentence": [{"id": ..., "score": ...}, ...], "intersentence": [...]}``
    (plain JSON or ``.gz``); either split may be absent, other top-level keys are ignored and
    entries may carry other keys. Scores are JSON numbers (``Infinity`` allowed, not ``NaN``).

    Raises:
        WeatkitError: naming the file and entry: not JSON (with the line), no split, an entry
            without a text ``id`` or a numeric ``score``, an id given twice.
    """
    name = str(path)
    obj = _parse_json(read_text_or_gzip(path, "predictions file"), name)
    if not isinstance(obj, dict):
        raise WeatkitError(
            f'{name}: expected a JSON object {{"intrasentence": [{{"id", "score"}}, ...], ...}}'
        )
    present = [s for s in SPLITS if s in obj]
    if not present:
        raise WeatkitError(f'{name}: has neither "intrasentence" nor "intersentence" predictions')
    out: dict[str, dict[str, float]] = {}
    where_seen: dict[str, str] = {}
    for split in present:
        entries = obj[split]
        if not isinstance(entries, list):
            raise WeatkitError(f'{name}: "{split}" must be a list of {{"id", "score"}} objects')
        scores: dict[str, float] = {}
        for i, entry in enumerate(entries):
            where = f"{name}: {split}[{i}]"
            if not isinstance(entry, dict):
                raise WeatkitError(f'{where}: expected an object {{"id", "score"}}')
            sid = entry.get("id")
            if not isinstance(sid, str) or not sid:
                raise WeatkitError(f"{where}: missing or invalid 'id' (a sentence id string)")
            if sid in where_seen:
                raise WeatkitError(f"{where}: id {sid} appears twice (also at {where_seen[sid]})")
            scores[sid] = _score(entry, f"{where} (id {sid})")
            where_seen[sid] = f"{split}[{i}]"
        out[split] = scores
    return out


def _score(entry: dict, where: str) -> float:
    if "score" not in entry:
        raise WeatkitError(f"{where}: missing 'score'")
    value = entry["score"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WeatkitError(f"{where}: 'score' must be a number, got {_short(value)}")
    try:
        score = float(value)
    except OverflowError:
        raise WeatkitError(f"{where}: 'score' {_short(value)} is too large") from None
    if math.isnan(score):
        raise WeatkitError(f"{where}: 'score' is NaN")
    return score


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _parse_json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise WeatkitError(
            f"{name}: line {err.lineno} column {err.colno}: not valid JSON ({err.msg})"
        ) from None
    except ValueError as err:  # e.g. an integer with more digits than Python converts
        raise WeatkitError(f"{name}: not valid JSON ({err})") from None
    except RecursionError:
        raise WeatkitError(f"{name}: not valid JSON (nested too deeply)") from None
