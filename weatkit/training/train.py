"""Training per-language corpora into fastText embeddings: :func:`train_embeddings`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from weatkit.errors import WeatkitError
from weatkit.progress import progress
from weatkit.training.corpus import check_max_words, prepare_corpora, training_file
from weatkit.training.fit import fit, import_fasttext
from weatkit.training.options import POSITION_WEIGHTS_NOTE, TrainOptions, TrainReport
from weatkit.training.output import write_model
from weatkit.training.plan import check_corpora, check_outputs, plan_models


@contextmanager
def temporary_directory(work_dir: str | os.PathLike[str] | None) -> Iterator[str]:
    try:
        scratch = tempfile.TemporaryDirectory(prefix="weatkit-train-", dir=work_dir)
    except OSError as err:
        where = work_dir or tempfile.gettempdir()
        reason = err.strerror or err
        raise WeatkitError(f"cannot create a temporary directory in {where}: {reason}") from None
    with scratch as tmp:
        yield tmp


def general_notes(options: TrainOptions) -> list[str]:
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
    sources = check_corpora(corpora)
    plans = plan_models(list(sources), out_template, joint, pivot)
    check_outputs(plans, sources)
    cap = check_max_words(cap_words, minimum=1)
    fasttext = import_fasttext()
    notes = general_notes(options)
    with temporary_directory(work_dir) as tmp:
        prepared, cap_notes = prepare_corpora(
            sources, Path(tmp), cap, cap_to_smallest, show_progress
        )
        notes += cap_notes
        models = []
        for plan in progress(plans, desc="training", unit="model", show=show_progress):
            corpora_used = [prepared[lang] for lang in plan.languages]
            with training_file(corpora_used, Path(tmp)) as path:
                model = fit(fasttext, path, options, verbose, plan.name)
            models.append(write_model(model, plan, corpora_used, options, save_bin, notes))
    return TrainReport(
        models=tuple(models),
        words_used={lang: c.words for lang, c in prepared.items()},
        words_in_corpus={lang: c.total for lang, c in prepared.items()},
        notes=tuple(notes),
    )
