"""``weatkit compare``: word-level and sentence-level bias measures of the same models, joined."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from weatkit.cli.compare_summary import (
    abbreviations,
    correlation_cell,
    correlation_legend,
    print_summary,
    validity_line,
)
from weatkit.cli.errors import err_console, friendly, note
from weatkit.cli.options import (
    format_option,
    out_option,
    progress_option,
)
from weatkit.cli.study_options import (
    executor_options,
    log_tracking,
    make_executor,
    resumable,
    tracking,
    tracking_options,
)
from weatkit.cli.tables import fmt_p, percent
from weatkit.crossmethod import load_compare_config, run_compare, write_compare
from weatkit.crossmethod.runner import CompareResult
from weatkit.errors import WeatkitError
from weatkit.report.numbers import format_estimate
from weatkit.report.tables import render


@click.command("compare")
@click.argument("config_file", metavar="CONFIG", type=click.Path(dir_okay=False))
@out_option("Output directory (overrides the file's `output`).", dest="output")
@click.option("--plot/--no-plot", default=True, show_default=True, help="Write correlations.png.")
@format_option("Print the joined table to stdout in this format instead of the readable tables.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Print every table (each model's measures, the sentence-level scores, every pair of "
    "measures, seeds, validity, reliability) instead of the short summary.",
)
@progress_option()
@executor_options()
@tracking_options()
@friendly
def compare_command(**opts: Any) -> None:
    """Compute WEAT/CA-WEAT, GEST, StereoSet, CrowS-Pairs and MBE for the models in CONFIG.

    CONFIG (.yaml or .toml) lists models, languages and methods (docs/sentence/compare.md). Writes
    scores.csv (long, with bootstrap CIs over the items and a test of the neutral value),
    table.csv (one row per model × language), correlations.csv (Spearman and Kendall between
    measures across models, bootstrap CIs, permutation p, a flag for too few units),
    skipped.csv, seeds.csv and reliability.csv (models given as several checkpoints: mean,
    SD and test–retest reliability over the seeds), validity.csv (the multitrait–multimethod
    matrix of the measures the file's validity.traits names, with a verdict per pair;
    docs/measures/validity.md), manifest.json and correlations.png into the output
    directory. Prints a short summary (the headline agreements between measures with their
    intervals, the scores whose interval excludes the neutral value, what was flagged, where
    the files are); -v prints every table in blocks that fit the terminal. Exits 1 when a
    method failed for some model.

    The work is one job per model × method × language. Finished jobs are kept in OUTPUT/jobs/;
    rerunning skips them unless their options or inputs changed, so an interrupted comparison
    resumes where it stopped. With --executor ray, each job is a Ray task (a GPU for a model's
    jobs where the cluster has GPUs); on a cluster, every node must see the models and data at
    the same paths. With --mlflow URI (or the file's mlflow key), the output directory is
    logged to MLflow once written (docs/guides/tracking.md).
    """
    config = load_compare_config(opts["config_file"], opts["output"])
    executor = make_executor(opts)
    tracked = tracking(opts, config.tracking)
    with resumable(config.output):
        result = run_compare(  # steps: the bar's postfix
            config, show_progress=opts["progress"], executor=executor, records=True
        )
    for path in write_compare(result, config.output, plot=opts["plot"], reads=[config.path]):
        err_console.print(f"wrote {path}", highlight=False)
    if opts["fmt"]:
        sys.stdout.buffer.write(render(result.table, opts["fmt"]))
        sys.stdout.flush()
    else:
        _print(result, opts["verbose"], config.output)
    for line in [*_sample_lines(result), *_cache_lines(result)]:
        note(line)
    for line in result.validity_notes:
        note(line)
    for line in _convention_lines(result):
        note(line)
    n_na = int((result.skipped["status"] == "not applicable").sum())
    if n_na:
        note(f"{n_na} model × language × method combination(s) not applicable (skipped.csv)")
    log_tracking(tracked, config.output)  # every output is written and printed
    if result.n_failed:
        failed = result.skipped[result.skipped["status"] == "failed"].iloc[0]
        err_console.print(
            f"weatkit: {result.n_failed} method run(s) failed, e.g. {failed['method']} for "
            f"{failed['model']} ({failed['lang']}): {failed['reason']}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        sys.exit(1)
    if result.scores.empty:
        raise WeatkitError(
            "nothing computed: no configured method applies to any model × language "
            f"(every reason in {config.output / 'skipped.csv'})"
        )


def _sample_lines(result: CompareResult) -> list[str]:
    """One line per method and sample size of the scores computed on samples (a section's
    ``limit``): ``crows scored on samples (manifest.json: samples): sample of 100 of 1,508
    pairs, stratified by bias type (seed 0)``, the models and languages it was drawn for."""
    by_sample: dict[tuple[str, str], list[str]] = {}
    for key, sample in result.samples.items():
        method, _, where = key.partition(":")
        model, _, lang = where.rpartition(":")
        by_sample.setdefault((method, sample.describe()), []).append(f"{model} {lang}")
    return [
        f"{method} scored on a {text}: {', '.join(units)} (manifest.json: samples)"
        for (method, text), units in by_sample.items()
    ]


def _cache_lines(result: CompareResult) -> list[str]:
    """One line per step that reused cached scores: ``crows · A · en: reused 36 cached scores
    (written by weatkit crows, batch size 4); scored 0``."""
    lines = []
    for step, count in result.cache.items():
        method, _, where = step.partition(":")
        model, _, lang = where.rpartition(":")
        if count.cached:
            lines.append(f"{method} · {model} · {lang}: {count.describe()}")
    return lines


def _print(result: CompareResult, verbose: bool, output: Path) -> None:
    console = Console()
    if result.table.shape[1] <= 2 and result.correlations.empty:
        note("no measures: every method was skipped (skipped.csv)")
        return
    if not verbose:
        print_summary(result, console, output)
        return
    print_compare(result, console)
    if result.correlations.empty:
        note("no correlations: each pair of measures needs 3 model × language units with both")


def print_compare(result: CompareResult, console: Console) -> None:
    """The joined table and the correlations in blocks that fit ``console.width``.

    One block per model (rows: measures, columns: languages, split into several blocks when
    the languages do not fit), then one block per pair of measures (rows: scope × statistic).
    Measure names longer than a third of the width are printed as ``M1``, ``M2``, ... with a
    legend. The full tables are in the output files.
    """
    width = console.width
    table = result.table
    measures = [c for c in table.columns if c not in ("model", "lang")]
    short = abbreviations(measures, budget=max(12, width // 3))
    if any(short[m] != m for m in measures):
        console.print("Measures:", highlight=False)
        for m in measures:
            if short[m] != m:
                console.print(f"  {short[m]} = {m}", highlight=False, markup=False, soft_wrap=True)
    name_width = max([len("measure"), *(len(short[m]) for m in measures)])
    cells = [len(_fmt(v)) for v in table[measures].to_numpy().ravel()]
    value_width = max([6, *cells]) + 3  # the value, the padding either side and a rule
    per_block = max(1, (width - name_width - 4) // value_width)
    langs = list(dict.fromkeys(table["lang"]))
    for model, rows in table.groupby("model", sort=False):
        by_lang = rows.set_index("lang")
        present = [m for m in measures if by_lang[m].notna().any()]
        if not present:
            continue
        for start in range(0, len(langs), per_block):
            chunk = langs[start : start + per_block]
            span = f"s {start + 1}–{start + len(chunk)}" if len(chunk) > 1 else f" {start + 1}"
            part = f" (language{span} of {len(langs)})"
            title = f"{model}: bias measures" + (part if len(chunk) < len(langs) else "")
            view = Table(title=title, title_justify="left")
            view.add_column("measure", no_wrap=True)
            for lang in chunk:
                view.add_column(lang, justify="right", no_wrap=True)
            for m in present:
                view.add_row(short[m], *(_fmt(by_lang.at[lang, m]) for lang in chunk))
            console.print(view)
    _print_intervals(result, console, short)
    _print_seeds(result, console, short)
    _print_correlations(result, console, short)
    _print_validity(result, console, short)
    _print_reliability(result, console, short)


def _print_intervals(result: CompareResult, console: Console, short: dict[str, str]) -> None:
    """One row per sentence-level score with a CI: its interval and its neutral test."""
    scores = result.scores
    if scores.empty or "ci_level" not in scores.columns:
        return
    rows = scores[(scores["method"] != "weat") & scores["ci_low"].notna()]
    if rows.empty:
        return
    level = percent(float(rows["ci_level"].iloc[0]))
    view = Table(title=f"Sentence-level scores: {level} CI over items", title_justify="left")
    for col in ("model", "lang", "measure", "value [CI]", "p (neutral)"):
        view.add_column(col, justify="right" if col == "p (neutral)" else "left", no_wrap=True)
    neutrals: dict[str, float] = {}
    for r in rows.itertuples(index=False):
        mark = "*" if r.ci_excludes_neutral in (True,) else ""  # None, NaN: no CI or neutral
        neutral = None if pd.isna(r.neutral) else float(r.neutral)
        if neutral is not None:
            neutrals[short.get(r.measure, r.measure)] = neutral
        view.add_row(
            str(r.model),
            str(r.lang),
            short.get(r.measure, r.measure),
            format_estimate(r.value, r.ci_low, r.ci_high, neutral=neutral) + mark,
            fmt_p(r.p_value_neutral),
        )
    console.print(view)
    named = ", ".join(f"{m} {n:g}" for m, n in neutrals.items())
    console.print(
        "CI: percentile bootstrap over the items (samples, examples, pairs, sentences); * the "
        f"CI excludes the neutral value ({named or 'none'}). p (neutral): exact binomial test "
        "of 50% (CrowS-Pairs, SS, MBE).",
        highlight=False,
        markup=False,
    )


def _print_seeds(result: CompareResult, console: Console, short: dict[str, str]) -> None:
    """Mean and between-seed SD of every measure of the models given as checkpoints."""
    if result.seeds.empty:
        return
    view = Table(title="Seeds: mean and between-seed SD over checkpoints", title_justify="left")
    for col in ("model", "lang", "measure", "seeds", "mean", "SD"):
        view.add_column(col, justify="right" if col in ("seeds", "mean", "SD") else "left")
    for r in result.seeds.itertuples(index=False):
        measure = short.get(r.measure, r.measure)
        view.add_row(
            str(r.model), str(r.lang), measure, str(r.n_seeds), _fmt(r.seed_mean), _fmt(r.seed_sd)
        )
    console.print(view)


def _print_correlations(result: CompareResult, console: Console, short: dict[str, str]) -> None:
    corr = result.correlations
    if corr.empty:
        return
    level = float(result.manifest.get("correlation", {}).get("confidence_level", 0.95))
    bootstrap = corr[["spearman_ci_low", "kendall_ci_low"]].notna().to_numpy().any()
    intervals = f"{percent(level)} CI" if bootstrap else ""  # no column without a bootstrap
    used: set[str] = set()
    for (mx, my), rows in corr.groupby(["measure_x", "measure_y"], sort=False):
        view = Table(title=f"{short[mx]} ~ {short[my]}", title_justify="left")
        value = f"value [{intervals}]" if intervals else "value"
        for col in ("scope", "n", "statistic", value, "p", "note"):
            right = col in ("n", "p")
            view.add_column(col, justify="right" if right else "left", no_wrap=True)
        for r in rows.itertuples(index=False):
            for name, label in (("spearman", "Spearman ρ"), ("kendall", "Kendall τ_b")):
                value, star, marks = correlation_cell(r, name, level)
                used.update(star + marks)
                view.add_row(
                    str(r.scope), str(r.n), label, value, fmt_p(getattr(r, f"{name}_p")), marks
                )
        console.print(view)
    legend = correlation_legend(used, corr, level, bool(intervals))
    for line in legend:
        console.print(line, highlight=False, markup=False)


def _print_validity(result: CompareResult, console: Console, short: dict[str, str]) -> None:
    """The verdict of every convergent pair of the MTMM matrix, then one line on the
    discriminant pairs (the whole matrix is in validity.csv)."""
    pairs = result.validity
    if pairs.empty:
        return
    console.print(
        "Validity (multitrait–multimethod matrix, Campbell & Fiske 1959; validity.csv):",
        highlight=False,
        markup=False,
    )
    convergent = pairs[pairs["kind"] == "convergent"]
    for r in convergent.itertuples(index=False):
        x, y = short.get(r.measure_x, r.measure_x), short.get(r.measure_y, r.measure_y)
        console.print(f"  {x} ~ {y}: {r.verdict}", highlight=False, markup=False)
    console.print(f"  {validity_line(pairs)}", highlight=False, markup=False)


def _print_reliability(result: CompareResult, console: Console, short: dict[str, str]) -> None:
    """One line per measure: its test–retest reliability over the seeds (reliability.csv)."""
    if result.reliability.empty:
        return
    level = percent(float(result.manifest.get("correlation", {}).get("confidence_level", 0.95)))
    console.print(
        f"Test–retest reliability over seeds ({level} CIs; reliability.csv):",
        highlight=False,
        markup=False,
    )
    for r in result.reliability.itertuples(index=False):
        console.print(
            f"  {short.get(r.measure, r.measure)}: split-half r_SB = "
            f"{format_estimate(r.split_half, r.split_half_ci_low, r.split_half_ci_high)}, "
            f"ICC(2,1) = {format_estimate(r.icc2, r.icc2_ci_low, r.icc2_ci_high)}, ICC(2,k) = "
            f"{format_estimate(r.icc2k, r.icc2k_ci_low, r.icc2k_ci_high)} "
            f"({r.n_units} units, {r.n_seeds} seeds)",
            highlight=False,
            markup=False,
        )


def _fmt(value: Any) -> str:
    return "" if pd.isna(value) else f"{float(value):.3f}"


def _convention_lines(result: CompareResult) -> list[str]:
    """The ``note:`` lines of the models whose causal scores left their first token out
    (:func:`weatkit.scoring.conventions.notes`), once per model."""
    from weatkit.scoring.conventions import notes

    seen: dict[str, dict[str, str]] = {}
    for by_spec in result.manifest.get("scoring_conventions", {}).values():
        seen.update(by_spec)
    return notes(seen)
