"""The ``weatkit`` command line: one module per command, imported only when it is invoked.

:data:`COMMANDS` maps each command to the ``module:attribute`` of its click command and to the
one-line help ``weatkit --help`` lists, so that listing the commands imports none of them (and
so neither torch, transformers, scipy, pandas nor matplotlib: ``tests/test_cli_imports.py``).
Shared options are declared once in :mod:`weatkit.cli.options`; the terminal tables are in
:mod:`weatkit.cli.tables`; the one-line errors and notes in :mod:`weatkit.cli.errors`.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
from typing import NoReturn

import click

import weatkit
from weatkit.measures.plugins import commands as plugin_commands
from weatkit.models.provenance import COMMAND

#: Command name -> (``module:attribute`` of the click command, one-line help for the listing).
COMMANDS: dict[str, tuple[str, str]] = {
    "align": (
        "weatkit.cli.align:align_command",
        "Align a space onto another with orthogonal Procrustes on a bilingual dictionary.",
    ),
    "asymmetry": (
        "weatkit.cli.asymmetry:asymmetry_command",
        "Relate effect sizes to the asymmetry of pleasant/unpleasant attribute counts.",
    ),
    "cache": (
        "weatkit.cli.cache:cache_command",
        "Show or clear weatkit's caches (downloaded data, contextual vectors, model scores).",
    ),
    "compare": (
        "weatkit.cli.compare:compare_command",
        "Compute WEAT/CA-WEAT, GEST, StereoSet, CrowS-Pairs and MBE for the models in CONFIG.",
    ),
    "embed": (
        "weatkit.cli.embed:embed_command",
        "Encode list items with a transformer model and write them as .vec files.",
    ),
    "export": (
        "weatkit.cli.export:export_command",
        "Export a table of RUN_DIR (written by weatkit run --out) as CSV, JSON, Parquet, "
        "Markdown or LaTeX (one booktabs table per list set and test, as in the CA-WEAT paper).",
    ),
    "grid": (
        "weatkit.cli.grid:grid_command",
        "Run the experiment in EXPERIMENT (.yaml or .toml): one job per embeddings × language.",
    ),
    "iso": (
        "weatkit.cli.iso:iso_command",
        "Measure how far two embedding spaces are from isomorphic (EV, GH, GW).",
    ),
    "lists": (
        "weatkit.cli.lists:lists_command",
        "Show the list sets, or the languages, lists and tests of one set (or list file).",
    ),
    "plot": (
        "weatkit.cli.plot:plot_command",
        "Plot RUN_DIR: forest, scatter, heatmap, influence or null.",
    ),
    "report": (
        "weatkit.cli.report:report_command",
        "Write an HTML report of RUN_DIR (weatkit run --out, weatkit grid, weatkit compare, "
        "or weatkit gest|crows|stereoset|mbe --out).",
    ),
    "run": (
        "weatkit.cli.run:run_command",
        "Run association tests and print or write the results.",
    ),
    "train": (
        "weatkit.cli.train:train_command",
        "Train fastText embeddings on per-language corpora, as the CA-WEAT paper's CCe models.",
    ),
}


COMMANDS.update(plugin_commands())  # each measure package's own command


class LazyGroup(click.Group):
    """A click group whose commands are imported from :data:`COMMANDS` on first use."""

    def __init__(self, *args: object, lazy: dict[str, tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module_name, _, attribute = self.lazy[cmd_name][0].partition(":")
            command = getattr(importlib.import_module(module_name), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command listing from the table's help strings: no command is imported."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in self.lazy:
                help_text = click.Command(name, help=self.lazy[name][1]).get_short_help_str(limit)
            else:
                help_text = self.commands[name].get_short_help_str(limit)
            rows.append((name, help_text))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(weatkit.__version__, prog_name="weatkit")
@click.pass_context
def main(ctx: click.Context) -> None:
    """weatkit: social biases of word and sentence representations across languages
    (WEAT, X-WEAT, CA-WEAT; GEST, StereoSet, CrowS-Pairs, MBE)."""
    # the cache records which command wrote an entry (weatkit.models.provenance)
    token = COMMAND.set(f"weatkit {ctx.invoked_subcommand}")
    ctx.call_on_close(lambda: COMMAND.reset(token))


def entry() -> NoReturn:
    """The ``weatkit`` command (console script, ``python -m weatkit``): :func:`main`, then the
    process ends once the ``atexit`` functions have run and stdout and stderr are flushed.

    What is skipped is the interpreter's teardown (every module, torch's C++ state), about half a
    second of CPU for a run with torch loaded, freeing only memory the operating system takes
    back anyway. The exit status is the one ``sys.exit`` gives; with another thread still
    running, the process ends the ordinary way (which waits for it).
    """
    try:
        main()
        code: object = 0
    except SystemExit as exit:
        code = exit.code
    if threading.active_count() > 1:
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # as sys.exit("message") does
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe takes nothing more
            stream.flush()
    os._exit(status)
