"""The association metrics of a run on every test job (``RunConfig.metrics`` besides
``weat``)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from weatkit.association.query import Query, measure_query
from weatkit.engine.device import one_thread
from weatkit.pipeline.jobs import Job, row_keys
from weatkit.pipeline.run_config import RunConfig
from weatkit.progress import progress
from weatkit.report.tables import ASSOCIATION_INFLUENCE_COLUMNS, association_frames


def association_tables(
    jobs: Sequence[Job], config: RunConfig, show_progress: bool | None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[dict[str, str]]]:
    """The association metrics of ``config.metrics`` on every test
    (:func:`weatkit.association.query.measure_query`): the ``association``,
    ``association_items`` and ``association_influence`` tables and the metrics skipped, with
    the tests' keys."""
    rows: list[dict[str, object]] = []
    items: list[dict[str, object]] = []
    influence: list[dict[str, object]] = []
    skipped: list[dict[str, str]] = []
    bar = progress(total=len(jobs), desc="association metrics", unit="test", show=show_progress)
    with bar, one_thread():  # small products: one thread (weatkit.engine.device.one_thread)
        for job in jobs:
            assert job.vectors is not None
            covered = job.covered
            keys = row_keys(job.source.name, covered.test)
            t = covered.test
            query = Query(
                label=f"{t.test} ({t.list_set}, list {t.list_id}, {t.lang}) on {job.source.name}",
                sets=covered.items,
                pairs=t.pairs,
                vectors=job.vectors,
                min_coverage=config.min_coverage,
                null=job.null,
            )
            measured = measure_query(query, config.metrics, config.association, config.engine)
            rows += [{**keys, **row} for row in measured.rows]
            items += [{**keys, **item} for item in measured.items]
            influence += [{**keys, **row} for row in measured.influence]
            skipped += [
                {**keys, "metric": s.metric, "reason": s.reason, "cause": s.cause}
                for s in measured.skipped
            ]
            bar.update(1)
    table, item_table = association_frames(rows, items)
    influence_table = pd.DataFrame(influence, columns=ASSOCIATION_INFLUENCE_COLUMNS)
    return table, item_table, influence_table, skipped
