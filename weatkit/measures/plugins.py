"""Measure packages plugged into weatkit: one declaration each, read by the shared parts.

Every measure that lives in a package of its own (the sentence-level measures, CEAT, LPBS, SEAT:
:data:`PACKAGES`) declares in its module ``weatkit.<package>.plugin`` one :class:`Plugin`:
everything weatkit's shared parts need to know of it. They read :func:`plugins` and never name
the measure (the word-level WEAT and association metrics are weatkit's core, not a plugin):

==================  ===========================================  ==============================
field               what it declares                             read by
==================  ===========================================  ==============================
``api``             its public functions, ``module:attribute``   ``import weatkit`` (lazily)
``command``         its click command, ``module:attribute``      ``weatkit NAME`` (lazily)
``summary``         the command's one line                       ``weatkit --help``
``section``         its options (a :class:`~weatkit.config.      the command line and config
                    declare.Section`)                            files; the schema's tests
``presets``         its ``--compat`` presets: name → values      :mod:`weatkit.measures.compat`
``docs``            its page under ``docs/``                     ``tests/test_plugins.py``; the
                                                                 report's links
``measures``        its registry entries (:class:`~weatkit.      :mod:`weatkit.measures.
                    measures.measure.Measure`)                   registry`, ``compare``, MTMM
``compare``         its ``compare`` section: reader, rows and    ``weatkit compare``
                    job inputs, ``module:attribute`` each
                    (:class:`Compare`)
``report``          the report sections of its ``--out``         ``weatkit report`` (on a
                    directory, ``module:attribute``              directory whose manifest's
                                                                 ``command`` is ``weatkit NAME``)
``plots``           its figures: kind → ``module:attribute``     ``weatkit plot --kind`` (same)
==================  ===========================================  ==============================

Adding a measure is its package (compute, result, per-item rows, command, ``compare`` section,
``plugin``), its tests and docs page, and one line of :data:`PACKAGES` (lm-evaluation-harness
keeps a registry of tasks the same way). A plugin holds declarations and ``module:attribute``
strings only, so reading the plugins imports neither torch nor the measures' code: ``weatkit
--help`` stays fast (``tests/test_cli_imports.py``), and a package's ``__init__`` must stay as
light (it imports nothing, or exports its names lazily through a module ``__getattr__``). The
order of :data:`PACKAGES` is that of the registry's measures after the core's, and of ``weatkit
compare``'s methods after ``weat`` (its tables' columns).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from weatkit.config.declare import Section
from weatkit.measures.measure import Measure

#: The measure packages, each with a ``plugin`` module defining ``PLUGIN``.
PACKAGES: tuple[str, ...] = (
    "weatkit.gest",
    "weatkit.stereoset",
    "weatkit.crows",
    "weatkit.mbe",
    "weatkit.ceat",
    "weatkit.lpbs",
    "weatkit.seat",
)


def _check_target(plugin: str, target: str) -> None:
    module, sep, attribute = target.partition(":")
    if not (module.startswith("weatkit.") and sep and attribute):
        raise ValueError(f"plugin {plugin}: {target!r} is not weatkit.MODULE:NAME")


@dataclass(frozen=True)
class Compare:
    """A measure's section of a ``weatkit compare`` file.

    Attributes:
        section: ``module:attribute`` of ``read(values, base, source, contextual) -> section``:
            the file's mapping under the plugin's name read into a frozen section, errors
            naming ``source``'s keys (a sentence-level section reads its ``limit`` with
            :func:`weatkit.crossmethod.sections.read_limit`).
        rows: ``module:attribute`` of ``rows(entry, kind, lang, section, ctx) -> list[dict]``:
            the :data:`~weatkit.crossmethod.methods.SCORE_COLUMNS` rows of one model in one
            language, raising :class:`~weatkit.crossmethod.methods.NotApplicable` when the
            measure has nothing to measure there.
        inputs: ``module:attribute`` of ``inputs(section, lang) -> object``: the identity of
            the job's own input files (a corpus's fingerprint, the word lists' SHA-256), part
            of its key so that a changed file is scored again; None: the section is all.
        strata: what the percentile bootstrap of its scores' intervals resamples (the
            ``scores`` section's plan, :mod:`weatkit.crossmethod.uncertainty`), as
            ``manifest.json``'s ``resampling`` tells it; empty: its rows say themselves.
        neutral_test: its test of the neutral value, for the same record.
    """

    section: str
    rows: str
    inputs: str | None = None
    strata: str = ""
    neutral_test: str = ""


@dataclass(frozen=True)
class Plugin:
    """One measure package's declaration (the module docstring's table).

    Attributes:
        name: the command and the measure's name (``ceat``).
        api: public name → ``module:attribute`` of what ``weatkit.<name>`` gives.
        command: ``module:attribute`` of its click command, or None (no command).
        summary: the command's one-line help in ``weatkit --help``.
        section: its options, declared once for the command line and config files.
        presets: ``--compat`` preset name → the option values it sets.
        docs: its page, relative to ``docs/`` (``measures/ceat.md``).
        measures: its entries of :data:`weatkit.measures.registry.MEASURES`.
        compare: its ``weatkit compare`` section, or None (not in comparison files).
        report: ``module:attribute`` of ``sections(source) -> list[Section]``: the HTML report
            of its command's ``--out`` directory (:mod:`weatkit.report.html`; ``source`` as
            :func:`weatkit.report.html.source.read_source` reads it), or None.
        plots: ``weatkit plot --kind`` → ``module:attribute`` of ``draw(source, *, tests,
            list_sets, langs) -> Figure``, the figure of that directory
            (:func:`weatkit.report.plots.plugin_figure`).
    """

    name: str
    api: Mapping[str, str]
    command: str | None
    summary: str
    section: Section | None = None
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    docs: str = ""
    measures: tuple[Measure, ...] = ()
    compare: Compare | None = None
    report: str | None = None
    plots: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        targets = [*self.api.values(), *self.plots.values()]
        targets += [t for t in (self.command, self.report) if t]
        if self.compare is not None:
            targets += [self.compare.section, self.compare.rows]
            targets += [self.compare.inputs] if self.compare.inputs else []
        for target in targets:
            _check_target(self.name, target)


@functools.cache
def plugins() -> tuple[Plugin, ...]:
    """The :class:`Plugin` of every package of :data:`PACKAGES`, in that order."""
    found = tuple(importlib.import_module(f"{package}.plugin").PLUGIN for package in PACKAGES)
    names = [p.name for p in found]
    if len(set(names)) != len(names):
        raise ValueError(f"two measure plugins share a name: {names}")
    return found


def lazy_api() -> dict[str, str]:
    """Every plugin's public names → ``module:attribute`` (``weatkit``'s lazy table)."""
    return {name: target for p in plugins() for name, target in p.api.items()}


def commands() -> dict[str, tuple[str, str]]:
    """Every plugin's command → (``module:attribute``, one-line help), as
    :data:`weatkit.cli.COMMANDS` holds them."""
    return {p.name: (p.command, p.summary) for p in plugins() if p.command}


def sections() -> dict[str, Section]:
    """Every plugin's options section, by the plugin's name in capitals (``CEAT``)."""
    return {p.name.upper(): p.section for p in plugins() if p.section is not None}


def presets() -> dict[str, Mapping[str, Mapping[str, Any]]]:
    """Every plugin's ``--compat`` presets, by its command."""
    return {
        p.name: MappingProxyType({k: MappingProxyType(dict(v)) for k, v in p.presets.items()})
        for p in plugins()
        if p.presets
    }


def load(target: str) -> Any:
    """The attribute a ``module:attribute`` string of a plugin names (importing its module)."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def find(name: str) -> Plugin | None:
    """The plugin named ``name``, or None."""
    return next((p for p in plugins() if p.name == name), None)
