"""Reliability of GEST across its templates (issue 28 §4.1; Seshadri et al. 2022 ask the same).

A model scores each GEST sample j under each of k templates t (masked LMs: ids 0–3, "He said:
…", "The man said: …", …; causal LMs: ids 0–1), s_jt = log P(w_m | t(j)) − log P(w_f | t(j))
(:mod:`weatkit.gest.scoring`). A run scores one model of one kind, so its templates are the
templates of one method (masked or causal) and the reliability is within that method. The
templates are the **forms**; two kinds of **units** give two rows:

* ``stereotypes``: X[i, t] = mean_{j ∈ i} s_jt, stereotype i's mean score under template t
  (ln q_i in the base of the scores; the ``mean_score`` of :func:`weatkit.gest.aggregate.
  aggregate_by_template`), a 16 × k table: do the templates rank the stereotypes alike?
* ``samples``: X[j, t] = s_jt, a sample's score under each template (the samples with a score
  under every template; ``n_units_dropped`` counts the others): do the templates agree on which
  sentences are more masculine?

Each row has, from :func:`weatkit.validity.parallel.forms_reliability` (the statistics of the
``reliability`` table of a run, :func:`weatkit.validity.parallel_forms`):

* the split-half reliability with the Spearman–Brown correction (Spearman 1910; Brown 1910),
  r_SB = 2r / (1 + r), r = Pearson's correlation across the units of the mean scores of two
  halves of the templates, averaged over every split of the templates (one split for 2
  templates: r_SB = 2r / (1 + r) of the two columns), with a percentile bootstrap CI over the
  units (:func:`weatkit.validity.split_half`);
* ICC(2,1) and ICC(2,k) (Shrout & Fleiss 1979; two-way random, absolute agreement: the
  templates are a sample of the templates one could write), from the two-way ANOVA mean
  squares MSR (units), MSC (templates), MSE (residual) of the n × k table,
  ICC(2,1) = (MSR − MSE) / (MSR + (k − 1) MSE + k (MSC − MSE) / n), with F-based CIs and the p
  of ICC(2,1) = 0 (:func:`weatkit.validity.icc`).

A row needs k ≥ 2 templates and n ≥ 3 units; short of that the table has no row for it and a
one-line note says why (not an error).

References: Spearman, C. (1910), Brown, W. (1910), British Journal of Psychology 3. Shrout,
P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater reliability.
Psychological Bulletin 86(2), 420–428. Seshadri, P., Pezeshkpour, P., & Singh, S. (2022).
Quantifying social biases using templates is unreliable. arXiv:2210.04337.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import DEFAULT_BOOTSTRAP, DEFAULT_CONFIDENCE_LEVEL, DEFAULT_SEED
from weatkit.validity.parallel import MIN_FORMS, MIN_UNITS, STATISTIC_COLUMNS, forms_reliability
from weatkit.validity.reliability import N_SPLITS

#: The units of the two rows, and the column of the scores table that names a unit.
UNITS = {"stereotypes": "stereotype", "samples": "sample_id"}

#: The columns of :func:`gest_reliability` (``unit_kind``: stereotypes or samples; ``forms``: the
#: template ids, ``;``-separated).
GEST_RELIABILITY_COLUMNS = [
    "unit_kind",
    "n_units",
    "n_forms",
    "n_units_dropped",
    "forms",
    *STATISTIC_COLUMNS,
]


def gest_reliability(
    scores: pd.DataFrame,
    *,
    n_splits: int = N_SPLITS,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> tuple[pd.DataFrame, list[str]]:
    """Reliability of GEST's scores across templates (module docstring): split-half r_SB and
    ICC(2,1), ICC(2,k), the templates as forms, with stereotypes and with samples as units.

    Args:
        scores: per-sample scores, one row per template × sample (``template``, ``sample_id``,
            ``stereotype``, ``score``; NaN = unscored), e.g. of
            :func:`weatkit.gest.scoring.score_gest`. Without a ``template`` column the scores
            are one template.
        n_splits, n_bootstrap, seed, confidence_level: as in
            :func:`weatkit.validity.split_half` (``confidence_level`` also for the ICCs).

    Returns:
        The table (columns :data:`GEST_RELIABILITY_COLUMNS`, a row per kind of units that has
        3 units and 2 templates) and the one-line notes of the kinds that have not.

    Raises:
        WeatkitError: a column missing.

    Example:
        >>> rows = [{"template": t, "sample_id": j, "stereotype": 1 + j % 16,
        ...          "score": 0.1 * (j % 16) + 0.01 * t * (j % 3)}
        ...         for t in (0, 1) for j in range(48)]
        >>> table, notes = gest_reliability(pd.DataFrame(rows), n_bootstrap=0)
        >>> table["unit_kind"].tolist(), table["split_half"].round(3).tolist(), notes
        (['stereotypes', 'samples'], [1.0, 1.0], [])
    """
    for column in ("sample_id", "stereotype", "score"):
        if column not in scores.columns:
            raise WeatkitError(f"GEST reliability: the scores table has no {column!r} column")
    long = scores.assign(template=scores["template"] if "template" in scores.columns else 0)
    long = long.assign(score=pd.to_numeric(long["score"], errors="coerce"))
    templates = sorted(long["template"].unique())
    if len(templates) < MIN_FORMS:
        which = f" (template {templates[0]})" if templates else ""
        return pd.DataFrame(columns=GEST_RELIABILITY_COLUMNS), [
            f"no reliability across GEST templates: it needs {MIN_FORMS} templates, these scores "
            f"have {len(templates)}{which}; give --model with --templates 0,1,…"
        ]
    finite = long[np.isfinite(long["score"].to_numpy(dtype=np.float64))]
    rows, notes = [], []
    for units, column in UNITS.items():
        wide = finite.pivot_table(index=column, columns="template", values="score", aggfunc="mean")
        all_units = long[column].nunique()
        table = wide.reindex(columns=templates).dropna()
        if len(table) < MIN_UNITS:
            notes.append(
                f"no reliability across GEST templates with {units} as units: it needs "
                f"{MIN_UNITS} {units} scored under every template, these scores have {len(table)}"
            )
            continue
        table.index = table.index.astype(str)
        table.columns = [str(t) for t in table.columns]
        row: dict[str, object] = {
            "unit_kind": units,
            "n_units": len(table),
            "n_forms": len(templates),
            "n_units_dropped": all_units - len(table),
            "forms": ";".join(table.columns),
        }
        row.update(
            forms_reliability(
                table,
                n_splits=n_splits,
                n_bootstrap=n_bootstrap,
                seed=seed,
                confidence_level=confidence_level,
            )
        )
        rows.append(row)
    return pd.DataFrame(rows, columns=GEST_RELIABILITY_COLUMNS), notes

