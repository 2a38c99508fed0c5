"""``weatkit train``: fastText embeddings on controlled corpora (the CA-WEAT paper's CCe models)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import friendly, note
from weatkit.cli.options import out_option
from weatkit.config.schema import split_names
from weatkit.errors import WeatkitError
from weatkit.training import (
    JOINT_MODES,
    LANG_PLACEHOLDER,
    MODELS,
    TrainOptions,
    TrainReport,
    check_language,
    check_placeholders,
    train_embeddings,
)

_SEPARATORS = ("/", "\\")

#: The fastText hyperparameter options: (TrainOptions field, help).
_HYPERPARAMETERS = (
    ("dim", "Vector dimension."),
    ("minn", "Shortest character n-gram."),
    ("maxn", "Longest character n-gram (0: no sub-words)."),
    ("ws", "Context window size."),
    ("neg", "Negatives sampled per positive."),
    ("epoch", "Passes over the corpus."),
    ("min_count", "Minimal number of occurrences of a word."),
    ("lr", "Learning rate."),
    ("bucket", "Hash buckets of the character n-grams."),
)


def _parse_corpus_entry(entry: str) -> tuple[str | None, str]:
    """``LANG=PATH`` -> ``(LANG, PATH)``; a path with ``{lang}`` -> ``(None, PATH)``."""
    text = entry.strip()
    if not text:
        raise WeatkitError("--corpus: empty value (expected LANG=PATH or a path with {lang})")
    head, sep, tail = text.partition("=")
    if sep and LANG_PLACEHOLDER not in head and not any(s in head for s in _SEPARATORS):
        lang, path = head.strip(), tail.strip()
        check_language(lang, f"--corpus {entry!r}")
        if not path:
            raise WeatkitError(f"--corpus {entry!r}: empty path after '='")
        if LANG_PLACEHOLDER in path:
            raise WeatkitError(f"--corpus {entry!r}: a LANG=PATH path cannot contain {{lang}}")
        check_placeholders(path, "--corpus")
        return lang, path
    check_placeholders(text, "--corpus")
    if LANG_PLACEHOLDER not in text:
        raise WeatkitError(f"--corpus {entry!r}: expected LANG=PATH or a path with {{lang}}")
    return None, text


def corpora_from_options(entries: Sequence[str], langs: Sequence[str]) -> dict[str, Path]:
    """Language -> corpus from ``--corpus`` values and ``--lang``.

    ``--corpus LANG=PATH`` gives one language's corpus; ``--corpus 'dir/cc.{lang}.txt'`` (one
    such template) gives the corpus of every ``--lang``. ``--lang`` (repeatable or
    comma-separated) selects the languages, in order; without it, the ``LANG=PATH`` languages
    are used. A ``LANG=PATH`` entry takes precedence over the template.

    Raises:
        WeatkitError: malformed entry, language given twice, two templates, a template without
            ``--lang``, or a selected language without a corpus.
    """
    explicit: dict[str, Path] = {}
    template: str | None = None
    for entry in entries:
        lang, path = _parse_corpus_entry(entry)
        if lang is None:
            if template is not None:
                raise WeatkitError("give one --corpus template with {lang}, not several")
            template = path
        elif lang in explicit:
            raise WeatkitError(f"--corpus: language {lang!r} given twice")
        else:
            explicit[lang] = Path(path).expanduser()
    if template is not None and not langs:
        raise WeatkitError(f"--corpus {template!r}: give the languages with --lang")
    corpora: dict[str, Path] = {}
    for lang in dict.fromkeys(split_names(langs, "--lang") or explicit):
        check_language(lang, "--lang")
        if lang in explicit:
            corpora[lang] = explicit[lang]
        elif template is not None:
            corpora[lang] = Path(template.replace(LANG_PLACEHOLDER, lang)).expanduser()
        else:
            raise WeatkitError(f"--lang {lang}: no corpus (give --corpus {lang}=PATH)")
    if not corpora:
        raise WeatkitError("no corpora: give --corpus LANG=PATH or a template and --lang")
    return corpora


def parse_word_count(text: str | None) -> int | None:
    """``--cap-words``: ``1700000000``, ``1_700_000_000``, ``1,700,000,000`` or ``1.7e9``."""
    if text is None:
        return None
    cleaned = text.strip().replace("_", "").replace(",", "")
    try:
        return int(cleaned)
    except ValueError:
        pass
    try:
        value = float(cleaned)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value):
        raise WeatkitError(f"--cap-words {text!r}: expected a whole number of words")
    return int(value)


def _hyperparameter_options(func: Callable[..., Any]) -> Callable[..., Any]:
    defaults = {f.name: f.default for f in dataclasses.fields(TrainOptions)}
    for name, help_text in reversed(_HYPERPARAMETERS):
        default = defaults[name]
        func = click.option(
            f"--{name.replace('_', '-')}",
            name,
            type=type(default),
            default=default,
            show_default=True,
            help=help_text,
        )(func)
    return func


def options_from_opts(opts: dict[str, Any]) -> TrainOptions:
    """:class:`TrainOptions` from the parsed command-line options (validated)."""
    values = {name: opts[name] for name, _ in _HYPERPARAMETERS}
    if opts["threads"] is not None:
        values["threads"] = opts["threads"]
    options = TrainOptions(model=opts["model"], **values)
    options.validate()
    return options


def _show_report(report: TrainReport) -> None:
    for line in report.notes:
        note(line)
    view = Table(title="Trained embeddings")
    for col in ("vectors", "languages", "words used", "vocabulary"):
        view.add_column(col)
    for model in report.models:
        used = " + ".join(f"{report.words_used[lang]:,}" for lang in model.languages)
        view.add_row(str(model.vectors), ", ".join(model.languages), used, f"{model.vocab_size:,}")
    extras = "a .bin model and " if any(m.binary for m in report.models) else ""
    view.caption = f"each with {extras}a .train.json sidecar"
    Console().print(view)


@click.command("train")
@click.option(
    "--corpus",
    "corpus_entries",
    multiple=True,
    required=True,
    help="LANG=PATH (repeatable), or a path with {lang} used for every --lang. UTF-8 text, "
    "optionally .gz/.bz2/.xz.",
)
@click.option("--lang", "langs", multiple=True, help="Languages; repeatable or comma-separated.")
@out_option(
    "Vector file(s) to write, .vec or .txt (optionally .gz/.bz2/.xz); with {lang} for "
    "--joint none/bilingual (bilingual: the non-pivot language), without for multilingual.",
    dest="out",
    file=True,
    required=True,
)
@click.option(
    "--joint",
    type=click.Choice(JOINT_MODES),
    default="none",
    show_default=True,
    help="none: one model per language (CCe); bilingual: pivot + each language (CCe2langs); "
    "multilingual: one model on all corpora (CCe9langs).",
)
@click.option("--pivot", default="en", show_default=True, help="Pivot language of bilingual.")
@click.option("--cap-words", help="Use at most N words of every corpus (e.g. 1.7e9).")
@click.option(
    "--cap-to-smallest",
    is_flag=True,
    help="Cap every corpus to the size of the smallest (the paper's ceiling to Catalan).",
)
@click.option(
    "--model",
    type=click.Choice(MODELS),
    default="cbow",
    show_default=True,
    help="fastText architecture (the paper's CBOW position weights are not available).",
)
@_hyperparameter_options
@click.option(
    "--threads",
    type=int,
    help="Training threads [default: every CPU]; 1 gives bit-reproducible vectors.",
)
@click.option("--save-bin", is_flag=True, help="Also write the fastText .bin (--fasttext-oov).")
@click.option(
    "--tmp-dir",
    type=click.Path(file_okay=False),
    help="Where capped and concatenated corpora go while training [default: $TMPDIR].",
)
@click.option("--fasttext-verbose", is_flag=True, help="Show fastText's own progress.")
@friendly
def train_command(**opts: Any) -> None:
    """Train fastText embeddings on per-language corpora, as the CA-WEAT paper's CCe models.

    \b
    weatkit train --corpus 'cc100/{lang}.txt.xz' --lang en,ca,de --cap-to-smallest \\
        --joint bilingual --out 'vecs/cce2langs.{lang}.vec' --threads 32 --save-bin
    """
    corpora = corpora_from_options(opts["corpus_entries"], opts["langs"])
    report = train_embeddings(
        corpora,
        opts["out"],
        options_from_opts(opts),
        joint=opts["joint"],
        pivot=opts["pivot"],
        cap_words=parse_word_count(opts["cap_words"]),
        cap_to_smallest=opts["cap_to_smallest"],
        save_bin=opts["save_bin"],
        verbose=2 if opts["fasttext_verbose"] else 0,
        work_dir=opts["tmp_dir"],
    )
    _show_report(report)
