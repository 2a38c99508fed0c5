"""The one builder of a :class:`~weatkit.pipeline.RunConfig`, from a file's mapping or from
the command line's options, both read through :mod:`weatkit.config.schema`.

A run's keys in a file (an experiment's top level, a comparison's ``weat`` section)::

    lists: [ca-weat, my-lists.yaml]     # list sets, or list files read from the file's folder
    tests: [weat1]                      # optional
    lower: true                         # also strip_accents, min_coverage, equalize, strict,
                                        #      allow_pickle, fasttext_oov, accent_removal,
                                        #      duplicates, invisible
    compat: xweat                       # a reference tool's conventions; keys given here win
    pool: [lists, languages]            # random-effects pooling of d (also: layers)
    metrics: [weat, rnd, ripa]          # weat and the association metrics (association.csv)
    association: {rnd_reduction: mean}  # AssociationOptions fields
    engine: {n_bootstrap: 1000}         # EngineOptions fields
    contextual: {batch_size: 16}        # ContextualOptions fields
    isomorphism: {reference: en, words: "vocab/{lang}.txt", measures: [ev]}   # + IsoOptions
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from weatkit.association.options import ASSOCIATION_KEYS, COMPAT, AssociationOptions
from weatkit.config.files import check_keys, config_path, mapping
from weatkit.config.schema import (
    ASSOCIATION,
    CONTEXTUAL,
    ENGINE,
    ISO,
    LISTS,
    LOADING,
    METRICS,
    POOLING,
    Source,
    build,
    named_by,
    options_from_cli,
    options_from_file,
    values_from_cli,
    values_from_file,
)
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.engine.compat import COMPAT_PRESETS, CONTEXTUAL_KEYS, ENGINE_KEYS
from weatkit.engine.weat import EngineOptions
from weatkit.errors import ConfigError
from weatkit.isomorphism.measures import IsoOptions
from weatkit.lists.sources import canonical_name
from weatkit.pipeline import RunConfig

#: The keys of a run in a file: the list, normalisation, loading, pooling and metric options and
#: four sections.
RUN_KEYS = frozenset(
    LISTS.file_keys
    | LOADING.file_keys
    | POOLING.file_keys
    | METRICS.file_keys
    | {"engine", "contextual", "isomorphism", "association"}
)
_SECTIONS = ("engine", "contextual", "isomorphism", "association")
_ISO_RUN_KEYS = {"reference", "words"}


def run_config_from_mapping(
    data: Mapping[str, Any],
    source: Source,
    base: Path,
    *,
    keys: Collection[str] = RUN_KEYS,
    contextual: ContextualOptions | None = None,
) -> RunConfig:
    """A :class:`RunConfig` from a file's keys; every message names the file and the key.

    Args:
        data: the run's keys (the caller has taken out its own: ``output``, ``embeddings``...).
        source: where ``data`` is in the file (``Source(file)``, ``Source(file, "weat")``).
        base: the folder relative paths are read from (the file's own folder).
        keys: the keys this file kind accepts (a subset of :data:`RUN_KEYS`).
        contextual: options read elsewhere in the file (``contextual`` is then not a key here).

    Raises:
        ConfigError: an unknown key, a wrong type or a value the options refuse, named as
            ``file: section.key: problem``, before anything runs.
    """
    data = mapping(data, str(source))
    check_keys(data, set(keys), str(source))
    top = {k: v for k, v in data.items() if k not in _SECTIONS}
    values: dict[str, Any] = {}
    for section in (LISTS, LOADING, POOLING, METRICS):
        values |= values_from_file(
            section, {k: v for k, v in top.items() if k in section.file_keys}, source
        )
    if "lists" in values:
        values["lists"] = tuple(
            _list_location(x, base, source.key("lists")) for x in values["lists"]
        )
    values["engine"] = options_from_file(
        EngineOptions, ENGINE, data.get("engine", {}), source.child("engine")
    )
    values["contextual"] = contextual or options_from_file(
        ContextualOptions, CONTEXTUAL, data.get("contextual", {}), source.child("contextual")
    )
    values["association"] = options_from_file(
        AssociationOptions, ASSOCIATION, data.get("association", {}), source.child("association")
    )
    if data.get("isomorphism") is not None:
        values |= _isomorphism(data["isomorphism"], source.child("isomorphism"), base)
    explicit = set(values)
    for name in ("engine", "association", "contextual"):
        explicit |= set(mapping(data.get(name) or {}, str(source.child(name))))
    with named_by(source, LISTS, LOADING, POOLING, METRICS):
        return with_compat(RunConfig(**values), explicit)


def _isomorphism(section: Any, source: Source, base: Path) -> dict[str, Any]:
    """``isomorphism: {reference, words, <IsoOptions fields>}`` as ``RunConfig`` fields."""
    values = dict(mapping(section, str(source)))
    check_keys(values, ISO.file_keys | _ISO_RUN_KEYS, str(source))
    reference = values.pop("reference", None)
    if not isinstance(reference, str) or not reference:
        raise ConfigError(f"{source.key('reference')}: give the reference language (e.g. en)")
    words = values.pop("words", None)
    iso_words = None if words is None else config_path(words, base, source.key("words"))
    if iso_words is not None and "{lang}" not in iso_words:
        raise ConfigError(f"{source.key('words')}: {iso_words!r} must contain {{lang}}")
    iso = options_from_file(IsoOptions, ISO, values, source)
    return {"isomorphism": reference, "iso_words": iso_words, "iso": iso}


def _list_location(entry: str, base: Path, at: str) -> str:
    """A list-set name stays as it is; a list file is read from the option file's folder."""
    if canonical_name(entry) is not None:
        return entry
    return config_path(entry, base, at)


def contextual_from_cli(opts: Mapping[str, Any]) -> ContextualOptions:
    """The :class:`ContextualOptions` of click's options declared for :data:`CONTEXTUAL`
    (those a command lacks keep their defaults); every message names the flag."""
    return options_from_cli(ContextualOptions, CONTEXTUAL, opts)


def iso_from_cli(opts: Mapping[str, Any], prefix: str = "") -> IsoOptions:
    """The :class:`IsoOptions` of click's options declared for :data:`ISO` with ``prefix``
    (``iso-`` in ``run``, "" in ``iso``); the device is the command's ``--device``."""
    key = prefix.replace("-", "_")
    values = {name[len(key) :]: value for name, value in opts.items() if name.startswith(key)}
    source = Source.command_line(prefix)
    return build(
        IsoOptions,
        ISO,
        values_from_cli(ISO, values, source) | {"device": opts.get("device", "auto")},
        source,
    )


def run_config_from_cli(
    opts: Mapping[str, Any],
    *,
    embeddings: tuple[Any, ...],
    iso_prefix: str = "iso-",
    explicit: Collection[str] = (),
) -> RunConfig:
    """A :class:`RunConfig` from click's options declared by
    :func:`weatkit.config.schema.click_options` for :data:`LISTS`, :data:`LOADING`,
    :data:`POOLING`, :data:`METRICS`, :data:`ASSOCIATION`, :data:`ENGINE`, :data:`CONTEXTUAL` and
    :data:`ISO` (with ``iso_prefix``), plus ``isomorphism`` and ``iso_words``; every message
    names the flag.

    Args:
        opts: click's parsed options (parameter names = field names, ISO's prefixed).
        embeddings: the ``embeddings`` entries (``--embeddings`` and ``--model``/``--layer``).
        iso_prefix: the prefix of the isomorphism flags.
        explicit: the options given on the command line (by field name): a ``--compat`` preset
            does not change them (:func:`with_compat`).
    """
    engine = options_from_cli(EngineOptions, ENGINE, opts)
    values = values_from_cli(LISTS, opts) | values_from_cli(LOADING, opts)
    values |= values_from_cli(POOLING, opts) | values_from_cli(METRICS, opts)
    association = options_from_cli(AssociationOptions, ASSOCIATION, opts)
    with named_by(Source.command_line(), LISTS, LOADING, POOLING, METRICS):
        config = RunConfig(
            **values,
            embeddings=embeddings,
            engine=engine,
            association=association,
            contextual=contextual_from_cli(opts),
            isomorphism=opts.get("isomorphism"),
            iso=iso_from_cli(opts, iso_prefix),
            iso_words=opts.get("iso_words"),
        )
        return with_compat(config, explicit)


def with_compat(config: RunConfig, explicit: Collection[str] = ()) -> RunConfig:
    """``config`` with the values of its ``compat`` preset
    (:data:`weatkit.engine.compat.COMPAT_PRESETS`, and the association metrics' of
    :data:`weatkit.association.options.COMPAT`), except the options in ``explicit``.

    Args:
        config: a run configuration whose ``compat`` names a preset (None: returned as is).
        explicit: option names the user gave (a command line's flags, a file's keys): their
            values in ``config`` are kept.

    Example:
        >>> cfg = with_compat(RunConfig(compat="xweat"), explicit={"equalize"})
        >>> cfg.engine.ddof, cfg.equalize, cfg.duplicates
        (0, 'none', 'keep')
    """
    if config.compat is None:
        return config
    given = {**COMPAT_PRESETS[config.compat], **COMPAT.get(config.compat, {})}
    preset = {k: v for k, v in given.items() if k not in explicit}
    engine = {k: v for k, v in preset.items() if k in ENGINE_KEYS}
    association = {k: v for k, v in preset.items() if k in ASSOCIATION_KEYS}
    contextual = {k: v for k, v in preset.items() if k in CONTEXTUAL_KEYS}
    sections = ENGINE_KEYS | ASSOCIATION_KEYS | CONTEXTUAL_KEYS
    run = {k: v for k, v in preset.items() if k not in sections}
    return replace(
        config,
        **run,
        engine=replace(config.engine, **engine),
        association=replace(config.association, **association),
        contextual=replace(config.contextual, **contextual),
    )
