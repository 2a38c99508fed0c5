"""The options several ``weatkit`` commands share, each declared once here.

* output: :func:`out_option` (``--out``), :func:`format_option` (``--format``, one choice set,
  :data:`~weatkit.report.tables.FORMATS`: the table printed to stdout in that format instead of
  the readable table), :func:`progress_option`;
* devices and models: :func:`device_option`, :func:`allow_pickle_option`,
  :func:`loading_options`, :func:`contextual_options` (word vectors of a transformer),
  :func:`language_model_options` (sentence scorers), and :func:`contextual_from_opts` /
  :func:`model_specs` that turn them into library options;
* which tests: :func:`list_options` (``--lists``, ``--lang``, ``--test``);
* isomorphism: :func:`iso_options` / :func:`iso_from_opts` (``weatkit iso`` and ``run``);
* run-directory filters: :func:`filter_options` / :func:`filters` (``export`` and ``plot``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from weatkit.config.schema import CONTEXTUAL, ISO, Source, named_by
from weatkit.embeddings.contextual import SUBWORD_POOLING, ContextualOptions
from weatkit.embeddings.spec import HF_PREFIX
from weatkit.errors import WeatkitError
from weatkit.isomorphism.measures import CENTER_OVER, DEFAULT_N_WORDS, MEASURES, IsoOptions
from weatkit.models.hub import DTYPES
from weatkit.report.tables import FORMATS

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _stack(options: Sequence[Decorator]) -> Decorator:
    """One decorator applying ``options`` so that ``--help`` lists them in this order."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def split_values(values: Sequence[str]) -> tuple[str, ...]:
    """Repeatable options that also accept comma-separated values."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


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
            and reports a wrong one as a one-line error, as ``export`` does); the choices are
            still listed in ``--help``.
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
    )


def progress_option(
    help_text: str = "Progress bars (default: when stderr is a terminal).",
) -> Decorator:
    """``--progress/--no-progress`` (None: when stderr is a terminal)."""
    return click.option("--progress/--no-progress", default=None, help=help_text)


# --- devices and models ---------------------------------------------------------------------


def device_option() -> Decorator:
    """``--device``: auto, cpu, cuda[:N] or mps."""
    return click.option(
        "--device", default="auto", show_default=True, help="auto, cpu, cuda[:N] or mps."
    )


def allow_pickle_option(
    help_text: str = "Allow pickle-based formats (gensim .kv, pytorch_model.bin weights).",
) -> Decorator:
    """``--allow-pickle``: pickle-based files are refused unless given."""
    return click.option("--allow-pickle", is_flag=True, help=help_text)


def loading_options(batch_size: int, batch_help: str) -> list[Decorator]:
    """How a model is loaded and run: ``--dtype``, ``--batch-size``, ``--revision``,
    ``--trust-remote-code`` and ``--cache/--no-cache``."""
    return [
        click.option(
            "--dtype",
            type=click.Choice(list(DTYPES)),
            default="float32",
            show_default=True,
            help="Model weights' dtype.",
        ),
        click.option(
            "--batch-size",
            type=click.IntRange(min=1),
            default=batch_size,
            show_default=True,
            help=batch_help,
        ),
        click.option("--revision", help="Hub revision (branch, tag or commit) of hub models."),
        click.option(
            "--trust-remote-code",
            is_flag=True,
            help="Allow models that run code from their repository (only for models you trust).",
        ),
        click.option(
            "--cache/--no-cache",
            "use_cache",
            default=True,
            show_default=True,
            help="Reuse and store computed vectors and scores in the on-disk cache.",
        ),
    ]


def language_model_options(
    model_help: str, batch_help: str, *, required: bool = False, kind: bool = False
) -> Decorator:
    """``--model`` (and ``--kind``), ``--device``, :func:`loading_options`, ``--allow-pickle``
    and ``--progress``: the options of the commands that score sentences with a language model
    (``gest``, ``stereoset``, ``crows``, ``mbe``)."""
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
        device_option(),
        *loading_options(32, batch_help),
        allow_pickle_option("Allow pytorch_model.bin weights (a pickle); safetensors otherwise."),
        progress_option("Progress bar (default: on a terminal)."),
    ]
    return _stack(options)


#: ``--model``/``--layer`` and pooling options of the commands that take word vectors from a
#: transformer (``run``, ``embed``, ``iso``).
_CONTEXTUAL = [
    click.option(
        "--model",
        "models",
        multiple=True,
        help="Hugging Face model (hub id or local directory) to take word vectors from; "
        "repeatable. Same as --embeddings hf:MODEL@LAYERS.",
    ),
    click.option(
        "--layer",
        "layers",
        type=int,
        multiple=True,
        help="Hidden-state layer of --model (0 = embedding layer, -2 = next-to-last); "
        "repeatable, all from one forward pass.",
    ),
    click.option(
        "--subwords",
        type=click.Choice(SUBWORD_POOLING),
        default="sum",
        show_default=True,
        help="How an item's sub-word vectors are pooled (sum = CA-WEAT).",
    ),
    click.option(
        "--special-tokens/--no-special-tokens",
        default=True,
        show_default=True,
        help="Encode items with the model's special tokens ([CLS] w [SEP], <s> w </s>, BOS).",
    ),
    click.option(
        "--template",
        help='Embed each item in a sentence, e.g. "This is {}."; only its tokens are pooled.',
    ),
    *loading_options(64, "Items per forward pass."),
]

contextual_options: Decorator = _stack(_CONTEXTUAL)
contextual_options.__doc__ = "Add the transformer-model options to a click command."


def contextual_from_opts(opts: dict[str, Any]) -> ContextualOptions:
    """The :class:`ContextualOptions` given on the command line (``--device`` included;
    pooling options absent from a command keep their defaults)."""
    default = ContextualOptions()
    options = ContextualOptions(
        subwords=opts.get("subwords", default.subwords),
        special_tokens=opts.get("special_tokens", default.special_tokens),
        template=opts.get("template", default.template),
        dtype=opts["dtype"],
        batch_size=opts["batch_size"],
        device=opts["device"],
        revision=opts["revision"],
        trust_remote_code=opts["trust_remote_code"],
        allow_pickle=opts.get("allow_pickle", False),
        cache=opts["use_cache"],
    )
    with named_by(Source.command_line(), CONTEXTUAL):  # messages name the flags
        options.validate()
    return options


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
    return [f"{HF_PREFIX}{model}@{layer_text}" for model in models]


# --- which tests ----------------------------------------------------------------------------


def list_options(default_lists: Sequence[str] | None = ("ca-weat",), when: str = "") -> Decorator:
    """``--lists``, ``--lang`` and ``--test``: which tests, and so which items, a command uses.

    Args:
        default_lists: ``--lists`` default (None: no default, e.g. when a run directory's
            manifest says which lists).
        when: prefix of the help texts (e.g. ``"Without RUN_DIR: "``).
    """
    return _stack(
        [
            click.option(
                "--lists",
                "lists",
                multiple=True,
                default=list(default_lists) if default_lists else None,
                show_default=bool(default_lists),
                help=f"{when}list sets (weat, ca-weat, ca-weat:v3, x-weat, caliskan) or list "
                "files (.json/.yaml/.tsv); repeatable or comma-separated.",
            ),
            click.option(
                "--lang",
                "langs",
                multiple=True,
                help="Languages or list ids to keep (default: all); repeatable or "
                "comma-separated.",
            ),
            click.option("--test", "tests", multiple=True, help="Test ids to keep, e.g. weat1."),
        ]
    )


# --- isomorphism ----------------------------------------------------------------------------


def iso_options(prefix: str) -> Decorator:
    """The measure options, named ``--{prefix}measures`` etc. (``prefix`` is "" or "iso-")."""
    key = prefix.replace("-", "_")
    defaults = ", ".join(f"{m}={n}" for m, n in DEFAULT_N_WORDS.items())
    return _stack(
        [
            click.option(
                f"--{prefix}measures",
                f"{key}measures",
                multiple=True,
                help=f"Isomorphism measures ({', '.join(MEASURES)}); repeatable or "
                "comma-separated [default: ev,gh].",
            ),
            click.option(
                f"--{prefix}n-words",
                f"{key}n_words",
                multiple=True,
                help="Words per measure: N for all, or MEASURE=N; repeatable "
                f"[default: {defaults}].",
            ),
            click.option(
                f"--{prefix}ev-order",
                f"{key}ev_order",
                type=click.Choice(["ascending", "descending"]),
                default="ascending",
                show_default=True,
                help="EV spectrum order: ascending = iso-study code; descending = Søgaard et "
                "al.'s k largest eigenvalues.",
            ),
            click.option(
                f"--{prefix}gh-dims",
                f"{key}gh_dims",
                default="0",
                show_default=True,
                help="Homology dimensions for GH: 0 (reference) or 0,1.",
            ),
            click.option(
                f"--{prefix}gh-points",
                f"{key}gh_points",
                type=click.Choice(["distances", "distance-rows"]),
                default="distances",
                show_default=True,
                help="Rips on the distance matrix, or on its rows as points (iso-study under "
                "gudhi<3).",
            ),
            click.option(
                f"--{prefix}center-over",
                f"{key}center_over",
                type=click.Choice(CENTER_OVER),
                default="all",
                show_default=True,
                help="Mean-centre over all rows of the file (reference) or only the measured "
                "words.",
            ),
        ]
    )


def iso_from_opts(opts: dict[str, Any], prefix: str) -> IsoOptions:
    """:class:`IsoOptions` from the parsed options of :func:`iso_options`."""
    key = prefix.replace("-", "_")
    measures = split_values(opts[f"{key}measures"]) or IsoOptions().measures
    n_words = dict(DEFAULT_N_WORDS)
    for entry in split_values(opts[f"{key}n_words"]):
        name, sep, value = entry.rpartition("=")
        targets = [name.strip()] if sep else list(MEASURES)
        try:
            count = int(value)
        except ValueError:
            raise WeatkitError(f"--{prefix}n-words {entry!r}: expected N or MEASURE=N") from None
        for target in targets:
            if target not in MEASURES:
                raise WeatkitError(f"--{prefix}n-words {entry!r}: unknown measure {target!r}")
            n_words[target] = count
    try:
        dims = tuple(int(d) for d in split_values([opts[f"{key}gh_dims"]]))
    except ValueError:
        raise WeatkitError(f"--{prefix}gh-dims must be 0 or 0,1") from None
    if not dims or not set(dims) <= {0, 1}:
        raise WeatkitError(f"--{prefix}gh-dims must be 0 or 0,1")
    options = IsoOptions(
        measures=measures,
        n_words=n_words,
        ev_order=opts[f"{key}ev_order"],
        gh_dims=dims,
        gh_points=opts[f"{key}gh_points"],
        center_over=opts[f"{key}center_over"],
        device=opts["device"],
    )
    with named_by(Source.command_line(prefix), ISO):  # messages name the flags
        options.validate()
    return options


# --- run-directory filters (export, plot) ---------------------------------------------------

filter_options: Decorator = _stack(
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
    keys = ("tests", "list_sets", "embeddings", "langs")
    return {key: split_values(opts[key]) or None for key in keys}
