"""``weatkit compare``: every method for every model and language, joined and correlated.

Outputs (:func:`write_compare`):

====================  ======================================================================
``scores.csv``        long table, one row per model × language × measure
                      (:data:`weatkit.crossmethod.methods.SCORE_COLUMNS`)
``table.csv``         the joined table: one row per model × language, one column per measure
``correlations.csv``  Spearman and Kendall correlations between measures across the
                      model × language units, with bootstrap CIs, permutation p-values and
                      a flag for too few units
                      (:data:`weatkit.stats.correlation.CORRELATION_COLUMNS`)
``validity.csv``      only with ``validity.traits``: the multitrait–multimethod matrix of the
                      measures, one row per pair (convergent, discriminant) with its CI,
                      permutation p and verdict (:mod:`weatkit.crossmethod.validity`)
``reliability.csv``   only with ``checkpoints`` entries: test–retest reliability of each
                      measure over the seeds (split-half r_SB, ICC(2,1), ICC(2,k), with CIs;
                      :func:`weatkit.crossmethod.validity.seed_reliability`)
``skipped.csv``       ``model, lang, method, status, reason``: ``not applicable`` (no data in
                      that language, a causal LM where a masked LM is needed) or ``failed``
``items.parquet``     only with ``log_items`` (``items.csv`` with ``csv``): one row per item
                      every sentence-level job scored (:mod:`weatkit.items.log`), from the
                      jobs' records (a resumed comparison's too)
``seeds.csv``         only with ``checkpoints`` entries: one row per model × language ×
                      measure, the mean and between-seed SD over its checkpoints
                      (:data:`SEED_COLUMNS`, :func:`seed_table`)
``manifest.json``     the comparison file's hash, options, environment, timings, and every
                      job with its key and status (``ran`` with its worker, ``reused``,
                      ``failed``)
``correlations.png``  :func:`weatkit.crossmethod.plot.correlation_heatmap` (pooled scope)
``jobs/``             one record per finished job (:class:`weatkit.grid.store.JobStore`),
                      reused by the next run while its key is unchanged: a killed study
                      resumes (``records``)
====================  ======================================================================
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from weatkit._io.lock import directory_lock
from weatkit._io.paths import check_writable
from weatkit.crossmethod.config import CHECKPOINT_MARK, CompareConfig, load_compare_config
from weatkit.crossmethod.execute import execute_compare_job, release_held, skip_row
from weatkit.crossmethod.jobs import CompareJob, ComparePlan, plan_compare
from weatkit.crossmethod.methods import SCORE_COLUMNS
from weatkit.crossmethod.plot import correlation_heatmap
from weatkit.crossmethod.validity import RELIABILITY_COLUMNS, seed_reliability, validity_table
from weatkit.grid.executors import Executor, LocalExecutor
from weatkit.grid.store import JobStore
from weatkit.items.log import concat_items, item_log_files
from weatkit.models.cache import CacheCount
from weatkit.pipeline import environment
from weatkit.progress import progress
from weatkit.report.figures import figure_bytes
from weatkit.report.tables import manifest_bytes, render, write_outputs
from weatkit.stats.correlation import EXACT_MAX_UNITS, N_PERMUTATIONS, correlation_table
from weatkit.stats.sampling import ItemSample
from weatkit.validity import MTMM_COLUMNS

SKIPPED_COLUMNS = ["model", "lang", "method", "status", "reason"]
#: Columns of ``seeds.csv`` (:func:`seed_table`).
SEED_COLUMNS = ["model", "lang", "method", "measure", "n_seeds", "seed_mean", "seed_sd"]


@dataclass
class CompareResult:
    """Tables of a comparison (columns: see the module docstring), the samples scored where a
    section has a ``limit`` (``METHOD:MODEL:LANG`` -> the sample; also in the manifest's
    ``samples``), and the scores each step reused from the score cache or computed
    (``METHOD:MODEL:LANG`` -> :class:`~weatkit.models.cache.CacheCount`, steps that scored
    sentences; also in the manifest's ``cache``). ``validity`` is the MTMM table
    (``validity.csv``, empty without one), ``reliability`` the reliability over seeds
    (``reliability.csv``, empty without one) and ``validity_notes`` why either is missing
    (one line each); ``items`` the per-item logs of every job (``items.parquet``; None without
    ``log_items``)."""

    scores: pd.DataFrame
    table: pd.DataFrame
    correlations: pd.DataFrame
    skipped: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    seeds: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SEED_COLUMNS))
    samples: dict[str, ItemSample] = field(default_factory=dict)
    cache: dict[str, CacheCount] = field(default_factory=dict)
    validity: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MTMM_COLUMNS))
    reliability: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=RELIABILITY_COLUMNS)
    )
    validity_notes: tuple[str, ...] = ()
    items: pd.DataFrame | None = None

    @property
    def n_failed(self) -> int:
        return int((self.skipped["status"] == "failed").sum())


def compare(
    config: CompareConfig | str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    write: bool = True,
    plot: bool = True,
    show_progress: bool | None = None,
    executor: Executor | None = None,
) -> CompareResult:
    """Every configured bias measure for every model and language, joined and correlated.

    For each model × language the configured methods (WEAT on the model's word vectors, GEST,
    StereoSet, CrowS-Pairs, MBE, and the sections of the measure packages,
    :mod:`weatkit.measures.plugins`) give one value per registered measure
    (:data:`weatkit.measures.registry.MEASURES`); a measure that does not apply (the registry's
    model kinds and languages, or no data in that language) is recorded as ``not applicable``,
    one that raises as ``failed``, and the rest goes on. Across the n model × language units
    where two measures x and y are both present::

        Spearman ρ  = Pearson correlation of the ranks of x and y
        Kendall τ_b = Σ_{i≠j} sgn(x_i − x_j) sgn(y_i − y_j)
                      / √(Σ_{i≠j} sgn(x_i − x_j)² · Σ_{i≠j} sgn(y_i − y_j)²)

    with percentile bootstrap intervals over the units and permutation p-values, exact over
    all n! pairings up to 8 units; a pair with fewer units than a test at the chosen level
    needs (5 at 95%), or with a degenerate interval, is flagged (:mod:`weatkit.stats.correlation`;
    Spearman 1904, Kendall 1945, Pitman 1937).

    Args:
        config: a comparison file (YAML or TOML, :func:`load_compare_config`) or a loaded
            :class:`CompareConfig`.
        output: output directory (default: the file's ``output``); with a loaded config it
            replaces ``config.output``.
        write: keep each finished job's record in ``OUTPUT/jobs/`` as it finishes (a killed
            study resumes; :func:`run_compare`'s ``records``), then write ``scores.csv``,
            ``table.csv``, ``correlations.csv``, ``skipped.csv``, ``manifest.json`` (and
            ``correlations.png`` with ``plot``, ``validity.csv`` with ``validity.traits``) into it
            (:func:`write_compare`).
        plot: draw the correlation heatmap when writing.
        show_progress: progress bars (None: when on a terminal).
        executor: where the model × method × language jobs run (default: one after another in
            this process; :class:`~weatkit.grid.ray_executor.RayExecutor` for Ray).

    Returns:
        The :class:`CompareResult` (``scores``, ``table``, ``correlations``, ``skipped``,
        ``manifest``); :attr:`CompareResult.n_failed` counts the failed method runs.

    Example:
        >>> result = compare("models.yaml", write=False)  # doctest: +SKIP
        >>> result.table  # doctest: +SKIP
    """
    if isinstance(config, CompareConfig):
        if output is not None:
            config = replace(config, output=Path(output))
    else:
        config = load_compare_config(config, None if output is None else str(output))
    result = run_compare(config, show_progress=show_progress, executor=executor, records=write)
    if write:
        write_compare(result, config.output, plot=plot, reads=[config.path])
    return result


def run_compare(
    config: CompareConfig,
    *,
    show_progress: bool | None = None,
    on_step: Callable[[str], None] | None = None,
    executor: Executor | None = None,
    records: bool = False,
) -> CompareResult:
    """Compute every configured measure for every model and language, then correlate them.

    The work is one job per model × method × language (:mod:`weatkit.crossmethod.jobs`), run
    by ``executor``. A method that does not apply is recorded as ``not applicable``; a job that
    raises (a :class:`WeatkitError`, or any other exception, e.g. from torch or transformers,
    reduced to ``Type: first line``; on Ray after its retries) is recorded as ``failed`` and the
    others go on. ``KeyboardInterrupt`` and ``SystemExit`` are not caught. The tables are
    collated from the jobs' records in the file's order, so they do not depend on the executor
    or on the order in which jobs finished.

    Args:
        config: the comparison.
        show_progress: progress bars (None: when on a terminal).
        on_step: called with ``METHOD · MODEL · LANG`` as each job finishes.
        executor: where jobs run (default: a :class:`~weatkit.grid.executors.LocalExecutor`,
            one after another in this process; a :class:`~weatkit.grid.ray_executor.RayExecutor`
            for Ray).
        records: keep each finished job's record in ``OUTPUT/jobs/``
            (:class:`~weatkit.grid.store.JobStore`) and reuse the records whose key is
            unchanged, so that a killed study resumes where it stopped; the output directory is
            locked for the run. False: compute every job and write nothing.

    Raises:
        WeatkitError: the output directory in use by another comparison (``records``).
    """
    started = time.perf_counter()
    if not records:
        return _run(config, None, started, show_progress, on_step, executor)
    check_writable(config.output, directory=True)
    with directory_lock(config.output, "weatkit compare"):
        store = JobStore(config.output)
        store.clean_temporaries()
        return _run(config, store, started, show_progress, on_step, executor)


def _run(
    config: CompareConfig,
    store: JobStore | None,
    started: float,
    show_progress: bool | None,
    on_step: Callable[[str], None] | None,
    executor: Executor | None,
) -> CompareResult:
    plan = plan_compare(config)
    done = {job.id: store.load(job) for job in plan.jobs} if store is not None else {}
    found = {job_id: record for job_id, record in done.items() if record is not None}
    todo = [job for job in plan.jobs if job.id not in found]
    status: dict[str, dict[str, Any]] = {}
    execute = partial(execute_compare_job, show_progress=show_progress)
    bar = progress(total=len(todo), desc="compare", unit="job", show=show_progress)
    executor = executor if executor is not None else LocalExecutor()
    try:
        with bar, closing(executor.run(config, todo, execute)) as outcomes:
            for outcome in outcomes:
                job = outcome.job
                assert isinstance(job, CompareJob)
                step = f"{job.method} · {job.entry.name} · {job.lang}"
                bar.set_postfix_str(step)
                if outcome.record is None:
                    status[job.id] = {"status": "failed", "error": outcome.error}
                else:
                    if store is not None:
                        store.save(job, outcome.record)
                    found[job.id] = outcome.record
                    worker = {k: outcome.worker[k] for k in ("host", "pid")}
                    status[job.id] = {"status": "ran", "worker": worker}
                if on_step is not None:
                    on_step(step)
                bar.update(1)
    finally:
        release_held()  # the models the local executor's jobs loaded in this process
    return _collate(config, plan, found, status, started)


def _check_conventions(
    plan: ComparePlan, conventions: Mapping[str, Mapping[str, Mapping[str, str]]]
) -> None:
    """A one-line error when one method's models were scored under different conventions
    (:func:`weatkit.scoring.conventions.check_same_convention`): their scores are different
    measures, and a correlation across them would mix the two."""
    from weatkit.scoring.conventions import check_same_convention

    by_method: dict[str, dict[str, str]] = {}
    for job in plan.jobs:
        for seen in conventions.get(job.id, {}).values():
            if "first_token" in seen:
                by_method.setdefault(job.method, {})[job.entry.name] = seen["first_token"]
    for method, by_model in by_method.items():
        check_same_convention(method, by_model)


def _collate(
    config: CompareConfig,
    plan: ComparePlan,
    found: dict[str, dict[str, Any]],
    status: dict[str, dict[str, Any]],
    started: float,
) -> CompareResult:
    """The tables and manifest from the records ``found`` (job id -> record), in plan order;
    ``status`` says what this run did per job (``ran`` with its worker, ``failed`` with its
    error; the others were reused)."""
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    timings: dict[str, float] = {}
    cache: dict[str, CacheCount] = {}
    samples: dict[str, ItemSample] = {}
    weights_loaded: dict[str, int] = {}
    items: list[pd.DataFrame] = []
    jobs: list[dict[str, Any]] = []
    conventions: dict[str, dict[str, dict[str, str]]] = {}  # job id -> spec -> convention
    by_unit: dict[str, list[CompareJob]] = {}
    for job in plan.jobs:
        by_unit.setdefault(job.entry.name, []).append(job)
    for entry in config.units:
        reason = plan.failed_units.get(entry.name)
        if reason is not None:
            skipped += [skip_row(entry.name, "*", m, "failed", reason) for m in config.methods]
            continue
        weights_loaded[entry.name] = 0
        for job in by_unit[entry.name]:
            state = status.get(job.id, {"status": "reused"})
            record = found.get(job.id)
            if record is None:
                skipped.append(skip_row(entry.name, job.lang, job.method, "failed", state["error"]))
                jobs.append({"id": job.id, "key": job.key, **state})
                continue
            rows += record["rows"]
            skipped += record["skipped"]
            if "items" in record:
                items.append(pd.DataFrame(record["items"]["data"], columns=record["items"][
                    "columns"]))  # fmt: skip
            samples.update({k: _sample(v) for k, v in record["samples"].items()})
            if record.get("scoring_conventions"):
                conventions[job.id] = record["scoring_conventions"]
            timings[job.id] = record["timings_s"]["job"]
            if state["status"] == "ran":  # what this run loaded and took from the score cache
                weights_loaded[entry.name] += record["weights_loaded"]
                state = {**state, "weights_loaded": record["weights_loaded"]}
                if record["cache"] is not None:
                    cache[job.id] = CacheCount(**record["cache"])
            jobs.append({"id": job.id, "key": job.key, **state, "timings_s": record["timings_s"]})
    _check_conventions(plan, conventions)
    scores = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    seeds = seed_table(scores, config)
    table = joined_table(scores, config)
    measures = [c for c in table.columns if c not in ("model", "lang")]
    corr = config.correlation
    correlations = correlation_table(
        table,
        measures,
        by_language=corr.by_language,
        n_bootstrap=corr.n_bootstrap,
        seed=corr.seed,
        confidence_level=corr.confidence_level,
    )
    validity, validity_note = validity_table(table, scores, config.validity, corr)
    reliability, reliability_note = seed_reliability(scores, config)
    notes = tuple(note for note in (validity_note, reliability_note) if note)
    timings["total"] = round(time.perf_counter() - started, 3)
    manifest = {
        "command": "weatkit compare",
        "config_file": str(config.path),
        "config_sha256": config.sha256,
        "languages": list(config.languages),
        "models": [asdict(m) for m in config.models],
        "units": [m.name for m in config.units],
        "methods": {m: asdict(config.section(m)) for m in config.methods},
        "contextual": asdict(config.contextual),
        "correlation": asdict(corr),
        "validity": {**asdict(config.validity), "notes": list(notes)},
        "scores": asdict(config.scores),
        "log_items": config.log_items,
        "resampling": {  # weatkit.stats.resampling: plans depend only on the seed and sizes
            # percentile bootstrap CIs of the sentence-level scores over their items, and the
            # neutral tests (weatkit.crossmethod.uncertainty)
            **{
                method: {
                    "scheme": "stratified",
                    "strata": strata,
                    "n_bootstrap": config.scores.n_bootstrap,
                    "seed": config.scores.seed,
                    "confidence_level": config.scores.confidence_level,
                    "interval": "percentile",
                    "neutral_test": test,
                }
                for method, strata, test in (
                    (
                        "gest",
                        "samples within stereotype, per template (EuroGEST: items within "
                        "stereotype)",
                        "CI excludes 1",
                    ),
                    ("stereoset", "examples within target term", "exact binomial (SS)"),
                    ("crows", "pairs", "exact binomial"),
                    ("mbe", "male, female sentences", "exact binomial over pairs"),
                )
            },
            "weat": {"scheme": "weat"},
            "correlation": {"scheme": "stratified", "paired": True},
            "correlation_p": {  # permutation p of ρ and τ_b (scipy.stats.permutation_test)
                "scheme": "pairings",
                "exact_up_to_units": EXACT_MAX_UNITS,
                "n_permutations": N_PERMUTATIONS,
                "seed": corr.seed,
            },
        },
        # the sections with a limit: the seeded, stratified sample each score was computed on
        "samples": {key: sample.to_dict() for key, sample in samples.items()},
        "weights_loaded": weights_loaded,  # times each model's weights were read from disk
        # scores each step took from the score cache (and who wrote them) and computed
        "cache": {step: asdict(count) for step, count in cache.items()},
        # what each job's causal scores include (weatkit.scoring.conventions: the first token)
        "scoring_conventions": conventions,
        # every job: its key, status (ran, with the worker; reused; failed, with the error)
        "jobs": jobs,
        "environment": environment(),
        "timings_s": timings,
    }
    return CompareResult(
        scores=scores,
        table=table,
        correlations=correlations,
        skipped=pd.DataFrame(skipped, columns=SKIPPED_COLUMNS),
        manifest=manifest,
        seeds=seeds,
        samples=samples,
        cache=cache,
        validity=validity,
        reliability=reliability,
        validity_notes=notes,
        items=concat_items(items) if config.log_items is not None else None,
    )


def seed_table(scores: pd.DataFrame, config: CompareConfig) -> pd.DataFrame:
    """Mean and between-seed SD of every measure of each ``checkpoints`` entry
    (:data:`SEED_COLUMNS`; Aribandi et al. 2021).

    For a model with checkpoints k = 1 … K that have a value v_k of a measure in a language
    (``n_seeds`` = K' of them)::

        seed_mean = (1/K') Σ_k v_k,   seed_sd = sqrt(Σ_k (v_k − seed_mean)² / (K' − 1))

    (the sample SD, ``ddof=1``; NaN with one seed). Rows in the file's model order, then
    language and measure in the order the scores came.
    """
    rows = []
    for entry in config.models:
        if not entry.checkpoints:
            continue
        names = [u.name for u in entry.units()]
        part = scores[scores["model"].isin(names) & scores["value"].notna()]
        for (lang, method, measure), group in part.groupby(
            ["lang", "method", "measure"], sort=False
        ):
            values = group["value"].to_numpy(dtype=float)
            rows.append(
                {
                    "model": entry.name,
                    "lang": lang,
                    "method": method,
                    "measure": measure,
                    "n_seeds": len(values),
                    "seed_mean": float(values.mean()),
                    "seed_sd": float(values.std(ddof=1)) if len(values) > 1 else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=SEED_COLUMNS)


def joined_table(scores: pd.DataFrame, config: CompareConfig) -> pd.DataFrame:
    """One row per unit × language (in the file's order), one column per measure.

    A unit is a model, or each checkpoint ``NAME#k`` of a ``checkpoints`` entry; with
    ``correlation.seed_units: mean`` a ``checkpoints`` entry is one unit ``NAME`` whose value is
    the mean over its checkpoints (``seed_mean`` of :func:`seed_table`).
    """
    by_mean = config.correlation.seed_units == "mean"
    names = [u.name for m in config.models for u in ((m,) if by_mean else m.units())]
    units = pd.DataFrame(
        [(name, lang) for name in names for lang in config.languages],
        columns=["model", "lang"],
    )
    if scores.empty:
        return units
    if by_mean:  # NAME#k -> NAME; the mean over the checkpoints with a value
        scores = scores.assign(model=scores["model"].str.split(CHECKPOINT_MARK).str[0])
    wide = scores.pivot_table(
        index=["model", "lang"],
        columns="measure",
        values="value",
        aggfunc="mean" if by_mean else "first",
        sort=False,
    )
    wide.columns = [str(c) for c in wide.columns]
    table = units.merge(wide.reset_index(), on=["model", "lang"], how="left")
    present = [c for c in table.columns[2:] if table[c].notna().any()]
    return table[["model", "lang", *present]]


def write_compare(
    result: CompareResult,
    out_dir: str | Path,
    *,
    plot: bool = True,
    reads: Sequence[str | os.PathLike | None] = (),
) -> list[Path]:
    """Write the tables, the manifest and (when there are correlations) the plot, atomically;
    never over one of ``reads`` (the configuration file and other inputs read)."""
    files = {
        "scores.csv": render(result.scores, "csv"),
        "table.csv": render(result.table, "csv"),
        "correlations.csv": render(result.correlations, "csv"),
        "skipped.csv": render(result.skipped, "csv"),
        "manifest.json": manifest_bytes(result.manifest),
    }
    if not result.seeds.empty:
        files["seeds.csv"] = render(result.seeds, "csv")
    if not result.validity.empty:
        files["validity.csv"] = render(result.validity, "csv")
    if not result.reliability.empty:
        files["reliability.csv"] = render(result.reliability, "csv")
    if result.items is not None:
        files.update(item_log_files(result.items, result.manifest["log_items"]))
    if plot and (result.correlations["scope"] == "all").any():
        level = result.manifest["correlation"]["confidence_level"]
        figure = correlation_heatmap(result.correlations, confidence_level=level)
        files["correlations.png"] = figure_bytes(figure, "png")
    return write_outputs(out_dir, files, reads=reads)


def _sample(data: dict[str, Any]) -> ItemSample:
    """A sample from its record (``asdict`` of an :class:`ItemSample`, through JSON)."""
    strata = {label: (int(n), int(m)) for label, (n, m) in data["strata"].items()}
    return ItemSample(**{**data, "strata": strata})
