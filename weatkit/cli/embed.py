"""``weatkit embed``: word vectors of list items from a transformer model, written as .vec."""

from __future__ import annotations

from typing import Any

import click

from weatkit._io.paths import check_writable
from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import model_options, model_specs, out_option, progress_option
from weatkit.config.run import contextual_from_cli
from weatkit.config.schema import LISTS, click_options, values_from_cli
from weatkit.embeddings.contextual import ContextualExtractor
from weatkit.embeddings.export import vec_bytes
from weatkit.errors import WeatkitError
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.report.tables import write_outputs


@click.command("embed")
@click_options(
    LISTS,
    only=("lists", "langs", "tests", "lower", "strip_accents"),
    help_texts={"lower": "Lower-case list items."},
    defaults={"lower": False},
)
@out_option(
    "The .vec file to write; with several --layer it must contain {layer}.",
    dest="out_path",
    file=True,
    required=True,
)
@progress_option("Progress bar.")
@model_options(help_texts={"allow_pickle": "Allow pytorch_model.bin weights (a pickle)."})
@friendly
def embed_command(**opts: Any) -> None:
    """Encode list items with a transformer model and write them as .vec files.

    Multi-word items are written with "_" for their spaces (the .vec format splits on spaces).
    """
    specs = model_specs(opts)
    if len(specs) != 1:
        raise WeatkitError("weatkit embed takes exactly one --model")
    layers = list(opts["layers"])
    out = opts["out_path"]
    if len(layers) > 1 and "{layer}" not in out:
        raise WeatkitError("--out must contain {layer} when several --layer are given")
    targets = {layer: check_writable(out.replace("{layer}", str(layer))) for layer in layers}
    chosen = values_from_cli(LISTS, opts)
    norm = Normalization(
        lower=chosen["lower"], strip_accents=chosen["strip_accents"], join_phrases=None
    )
    selection = select_lists(
        chosen["lists"], chosen["langs"], normalization=norm, tests=chosen["tests"]
    )
    words = sorted(set().union(*(t.vocabulary() for t in selection.tests)))
    extractor = ContextualExtractor(opts["models"][0], contextual_from_cli(opts))
    vectors = extractor.extract(words, layers, show_progress=opts["progress"])
    for line in extractor.notes:
        note(line)
    written = [
        path
        for layer, target in targets.items()
        for path in write_outputs(target.parent, {target.name: vec_bytes(vectors[layer])})
    ]
    stats = extractor.stats
    err_console.print(
        f"{len(words)} items: {stats.n_computed} encoded, {stats.n_cached} from the cache; "
        f"wrote {', '.join(str(p) for p in written)}",
        highlight=False,
        soft_wrap=True,
    )
