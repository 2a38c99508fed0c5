"""Reading option files (YAML or TOML) into validated values, with one-line errors.

Shared by experiment files (``weatkit grid``) and comparison files (``weatkit compare``): every
error names the file and the key (``exp.yaml: embeddings[1].layers: expected a list``).
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import yaml

from weatkit.errors import WeatkitError

_T = TypeVar("_T")


def read_config(file: Path, what: str = "option file") -> tuple[dict[str, Any], str]:
    """The top-level mapping of a ``.yaml``/``.yml``/``.toml`` file and the file's SHA-256."""
    try:
        raw = file.read_bytes()
    except OSError as err:
        raise WeatkitError(f"cannot read {what} {file}: {err.strerror}") from err
    return parse_config(raw, file, what), hashlib.sha256(raw).hexdigest()


def parse_config(raw: bytes, file: Path, what: str = "option file") -> dict[str, Any]:
    """Parse YAML or TOML (by the file's suffix); errors name the file (and the YAML line)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise WeatkitError(f"{file}: not UTF-8 (byte {err.start})") from None
    try:
        if file.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif file.suffix.lower() in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise WeatkitError(f"{file}: {what}s are .yaml, .yml or .toml")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "syntax error"
        raise WeatkitError(f"{file}{where}: invalid YAML: {problem}") from None
    except tomllib.TOMLDecodeError as err:
        raise WeatkitError(f"{file}: invalid TOML: {err}") from None
    if not isinstance(data, dict):
        raise WeatkitError(f"{file}: expected a mapping of options at the top level")
    return data


def config_path(value: Any, base: Path, at: str) -> str:
    text = typed(value, str, at)
    if not text:
        raise WeatkitError(f"{at}: empty path")
    expanded = os.path.expanduser(os.path.expandvars(text))
    return str(base / expanded) if not os.path.isabs(expanded) else expanded


def check_keys(data: Mapping[str, Any], known: set[str], where: str) -> None:
    for key in data:
        if key not in known:
            raise WeatkitError(
                f"{where}: unknown option {key!r} (known: {', '.join(sorted(known))})"
            )


def mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WeatkitError(f"{where}: expected a mapping of options, got {describe(value)}")
    return value


def strings(value: Any, where: str, required: bool = False) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise WeatkitError(f"{where}: expected a non-empty list of names, got {describe(value)}")
    return tuple(value)


def typed(value: Any, types: type | tuple[type, ...], where: str) -> Any:
    allowed = types if isinstance(types, tuple) else (types,)
    bad_bool = isinstance(value, bool) and bool not in allowed
    if not isinstance(value, allowed) or bad_bool:
        names = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
        raise WeatkitError(f"{where}: expected {names}, got {describe(value)}")
    return value


def describe(value: Any) -> str:
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}"[:80]


def as_dict(options: Any) -> dict[str, Any]:
    return {f.name: getattr(options, f.name) for f in fields(options)}


def dataclass_from(cls: type[_T], values: Any, where: str) -> _T:
    """``cls(**values)`` with unknown keys and wrong types reported, then ``validate()``d."""
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
                raise WeatkitError(f"{at}: expected a list, got {describe(value)}")
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
    built = cls(**kwargs)
    try:
        getattr(built, "validate", lambda: None)()
    except WeatkitError as err:
        raise WeatkitError(f"{where}: {err}") from None
    return built
