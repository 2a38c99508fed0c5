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
    embeddings:
      - {name: mono, path: "vecs/cc.{lang}.vec"}
      - {name: aligned, path: "vecs/cc.{lang}.aligned.vec", baseline: mono}
      - {name: XLM-R, model: xlm-roberta-base, layers: [0, -2]}

Each embeddings entry has a ``name`` and either ``path`` (static vectors; ``{lang}`` for one
file per language; ``glove-6b-50d`` for the embedded default; optional ``format``) or ``model``
(a Hugging Face hub id or local directory, with ``layers`` and optional ``contextual``
options). ``baseline: NAME`` asks for the paired difference in effect size to that embeddings;
an entry with several layers may name one of its own (``baseline: XLM-R@0``), which then is the
baseline of the other layers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from weatkit.configfile import (
    as_dict,
    check_keys,
    config_path,
    dataclass_from,
    mapping,
    read_config,
    strings,
    typed,
)
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.embeddings.spec import EmbeddingsSpec, parse_embeddings_spec, parse_embeddings_specs
from weatkit.engine.weat import EngineOptions
from weatkit.errors import WeatkitError
from weatkit.isomorphism.measures import IsoOptions
from weatkit.lists.sources import canonical_name
from weatkit.models.hub import looks_like_path
from weatkit.pipeline import RunConfig

_TOP_KEYS = {
    "output",
    "languages",
    "lists",
    "tests",
    "embeddings",
    "lower",
    "strip_accents",
    "min_coverage",
    "equalize",
    "allow_pickle",
    "fasttext_oov",
    "engine",
    "contextual",
    "isomorphism",
    "asymmetry",
}
_ENTRY_KEYS = {"name", "path", "model", "format", "layers", "baseline", "contextual"}


@dataclass(frozen=True)
class GridSource:
    """One embeddings source of the grid (an ``hf:`` entry gives one per layer).

    Attributes:
        spec: what to load.
        baseline: name of the source its effect sizes are compared to (None: no comparison).
    """

    spec: EmbeddingsSpec
    baseline: str | None = None

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
    """

    path: Path
    sha256: str
    output: Path
    languages: tuple[str, ...]
    sources: tuple[GridSource, ...]
    run: RunConfig
    asymmetry: str | None = None

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
    where = str(file)
    check_keys(data, _TOP_KEYS, where)
    base = file.resolve().parent
    languages = strings(data.get("languages"), f"{where}: languages", required=True)
    lists = strings(data.get("lists", ["ca-weat"]), f"{where}: lists", required=True)
    lists = tuple(_list_location(entry, base) for entry in lists)
    tests = strings(data.get("tests"), f"{where}: tests") or None
    contextual = dataclass_from(
        ContextualOptions, data.get("contextual", {}), f"{where}: contextual"
    )
    iso_section = data.get("isomorphism")
    reference, iso_words, iso = None, None, IsoOptions()
    if iso_section is not None:
        section = dict(mapping(iso_section, f"{where}: isomorphism"))
        reference = section.pop("reference", None)
        if not isinstance(reference, str) or not reference:
            raise WeatkitError(f"{where}: isomorphism: give the reference language (e.g. en)")
        words = section.pop("words", None)
        iso_words = (
            None if words is None else config_path(words, base, f"{where}: isomorphism.words")
        )
        iso = dataclass_from(IsoOptions, section, f"{where}: isomorphism")
    engine = dataclass_from(EngineOptions, data.get("engine", {}), f"{where}: engine")
    if engine.keep_distributions:
        raise WeatkitError(f"{where}: engine: keep_distributions is not a grid option")
    run = RunConfig(
        lists=lists,
        tests=tests,
        lower=typed(data.get("lower"), (bool, type(None)), f"{where}: lower"),
        strip_accents=typed(data.get("strip_accents", False), bool, f"{where}: strip_accents"),
        min_coverage=float(
            typed(data.get("min_coverage", 0.8), (int, float), f"{where}: min_coverage")
        ),
        equalize=typed(data.get("equalize", "none"), str, f"{where}: equalize"),
        allow_pickle=typed(data.get("allow_pickle", False), bool, f"{where}: allow_pickle"),
        fasttext_oov=typed(data.get("fasttext_oov", False), bool, f"{where}: fasttext_oov"),
        engine=engine,
        contextual=contextual,
        isomorphism=reference,
        iso=iso,
        iso_words=iso_words,
    )
    sources = _sources(data.get("embeddings"), base, contextual, where)
    out = output if output is not None else data.get("output", f"{file.stem}-run")
    return GridConfig(
        path=file,
        sha256=sha256,
        output=Path(config_path(out, base, f"{where}: output")),
        languages=languages,
        sources=sources,
        run=run,
        asymmetry=_asymmetry(data.get("asymmetry"), base, where),
    )


def _sources(
    entries: Any, base: Path, contextual: ContextualOptions, where: str
) -> tuple[GridSource, ...]:
    if not isinstance(entries, list) or not entries:
        raise WeatkitError(f"{where}: embeddings: give a list of {{name, path | model}} entries")
    sources: list[GridSource] = []
    for i, entry in enumerate(entries, 1):
        at = f"{where}: embeddings entry {i}"
        entry = mapping(entry, at)
        check_keys(entry, _ENTRY_KEYS, at)
        name = typed(entry.get("name"), str, f"{at}: name")
        if not name or any(c in name for c in "=/\\"):
            raise WeatkitError(f"{at}: name must be non-empty, without '=', '/' or '\\'")
        at = f"{where}: embeddings {name!r}"
        baseline = typed(entry.get("baseline"), (str, type(None)), f"{at}: baseline")
        for spec in _entry_specs(entry, name, base, contextual, at):
            own_layer = spec.layer is not None and len(spec.layers) > 1 and baseline == spec.name
            sources.append(GridSource(spec, None if own_layer else baseline))
    names = [s.name for s in sources]
    for source in sources:
        if names.count(source.name) > 1:
            raise WeatkitError(f"{where}: two embeddings are named {source.name!r}")
        if source.baseline is not None and source.baseline not in names:
            raise WeatkitError(
                f"{where}: embeddings {source.name!r}: baseline {source.baseline!r} is not "
                f"one of the embeddings ({', '.join(names)})"
            )
        if source.baseline == source.name:
            raise WeatkitError(f"{where}: embeddings {source.name!r} is its own baseline")
    return tuple(sources)


def _entry_specs(
    entry: Mapping[str, Any], name: str, base: Path, contextual: ContextualOptions, at: str
) -> list[EmbeddingsSpec]:
    if ("path" in entry) == ("model" in entry):
        raise WeatkitError(f"{at}: give exactly one of path (static vectors) or model")
    if "path" in entry:
        for key in ("layers", "contextual"):
            if key in entry:
                raise WeatkitError(f"{at}: {key} is for models, not static vectors")
        location = typed(entry["path"], str, f"{at}: path")
        if location.lower() != "glove-6b-50d":
            location = config_path(location, base, f"{at}: path")
        spec = parse_embeddings_spec(f"{name}={location}")
        fmt = typed(entry.get("format", "auto"), str, f"{at}: format")
        return [replace(spec, fmt=fmt)]
    if "format" in entry:
        raise WeatkitError(f"{at}: format is for static vectors, not models")
    model = typed(entry["model"], str, f"{at}: model")
    local = config_path(model, base, f"{at}: model")
    if looks_like_path(model) or Path(local).exists():
        model = local
    layers = entry.get("layers")
    if isinstance(layers, int) and not isinstance(layers, bool):
        layers = [layers]
    if not isinstance(layers, list) or not layers:
        raise WeatkitError(f"{at}: give the model's layers, e.g. layers: [0, -2]")
    for layer in layers:
        typed(layer, int, f"{at}: layers")
    overrides = mapping(entry.get("contextual", {}), f"{at}: contextual")
    options = dataclass_from(
        ContextualOptions, {**as_dict(contextual), **overrides}, f"{at}: contextual"
    )
    layer_text = ",".join(str(layer) for layer in layers)
    return parse_embeddings_specs(f"{name}=hf:{model}@{layer_text}", options)


def _asymmetry(section: Any, base: Path, where: str) -> str | None:
    if section is None:
        return None
    section = mapping(section, f"{where}: asymmetry")
    check_keys(section, {"counts"}, f"{where}: asymmetry")
    counts = typed(section.get("counts", "wordfreq"), str, f"{where}: asymmetry.counts")
    if counts == "wordfreq":
        return counts
    if "{lang}" not in counts:
        raise WeatkitError(f"{where}: asymmetry.counts: a corpus path needs {{lang}}, or wordfreq")
    return config_path(counts, base, f"{where}: asymmetry.counts")


def _list_location(entry: str, base: Path) -> str:
    """A list-set name stays as it is; a list file is read relative to the experiment."""
    if canonical_name(entry) is not None:
        return entry
    return config_path(entry, base, "lists")
