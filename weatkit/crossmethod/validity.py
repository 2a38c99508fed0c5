"""Convergent and discriminant validity in ``weatkit compare``: the MTMM matrix of its measures.

Each measure column of the joined table (``table.csv``) is a trait measured by a method: the
trait is what the comparison file's ``validity.traits`` says (patterns of column names,
``fnmatch``, first match wins: ``{"*weat6*": gender, "gest:g_s": gender, "*weat3*": race}``),
the method the measure's family (``scores.csv``'s ``method``: ``weat``, ``rnd``, ``gest``,
``crows``, ...). Columns no pattern matches are left out. The units are the model × language
rows, pooled over the languages, as the ``all`` scope of ``correlations.csv``; the intervals,
permutation p-values and significance level are those of the ``correlation`` section.

:func:`weatkit.validity.mtmm` computes the matrix (Campbell & Fiske 1959); ``validity.csv`` is
its pairs, :data:`weatkit.validity.MTMM_COLUMNS`:

=================================  ============================================================
``measure_x``, ``measure_y``       the two measure columns
``trait_x``/``_y``, ``method_x``/  their traits and methods
``_y``
``kind``                           ``convergent`` (same trait, different methods),
                                   ``heterotrait-monomethod``, ``heterotrait-heteromethod``,
                                   ``monotrait-monomethod``
``n``                              units where both are present
``statistic``, ``value``           the correlation and its value (NaN below 3 units)
``ci_low``, ``ci_high``            percentile bootstrap interval over the units
``p``                              two-sided permutation p
``flag``                           why the row cannot be read as significant ('' if it can)
``verdict``                        the pair in words (:mod:`weatkit.validity.mtmm`)
=================================  ============================================================

Without traits, or with traits that give no convergent or no discriminant pair, there is no
matrix: :func:`validity_table` returns an empty table and a one-line note saying why.

**Test–retest reliability over seeds** (``reliability.csv``, :func:`seed_reliability`): where
the file gives models as ``checkpoints`` (the same model trained with different seeds), the
checkpoints are parallel forms of each measure. For a measure, the units are the ``checkpoints``
entries × languages with a value at every one of the first K checkpoints (K: the fewest any
entry has; units in the file's order of models, then languages), the forms checkpoints
1 … K; :func:`weatkit.validity.split_half` (r_SB averaged
over splits, bootstrap CI over the units) and :func:`weatkit.validity.icc` (ICC(2,1): one seed,
ICC(2,k): the seed mean; F-based CIs) read that n × K table, with the ``correlation``
section's resamples, seed and level. Columns (:data:`RELIABILITY_COLUMNS`): ``measure``,
``n_units``, ``n_seeds``, ``split_half`` with ``split_half_ci_low``/``_high``, ``icc2`` with
its CI and ``icc2_p`` (F test of ICC = 0), ``icc2k`` with its CI. A measure with fewer than
:data:`MIN_RELIABILITY_UNITS` such units is left out (the note says so when every one is).
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import pandas as pd

from weatkit.crossmethod.config import (
    CHECKPOINT_MARK,
    CompareConfig,
    CorrelationOptions,
    ValidityOptions,
)
from weatkit.errors import WeatkitError
from weatkit.validity import MTMM_COLUMNS, icc, mtmm, mtmm_shortfall, split_half

#: Columns of ``reliability.csv`` (:func:`seed_reliability`).
RELIABILITY_COLUMNS = [
    "measure", "n_units", "n_seeds", "split_half", "split_half_ci_low", "split_half_ci_high",
    "icc2", "icc2_ci_low", "icc2_ci_high", "icc2_p", "icc2k", "icc2k_ci_low", "icc2k_ci_high",
]  # fmt: skip
#: Fewest units (checkpoint entries × languages) for a reliability over seeds.
MIN_RELIABILITY_UNITS = 3


def measure_traits(
    table: pd.DataFrame, scores: pd.DataFrame, options: ValidityOptions
) -> dict[str, tuple[str, str]]:
    """Measure column -> ``(trait, method)`` for the columns a ``traits`` pattern matches, in
    the table's order (method: the column's ``method`` in ``scores``)."""
    methods = scores.drop_duplicates("measure").set_index("measure")["method"]
    out = {}
    for column in table.columns:
        if column in ("model", "lang") or column not in methods.index:
            continue
        trait = next((t for p, t in options.traits.items() if fnmatchcase(column, p)), None)
        if trait is not None:
            out[column] = (trait, str(methods[column]))
    return out


def validity_table(
    table: pd.DataFrame,
    scores: pd.DataFrame,
    options: ValidityOptions,
    correlation: CorrelationOptions,
) -> tuple[pd.DataFrame, str]:
    """``(validity.csv, note)``: the MTMM pairs of the measures with a trait and an empty
    note, or an empty table and a one-line note saying why there is no matrix."""
    empty = pd.DataFrame(columns=MTMM_COLUMNS)
    if not options.traits:
        return empty, "validity: no MTMM matrix (name the measures' traits in validity.traits)"
    measures = measure_traits(table, scores, options)
    if not measures:
        return empty, "validity: no MTMM matrix: no measure column matches validity.traits"
    why = mtmm_shortfall(measures)
    if why is not None:
        return empty, f"validity: no MTMM matrix: {why}"
    result = mtmm(
        table[list(measures)],
        measures,
        statistic=options.statistic,
        n_bootstrap=correlation.n_bootstrap,
        seed=correlation.seed,
        confidence_level=correlation.confidence_level,
    )
    return result.pairs, ""


def seed_reliability(scores: pd.DataFrame, config: CompareConfig) -> tuple[pd.DataFrame, str]:
    """``(reliability.csv, note)``: test–retest reliability of every measure over the seeds of
    the ``checkpoints`` entries (module docstring); an empty table and '' without such
    entries, an empty table and a one-line note when no measure has enough units."""
    empty = pd.DataFrame(columns=RELIABILITY_COLUMNS)
    entries = [m for m in config.models if m.checkpoints]
    if not entries or scores.empty:
        return empty, ""
    k = min(len(m.checkpoints) for m in entries)
    corr = config.correlation
    split = scores["model"].str.rpartition(CHECKPOINT_MARK)
    seeded = scores.assign(entry=split[0], seed=split[2])
    names = [m.name for m in entries]
    units = pd.MultiIndex.from_tuples(  # the file's order: the bootstrap resamples positions
        [(name, lang) for name in names for lang in config.languages], names=["entry", "lang"]
    )
    seeded = seeded[seeded["entry"].isin(names) & seeded["seed"].isin(map(str, range(1, k + 1)))]
    rows = []
    for measure, part in seeded.groupby("measure", sort=False):
        wide = part.pivot_table(index=["entry", "lang"], columns="seed", values="value")
        wide = wide.reindex(index=units, columns=[str(i) for i in range(1, k + 1)]).dropna()
        if len(wide) < MIN_RELIABILITY_UNITS:
            continue
        try:
            half = split_half(
                wide.to_numpy(), n_bootstrap=corr.n_bootstrap, seed=corr.seed,
                confidence_level=corr.confidence_level,
            )  # fmt: skip
        except WeatkitError:  # every split has a constant half: no correlation
            continue
        both = icc(wide.to_numpy(), confidence_level=corr.confidence_level)
        single, mean = both["ICC2"], both["ICC2k"]
        rows.append(
            {
                "measure": measure,
                "n_units": len(wide),
                "n_seeds": k,
                "split_half": half.statistic,
                "split_half_ci_low": half.confidence_interval[0],
                "split_half_ci_high": half.confidence_interval[1],
                "icc2": single.statistic,
                "icc2_ci_low": single.confidence_interval[0],
                "icc2_ci_high": single.confidence_interval[1],
                "icc2_p": single.pvalue,
                "icc2k": mean.statistic,
                "icc2k_ci_low": mean.confidence_interval[0],
                "icc2k_ci_high": mean.confidence_interval[1],
            }
        )
    if not rows:
        return empty, (
            f"validity: no test–retest reliability over seeds: {len(entries)} checkpoints "
            f"model(s) × {len(config.languages)} language(s) give fewer than "
            f"{MIN_RELIABILITY_UNITS} units with a value at every seed for each measure"
        )
    return pd.DataFrame(rows, columns=RELIABILITY_COLUMNS), ""
