"""The options and results of :func:`weatkit.training.train_embeddings`, and the checks of
language codes and path templates."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from weatkit.errors import WeatkitError

LANG_PLACEHOLDER = "{lang}"

#: Ways of training: one model per language, pivot + L pairs, or one model on everything.
JOINT_MODES = ("none", "bilingual", "multilingual")

#: fastText architectures.
MODELS = ("cbow", "skipgram")

#: Suffixes (before an optional compression suffix) of the vector files written.
VECTOR_SUFFIXES = (".vec", ".txt")

POSITION_WEIGHTS_NOTE = (
    "the paper's CBOW with position weights (Grave et al. 2018) is not available in the public "
    "fastText package; plain CBOW is trained instead"
)

_LANG_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")


def _default_threads() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class TrainOptions:
    """fastText hyperparameters; the defaults are the paper's (those of CCWP, Grave et al. 2018).

    The paper trains "CBOW with position weights", a variant in Grave et al.'s own code that the
    public fastText package does not implement: ``fasttext.train_unsupervised`` (0.9.2) takes
    ``model, lr, dim, ws, epoch, minCount, minCountLabel, minn, maxn, neg, wordNgrams, loss,
    bucket, thread, lrUpdateRate, t, label, verbose, pretrainedVectors`` and nothing for
    position weights, so plain CBOW is trained and :func:`train_embeddings` says so in its notes.

    Attributes:
        model: ``"cbow"`` (paper) or ``"skipgram"`` (the WP models of Bojanowski et al. 2017).
        dim: vector dimension (paper: 300).
        minn, maxn: lengths of the character n-grams (paper: 5 and 5; ``maxn=0`` trains without
            sub-words).
        ws: context window size (paper: 5).
        neg: negatives sampled per positive (paper: 10).
        epoch: passes over the corpus (fastText's default, 5).
        min_count: minimal number of occurrences of a word in the vocabulary (fastText: 5).
        lr: learning rate; 0.05 is fastText's default for unsupervised models, CBOW and
            skip-gram alike.
        threads: training threads (default: every CPU). fastText's Hogwild training is not
            deterministic with more than one thread; ``threads=1`` gives bit-identical vectors on
            every run (fastText's random seed is fixed).
        bucket: hash buckets of the character n-grams (fastText's default, 2,000,000; the input
            matrix has ``vocabulary + bucket`` rows of ``dim`` floats).
    """

    model: str = "cbow"
    dim: int = 300
    minn: int = 5
    maxn: int = 5
    ws: int = 5
    neg: int = 10
    epoch: int = 5
    min_count: int = 5
    lr: float = 0.05
    threads: int = field(default_factory=_default_threads)
    bucket: int = 2_000_000

    def validate(self) -> None:
        """Raise :class:`WeatkitError` (one line) for a value fastText cannot train with."""
        if self.model not in MODELS:
            raise WeatkitError(f"model must be 'cbow' or 'skipgram', got {self.model!r}")
        for name in ("dim", "ws", "neg", "epoch", "min_count", "threads"):
            check_int(name, getattr(self, name), minimum=1)
        for name in ("minn", "maxn", "bucket"):
            check_int(name, getattr(self, name), minimum=0)
        if self.maxn and self.minn > self.maxn:
            raise WeatkitError(
                f"minn ({self.minn}) must not exceed maxn ({self.maxn}); "
                "maxn=0 trains without sub-words"
            )
        if self.maxn and not self.bucket:
            raise WeatkitError("bucket must be positive when maxn > 0 (sub-words are hashed)")
        lr = self.lr
        if isinstance(lr, bool) or not isinstance(lr, int | float) or not math.isfinite(lr):
            raise WeatkitError(f"lr must be a positive number, got {lr!r}")
        if lr <= 0:
            raise WeatkitError(f"lr must be a positive number, got {lr!r}")


def check_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        kind = "a positive" if minimum == 1 else "a non-negative"
        raise WeatkitError(f"{name} must be {kind} integer, got {value!r}")


@dataclass(frozen=True)
class TrainedModel:
    """One trained model and the files written for it.

    Attributes:
        name: ``"de"`` (monolingual), ``"en+de"`` (bilingual) or ``"en+de+it"`` (multilingual).
        languages: the languages of its training data, in concatenation order.
        vectors: the word2vec text file.
        binary: the fastText ``.bin`` file, when asked for.
        metadata: the ``.train.json`` sidecar.
        words: words it was trained on (sum over its languages).
        vocab_size: words in its dictionary (rows of the vector file).
    """

    name: str
    languages: tuple[str, ...]
    vectors: Path
    binary: Path | None
    metadata: Path
    words: int
    vocab_size: int


@dataclass(frozen=True)
class TrainReport:
    """What :func:`train_embeddings` wrote.

    Attributes:
        models: the trained models, in training order.
        words_used: per language, the words of its (capped) corpus used for training.
        words_in_corpus: per language, the words of the whole corpus when it was counted
            (always with ``cap_to_smallest``), else None.
        notes: things the user should know (position weights, reproducibility, caps).
    """

    models: tuple[TrainedModel, ...]
    words_used: dict[str, int]
    words_in_corpus: dict[str, int | None]
    notes: tuple[str, ...]

    @property
    def paths(self) -> dict[str, Path]:
        """The vector file to use for each language: its own model, its pivot+L model (the
        pivot gets the first pair's file), or the one multilingual file."""
        paths: dict[str, Path] = {}
        for model in self.models:
            for lang in model.languages:
                paths.setdefault(lang, model.vectors)
        return paths


def check_language(lang: str, where: str = "language") -> str:
    """``lang`` when it is a usable language code (letters, digits, ``_``, ``-``; it goes into
    file names); WeatkitError otherwise."""
    if not isinstance(lang, str) or not _LANG_CODE.match(lang):
        raise WeatkitError(
            f"{where}: {lang!r} is not a language code (letters, digits, '_' or '-')"
        )
    return lang


def check_placeholders(text: str, what: str) -> None:
    """WeatkitError when ``text`` has a ``{...}`` other than ``{lang}`` or a lone brace."""
    rest = text.replace(LANG_PLACEHOLDER, "")
    if "{" in rest or "}" in rest:
        raise WeatkitError(f"{what} {text!r}: only the placeholder {LANG_PLACEHOLDER} is supported")
