"""``--compat`` presets of the sentence-level commands, and the report of what they set.

The word-level presets (``weatkit run``) are :data:`weatkit.engine.compat.COMPAT_PRESETS`; the
sentence commands have their own options, so their presets live here, one table keyed by
command: ``{command: {preset: {option: value}}}``, the option names being the keyword arguments
of the command's scoring function. As for ``weatkit run``, options given explicitly still win,
and the command prints one line ``compat NAME: ...; given: ...`` on stderr (also in
``manifest.json`` under ``compat`` with ``--out``).

What each tool's code does (read in its repository; README "Reproducing reference tools"):

* ``crows crows-pairs`` — nyu-mll/crows-pairs ``metric.py`` (Nangia et al. 2020; commit
  8aaac11): PLL of the shared tokens, scores rounded to 3 decimals before the comparison, ties
  neutral, ``difflib`` given ``sent_more`` first for stereo pairs and ``sent_less`` first for
  antistereo pairs (``pair_order=by-direction``), the token log-probabilities summed in float64.
* ``crows bias-eval-mlm`` — kanekomasahiro/evaluate_bias_in_mlm ``evaluate.py`` (Kaneko &
  Bollegala 2022; commit 6b10239), ``--method`` as chosen (its ``cps`` is ``pll``): ``sent_more``
  always first (``pair_order=more-first``), the PLL summed in float32 by ``torch.sum``
  (``sum_dtype=float32``), 3 decimals for ``pll`` and none for ``aul``/``aula``
  (``decimals=reference``); a tie is not a win, as in weatkit's metric.

See :mod:`weatkit.crows.score` for the options themselves.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from weatkit.engine.compat import compat_line
from weatkit.errors import ConfigError

#: command -> preset name -> option values (keyword arguments of the command's scoring).
SENTENCE_PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # -- CrowS-Pairs, AUL/AULA (weatkit.crows.score.score_crows) -------------------------------
    "crows": {
        "crows-pairs": {
            "method": "pll",
            "decimals": 3,
            "pair_order": "by-direction",
            "sum_dtype": "float64",
        },
        "bias-eval-mlm": {
            "decimals": "reference",
            "pair_order": "more-first",
            "sum_dtype": "float32",
        },
    },
}


def sentence_presets(command: str) -> dict[str, dict[str, Any]]:
    """The presets of ``command`` (empty when it has none)."""
    return SENTENCE_PRESETS.get(command, {})


def apply_sentence_preset(
    command: str,
    preset: str | None,
    options: Mapping[str, Any],
    explicit: Collection[str] = (),
) -> dict[str, Any]:
    """``options`` with the values of ``preset``, except the options in ``explicit``.

    Args:
        command: the command (a key of :data:`SENTENCE_PRESETS`).
        preset: the preset name (None: ``options`` returned as a dict).
        options: the command's option values.
        explicit: option names the user gave: their values in ``options`` are kept.

    Raises:
        ConfigError: an unknown preset for ``command``.

    Example:
        >>> apply_sentence_preset("crows", "crows-pairs", {"method": "aul", "decimals": None},
        ...                       explicit={"method"})["decimals"]
        3
    """
    values = dict(options)
    if preset is None:
        return values
    presets = sentence_presets(command)
    if preset not in presets:
        known = ", ".join(presets) or "none"
        raise ConfigError(f"--compat {preset!r}: {command} has the presets {known}")
    values.update({k: v for k, v in presets[preset].items() if k not in explicit})
    return values


def sentence_compat_summary(
    command: str, preset: str, options: Mapping[str, Any]
) -> dict[str, Any]:
    """What ``preset`` set in the final ``options``, for the manifest and the stderr line.

    Returns:
        ``{"preset", "applied", "given", "line"}`` as
        :func:`weatkit.engine.compat.compat_summary`: ``applied`` has the preset's options
        whose value is used, ``given`` the ones the user set to another value
        (``{"value": v, "preset": p}``).
    """
    applied: dict[str, Any] = {}
    given: dict[str, dict[str, Any]] = {}
    for key, value in sentence_presets(command)[preset].items():
        actual = options.get(key)
        if actual == value and type(actual) is type(value):
            applied[key] = value
        else:
            given[key] = {"value": actual, "preset": value}
    summary: dict[str, Any] = {"preset": preset, "applied": applied, "given": given}
    summary["line"] = compat_line(summary)
    return summary
