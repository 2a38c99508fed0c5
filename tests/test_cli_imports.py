"""``weatkit --help`` and ``weatkit lists`` stay light: they import no heavy library; ``weatkit
run`` on static vectors imports no transformers, plotting or Ray.

Each check runs in a fresh interpreter (``python -c``) that invokes the command line and then
looks at ``sys.modules``, so a module imported at the top of any module on the way fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.grid_fixtures import make_grid
from weatkit.cli import COMMANDS, main

#: Modules that ``--help`` and ``lists`` must not import.
HEAVY = ("torch", "transformers", "scipy", "scipy.stats", "pandas", "matplotlib", "sklearn")

#: Modules that ``run`` on static vectors must not import (they serve models, plots, clusters;
#: the statistics that need scipy.stats or statsmodels are options a plain run does not take).
NOT_FOR_STATIC_RUNS = (
    *("transformers", "tokenizers", "matplotlib", "ray", "sklearn", "gensim"),
    *("scipy.stats", "scipy.sparse", "statsmodels"),
)

_PROBE = """
import json, sys
from weatkit.cli import main
try:
    main({args!r}, prog_name="weatkit")
except SystemExit as exit:
    code = exit.code
else:
    code = 0
print(json.dumps({{"code": code, "heavy": sorted(m for m in {heavy!r} if m in sys.modules)}}),
      file=sys.stderr)
"""


def _probe(args: list[str], heavy: tuple[str, ...] = HEAVY) -> dict[str, object]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(args=args, heavy=heavy)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args",
    [["--help"], ["lists"], ["lists", "ca-weat"], ["--version"], ["cache", "info"]],
    ids=" ".join,
)
def test_light_commands_import_no_heavy_library(args: list[str]) -> None:
    outcome = _probe(args)
    assert outcome["code"] in (0, None)
    assert outcome["heavy"] == []


def test_a_static_vector_run_imports_no_model_plot_or_cluster_library(tmp_path: Path) -> None:
    make_grid(tmp_path)
    vectors = f"mono={tmp_path / 'mono.{lang}.vec'}"
    args = ["run", "--lists", "x-weat,ca-weat", "--lang", "en,de", "--embeddings", vectors]
    args += ["--bootstrap", "10", "--permutations", "10", "--no-progress"]
    outcome = _probe([*args, "--out", str(tmp_path / "out")], NOT_FOR_STATIC_RUNS)
    assert outcome == {"code": 0, "heavy": []}
    assert (tmp_path / "out" / "results.csv").is_file()


def test_a_heavy_import_would_be_seen() -> None:
    """The probe does see heavy modules: ``run --help`` loads the engine (torch, pandas)."""
    outcome = _probe(["run", "--help"])
    assert outcome["code"] in (0, None)
    assert "torch" in outcome["heavy"] and "pandas" in outcome["heavy"]


@pytest.mark.slow
def test_the_listing_shows_each_commands_own_help() -> None:
    """The one-line help strings of :data:`COMMANDS` are the commands' own (imports them all)."""
    ctx = click.Context(main)
    for name, (target, short) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name, target
        assert command.get_short_help_str(limit=10**6) == short, name
    assert main.list_commands(ctx) == sorted(COMMANDS)
    assert main.get_command(ctx, "nope") is None


def test_python_dash_m_and_the_entry_point_run_the_same_group() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "weatkit", "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    for name in COMMANDS:
        assert f"\n  {name} " in proc.stdout


def test_influence_null_and_pool_import_no_scipy_stats() -> None:
    # the null's frequency source (weatkit.asymmetry) imports scipy.stats only for its own
    # regression, and the pooling is computed with scipy.special: 0.6-0.7 s of start-up each
    args = ["run", "--lists", "weat", "--test", "weat1,weat2", "--bootstrap", "10"]
    args += ["--permutations", "10", "--influence", "--null", "20", "--pool", "lists"]
    args += ["--no-progress"]
    outcome = _probe(args, ("scipy.stats", "statsmodels"))
    assert outcome == {"code": 0, "heavy": []}
