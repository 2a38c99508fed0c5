"""``weatkit crows``: CrowS-Pairs bias scores (Nangia et al., EMNLP 2020).

Modes (exactly one):

* ``--model SPEC`` — score the pairs with a masked LM (English CrowS-Pairs, original or
  ``--data revised``; French CrowS-Pairs, ``--lang fr``; MBE's ja/ru gender pairs; or ``--data
  FILE``): ``--method pll`` (Nangia et al.'s pseudo-log-likelihood of the shared tokens),
  ``pll-word-l2r`` (Kauf & Ivanova 2023), ``aul`` or ``aula`` (Kaneko & Bollegala 2022),
  :mod:`weatkit.crows.score`; or with a causal LM, ``--method sum`` or ``shared``
  (:mod:`weatkit.crows.causal`); ``--controls`` also scores the control pairs of
  :mod:`weatkit.crows.controls`;
* ``--scores FILE.csv`` — the metric from per-pair scores (``score_more, score_less, bias_type,
  direction``), without a model.
"""

from __future__ import annotations

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
    controls_option,
    limit_option,
    log_items_option,
    resampling_options,
)
from weatkit.cli.sentence_outputs import (
    item_log_file,
    manifest_file,
    model_record,
    sample_note,
    scoring_conventions,
)
from weatkit.cli.tables import ci_header, rich_controls
from weatkit.config.schema import CONTEXTUAL, options_from_cli, split_names
from weatkit.crows.controls import (
    control_summary,
    load_controls,
    score_controls,
    stack_control_pairs,
)
from weatkit.crows.data import (
    CROWS_DATA,
    DATA_SETS,
    crows_pairs,
    read_pair_scores,
    sample_pairs,
)
from weatkit.crows.score import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_SEED,
    METHODS,
    PAIR_ORDERS,
    SUM_DTYPES,
    crows_metric,
    pair_outcomes,
    score_crows,
)
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.items.log import crows_items
from weatkit.measures.compat import apply_preset, preset_summary
from weatkit.report.numbers import format_estimate, format_number
from weatkit.report.tables import render, write_outputs
from weatkit.sentence.lm import sentence_lm
from weatkit.stats.correlation import degenerate_interval
from weatkit.stats.sampling import ItemSample

_TABLES = ("summary", "pairs", "controls", "control_pairs", "corrections")


def _decimals(text: str | None, default: int | str | None) -> int | str | None:
    """``--decimals``: an integer ≥ 0, ``none`` (exact comparison), or the default."""
    if text is None:
        return default
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise WeatkitError(f"--decimals {text!r}: give an integer ≥ 0 or none")
    return value


def _pairs(opts: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs of ``--lang`` and ``--data`` restricted to ``--bias-type``, and what the
    loader corrected in them."""
    data = opts["data_path"] or "original"
    if opts["lang"] and data not in DATA_SETS:
        raise WeatkitError("give --lang or --data FILE, not both")
    pairs, corrections = crows_pairs(opts["lang"] or "en", data)
    if len(corrections):
        dropped = int((corrections["used"] == "").sum())
        note(
            f"{len(corrections) - dropped} label{'s' if len(corrections) - dropped != 1 else ''} "
            f"corrected, {dropped} pair{'s' if dropped != 1 else ''} dropped in the shipped "
            f"pairs (see corrections.csv with --out, or --format csv --table corrections)"
        )
    return _select(pairs, opts), corrections


def _select(table: pd.DataFrame, opts: dict[str, Any]) -> pd.DataFrame:
    wanted = [b.lower() for b in split_names(opts["bias_types"], "--bias-type")]
    if not wanted:
        return table
    known = sorted(set(table["bias_type"]))
    unknown = [b for b in wanted if b not in known]
    if unknown:
        raise WeatkitError(
            f"--bias-type {unknown[0]!r} is not in the pairs; they have {', '.join(known)}"
        )
    return table[table["bias_type"].isin(wanted)].reset_index(drop=True)


#: scoring option -> (CLI key, value when not given)
_SCORING = {
    "method": ("method", "pll"),
    "decimals": ("decimals", "reference"),
    "pair_order": ("pair_order", "more-first"),
    "sum_dtype": ("sum_dtype", "float64"),
}


def _scoring(opts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The keyword arguments of :func:`score_crows` from the options and ``--compat``, and the
    preset's summary (None without ``--compat``)."""
    values = {name: opts[key] if opts[key] is not None else default
              for name, (key, default) in _SCORING.items()}  # fmt: skip
    values["decimals"] = _decimals(opts["decimals"], "reference")
    explicit = {name for name, (key, _) in _SCORING.items() if opts[key] is not None}
    values = apply_preset("crows", opts["compat"], explicit, values)
    summary = preset_summary("crows", opts["compat"], values) if opts["compat"] else None
    return values, summary


def _score_with_model(opts: dict[str, Any]) -> tuple[dict[str, pd.DataFrame], ItemSample | None]:
    """The per-pair scores (``pairs``), and the ``corrections`` and, with ``--controls``, the
    ``originals`` and ``controls`` per-pair scores of the control pairs; and the ``--limit``
    sample of the pairs (None: all of them)."""
    if opts["controls"] and (opts["lang"] or "en") != "en":
        raise WeatkitError(
            f"--controls exist for English only (Pikuliak et al.), not --lang {opts['lang']}"
        )
    pairs, corrections = _pairs(opts)
    pairs, sample = sample_pairs(pairs, opts["limit"], opts["seed"])
    sample_note(sample)
    kinds = opts["controls"]
    control_rows = None
    if kinds:
        control_rows = load_controls() if kinds is True else load_controls(kinds)
    scoring = opts["scoring"]
    options = options_from_cli(ContextualOptions, CONTEXTUAL, opts)
    lm = sentence_lm(f"crows:{scoring['method']}", opts["model"], options)
    scores = score_crows(lm, pairs, **scoring, show_progress=opts["progress"])
    tables = {"pairs": scores, "corrections": corrections}
    if control_rows is not None:
        tables["originals"], tables["controls"] = score_controls(
            lm, control_rows, **scoring, show_progress=opts["progress"]
        )
    skipped = scores.loc[scores["skipped"] != "", "skipped"]
    if len(skipped):
        note(
            f"{len(skipped)} pair{'s' if len(skipped) > 1 else ''} skipped (too long for the "
            f"model), e.g. pair {scores.loc[skipped.index[0], 'pair_id']}: {skipped.iloc[0]}"
        )
    return tables, sample


def _from_scores(opts: dict[str, Any]) -> pd.DataFrame:
    for option, key in (
        ("--data", "data_path"),
        ("--lang", "lang"),
        ("--method", "method"),
        ("--controls", "controls"),
        ("--compat", "compat"),
        ("--pair-order", "pair_order"),
        ("--sum-dtype", "sum_dtype"),
        ("--limit", "limit"),
    ):
        if opts[key]:
            raise WeatkitError(f"{option} is for --model; --scores reads scores already computed")
    scores = _select(read_pair_scores(opts["scores_path"]), opts)
    win, neutral = pair_outcomes(
        scores["score_more"], scores["score_less"], decimals=_decimals(opts["decimals"], None)
    )
    scores["win"], scores["neutral"] = win, neutral
    n_unscored = int(scores[["score_more", "score_less"]].isna().any(axis=1).sum())
    if n_unscored:
        note(f"{n_unscored} pair{'s' if n_unscored > 1 else ''} without a score skipped")
    return scores


def _print(summary: pd.DataFrame, level: float, title: str) -> None:
    view = Table(title=title)
    metric = ci_header("metric", level, summary["ci_low"])
    columns = ("bias type", "pairs", "ties", metric, "stereo", "antistereo")
    for col in columns:
        view.add_column(col, justify="left" if col == "bias type" else "right")
    degenerate = False
    for row in summary.itertuples(index=False):
        mark = " ‡" if degenerate_interval(row.ci_low, row.ci_high) else ""
        degenerate = degenerate or bool(mark)
        view.add_row(
            str(row.bias_type),
            str(row.n),
            str(row.n_neutral),
            format_estimate(row.metric, row.ci_low, row.ci_high, neutral=50.0, decimals=2) + mark,
            format_number(row.stereo_score, 2),
            format_number(row.antistereo_score, 2),
        )
    console = _console()
    console.print(view)
    for line in _legend(summary, degenerate):
        console.print(line, highlight=False, markup=False)


def _legend(summary: pd.DataFrame, degenerate: bool) -> list[str]:
    """What the summary's columns mean: ties stay in the metric's denominator, not in
    stereo's and antistereo's; ‡ marks an interval of one point."""
    overall = summary.iloc[0]
    lines = [
        "metric: % of the pairs where the model prefers the more stereotypical sentence; a tie "
        "(equal scores) counts as not preferring it and stays in the denominator "
        f"({overall.n_neutral} of {overall.n} pairs here), so the metric can be below both "
        "stereo and antistereo. stereo / antistereo: the same % over the stereotypical / "
        "anti-stereotypical pairs without their ties (as CrowS-Pairs' metric.py).",
    ]
    if degenerate:
        lines.append(
            "‡ degenerate CI: every bootstrap resample gives the same value (e.g. 2 pairs, "
            "both preferred); it says nothing about uncertainty."
        )
    return lines


def _console() -> Console:
    console = Console()
    return console if console.is_terminal else Console(width=120)


def _print_controls(controls: pd.DataFrame, level: float) -> None:
    console = _console()
    title = ("Controls (Pikuliak et al. 2023): the same pairs negated / with an "
             "anti-stereotypical attribute")  # fmt: skip
    console.print(rich_controls(controls, level, title=title, unit="pairs"))
    console.print(
        "control as biased = the control's CI reaches the original's score on the biased side "
        "of 50: the score cannot be told from a reaction to the group words.",
        highlight=False,
    )


@click.command("crows")
@language_model_options(
    "Score the pairs with this masked or causal LM (hub id, local path or model spec).",
    "With --model: masked sentences per forward pass.",
)
@click.option(
    "--method",
    type=click.Choice(METHODS),
    help="With --model. Masked LMs: pll = pseudo-log-likelihood of the shared tokens (Nangia "
    "et al., the default); pll-word-l2r = the same, the later sub-tokens of a word masked too "
    "(Kauf & Ivanova 2023); aul / aula = (attention-weighted) mean log-likelihood of the "
    "unmasked sentence. Causal LMs: sum = log-likelihood of the whole sentence "
    "(lm-evaluation-harness); shared = of the shared tokens only, given all before them.",
)
@click.option(
    "--lang",
    metavar="|".join(sorted({lang for lang, _ in CROWS_DATA})),
    help="Pairs: en = CrowS-Pairs (1,508, the default), fr = French CrowS-Pairs (Névéol et al. "
    "2022, 1,676), ja / ru = MBE's 262 gender pairs.",
)
@click.option(
    "--data",
    "data_path",
    metavar="original|revised|FILE",
    help="original (the default); revised = the revised English CrowS-Pairs (Pikuliak et al. "
    "2023, 1,467); or pairs of your own: CSV with sent_more, sent_less, stereo_antistereo, "
    "bias_type (or MBE-style JSON).",
)
@controls_option(
    "With --model (English): also score the control pairs of Pikuliak et al. (2023), all or "
    "the KINDS named (negation, antistereotype), and flag a control scored as biased as its "
    "originals."
)
@click.option(
    "--scores",
    "scores_path",
    type=click.Path(dir_okay=False),
    help="No model: per-pair scores CSV with score_more, score_less, bias_type, direction "
    "(e.g. a pairs.csv written by --out).",
)
@click.option(
    "--bias-type",
    "bias_types",
    multiple=True,
    help="Keep only these bias types (e.g. gender); repeatable or comma-separated.",
)
@click.option(
    "--decimals",
    help="Round both scores to this many decimals before comparing them, or none. "
    "Default: as the reference code (3 for pll, none for aul/aula and --scores).",
)
@click.option(
    "--pair-order",
    type=click.Choice(PAIR_ORDERS),
    help="With --method pll: which sentence difflib aligns first. more-first (the default) = "
    "sent_more; by-direction = sent_more of stereo and sent_less of antistereo pairs, as the "
    "CrowS-Pairs metric.py (difflib's alignment is not symmetric).",
)
@click.option(
    "--sum-dtype",
    type=click.Choice(SUM_DTYPES),
    help="With --method pll: sum the token log-probabilities in float64 (the default, as "
    "metric.py) or float32 (torch.sum, as evaluate_bias_in_mlm).",
)
@compat_option("crows")
@limit_option("pairs, stratified by bias type, drawn with --seed; the control pairs in full")
@resampling_options(
    n_bootstrap=DEFAULT_BOOTSTRAP,
    seed=DEFAULT_SEED,
    confidence_level=DEFAULT_CONFIDENCE_LEVEL,
    bootstrap_help="Bootstrap resamples of the pairs for the CI of the metric (0: off).",
)
@out_option("Write pairs.csv (per-pair scores) and summary.csv here.")
@log_items_option()
@format_option()
@click.option(
    "--table",
    type=click.Choice(_TABLES),
    default="summary",
    show_default=True,
    help="Which table --format prints.",
)
@friendly
def crows_command(**opts: Any) -> None:
    """CrowS-Pairs: % of pairs where a masked or causal LM prefers the more stereotypical
    sentence."""
    if bool(opts["model"]) == bool(opts["scores_path"]):
        raise WeatkitError("give exactly one of --model ID or --scores FILE")
    check_log_items(opts)
    if opts["table"] in ("controls", "control_pairs") and not opts["controls"]:
        raise WeatkitError(f"--table {opts['table']} needs --controls")
    check_table(opts)
    resampling = {
        "n_bootstrap": opts["n_bootstrap"],
        "seed": opts["seed"],
        "confidence_level": opts["confidence"],
    }
    compat = sample = conventions = None
    if opts["model"]:
        from weatkit.scoring.conventions import recording

        opts["scoring"], compat = _scoring(opts)
        if compat is not None:
            err_console.print(compat["line"], markup=False, highlight=False, soft_wrap=True)
        with recording() as seen:
            scored, sample = _score_with_model(opts)
        conventions = scoring_conventions(seen)
        title = f"CrowS-Pairs, {opts['model']} ({opts['scoring']['method']})"
    else:
        scored = {"pairs": _from_scores(opts)}
        title = f"CrowS-Pairs, scores of {opts['scores_path']}"
    tables = {"summary": crows_metric(scored["pairs"], **resampling), "pairs": scored["pairs"]}
    if len(scored.get("corrections", ())):
        tables["corrections"] = scored["corrections"]
    if "controls" in scored:
        tables["controls"] = control_summary(scored["originals"], scored["controls"], **resampling)
        tables["control_pairs"] = stack_control_pairs(scored["originals"], scored["controls"])
    if opts["table"] not in tables:
        raise WeatkitError(
            f"--table {opts['table']}: this run has no such table ({', '.join(tables)})"
        )
    if opts["out_dir"]:
        files = {f"{name}.csv": render(table, "csv") for name, table in tables.items()}
        # the preset's values, as weatkit run's manifest.json, and the --limit sample
        files.update(
            manifest_file(
                "crows",
                sample,
                opts["log_items"],
                compat=compat,
                contextual=model_record(opts),
                scoring_conventions=conventions,
            )
        )
        log = partial(
            crows_items,
            scored["pairs"],
            model=opts["model"] or "",
            method=opts["scoring"]["method"] if opts["model"] else "scores",
            language=(opts["lang"] or "en") if opts["model"] else "",
        )
        files.update(item_log_file(opts, log))
        for path in write_outputs(
            opts["out_dir"], files, reads=[opts["data_path"], opts["scores_path"]]
        ):
            err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(tables[opts["table"]], opts["fmt"]))
        sys.stdout.flush()
    else:
        _print(tables["summary"], opts["confidence"], title + " — 50 = no preference")
        if "controls" in tables:
            _print_controls(tables["controls"], opts["confidence"])
