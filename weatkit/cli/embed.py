"""``weatkit embed``: word vectors of list items from a transformer model, written as .vec."""

from __future__ import annotations

import re
from typing import Any

import click

from weatkit._io.atomic import write_file
from weatkit._io.paths import check_not_input, check_writable
from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import model_options, model_specs, out_option, progress_option
from weatkit.config.run import contextual_from_cli
from weatkit.config.schema import LISTS, click_options, values_from_cli
from weatkit.embeddings.contextual import ContextualExtractor
from weatkit.embeddings.export import vec_bytes
from weatkit.embeddings.spec import HF_PREFIX, parse_embeddings_specs
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.lists.model import natural_key
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists
from weatkit.scoring.options import SERVER_FIELDS

_PLACEHOLDERS = ("{layer}", "{lang}")


def _check_out(out: str) -> None:
    """Only ``{layer}`` and ``{lang}`` may appear in braces in ``--out``."""
    rest = out
    for placeholder in _PLACEHOLDERS:
        rest = rest.replace(placeholder, "")
    if "{" in rest or "}" in rest:
        unknown = re.search(r"\{[^{}]*\}", rest)
        what = f"unknown placeholder {unknown.group(0)}" if unknown else "unbalanced '{' or '}'"
        raise WeatkitError(f"--out {out!r}: {what} (only {{layer}} and {{lang}} are replaced)")


def _subset(vectors: WordVectors, items: set[str]) -> WordVectors:
    """The rows of ``vectors`` whose words are in ``items``, in their order."""
    rows = [i for i, word in enumerate(vectors.words) if word in items]
    return WordVectors(
        name=vectors.name,
        words=[vectors.words[i] for i in rows],
        vectors=vectors.vectors[rows],
        source=vectors.source,
        n_rows_in_source=vectors.n_rows_in_source,
    )


@click.command("embed")
@click_options(
    LISTS,
    only=("lists", "langs", "tests", "lower", "strip_accents"),
    help_texts={"lower": "Lower-case list items."},
    defaults={"lower": False},
)
@out_option(
    "The .vec file to write; with several --layer it must contain {layer}. {lang} writes one "
    "file per selected language (that language's items); without it one file has all items.",
    dest="out_path",
    file=True,
    required=True,
)
@progress_option()
@model_options(
    exclude=SERVER_FIELDS,  # word vectors of an hf: model only
    help_texts={"allow_pickle": "Allow pytorch_model.bin weights (a pickle)."},
)
@friendly
def embed_command(**opts: Any) -> None:
    """Encode list items with a transformer model and write them as .vec files.

    Multi-word items are written with "_" for their spaces (the .vec format splits on spaces).
    """
    specs = model_specs(opts)
    if len(specs) != 1:
        raise WeatkitError("weatkit embed takes exactly one --model")
    model = parse_embeddings_specs(specs[0])[0].location.removeprefix(HF_PREFIX)
    layers = list(opts["layers"])
    out = opts["out_path"]
    _check_out(out)
    if len(layers) > 1 and "{layer}" not in out:
        raise WeatkitError("--out must contain {layer} when several --layer are given")
    chosen = values_from_cli(LISTS, opts)
    norm = Normalization(
        lower=chosen["lower"], strip_accents=chosen["strip_accents"], join_phrases=None
    )
    selection = select_lists(
        chosen["lists"], chosen["langs"], normalization=norm, tests=chosen["tests"]
    )
    by_lang: dict[str, set[str]] = {}
    for test in selection.tests:
        by_lang.setdefault(test.lang, set()).update(test.vocabulary())
    words = sorted(set().union(*by_lang.values()))
    if "{lang}" in out:
        groups = {lang: by_lang[lang] for lang in sorted(by_lang, key=natural_key)}
    else:
        groups = {"": set(words)}
    targets = {  # every output checked before the model is loaded
        (lang, layer): check_writable(out.replace("{layer}", str(layer)).replace("{lang}", lang))
        for lang in groups
        for layer in layers
    }
    check_not_input(targets.values(), chosen["lists"])
    extractor = ContextualExtractor(model, contextual_from_cli(opts))
    vectors = extractor.extract(words, layers, show_progress=opts["progress"])
    for line in extractor.notes:
        note(line)
    written = [
        write_file(target, vec_bytes(_subset(vectors[layer], groups[lang])))
        for (lang, layer), target in targets.items()
    ]
    stats = extractor.stats
    err_console.print(
        f"{len(words)} items: {stats.n_computed} encoded, {stats.n_cached} from the cache; "
        f"wrote {', '.join(str(p) for p in written)}",
        highlight=False,
        soft_wrap=True,
    )
