"""How an ``openai:`` model's server is asked, from the command line and from files (issue 25):
``--api-timeout``, ``--api-max-retries`` and ``--api-concurrency`` (``timeout``, ``max_retries``
and ``concurrency`` under ``contextual:``) reach the scorer of every command that takes
``--model`` or ``--embeddings``; bad values are one line naming the flag or the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("openai", reason="the openai backend needs the openai extra")

from tests.grid_fixtures import make_grid
from tests.llama_server import ALIAS
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import ConfigError, ModelError
from weatkit.grid import load_grid_config
from weatkit.scoring import get_scorer
from weatkit.scoring.options import OpenAIOptions

LISTS = {
    "tests": [
        {
            "test": "weat1", "lang": "en", "list_id": "mine",
            "X": ["rose", "tulip"], "Y": ["ant", "wasp"],
            "A": ["love", "peace"], "B": ["hatred", "war"],
        }
    ]
}  # fmt: skip
FLAGS = ["--api-timeout", "7.5", "--api-max-retries", "5", "--api-concurrency", "3"]
GIVEN = OpenAIOptions(timeout=7.5, max_retries=5, concurrency=3)


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _lists(tmp_path: Path) -> str:
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(LISTS))
    return str(path)


def _one_line_error(result: Any) -> str:
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("weatkit: error: ")]
    assert len(lines) == 1, result.output
    return lines[0].removeprefix("weatkit: error: ")


def test_a_commands_options_ask_the_server() -> None:
    """A command's ContextualOptions are the scorer's options (they failed with an
    AttributeError on ``timeout`` before)."""
    with pytest.raises(ModelError) as err:
        get_scorer("openai:http://127.0.0.1:9/v1#m", ContextualOptions(max_retries=0))
    assert "cannot connect to http://127.0.0.1:9/v1 (after 0 retries)" in str(err.value)
    assert OpenAIOptions.of(ContextualOptions(timeout=2.5, concurrency=9, batch_size="auto")) == (
        OpenAIOptions(timeout=2.5, concurrency=9)  # a model's batch size is not the server's
    )
    assert OpenAIOptions.of(None) == OpenAIOptions() and OpenAIOptions.of(GIVEN) is GIVEN


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[OpenAIOptions]:
    """The server options each openai scorer is made with (the scorer then fails in one line,
    before any request)."""
    import weatkit.scoring.openai

    made: list[OpenAIOptions] = []

    def make_scorer(spec: Any, options: Any = None) -> Any:
        made.append(OpenAIOptions.of(options))
        raise ModelError(f"{spec}: stub server")

    monkeypatch.setattr(weatkit.scoring.openai, "make_scorer", make_scorer)
    return made


SPEC = "openai:http://127.0.0.1:9/v1#m"


@pytest.mark.parametrize(
    "command",
    [
        ["crows", "--model", SPEC, "--method", "sum", "--limit", "2"],
        ["mbe", "--model", SPEC, "--method", "mean-ll", "--mbe-set", "ja", "--corpus", "ted"],
        ["run", "--embeddings", f"S={SPEC}", "--bootstrap", "0", "--permutations", "0"],
        ["iso", "--src", f"S={SPEC}", "--tgt", "glove-6b-50d"],
    ],
    ids=["crows", "mbe", "run", "iso"],
)
def test_the_flags_reach_the_scorer_of_every_command(
    command: list[str], seen: list[OpenAIOptions], tmp_path: Path, data_dir: Path
) -> None:
    if command[0] == "run":
        command = [*command, "--lists", _lists(tmp_path)]
    if command[0] == "iso":
        (tmp_path / "words.txt").write_text("rose\ntulip\nant\n")
        command = [*command, "--src-words", str(tmp_path / "words.txt")]
    assert _one_line_error(_invoke(*command, *FLAGS)) == f"{SPEC}: stub server"
    assert seen == [GIVEN]


def test_a_grid_files_options_reach_the_scorer(seen: list[OpenAIOptions], tmp_path: Path) -> None:
    path = make_grid(
        tmp_path,
        embeddings=[{"name": "S", "model": SPEC, "contextual": {"concurrency": 3}}],
        contextual={"timeout": 7.5, "max_retries": 5},
        engine={"n_bootstrap": 0, "n_permutations": 0},
    )
    (source,) = load_grid_config(path).sources
    assert (source.name, source.spec.location, source.spec.layer) == ("S", SPEC, None)
    result = _invoke("grid", str(path), "--fail-fast")
    assert "stub server" in result.output and result.exit_code == 1
    assert seen == [GIVEN]


@pytest.mark.parametrize(
    ("flag", "value", "key", "problem"),
    [
        ("--api-timeout", "0", "timeout", "must be a positive number of seconds, got 0.0"),
        ("--api-timeout", "-2", "timeout", "must be a positive number of seconds, got -2.0"),
        ("--api-max-retries", "-1", "max_retries", "must be >= 0, got -1"),
        ("--api-concurrency", "0", "concurrency", "must be >= 1, got 0"),
    ],
)
def test_bad_values_are_one_line_naming_the_flag_or_the_key(
    flag: str, value: str, key: str, problem: str, tmp_path: Path
) -> None:
    for command in (["crows", "--model", SPEC], ["run", "--lists", _lists(tmp_path)]):
        assert _one_line_error(_invoke(*command, flag, value)) == f"{flag}: {problem}"
    grid = make_grid(tmp_path, contextual={key: float(value) if key == "timeout" else int(value)})
    with pytest.raises(ConfigError) as err:
        load_grid_config(grid)
    assert str(err.value) == f"{grid}: contextual.{key}: {problem}"


def test_a_grid_entry_for_an_embeddings_api(tmp_path: Path) -> None:
    """An embeddings API is a ``model`` entry without layers; its URL is not read as a path."""
    for entry, message in (
        ({"name": "S", "model": SPEC, "layers": [0]}, "embeddings[1].layers: an openai: "
         "model gives one vector per text, it has no layers"),
        ({"name": "S", "path": SPEC}, f"embeddings[1].path: an openai: spec is a model: "
         f"model: {SPEC}"),
        ({"name": "S", "model": "openai:http://127.0.0.1:9/v1"}, "embeddings[1].model "
         "'openai:http://127.0.0.1:9/v1': name the served model after '#'"),
    ):  # fmt: skip
        path = make_grid(tmp_path, embeddings=[entry])
        with pytest.raises(ConfigError) as err:
            load_grid_config(path)
        assert str(err.value).startswith(f"{path}: {message}"), str(err.value)


def test_a_timeout_against_the_real_server_is_one_line(llama_server: str, tmp_path: Path) -> None:
    """0.001 s is too short for any answer of llama.cpp's server: the run stops at once, in one
    line naming the spec, the timeout and the retries given, and writes nothing."""
    spec = f"openai:{llama_server}#{ALIAS}"
    expected = (
        f"{spec}: no answer within the 0.001 s timeout (after 0 retries); raise the timeout "
        "or lower the concurrency"
    )
    fast = ["--api-timeout", "0.001", "--api-max-retries", "0"]
    run = _invoke(
        "run", "--lists", _lists(tmp_path), "--embeddings", f"S={spec}", *fast,
        "--bootstrap", "0", "--permutations", "0", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert _one_line_error(run) == expected
    assert not (tmp_path / "out").exists()
    crows = _invoke("crows", "--model", spec, "--method", "sum", "--limit", "2", *fast)
    assert _one_line_error(crows) == expected
