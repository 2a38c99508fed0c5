"""``--compat`` presets of the sentence-level commands: the option values that reproduce a
reference tool's code, per command.

:data:`SENTENCE_PRESETS` maps a command to its presets and each preset to the option values it
sets (keys are the command's option names, as the CLI passes them). Options the user gives
explicitly still win; :func:`preset_summary` says which values were applied and which were given
instead, :func:`preset_line` in one line (printed to stderr by the commands).

The presets are the measure packages' (:attr:`weatkit.measures.plugins.Plugin.presets`); what each
tool's code does is told in the package's ``plugin`` module (read in the tool's repository;
docs/guides/compat.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Any

from weatkit.compat_report import preset_report
from weatkit.errors import ConfigError
from weatkit.measures.plugins import presets as plugin_presets

#: command -> preset name -> {option: value}: each measure package's own (its
#: ``weatkit.<name>.plugin``).
SENTENCE_PRESETS: MappingProxyType[str, MappingProxyType[str, MappingProxyType[str, Any]]] = (
    MappingProxyType(plugin_presets())
)


def _preset(command: str, preset: str) -> Mapping[str, Any]:
    presets = SENTENCE_PRESETS.get(command)
    if presets is None:
        raise ConfigError(f"the {command} command has no --compat presets")
    if preset not in presets:
        raise ConfigError(
            f"unknown --compat {preset!r} for {command}: choose from {', '.join(presets)}"
        )
    return presets[preset]


def apply_preset(
    command: str, preset: str | None, explicit: Collection[str], values: Mapping[str, Any]
) -> dict[str, Any]:
    """``values`` with the option values of ``command``'s ``preset``, except those in
    ``explicit`` (the options the user gave), which keep their value.

    Example:
        >>> apply_preset("mbe", "mbe", (), {"weight": "cosine", "method": "aul"})
        {'weight': 'dot', 'method': 'aul'}
    """
    out = dict(values)
    if preset is None:
        return out
    for key, value in _preset(command, preset).items():
        if key not in explicit:
            out[key] = value
    return out


def preset_summary(command: str, preset: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """What ``preset`` set in the option ``values`` a command ran with (for a manifest):
    ``{"preset", "applied": {option: value}, "given": {option: {"value", "preset"}}, "line"}``
    (:func:`weatkit.compat_report.preset_report`, shared with the word-level presets)."""
    return preset_report(preset, _preset(command, preset), values.get)


def preset_line(command: str, preset: str, values: Mapping[str, Any]) -> str:
    """One line: ``compat stereoset: blanks=all, ...; given: bos_pass=joint (preset: separate)``."""
    return preset_summary(command, preset, values)["line"]
