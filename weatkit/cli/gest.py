"""``weatkit gest``: GEST gender-stereotype scores (Pikuliak et al. 2023, arXiv:2311.18711).

Modes (exactly one):

* ``--scores FILE`` — language-model metrics (q_i, ranks, q_f, q_m, g_s, q_fam) from
  per-sample scores (a scores CSV or an upstream prediction file, detected by
  :func:`weatkit.gest.data.read_scores`), :mod:`weatkit.gest.aggregate`;
* ``--translations FILE.csv`` — machine-translation metrics (p_i, p_f, p_m, f_s, f_m, p_fam)
  from per-sample translation genders, :mod:`weatkit.gest.mt`;
* ``--model MODEL`` — score GEST with a masked or causal language model first (a hub id, a
  path or a model spec, :mod:`weatkit.scoring.spec`; :mod:`weatkit.gest.scoring`); with
  ``--lang XX`` (one of the 29 EuroGEST languages, Rowe et al. 2025) score EuroGEST instead
  (:func:`weatkit.measures.gest`, :mod:`weatkit.gest.eurogest`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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
    limit_option,
    log_items_option,
    resampling_options,
)
from weatkit.cli.sentence_outputs import item_log_file, manifest_file, model_record, sample_note
from weatkit.cli.tables import ci_header
from weatkit.config.schema import (
    CONTEXTUAL,
    POOLING,
    SAMPLE,
    Source,
    click_options,
    named_by,
    options_from_cli,
    split_names,
)
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_SEED,
    LOG_BASES,
    GestSummary,
    aggregate_by_template,
    template_spread,
)
from weatkit.gest.data import GEST_FILES, load_gest, read_genders_csv, read_scores, sample_gest
from weatkit.gest.eurogest import CODE, COINCIDING, DEFAULT_CODE, LANGUAGES
from weatkit.gest.mt import mt_metrics
from weatkit.gest.reliability import gest_reliability
from weatkit.gest.scoring import score_gest
from weatkit.items.log import eurogest_items, gest_items
from weatkit.report.numbers import format_estimate
from weatkit.report.tables import render, write_outputs
from weatkit.stats.sampling import ItemSample

_TABLES = ("stereotypes", "summary")


def _score_with_model(opts: dict[str, Any]) -> tuple[pd.DataFrame, ItemSample | None]:
    """Per-sample scores of ``--model`` for every requested template (``template`` column), and
    the ``--limit`` sample of the samples (None: all of them)."""
    templates = [_template_id(t) for t in split_names(opts["templates"], "--templates")] or None
    options = options_from_cli(ContextualOptions, CONTEXTUAL, opts)
    with named_by(Source.command_line(), SAMPLE):  # a limit too small names --limit
        samples, sample = sample_gest(load_gest(opts["gest_version"]), opts["limit"], opts["seed"])
    sample_note(sample)
    scores = score_gest(
        opts["model"],
        samples,
        kind=opts["kind"],
        templates=templates,
        log_base=opts["log_base"],
        options=options,
        show_progress=opts["progress"],
    )
    n_skipped = int((scores["skipped"] != "").sum())
    if n_skipped:
        reasons = scores.loc[scores["skipped"] != "", "skipped"].value_counts()
        note(f"{n_skipped} sample(s) skipped: {reasons.index[0]} ({reasons.iloc[0]})")
    return scores, sample


def _template_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise WeatkitError(f"--templates {text!r}: give template ids such as 0,1,2,3") from None


def _aggregate(scores: pd.DataFrame, opts: dict[str, Any]) -> GestSummary:
    """:func:`aggregate_by_template` with the command's bootstrap options."""
    return aggregate_by_template(
        scores,
        log_base=opts["log_base"],
        n_bootstrap=opts["n_bootstrap"],
        seed=opts["seed"],
        confidence_level=opts["confidence"],
    )


#: The neutral value of the masculine rates q_i and of their ratios (g_s, q_fam), as CrowS-Pairs
#: states its 50.
NO_PREFERENCE_Q = "1 = no preference between the masculine and the feminine form"


def _ci(value: float, low: float, high: float, neutral: float | None = 1.0) -> str:
    """:func:`weatkit.report.numbers.format_estimate` at 4 decimals; rates and ratios of rates
    are neutral at 1 (a masculine rate of 1: no preference)."""
    return format_estimate(value, low, high, neutral=neutral, decimals=4)


def _print_lm(
    stereotypes: pd.DataFrame, summary: pd.DataFrame, level: float, where: str = ""
) -> None:
    s = summary.iloc[0]
    view = Table(
        title=f"GEST masculine rates q_i (log base {s['log_base']}{where}) — {NO_PREFERENCE_Q}"
    )
    q_col = ci_header("q", level, stereotypes["q_ci_low"])
    for col in ("#", "stereotype", "n", q_col, "feminine rank"):
        view.add_column(col, justify="right" if col != "stereotype" else "left")
    for row in stereotypes.itertuples(index=False):
        q = _ci(row.q, row.q_ci_low, row.q_ci_high)
        view.add_row(str(row.stereotype), row.name, str(row.n), q, f"{row.rank:g}")
    totals = Table(title=f"GEST aggregates{where} — {NO_PREFERENCE_Q}")
    totals.add_column("metric")
    names = ("q_f", "q_m", "g_s", "g_s_geometric", "q_fam")
    totals.add_column(ci_header("value", level, [s[f"{n}_ci_low"] for n in names]), justify="right")
    for name in names:
        totals.add_row(name, _ci(s[name], s[f"{name}_ci_low"], s[f"{name}_ci_high"]))
    console = Console()
    console.print(view)
    console.print(totals)


def _print_eurogest(stereotypes: pd.DataFrame, summary: pd.DataFrame, level: float) -> None:
    s = summary.iloc[0]
    view = Table(
        title=f"EuroGEST masculine rates R_s ({s['lang']}, code {s['code']}) — 0.5 = no preference"
    )
    r_col = ci_header("R", level, stereotypes["R_ci_low"])
    for col in ("#", "stereotype", "n", r_col, "masc. rank", "inclination"):
        view.add_column(col, justify="right" if col != "stereotype" else "left")
    for row in stereotypes.itertuples(index=False):
        r = _ci(row.R, row.R_ci_low, row.R_ci_high, neutral=0.5)
        view.add_row(
            str(row.stereotype), row.name, str(row.n), r, f"{row.rank:g}", f"{row.inclination:+.4f}"
        )
    console = Console()
    console.print(view)
    g_s = _ci(s["g_s"], s["g_s_ci_low"], s["g_s_ci_high"])
    console.print(
        f"g_s = mean(R_8..R_16) / mean(R_1..R_7) = {g_s}{ci_header('', level, s['g_s_ci_low'])} "
        "(1 = no preference); "
        f"{s['n_items']} items, {s['n_skipped']} skipped",
        highlight=False,
    )


def _eurogest(opts: dict[str, Any]) -> tuple[pd.DataFrame, GestSummary, ItemSample | None]:
    """EuroGEST of ``--model`` in ``--lang`` through the public API, and the ``--limit``
    sample of its items."""
    from weatkit.measures import gest

    if not opts["model"]:
        raise WeatkitError(f"--lang {opts['lang']}: EuroGEST scores a model; give --model ID")
    if split_names(opts["templates"], "--templates"):
        raise WeatkitError("--templates applies to English GEST; EuroGEST picks its templates")
    with named_by(Source.command_line(), SAMPLE):  # a limit too small names --limit
        result = gest(
            opts["model"],
            lang=opts["lang"],
            code=opts["eurogest_code"],
            coinciding=opts["coinciding"],
            kind=opts["kind"],
            n_bootstrap=opts["n_bootstrap"],
            seed=opts["seed"],
            confidence_level=opts["confidence"],
            options=options_from_cli(ContextualOptions, CONTEXTUAL, opts),
            show_progress=opts["progress"],
            limit=opts["limit"],
        )
    sample_note(result.sample)
    for line in result.notes:
        note(line)
    reasons = result.scores.loc[result.scores["skipped"] != "", "skipped"].value_counts()
    for reason, count in reasons.items():
        note(f"{count} item(s) skipped: {reason}")
    return result.scores, result.summary, result.sample


def _print_mt(stereotypes: pd.DataFrame, summary: pd.DataFrame, level: float) -> None:
    s = summary.iloc[0]
    view = Table(title="GEST masculine rates p_i of the translations — 0.5 = no preference")
    p_col = ci_header("p", level, stereotypes["p_ci_low"])
    for col in ("#", "stereotype", "male/female/other", p_col, "feminine rank"):
        view.add_column(col, justify="right" if col != "stereotype" else "left")
    for row in stereotypes.itertuples(index=False):
        counts = f"{row.n_male}/{row.n_female}/{row.n_other}"
        p = _ci(row.p, row.p_ci_low, row.p_ci_high, neutral=0.5)
        view.add_row(str(row.stereotype), row.name, counts, p, f"{row.rank:g}")
    totals = Table(title="GEST aggregates — p: 0.5 = no preference")
    totals.add_column("metric")
    totals.add_column("value", justify="right")
    for name in ("p_f", "p_m", "f_s", "f_m"):
        totals.add_row(name, f"{s[name]:.4f}")
    totals.add_row("p_fam", _ci(s["p_fam"], s["p_fam_ci_low"], s["p_fam_ci_high"], neutral=0.5))
    console = Console()
    console.print(view)
    console.print(totals)


@click.command("gest")
@click.option(
    "--scores",
    "scores_path",
    type=click.Path(dir_okay=False),
    help="Per-sample scores: a CSV with sample_id or sentence, stereotype, score "
    "(= log P(w_m) − log P(w_f)), or an upstream GEST prediction file (one log10 score per "
    "line in gest.csv order, .gz or plain; detected by its first line being a number).",
)
@click.option(
    "--translations",
    "genders_path",
    type=click.Path(dir_okay=False),
    help="Per-sample translation genders CSV: sample_id or sentence, stereotype, gender "
    "(male/female; other labels are counted and excluded).",
)
@language_model_options(
    "Score GEST with this masked or causal LM (hub id, local path or model spec; "
    "openai:BASE_URL#MODEL and vllm:ID are causal).",
    "With --model: sentences per forward pass.",
    kind=True,
)
@click.option(
    "--templates",
    multiple=True,
    help="With --model: template ids (paper Table 2); repeatable or comma-separated.",
)
@click.option(
    "--lang",
    default="en",
    show_default=True,
    help="en = GEST; or one of the 29 EuroGEST languages (Rowe et al. 2025; ISO code, e.g. it, "
    "de, uk): score --model on EuroGEST.",
)
@click.option(
    "--eurogest-code",
    type=click.Choice(CODE),
    default=DEFAULT_CODE,
    show_default=True,
    help="With --lang: the upstream EuroGEST code version to follow: 2025-12 (sum of log-probs "
    "minus ln n), 2026-04 (mean log-prob from the first differing token), 2025-08 (2025-12's "
    "scores with the older template groups).",
)
@click.option(
    "--coinciding",
    type=click.Choice(COINCIDING),
    default="other",
    show_default=True,
    help="With --lang: items whose masculine and feminine strings coincide (Italian 'disse'): "
    "use the language's other template, refuse, or keep them (r = 0.5, as upstream).",
)
@click.option(
    "--gest-version",
    type=click.Choice(sorted(GEST_FILES)),
    default="1.0",
    show_default=True,
    help="GEST version the sentences and sample ids refer to.",
)
@click.option(
    "--log-base",
    type=click.Choice(LOG_BASES),
    default="10",
    show_default=True,
    help="Base of the scores' logs: 10 = upstream GEST convention (q = exp(mean log10 ratio), "
    "the published g_s); e = natural logs (q = the paper's geometric mean).",
)
@compat_option("gest")
@limit_option(
    "samples (EuroGEST: items), stratified by stereotype (each keeps at least one), drawn with "
    "--seed"
)
@resampling_options(
    n_bootstrap=DEFAULT_BOOTSTRAP,
    seed=DEFAULT_SEED,
    confidence_level=DEFAULT_CONFIDENCE_LEVEL,
    bootstrap_help="Bootstrap resamples (within each stereotype) for the CIs of q (0: off).",
)
@click_options(
    POOLING,
    only=["reliability"],
    help_texts={
        "reliability": "With --model and 2 --templates: reliability across the templates "
        "(split-half r_SB, ICC(2,1) and ICC(2,k), with the stereotypes and with the samples as "
        "units); writes reliability.csv."
    },
)
@out_option("Write scores.csv (or genders.csv), stereotypes.csv and summary.csv here.")
@log_items_option()
@format_option("Print a table to stdout in this format instead of the readable tables.")
@click.option(
    "--table",
    type=click.Choice(_TABLES),
    default="stereotypes",
    show_default=True,
    help="Which table --format prints.",
)
@friendly
def gest_command(**opts: Any) -> None:
    """GEST gender-stereotype scores of a language model or an MT system."""
    lang = str(opts["lang"]).strip().lower()
    if lang != "en" and lang not in LANGUAGES:
        raise WeatkitError(
            f"--lang {opts['lang']!r}: unknown; choose en or one of {', '.join(sorted(LANGUAGES))}"
        )
    opts = compat_values("gest", opts)
    modes = [m for m in ("scores_path", "genders_path", "model") if opts[m]]
    if len(modes) != 1:
        raise WeatkitError("give exactly one of --scores FILE, --translations FILE or --model ID")
    if opts["limit"] is not None and not opts["model"]:
        raise WeatkitError("--limit is for --model; --scores and --translations are read whole")
    if opts["log_items"] and opts["genders_path"]:
        raise WeatkitError("--log-items logs scored samples: give --scores or --model, not "
                           "--translations")  # fmt: skip
    check_log_items(opts)
    check_table(opts)
    if opts["reliability"] and (lang != "en" or opts["genders_path"]):
        raise WeatkitError(
            "--reliability compares English GEST's templates (--model); EuroGEST and "
            "--translations have none to compare"
        )
    version = opts["gest_version"]
    if lang != "en":
        inputs, result, sample = _eurogest({**opts, "lang": lang})
        tables = {"stereotypes": result.stereotypes, "summary": result.summary}
        log = partial(
            eurogest_items, inputs, model=opts["model"], language=lang, code=opts["eurogest_code"]
        )
        _finish(opts, tables, inputs, sample=sample, log=log)
        if not opts["fmt"]:
            _print_eurogest(result.stereotypes, result.summary, opts["confidence"])
        return
    sample = None
    if opts["genders_path"]:
        inputs = read_genders_csv(opts["genders_path"], version)
        result = mt_metrics(inputs, confidence_level=opts["confidence"])
        input_name = "genders.csv"
    else:
        if opts["scores_path"]:
            inputs = read_scores(opts["scores_path"], version)
        else:
            inputs, sample = _score_with_model(opts)
        result = _aggregate(inputs, opts)
        input_name = "scores.csv"
        skipped = int(result.summary["n_skipped"].iloc[0])
        if skipped:
            note(f"{skipped} sample{'s' if skipped > 1 else ''} without a score skipped")
    tables = {"stereotypes": result.stereotypes, "summary": result.summary}
    spread, extra = None, {}
    by_template = "template" in result.summary.columns and len(result.summary) > 1
    if not opts["genders_path"] and by_template:
        spread = template_spread(result)
        extra = {"template_spread": spread}
    reliability = _reliability(inputs, opts) if opts["reliability"] else None
    if reliability is not None:
        extra["reliability"] = reliability
    log = partial(gest_items, inputs, model=opts["model"] or "")
    _finish(opts, tables, inputs, input_name, extra, sample, log)
    if opts["fmt"]:
        return
    if opts["genders_path"]:
        _print_mt(result.stereotypes, result.summary, opts["confidence"])
    elif "template" in result.summary.columns:
        for template, summary in result.summary.groupby("template", sort=True):
            per = result.stereotypes[result.stereotypes["template"] == template]
            _print_lm(per, summary, opts["confidence"], f", template {template}")
    else:
        _print_lm(result.stereotypes, result.summary, opts["confidence"])
    if spread is not None:
        _print_spread(spread)
    if reliability is not None:
        _print_reliability(reliability, opts["confidence"])


def _reliability(scores: pd.DataFrame, opts: dict[str, Any]) -> pd.DataFrame | None:
    """:func:`gest_reliability` with the command's bootstrap options; its notes printed; None
    when it has no row."""
    table, notes = gest_reliability(
        scores,
        n_bootstrap=opts["n_bootstrap"],
        seed=opts["seed"],
        confidence_level=opts["confidence"],
    )
    for line in notes:
        note(line)
    return table if len(table) else None


def _print_reliability(table: pd.DataFrame, level: float) -> None:
    """The reliability across templates: one row per kind of units."""
    forms = table["forms"].iloc[0].replace(";", ", ")
    view = Table(title=f"Reliability across templates {forms} (split-half r_SB, ICC)")
    r_col = ci_header("r_SB", level, table["split_half_ci_low"])
    icc_col = ci_header("ICC(2,1)", level, table["icc2_ci_low"])
    icck_col = ci_header("ICC(2,k)", level, table["icc2k_ci_low"])
    for col in ("unit_kind", "n", r_col, icc_col, icck_col):
        view.add_column(col, justify="left" if col == "unit_kind" else "right")
    for row in table.itertuples(index=False):
        view.add_row(
            row.unit_kind,
            str(row.n_units),
            _ci(row.split_half, row.split_half_ci_low, row.split_half_ci_high, neutral=None),
            _ci(row.icc2, row.icc2_ci_low, row.icc2_ci_high, neutral=None),
            _ci(row.icc2k, row.icc2k_ci_low, row.icc2k_ci_high, neutral=None),
        )
    Console().print(view)


def _print_spread(spread: pd.DataFrame) -> None:
    """The between-template spread (Seshadri et al. 2022) under the per-template tables."""
    s = spread.iloc[0]
    Console().print(
        f"between {int(s['n_templates'])} templates: g_s mean {s['g_s_mean']:.4f}, SD "
        f"{s['g_s_sd']:.4f}, range {s['g_s_range']:.4f} ({s['g_s_min']:.4f}–{s['g_s_max']:.4f}); "
        f"Kendall's W of the stereotype ranks {s['kendall_w']:.4f}",
        highlight=False,
    )


def _finish(
    opts: dict[str, Any],
    tables: dict[str, pd.DataFrame],
    inputs: pd.DataFrame,
    input_name: str = "scores.csv",
    extra: dict[str, pd.DataFrame] | None = None,
    sample: ItemSample | None = None,
    log: Callable[[], pd.DataFrame] | None = None,
) -> None:
    """Write the ``--out`` files (``extra`` tables too; manifest.json with the ``--limit``
    sample; with ``--log-items`` the per-item table ``log()`` makes) and print the ``--format``
    table."""
    if opts["out_dir"]:
        files = {input_name: render(inputs, "csv")}
        written = {**tables, **(extra or {})}
        files.update({f"{name}.csv": render(table, "csv") for name, table in written.items()})
        log_items = opts["log_items"] if log is not None else None
        files.update(manifest_file("gest", sample, log_items, contextual=model_record(opts)))
        if log is not None:
            files.update(item_log_file(opts, log))
        for path in write_outputs(
            opts["out_dir"], files, reads=[opts["scores_path"], opts["genders_path"]]
        ):
            err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(tables[opts["table"]], opts["fmt"]))
        sys.stdout.flush()
