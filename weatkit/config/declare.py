"""How an option is declared and read: :class:`Option`, :class:`Section`, :class:`Source`, and
the functions that build an options dataclass from a file's values or a command line's.

Which values are valid is decided once, by the options dataclass itself
(``EngineOptions.validate``, ``RunConfig.__post_init__``, ...): it raises
:class:`~weatkit.errors.ConfigError` naming the *field*, and :func:`build` replaces the field
with the key path or the flag of its declaration (:class:`Source`). The declarations themselves
are :mod:`weatkit.config.schema`.

This module imports neither torch nor the library's option classes (the caller passes the
class), so that a command line can build its options from it cheaply (:func:`click_options`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from weatkit.config.files import check_keys, describe, mapping, strings, typed
from weatkit.errors import ConfigError

_T = TypeVar("_T")

#: Kinds of value: how a file's value and a command-line value are read.
KINDS = (
    "int",
    "int_or_auto",
    "float",
    "bool",
    "optional_bool",
    "str",
    "optional_str",
    "switch",
    "names",
    "texts",
    "ints",
    "counts",
)


@dataclass(frozen=True)
class Option:
    """One option.

    Attributes:
        name: the field of the options dataclass it sets.
        kind: one of :data:`KINDS` (``int_or_auto``: an integer or ``auto``; ``names``: a list
            of names, comma-separated on the command line; ``texts``: a list of texts, one per
            repetition of the flag (a text may hold commas); ``ints``: a list of integers, ``0,1``
            on the command line; ``counts``: a mapping of names to integers, ``NAME=N`` or ``N``
            for all on the command line; ``switch``: off (None, ``false``), on (``true``: the
            first of ``choices``) or one of ``choices``, ``--flag[=CHOICE]`` on the command
            line).
        default: the dataclass's default (a test keeps the two equal).
        help: one sentence for ``--help`` and the documentation.
        flag: the command-line flag (``--bootstrap``), or None when only files set it.
        key: the key in a file (None: ``name``).
        choices: the accepted values of a ``str`` option (shown in the help; checked by the
            dataclass).
    """

    name: str
    kind: str
    default: Any
    help: str
    flag: str | None = None
    key: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def file_key(self) -> str:
        return self.key or self.name

    def from_file(self, value: Any, at: str) -> Any:
        """The value of a file's key, type-checked (``at`` names the key in messages)."""
        kind = self.kind
        if value is None and (self.default is None or kind.startswith("optional")):
            return None
        if kind == "int":
            return typed(value, int, at)
        if kind == "int_or_auto":
            if value == "auto" or (isinstance(value, int) and not isinstance(value, bool)):
                return value
            raise ConfigError(f"{at}: expected int or auto, got {describe(value)}")
        if kind == "float":
            return float(typed(value, (int, float), at))
        if kind in ("bool", "optional_bool"):
            return typed(value, bool, at)
        if kind in ("str", "optional_str"):
            return typed(value, str, at)
        if kind == "switch":
            if isinstance(value, bool):
                return self.choices[0] if value else None
            return typed(value, str, at)
        if kind in ("names", "texts"):
            return strings(value, at, required=True)
        if kind == "ints":
            items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
            if not isinstance(items, list) or not items:
                raise ConfigError(f"{at}: expected a list of integers, got {describe(value)}")
            return tuple(typed(item, int, at) for item in items)
        if kind == "counts":
            return {str(k): typed(v, int, f"{at}.{k}") for k, v in mapping(value, at).items()}
        raise AssertionError(kind)

    def from_cli(self, value: Any, flag: str) -> Any:
        """The value click parsed for :func:`click_options`, in the dataclass's type (an
        ``int`` option given as text, as ``--limit`` is, is read here: one line if it is not
        a whole number)."""
        if self.kind in ("int", "int_or_auto") and isinstance(value, str):
            if value == "auto" and self.kind == "int_or_auto":
                return value
            try:
                return int(value)
            except ValueError:
                expected = "a whole number" + (" or auto" if self.kind == "int_or_auto" else "")
                raise ConfigError(f"{flag}: expected {expected}, not {value!r}") from None
        if self.kind == "names":
            return split_names(value or (), flag) or self.default
        if self.kind == "texts":
            return tuple(value or ()) or self.default
        if self.kind == "ints":
            try:
                numbers = tuple(int(v) for v in str(value).split(",") if v.strip())
            except ValueError:
                numbers = ()
            if not numbers:
                raise ConfigError(f"{flag}: expected integers such as 0,1, not {value!r}")
            return numbers
        if self.kind == "counts":
            counts = dict(self.default)
            for text in value or ():
                name, sep, number = text.rpartition("=")
                try:
                    count = int(number)
                except ValueError:
                    raise ConfigError(f"{flag} {text!r}: expected N or MEASURE=N") from None
                counts.update({name.strip(): count} if sep else dict.fromkeys(self.default, count))
            return counts
        return value


def split_names(values: Sequence[str], flag: str) -> tuple[str, ...]:
    """The names of a repeatable option that also takes comma-separated values (``--lang de
    --lang fr,it``), in order.

    An option left out gives ``()`` (the caller's default applies); a value that names nothing
    (``""``, ``,``) is a :class:`ConfigError` naming ``flag``: an empty selection is a mistake
    (an unset shell variable...), never read as the default nor as "none".
    """
    names: list[str] = []
    for text in values:
        given = [v.strip() for v in text.split(",") if v.strip()]
        if not given:
            raise ConfigError(
                f"{flag}: {text!r} names nothing: give at least one, or leave {flag} out for "
                "its default"
            )
        names += given
    return tuple(names)


@dataclass(frozen=True)
class Section:
    """The options of one dataclass (or of a group of ``RunConfig`` fields).

    Attributes:
        name: its key in files (``engine``), or "" for top-level options.
        options: the declarations, in help order.
    """

    name: str
    options: tuple[Option, ...]

    def __contains__(self, name: object) -> bool:
        return any(o.name == name for o in self.options)

    def __getitem__(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    @property
    def file_keys(self) -> set[str]:
        return {o.file_key for o in self.options}


@dataclass(frozen=True)
class Source:
    """Where values come from, to name them in messages.

    Attributes:
        file: the option file, or None for the command line.
        keys: key path of the enclosing section in the file (``weat.engine``; "" at the top).
        prefix: prefix of the flags on the command line (``iso-`` gives ``--iso-measures``).
    """

    file: str | None = None
    keys: str = ""
    prefix: str = ""

    @classmethod
    def command_line(cls, prefix: str = "") -> Source:
        return cls(None, "", prefix)

    def child(self, key: str) -> Source:
        """The source of a nested section (``engine`` inside ``weat``)."""
        return Source(self.file, f"{self.keys}.{key}" if self.keys else key, self.prefix)

    def entry(self, key: str, number: int) -> Source:
        """The source of a list entry, counted from 1: ``models[1]``."""
        return self.child(f"{key}[{number}]")

    def key(self, key: str) -> str:
        """``file: section.key`` (or the bare key on the command line)."""
        path = f"{self.keys}.{key}" if self.keys else key
        return f"{self.file}: {path}" if self.file is not None else path

    def name(self, option: Option) -> str:
        """How a message names ``option``: its key path in a file, its flag otherwise."""
        if self.file is not None or option.flag is None:
            return self.key(option.file_key)
        return "--" + self.prefix + option.flag.removeprefix("--")

    def __str__(self) -> str:
        if self.file is None:
            return "command line"
        return f"{self.file}: {self.keys}" if self.keys else self.file


def values_from_file(
    section: Section, data: Any, source: Source, *, only: Sequence[str] | None = None
) -> dict[str, Any]:
    """The fields a file's mapping sets, type-checked; unknown keys refused.

    Args:
        section: the declarations.
        data: the file's mapping for the section.
        source: where ``data`` is (its key path).
        only: the fields this file kind accepts (None: all of the section's).
    """
    data = mapping(data, str(source))
    options = [o for o in section.options if only is None or o.name in only]
    check_keys(data, {o.file_key for o in options}, str(source))
    by_key = {o.file_key: o for o in options}
    return {
        by_key[key].name: by_key[key].from_file(value, source.key(key))
        for key, value in data.items()
    }


def values_from_cli(
    section: Section, opts: Mapping[str, Any], source: Source | None = None
) -> dict[str, Any]:
    """The fields of ``section`` from click's parsed options (keyed by field name, as
    :func:`click_options` declares them); options a command lacks, and file-only options
    (no flag: ``contextual.lower`` is not ``--lower``), keep their defaults."""
    source = source or Source.command_line()
    return {
        o.name: o.from_cli(opts[o.name], source.name(o))
        for o in section.options
        if o.flag is not None and o.name in opts
    }


@contextmanager
def named_by(source: Source, *sections: Section) -> Iterator[None]:
    """Re-raise a library :class:`ConfigError` naming a field as one naming the key or flag.

    ``ConfigError("must be >= 0", field="n_bootstrap")`` becomes
    ``exp.yaml: engine.n_bootstrap: must be >= 0`` for a file and ``--bootstrap: must be >= 0``
    on the command line. Other errors get the file's section in front (files) or pass.
    """
    try:
        yield
    except ConfigError as err:
        if err.field is None:
            if source.file is None:
                raise
            raise ConfigError(f"{source}: {err}") from None
        option = next((s[err.field] for s in sections if err.field in s), None)
        name = source.name(option) if option is not None else source.key(err.field)
        raise ConfigError(f"{name}: {err.problem}") from None


def build(
    cls: Callable[..., _T], section: Section, values: Mapping[str, Any], source: Source
) -> _T:
    """``cls(**values)``, validated (``validate()`` when it has one), errors named by
    :func:`named_by`."""
    with named_by(source, section):
        built = cls(**values)
        getattr(built, "validate", lambda: None)()
    return built


def options_from_file(
    cls: Callable[..., _T],
    section: Section,
    data: Any,
    source: Source,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> _T:
    """The options dataclass a file's section describes, checked and validated.

    Args:
        cls: the dataclass (``EngineOptions``, ``ContextualOptions``, ``IsoOptions``).
        section: its declarations.
        data: the file's mapping (``{}`` when the section is absent).
        source: where it is (``Source(file, "engine")``).
        defaults: values under the file's (e.g. a model's own contextual options over the
            file-wide ones).
    """
    return build(
        cls, section, {**(defaults or {}), **values_from_file(section, data, source)}, source
    )


def options_from_cli(
    cls: Callable[..., _T], section: Section, opts: Mapping[str, Any], prefix: str = ""
) -> _T:
    """The options dataclass from click's parsed options; errors name the flags."""
    source = Source.command_line(prefix)
    return build(cls, section, values_from_cli(section, opts, source), source)


def click_options(
    section: Section,
    *,
    prefix: str = "",
    only: Sequence[str] | None = None,
    help_texts: Mapping[str, str] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """click decorators for the section's options that have a flag.

    Each option's parameter is named by its field (``n_bootstrap`` for ``--bootstrap``), so
    :func:`options_from_cli` reads them back. Types are read by click (``int``, ``float``);
    values are checked by the dataclass, not by click, so a bad value gives the same message
    as in a file, with the flag named (``--bootstrap: must be >= 0, got -1``).

    Args:
        section: the declarations.
        prefix: flag prefix (``iso-``); the parameter names get it too (``iso_measures``)
            unless it is "".
        only: the fields to declare (None: every one with a flag).
        help_texts: a command's own help text of some fields (``batch_size`` of a sentence scorer).
        defaults: a command's own default of some fields (the same field, another use).
    """
    import click

    decorators = []
    for option in section.options:
        if option.flag is None or (only is not None and option.name not in only):
            continue
        flag = "--" + prefix + option.flag.removeprefix("--")
        param = prefix.replace("-", "_") + option.name
        default = (defaults or {}).get(option.name, option.default)
        kwargs: dict[str, Any] = {"help": (help_texts or {}).get(option.name, option.help)}
        decls = [flag, param]
        if option.kind in ("bool", "optional_bool"):
            if default is False:
                kwargs["is_flag"] = True
            else:
                decls[0] = f"{flag}/--no-{flag.removeprefix('--')}"
                kwargs.update(default=default, show_default=default is not None)
        elif option.kind in ("names", "texts"):
            kwargs["multiple"] = True
            if default:
                kwargs.update(default=list(default), show_default=True)
        elif option.kind == "counts":
            kwargs["multiple"] = True
            shown = ", ".join(f"{k}={v}" for k, v in default.items())
            kwargs["help"] += f"  [default: {shown}]"  # click shows a text default in (...)
        else:
            types = {"int": click.INT, "float": click.FLOAT}
            kwargs.update(type=types.get(option.kind, click.STRING), default=default)
            kwargs["show_default"] = default is not None
            if option.kind == "ints":
                kwargs["default"] = ",".join(map(str, default))
            if option.choices:
                kwargs["metavar"] = "[" + "|".join(option.choices) + "]"
        decorators.append(click.option(*decls, **kwargs))

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return decorate
