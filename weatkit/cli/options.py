"""The options of the ``weatkit`` commands that only the command line has, each declared once.

The options of a run (engine, lists and normalisation, loading, transformer encoding,
isomorphism) are not declared here: they come from :mod:`weatkit.config.schema`
(:func:`~weatkit.config.schema.click_options`), the declarations files are read by too, and
are turned into library options by :mod:`weatkit.config.run`, so a bad value gives the same
message on the command line (naming the flag) as in a file (naming the key).

* output: :func:`out_option` (``--out``), :func:`format_option` (``--format``, one choice set,
  :data:`~weatkit.report.tables.FORMATS`: the table printed to stdout in that format instead of
  the readable table), :func:`progress_option` (``--progress/--no-progress``, one declaration);
* models: :func:`model_options` (``--model``/``--layer`` and the schema's transformer options:
  word vectors of a transformer), :func:`language_model_options` (sentence scorers) and
  :func:`model_specs`;
* run-directory filters: :func:`filter_options` / :func:`filters` (``export`` and ``plot``);

The options the sentence measures share (``--bootstrap``, ``--controls``, ``--limit``,
``--log-items``, ``--compat``, ...) are in :mod:`weatkit.cli.sentence_options`, what those
commands write beside their tables (``manifest.json``, the per-item log) in
:mod:`weatkit.cli.sentence_outputs`. Where a study's jobs run and where its outputs are logged
(``--executor``, ``--mlflow``) are in :mod:`weatkit.cli.study_options`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import click

from weatkit.cli.errors import fail
from weatkit.config.schema import CONTEXTUAL, click_options, split_names
from weatkit.embeddings.spec import HF_PREFIX
from weatkit.errors import ConfigError, WeatkitError
from weatkit.report.tables import FORMATS
from weatkit.scoring.spec import parse_model_spec

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def stack(options: Sequence[Decorator]) -> Decorator:
    """One decorator applying ``options`` so that ``--help`` lists them in this order."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


# --- output ---------------------------------------------------------------------------------


def out_option(
    help_text: str, *, dest: str = "out_dir", file: bool = False, required: bool = False
) -> Decorator:
    """``--out``: the directory (``file=False``) or the file (``file=True``) a command writes.

    ``dest`` is the parameter name the command receives (``out_dir``, ``out_path`` or ``output``).
    """
    kind = click.Path(dir_okay=False) if file else click.Path(file_okay=False)
    return click.option("--out", dest, type=kind, required=required, help=help_text)


def format_option(
    help_text: str = "Print the table to stdout in this format instead of the readable table.",
    *,
    extra: Sequence[str] = (),
    required: bool = False,
    checked_by_command: bool = False,
) -> Decorator:
    """``--format``: one of :data:`~weatkit.report.tables.FORMATS` (csv, json, parquet,
    markdown), the tidy table rendered by :func:`~weatkit.report.tables.render`.

    Args:
        extra: formats of one command (``export``: ``latex``).
        checked_by_command: leave the value unchecked at parsing time (the command checks it
            and reports a wrong one as a one-line error, then calls :func:`check_stdout_format`
            when it prints to stdout, as ``export`` does); the choices are still listed in
            ``--help``.
    """
    choices = [*FORMATS, *extra]
    kind: click.ParamType = click.Choice(choices)
    if checked_by_command:
        kind = click.STRING
    return click.option(
        "--format",
        "fmt",
        type=kind,
        metavar=f"[{'|'.join(choices)}]",
        required=required,
        help=help_text,
        callback=None if checked_by_command else _no_binary_to_terminal,
    )


#: Formats whose rendering is bytes, not text.
BINARY_FORMATS = ("parquet",)


def check_table(opts: Mapping[str, Any]) -> None:
    """Refuse a ``--table`` given without ``--format``: it picks the table ``--format`` prints,
    and the readable output would ignore it."""
    given = click.get_current_context().get_parameter_source("table")
    if given == click.core.ParameterSource.COMMANDLINE and not opts["fmt"]:
        raise WeatkitError(
            f"--table {opts['table']} picks the table --format prints: add --format "
            f"({'|'.join(FORMATS)}); --out writes every table"
        )


def check_stdout_format(fmt: str | None) -> None:
    """The rule for a table printed to stdout in ``--format fmt``, for every command: a binary
    format is written when stdout is redirected (a file, a pipe) and refused, in one line with
    exit status 1, when it is a terminal."""
    if fmt in BINARY_FORMATS and sys.stdout.isatty():
        fail(
            f"--format {fmt} is binary and stdout is a terminal: redirect it to a file "
            f"(… --format {fmt} > table.{fmt})"
        )


def _no_binary_to_terminal(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """:func:`check_stdout_format` when ``--format`` is parsed."""
    check_stdout_format(value)
    return value


def progress_option() -> Decorator:
    """``--progress/--no-progress``: the ``show`` of :func:`weatkit.progress.progress` (None
    when neither is given: a bar on a terminal, a log line every 30 s elsewhere)."""
    return click.option(
        "--progress/--no-progress",
        default=None,
        help="Progress: a bar when stderr is a terminal, else a line every 30 s of long work "
        "(and, for model scoring on CPU, an estimate from the batches after the first). "
        "--no-progress: "
        "none.",
    )


def verbose_option(what: str = "") -> Decorator:
    """``--verbose``/``-v``: every skipped test with its reason instead of counts per
    embeddings × language (``weatkit run``, ``weatkit grid``); ``what`` names what else it
    shows."""
    return click.option(
        "--verbose", "-v", is_flag=True, help=f"Show {what}every skipped test with its reason."
    )


# --- models ---------------------------------------------------------------------------------


def language_model_options(
    model_help: str, batch_help: str, *, required: bool = False, kind: bool = False
) -> Decorator:
    """``--model`` (and ``--kind``), the schema's loading options of :data:`CONTEXTUAL`
    (``--dtype``, ``--batch-size`` with its default 32, ``--device``, ``--revision``,
    ``--trust-remote-code``, ``--allow-pickle``, ``--cache``) and ``--progress``: the options
    of the commands that score sentences with a language model (``gest``, ``stereoset``,
    ``crows``, ``mbe``); :func:`weatkit.config.run.contextual_from_cli` reads them."""
    options = [click.option("--model", required=required, help=model_help)]
    if kind:
        options.append(
            click.option(
                "--kind",
                type=click.Choice(["mlm", "glm"]),
                help="With --model: masked (mlm) or causal (glm) language model (default: from "
                "the model's config).",
            )
        )
    options += [
        click_options(
            CONTEXTUAL,
            only=[o.name for o in CONTEXTUAL.options if o.name not in _POOLING],
            help_texts={"batch_size": batch_help},
            defaults={"batch_size": 32},
        ),
        progress_option(),
    ]
    return stack(options)


#: How an item becomes a vector: options of word vectors, not of sentence scores.
_POOLING = ("subwords", "special_tokens", "span", "template")


def model_options(
    *, exclude: Collection[str] = (), help_texts: Mapping[str, str] | None = None
) -> Decorator:
    """``--model``/``--layer`` and the schema's :data:`CONTEXTUAL` options: the commands that
    take word vectors from a transformer (``run``, ``embed``, ``iso``). Not ``--tensor-parallel``:
    word vectors never come from a ``vllm:`` model.

    Args:
        exclude: fields the command declares through another section (``run``: ``device``
            of the engine, ``allow_pickle`` of the loading options).
        help_texts: the command's own help of some fields.
    """
    return stack(
        [
            click.option(
                "--model",
                "models",
                multiple=True,
                help="Hugging Face model (hub id or local directory) to take word vectors "
                "from; repeatable. Same as --embeddings hf:MODEL@LAYERS. Named NAME@LAYER in "
                "tables, NAME the last path component (a local directory .../model is "
                "'model'); give NAME=MODEL to name it.",
            ),
            click.option(
                "--layer",
                "layers",
                type=int,
                multiple=True,
                help="Hidden-state layer of --model (0 = embedding layer, -2 = next-to-last); "
                "repeatable, all from one forward pass.",
            ),
            click_options(
                CONTEXTUAL,
                only=[
                    o.name
                    for o in CONTEXTUAL.options
                    if o.name not in exclude and o.name != "tensor_parallel"
                ],
                help_texts=help_texts,
            ),
        ]
    )


def model_specs(opts: dict[str, Any]) -> list[str]:
    """``hf:MODEL@L1,L2`` specs from ``--model`` and ``--layer``."""
    models, layers = opts["models"], opts["layers"]
    if models and not layers:
        raise WeatkitError("--model needs at least one --layer (e.g. --layer 0 --layer -2)")
    if layers and not models:
        raise WeatkitError("--layer is for --model; for --embeddings use hf:MODEL@LAYER")
    if len(set(layers)) != len(layers):
        raise WeatkitError("a --layer is given twice")
    layer_text = ",".join(str(layer) for layer in layers)
    return [_named_model(model) + f"@{layer_text}" for model in models]


def _named_model(text: str) -> str:
    """``NAME=MODEL`` -> ``NAME=hf:MODEL``, ``MODEL`` (or ``hf:MODEL``) -> ``hf:MODEL``; ``=``
    names the model only when the part before it has no path separator (as in ``--embeddings
    NAME=PATH``). A spec of another backend is a one-line :class:`ConfigError`: word vectors
    are an hf: model's layers."""
    head, sep, tail = text.partition("=")
    named = bool(sep and head.strip() and not any(c in head for c in "/\\"))
    spec = parse_model_spec(tail if named else text, option="--model")
    if spec.backend != "hf":
        raise ConfigError(
            f"--model {str(spec)!r}: word vectors come from the layers of an hf: model, not a "
            f"{spec.backend}: one (an embeddings server is --embeddings NAME=openai:BASE_URL#MODEL)"
        )
    return f"{head.strip()}={HF_PREFIX}{spec.model}" if named else HF_PREFIX + spec.model


# --- run-directory filters (export, plot) ---------------------------------------------------

filter_options: Decorator = stack(
    [
        click.option("--test", "tests", multiple=True, help="Tests to keep, e.g. weat1."),
        click.option(
            "--list-set", "list_sets", multiple=True, help="List sets to keep, e.g. ca-weat:v1."
        ),
        click.option("--embeddings", "embeddings", multiple=True, help="Embeddings to keep."),
        click.option(
            "--lang",
            "langs",
            multiple=True,
            help="Languages to keep, in this order in tables and plots.",
        ),
    ]
)
filter_options.__doc__ = "--test, --list-set, --embeddings, --lang (repeatable or comma-separated)."


def filters(opts: dict[str, Any]) -> dict[str, tuple[str, ...] | None]:
    """The run-directory filters of :data:`filter_options` as keyword arguments."""
    flags = {"tests": "--test", "list_sets": "--list-set", "embeddings": "--embeddings",
             "langs": "--lang"}  # fmt: skip
    return {key: split_names(opts[key], flag) or None for key, flag in flags.items()}
