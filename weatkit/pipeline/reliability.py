"""The ``reliability`` table of a run or a grid: reliability across the parallel lists.

For each language × list set × test with at least 2 parallel lists (CA-WEAT's lists of a
language) scored by at least 3 embeddings, :func:`weatkit.validity.parallel_forms` takes the
embeddings as units and the lists as parallel forms of the n × k table of effect sizes d, and
gives the split-half reliability r_SB (mean over splits of the lists, percentile bootstrap CI
over the embeddings) and ICC(2,1), ICC(2,k) with their F-based CIs. The engine's
``n_bootstrap``, ``seed`` and ``confidence_level`` are used. A run with parallel lists but too
few embeddings gets one report line instead (:func:`weatkit.validity.parallel_forms_shortfall`);
a run without parallel lists gets neither.
"""

from __future__ import annotations

import pandas as pd

from weatkit.engine.weat import EngineOptions
from weatkit.validity import parallel_forms, parallel_forms_shortfall
from weatkit.validity.parallel import FORM_COLUMN, GROUP_COLUMNS


def reliability_frame(
    results: pd.DataFrame, engine: EngineOptions
) -> tuple[pd.DataFrame, list[str]]:
    """The ``reliability`` table of ``results`` and its report line (module docstring): an
    empty table and no line when no test has 2 lists in one language."""
    if results.empty or results.groupby(GROUP_COLUMNS)[FORM_COLUMN].nunique().max() < 2:
        return pd.DataFrame(), []
    table = parallel_forms(
        results,
        n_bootstrap=engine.n_bootstrap,
        seed=engine.seed,
        confidence_level=engine.confidence_level,
    )
    note = parallel_forms_shortfall(results) if table.empty else None
    return table, [note] if note else []


def reliability_line(table: pd.DataFrame) -> str:
    """One line summing up a non-empty ``reliability`` table, e.g. ``reliability across
    parallel lists: 2 language × test row(s), 5 embeddings; median split-half r_SB 0.91,
    median ICC(2,k) 0.88``."""
    return (
        f"reliability across parallel lists: {len(table)} language × test row(s), "
        f"{int(table['n_units'].max())} embeddings; median split-half r_SB "
        f"{table['split_half'].median():.2f}, median ICC(2,k) {table['icc2k'].median():.2f}"
    )
