"""GEST metrics per template: :func:`~weatkit.gest.aggregate.aggregate_scores` on each
template's scores (Pikuliak et al. 2023, arXiv:2311.18711, Table 2 lists the templates).

A model scored with several templates (``weatkit gest --model M --templates 0,1``) gives one
score per template and sample; each template is aggregated on its own, and the tables are
stacked with a leading ``template`` column.
"""

from __future__ import annotations

import pandas as pd

from weatkit.gest.aggregate import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_LEVEL,
    DEFAULT_SEED,
    GestSummary,
    LogBase,
    aggregate_scores,
)


def aggregate_by_template(
    scores: pd.DataFrame,
    *,
    log_base: LogBase | str = "10",
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> GestSummary:
    """q_i, ranks, q_f, q_m, g_s and q_fam of each template (see :func:`aggregate_scores`).

    With a ``template`` column, every template's rows are aggregated separately (templates in
    ascending order, each with the same ``seed``) and both tables get ``template`` as their
    first column; without one, this is :func:`aggregate_scores` itself.

    Example:
        >>> import pandas as pd
        >>> scores = pd.DataFrame({"template": [0] * 16 + [1] * 16,
        ...                        "stereotype": list(range(1, 17)) * 2, "score": [0.1] * 32})
        >>> result = aggregate_by_template(scores, n_bootstrap=0)
        >>> result.summary["template"].tolist(), result.summary["g_s"].round(3).tolist()
        ([0, 1], [1.0, 1.0])
    """
    options = {"log_base": log_base, "n_bootstrap": n_bootstrap, "seed": seed, "level": level}
    if "template" not in scores.columns:
        return aggregate_scores(scores, **options)
    parts = [
        (template, aggregate_scores(group, **options))
        for template, group in scores.groupby("template", sort=True)
    ]
    return GestSummary(
        stereotypes=_template_first(
            pd.concat([r.stereotypes.assign(template=t) for t, r in parts], ignore_index=True)
        ),
        summary=_template_first(
            pd.concat([r.summary.assign(template=t) for t, r in parts], ignore_index=True)
        ),
    )


def _template_first(table: pd.DataFrame) -> pd.DataFrame:
    return table[["template", *(c for c in table.columns if c != "template")]]
