"""``weatkit iso``: how far two embedding spaces are from isomorphic (EV, GH, GW)."""

from __future__ import annotations

import sys
from dataclasses import fields
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly
from weatkit.cli.options import format_option, model_options, out_option
from weatkit.config.run import contextual_from_cli, iso_from_cli
from weatkit.config.schema import ISO, click_options
from weatkit.embeddings.spec import LANG_PLACEHOLDER, EmbeddingsSpec, parse_embeddings_specs
from weatkit.errors import WeatkitError
from weatkit.isomorphism import iso
from weatkit.isomorphism.measures import read_word_list
from weatkit.report.tables import render, write_outputs


def _one_spec(text: str, opts: dict[str, Any], role: str) -> EmbeddingsSpec:
    specs = parse_embeddings_specs(text, contextual_from_cli(opts))
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
@click_options(ISO)
@format_option("Print the values to stdout in this format instead of the readable table.")
@out_option("Write isomorphism.csv here.")
@model_options(help_texts={"allow_pickle": "Allow pickle-based formats."})
@friendly
def iso_command(**opts: Any) -> None:
    """Measure how far two embedding spaces are from isomorphic (EV, GH, GW)."""
    if opts["models"] or opts["layers"]:
        raise WeatkitError("weatkit iso takes models as --src/--tgt hf:MODEL@LAYER")
    options = iso_from_cli(opts)
    table = iso(
        _one_spec(opts["src"], opts, "src"),
        _one_spec(opts["tgt"], opts, "tgt"),
        src_lang=opts["src_lang"],
        tgt_lang=opts["tgt_lang"],
        src_words=read_word_list(opts["src_words"]) if opts["src_words"] else None,
        tgt_words=read_word_list(opts["tgt_words"]) if opts["tgt_words"] else None,
        allow_pickle=opts["allow_pickle"],
        **{field.name: getattr(options, field.name) for field in fields(options)},
    )
    if opts["out_dir"]:
        written = write_outputs(opts["out_dir"], {"isomorphism.csv": render(table, "csv")})
        err_console.print(f"wrote {written[0]}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(table[["measure", "value", "n_words"]], opts["fmt"]))
        sys.stdout.flush()
        return
    names = table.iloc[0]
    view = Table(title=f"Isomorphism: {names['src']} vs {names['tgt']}")
    for col in ("measure", "value", "words (src, tgt)", "detail"):
        view.add_column(col)
    for row in table.itertuples(index=False):
        view.add_row(row.measure, f"{row.value:.6g}", f"{row.n_src}, {row.n_tgt}", row.detail)
    Console().print(view)
