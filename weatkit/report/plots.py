"""Figures of a run directory in the style of the CA-WEAT paper (matplotlib, no display needed).

:func:`plot` makes one of :data:`PLOT_KINDS`:

* ``forest`` (Figures 1 and 2; :func:`weatkit.report.forest_plot.forest_plot`): effect size d
  with its interval per language and embeddings, one panel per test, with the random-effects
  estimate over the languages when the run pooled them.
* ``scatter`` (Figures 3 and 4; :func:`weatkit.report.scatter_plot.scatter_plot`): d against an
  isomorphism measure or a count difference, with a least-squares line and its R² per space.
* ``heatmap`` (:func:`weatkit.report.heatmap_plot.heatmap_plot`): d as an embeddings ×
  language grid per (list set, test).

The per-test figures of a run's influence and null tables are
:func:`weatkit.report.influence_plot.influence_plot` and
:func:`weatkit.report.null_plot.null_plot`; those of its association metrics (``ripa``,
``rnd``, ``direct_bias``, ``mac``, ``sc_weat``, ``rnsb``, ``ect``: :data:`~weatkit.report.
association_plot.ASSOCIATION_PLOTS`) :func:`weatkit.report.association_plot.association_plot`,
which :func:`plot` makes too. Every one of them draws a run's spaces, list sets
and intervals in the one style of :mod:`weatkit.report.plot_style`.

Every function takes the :class:`~weatkit.report.run_dir.RunTables` of a run and the filters
``tests``, ``list_sets``, ``embeddings``, ``langs`` (None: all; ``langs`` also sets the order of
the languages), and returns a :class:`matplotlib.figure.Figure` that is not registered with
pyplot: nothing is shown, and it is garbage-collected like any object.
:func:`weatkit.report.figures.save_figure` writes it atomically in the format given by the
file's suffix.

The directory of a measure plugin's command (``weatkit NAME --out DIR``;
:mod:`weatkit.measures.plugins`) has the figures its plugin declares (``plots``), drawn by
:func:`plugin_figure`.
"""

from __future__ import annotations

import os

from matplotlib.figure import Figure

from weatkit.errors import WeatkitError
from weatkit.measures.plugins import Plugin, load
from weatkit.report.association_plot import ASSOCIATION_PLOTS, association_plot
from weatkit.report.forest_plot import forest_plot
from weatkit.report.heatmap_plot import heatmap_plot
from weatkit.report.plot_style import Filter
from weatkit.report.run_dir import RunTables
from weatkit.report.scatter_plot import scatter_plot

#: The kinds of plot :func:`plot` makes.
PLOT_KINDS = ("forest", "scatter", "heatmap")


def plot(
    tables: RunTables,
    kind: str,
    *,
    x: str | None = None,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """The figure of one of :data:`PLOT_KINDS` or of an association metric
    (:data:`~weatkit.report.association_plot.ASSOCIATION_PLOTS`); ``x`` is for ``scatter`` only
    (default ``iso_gh``).

    Raises:
        WeatkitError: an unknown kind, ``x`` with another kind, or the errors of the plot.
    """
    filters = {"tests": tests, "list_sets": list_sets, "embeddings": embeddings, "langs": langs}
    if kind not in (*PLOT_KINDS, *ASSOCIATION_PLOTS):
        kinds = ", ".join((*PLOT_KINDS, *ASSOCIATION_PLOTS))
        raise WeatkitError(f"unknown plot kind {kind!r}: choose one of {kinds}")
    if kind == "scatter":
        return scatter_plot(tables, x=x or "iso_gh", **filters)
    if x is not None:
        raise WeatkitError(f"--x is for --kind scatter, not {kind}")
    if kind in ASSOCIATION_PLOTS:
        return association_plot(tables, kind, **filters)
    return forest_plot(tables, **filters) if kind == "forest" else heatmap_plot(tables, **filters)


def plugin_figure(
    plugin: Plugin,
    path: str | os.PathLike,
    kind: str,
    *,
    x: str | None = None,
    tests: Filter = None,
    list_sets: Filter = None,
    embeddings: Filter = None,
    langs: Filter = None,
) -> Figure:
    """The figure ``kind`` of the directory ``path`` that ``plugin``'s command wrote: its
    ``plots[kind]`` function of the directory (:func:`weatkit.report.html.source.read_source`)
    and the filters ``tests``, ``list_sets``, ``langs``.

    Raises:
        WeatkitError: a kind the plugin does not draw (naming those it does), ``x`` or
            ``embeddings`` (a run directory's), or the errors of the directory or the figure.
    """
    from weatkit.report.html.source import read_source

    if kind not in plugin.plots:
        raise WeatkitError(
            f"unknown plot kind {kind!r} for a weatkit {plugin.name} directory: choose one of "
            f"{', '.join(plugin.plots) or 'none (it has no figures)'}"
        )
    for flag, value in (("--x", x), ("--embeddings", embeddings)):
        if value:
            raise WeatkitError(f"{flag} is for run directories, not a weatkit {plugin.name} one")
    draw = load(plugin.plots[kind])
    return draw(read_source(path), tests=tests, list_sets=list_sets, langs=langs)
