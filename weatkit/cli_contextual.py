"""Command-line options for transformer models, shared by the commands that load one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from weatkit.config.schema import CONTEXTUAL, Source, named_by
from weatkit.embeddings.contextual import SUBWORD_POOLING, ContextualOptions
from weatkit.embeddings.spec import HF_PREFIX
from weatkit.errors import WeatkitError
from weatkit.models.hub import DTYPES


def loading_options(batch_size: int, batch_help: str) -> list[Callable[..., Any]]:
    """How a model is loaded and run: ``--dtype``, ``--batch-size``, ``--revision``,
    ``--trust-remote-code`` and ``--cache/--no-cache`` (shared with ``weatkit gest``)."""
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
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
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
        click.option(
            "--device", default="auto", show_default=True, help="auto, cpu, cuda[:N] or mps."
        ),
        *loading_options(32, batch_help),
        click.option(
            "--allow-pickle",
            is_flag=True,
            help="Allow pytorch_model.bin weights (a pickle); safetensors otherwise.",
        ),
        click.option(
            "--progress/--no-progress", default=None, help="Progress bar (default: on a terminal)."
        ),
    ]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


_OPTIONS = [
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


def contextual_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the transformer-model options to a click command."""
    for option in reversed(_OPTIONS):
        func = option(func)
    return func


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
