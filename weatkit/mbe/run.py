"""The whole MBE pipeline from Python: corpus → gendered sentences → tokens → :class:`MbeRun`.

Kaneko et al. (2022), §3–4, as ``weatkit mbe`` runs it:

1. text inputs: the target sentences whose English side has words of one gender list only
   (:func:`~weatkit.mbe.data.gendered_indices`), tokenised; those that give no token are
   skipped (:func:`sentences_from_parallel`). The reference token-id sets are already split
   (:func:`sentences_from_set`);
2. sentences longer than the model takes are skipped (or an error, ``skip_long=False``);
3. both sides are down-sampled to equal size (and to ``max_sentences``) with ``seed``
   (:func:`~weatkit.mbe.data.downsample`); with ``limit`` a seeded sample of that many
   sentences stratified by gender is kept (:func:`sample_sentences`);
4. :func:`~weatkit.mbe.score.evaluate_mbe` scores them.

A causal LM (``method="mean-ll"``, the model a :class:`~weatkit.scoring.base.Scorer`) scores the
target texts as they are: its backend tokenises them, so Step 1 keeps every non-empty target
sentence, Step 2 is the backend's (a sentence longer than the model takes is an error), and the
token-id sets, which have no texts, are not for it.

Steps 2–4 are :func:`run_mbe`. :func:`run_mbe_parallel` (a TSV file or an ``(english, target)``
pair of files) and :func:`run_mbe_set` (a shipped set) do everything.

Everything the user should know (selection counts, skipped and down-sampled sentences, an
unstable score) is a *note*: appended to ``notes`` and passed to ``on_note`` as it happens (the
CLI passes its ``note`` printer, so notes appear before a later error or progress bar).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.mbe.data import (
    check_tokenizer,
    downsample,
    gendered_indices,
    load_gender_words,
    load_mbe_set,
    read_parallel_texts,
    read_parallel_tsv,
)
from weatkit.mbe.score import MbeResult, Method, Weight, evaluate_mbe
from weatkit.scoring.base import Scorer
from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence
from weatkit.stats.sampling import ItemSample, stratified_sample

PathLike = str | os.PathLike[str]
#: A masked LM, or the Scorer of a causal LM (``method="mean-ll"``).
LanguageModel = MaskedLM | Scorer
#: Called with each note as it is made (e.g. a printer).
NoteHook = Callable[[str], None]


@dataclass(frozen=True)
class MbeSentence:
    """One sentence to score.

    Attributes:
        tokens: the target sentence, tokenised (special tokens included); None for a causal LM,
            whose backend tokenises ``target`` itself.
        english: its English side ("" for the token-id sets).
        target: its target-language text, stripped ("" for the token-id sets).
    """

    tokens: TokenizedSentence | None
    english: str = ""
    target: str = ""


@dataclass
class MbeRun:
    """One MBE run: the result and what led to it.

    Attributes:
        result: the score and its McNemar test.
        sentences: one row per scored sentence (:func:`~weatkit.mbe.score.evaluate_mbe`'s
            columns), plus ``english`` and ``target`` when the sentences carry texts.
        data: the input, as the CLI names it (``"path.tsv"``, ``"a.en + a.de"``,
            ``"mbe:de/news"``).
        n_long: sentences skipped for being longer than the model takes.
        notes: the notes of the run, in order (the lines ``weatkit mbe`` prints as ``note:``).
        embedding: the sentence embeddings of the weights C(T_m, T_f), one row per row of
            ``sentences`` (e.g. for a bootstrap of the score without scoring again).
        sample: with ``limit``, the sample of sentences scored
            (:class:`~weatkit.stats.sampling.ItemSample`), else None.
    """

    result: MbeResult
    sentences: pd.DataFrame
    data: str
    n_long: int = 0
    notes: list[str] = field(default_factory=list)
    embedding: np.ndarray | None = field(default=None, repr=False)
    sample: ItemSample | None = None

    def summary(self, model: str) -> pd.DataFrame:
        """The one-row summary ``weatkit mbe`` writes as ``summary.csv``.

        Columns: ``model``, ``data``, the :class:`~weatkit.mbe.score.MbeResult` fields and
        ``n_skipped_long``.
        """
        summary = self.result.to_frame()
        summary.insert(0, "data", self.data)
        summary.insert(0, "model", model)
        summary["n_skipped_long"] = self.n_long
        return summary


class _Notes:
    """Appends each note to a list and passes it to a hook."""

    def __init__(self, notes: list[str] | None, on_note: NoteHook | None) -> None:
        self.lines = notes if notes is not None else []
        self._hook = on_note

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        if self._hook is not None:
            self._hook(line)


def _tokenized(
    lm: LanguageModel,
    english: Sequence[str],
    target: Sequence[str],
    indices: list[int],
    side: str,
    note: _Notes,
) -> list[MbeSentence]:
    """The target sentences at ``indices``, tokenised; those that give no token are skipped
    (a causal LM: the non-empty ones, untokenised)."""
    texts = [target[i].strip() for i in indices]
    if not isinstance(lm, MaskedLM):
        kept = [i for i, text in zip(indices, texts, strict=True) if text]
        if len(kept) < len(indices):
            note(f"{len(indices) - len(kept)} {side} sentence(s) skipped: empty")
        return [MbeSentence(None, english[i], target[i].strip()) for i in kept]
    pieces = lm.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    kept = [i for i, ids in zip(indices, pieces, strict=True) if len(ids) > 0]
    if len(kept) < len(indices):
        note(f"{len(indices) - len(kept)} {side} sentence(s) skipped: the tokenizer gives no token")
    tokens = lm.tokenize([target[i].strip() for i in kept])
    return [
        MbeSentence(t, english[i], target[i].strip()) for t, i in zip(tokens, kept, strict=True)
    ]


def sentences_from_parallel(
    lm: LanguageModel,
    english: Sequence[str],
    target: Sequence[str],
    male_words: Sequence[str],
    female_words: Sequence[str],
    *,
    name: str,
    notes: list[str] | None = None,
    on_note: NoteHook | None = None,
) -> tuple[list[MbeSentence], list[MbeSentence]]:
    """The male and female sentences of an aligned corpus, tokenised (MBE Step 1).

    A pair is male (female) when its English side has words of ``male_words``
    (``female_words``) only (:func:`~weatkit.mbe.data.gendered_indices`); target sentences that
    give no token are skipped.

    Args:
        lm: the masked LM whose tokenizer is used (or a causal LM's Scorer: the texts are kept
            as they are).
        english: English sentences.
        target: target-language sentences, aligned with ``english``.
        male_words: English male words (e.g. from :func:`~weatkit.mbe.data.load_gender_words`).
        female_words: English female words.
        name: the corpus in error messages.
        notes: appended to: the selection counts and skipped sentences.
        on_note: called with each note as it is made.

    Returns:
        ``(male, female)`` in corpus order, with their English and target texts.

    Raises:
        WeatkitError: no male or no female sentence.
    """
    note = _Notes(notes, on_note)
    male_idx, female_idx = gendered_indices(english, target, male_words, female_words)
    note(
        f"{len(english)} sentence pairs: {len(male_idx)} male, {len(female_idx)} female "
        "(English side with words of one list only)"
    )
    if not male_idx or not female_idx:
        raise WeatkitError(
            f"found {len(male_idx)} male and {len(female_idx)} female sentences in {name}; MBE "
            "needs at least one of each (check the word lists and which column is English)"
        )
    male = _tokenized(lm, english, target, male_idx, "male", note)
    female = _tokenized(lm, english, target, female_idx, "female", note)
    return male, female


def sentences_from_set(
    lm: LanguageModel, lang: str, corpus: str
) -> tuple[list[MbeSentence], list[MbeSentence]]:
    """The male and female sentences of a shipped token-id set (:data:`~weatkit.mbe.MBE_SETS`).

    Raises:
        WeatkitError: the set is unknown or absent (:func:`~weatkit.mbe.data.load_mbe_set`), or
            ``lm``'s tokenizer is not the one the set was made with
            (:func:`~weatkit.mbe.data.check_tokenizer`).
    """
    if not isinstance(lm, MaskedLM):
        raise WeatkitError(
            f"the MBE sets are token ids of masked LMs' tokenizers; {lm.spec} is a causal LM: "
            "give --parallel or --english/--target"
        )
    male_ids, female_ids = load_mbe_set(lang, corpus)
    check_tokenizer(lm.tokenizer, [male_ids, female_ids], lang)
    male = [MbeSentence(TokenizedSentence.from_ids(ids)) for ids in male_ids]
    female = [MbeSentence(TokenizedSentence.from_ids(ids)) for ids in female_ids]
    return male, female


def _drop_long(
    lm: LanguageModel,
    male: list[MbeSentence],
    female: list[MbeSentence],
    skip: bool,
    note: _Notes,
) -> tuple[list[MbeSentence], list[MbeSentence], int]:
    """Both sides without the sentences longer than the model takes, and how many were left out
    (a causal LM's backend checks the lengths itself)."""
    if not isinstance(lm, MaskedLM):
        return male, female, 0
    limit = lm.max_length
    if limit is None:
        return male, female, 0
    if not skip:
        lm.check_lengths([s.tokens for s in male], "male sentence")
        lm.check_lengths([s.tokens for s in female], "female sentence")
        return male, female, 0
    short_m = [s for s in male if len(s.tokens.ids) <= limit]
    short_f = [s for s in female if len(s.tokens.ids) <= limit]
    n_long = len(male) + len(female) - len(short_m) - len(short_f)
    if n_long:
        note(
            f"{n_long} sentence(s) longer than {limit} tokens skipped "
            f"({len(male) - len(short_m)} male, {len(female) - len(short_f)} female)"
        )
    return short_m, short_f, n_long


def sample_sentences(
    male: Sequence[MbeSentence], female: Sequence[MbeSentence], limit: int | None, seed: int
) -> tuple[list[MbeSentence], list[MbeSentence], ItemSample | None]:
    """A seeded sample of ``limit`` of the male and female sentences stratified by gender
    (:func:`weatkit.stats.sampling.stratified_sample`; an item's id is its side and position,
    ``male:3``), and its description; both sides whole and None without ``limit`` or when
    there are no more sentences than that. Each side keeps at least one sentence (MBE compares
    pairs of a male and a female sentence)."""
    sides = [("male", s) for s in male] + [("female", s) for s in female]
    ids = [f"male:{i}" for i in range(len(male))] + [f"female:{i}" for i in range(len(female))]
    keep, sample = stratified_sample(
        ids, [side for side, _ in sides], limit, seed, by="gender", unit="sentences", least=1
    )
    chosen = [sides[i] for i in keep]
    return (
        [s for side, s in chosen if side == "male"],
        [s for side, s in chosen if side == "female"],
        sample,
    )


def run_mbe(
    lm: LanguageModel,
    male: Sequence[MbeSentence],
    female: Sequence[MbeSentence],
    *,
    data: str,
    method: Method | str = "aula",
    weight: Weight | str = "cosine",
    seed: int = 0,
    max_sentences: int | None = None,
    skip_long: bool = True,
    show_progress: bool | None = None,
    notes: list[str] | None = None,
    on_note: NoteHook | None = None,
    limit: int | None = None,
) -> MbeRun:
    """MBE of ``lm`` on male and female sentences (Steps 2–4 of the module docstring).

    Args:
        lm: the masked LM, or a causal LM's Scorer (``method="mean-ll"``).
        male: the male sentences (:func:`sentences_from_parallel`, :func:`sentences_from_set`).
        female: the female sentences.
        data: the input's name, kept in :attr:`MbeRun.data`.
        method: sentence likelihood, ``"aula"`` (paper) or ``"aul"``; a causal LM:
            ``"mean-ll"``.
        weight: pair weight, ``"cosine"`` (paper) or ``"dot"`` (reference ``eval.py``).
        seed: seed of the down-sampling and of McNemar's random indicator.
        max_sentences: keep at most this many sentences per side (after equalising).
        skip_long: skip sentences longer than the model takes; False: raise instead.
        show_progress: progress bar (None: on a terminal).
        notes: the run's notes are appended to this list (which becomes
            :attr:`MbeRun.notes`); a new list if None.
        on_note: called with each note as it is made.
        limit: score a sample of this many sentences (both sides together) stratified by
            gender, drawn with ``seed`` after the down-sampling (:func:`sample_sentences`).

    Returns:
        The :class:`MbeRun`; ``sentences`` has ``english`` and ``target`` columns when any
        sentence carries a text.

    Raises:
        WeatkitError: a sentence too long with ``skip_long=False``, no male or no female sentence
            left, a bad ``max_sentences``, ``method`` or ``weight``.
    """
    note = _Notes(notes, on_note)
    texts = any(s.english or s.target for s in (*male, *female))
    kept_m, kept_f, n_long = _drop_long(lm, list(male), list(female), skip_long, note)
    if not kept_m or not kept_f:
        raise WeatkitError(
            f"{len(kept_m)} male and {len(kept_f)} female sentences left after skipping those "
            "longer than the model takes; MBE needs at least one of each"
        )
    n_before = (len(kept_m), len(kept_f))
    kept_m, kept_f = downsample(kept_m, kept_f, seed, max_sentences)
    if (len(kept_m), len(kept_f)) != n_before:
        note(f"down-sampled {n_before[0]} male and {n_before[1]} female to {len(kept_m)} each")
    kept_m, kept_f, sample = sample_sentences(kept_m, kept_f, limit, seed)
    if sample is not None:
        note(f"scoring a {sample.describe()}")
    masked = isinstance(lm, MaskedLM)  # a causal LM's backend tokenises the texts itself
    result, sentences, embedding = evaluate_mbe(
        lm,
        [s.tokens if masked else s.target for s in kept_m],
        [s.tokens if masked else s.target for s in kept_f],
        method=method,
        weight=weight,
        seed=seed,
        show_progress=show_progress,
    )
    if texts:
        sentences["english"] = [s.english for s in (*kept_m, *kept_f)]
        sentences["target"] = [s.target for s in (*kept_m, *kept_f)]
    if not 0 <= result.score <= 100:
        note(
            f"the MBE score {result.score:.2f} is outside 0–100: some similarity weights are "
            "negative and the weighted mean is unstable; compare with --weight dot"
        )
    return MbeRun(result, sentences, data, n_long, note.lines, embedding, sample)


def run_mbe_parallel(
    lm: LanguageModel,
    corpus: PathLike | tuple[PathLike, PathLike],
    *,
    male_words: PathLike | None = None,
    female_words: PathLike | None = None,
    method: Method | str = "aula",
    weight: Weight | str = "cosine",
    seed: int = 0,
    max_sentences: int | None = None,
    skip_long: bool = True,
    show_progress: bool | None = None,
    notes: list[str] | None = None,
    on_note: NoteHook | None = None,
    limit: int | None = None,
) -> MbeRun:
    """MBE of ``lm`` on a parallel corpus: what ``weatkit mbe --parallel``/``--english`` runs.

    Args:
        lm: the masked LM.
        corpus: an ``English<TAB>target`` file (:func:`~weatkit.mbe.data.read_parallel_tsv`)
            or an ``(english, target)`` pair of aligned text files
            (:func:`~weatkit.mbe.data.read_parallel_texts`).
        male_words: English male words, one per line (default: GN-GloVe's list;
            :func:`~weatkit.mbe.data.load_gender_words`).
        female_words: likewise, female.
        method, weight, seed, max_sentences, skip_long, show_progress, notes, on_note, limit:
            as in :func:`run_mbe`.

    Returns:
        The :class:`MbeRun`; :attr:`MbeRun.data` is the file name or ``"english + target"``.

    Raises:
        WeatkitError: an unreadable corpus or word list, no male or no female sentence, and
            :func:`run_mbe`'s errors.
    """
    if isinstance(corpus, tuple):
        english_path, target_path = corpus
        english, target = read_parallel_texts(english_path, target_path)
        name = f"{english_path} + {target_path}"
    else:
        english, target = read_parallel_tsv(corpus)
        name = str(corpus)
    male_list, female_list = load_gender_words(male_words, female_words)
    lines = notes if notes is not None else []
    male, female = sentences_from_parallel(
        lm, english, target, male_list, female_list, name=name, notes=lines, on_note=on_note
    )
    return run_mbe(
        lm,
        male,
        female,
        data=name,
        method=method,
        weight=weight,
        seed=seed,
        max_sentences=max_sentences,
        skip_long=skip_long,
        show_progress=show_progress,
        notes=lines,
        on_note=on_note,
        limit=limit,
    )


def run_mbe_set(
    lm: LanguageModel,
    lang: str,
    corpus: str,
    *,
    method: Method | str = "aula",
    weight: Weight | str = "cosine",
    seed: int = 0,
    max_sentences: int | None = None,
    skip_long: bool = True,
    show_progress: bool | None = None,
    notes: list[str] | None = None,
    on_note: NoteHook | None = None,
    limit: int | None = None,
) -> MbeRun:
    """MBE of ``lm`` on a shipped token-id set: what ``weatkit mbe --mbe-set`` runs.

    :attr:`MbeRun.data` is ``"mbe:LANG/CORPUS"``; the other arguments are :func:`run_mbe`'s.
    """
    male, female = sentences_from_set(lm, lang, corpus)
    return run_mbe(
        lm,
        male,
        female,
        data=f"mbe:{lang}/{corpus}",
        method=method,
        weight=weight,
        seed=seed,
        max_sentences=max_sentences,
        skip_long=skip_long,
        show_progress=show_progress,
        notes=notes,
        on_note=on_note,
        limit=limit,
    )
