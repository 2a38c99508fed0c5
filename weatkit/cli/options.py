"""The options of the ``weatkit`` commands that only the command line has, each declared once.

The options of a run (engine, lists and normalisation, loading, transformer encoding,
isomorphism) are not declared here: they come from :mod:`weatkit.config.schema`
(:func:`~weatkit.config.schema.click_options`), the declarations files are read by too, and
are turned into library options by :mod:`weatkit.config.run`, so a bad value gives the same
message on the command line (naming the flag) as in a file (naming the key).

* output: :func:`out_option` (``--out``), :func:`format_option` (``--format``, one choice set,
  :data:`~weatkit.report.tables.FORMATS`: the table printed to stdout in that format instead of
  the readable table), :func:`progress_option` (``--progress/--no-progress``, one declaration);
* sentence measures: :func:`resampling_options` (``--bootstrap``, ``--seed``,
  ``--confidence``), :func:`seed_option` (``--seed``, also of ``mbe``), :func:`controls_option`
  (``--controls[=KINDS]`` of ``crows`` and ``stereoset``), :func:`limit_option` (``--limit N``,
  the schema's :data:`SAMPLE`), :func:`log_items_option` (``--log-items[=FORMAT]``, the
  schema's :data:`ITEM_LOG`) and :func:`item_log_file`;
* models: :func:`model_options` (``--model``/``--layer`` and the schema's transformer options:
  word vectors of a transformer), :func:`language_model_options` (sentence scorers) and
  :func:`model_specs`;
* run-directory filters: :func:`filter_options` / :func:`filters` (``export`` and ``plot``);

Where a study's jobs run and where its outputs are logged (``--executor``, ``--mlflow``) are in
:mod:`weatkit.cli.study_options`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from weatkit.cli.errors import fail, note
from weatkit.config.schema import (
    CONTEXTUAL,
    ITEM_LOG,
    SAMPLE,
    click_options,
    options_from_cli,
    split_names,
)
from weatkit.embeddings.spec import HF_PREFIX
from weatkit.errors import ConfigError, WeatkitError
from weatkit.report.tables import FORMATS
from weatkit.scoring.spec import parse_model_spec

if TYPE_CHECKING:
    from weatkit.stats.sampling import ItemSample

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


def resampling_options(
    *, n_bootstrap: int, seed: int, confidence_level: float, bootstrap_help: str
) -> Decorator:
    """``--bootstrap``, ``--seed`` and ``--confidence`` of a sentence measure's percentile
    bootstrap (:mod:`weatkit.stats.resampling`), with the measure's defaults."""
    return stack(
        [
            click.option(
                "--bootstrap",
                "n_bootstrap",
                type=click.IntRange(min=0),
                default=n_bootstrap,
                show_default=True,
                help=bootstrap_help,
                callback=_plan_fits,
            ),
            seed_option("Seed of the bootstrap resamples.", seed),
            click.option(
                "--confidence",
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                default=confidence_level,
                show_default=True,
            ),
        ]
    )


def seed_option(help_text: str, default: int = 0) -> Decorator:
    """``--seed`` of a sentence command: a non-negative integer (a numpy seed), checked when
    parsed (the word-level engine's is declared in :data:`weatkit.config.schema.ENGINE`)."""
    return click.option(
        "--seed", type=click.IntRange(min=0), default=default, show_default=True, help=help_text
    )


def _plan_fits(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Refuse an absurd ``--bootstrap`` before any work (:func:`check_plan_size`)."""
    from weatkit.stats.resampling import check_plan_size

    try:
        check_plan_size(value, (1,))
    except ConfigError as err:
        raise click.BadParameter(err.problem, ctx, param) from None
    return value


def controls_option(help_text: str) -> Decorator:
    """``--controls[=KINDS]``: also score the measure's control sets (Pikuliak et al. 2023) —
    all of them when no value is given (or ``all``), else the comma-separated KINDS, which the
    library checks. The command receives ``controls``: None (not given), True (all) or the
    tuple of kinds."""
    return click.option(
        "--controls",
        "controls",
        is_flag=False,
        flag_value="all",
        default=None,
        metavar="[KINDS]",
        help=help_text,
        callback=_control_kinds,
    )


def _control_kinds(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> bool | tuple[str, ...] | None:
    if value is None:
        return None
    try:
        kinds = split_names([value], "--controls")
    except ConfigError as err:  # ',,': no kind, not all of them
        fail(str(err))
    return True if kinds == ("all",) else kinds


def limit_option(what: str) -> Decorator:
    """``--limit N``: the schema's :data:`~weatkit.config.schema.SAMPLE` option (a compare
    file's ``limit``), read while parsing so that 0, -3 or 2.5 is a one-line error naming the
    flag; the command receives ``limit`` (None or N ≥ 1). ``what`` names the items and strata of
    the command (``pairs, stratified by bias type``)."""
    option = SAMPLE["limit"]
    return click.option(
        option.flag,
        "limit",
        metavar="N",
        default=None,
        help=f"With --model: {option.help} Here: {what}.",
        callback=_limit,
    )


def _limit(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    from weatkit.stats.sampling import SampleOptions

    try:
        return options_from_cli(SampleOptions, SAMPLE, {"limit": value}).limit
    except ConfigError as err:
        fail(str(err))


def log_items_option() -> Decorator:
    """``--log-items[=FORMAT]``: the schema's :data:`~weatkit.config.schema.ITEM_LOG` option (a
    compare file's ``log_items``), read while parsing so that an unknown format is a one-line
    error naming the flag; the command receives ``log_items`` (None, ``parquet`` when given
    without a value, or ``csv``)."""
    option = ITEM_LOG["log_items"]
    return click.option(
        option.flag,
        "log_items",
        is_flag=False,
        flag_value=option.choices[0],
        default=None,
        metavar=f"[{'|'.join(option.choices)}]",
        help=f"With --out: {option.help}",
        callback=_log_items,
    )


def _log_items(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from weatkit.items.log import ItemLogOptions

    try:
        return options_from_cli(ItemLogOptions, ITEM_LOG, {"log_items": value}).log_items
    except ConfigError as err:
        fail(str(err))


def check_log_items(opts: Mapping[str, Any]) -> None:
    """Refuse ``--log-items`` without ``--out`` (before any scoring)."""
    if opts["log_items"] and not opts["out_dir"]:
        raise WeatkitError(
            f"--log-items writes items.{opts['log_items']} into the output directory: give "
            "--out DIR"
        )


def item_log_file(opts: Mapping[str, Any], build: Callable[[], Any]) -> dict[str, bytes]:
    """``{"items.FORMAT": ...}`` of ``--log-items`` from the per-item table ``build()`` makes
    (:mod:`weatkit.items.log`), or {} without the option: written with the command's other
    files, all at once."""
    from weatkit.items.log import item_log_files

    if not opts["log_items"]:
        return {}
    return item_log_files(build(), opts["log_items"])


def sample_note(sample: ItemSample | None) -> None:
    """The ``note:`` line of a ``--limit`` sample, printed before scoring (none without one)."""
    if sample is not None:
        note(f"scoring a {sample.describe()} (--limit)")


def manifest_file(
    command: str, sample: ItemSample | None, log_items: str | None, **entries: Any
) -> dict[str, bytes]:
    """``{"manifest.json": ...}``: what a sentence command writes beside its tables with
    ``--out``, always, so that ``weatkit report`` can tell what wrote the directory. It records
    the ``command`` (``weatkit crows``), the ``weatkit_version``, ``log_items`` (the per-item
    log's format, None without one), the ``--limit`` sample
    (:meth:`~weatkit.stats.sampling.ItemSample.to_dict`), the ``entries`` that are not None
    (``compat``: a preset's values) and the batch sizes ``--batch-size auto`` ran at
    (``batch_size_used``: ``{model: N}``)."""
    import weatkit
    from weatkit.models.batching import auto_batch_sizes
    from weatkit.report.tables import manifest_bytes

    given = {k: v for k, v in entries.items() if v is not None}
    asked_auto = (given.get("contextual") or {}).get("batch_size") == "auto"
    if asked_auto and auto_batch_sizes():  # not another command's of this process
        given["batch_size_used"] = auto_batch_sizes()
    if sample is not None:
        given["sample"] = sample.to_dict()
    head = {
        "command": f"weatkit {command}",
        "weatkit_version": weatkit.__version__,
        "log_items": log_items,
    }
    return {"manifest.json": manifest_bytes({**head, **given})}


def scoring_conventions(seen: Mapping[str, Any]) -> dict[str, dict[str, str]] | None:
    """What a run's causal scores include (``seen``: the counts of a
    :func:`weatkit.scoring.conventions.recording` block around its scoring; whether a text's
    first token has a log-probability; how embeddings pool), for its manifest's
    ``scoring_conventions``; a ``note:`` line for each model that differs from ``hf:`` models
    (:func:`weatkit.scoring.conventions.notes`). None when nothing was recorded."""
    from weatkit.scoring.conventions import notes, summarize

    found = summarize(dict(seen))
    for line in notes(found):
        note(line)
    return found or None


def model_record(opts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The loading options of a ``--model`` run (batch size, dtype, device…) as its manifest's
    ``contextual`` records them (``compare``'s too); None without ``--model``. The batch size is
    not part of the score cache's key (docs/guides/caching.md), so this says which batch size
    computed what the run did not find in the cache."""
    if not opts.get("model"):
        return None
    from dataclasses import asdict

    from weatkit.embeddings.contextual import ContextualOptions

    return asdict(options_from_cli(ContextualOptions, CONTEXTUAL, opts))


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


# --- sentence-measure conventions ---------------------------------------------------------


def compat_option(command: str) -> Decorator:
    """``--compat PRESET``: the option values that reproduce a reference tool's code, from
    :data:`weatkit.measures.compat.SENTENCE_PRESETS` (options given explicitly still win);
    :func:`compat_values` applies it."""
    from weatkit.measures.compat import SENTENCE_PRESETS

    presets = SENTENCE_PRESETS[command]
    return click.option(
        "--compat",
        type=click.Choice(list(presets)),
        help="Reproduce a reference tool's conventions: "
        + "; ".join(
            f"{name} = {', '.join(f'{k}={v}' for k, v in values.items())}"
            for name, values in presets.items()
        )
        + " (options given explicitly win; docs/guides/compat.md).",
    )


def compat_values(command: str, opts: dict[str, Any]) -> dict[str, Any]:
    """``opts`` with its ``--compat`` preset applied to the options not given on the command
    line; prints the one ``compat NAME: ...`` line to stderr."""
    from weatkit.cli.errors import err_console
    from weatkit.measures.compat import apply_preset, preset_line

    preset = opts.get("compat")
    if preset is None:
        return opts
    ctx = click.get_current_context()
    explicit = {
        name
        for name in opts
        if ctx.get_parameter_source(name)
        not in (None, click.core.ParameterSource.DEFAULT, click.core.ParameterSource.DEFAULT_MAP)
    }
    values = apply_preset(command, preset, explicit, opts)
    line = preset_line(command, preset, values)
    err_console.print(line, markup=False, highlight=False, soft_wrap=True)
    return values


def stereoset_scoring_options() -> Decorator:
    """``--blanks``, ``--bos-pass``, ``--leading-space/--no-leading-space``: the fields of
    :class:`weatkit.stereoset.scoring.StereosetScoring` (its docstring says what each does)."""
    return stack(
        [
            click.option(
                "--blanks",
                type=click.Choice(["last", "all"]),
                default="last",
                show_default=True,
                help="With --model, masked LMs: a context with several BLANKs gets the mask at "
                "the last and the word in the others (last), or the mask in all, the first read "
                "(all: the reference).",
            ),
            click.option(
                "--bos-pass",
                type=click.Choice(["joint", "separate"]),
                default="joint",
                show_default=True,
                help="With --model, causal LMs: every token conditioned on the BOS in one pass "
                "(joint), or the first token from a BOS-only pass and the rest from the "
                "sentence without the BOS (separate: the reference).",
            ),
            click.option(
                "--leading-space/--no-leading-space",
                default=False,
                show_default=True,
                help="With --model, masked LMs: tokenise the candidate word with the space "
                "before its BLANK (the bias-bench fix of the reference's RoBERTa scores: Ġword, "
                "not word); WordPiece tokenisations do not change.",
            ),
        ]
    )
