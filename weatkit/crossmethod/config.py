"""Comparison files for ``weatkit compare``: YAML or TOML, validated into a :class:`CompareConfig`.

A comparison file lists language models, languages and the bias measures to compute for each
model in each language; a method section that is absent is not run. Relative paths are read
from the file's directory. Example (YAML)::

    output: runs/methods                 # tables, plot and manifest go here
    languages: [en, de]
    models:
      - {name: mBERT, model: bert-base-multilingual-cased}
      - {name: XLM-R, model: xlm-roberta-base, kind: mlm}     # kind: mlm or glm (auto)
      - {name: GloVe, path: glove-6b-50d}     # word vectors (a file, {lang} for one per
                                              # language): word-level measures only
      - name: MultiBERTs                 # several checkpoints (seeds) of one model:
        checkpoints: [google/multiberts-seed_0, google/multiberts-seed_1]  # units MultiBERTs#1..
    contextual: {batch_size: 32, device: auto}   # model loading options (all methods)
    weat:                                # word level: effect sizes of the model's word vectors
      lists: [ca-weat]                   # list sets or list files
      tests: [weat1, weat2]              # optional
      layers: [0, -2]                    # default: layer 0 and the next-to-last layer
      engine: {n_bootstrap: 1000, n_permutations: 0}
      min_coverage: 0.8                  # also: lower, strip_accents, equalize (as in grid)
      metrics: [weat, rnd, ect]          # the association metrics too (default: weat)
      association: {rnd_reduction: mean}   # their options (as in grid)
    correlation: {n_bootstrap: 2000, seed: 0, confidence_level: 0.95, by_language: true,
                  seed_units: checkpoints}   # or mean: one unit per model (the seed mean)
    scores: {n_bootstrap: 1000, seed: 0, confidence_level: 0.95}   # CIs of sentence scores
    validity:                            # the MTMM matrix (validity.csv): the bias type
      traits: {"gest:g_s": gender, "mbe:*": gender, "*weat6*": gender, "*weat3*": race}
      statistic: spearman                # or kendall, pearson
    log_items: true                      # items.parquet: one row per scored item (or csv)
    mlflow: sqlite:///mlflow.db          # log the output directory to MLflow (weatkit.tracking)
    mlflow_experiment: methods           # its experiment (default: weatkit)

The measure packages add sections of their own (:func:`compare_plugins`: each package's
:attr:`weatkit.measures.plugins.Plugin.compare` reads its section and computes its rows); a
package's ``weatkit.<name>.compare`` module and its page in ``docs/measures/`` show its section
(:data:`weatkit.measures.plugins.PACKAGES`).

``log_items`` (``true`` = ``parquet``, or ``csv``; declared once with ``--log-items`` of the
sentence commands, :data:`weatkit.config.schema.ITEM_LOG`) writes ``items.parquet`` (or
``items.csv``): one row per item every sentence-level job scored, all models, methods and
languages together (:mod:`weatkit.items.log`).

``limit: N`` in a sentence-level section scores a seeded sample of N items stratified as
``--limit N`` of the method's command does (:mod:`weatkit.stats.sampling`; declared once,
:data:`weatkit.config.schema.SAMPLE`, read by :func:`weatkit.crossmethod.sections.read_limit`),
drawn with the ``scores`` section's seed (or the section's own ``seed``, where it has one);
``manifest.json`` records each sample under ``samples``.

``scores`` sets the percentile bootstrap of every sentence-level score's CI
(:mod:`weatkit.crossmethod.uncertainty`; 0 resamples: no CIs); ``correlation`` that of the
correlations, and of the multitrait–multimethod matrix that ``validity`` asks for:
``validity.traits`` maps patterns of the joined table's measure columns (``fnmatch``: ``*``,
``?``; the first that matches wins) to the trait (bias type) they measure, the method of a
measure being its family (``scores.csv``'s ``method``); see :mod:`weatkit.crossmethod.validity`.

A ``path`` entry is static word vectors (as a grid's ``path``: a ``.vec``/``.bin``/... file,
``{lang}`` in it for one file per language, or ``glove-6b-50d``): only the word-level ``weat``
section applies to it (its columns have no ``@LAYER``); the sentence-level measures are recorded
as not applicable, as they are for a model without a trained language-model head (e.g. a
sentence-transformers encoder such as all-MiniLM-L6-v2, whose word vectors ``weat`` still reads).

A model entry gives ``model`` (one hub id or directory) or ``checkpoints`` (at least two: the
same model trained with different seeds, e.g. MultiBERTs; Aribandi et al. 2021). Each
checkpoint is scored as its own model named ``NAME#1``, ``NAME#2``, ... (in list order); the
mean and between-seed SD of every measure go to ``seeds.csv``, and ``correlation.seed_units``
chooses the correlation units: every checkpoint (``checkpoints``, the default) or the seed mean
(``mean``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weatkit.config.files import (
    base_folder,
    check_keys,
    command_line_path,
    config_path,
    dataclass_from,
    describe,
    layer_numbers,
    mapping,
    model_location,
    read_config,
    strings,
    typed,
)
from weatkit.config.run import run_config_from_mapping
from weatkit.config.schema import CONTEXTUAL, ITEM_LOG, TRACKING, Source, options_from_file
from weatkit.config.tracking import tracking_from_file
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.engine.weat import EngineOptions
from weatkit.errors import ConfigError
from weatkit.items.log import ItemLogOptions
from weatkit.measures.plugins import Plugin, load, plugins
from weatkit.pipeline import RunConfig
from weatkit.stats.correlation import STATISTICS as CORRELATION_STATISTICS
from weatkit.stats.resampling import check_plan_size
from weatkit.tracking import TrackingOptions

#: The built-in method, WEAT of the models' word vectors; the measure packages add theirs
#: (:func:`compare_plugins`).
METHODS = ("weat",)
_TOP_KEYS = {
    *("output", "languages", "models", "contextual", "correlation", "scores", "validity"),
    "log_items",
    *METHODS,
    *TRACKING.file_keys,
}


def compare_plugins() -> dict[str, Plugin]:
    """The measure packages with a ``weatkit compare`` section
    (:attr:`weatkit.measures.plugins.Plugin.compare`), by method name."""
    return {p.name: p for p in plugins() if p.compare is not None}


def all_methods() -> tuple[str, ...]:
    """Every method a comparison file may name: the built-in ones, then the plugins'."""
    return (*METHODS, *compare_plugins())


_MODEL_KEYS = {"name", "model", "checkpoints", "kind", "path"}
#: Separates a model's name from its checkpoint number in a unit's name (``MultiBERTs#2``).
CHECKPOINT_MARK = "#"
SEED_UNITS = ("checkpoints", "mean")
#: The run options of the ``weat`` section (the models' ``contextual`` options are the file's).
_WEAT_RUN_KEYS = {
    *("lists", "tests", "lower", "strip_accents", "min_coverage", "equalize", "engine"),
    *("metrics", "association"),
}


@dataclass(frozen=True)
class ModelEntry:
    """One language model: display ``name``, hub id or local directory, and its LM kind.

    With ``checkpoints`` (hub ids or directories of the same model trained with different
    seeds) ``model`` is empty and every checkpoint is a unit of its own (:meth:`units`). With
    ``vectors`` (static word vectors: a file, a ``{lang}`` template or ``glove-6b-50d``)
    ``model`` is empty and ``kind`` is ``static``.
    """

    name: str
    model: str
    kind: str | None = None
    checkpoints: tuple[str, ...] = ()
    vectors: str = ""

    def units(self) -> tuple[ModelEntry, ...]:
        """The models actually scored: the entry itself, or one entry per checkpoint named
        ``NAME#1``, ``NAME#2``, ... in list order."""
        if not self.checkpoints:
            return (self,)
        return tuple(
            ModelEntry(f"{self.name}{CHECKPOINT_MARK}{i}", path, self.kind)
            for i, path in enumerate(self.checkpoints, 1)
        )


@dataclass(frozen=True)
class WeatSection:
    """Word-level tests on the model's word vectors at ``layers``.

    Attributes:
        run: the run options (lists, tests, normalisation, engine); each model and language
            sets its ``embeddings``, ``langs`` and ``contextual``.
        layers: hidden-state layers (0 = embedding layer, -2 = next-to-last).
    """

    run: RunConfig = field(default_factory=RunConfig)
    layers: tuple[int, ...] = (0, -2)

    @property
    def lists(self) -> tuple[str, ...]:
        return self.run.lists

    @property
    def tests(self) -> tuple[str, ...] | None:
        return self.run.tests

    @property
    def engine(self) -> EngineOptions:
        return self.run.engine


@dataclass(frozen=True)
class CorrelationOptions:
    n_bootstrap: int = 2000
    seed: int = 0
    confidence_level: float = 0.95
    by_language: bool = True
    seed_units: str = "checkpoints"

    def validate(self) -> None:
        if self.seed_units not in SEED_UNITS:
            raise ConfigError(
                f"choose checkpoints or mean, not {self.seed_units!r}", field="seed_units"
            )
        _check_bootstrap(self.n_bootstrap, self.seed, self.confidence_level)


def _check_bootstrap(n_bootstrap: int, seed: int, confidence_level: float) -> None:
    """One-line :class:`ConfigError` naming the field: a negative or too large resample count,
    a negative seed, or a level outside (0, 1)."""
    if seed < 0:
        raise ConfigError(f"must be >= 0, got {seed}", field="seed")
    if n_bootstrap < 0:
        raise ConfigError(f"must be >= 0, got {n_bootstrap}", field="n_bootstrap")
    check_plan_size(n_bootstrap, (1,), field="n_bootstrap")
    if not 0 < confidence_level < 1:
        raise ConfigError(
            f"must be between 0 and 1, got {confidence_level}", field="confidence_level"
        )


@dataclass(frozen=True)
class ScoreOptions:
    """The percentile bootstrap of every sentence-level score's CI in ``weatkit compare``
    (:mod:`weatkit.crossmethod.uncertainty`): resamples (0: no CIs), seed and level."""

    n_bootstrap: int = 1000
    seed: int = 0
    confidence_level: float = 0.95

    def validate(self) -> None:
        _check_bootstrap(self.n_bootstrap, self.seed, self.confidence_level)


@dataclass(frozen=True)
class ValidityOptions:
    """The multitrait–multimethod matrix of ``weatkit compare`` (:mod:`weatkit.crossmethod.
    validity`): ``traits`` maps measure-column patterns (``fnmatch``) to the trait (bias type)
    each measures, ``statistic`` is the correlation (``spearman``, ``kendall``, ``pearson``)."""

    traits: dict[str, str] = field(default_factory=dict)
    statistic: str = "spearman"

    def validate(self) -> None:
        if self.statistic not in CORRELATION_STATISTICS:
            raise ConfigError(
                f"choose {', '.join(CORRELATION_STATISTICS)}, not {self.statistic!r}",
                field="statistic",
            )
        for pattern, trait in self.traits.items():
            if not isinstance(trait, str) or not trait:
                raise ConfigError(
                    f"the trait of {pattern!r} must be a name, got {trait!r}", field="traits"
                )


@dataclass(frozen=True)
class CompareConfig:
    """A validated comparison file (see the module docstring)."""

    path: Path
    sha256: str
    output: Path
    languages: tuple[str, ...]
    models: tuple[ModelEntry, ...]
    contextual: ContextualOptions
    correlation: CorrelationOptions
    scores: ScoreOptions = field(default_factory=ScoreOptions)
    validity: ValidityOptions = field(default_factory=ValidityOptions)
    log_items: str | None = None
    weat: WeatSection | None = None
    tracking: TrackingOptions = field(default_factory=TrackingOptions)
    #: The sections of the measure packages' methods (:func:`compare_plugins`), by name.
    plugged: dict[str, Any] = field(default_factory=dict)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(m for m in all_methods() if self.section(m) is not None)

    def section(self, method: str) -> Any:
        """The section of ``method`` (None when the file has none)."""
        return getattr(self, method) if method in METHODS else self.plugged.get(method)

    @property
    def units(self) -> tuple[ModelEntry, ...]:
        """Every model scored, checkpoints expanded (:meth:`ModelEntry.units`)."""
        return tuple(u for m in self.models for u in m.units())


def load_compare_config(path: str | os.PathLike, output: str | None = None) -> CompareConfig:
    """Read and validate a comparison file; errors name the file and the key.

    Relative paths are read from the file's folder, an ``output`` given here (the command
    line's ``--out``) from the current folder; models entries are counted from 1
    (``cmp.yaml: models[2].kind: ...``); a model is a local directory or a hub id as
    :func:`weatkit.config.files.model_location` decides. The ``weat`` section's run options are
    read by :func:`weatkit.config.run.run_config_from_mapping`, as an experiment's are.
    """
    file = Path(path)
    data, sha256 = read_config(file, "comparison file")
    where = str(file)
    source = Source(where)
    base = base_folder(file)
    check_keys(data, {*_TOP_KEYS, *compare_plugins()}, where)
    if output is None and data.get("output") is None:
        raise ConfigError(f"{where}: give an output directory (output: DIR or --out DIR)")
    languages = strings(data.get("languages"), source.key("languages"), required=True)
    models = _models(data.get("models"), base, source)
    contextual = options_from_file(
        ContextualOptions, CONTEXTUAL, data.get("contextual", {}), source.child("contextual")
    )
    sections: dict[str, Any] = {}
    for method in all_methods():
        if method in data:
            at = source.child(method)
            sections[method] = _section(method, data[method], base, at, contextual)
    if not sections:
        raise ConfigError(f"{where}: name at least one method ({', '.join(all_methods())})")
    plugged = {m: sections.pop(m) for m in list(sections) if m not in METHODS}
    return CompareConfig(
        path=file,
        sha256=sha256,
        output=Path(
            command_line_path(output)
            if output is not None
            else config_path(data["output"], base, source.key("output"))
        ),
        languages=languages,
        models=models,
        contextual=contextual,
        correlation=dataclass_from(
            CorrelationOptions, data.get("correlation", {}), source.key("correlation")
        ),
        scores=dataclass_from(ScoreOptions, data.get("scores", {}), source.key("scores")),
        validity=dataclass_from(ValidityOptions, data.get("validity", {}), source.key("validity")),
        log_items=options_from_file(
            ItemLogOptions, ITEM_LOG, {k: v for k, v in data.items() if k == "log_items"}, source
        ).log_items,
        tracking=tracking_from_file(data, source),
        plugged=plugged,
        **sections,
    )


def _models(value: Any, base: Path, source: Source) -> tuple[ModelEntry, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{source.key('models')}: expected a non-empty list of {{name, model}}")
    entries = []
    for i, raw in enumerate(value, 1):
        at = source.entry("models", i)
        item = mapping(raw, str(at))
        check_keys(item, _MODEL_KEYS, str(at))
        name = typed(item.get("name"), str, at.key("name"))
        if not name:
            raise ConfigError(f"{at.key('name')}: must not be empty")
        if CHECKPOINT_MARK in name:
            raise ConfigError(
                f"{at.key('name')}: must not contain {CHECKPOINT_MARK!r} (it numbers checkpoints)"
            )
        kind = item.get("kind")
        if kind is not None and kind not in ("mlm", "glm"):
            raise ConfigError(f"{at.key('kind')}: choose mlm or glm, not {kind!r}")
        if "path" in item:
            others = [k for k in ("model", "checkpoints", "kind") if k in item]
            if others:
                raise ConfigError(f"{at}: path (word vectors) takes no {others[0]}")
            location = typed(item["path"], str, at.key("path"))
            if location.lower() != "glove-6b-50d":  # the embedded vectors, as in a grid
                location = config_path(location, base, at.key("path"))
            entries.append(ModelEntry(name, "", "static", vectors=location))
            continue
        if "checkpoints" not in item:
            model = model_location(item.get("model"), base, at.key("model"))
            entries.append(ModelEntry(name, model, kind))
            continue
        if "model" in item:
            raise ConfigError(f"{at}: give model (one model) or checkpoints (its seeds), not both")
        where = at.key("checkpoints")
        paths = item["checkpoints"]
        if not isinstance(paths, list) or len(paths) < 2:
            raise ConfigError(
                f"{where}: expected a list of at least two checkpoints, got {describe(paths)}"
            )
        locations = tuple(model_location(p, base, f"{where}[{i}]") for i, p in enumerate(paths, 1))
        if len(set(locations)) != len(locations):
            raise ConfigError(f"{where}: a checkpoint is listed twice")
        entries.append(ModelEntry(name, "", kind, locations))
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ConfigError(f"{source.key('models')}: names must be unique ({', '.join(names)})")
    return tuple(entries)


def _section(
    method: str, value: Any, base: Path, source: Source, contextual: ContextualOptions
) -> Any:
    values = dict(mapping(value if value is not None else {}, str(source)))
    plugin = compare_plugins().get(method)
    if plugin is not None:
        assert plugin.compare is not None
        return load(plugin.compare.section)(values, base, source, contextual)
    layers = layer_numbers(values.pop("layers", [0, -2]), source.key("layers"))  # weat
    run = run_config_from_mapping(values, source, base, keys=_WEAT_RUN_KEYS, contextual=contextual)
    return WeatSection(run, layers)
