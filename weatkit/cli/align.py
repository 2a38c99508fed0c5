"""``weatkit align``: orthogonal Procrustes alignment of one space onto another."""

from __future__ import annotations

from typing import Any

import click

from weatkit._io.atomic import write_file
from weatkit._io.paths import check_not_input, check_writable
from weatkit.alignment import procrustes_align, read_dictionary
from weatkit.cli.errors import err_console, friendly
from weatkit.cli.options import out_option
from weatkit.config.schema import LOADING, click_options, split_names
from weatkit.embeddings.export import vec_bytes
from weatkit.embeddings.static import load_static


@click.command("align")
@click.option("--src", "src_path", required=True, help="Source embeddings file (all rows).")
@click.option("--tgt", "tgt_path", required=True, help="Target embeddings file (e.g. English).")
@click.option(
    "--dict", "dict_path", required=True, help="Bilingual dictionary, MUSE format (src tgt)."
)
@click.option(
    "--normalize",
    "steps",
    default="",
    help="Steps applied to both spaces before fitting, in order: unit, center "
    "(e.g. unit,center,unit).",
)
@out_option("The aligned source space (.vec).", dest="out_path", file=True, required=True)
@click_options(LOADING, only=["allow_pickle"])
@friendly
def align_command(**opts: Any) -> None:
    """Align a space onto another with orthogonal Procrustes on a bilingual dictionary."""
    out = check_writable(opts["out_path"])
    check_not_input([out], [opts["src_path"], opts["tgt_path"], opts["dict_path"]])
    pairs = read_dictionary(opts["dict_path"])
    source = load_static(opts["src_path"], allow_pickle=opts["allow_pickle"])
    target = load_static(
        opts["tgt_path"], words={t for _, t in pairs}, allow_pickle=opts["allow_pickle"]
    )
    steps = split_names([opts["steps"]] if opts["steps"] else [], "--normalize")  # "": none
    result = procrustes_align(source, target, pairs, normalization=steps)
    written = write_file(out, vec_bytes(result.aligned))
    err_console.print(
        f"fitted on {result.n_pairs} pairs ({result.n_skipped} skipped: a word not in a space), "
        f"RMS residual {result.residual:.4f}; wrote {written} ({len(result.aligned)} words)",
        highlight=False,
        soft_wrap=True,
    )
