"""What a ``--compat`` preset set, as a manifest entry and one printed line.

Shared by the word-level presets (:mod:`weatkit.engine.compat`) and the sentence-level ones
(:mod:`weatkit.measures.compat`); imports nothing heavy, so the commands' ``--help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def preset_report(
    name: str, preset: Mapping[str, Any], value_of: Callable[[str], Any]
) -> dict[str, Any]:
    """What preset ``name`` set, given the value each of its options ended with (``value_of``):
    ``{"preset", "applied": {option: value}, "given": {option: {"value", "preset"}}, "line"}``
    (``applied``: the preset's options whose value was used; ``given``: those set otherwise)."""
    applied: dict[str, Any] = {}
    given: dict[str, dict[str, Any]] = {}
    for key, value in preset.items():
        actual = value_of(key)
        if actual == value and type(actual) is type(value):
            applied[key] = value
        else:
            given[key] = {"value": actual, "preset": value}
    summary: dict[str, Any] = {"preset": name, "applied": applied, "given": given}
    summary["line"] = compat_line(summary)
    return summary


def _show(key: str, value: Any) -> str:
    if key == "lower" and value is None:
        return "auto"
    return str(value).lower() if isinstance(value, bool) else str(value)


def compat_line(summary: Mapping[str, Any]) -> str:
    """One line: ``compat xweat: ddof=0, ...; given: equalize=none (preset: truncate)``."""
    parts = [f"{k}={_show(k, v)}" for k, v in summary["applied"].items()]
    line = f"compat {summary['preset']}: " + (", ".join(parts) if parts else "no value applied")
    if summary["given"]:
        given = [
            f"{k}={_show(k, g['value'])} (preset: {_show(k, g['preset'])})"
            for k, g in summary["given"].items()
        ]
        line += "; given: " + ", ".join(given)
    return line
