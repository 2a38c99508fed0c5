"""Training controlled in-house static embeddings with fastText (the CA-WEAT paper's CCe models).

España-Bonet & Barrón-Cedeño (EMNLP 2022, §4) train their own embeddings on CC-100 so that the
amount and domain of the data are the same for every language: each corpus is capped to the
size of the smallest one (Catalan, 1.7·10⁹ words, Appendix D) and fastText is trained with the
CCWP hyperparameters (CBOW, 300 dimensions, character 5-grams, window 5, 10 negatives). Three
ways to reach multilinguality are compared, all available here as ``joint``:

* ``"none"`` — **CCe**: one monolingual model per language;
* ``"bilingual"`` — **CCe2langs**: for every language L other than the pivot (English), one model
  trained on the concatenation of the capped pivot corpus and the capped L corpus;
* ``"multilingual"`` — **CCe9langs**: one model on the concatenation of all capped corpora.

Corpora are UTF-8 text, plain or compressed (``.gz``, ``.bz2``, ``.xz``, chosen by suffix), read
as a stream of lines (memory is bounded by the longest line). Words are what fastText sees:
tokens separated by ASCII whitespace. The output is a word2vec text file (``.vec``, optionally
compressed by its suffix) holding every word of the model's dictionary (fastText's end-of-line
token ``</s>`` included), an optional fastText ``.bin`` for sub-word vectors of OOV words
(``--fasttext-oov``), and a ``<vectors>.train.json`` sidecar with the options, corpus
fingerprints, words used and versions.

Example:
    >>> from weatkit.training import TrainOptions, train_embeddings
    >>> report = train_embeddings(  # doctest: +SKIP
    ...     {"en": "cc.en.txt.xz", "ca": "cc.ca.txt.xz", "de": "cc.de.txt.xz"},
    ...     "vecs/cce2langs.{lang}.vec",
    ...     TrainOptions(threads=16),
    ...     joint="bilingual",
    ...     cap_to_smallest=True,
    ... )
    >>> report.paths["de"]  # doctest: +SKIP
    PosixPath('vecs/cce2langs.de.vec')
"""

from __future__ import annotations

import gzip
import importlib.metadata
import itertools
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

import numpy as np

from weatkit import __version__
from weatkit._io.atomic import remove_stale, temp_file
from weatkit._io.fingerprint import file_fingerprint
from weatkit.embeddings.export import vec_bytes
from weatkit.embeddings.loader_utils import COMPRESSIONS, READ_ERRORS, split_compression
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.progress import progress

#: Placeholder for the language code in paths (as in ``weatkit.embeddings.spec``).
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
_TOKEN = re.compile(rb"\S+")  # ASCII whitespace separates tokens, as in bytes.split and fastText
_ROWS_PER_CHUNK = 4096
_COPY_BLOCK = 1 << 20


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
            _check_int(name, getattr(self, name), minimum=1)
        for name in ("minn", "maxn", "bucket"):
            _check_int(name, getattr(self, name), minimum=0)
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


def _check_int(name: str, value: object, *, minimum: int) -> None:
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


# ---------------------------------------------------------------------------------------------
# Corpora: streaming, counting, capping


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


def _corpus_path(path: str | os.PathLike[str]) -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise WeatkitError(f"corpus not found: {p}")
    if p.is_dir():
        raise WeatkitError(f"corpus path is a directory, not a file: {p}")
    return p


def _open_corpus(p: Path) -> BinaryIO:
    _, comp = split_compression(p)
    try:
        if comp:
            return COMPRESSIONS[comp].open(p, "rb")  # type: ignore[no-any-return]
        return open(p, "rb", buffering=_COPY_BLOCK)
    except OSError as err:
        raise WeatkitError(f"cannot open corpus {p}: {err.strerror or err}") from None


def iter_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The lines of a corpus as bytes (line ends kept), decompressed by suffix and checked to be
    UTF-8. A missing file or a directory is reported at once, the rest while reading.

    Raises:
        WeatkitError: missing file, directory, unreadable or corrupt compressed data, or a line
            that is not valid UTF-8 (the message gives the line number).
    """
    return _lines(_corpus_path(path))


def _lines(p: Path) -> Iterator[bytes]:
    with _open_corpus(p) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                _check_utf8(line, p, lineno)
                yield line
        except READ_ERRORS as err:
            raise WeatkitError(f"cannot read corpus {p}: {type(err).__name__}: {err}") from None


def _check_utf8(line: bytes, path: Path, lineno: int) -> None:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise WeatkitError(
            f"corpus {path}, line {lineno}: not valid UTF-8 (byte 0x{line[err.start]:02x} at "
            f"byte {err.start + 1} of the line); save the corpus as UTF-8"
        ) from None


def count_words(path: str | os.PathLike[str]) -> int:
    """Number of whitespace-separated tokens in a (possibly compressed) UTF-8 corpus, streamed.

    Raises:
        WeatkitError: as :func:`iter_lines`.
    """
    return sum(len(line.split()) for line in iter_lines(path))


def _check_max_words(max_words: int | None, minimum: int) -> int | None:
    if max_words is not None:
        _check_int("the word cap", max_words, minimum=minimum)
        return int(max_words)
    return None


def _copy_words(lines: Iterable[bytes], out: BinaryIO, max_words: int | None) -> int:
    """Write ``lines`` to ``out`` until ``max_words`` tokens (None: all); every line written
    ends with a newline, the line where the cap falls is cut after its last token kept, and no
    line after it is read."""
    written = 0
    if max_words == 0:
        return 0
    for line in lines:
        n = len(line.split())
        if max_words is not None and written + n >= max_words:
            if written + n > max_words:
                line = _first_tokens(line, max_words - written)
            out.write(_terminated(line))
            return max_words
        out.write(_terminated(line))
        written += n
    return written


def _terminated(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n"


def _first_tokens(line: bytes, k: int) -> bytes:
    """``line`` up to the end of its ``k``-th token (``k >= 1``)."""
    ends = [match.end() for match in itertools.islice(_TOKEN.finditer(line), k)]
    return line[: ends[-1]]


def cap_corpus(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], max_words: int | None
) -> int:
    """Write the first ``max_words`` tokens of ``src`` to ``dst`` (plain UTF-8 text); return the
    number of tokens written.

    Line breaks are kept: every line before the cap is copied as it is, the line where the cap
    falls is truncated after the last token kept, and nothing after it is written (a final line
    without a newline gets one). ``max_words=None`` copies (decompresses) the whole corpus.
    ``src`` is streamed, never loaded whole; ``dst`` is written atomically.

    Raises:
        WeatkitError: as :func:`iter_lines`, a negative ``max_words``, or an unwritable ``dst``.
    """
    cap = _check_max_words(max_words, minimum=0)
    lines = iter_lines(src)
    with _staging() as stage, stage.writing(Path(dst)) as out:
        return _copy_words(lines, out, cap)


# ---------------------------------------------------------------------------------------------
# Atomic output


class _Stage:
    """Temporary files renamed into place together by :func:`_staging`."""

    def __init__(self) -> None:
        self.pending: list[tuple[Path, Path]] = []

    def new(self, final: Path) -> Path:
        """A closed temporary file next to ``final``, renamed to it on commit."""
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            remove_stale(final.parent, final.name)  # left by a killed run
            fd, tmp = temp_file(final.parent, final.name)
        except OSError as err:
            raise WeatkitError(f"cannot write {final}: {err.strerror or err}") from None
        os.close(fd)
        self.pending.append((Path(tmp), final))
        return Path(tmp)

    @contextmanager
    def writing(self, final: Path) -> Iterator[BinaryIO]:
        """A binary file handle writing ``final`` (compressed when its suffix says so)."""
        tmp = self.new(final)
        with open(tmp, "wb") as raw, _compressing(raw, final) as out:
            yield out


@contextmanager
def _compressing(raw: BinaryIO, final: Path) -> Iterator[BinaryIO]:
    base, comp = split_compression(final)
    if not comp:
        yield raw
    elif comp == ".gz":  # no time stamp: the same vectors give the same bytes
        with gzip.GzipFile(filename=base.name, mode="wb", fileobj=raw, mtime=0) as out:
            yield out  # type: ignore[misc]
    else:
        with COMPRESSIONS[comp].open(raw, "wb") as out:
            yield out


@contextmanager
def _staging() -> Iterator[_Stage]:
    """Files staged in the block are renamed into place when it succeeds, removed otherwise."""
    stage = _Stage()
    try:
        yield stage
        for tmp, final in stage.pending:
            os.replace(tmp, final)
    except OSError as err:
        where = stage.pending[-1][1] if stage.pending else "the output"
        raise WeatkitError(f"cannot write {where}: {err.strerror or err}") from None
    finally:
        for tmp, _ in stage.pending:
            tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# Planning


@dataclass(frozen=True)
class _Plan:
    name: str
    languages: tuple[str, ...]
    vectors: Path
    joint: str


def _output_path(template: str, lang: str | None) -> Path:
    text = template if lang is None else template.replace(LANG_PLACEHOLDER, lang)
    return Path(text).expanduser()


def _check_template(template: str, joint: str) -> None:
    check_placeholders(template, "output template")
    has_lang = LANG_PLACEHOLDER in template
    if joint == "multilingual" and has_lang:
        raise WeatkitError(
            f"output template {template!r}: --joint multilingual writes one file for every "
            f"language; remove {LANG_PLACEHOLDER}"
        )
    if joint != "multilingual" and not has_lang:
        raise WeatkitError(
            f"output template {template!r} must contain {LANG_PLACEHOLDER} "
            f"(--joint {joint} writes one file per language)"
        )
    base, _ = split_compression(template)
    if base.suffix.lower() not in VECTOR_SUFFIXES:
        raise WeatkitError(
            f"output template {template!r}: vectors are written as word2vec text; end it with "
            ".vec or .txt (optionally .gz, .bz2 or .xz)"
        )


def _plan_models(languages: Sequence[str], template: str, joint: str, pivot: str) -> list[_Plan]:
    if joint not in JOINT_MODES:
        raise WeatkitError(f"joint must be one of {', '.join(JOINT_MODES)}, got {joint!r}")
    _check_template(template, joint)
    if joint == "none":
        return [_Plan(lang, (lang,), _output_path(template, lang), joint) for lang in languages]
    if joint == "multilingual":
        if len(languages) < 2:
            raise WeatkitError("--joint multilingual needs corpora in at least two languages")
        return [_Plan("+".join(languages), tuple(languages), _output_path(template, None), joint)]
    if pivot not in languages:
        raise WeatkitError(
            f"pivot language {pivot!r} has no corpus (corpora: {', '.join(languages)})"
        )
    others = [lang for lang in languages if lang != pivot]
    if not others:
        raise WeatkitError(f"--joint bilingual needs a corpus besides the pivot {pivot!r}")
    return [
        _Plan(f"{pivot}+{lang}", (pivot, lang), _output_path(template, lang), joint)
        for lang in others
    ]


def _check_corpora(corpora: Mapping[str, str | os.PathLike[str]]) -> dict[str, Path]:
    if not corpora:
        raise WeatkitError("no corpora given")
    return {check_language(lang, "corpus"): _corpus_path(p) for lang, p in corpora.items()}


def _check_outputs(plans: Sequence[_Plan], sources: Mapping[str, Path]) -> None:
    inputs = {p.resolve() for p in sources.values()}
    for plan in plans:
        for path in (plan.vectors, binary_path(plan.vectors), metadata_path(plan.vectors)):
            if path.resolve() in inputs:
                raise WeatkitError(f"output {path} would overwrite a corpus")


def binary_path(vectors: Path) -> Path:
    """Where the fastText model of ``vectors`` goes: ``cce.de.vec(.gz)`` -> ``cce.de.bin``."""
    base, _ = split_compression(vectors)
    return base.with_suffix(".bin")


def metadata_path(vectors: Path) -> Path:
    """The sidecar of ``vectors``: ``cce.de.vec`` -> ``cce.de.vec.train.json``."""
    return vectors.with_name(vectors.name + ".train.json")


# ---------------------------------------------------------------------------------------------
# Preparing corpora (counting, capping, decompressing)


@dataclass(frozen=True)
class _Corpus:
    lang: str
    source: Path
    path: Path  # what fastText reads: the source, or a capped/decompressed copy
    words: int
    total: int | None
    fingerprint: dict[str, object]


def _prepare_one(lang: str, src: Path, tmp: Path, cap: int | None, total: int | None) -> _Corpus:
    """Use the source as it is when fastText can read all of it, else write a (capped) copy."""
    compressed = bool(split_compression(src)[1])
    if not compressed and (cap is None or (total is not None and total <= cap)):
        words = total if total is not None else count_words(src)
        path = src
    else:
        path = tmp / f"{lang}.txt"
        lines = iter_lines(src)
        with _scratch_file(path) as out:
            words = _copy_words(lines, out, cap)
    if words == 0:
        raise WeatkitError(f"corpus {src} has no words")
    return _Corpus(lang, src, path, words, total, file_fingerprint(src))


def _count_all(sources: Mapping[str, Path], show: bool | None) -> dict[str, int]:
    bar = progress(sources.items(), desc="counting words", unit="corpus", show=show)
    return {lang: count_words(src) for lang, src in bar}


def _prepare_corpora(
    sources: Mapping[str, Path],
    tmp: Path,
    cap_words: int | None,
    cap_to_smallest: bool,
    show: bool | None,
) -> tuple[dict[str, _Corpus], list[str]]:
    """Every corpus checked, counted and capped; and a note on the cap."""
    totals: Mapping[str, int | None] = dict.fromkeys(sources)
    cap, note = cap_words, f"every corpus capped to {cap_words:,} words" if cap_words else ""
    if cap_to_smallest:
        totals = counted = _count_all(sources, show)
        smallest = min(counted, key=counted.__getitem__)
        if counted[smallest] == 0:
            raise WeatkitError(f"corpus {sources[smallest]} has no words")
        if cap is None or counted[smallest] < cap:
            cap = counted[smallest]
            note = f"every corpus capped to {cap:,} words, the size of the {smallest} corpus"
    bar = progress(sources.items(), desc="preparing corpora", unit="corpus", show=show)
    prepared = {lang: _prepare_one(lang, src, tmp, cap, totals[lang]) for lang, src in bar}
    return prepared, [note] if note else []


@contextmanager
def _scratch_file(path: Path) -> Iterator[BinaryIO]:
    """A temporary corpus file, with a one-line error when the disk is full."""
    try:
        with open(path, "wb") as out:
            yield out
    except OSError as err:
        reason = err.strerror or err
        raise WeatkitError(f"cannot write the temporary file {path}: {reason}") from None


@contextmanager
def _training_file(corpora: Sequence[_Corpus], tmp: Path) -> Iterator[Path]:
    """The one corpus, or the concatenation of several (removed afterwards)."""
    if len(corpora) == 1:
        yield corpora[0].path
        return
    joint = tmp / "joint.txt"
    try:
        with _scratch_file(joint) as out:
            for corpus in corpora:
                _append(corpus.path, out)
        yield joint
    finally:
        joint.unlink(missing_ok=True)


def _append(path: Path, out: BinaryIO) -> None:
    last = b"\n"
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_COPY_BLOCK), b""):
            out.write(block)
            last = block[-1:]
    if last != b"\n":
        out.write(b"\n")


# ---------------------------------------------------------------------------------------------
# Training and writing


def import_fasttext() -> ModuleType:
    """The ``fasttext`` module; WeatkitError with the install command when it is missing."""
    try:
        import fasttext
    except ImportError:
        raise WeatkitError(
            "weatkit train needs the fasttext package: pip install 'weatkit[train]'"
        ) from None
    return fasttext


def fasttext_version() -> str:
    """Version of the installed fastText distribution (``fasttext-wheel`` or ``fasttext``)."""
    for dist in ("fasttext-wheel", "fasttext"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def _fit(fasttext: ModuleType, path: Path, options: TrainOptions, verbose: int, name: str) -> Any:
    try:
        return fasttext.train_unsupervised(
            input=str(path),
            model=options.model,
            dim=options.dim,
            minn=options.minn,
            maxn=options.maxn,
            ws=options.ws,
            neg=options.neg,
            epoch=options.epoch,
            minCount=options.min_count,
            lr=float(options.lr),
            thread=options.threads,
            bucket=options.bucket,
            verbose=verbose,
        )
    except (RuntimeError, ValueError, MemoryError) as err:
        raise WeatkitError(f"fastText could not train the {name} model: {err}") from None


def write_vectors(out: BinaryIO, model: Any) -> int:
    """Write every word of a fastText ``model`` with ``model.get_word_vector`` as word2vec text
    (see :func:`weatkit.embeddings.export.vec_bytes`: 9 significant digits, float32 exact),
    streamed in chunks of rows; return the number of words."""
    words = list(model.words)
    out.write(f"{len(words)} {model.get_dimension()}\n".encode())
    for start in range(0, len(words), _ROWS_PER_CHUNK):
        chunk = words[start : start + _ROWS_PER_CHUNK]
        rows = np.stack([model.get_word_vector(word) for word in chunk])
        data = vec_bytes(WordVectors(name="chunk", words=chunk, vectors=rows))
        out.write(data[data.index(b"\n") + 1 :])  # drop the chunk's own header
    return len(words)


def _sidecar(
    plan: _Plan,
    corpora: Sequence[_Corpus],
    options: TrainOptions,
    binary: Path | None,
    vocab_size: int,
    notes: Sequence[str],
) -> dict[str, object]:
    return {
        "tool": "weatkit train",
        "weatkit_version": __version__,
        "fasttext_version": fasttext_version(),
        "model": plan.name,
        "joint": plan.joint,
        "languages": list(plan.languages),
        "options": asdict(options),
        "position_weights": False,
        "corpora": {
            c.lang: {"fingerprint": c.fingerprint, "words_used": c.words, "words": c.total}
            for c in corpora
        },
        "words": sum(c.words for c in corpora),
        "vocab_size": vocab_size,
        "vectors": str(plan.vectors),
        "binary": None if binary is None else str(binary),
        "notes": list(notes),
    }


def _write_model(
    model: Any,
    plan: _Plan,
    corpora: Sequence[_Corpus],
    options: TrainOptions,
    save_bin: bool,
    notes: Sequence[str],
) -> TrainedModel:
    binary = binary_path(plan.vectors) if save_bin else None
    meta = metadata_path(plan.vectors)
    with _staging() as stage:
        with stage.writing(plan.vectors) as out:
            vocab_size = write_vectors(out, model)
        if binary is not None:
            model.save_model(str(stage.new(binary)))
        sidecar = _sidecar(plan, corpora, options, binary, vocab_size, notes)
        # as weatkit.report.tables.manifest_bytes, whose module would import torch and pandas
        stage.new(meta).write_text(json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n")
    words = sum(c.words for c in corpora)
    return TrainedModel(plan.name, plan.languages, plan.vectors, binary, meta, words, vocab_size)


@contextmanager
def _temporary_directory(work_dir: str | os.PathLike[str] | None) -> Iterator[str]:
    try:
        scratch = tempfile.TemporaryDirectory(prefix="weatkit-train-", dir=work_dir)
    except OSError as err:
        where = work_dir or tempfile.gettempdir()
        reason = err.strerror or err
        raise WeatkitError(f"cannot create a temporary directory in {where}: {reason}") from None
    with scratch as tmp:
        yield tmp


def _general_notes(options: TrainOptions) -> list[str]:
    notes = []
    if options.model == "cbow":
        notes.append(POSITION_WEIGHTS_NOTE)
    if options.threads > 1:
        notes.append(
            f"threads={options.threads}: fastText's multi-threaded training is not "
            "bit-reproducible; use threads=1 for identical vectors on every run"
        )
    return notes


def train_embeddings(
    corpora: Mapping[str, str | os.PathLike[str]],
    out_template: str,
    options: TrainOptions | None = None,
    *,
    joint: str = "none",
    pivot: str = "en",
    cap_words: int | None = None,
    cap_to_smallest: bool = False,
    save_bin: bool = False,
    show_progress: bool | None = None,
    verbose: int = 0,
    work_dir: str | os.PathLike[str] | None = None,
) -> TrainReport:
    """Train fastText embeddings on per-language corpora, as the CA-WEAT paper's CCe models.

    Every corpus is checked, counted and capped before the first model is trained, so a bad
    corpus fails early and leaves no output. Capped, decompressed and concatenated corpora are
    written to a temporary directory that is always removed.

    Args:
        corpora: language code -> corpus file (UTF-8 text, optionally ``.gz``/``.bz2``/``.xz``),
            in the order used for concatenation.
        out_template: path of the vector files. For ``joint="none"`` and ``"bilingual"`` it must
            contain ``{lang}``: a bilingual model is written under its non-pivot language L
            (``cce2langs.{lang}.vec`` -> ``cce2langs.de.vec`` for en+de); each file also holds
            the pivot's vectors of that model, so any pair's file serves as the pivot's
            (:attr:`TrainReport.paths` picks the first). For ``"multilingual"`` it must not
            contain ``{lang}``: one file serves every language. It ends in ``.vec`` or ``.txt``,
            optionally followed by ``.gz``, ``.bz2`` or ``.xz`` to compress the output.
        options: fastText hyperparameters (default: the paper's, :class:`TrainOptions`).
        joint: ``"none"`` (CCe), ``"bilingual"`` (CCe2langs) or ``"multilingual"`` (CCe9langs).
        pivot: the language paired with every other one in ``"bilingual"`` mode.
        cap_words: use at most this many words of every corpus (its first ones).
        cap_to_smallest: cap every corpus to the size of the smallest one (the paper's
            "ceiling to Catalan"); with ``cap_words`` too, the smaller cap wins.
        save_bin: also write the fastText model (``<stem>.bin``) for sub-word vectors of OOV
            words (``weatkit run --fasttext-oov``).
        show_progress: progress bars over corpora and models (None: only on a terminal).
        verbose: fastText's own verbosity (0 silent, 2 its progress line).
        work_dir: where the temporary directory goes (default: ``$TMPDIR``); it needs room for
            the capped corpora and one concatenation.

    Returns:
        :class:`TrainReport` with the files written, the words used per language and notes (the
        missing position weights, multi-threaded non-determinism, caps).

    Raises:
        WeatkitError: invalid options or template, unknown pivot, missing, empty or non-UTF-8
            corpus, fastText missing or failing, unwritable output.
    """
    options = options or TrainOptions()
    options.validate()
    sources = _check_corpora(corpora)
    plans = _plan_models(list(sources), out_template, joint, pivot)
    _check_outputs(plans, sources)
    cap = _check_max_words(cap_words, minimum=1)
    fasttext = import_fasttext()
    notes = _general_notes(options)
    with _temporary_directory(work_dir) as tmp:
        prepared, cap_notes = _prepare_corpora(
            sources, Path(tmp), cap, cap_to_smallest, show_progress
        )
        notes += cap_notes
        models = []
        for plan in progress(plans, desc="training", unit="model", show=show_progress):
            corpora_used = [prepared[lang] for lang in plan.languages]
            with _training_file(corpora_used, Path(tmp)) as path:
                model = _fit(fasttext, path, options, verbose, plan.name)
            models.append(_write_model(model, plan, corpora_used, options, save_bin, notes))
    return TrainReport(
        models=tuple(models),
        words_used={lang: c.words for lang, c in prepared.items()},
        words_in_corpus={lang: c.total for lang, c in prepared.items()},
        notes=tuple(notes),
    )


__all__ = [
    "JOINT_MODES",
    "LANG_PLACEHOLDER",
    "MODELS",
    "POSITION_WEIGHTS_NOTE",
    "TrainOptions",
    "TrainReport",
    "TrainedModel",
    "binary_path",
    "cap_corpus",
    "check_language",
    "check_placeholders",
    "count_words",
    "import_fasttext",
    "iter_lines",
    "metadata_path",
    "train_embeddings",
    "write_vectors",
]
