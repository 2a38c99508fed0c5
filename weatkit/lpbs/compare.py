"""LPBS in ``weatkit compare``: an ``lpbs`` section of a comparison file, and its rows.

::

    lpbs:
      lists: [caliskan]                # list sets or files, as weat's (default: caliskan)
      tests: [weat6]                   # optional
      templates: ["[TARGET] likes [ATTRIBUTE]."]   # and the other options of weatkit lpbs
      swap: false

One column per test, ``lpbs:SET:TEST`` (a list set of several lists per language, such as
CA-WEAT's: ``lpbs:SET:LIST:TEST``), valued the effect size d with its percentile bootstrap
interval and the permutation p of S as the neutral test (:func:`weatkit.lpbs.lpbs`; the
resamples, seed and level are the ``scores`` section's, the model's loading options the file's
``contextual``). Masked LMs only; a language without lists is not applicable. With the file's
``log_items`` every (template, attribute) row goes to the item log
(:func:`weatkit.lpbs.items.lpbs_items`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from weatkit.config.declare import Source, options_from_file
from weatkit.config.files import check_keys
from weatkit.config.run import run_config_from_mapping
from weatkit.lpbs.options import LpbsOptions
from weatkit.lpbs.plugin import SECTION

_LIST_KEYS = ("lists", "tests", "lower", "strip_accents")


@dataclass(frozen=True)
class LpbsSection:
    """A comparison file's ``lpbs`` section (the module docstring)."""

    lists: tuple[str, ...] = ("caliskan",)
    tests: tuple[str, ...] | None = None
    options: LpbsOptions = field(default_factory=LpbsOptions)


def read_section(
    values: dict[str, Any], base: Path, source: Source, contextual: Any
) -> LpbsSection:
    """The ``lpbs`` section of a comparison file; errors name the file and the key."""
    check_keys(values, {*_LIST_KEYS, *SECTION.file_keys}, str(source))
    listed = {k: values.pop(k) for k in _LIST_KEYS if k in values}
    run = run_config_from_mapping(
        {"lists": ["caliskan"], **listed}, source, base, keys=_LIST_KEYS, contextual=contextual
    )
    return LpbsSection(
        run.lists, run.tests, options_from_file(LpbsOptions, SECTION, values, source)
    )


def job_inputs(section: LpbsSection, lang: str) -> object:
    """The SHA-256 of the lists in ``lang`` (the job's key)."""
    from weatkit.lists.sources import lists_identity

    return lists_identity(section.lists, lang, section.tests)


def lpbs_rows(entry: Any, kind: str, lang: str, section: LpbsSection, ctx: Any) -> list[dict]:
    """d of every test of ``section`` in ``lang``, as compare's score rows."""
    from weatkit.crossmethod.methods import (
        check_applicable,
        check_lists,
        list_test_keys,
        score_rows,
    )
    from weatkit.lpbs.items import lpbs_items
    from weatkit.lpbs.run import run_lpbs
    from weatkit.measures.result import MeasureResult

    check_applicable("lpbs", entry, kind, lang)
    check_lists(section.lists, lang)
    run = run_lpbs(
        entry.model,
        section.lists,
        langs=(lang,),
        tests=section.tests,
        confidence_level=ctx.scores.confidence_level,
        options=ctx.options,
        n_bootstrap=ctx.scores.n_bootstrap,
        seed=ctx.scores.seed,
        show_progress=ctx.show_progress,
        **asdict(section.options),
    )
    ctx.log(lambda: lpbs_items(run, model=entry.name))
    summary = run.summary
    results, p_values = [], {}
    for r, key in zip(summary.itertuples(index=False), list_test_keys(summary), strict=True):
        test = f"lpbs:{key}"
        results.append(
            MeasureResult(
                "lpbs", entry.name, lang, float(r.effect_size), float(r.effect_size_low),
                float(r.effect_size_high), ctx.scores.confidence_level, int(r.n_a + r.n_b),
                f"d of {r.unit} units; percentile bootstrap; {r.permutation_method} p", test,
            )
        )  # fmt: skip
        p_values[test] = float(r.pvalue)
    return score_rows(results, p_values)
