"""Experiment files for ``weatkit grid``: YAML or TOML, validated into a :class:`GridConfig`.

An experiment names the embeddings to compare, the languages, the list sets and every option
of a run. Relative paths are read from the experiment file's directory; ``~`` and ``$VARS``
are expanded. Example (YAML)::

    output: runs/aligned-vs-mono        # where tables, manifest and finished jobs go
    languages: [en, de, es]
    lists: [ca-weat, x-weat]            # list sets or list files
    tests: [weat1, weat2]               # optional: all tests of the sets otherwise
    min_coverage: 0.8                   # also: lower, strip_accents, equalize,
                                        #       allow_pickle, fasttext_oov
    engine: {n_bootstrap: 5000, n_permutations: 10000, seed: 0}   # EngineOptions fields
    contextual: {batch_size: 32}        # ContextualOptions fields (all models)
    isomorphism: {reference: en, measures: [ev, gh], words: "vocab/{lang}.txt"}  # + IsoOptions
    asymmetry: {counts: wordfreq}       # or a corpus path with {lang}
    mlflow: sqlite:///mlflow.db         # log the output directory to MLflow (weatkit.tracking)
    mlflow_experiment: alignment        # its experiment (default: weatkit)
    embeddings:
      - {name: mono, path: "vecs/cc.{lang}.vec"}
      - {name: aligned, path: "vecs/cc.{lang}.aligned.vec", baseline: mono}
      - {name: XLM-R, model: xlm-roberta-base, layers: [0, -2]}
      - {name: api, model: "openai:http://127.0.0.1:8080/v1#e5", contextual: {concurrency: 8}}

Each embeddings entry has a ``name`` and either ``path`` (static vectors; ``{lang}`` for one
file per language; ``glove-6b-50d`` for the embedded default; optional ``format``) or ``model``
(a Hugging Face hub id or local directory, with ``layers`` and optional ``contextual``
options; or, without layers, an embeddings API ``openai:BASE_URL#MODEL``, whose ``contextual``
options say how its server is asked, or a sentence-transformers model ``st:ID_OR_DIR``:
:mod:`weatkit.embeddings.api`). ``baseline: NAME`` asks
for the paired difference in effect size to that embeddings; an entry with several layers may
name one of its own (``baseline: XLM-R@0``), which then is the baseline of the other layers.

The run options are read by :func:`weatkit.config.run.run_config_from_mapping` (the same
declarations as ``weatkit compare`` and the command line): a bad value is reported when the file
is read, before any job runs, naming the key (``exp.yaml: engine.n_bootstrap: must be >= 0``);
entries are counted from 1 (``exp.yaml: embeddings[2].layers: ...``). A model is a local
directory when it looks like a path or is a folder next to the file, a hub id otherwise
(:func:`weatkit.config.files.model_location`). An ``output`` given on the command line is read
from the current folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from weatkit.config.files import (
    as_dict,
    base_folder,
    check_keys,
    command_line_path,
    config_path,
    layer_numbers,
    mapping,
    model_location,
    read_config,
    strings,
    typed,
)
from weatkit.config.run import RUN_KEYS, run_config_from_mapping
from weatkit.config.schema import CONTEXTUAL, TRACKING, Source, named_by, options_from_file
from weatkit.config.tracking import tracking_from_file
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.spec import (
    API_PREFIXES,
    EmbeddingsSpec,
    parse_embeddings_spec,
    parse_embeddings_specs,
)
from weatkit.errors import ConfigError, WeatkitError
from weatkit.pipeline import RunConfig
from weatkit.tracking import TrackingOptions

#: The run options an experiment takes at its top level (languages are the grid's own axis;
#: a job that fails is recorded, so ``strict`` does not apply).
_RUN_KEYS = RUN_KEYS - {"langs", "strict"}
_TOP_KEYS = {"output", "languages", "embeddings", "asymmetry", *_RUN_KEYS, *TRACKING.file_keys}
_ENTRY_KEYS = {"name", "path", "model", "format", "layers", "baseline", "contextual"}


@dataclass(frozen=True)
class GridSource:
    """One embeddings source of the grid (an ``hf:`` entry gives one per layer).

    Attributes:
        spec: what to load.
        baseline: name of the source its effect sizes are compared to (None: no comparison).
        entry: where the experiment file declares it (``embeddings[2]``), for messages.
    """

    spec: EmbeddingsSpec
    baseline: str | None = None
    entry: str = "embeddings"

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class GridConfig:
    """A parsed experiment.

    Attributes:
        path: the experiment file; sha256: its content hash (for the manifest).
        output: output directory.
        languages: languages to run (one job per source × language).
        sources: the embeddings sources, in file order.
        run: the options every job runs with (lists, tests, engine, coverage, isomorphism, ...);
            its ``embeddings`` and ``langs`` are set per job.
        asymmetry: ``"wordfreq"``, a corpus path template with ``{lang}``, or None.
        tracking: where the output directory is logged once written (``mlflow``; not an
            option of the jobs).
    """

    path: Path
    sha256: str
    output: Path
    languages: tuple[str, ...]
    sources: tuple[GridSource, ...]
    run: RunConfig
    asymmetry: str | None = None
    tracking: TrackingOptions = field(default_factory=TrackingOptions)

    def source(self, name: str) -> GridSource:
        return next(s for s in self.sources if s.name == name)


def load_grid_config(path: str | os.PathLike, output: str | None = None) -> GridConfig:
    """Read and validate an experiment file (``.yaml``/``.yml`` or ``.toml``).

    Args:
        path: the experiment file.
        output: overrides the file's ``output`` directory.

    Raises:
        WeatkitError: unreadable file, syntax error, unknown key, wrong type or bad value;
            the message names the file and the key.
    """
    file = Path(path)
    data, sha256 = read_config(file, "experiment file")
    return _build_config(data, file, sha256, output)


def _build_config(data: dict[str, Any], file: Path, sha256: str, output: str | None) -> GridConfig:
    source = Source(str(file))
    check_keys(data, _TOP_KEYS, str(file))
    base = base_folder(file)
    languages = strings(data.get("languages"), source.key("languages"), required=True)
    run = run_config_from_mapping(
        {k: v for k, v in data.items() if k in _RUN_KEYS}, source, base, keys=_RUN_KEYS
    )
    if run.engine.keep_distributions:
        raise ConfigError(f"{source.key('engine.keep_distributions')}: not a grid option")
    sources = _sources(data.get("embeddings"), base, run.contextual, source)
    if output is not None:
        out = command_line_path(output)
    else:
        out = config_path(data.get("output", f"{file.stem}-run"), base, source.key("output"))
    return GridConfig(
        path=file,
        sha256=sha256,
        output=Path(out),
        languages=languages,
        sources=sources,
        run=run,
        asymmetry=_asymmetry(data.get("asymmetry"), base, source.child("asymmetry")),
        tracking=tracking_from_file(data, source),
    )



def check_inputs(config: GridConfig) -> None:
    """Check that every file the experiment reads exists, before any job runs
    (:func:`missing_inputs`).

    Raises:
        ConfigError: the first missing input, naming the experiment file, the key and the path,
            and how many more there are (``weatkit grid --dry-run`` lists them all).
    """
    missing = missing_inputs(config)
    if missing:
        more = len(missing) - 1
        tail = f" (and {more} more missing input{'s' if more > 1 else ''}; --dry-run lists them)"
        raise ConfigError(missing[0] + (tail if more else ""))


def missing_inputs(config: GridConfig) -> list[str]:
    """Every input of the experiment that is missing, one line each, in file order.

    Checked: each list file of ``lists``, each static embeddings file for every language (and
    for the isomorphism reference language), each local model directory, the isomorphism word
    lists and the asymmetry corpus of every language (or that wordfreq has the language).
    Hub models are not checked (that needs the network); a file that exists but is malformed is
    reported by the job that reads it. Each line names the experiment file, the key and the
    path (``exp.yaml: embeddings[2].path: no file for language 'de': vecs/de.vec not found``).
    """
    from weatkit.lists.sources import canonical_name

    missing: list[str] = []
    source = Source(str(config.path))
    run = config.run
    for i, spec in enumerate(run.lists, 1):
        if canonical_name(spec) is None and not Path(spec).is_file():
            key = source.key(f"lists[{i}]" if len(run.lists) > 1 else "lists")
            missing.append(f"{key}: no list set or list file {spec!r} (file not found)")
    langs = list(config.languages)
    if run.isomorphism and run.isomorphism not in langs:
        langs.append(run.isomorphism)
    for grid_source in config.sources:
        spec = grid_source.spec
        if spec.is_default:
            continue
        at = Source(str(config.path), grid_source.entry)
        for lang in langs:
            location = spec.path_for(lang)
            if spec.is_contextual:  # a local directory is absolute here, a hub id is not
                if Path(location).is_absolute() and not Path(location).is_dir():
                    line = f"{at.key('model')}: no model directory {location}"
                    if line not in missing:  # one directory for every language
                        missing.append(line)
                continue
            if not Path(location).exists():
                where = f" for language {lang!r}" if spec.per_language else ""
                line = f"{at.key('path')}: no file{where}: {location} not found"
                if line not in missing:
                    missing.append(line)
    if run.iso_words and run.isomorphism:
        for lang in langs:
            words = run.iso_words.replace("{lang}", lang)
            if not Path(words).is_file():
                missing.append(
                    f"{source.key('isomorphism.words')}: no word list for language {lang!r}: "
                    f"{words} not found"
                )
    if config.asymmetry == "wordfreq":
        from weatkit.asymmetry import wordfreq_language

        for lang in config.languages:
            try:
                wordfreq_language(lang)
            except WeatkitError as err:
                missing.append(f"{source.key('asymmetry.counts')}: {err}")
    elif config.asymmetry is not None:
        for lang in config.languages:
            corpus = config.asymmetry.replace("{lang}", lang)
            if not Path(corpus).is_file():
                missing.append(
                    f"{source.key('asymmetry.counts')}: no corpus for language {lang!r}: "
                    f"{corpus} not found"
                )
    return missing


def _sources(
    entries: Any, base: Path, contextual: ContextualOptions, source: Source
) -> tuple[GridSource, ...]:
    where = str(source)
    if not isinstance(entries, list) or not entries:
        raise ConfigError(
            f"{source.key('embeddings')}: give a list of {{name, path | model}} entries"
        )
    sources: list[GridSource] = []
    for i, entry in enumerate(entries, 1):
        at = source.entry("embeddings", i)
        entry = mapping(entry, str(at))
        check_keys(entry, _ENTRY_KEYS, str(at))
        name = typed(entry.get("name"), str, at.key("name"))
        if not name or any(c in name for c in "=/\\"):
            raise ConfigError(f"{at.key('name')}: must be non-empty, without '=', '/' or '\\'")
        baseline = typed(entry.get("baseline"), (str, type(None)), at.key("baseline"))
        for spec in _entry_specs(entry, name, base, contextual, at):
            own_layer = spec.layer is not None and len(spec.layers) > 1 and baseline == spec.name
            sources.append(GridSource(spec, None if own_layer else baseline, str(at.keys)))
    names = [s.name for s in sources]
    for grid_source in sources:
        if names.count(grid_source.name) > 1:
            raise ConfigError(f"{where}: two embeddings are named {grid_source.name!r}")
        if grid_source.baseline is not None and grid_source.baseline not in names:
            raise ConfigError(
                f"{where}: embeddings {grid_source.name!r}: baseline {grid_source.baseline!r} "
                f"is not one of the embeddings ({', '.join(names)})"
            )
        if grid_source.baseline == grid_source.name:
            raise ConfigError(f"{where}: embeddings {grid_source.name!r} is its own baseline")
    return tuple(sources)


def _entry_specs(
    entry: Mapping[str, Any], name: str, base: Path, contextual: ContextualOptions, at: Source
) -> list[EmbeddingsSpec]:
    if ("path" in entry) == ("model" in entry):
        raise ConfigError(f"{at}: give exactly one of path (static vectors) or model")
    if "path" in entry:
        for key in ("layers", "contextual"):
            if key in entry:
                raise ConfigError(f"{at.key(key)}: {key} is for models, not static vectors")
        location = typed(entry["path"], str, at.key("path"))
        if location.startswith(API_PREFIXES):
            kind = location.partition(":")[0]
            raise ConfigError(f"{at.key('path')}: an {kind}: spec is a model: model: {location}")
        if location.lower() != "glove-6b-50d":
            location = config_path(location, base, at.key("path"))
        spec = parse_embeddings_spec(f"{name}={location}")
        fmt = typed(entry.get("format", "auto"), str, at.key("format"))
        return [replace(spec, fmt=fmt)]
    if "format" in entry:
        raise ConfigError(f"{at.key('format')}: format is for static vectors, not models")
    options = options_from_file(
        ContextualOptions,
        CONTEXTUAL,
        entry.get("contextual", {}),
        at.child("contextual"),
        defaults=as_dict(contextual),
    )
    model = model_location(entry["model"], base, at.key("model"))
    if model.startswith(API_PREFIXES):
        if "layers" in entry:
            kind = model.partition(":")[0]
            raise ConfigError(f"{at.key('layers')}: an {kind}: model gives one vector per text, "
                              "it has no layers")  # fmt: skip
        with named_by(at, CONTEXTUAL):
            return parse_embeddings_specs(f"{name}={model}", options)
    layers = layer_numbers(entry.get("layers"), at.key("layers"))
    layer_text = ",".join(str(layer) for layer in layers)
    with named_by(at, CONTEXTUAL):  # an option hf: models do not take (tensor_parallel)
        return parse_embeddings_specs(f"{name}=hf:{model}@{layer_text}", options)


def _asymmetry(section: Any, base: Path, source: Source) -> str | None:
    if section is None:
        return None
    section = mapping(section, str(source))
    check_keys(section, {"counts"}, str(source))
    counts = typed(section.get("counts", "wordfreq"), str, source.key("counts"))
    if counts == "wordfreq":
        return counts
    if "{lang}" not in counts:
        raise ConfigError(f"{source.key('counts')}: a corpus path needs {{lang}}, or wordfreq")
    return config_path(counts, base, source.key("counts"))
