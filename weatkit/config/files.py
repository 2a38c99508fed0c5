"""Reading option files (YAML or TOML) into checked values, with one-line errors.

Shared by experiment files (``weatkit grid``) and comparison files (``weatkit compare``): every
error names the file and the key path (``exp.yaml: embeddings[1].layers: expected int``).
Entries of a list are counted from 1, as a user counts them. Relative paths are read from the
file's own folder (:func:`base_folder`); ``~`` and ``$VARS`` are expanded. A YAML key given
twice in one mapping is an error naming the key and its line (YAML 1.2 requires unique keys;
PyYAML would keep the last one silently); TOML refuses them itself.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tomllib
from collections.abc import Hashable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import yaml

from weatkit.errors import ConfigError, WeatkitError

_T = TypeVar("_T")
_MERGE_TAG = "tag:yaml.org,2002:merge"


def read_config(file: Path, what: str = "option file") -> tuple[dict[str, Any], str]:
    """The top-level mapping of a ``.yaml``/``.yml``/``.toml`` file and the file's SHA-256."""
    try:
        raw = file.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read {what} {file}: {err.strerror}") from err
    return parse_config(raw, file, what), hashlib.sha256(raw).hexdigest()


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:  # `<<: *anchor` keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # SafeLoader reports unhashable keys itself
            line = key_node.start_mark.line + 1
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"key {key!r} is given twice (lines {seen[key]} and {line})",
                    key_node.start_mark,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UniqueKeyLoader.construct_mapping
)


def parse_config(raw: bytes, file: Path, what: str = "option file") -> dict[str, Any]:
    """Parse YAML or TOML (by the file's suffix); errors name the file (and the YAML line)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{file}: not UTF-8 (byte {err.start})") from None
    try:
        if file.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif file.suffix.lower() in (".yaml", ".yml"):
            data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader
        else:
            raise ConfigError(f"{file}: {what}s are .yaml, .yml or .toml")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "syntax error"
        raise ConfigError(f"{file}{where}: invalid YAML: {problem}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{file}: invalid TOML: {err}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping of options at the top level")
    return data


def base_folder(file: Path) -> Path:
    """The folder relative paths of ``file`` are read from: the file's own (absolute) folder."""
    return file.resolve().parent


def config_path(value: Any, base: Path, at: str) -> str:
    """A path option: ``~`` and ``$VARS`` expanded, a relative path joined to ``base``."""
    text = typed(value, str, at)
    if not text:
        raise ConfigError(f"{at}: empty path")
    expanded = os.path.expanduser(os.path.expandvars(text))
    return str(base / expanded) if not os.path.isabs(expanded) else expanded


def command_line_path(value: str) -> str:
    """A path given on the command line (``--out``): ``~`` expanded, relative to the current
    folder (not to the option file)."""
    return os.path.expanduser(value)


def model_location(value: Any, base: Path, at: str) -> str:
    """A ``model`` entry: a model spec (:mod:`weatkit.scoring.spec`) whose local directory is
    joined to ``base``; a hub id, a server (``openai:URL#MODEL``) and the ``hf:``/``vllm:``
    prefix are kept as written.

    A value is a directory when it looks like a path (``./m``, ``/m``, ``~/m``, ``a/b/c``; see
    :func:`weatkit.models.hub.looks_like_path`) or when ``base / value`` is a directory
    (``models/a`` next to the file); otherwise it is a hub id (``org/name``).
    """
    from weatkit.models.hub import looks_like_path  # imports torch
    from weatkit.scoring.spec import parse_model_spec

    text = typed(value, str, at)
    if not text:
        raise ConfigError(f"{at}: empty model name")
    spec = parse_model_spec(text, option=at)
    if spec.backend == "openai":
        return str(spec)
    prefix = text[: len(text) - len(spec.model)] if text.endswith(spec.model) else ""
    local = config_path(spec.model, base, at)
    return prefix + (local if looks_like_path(spec.model) or Path(local).is_dir() else spec.model)


def layer_numbers(value: Any, at: str) -> tuple[int, ...]:
    """``layers``: one layer number or a non-empty list of distinct ones (0 = embedding layer,
    negative = counted from the top)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{at}: give the model's layers, e.g. layers: [0, -2]")
    for layer in value:
        typed(layer, int, at)
    if len(set(value)) != len(value):
        raise ConfigError(f"{at}: a layer is given twice ({', '.join(map(str, value))})")
    return tuple(value)


def entry(key: str, number: int) -> str:
    """The key path of a list entry, counted from 1 as a user counts: ``models[1]``."""
    return f"{key}[{number}]"


def check_keys(data: Mapping[str, Any], known: set[str], where: str) -> None:
    """Every key of ``data`` is ``known``; else a one-line error naming it, the known keys
    closest to it (as the command line does: ``did you mean 'lists'?``) and all of them."""
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=3)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ConfigError(
                f"{where}: unknown option {key!r}{hint} (known: {', '.join(sorted(known))})"
            )


def mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping of options, got {describe(value)}")
    return value


def strings(value: Any, where: str, required: bool = False) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: expected a non-empty list of names, got {describe(value)}")
    return tuple(value)


def typed(value: Any, types: type | tuple[type, ...], where: str) -> Any:
    allowed = types if isinstance(types, tuple) else (types,)
    bad_bool = isinstance(value, bool) and bool not in allowed
    if not isinstance(value, allowed) or bad_bool:
        names = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
        raise ConfigError(f"{where}: expected {names}, got {describe(value)}")
    return value


def describe(value: Any) -> str:
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}"[:80]


def as_dict(options: Any) -> dict[str, Any]:
    return {f.name: getattr(options, f.name) for f in fields(options)}


def dataclass_from(cls: type[_T], values: Any, where: str) -> _T:
    """``cls(**values)`` with unknown keys and wrong types reported, then ``validate()``d.

    For the small option sections of one file kind (compare's ``crows``, ``correlation``);
    options shared by several files and the command line are declared in
    :mod:`weatkit.config.schema`. A :class:`ConfigError` naming a field becomes
    ``where.field: problem``.
    """
    values = mapping(values, where)
    defaults = cls()
    check_keys(values, {f.name for f in fields(cls)}, where)  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        default = getattr(defaults, key)
        at = f"{where}.{key}"
        if isinstance(default, tuple):
            if isinstance(value, str | int):
                value = [value]
            if not isinstance(value, list):
                raise ConfigError(f"{at}: expected a list, got {describe(value)}")
            value = tuple(value)
        elif isinstance(default, dict):
            value = dict(mapping(value, at))
        elif isinstance(default, bool):
            value = typed(value, bool, at)
        elif isinstance(default, float):
            value = float(typed(value, (int, float), at))
        elif isinstance(default, int):
            value = typed(value, int, at)
        elif isinstance(default, str):
            value = typed(value, str, at)
        kwargs[key] = value
    try:
        built = cls(**kwargs)
        getattr(built, "validate", lambda: None)()
    except WeatkitError as err:
        if isinstance(err, ConfigError) and err.field is not None:
            raise ConfigError(f"{where}.{err.field}: {err.problem}") from None
        raise ConfigError(f"{where}: {err}") from None
    return built
