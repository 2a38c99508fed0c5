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
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import pandas as pd

from weatkit.crossmethod.config import CorrelationOptions, ValidityOptions
from weatkit.validity import MTMM_COLUMNS, mtmm, mtmm_shortfall


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
