"""``weatkit embed``: word vectors of list items from a transformer model, written as .vec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import (
    allow_pickle_option,
    contextual_from_opts,
    contextual_options,
    device_option,
    list_options,
    model_specs,
    out_option,
    progress_option,
    split_values,
)
from weatkit.embeddings.contextual import ContextualExtractor
from weatkit.embeddings.export import vec_bytes
from weatkit.errors import WeatkitError
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.report.tables import write_outputs


@click.command("embed")
@list_options()
@click.option("--lower", is_flag=True, help="Lower-case list items.")
@click.option("--strip-accents", is_flag=True, help="Remove diacritics from list items.")
@device_option()
@allow_pickle_option("Allow pytorch_model.bin weights (a pickle).")
@out_option(
    "The .vec file to write; with several --layer it must contain {layer}.",
    dest="out_path",
    file=True,
    required=True,
)
@progress_option("Progress bar.")
@contextual_options
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
    norm = Normalization(
        lower=opts["lower"], strip_accents=opts["strip_accents"], join_phrases=None
    )
    selection = select_lists(
        split_values(opts["lists"]),
        split_values(opts["langs"]) or None,
        normalization=norm,
        tests=split_values(opts["tests"]) or None,
    )
    words = sorted(set().union(*(t.vocabulary() for t in selection.tests)))
    extractor = ContextualExtractor(opts["models"][0], contextual_from_opts(opts))
    vectors = extractor.extract(words, layers, show_progress=opts["progress"])
    for line in extractor.notes:
        note(line)
    files = {out.replace("{layer}", str(layer)): vec_bytes(vectors[layer]) for layer in layers}
    written = [
        path
        for name, data in files.items()
        for path in write_outputs(Path(name).parent, {Path(name).name: data})
    ]
    stats = extractor.stats
    err_console.print(
        f"{len(words)} items: {stats.n_computed} encoded, {stats.n_cached} from the cache; "
        f"wrote {', '.join(str(p) for p in written)}",
        highlight=False,
        soft_wrap=True,
    )
