"""Run a grid: plan, skip finished jobs, run the rest on an executor, collate the tables.

Every job's outcome is written to ``OUTPUT/jobs/`` as soon as it finishes (atomically), so
Ctrl-C or a killed process loses only the job that was running. Tables are always collated from
the job records of the current plan, which makes a resumed run's tables identical to an
uninterrupted one's. Output files (written atomically, all at the end):

* ``results.csv``, ``summary.csv``: as for ``weatkit run`` (:mod:`weatkit.report.tables`);
  the summary gains ``iso_<measure>`` columns with an ``isomorphism`` section;
* ``isomorphism.csv``, ``correlations.csv``: with an ``isomorphism`` section
  (:mod:`weatkit.isomorphism.across_languages`);
* ``pooled.csv``: with ``pool`` (random-effects pooling of d over the grid's lists, languages
  or layers: :func:`weatkit.report.tables.pooled_frame`);
* ``comparisons.csv``: with ``baseline`` entries (:mod:`weatkit.grid.compare`);
* ``influence.csv``: with ``engine: {influence: true}`` (:mod:`weatkit.engine.influence`);
* ``null.csv``: with ``engine: {null: K}`` (:mod:`weatkit.engine.null`);
* ``association.csv``, ``association_items.csv``: with ``metrics`` naming an association metric
  (:mod:`weatkit.association.query`); ``association_influence.csv`` with ``influence``
  (:mod:`weatkit.association.influence`), ``association_pooled.csv`` with ``pool``
  (:func:`weatkit.report.tables.association_pooled_frame`);
* ``reliability.csv``: when some test has 2 parallel lists of a language scored by 3 of the
  grid's embeddings (split-half r_SB and ICC(2,·) across the lists, the embeddings as units:
  :mod:`weatkit.pipeline.reliability`); otherwise, with parallel lists, a note in the manifest;
* ``asymmetry.csv``, ``asymmetry_correlations.csv``: with an ``asymmetry`` section
  (:mod:`weatkit.asymmetry`);
* ``manifest.json``: versions, the experiment (path, SHA-256, parsed options), every job with
  its key, status (``ran``, ``reused`` or ``failed`` with the error), timings and, for a job
  run now, its ``worker`` (host, process id, models that process had loaded), skipped tests,
  the metrics skipped on a test (``skipped_metrics``), report lines, and what each worker's
  transformer models computed (``contextual_models``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pandas as pd

from weatkit._io.lock import directory_lock
from weatkit._io.paths import check_writable
from weatkit.asymmetry import asymmetry_correlations, asymmetry_table, attribute_counts
from weatkit.errors import WeatkitError
from weatkit.grid.compare import COMPARISON_COLUMNS
from weatkit.grid.config import GridConfig, check_inputs
from weatkit.grid.executors import Executor, LocalExecutor
from weatkit.grid.jobs import Job, plan_jobs
from weatkit.grid.store import JobStore
from weatkit.isomorphism.across_languages import correlation_table, with_isomorphism
from weatkit.lists.sources import select_lists
from weatkit.pipeline import environment, layer_models, reliability_frame, skipped_by_language
from weatkit.progress import progress
from weatkit.report.run_dir import manifest_inputs
from weatkit.report.tables import (
    ASSOCIATION_INFLUENCE_COLUMNS,
    INFLUENCE_COLUMNS,
    NULL_COLUMNS,
    RESULT_COLUMNS,
    association_frames,
    association_pooled_frame,
    manifest_bytes,
    pooled_frame,
    render,
    results_frame,
    summary_frame,
    write_outputs,
)


@dataclass(frozen=True)
class PlannedJob:
    """A job and whether a valid record of it already exists."""

    job: Job
    done: bool


@dataclass
class GridResult:
    """The collated tables of a grid (see the module docstring) and its manifest."""

    results: pd.DataFrame
    summary: pd.DataFrame
    isomorphism: pd.DataFrame
    correlations: pd.DataFrame
    comparisons: pd.DataFrame
    asymmetry: pd.DataFrame
    asymmetry_correlations: pd.DataFrame
    manifest: dict[str, Any]
    failed: list[dict[str, str]] = field(default_factory=list)
    pooled: pd.DataFrame = field(default_factory=pd.DataFrame)
    influence: pd.DataFrame = field(default_factory=pd.DataFrame)  # engine.influence
    null: pd.DataFrame = field(default_factory=pd.DataFrame)  # engine.null
    association: pd.DataFrame = field(default_factory=pd.DataFrame)  # metrics
    association_items: pd.DataFrame = field(default_factory=pd.DataFrame)
    association_influence: pd.DataFrame = field(default_factory=pd.DataFrame)  # influence
    association_pooled: pd.DataFrame = field(default_factory=pd.DataFrame)  # pool
    reliability: pd.DataFrame = field(default_factory=pd.DataFrame)  # parallel lists

    @property
    def computed(self) -> bool:
        """Whether any job computed anything: an effect size, an association metric, an
        isomorphism measure or an asymmetry (False when every test of every job was skipped,
        or every requested metric could not be computed)."""
        tables = (self.results, self.association, self.isomorphism, self.asymmetry)
        return any(not table.empty for table in tables)

    def skipped_by_language(self) -> list[str]:
        """The skipped tests counted per embeddings × language, one line each, as
        ``weatkit run`` prints them (:func:`weatkit.pipeline.skipped_by_language`); the
        skipped paired comparisons of a ``baseline`` are counted per ``EMB vs BASELINE/lang``
        against the comparisons that ran."""
        skipped = self.manifest.get("skipped", [])
        min_coverage = self.manifest.get("config", {}).get("min_coverage")
        tests = [s for s in skipped if "baseline" not in s]
        pairs = [
            {**s, "embeddings": f"{s['embeddings']} vs {s['baseline']}"}
            for s in skipped
            if "baseline" in s
        ]
        lines = skipped_by_language(self.results, tests, min_coverage)
        if pairs:
            compared = self.comparisons.assign(
                embeddings=self.comparisons["embeddings"] + " vs " + self.comparisons["baseline"]
            )
            lines += skipped_by_language(compared, pairs, min_coverage)
        return lines

    def tables(self) -> dict[str, pd.DataFrame]:
        """The non-empty tables by file stem (``results``, ``summary``, ...)."""
        named = {
            "results": self.results,
            "summary": self.summary,
            "isomorphism": self.isomorphism,
            "correlations": self.correlations,
            "comparisons": self.comparisons,
            "asymmetry": self.asymmetry,
            "asymmetry_correlations": self.asymmetry_correlations,
            "pooled": self.pooled,
            "influence": self.influence,
            "null": self.null,
            "association": self.association,
            "association_items": self.association_items,
            "association_influence": self.association_influence,
            "association_pooled": self.association_pooled,
            "reliability": self.reliability,
        }
        config = self.manifest.get("config", {})
        always = ("results", "summary", *(("pooled",) if config.get("pool") else ()))
        if any(m != "weat" for m in config.get("metrics", ())):
            always += ("association", "association_items")
        return {name: t for name, t in named.items() if name in always or len(t)}


def plan(config: GridConfig, *, force: bool = False) -> list[PlannedJob]:
    """The jobs of ``config`` and which of them are already finished (none with ``force``).

    Input files are not required to exist (a plan can be shown before they are made);
    :func:`weatkit.grid.config.check_inputs` checks them, as :func:`run_grid` does first.
    """
    store = JobStore(config.output)
    return [PlannedJob(job, not force and store.load(job) is not None) for job in plan_jobs(config)]


def run_grid(
    config: GridConfig,
    *,
    force: bool = False,
    fail_fast: bool = False,
    show_progress: bool | None = None,
    on_job_done: Callable[[Job], None] | None = None,
    executor: Executor | None = None,
) -> GridResult:
    """Run every unfinished job, then collate and write the tables into ``config.output``.

    Args:
        config: the experiment.
        force: recompute every job.
        fail_fast: stop at the first failing job (else record the error and go on).
        show_progress: progress bar (None: only on a terminal).
        on_job_done: called after each job's record is written.
        executor: where jobs run (default: :class:`LocalExecutor`, one after another in this
            process; :class:`weatkit.grid.ray_executor.RayExecutor` for Ray). Records are
            written here as jobs finish, whatever the executor, so every executor resumes the
            same way and gives the same tables.

    The output directory is locked for the whole run (:func:`weatkit._io.lock.directory_lock`):
    a second grid on the same directory stops at once instead of computing every job again.

    Raises:
        WeatkitError: a planning error, the output directory in use by another process, or a
            failing job with ``fail_fast``.
        KeyboardInterrupt: passes through; finished jobs are kept for the next run.
    """
    started = time.perf_counter()
    check_inputs(config)
    check_writable(config.output, directory=True)
    with directory_lock(config.output, "weatkit grid"):
        return _run_locked(config, started, force, fail_fast, show_progress, on_job_done, executor)


def _run_locked(
    config: GridConfig,
    started: float,
    force: bool,
    fail_fast: bool,
    show_progress: bool | None,
    on_job_done: Callable[[Job], None] | None,
    executor: Executor | None,
) -> GridResult:
    planned = plan(config, force=force)
    store = JobStore(config.output)
    store.clean_temporaries()
    executor = executor if executor is not None else LocalExecutor()
    status: dict[str, dict[str, Any]] = {}
    todo = [p.job for p in planned if not p.done]
    bar = progress(total=len(todo), desc="grid jobs", unit="job", show=show_progress)
    with bar, closing(executor.run(config, todo)) as outcomes:
        for outcome in outcomes:
            job = outcome.job
            bar.set_postfix_str(job.id, refresh=True)
            if outcome.record is None:
                if fail_fast:
                    raise WeatkitError(f"job {job.id} failed: {outcome.error}")
                status[job.id] = {"status": "failed", "error": outcome.error}
            else:
                store.save(job, outcome.record)
                status[job.id] = {"status": "ran", "worker": outcome.worker}
                if on_job_done is not None:
                    on_job_done(job)
            bar.update(1)
    result = collate(config, [p.job for p in planned], status, executor.contextual_models())
    result.manifest["timings_s"]["total"] = round(time.perf_counter() - started, 3)
    write_grid_outputs(config, result)
    return result


def collate(
    config: GridConfig,
    jobs: list[Job],
    status: dict[str, dict[str, Any]],
    contextual_models: list[dict[str, Any]] | None = None,
) -> GridResult:
    """The grid's tables from the records of ``jobs`` (in plan order) and the manifest.

    ``status`` holds what this run did per job id (``ran`` with its ``worker``, or ``failed``
    with its ``error``); ``contextual_models`` what the executor's models did.
    """
    store = JobStore(config.output)
    records: list[tuple[Job, dict[str, Any]]] = []
    job_rows = []
    for job in jobs:
        record = store.load(job)
        state = status.get(job.id, {"status": "reused" if record else "missing"})
        if record is not None:
            records.append((job, record))
            state = {**state, "timings_s": record.get("timings_s", {})}
        job_rows.append({"id": job.id, "kind": job.kind, "key": job.key, **state})

    def rows(kind: str, name: str) -> list[dict[str, Any]]:
        return [row for job, rec in records if job.kind == kind for row in rec.get(name, [])]

    results = results_frame(rows("weat", "results"))  # p_holm, q_bh over the whole grid
    summary = summary_frame(results, config.run.engine)
    pooled = pd.DataFrame()
    if config.run.pool:
        layers = layer_models(s.spec for s in config.sources)
        pooled = pooled_frame(results, config.run.pool, config.run.engine.confidence_level, layers)
    iso = pd.DataFrame(rows("weat", "isomorphism"))
    correlations = pd.DataFrame()
    if not iso.empty:
        summary = with_isomorphism(summary, iso)
        correlations = correlation_table(
            summary,
            confidence_level=config.run.engine.confidence_level,
            seed=config.run.engine.seed,
        )
    comparisons = pd.DataFrame(rows("compare", "comparisons"), columns=COMPARISON_COLUMNS)
    asymmetry, asymmetry_corr = _asymmetry(config, results)
    failed = [{"job": r["id"], "error": r["error"]} for r in job_rows if r["status"] == "failed"]
    manifest = _manifest(config, records, job_rows, contextual_models or [])
    association, association_items = association_frames(
        rows("weat", "association"), rows("weat", "association_items")
    )
    association_pooled = pd.DataFrame()
    if config.run.pool and config.run.association_metrics:
        layers = layer_models(s.spec for s in config.sources)
        association_pooled = association_pooled_frame(
            association, config.run.pool, config.run.engine.confidence_level, layers
        )
    reliability = pd.DataFrame()
    if config.run.reliability:
        reliability, notes = reliability_frame(results, config.run.engine)
        if notes:
            manifest["reliability"] = notes[0]
    return GridResult(
        results=results[RESULT_COLUMNS],
        summary=summary,
        isomorphism=iso,
        correlations=correlations,
        comparisons=comparisons,
        asymmetry=asymmetry,
        asymmetry_correlations=asymmetry_corr,
        manifest=manifest,
        failed=failed,
        pooled=pooled,
        influence=pd.DataFrame(rows("weat", "influence"), columns=INFLUENCE_COLUMNS),
        null=pd.DataFrame(rows("weat", "null"), columns=NULL_COLUMNS),
        association=association,
        association_items=association_items,
        association_influence=pd.DataFrame(
            rows("weat", "association_influence"), columns=ASSOCIATION_INFLUENCE_COLUMNS
        ),
        association_pooled=association_pooled,
        reliability=reliability,
    )


def _asymmetry(config: GridConfig, results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Attribute-count asymmetry of every result's list (CA-WEAT paper §5, Figure 3)."""
    if config.asymmetry is None or results.empty:
        return pd.DataFrame(), pd.DataFrame()
    run = config.run
    norm = run.normalization(lower=bool(run.lower), join_phrases=None)
    langs = tuple(sorted(results["lang"].unique()))
    tests = select_lists(run.lists, langs, normalization=norm, tests=run.tests).tests
    table = asymmetry_table(results, attribute_counts(tests, config.asymmetry))
    correlations = asymmetry_correlations(
        table, confidence_level=run.engine.confidence_level, seed=run.engine.seed
    )
    return table, correlations


def _manifest(
    config: GridConfig,
    records: list[tuple[Job, dict[str, Any]]],
    job_rows: list[dict[str, Any]],
    contextual_models: list[dict[str, Any]],
) -> dict[str, Any]:
    report: list[str] = []
    for _, record in records:
        report += [line for line in record.get("report", []) if line not in report]
    sources: list[dict[str, Any]] = []
    for _, record in records:
        sources += [s for s in record.get("list_sources", []) if s not in sources]
    run = config.run
    return {
        **environment(),
        "experiment": {"path": str(config.path), "sha256": config.sha256},
        "config": {
            **asdict(replace(run, embeddings=(), langs=config.languages)),
            "embeddings": [{**asdict(s.spec), "baseline": s.baseline} for s in config.sources],
            "asymmetry": config.asymmetry,
        },
        "seed": run.engine.seed,
        "jobs": job_rows,
        "failed": [r for r in job_rows if r["status"] == "failed"],
        "list_sources": sources,
        "embeddings": [e for _, rec in records for e in rec.get("embeddings", [])],
        "skipped": [s for _, rec in records for s in rec.get("skipped", [])],
        **(
            {"skipped_metrics": [s for _, r in records for s in r.get("skipped_metrics", [])]}
            if run.association_metrics
            else {}
        ),
        "report": report,
        "contextual_models": contextual_models,
        "timings_s": {},
    }


def write_grid_outputs(config: GridConfig, result: GridResult) -> None:
    """Write every table and the manifest into ``config.output``, atomically."""
    files = {f"{name}.csv": render(table, "csv") for name, table in result.tables().items()}
    files["manifest.json"] = manifest_bytes(result.manifest)
    reads = [config.path, *manifest_inputs(result.manifest)]  # never over an input
    write_outputs(config.output, files, reads=reads)
