"""The ``weatkit`` command line. It parses options, builds a plan and hands it to the library."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.table import Table

import weatkit
from weatkit.alignment import procrustes_align, read_dictionary
from weatkit.cli_asymmetry import asymmetry_command
from weatkit.cli_common import err_console, friendly, list_options, note, split_values
from weatkit.cli_compare import compare_command
from weatkit.cli_contextual import contextual_from_opts, contextual_options, model_specs
from weatkit.cli_crows import crows_command
from weatkit.cli_gest import gest_command
from weatkit.cli_grid import grid_command
from weatkit.cli_isomorphism import iso_command, iso_from_opts, iso_options
from weatkit.cli_mbe import mbe_command
from weatkit.cli_report import export_command, plot_command
from weatkit.cli_stereoset import stereoset_command
from weatkit.cli_tables import rich_correlations, rich_summary
from weatkit.cli_train import train_command
from weatkit.config.schema import ENGINE, LISTS, LOADING, Source, named_by
from weatkit.embeddings.contextual import ContextualExtractor
from weatkit.embeddings.export import vec_bytes
from weatkit.embeddings.static import load_static
from weatkit.engine.similarity import METRICS
from weatkit.engine.weat import ALTERNATIVES, CI_METHODS, EngineOptions
from weatkit.errors import WeatkitError
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import LIST_SETS, load_list_set, select_lists
from weatkit.pipeline import RunConfig, RunResult, run
from weatkit.report.tables import FORMATS, manifest_bytes, render, write_outputs

# Presets that reproduce a reference tool's conventions (explicit options still win).
COMPAT_PRESETS: dict[str, dict[str, Any]] = {
    "caliskan": {"ddof": 1, "metric": "cosine", "equalize": "none", "alternative": "greater"},
    "ca-weat": {"ddof": 0, "metric": "cosine", "equalize": "truncate"},
    "xweat": {"ddof": 0, "metric": "cosine", "equalize": "truncate"},
    "wefe": {"ddof": 0, "metric": "cosine", "equalize": "none"},
}

_MAX_SKIPPED_SHOWN = 3


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(weatkit.__version__, prog_name="weatkit")
def main() -> None:
    """weatkit: word-embedding association tests (WEAT, X-WEAT, CA-WEAT) across languages."""


@main.command("run")
@list_options()
@click.option(
    "--embeddings",
    "embeddings",
    multiple=True,
    default=["glove-6b-50d"],
    show_default=True,
    help="NAME=PATH (PATH may contain {lang}), a path, glove-6b-50d, or a transformer "
    "model NAME=hf:MODEL@LAYERS (e.g. XLM-R11=hf:xlm-roberta-large@11); repeatable.",
)
@click.option(
    "--lower/--no-lower",
    default=None,
    help="Lower-case list items (default: only for uncased embeddings such as GloVe).",
)
@click.option("--strip-accents", is_flag=True, help="Remove diacritics from list items.")
@click.option(
    "--min-coverage",
    type=float,
    default=0.8,
    show_default=True,
    help="Fraction of each set's items that must be in the vocabulary.",
)
@click.option(
    "--equalize",
    type=click.Choice(["none", "truncate", "subsample"]),
    default="none",
    show_default=True,
    help="Equalise set sizes after OOV removal.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail on the first test with too low coverage instead of skipping it.",
)
@click.option("--metric", type=click.Choice(METRICS), default="cosine", show_default=True)
@click.option(
    "--ddof",
    type=click.IntRange(0, 1),
    default=1,
    show_default=True,
    help="Std of Cohen's d: 1 = Caliskan et al.; 0 = WEFE, XWEAT, CA-WEAT code.",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=5000,
    show_default=True,
    help="Bootstrap resamples for the CIs (0: off).",
)
@click.option(
    "--permutations",
    type=click.IntRange(min=0),
    default=10000,
    show_default=True,
    help="Monte Carlo permutations for the p-value (0: off).",
)
@click.option(
    "--max-exact",
    type=click.IntRange(min=0),
    default=1_000_000,
    show_default=True,
    help="Enumerate all splits of X∪Y when there are at most this many.",
)
@click.option(
    "--alternative", type=click.Choice(ALTERNATIVES), default="greater", show_default=True
)
@click.option(
    "--ci", "ci_method", type=click.Choice(CI_METHODS), default="percentile", show_default=True
)
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda[:N] or mps.")
@click.option(
    "--compat",
    type=click.Choice(sorted(COMPAT_PRESETS)),
    help="Use a reference tool's conventions (ddof, equalisation, ...).",
)
@click.option("--allow-pickle", is_flag=True, help="Allow pickle-based formats (gensim .kv).")
@click.option(
    "--fasttext-oov", is_flag=True, help="Build vectors of OOV words from fastText .bin sub-words."
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Write results.csv, summary.csv and manifest.json here.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="Print a table to stdout in this format instead of the readable table.",
)
@click.option(
    "--table",
    type=click.Choice(["results", "summary", "isomorphism", "correlations"]),
    default="results",
    show_default=True,
    help="Which table --format prints.",
)
@click.option("--verbose", "-v", is_flag=True, help="Show every normalisation note.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bars (default: when stderr is a terminal).",
)
@click.option(
    "--isomorphism",
    metavar="LANG",
    help="Add EV/GH isomorphism of each language's space to LANG's (e.g. en) to the summary, "
    "and their correlation with effect sizes.",
)
@click.option(
    "--iso-words",
    help="Word list per language, PATH with {lang}: each language's vocabulary for spaces "
    "shared by all languages (joint files, hf: models).",
)
@iso_options("iso-")
@contextual_options
@click.pass_context
@friendly
def run_command(ctx: click.Context, **opts: Any) -> None:
    """Run association tests and print or write the results."""
    if opts["compat"]:
        for key, value in COMPAT_PRESETS[opts["compat"]].items():
            if ctx.get_parameter_source(key) != ParameterSource.COMMANDLINE:
                opts[key] = value
    with named_by(Source.command_line(), ENGINE):  # messages name the flags
        engine = EngineOptions(
            metric=opts["metric"],
            ddof=opts["ddof"],
            n_bootstrap=opts["bootstrap"],
            n_permutations=opts["permutations"],
            max_exact=opts["max_exact"],
            alternative=opts["alternative"],
            ci_method=opts["ci_method"],
            confidence_level=opts["confidence"],
            seed=opts["seed"],
            device=opts["device"],
        )
        engine.validate()
    embeddings = list(opts["embeddings"])
    if opts["models"] and ctx.get_parameter_source("embeddings") != ParameterSource.COMMANDLINE:
        embeddings = []  # --model alone replaces the GloVe default
    with named_by(Source.command_line(), LISTS, LOADING):
        config = RunConfig(
            lists=split_values(opts["lists"]),
            langs=split_values(opts["langs"]) or None,
            tests=split_values(opts["tests"]) or None,
            embeddings=(*embeddings, *model_specs(opts)),
            lower=opts["lower"],
            strip_accents=opts["strip_accents"],
            min_coverage=opts["min_coverage"],
            equalize=opts["equalize"],
            strict=opts["strict"],
            allow_pickle=opts["allow_pickle"],
            fasttext_oov=opts["fasttext_oov"],
            engine=engine,
            contextual=contextual_from_opts(opts),
            isomorphism=opts["isomorphism"],
            iso=iso_from_opts(opts, "iso-"),
            iso_words=opts["iso_words"],
        )
    result = run(config, show_progress=opts["progress"])
    _report(result, opts["verbose"])
    tables = {"results": result.results, "summary": result.summary}
    if config.isomorphism:
        tables.update(isomorphism=result.isomorphism, correlations=result.correlations)
    if opts["out_dir"]:
        files = {f"{name}.csv": render(table, "csv") for name, table in tables.items()}
        files["manifest.json"] = manifest_bytes(result.manifest)
        written = write_outputs(opts["out_dir"], files)
        err_console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False)
    if opts["fmt"]:
        if opts["table"] not in tables:
            raise WeatkitError(f"--table {opts['table']} needs --isomorphism LANG")
        sys.stdout.buffer.write(render(tables[opts["table"]], opts["fmt"]))
        sys.stdout.flush()
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)
        console.print(rich_summary(result.summary))
        if config.isomorphism:
            console.print(rich_correlations(result.correlations))


def _report(result: RunResult, verbose: bool) -> None:
    """Notes and skipped tests on stderr, one line each (the tables go to stdout).

    Per-item normalisation notes (duplicates, overlaps) are counted unless ``verbose``; the
    manifest always lists them all.
    """
    per_item = [line for line in result.report if _is_item_note(line)]
    for line in result.report:
        if verbose or line not in per_item:
            note(line)
    if per_item and not verbose:
        err_console.print(
            f"note: {len(per_item)} per-item notes (duplicates, items in two sets): --verbose "
            "shows them; --out writes them to manifest.json",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for skip in result.skipped[:_MAX_SKIPPED_SHOWN]:
        err_console.print(
            f"skipped: {skip['reason']}", markup=False, highlight=False, soft_wrap=True
        )
    rest = result.skipped[_MAX_SKIPPED_SHOWN:]
    if rest:
        per_lang = Counter(f"{s['embeddings']}/{s['lang']}" for s in rest)
        counts = ", ".join(f"{key} {n}" for key, n in per_lang.most_common())
        err_console.print(
            f"skipped: {len(rest)} more ({counts}); --out writes every reason to manifest.json",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    n_run = len(result.results)
    err_console.print(f"{n_run} test(s) run, {len(result.skipped)} skipped", highlight=False)


def _is_item_note(line: str) -> bool:
    return line.startswith(("warning:", "note:"))


@main.command("embed")
@list_options()
@click.option("--lower", is_flag=True, help="Lower-case list items.")
@click.option("--strip-accents", is_flag=True, help="Remove diacritics from list items.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda[:N] or mps.")
@click.option("--allow-pickle", is_flag=True, help="Allow pytorch_model.bin weights (a pickle).")
@click.option(
    "--out",
    "out_path",
    required=True,
    help="The .vec file to write; with several --layer it must contain {layer}.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar.")
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


main.add_command(iso_command)
main.add_command(grid_command)
main.add_command(asymmetry_command)
main.add_command(train_command)
main.add_command(export_command)
main.add_command(plot_command)
main.add_command(gest_command)
main.add_command(crows_command)
main.add_command(mbe_command)
main.add_command(stereoset_command)
main.add_command(compare_command)


@main.command("align")
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
@click.option("--out", "out_path", required=True, help="The aligned source space (.vec).")
@click.option("--allow-pickle", is_flag=True, help="Allow pickle-based formats (gensim .kv).")
@friendly
def align_command(**opts: Any) -> None:
    """Align a space onto another with orthogonal Procrustes on a bilingual dictionary."""
    pairs = read_dictionary(opts["dict_path"])
    source = load_static(opts["src_path"], allow_pickle=opts["allow_pickle"])
    target = load_static(
        opts["tgt_path"], words={t for _, t in pairs}, allow_pickle=opts["allow_pickle"]
    )
    result = procrustes_align(source, target, pairs, normalization=split_values([opts["steps"]]))
    out = Path(opts["out_path"])
    (written,) = write_outputs(out.parent, {out.name: vec_bytes(result.aligned)})
    err_console.print(
        f"fitted on {result.n_pairs} pairs ({result.n_skipped} skipped: a word not in a space), "
        f"RMS residual {result.residual:.4f}; wrote {written} ({len(result.aligned)} words)",
        highlight=False,
        soft_wrap=True,
    )


@main.command("lists")
@click.argument("list_set", required=False)
@friendly
def lists_command(list_set: str | None) -> None:
    """Show the list sets, or the languages and lists of one set (or list file)."""
    console = Console()
    if list_set is None:
        table = Table(title="List sets (weatkit run --lists NAME)")
        table.add_column("name")
        table.add_column("what")
        for name, description in LIST_SETS.items():
            table.add_row(name, description)
        console.print(table)
        return
    tests = load_list_set(list_set)
    per_lang: dict[str, set[str]] = {}
    for test in tests:
        per_lang.setdefault(test.lang, set()).add(test.list_id)
    table = Table(title=f"{list_set}: {len(tests)} tests")
    for col in ("lang", "lists", "list ids"):
        table.add_column(col)
    for lang in sorted(per_lang):
        ids = sorted(per_lang[lang])
        table.add_row(lang, str(len(ids)), ", ".join(ids))
    console.print(table)


if __name__ == "__main__":  # pragma: no cover
    main()
