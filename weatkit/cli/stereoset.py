"""``weatkit stereoset``: StereoSet LMS, SS and ICAT (Nadeem et al. 2021; Öztürk et al.).

Modes (exactly one):

* ``--predictions FILE`` — score a reference predictions file (``{"intrasentence": [{"id",
  "score"}], "intersentence": [...]}``) against the dataset, :mod:`weatkit.stereoset.metrics`;
* ``--model SPEC`` — score the intrasentence task with a masked (``hf``) or causal (any backend
  offering causal scores: ``hf``, ``openai:BASE_URL#MODEL``, ``vllm:``) language model first,
  :mod:`weatkit.stereoset.scoring`; ``--controls`` also scores the gender-swapped
  control items of :mod:`weatkit.stereoset.controls` with the same model.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import Any

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import check_table, format_option, language_model_options, out_option
from weatkit.cli.sentence_options import (
    check_log_items,
    compat_option,
    compat_values,
    controls_option,
    limit_option,
    log_items_option,
    resampling_options,
    stereoset_scoring_options,
)
from weatkit.cli.sentence_outputs import (
    item_log_file,
    manifest_file,
    model_record,
    sample_note,
    scoring_conventions,
)
from weatkit.cli.tables import rich_controls
from weatkit.config.schema import CONTEXTUAL, options_from_cli
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.items.log import stereoset_items
from weatkit.report.numbers import format_number
from weatkit.report.tables import render, write_outputs
from weatkit.stereoset.controls import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_SEED,
    control_kinds,
    control_summary,
    load_genderswap,
    score_genderswap,
)
from weatkit.stereoset.data import LANGS, load_stereoset, read_predictions, sample_examples
from weatkit.stereoset.metrics import COLUMNS, evaluate, to_nested, unknown_ids

_SPLIT_TITLES = {
    "intrasentence": "intrasentence (fill in the blank)",
    "intersentence": "intersentence (next sentence)",
    "overall": "overall (both tasks)",
}


_TABLES = ("scores", "controls", "control_items")

_CAPTION = (
    "*_term: StereoSet's official scores (evaluation.py): means over target terms, "
    "icat_term = ICAT of the means; *_pooled: over all examples"
)


def _fmt(column: str, value: float) -> str:
    if pd.isna(value):
        return ""
    return str(int(value)) if column in ("n", "n_terms") else format_number(value, 2)


def _print_tables(table: pd.DataFrame, lang: str) -> None:
    """One table per split: a row per column of :data:`COLUMNS` (the names of the CSV and JSON
    outputs), a column per bias type."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    rows = COLUMNS[2:]
    groups = list(table.groupby("split", sort=False))
    for i, (split, group) in enumerate(groups):
        view = Table(
            title=f"StereoSet {_SPLIT_TITLES.get(str(split), split)}, {lang}",
            caption=_CAPTION if i == len(groups) - 1 else None,
        )
        view.add_column("", justify="left")
        for bias_type in group["bias_type"]:
            view.add_column(str(bias_type), justify="right")
        for column in rows:
            view.add_row(
                column,
                *(_fmt(column, v) for v in group[column]),
                end_section=column in ("n_terms", "icat_term_mean"),
            )
        console.print(view)


@click.command("stereoset")
@click.option(
    "--predictions",
    "predictions_path",
    type=click.Path(dir_okay=False),
    help='Score a predictions file: {"intrasentence": [{"id", "score"}], "intersentence": '
    "[...]} (JSON, optionally .gz; StereoSet's format).",
)
@language_model_options(
    "Score the intrasentence task with this masked or causal LM (hub id, local path or model "
    "spec; openai:/vllm: for causal LMs).",
    "With --model: inputs per forward pass.",
    kind=True,
)
@stereoset_scoring_options()
@compat_option("stereoset")
@click.option(
    "--lang",
    default="en",
    show_default=True,
    help=f"Dataset language: {', '.join(LANGS)} (en = StereoSet dev; others = the "
    "translations of Öztürk et al.).",
)
@click.option(
    "--dataset",
    "dataset_path",
    type=click.Path(dir_okay=False),
    help="A dataset file in StereoSet's dev.json schema instead of --lang's (JSON or .json.gz).",
)
@controls_option(
    "With --model (English): also score the gender-swapped StereoSet items of Pikuliak et al. "
    "(2023), all or the KINDS named (genderswap = 251 items, genderswap-filtered = 147), and "
    "flag a control scored as biased as its originals. Their race and profession controls "
    "cannot be built (StereoSet's stereoset.json is not in the data)."
)
@limit_option(
    "intrasentence examples, stratified by bias type, drawn with --seed; the --controls items "
    "in full"
)
@resampling_options(
    n_bootstrap=DEFAULT_BOOTSTRAP,
    seed=DEFAULT_SEED,
    confidence_level=DEFAULT_CONFIDENCE_LEVEL,
    bootstrap_help="With --controls: bootstrap resamples of the items for the CIs of the "
    "original and control SS (0: off).",
)
@out_option(
    "Write scores.csv (the metrics) here; with --model also predictions.json; with --controls "
    "also controls.csv and control_items.csv."
)
@log_items_option()
@format_option(
    "Print the metrics in this format instead of the readable tables: json = "
    "{split: {bias_type: {column: value}}}; the others = the tidy table (the same column "
    "names: lms_term, ss_term, icat_term, ..., lms_pooled, ss_pooled, icat_pooled). "
    "With --table controls / control_items: that table."
)
@click.option(
    "--table",
    type=click.Choice(_TABLES),
    default="scores",
    show_default=True,
    help="Which table --format prints.",
)
@friendly
def stereoset_command(**opts: Any) -> None:
    """StereoSet stereotype scores (LMS, SS, ICAT) of a language model or a predictions file."""
    opts = compat_values("stereoset", opts)
    modes = [m for m in ("predictions_path", "model") if opts[m]]
    if len(modes) != 1:
        raise WeatkitError("give exactly one of --predictions FILE or --model ID")
    lang = opts["lang"]
    if opts["dataset_path"] is None and lang not in LANGS:
        raise WeatkitError(f"unknown --lang {lang!r}: choose one of {', '.join(LANGS)}")
    check_log_items(opts)
    kinds = _controls(opts)
    if opts["table"] != "scores" and not kinds:
        raise WeatkitError(f"--table {opts['table']} needs --controls")
    check_table(opts)
    dataset = load_stereoset(lang, opts["dataset_path"])
    items = load_genderswap(kinds) if kinds else None  # checked before any scoring
    files: dict[str, bytes] = {}
    tables: dict[str, pd.DataFrame] = {}
    sample = conventions = None
    if opts["predictions_path"]:
        if opts["limit"] is not None:
            raise WeatkitError("--limit is for --model; --predictions are scores already computed")
        predictions = read_predictions(opts["predictions_path"])
        unknown, total = unknown_ids(dataset, predictions)
        if unknown and len(unknown) < total:  # all unknown: evaluate refuses
            more = ", ..." if len(unknown) > 3 else ""
            note(
                f"{len(unknown)} of {total} prediction ids are no sentence of the data set and "
                f"were ignored: {', '.join(unknown[:3])}{more}"
            )
    else:
        from weatkit.scoring.conventions import recording
        from weatkit.stereoset.scoring import to_predictions

        dataset, sample = sample_examples(dataset, opts["limit"], opts["seed"])
        sample_note(sample)
        with recording() as seen:
            scores, scorer = _score_with_model(dataset, opts)
            scored = (
                None
                if items is None
                else score_genderswap(scorer, items, show_progress=opts["progress"])
            )
        conventions = scoring_conventions(seen)
        predictions = {"intrasentence": scores}
        files["predictions.json"] = (json.dumps(to_predictions(scores), indent=1) + "\n").encode()
        if scored is not None:
            tables["controls"] = control_summary(
                scored, n_bootstrap=opts["n_bootstrap"], seed=opts["seed"],
                confidence_level=opts["confidence"],
            )  # fmt: skip
            tables["control_items"] = scored
    table = evaluate(dataset, predictions)
    if opts["out_dir"]:
        files["scores.csv"] = render(table, "csv")
        files.update({f"{name}.csv": render(t, "csv") for name, t in tables.items()})
        files.update(
            manifest_file(
                "stereoset",
                sample,
                opts["log_items"],
                contextual=model_record(opts),
                scoring_conventions=conventions,
            )
        )
        log = partial(stereoset_items, dataset, predictions, model=opts["model"] or "",
                      language=lang)  # fmt: skip
        files.update(item_log_file(opts, log))
        written = write_outputs(
            opts["out_dir"], files, reads=[opts["predictions_path"], opts["dataset_path"]]
        )
        err_console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False)
    if opts["fmt"] and opts["table"] != "scores":
        sys.stdout.buffer.write(render(tables[opts["table"]], opts["fmt"]))
        sys.stdout.flush()
    elif opts["fmt"] == "json":
        sys.stdout.write(json.dumps(to_nested(table), indent=2) + "\n")
        sys.stdout.flush()
    elif opts["fmt"]:
        sys.stdout.buffer.write(render(table, opts["fmt"]))
        sys.stdout.flush()
    else:
        _print_tables(table, lang)
        if "controls" in tables:
            _print_controls(tables["controls"], opts["confidence"], table)


def _controls(opts: dict[str, Any]) -> tuple[str, ...]:
    """The control kinds of ``--controls`` (none without it), checked before any work."""
    if opts["controls"] is None:
        return ()
    if opts["predictions_path"]:
        raise WeatkitError("--controls is for --model; --predictions are scores already computed")
    if opts["dataset_path"] is None and opts["lang"] != "en":
        raise WeatkitError(
            f"--controls exist for English only (Pikuliak et al.), not --lang {opts['lang']}"
        )
    return control_kinds(opts["controls"])


def _print_controls(controls: pd.DataFrame, level: float, table: pd.DataFrame) -> None:
    """The controls table under the main tables, with the main gender SS beside it."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    title = ("Controls (Pikuliak et al. 2023): StereoSet gender items with the group gender "
             "swapped, SS")  # fmt: skip
    console.print(rich_controls(controls, level, title=title, unit="items"))
    gender = table[(table["split"] == "intrasentence") & (table["bias_type"] == "gender")]
    main = ""
    if len(gender):
        row = gender.iloc[0]
        main = (f"Main SS (intrasentence, gender): ss_term {row.ss_term:.2f}, ss_pooled "
                f"{row.ss_pooled:.2f}. ")  # fmt: skip
    console.print(
        f"{main}original = SS of the items the swapped ones were made from; control = SS of the "
        "gender-swapped items. control as biased = the control's CI reaches the original's SS "
        "on the biased side of 50: the score cannot be told from a reaction to the keywords.",
        highlight=False,
    )


def _score_with_model(dataset: Any, opts: dict[str, Any]) -> tuple[dict[str, float], Any]:
    """Intrasentence scores of ``--model`` and its scorer (imported here: torch loads only for
    this mode)."""
    from weatkit.stereoset.scoring import IntrasentenceScorer, StereosetScoring

    options = options_from_cli(ContextualOptions, CONTEXTUAL, opts)
    scoring = StereosetScoring(
        blanks=opts["blanks"], bos_pass=opts["bos_pass"], leading_space=opts["leading_space"]
    )
    scorer = IntrasentenceScorer(opts["model"], kind=opts["kind"], options=options, scoring=scoring)
    scores = scorer.score(dataset, show_progress=opts["progress"])
    stats = scorer.stats
    if stats.n_unknown:
        note(
            f"{stats.n_unknown} candidate word(s) contain the unknown token of {opts['model']}; "
            "they are scored as such (as the reference does)"
        )
    how = (
        f"{stats.n_computed} scored, {stats.n_cached} from the cache"
        if scorer.kind == "mlm"
        else f"scored through {scorer.spec}"
    )
    err_console.print(
        f"{len(scores)} intrasentence sentences ({scorer.kind}): {stats.n_sentences} distinct "
        f"inputs, {how}",
        highlight=False,
        soft_wrap=True,
    )
    return scores, scorer
