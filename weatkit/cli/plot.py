"""``weatkit plot``: figures of a run directory (forest, scatter, heatmap, influence, null, and
the association metrics' ripa, rnd, direct_bias, mac, sc_weat, rnsb, ect), or of a measure
plugin's directory (the kinds its plugin declares, :mod:`weatkit.measures.plugins`).

It reads what ``weatkit run --out DIR`` (or ``weatkit grid``) wrote; from Python the same is
:func:`weatkit.report.run_dir.read_run_dir`, :func:`weatkit.report.plots.plot` and
:func:`weatkit.report.figures.save_figure`. A directory whose manifest names a plugin's command
(:func:`weatkit.report.html.source.measure_plugin`) is drawn by
:func:`weatkit.report.plots.plugin_figure`.
"""

from __future__ import annotations

from typing import Any

import click
from matplotlib.figure import Figure

from weatkit._io.paths import check_not_input, check_writable
from weatkit.cli.errors import err_console, friendly
from weatkit.cli.options import filter_options, filters, out_option
from weatkit.errors import WeatkitError
from weatkit.measures.plugins import plugins
from weatkit.report.association_plot import ASSOCIATION_PLOTS
from weatkit.report.figures import figure_format, save_figure
from weatkit.report.html.source import measure_plugin, peek_manifest
from weatkit.report.plots import PLOT_KINDS, plot, plugin_figure
from weatkit.report.run_dir import read_run_dir

#: The kinds of the measure plugins' directories, for the help: ``NAME: KIND, KIND; ...``.
_PLUGIN_KINDS = "; ".join(f"{p.name}: {', '.join(p.plots)}" for p in plugins() if p.plots)


@click.command("plot")
@click.argument("run_dir")
@click.option(
    "--kind",
    required=True,
    help=f"Which figure: {', '.join((*PLOT_KINDS, 'influence', 'null', *ASSOCIATION_PLOTS))}; "
    f"of a measure's directory ({_PLUGIN_KINDS}).",
)
@out_option("Figure file: .png, .pdf or .svg.", dest="out_path", file=True, required=True)
@click.option(
    "--x",
    "x",
    help="Scatter x axis: iso_ev, iso_gh, ... (a run with --isomorphism) or count_difference "
    "(asymmetry.csv) [default: iso_gh].",
)
@filter_options
@click.option("--dpi", type=float, default=150, show_default=True, help="Resolution (PNG).")
@friendly
def plot_command(**opts: Any) -> None:
    """Plot RUN_DIR: forest, scatter, heatmap, influence or null.

    forest: effect sizes with CIs per language and embeddings; scatter: effect size against an
    isomorphism measure (points labelled with their language) or a count difference, with a
    least-squares line and its R² per embeddings; heatmap: effect sizes; influence: each
    item's delta = d without it − d (weatkit run --influence); null: histogram of the null d
    with the observed d (weatkit run --null K); ripa, rnd, direct_bias, mac: each word's value
    as bars, sc_weat: each target word's effect size with its CI, rnsb: the distribution over
    the target sets against the uniform, ect: each attribute word's cos(m_X, a) against
    cos(m_Y, a) with Spearman's rho and p (weatkit run --metrics). A measure's directory
    (written by its command with --out) has its own kinds, on its page of the documentation."""
    figure_format(opts["out_path"])  # a bad suffix or output fails before any work
    check_writable(opts["out_path"])
    check_not_input([opts["out_path"]], read_dirs=[opts["run_dir"]])
    plugin = measure_plugin(peek_manifest(opts["run_dir"]))
    if plugin is not None:
        fig = plugin_figure(plugin, opts["run_dir"], opts["kind"], x=opts["x"], **filters(opts))
    else:
        fig = _run_figure(opts)
    written = save_figure(fig, opts["out_path"], dpi=opts["dpi"])
    err_console.print(f"wrote {written}", highlight=False, soft_wrap=True)


def _run_figure(opts: dict[str, Any]) -> Figure:
    """The figure ``--kind`` of a run directory."""
    tables = read_run_dir(opts["run_dir"])
    if opts["kind"] == "influence":  # weatkit.report.influence_plot (weatkit run --influence)
        from weatkit.report.influence_plot import influence_plot

        if opts["x"] is not None:
            raise WeatkitError("--x is for --kind scatter, not influence")
        fig = influence_plot(tables, **filters(opts))
    elif opts["kind"] == "null":  # weatkit.report.null_plot (weatkit run --null K)
        from weatkit.report.null_plot import null_plot

        if opts["x"] is not None:
            raise WeatkitError("--x is for --kind scatter, not null")
        fig = null_plot(tables, **filters(opts))
    else:
        fig = plot(tables, opts["kind"], x=opts["x"], **filters(opts))
    return fig
