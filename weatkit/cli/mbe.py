"""``weatkit mbe``: the Multilingual Bias Evaluation score of a masked LM (Kaneko et al. 2022),
or of a causal LM with ``--method mean-ll``.

Inputs (exactly one):

* ``--parallel FILE.tsv`` — ``English<TAB>target`` lines;
* ``--english FILE --target FILE`` — aligned plain-text files;
* ``--mbe-set LANG --corpus ted|news`` — the reference repository's token-id sets (tokenised with
  :data:`weatkit.mbe.data.MBE_MODELS`\\ ``[LANG]``; :func:`~weatkit.mbe.data.check_tokenizer`
  refuses a model whose tokenizer does not match).

Text inputs go through Step 1 (:func:`~weatkit.mbe.data.gendered_indices` with the English word
lists); then sentences longer than the model takes are skipped (an error with
``--no-skip-long``), both sides are down-sampled to equal size (and to ``--max-sentences``) with
``--seed``, and :func:`~weatkit.mbe.score.evaluate_mbe` scores them. The pipeline is
:mod:`weatkit.mbe.run` (:func:`~weatkit.mbe.run.run_mbe_parallel`,
:func:`~weatkit.mbe.run.run_mbe_set`); this module reads the options and prints or writes.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import format_option, language_model_options, out_option
from weatkit.cli.sentence_options import (
    check_log_items,
    compat_option,
    compat_values,
    limit_option,
    log_items_option,
    seed_option,
)
from weatkit.cli.sentence_outputs import (
    item_log_file,
    manifest_file,
    model_record,
    scoring_conventions,
)
from weatkit.cli.tables import fmt_p
from weatkit.config.schema import CONTEXTUAL, options_from_cli
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.items.log import mbe_items
from weatkit.mbe.data import MBE_MODELS, MBE_SETS
from weatkit.mbe.run import run_mbe_parallel, run_mbe_set
from weatkit.mbe.score import METHODS, WEIGHTS, MbeResult
from weatkit.report.numbers import format_number
from weatkit.report.tables import render, write_outputs
from weatkit.sentence.lm import sentence_lm


def _check_modes(opts: dict[str, Any]) -> str:
    """The input mode (``parallel``, ``texts`` or ``set``); WeatkitError for a bad combination."""
    modes = [
        name
        for name, given in (
            ("parallel", opts["parallel"]),
            ("texts", opts["english"] or opts["target"]),
            ("set", opts["mbe_set"]),
        )
        if given
    ]
    if len(modes) != 1:
        raise WeatkitError(
            "give exactly one of --parallel FILE, --english FILE --target FILE or "
            "--mbe-set LANG --corpus ted|news"
        )
    mode = modes[0]
    if mode == "texts" and not (opts["english"] and opts["target"]):
        raise WeatkitError("--english and --target go together: give both files")
    if mode == "set" and not opts["corpus"]:
        raise WeatkitError(f"--mbe-set {opts['mbe_set']} needs --corpus ted or --corpus news")
    if mode != "set" and opts["corpus"]:
        raise WeatkitError("--corpus is for --mbe-set")
    if mode == "set" and (opts["male_words"] or opts["female_words"]):
        raise WeatkitError(
            "the MBE sets are already split into male and female sentences; --male-words and "
            "--female-words are for --parallel and --english/--target"
        )
    return mode


def _print_result(result: MbeResult, model: str, data: str) -> None:
    view = Table(title=f"MBE of {model} on {data}")
    view.add_column("")
    view.add_column("value", justify="right")
    view.add_row(
        f"MBE score ({result.method.upper()}, {result.weight} weights)",
        format_number(result.score, 2),
    )
    view.add_row("sentences (male / female)", f"{result.n_male} / {result.n_female}")
    view.add_row("pairs", f"{result.n_pairs:,}")
    view.add_row("McNemar vs random: b / c", f"{result.b:,} / {result.c:,}")
    view.add_row("McNemar p (exact)", fmt_p(result.pvalue))
    verdict = "significant" if result.significant else "not significant"
    view.add_row(f"vs random at α = {result.alpha:g}", verdict)
    console = Console()
    console.print(view)
    side = "male" if result.score > 50 else "female" if result.score < 50 else "neither"
    console.print(
        f"50 = no preference; above 50 the model prefers the male sentences. Here: {side}, "
        f"{verdict}.",
        highlight=False,
    )


@click.command("mbe")
@click.option(
    "--parallel",
    type=click.Path(dir_okay=False),
    help="Parallel corpus: English<TAB>target per line (.gz accepted; optional header en<TAB>…).",
)
@click.option(
    "--english", type=click.Path(dir_okay=False), help="English side, one sentence per line."
)
@click.option(
    "--target",
    type=click.Path(dir_okay=False),
    help="Target-language side, aligned line by line with --english.",
)
@click.option(
    "--mbe-set",
    type=click.Choice(sorted(MBE_MODELS)),
    help="The reference repository's token-id sets of this language (needs --corpus and a model "
    "with the tokenizer of the language's model in weatkit.mbe.MBE_MODELS).",
)
@click.option("--corpus", type=click.Choice(list(MBE_SETS)), help="With --mbe-set: TED or news.")
@language_model_options(
    "Masked LM to evaluate (a causal LM with --method mean-ll): hub id, path or model spec.",
    "Sentences per forward pass.",
    required=True,
)
@click.option(
    "--male-words",
    type=click.Path(dir_okay=False),
    help="English male words, one per line [default: GN-GloVe male_word_file.txt].",
)
@click.option(
    "--female-words",
    type=click.Path(dir_okay=False),
    help="English female words, one per line [default: GN-GloVe female_word_file.txt].",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="aula",
    show_default=True,
    help="Sentence likelihood: AULA (paper) or AUL of a masked LM; mean-ll = mean token "
    "log-likelihood of a causal LM (the causal analogue of AUL).",
)
@click.option(
    "--weight",
    type=click.Choice(WEIGHTS),
    default="cosine",
    show_default=True,
    help="Pair weight: cosine similarity (paper) or dot product (reference eval.py).",
)
@compat_option("mbe")
@seed_option("Seed of the down-sampling and of McNemar's random indicator.")
@click.option(
    "--max-sentences",
    type=click.IntRange(min=1),
    help="Keep at most this many sentences per side (a seeded sample, after down-sampling).",
)
@limit_option(
    "sentences of both sides together, stratified by gender (each side keeps one), drawn with "
    "--seed after the sides are equalised"
)
@click.option(
    "--skip-long/--no-skip-long",
    default=True,
    show_default=True,
    help="Skip sentences longer than the model takes (else stop with an error).",
)
@out_option("Write sentences.csv and summary.csv here.")
@log_items_option()
@format_option("Print the summary in this format instead of the readable table.")
@friendly
def mbe_command(**opts: Any) -> None:
    """MBE gender-bias score of a masked LM from a parallel corpus (Kaneko et al., NAACL 2022)."""
    opts = compat_values("mbe", opts)
    mode = _check_modes(opts)
    check_log_items(opts)
    options = options_from_cli(ContextualOptions, CONTEXTUAL, opts)
    lm = sentence_lm(f"mbe:{opts['method']}", opts["model"], options)
    settings: dict[str, Any] = {
        "method": opts["method"],
        "weight": opts["weight"],
        "seed": opts["seed"],
        "max_sentences": opts["max_sentences"],
        "skip_long": opts["skip_long"],
        "show_progress": opts["progress"],
        "on_note": note,
        "limit": opts["limit"],
    }
    from weatkit.scoring.conventions import recording

    with recording() as seen:
        if mode == "set":
            run = run_mbe_set(lm, opts["mbe_set"], opts["corpus"], **settings)
        else:
            corpus = opts["parallel"] if mode == "parallel" else (opts["english"], opts["target"])
            run = run_mbe_parallel(
                lm,
                corpus,
                male_words=opts["male_words"],
                female_words=opts["female_words"],
                **settings,
            )
    conventions = scoring_conventions(seen)
    summary = run.summary(opts["model"])
    if opts["out_dir"]:
        files = {
            "sentences.csv": render(run.sentences, "csv"),
            "summary.csv": render(summary, "csv"),
            **manifest_file(
                "mbe",
                run.sample,
                opts["log_items"],
                contextual=model_record(opts),
                scoring_conventions=conventions,
            ),
            **item_log_file(
                opts, partial(mbe_items, run, model=opts["model"], language=opts["mbe_set"] or "")
            ),
        }
        reads = [opts[k] for k in ("parallel", "english", "target", "male_words", "female_words")]
        for path in write_outputs(opts["out_dir"], files, reads=reads):
            err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(summary, opts["fmt"]))
        sys.stdout.flush()
    else:
        _print_result(run.result, opts["model"], run.data)
