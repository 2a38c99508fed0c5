"""``weatkit iso`` and the isomorphism options shared with ``weatkit run``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli_common import err_console, friendly, split_values
from weatkit.cli_contextual import contextual_from_opts, contextual_options
from weatkit.config.schema import ISO, Source, named_by
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.spec import LANG_PLACEHOLDER, EmbeddingsSpec, parse_embeddings_specs
from weatkit.errors import WeatkitError
from weatkit.isomorphism.measures import (
    CENTER_OVER,
    DEFAULT_N_WORDS,
    MEASURES,
    IsoOptions,
    measure_spaces,
    prepare_space,
    read_word_list,
)
from weatkit.report.tables import render, write_outputs


def iso_options(prefix: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The measure options, named ``--{prefix}measures`` etc. (``prefix`` is "" or "iso-")."""
    key = prefix.replace("-", "_")
    defaults = ", ".join(f"{m}={n}" for m, n in DEFAULT_N_WORDS.items())
    options = [
        click.option(
            f"--{prefix}measures",
            f"{key}measures",
            multiple=True,
            help=f"Isomorphism measures ({', '.join(MEASURES)}); repeatable or comma-separated "
            "[default: ev,gh].",
        ),
        click.option(
            f"--{prefix}n-words",
            f"{key}n_words",
            multiple=True,
            help=f"Words per measure: N for all, or MEASURE=N; repeatable [default: {defaults}].",
        ),
        click.option(
            f"--{prefix}ev-order",
            f"{key}ev_order",
            type=click.Choice(["ascending", "descending"]),
            default="ascending",
            show_default=True,
            help="EV spectrum order: ascending = iso-study code; descending = Søgaard et al.'s "
            "k largest eigenvalues.",
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
            help="Rips on the distance matrix, or on its rows as points (iso-study under gudhi<3).",
        ),
        click.option(
            f"--{prefix}center-over",
            f"{key}center_over",
            type=click.Choice(CENTER_OVER),
            default="all",
            show_default=True,
            help="Mean-centre over all rows of the file (reference) or only the measured words.",
        ),
    ]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


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


def _one_spec(text: str, opts: dict[str, Any], role: str) -> EmbeddingsSpec:
    specs = parse_embeddings_specs(text, contextual_from_opts(opts))
    if len(specs) != 1:
        raise WeatkitError(f"--{role} {text!r}: give one layer (hf:MODEL@LAYER)")
    spec = specs[0]
    if spec.per_language and not opts[f"{role}_lang"]:
        raise WeatkitError(f"--{role} {text!r} contains {LANG_PLACEHOLDER}: give --{role}-lang")
    return spec


@click.command("iso")
@click.option("--src", required=True, help="Source space: PATH, NAME=PATH, glove-6b-50d, hf:M@L.")
@click.option("--tgt", required=True, help="Target space, as --src.")
@click.option("--src-lang", default="", help="Language put in {lang} of --src.")
@click.option("--tgt-lang", default="", help="Language put in {lang} of --tgt.")
@click.option(
    "--src-words",
    type=click.Path(dir_okay=False),
    help="Words of the source space to use, in order (frequency list or a language's "
    "vocabulary in a joint space); required for hf: models.",
)
@click.option("--tgt-words", type=click.Path(dir_okay=False), help="As --src-words, for --tgt.")
@iso_options("")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda[:N] or mps.")
@click.option("--allow-pickle", is_flag=True, help="Allow pickle-based formats.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json"]),
    help="Print the values to stdout in this format instead of the readable table.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Write isomorphism.csv here.",
)
@contextual_options
@friendly
def iso_command(**opts: Any) -> None:
    """Measure how far two embedding spaces are from isomorphic (EV, GH, GW)."""
    if opts["models"] or opts["layers"]:
        raise WeatkitError("weatkit iso takes models as --src/--tgt hf:MODEL@LAYER")
    options = iso_from_opts(opts, "")
    pool = ExtractorPool()
    spaces = []
    for role in ("src", "tgt"):
        spec = _one_spec(opts[role], opts, role)
        words = read_word_list(opts[f"{role}_words"]) if opts[f"{role}_words"] else None
        spaces.append(
            prepare_space(
                spec,
                opts[f"{role}_lang"],
                options,
                words=words,
                extractors=pool,
                allow_pickle=opts["allow_pickle"],
            )
        )
    table = measure_spaces(spaces[0], spaces[1], options)
    if opts["out_dir"]:
        written = write_outputs(opts["out_dir"], {"isomorphism.csv": render(table, "csv")})
        err_console.print(f"wrote {written[0]}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(table[["measure", "value", "n_words"]], opts["fmt"]))
        sys.stdout.flush()
        return
    view = Table(title=f"Isomorphism: {spaces[0].name} vs {spaces[1].name}")
    for col in ("measure", "value", "words (src, tgt)", "detail"):
        view.add_column(col)
    for row in table.itertuples(index=False):
        view.add_row(row.measure, f"{row.value:.6g}", f"{row.n_src}, {row.n_tgt}", row.detail)
    Console().print(view)
