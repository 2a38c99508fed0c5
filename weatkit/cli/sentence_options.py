"""The options every ``weatkit`` sentence command shares, each declared once, and their checks.

The commands that score sentences with a language model (the sentence measures' and the other
measure packages' commands, :mod:`weatkit.measures.plugins`) take:

* :func:`resampling_options` (``--bootstrap``, ``--seed``, ``--confidence``: a percentile
  bootstrap, :mod:`weatkit.stats.resampling`) and :func:`seed_option` (``--seed``, also of
  ``mbe``);
* :func:`controls_option` (``--controls[=KINDS]`` of ``crows`` and ``stereoset``);
* :func:`limit_option` (``--limit N``, the schema's :data:`~weatkit.config.schema.SAMPLE`);
* :func:`log_items_option` (``--log-items[=FORMAT]``, the schema's
  :data:`~weatkit.config.schema.ITEM_LOG`) and :func:`check_log_items`;
* :func:`compat_option` / :func:`compat_values` (``--compat PRESET``: a reference tool's
  conventions, :mod:`weatkit.measures.compat`);
* :func:`stereoset_scoring_options` (``--blanks``, ``--bos-pass``, ``--leading-space``).

Each is read while parsing, so a bad value is a one-line error naming the flag. The language
model itself (``--model`` and its loading options) is
:func:`weatkit.cli.options.language_model_options`; what the commands write beside their tables
is :mod:`weatkit.cli.sentence_outputs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from weatkit.cli.errors import fail
from weatkit.cli.options import Decorator, stack
from weatkit.config.schema import ITEM_LOG, SAMPLE, options_from_cli, split_names
from weatkit.errors import ConfigError, WeatkitError


def resampling_options(
    *, n_bootstrap: int, seed: int, confidence_level: float, bootstrap_help: str
) -> Decorator:
    """``--bootstrap``, ``--seed`` and ``--confidence`` of a sentence measure's percentile
    bootstrap (:mod:`weatkit.stats.resampling`), with the measure's defaults."""
    return stack(
        [
            click.option(
                "--bootstrap",
                "n_bootstrap",
                type=click.IntRange(min=0),
                default=n_bootstrap,
                show_default=True,
                help=bootstrap_help,
                callback=_plan_fits,
            ),
            seed_option("Seed of the bootstrap resamples.", seed),
            click.option(
                "--confidence",
                type=click.FloatRange(0, 1, min_open=True, max_open=True),
                default=confidence_level,
                show_default=True,
            ),
        ]
    )


def seed_option(help_text: str, default: int = 0) -> Decorator:
    """``--seed`` of a sentence command: a non-negative integer (a numpy seed), checked when
    parsed (the word-level engine's is declared in :data:`weatkit.config.schema.ENGINE`)."""
    return click.option(
        "--seed", type=click.IntRange(min=0), default=default, show_default=True, help=help_text
    )


def _plan_fits(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Refuse an absurd ``--bootstrap`` before any work (:func:`check_plan_size`)."""
    from weatkit.stats.resampling import check_plan_size

    try:
        check_plan_size(value, (1,))
    except ConfigError as err:
        raise click.BadParameter(err.problem, ctx, param) from None
    return value


def controls_option(help_text: str) -> Decorator:
    """``--controls[=KINDS]``: also score the measure's control sets (Pikuliak et al. 2023) —
    all of them when no value is given (or ``all``), else the comma-separated KINDS, which the
    library checks. The command receives ``controls``: None (not given), True (all) or the
    tuple of kinds."""
    return click.option(
        "--controls",
        "controls",
        is_flag=False,
        flag_value="all",
        default=None,
        metavar="[KINDS]",
        help=help_text,
        callback=_control_kinds,
    )


def _control_kinds(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> bool | tuple[str, ...] | None:
    if value is None:
        return None
    try:
        kinds = split_names([value], "--controls")
    except ConfigError as err:  # ',,': no kind, not all of them
        fail(str(err))
    return True if kinds == ("all",) else kinds


def limit_option(what: str) -> Decorator:
    """``--limit N``: the schema's :data:`~weatkit.config.schema.SAMPLE` option (a compare
    file's ``limit``), read while parsing so that 0, -3 or 2.5 is a one-line error naming the
    flag; the command receives ``limit`` (None or N ≥ 1). ``what`` names the items and strata of
    the command (``pairs, stratified by bias type``)."""
    option = SAMPLE["limit"]
    return click.option(
        option.flag,
        "limit",
        metavar="N",
        default=None,
        help=f"With --model: {option.help} Here: {what}.",
        callback=_limit,
    )


def _limit(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    from weatkit.stats.sampling import SampleOptions

    try:
        return options_from_cli(SampleOptions, SAMPLE, {"limit": value}).limit
    except ConfigError as err:
        fail(str(err))


def log_items_option() -> Decorator:
    """``--log-items[=FORMAT]``: the schema's :data:`~weatkit.config.schema.ITEM_LOG` option (a
    compare file's ``log_items``), read while parsing so that an unknown format is a one-line
    error naming the flag; the command receives ``log_items`` (None, ``parquet`` when given
    without a value, or ``csv``)."""
    option = ITEM_LOG["log_items"]
    return click.option(
        option.flag,
        "log_items",
        is_flag=False,
        flag_value=option.choices[0],
        default=None,
        metavar=f"[{'|'.join(option.choices)}]",
        help=f"With --out: {option.help}",
        callback=_log_items,
    )


def _log_items(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from weatkit.items.log import ItemLogOptions

    try:
        return options_from_cli(ItemLogOptions, ITEM_LOG, {"log_items": value}).log_items
    except ConfigError as err:
        fail(str(err))


def check_log_items(opts: Mapping[str, Any]) -> None:
    """Refuse ``--log-items`` without ``--out`` (before any scoring)."""
    if opts["log_items"] and not opts["out_dir"]:
        raise WeatkitError(
            f"--log-items writes items.{opts['log_items']} into the output directory: give "
            "--out DIR"
        )


def compat_option(command: str) -> Decorator:
    """``--compat PRESET``: the option values that reproduce a reference tool's code, from
    :data:`weatkit.measures.compat.SENTENCE_PRESETS` (options given explicitly still win);
    :func:`compat_values` applies it."""
    from weatkit.measures.compat import SENTENCE_PRESETS

    presets = SENTENCE_PRESETS[command]
    return click.option(
        "--compat",
        type=click.Choice(list(presets)),
        help="Reproduce a reference tool's conventions: "
        + "; ".join(
            f"{name} = {', '.join(f'{k}={v}' for k, v in values.items())}"
            for name, values in presets.items()
        )
        + " (options given explicitly win; docs/guides/compat.md).",
    )


def compat_values(command: str, opts: dict[str, Any]) -> dict[str, Any]:
    """``opts`` with its ``--compat`` preset applied to the options not given on the command
    line; prints the one ``compat NAME: ...`` line to stderr."""
    from weatkit.cli.errors import err_console
    from weatkit.measures.compat import apply_preset, preset_line

    preset = opts.get("compat")
    if preset is None:
        return opts
    ctx = click.get_current_context()
    explicit = {
        name
        for name in opts
        if ctx.get_parameter_source(name)
        not in (None, click.core.ParameterSource.DEFAULT, click.core.ParameterSource.DEFAULT_MAP)
    }
    values = apply_preset(command, preset, explicit, opts)
    line = preset_line(command, preset, values)
    err_console.print(line, markup=False, highlight=False, soft_wrap=True)
    return values


def stereoset_scoring_options() -> Decorator:
    """``--blanks``, ``--bos-pass``, ``--leading-space/--no-leading-space``: the fields of
    :class:`weatkit.stereoset.scoring.StereosetScoring` (its docstring says what each does)."""
    return stack(
        [
            click.option(
                "--blanks",
                type=click.Choice(["last", "all"]),
                default="last",
                show_default=True,
                help="With --model, masked LMs: a context with several BLANKs gets the mask at "
                "the last and the word in the others (last), or the mask in all, the first read "
                "(all: the reference).",
            ),
            click.option(
                "--bos-pass",
                type=click.Choice(["joint", "separate"]),
                default="joint",
                show_default=True,
                help="With --model, causal LMs: every token conditioned on the BOS in one pass "
                "(joint), or the first token from a BOS-only pass and the rest from the "
                "sentence without the BOS (separate: the reference).",
            ),
            click.option(
                "--leading-space/--no-leading-space",
                default=False,
                show_default=True,
                help="With --model, masked LMs: tokenise the candidate word with the space "
                "before its BLANK (the bias-bench fix of the reference's RoBERTa scores: Ġword, "
                "not word); WordPiece tokenisations do not change.",
            ),
        ]
    )
