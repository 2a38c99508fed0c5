"""One configuration schema: grid files, compare files and the command line agree.

The same bad value gives the same message, naming the file's key or the flag; relative paths
are read from the file's folder; entries are counted from 1; ``layers: 0`` is layer 0; a YAML
key given twice is refused; library validators name fields, not flags.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from weatkit.ceat.options import DRAW_METHODS, CeatOptions
from weatkit.config import schema
from weatkit.config.files import model_location
from weatkit.config.run import run_config_from_cli, run_config_from_mapping
from weatkit.config.schema import Source
from weatkit.crossmethod.config import load_compare_config
from weatkit.embeddings.contextual_options import SUBWORD_POOLING, ContextualOptions
from weatkit.embeddings.coverage import EQUALIZE_MODES
from weatkit.engine.similarity import METRICS
from weatkit.engine.weat import ALTERNATIVES, CI_METHODS, EngineOptions
from weatkit.errors import ConfigError, WeatkitError
from weatkit.grid import load_grid_config
from weatkit.isomorphism.measures import CENTER_OVER, IsoOptions
from weatkit.pipeline import RunConfig
from weatkit.stats.sampling import SampleOptions

GRID = "languages: [en]\nembeddings: [{name: a, path: a.vec}]\n"
COMPARE = "output: o\nlanguages: [en]\nmodels: [{name: A, model: org/m}]\n"


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _grid_error(tmp_path: Path, text: str) -> str:
    path = _write(tmp_path, "exp.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_grid_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message.removeprefix(f"{path}: ")


def _compare_error(tmp_path: Path, text: str) -> str:
    path = _write(tmp_path, "cmp.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_compare_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message.removeprefix(f"{path}: ")


# --------------------------------------------------------------------------------------------
# the same bad value, the same message


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("engine", "{n_bootstrap: -1}", "engine.n_bootstrap: must be >= 0, got -1"),
        ("engine", "{seed: -1}", "engine.seed: must be >= 0, got -1"),
        ("engine", "{confidence_level: 1.5}", "engine.confidence_level: must be in (0, 1)"),
        ("engine", "{ci_method: bootstrap}", "engine.ci_method: must be one of percentile, bca"),
        ("engine", "{n_bootstrap: many}", "engine.n_bootstrap: expected int, got str 'many'"),
        ("min_coverage", "5", "min_coverage: must be between 0 and 1, got 5.0"),
        ("equalize", "bogus", "equalize: must be one of none, truncate, subsample, got 'bogus'"),
        ("lists", "[]", "lists: expected a non-empty list of names"),
    ],
)
def test_a_bad_run_value_reads_the_same_in_grid_and_compare_files(
    tmp_path: Path, key: str, value: str, problem: str
) -> None:
    grid = _grid_error(tmp_path / "g", f"{GRID}{key}: {value}\n")
    compare = _compare_error(tmp_path / "c", f"{COMPARE}weat: {{{key}: {value}}}\n")
    assert grid.startswith(problem)
    assert compare == f"weat.{grid}"  # the same problem, under the compare file's section


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{batch_size: 0}", "contextual.batch_size: must be a positive integer or auto, got 0"),
        ("{batch_size: big}", "contextual.batch_size: expected int or auto, got str 'big'"),
        ("{quantization: 3bit}", "contextual.quantization: unknown quantization '3bit'"),
        ("{device_map: everywhere}", "contextual.device_map: unknown device map 'everywhere'"),
        ("{max_memory: 0=1GiB}", "contextual.max_memory: needs a device map"),
        (
            "{device_map: auto, max_memory: 0=lots}",
            "contextual.max_memory: '0=lots': 'lots' is not a size such as 20GiB",
        ),
        (
            "{device_map: auto, device: cpu}",
            "contextual.device_map: places the layers itself over every GPU and the CPU",
        ),
        ("{subwords: max}", "contextual.subwords: unknown pooling 'max'"),
        ("{template: no slot}", "contextual.template: 'no slot' must contain exactly one '{}'"),
        ("{dtype: float8}", "contextual.dtype: unknown dtype 'float8'"),
        ("{colour: red}", "contextual: unknown option 'colour'"),
    ],
)
def test_contextual_options_read_the_same_in_both_files(
    tmp_path: Path, value: str, problem: str
) -> None:
    grid = _grid_error(tmp_path / "g", f"{GRID}contextual: {value}\n")
    compare = _compare_error(tmp_path / "c", f"{COMPARE}crows: {{}}\ncontextual: {value}\n")
    assert grid == compare
    assert grid.startswith(problem)


def test_a_grid_value_is_refused_when_the_file_is_read(tmp_path: Path) -> None:
    # before: min_coverage 5 and equalize bogus passed and failed in every job
    assert "min_coverage" in _grid_error(tmp_path, f"{GRID}min_coverage: 5\n")
    iso = _grid_error(tmp_path, f"{GRID}isomorphism: {{reference: en, energy: 2}}\n")
    assert iso == "isomorphism.energy: must be in (0, 1], got 2.0"  # was "--energy must be"


# --------------------------------------------------------------------------------------------
# paths, models, entries, layers


def test_relative_paths_are_read_from_the_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sub"
    _write(folder, "exp.yaml", f"{GRID}output: out\nlists: [weat, my.yaml]\n")
    _write(folder, "cmp.yaml", f"{COMPARE}weat: {{lists: [weat, my.yaml]}}\n")
    monkeypatch.chdir(tmp_path)
    grid = load_grid_config("sub/exp.yaml")
    compare = load_compare_config("sub/cmp.yaml")
    assert grid.output == compare.output.parent / "out" == folder / "out"
    assert compare.output == folder / "o" and compare.output.is_absolute()
    assert grid.run.lists == compare.weat.lists == ("weat", str(folder / "my.yaml"))
    assert grid.sources[0].spec.location == str(folder / "a.vec")
    # an output given on the command line is read from the current folder, in both
    assert load_grid_config("sub/exp.yaml", output="cli").output == Path("cli")
    assert load_compare_config("sub/cmp.yaml", output="cli").output == Path("cli")


@pytest.mark.parametrize(
    ("model", "local"),
    [("models/a", True), ("org/name", False), ("./missing", True), ("name", False)],
)
def test_a_model_path_is_recognised_the_same_way(tmp_path: Path, model: str, local: bool) -> None:
    (tmp_path / "models" / "a").mkdir(parents=True)
    expected = str(tmp_path / model) if local else model
    assert model_location(model, tmp_path, "at") == expected
    grid = load_grid_config(
        _write(
            tmp_path,
            "exp.yaml",
            f"languages: [en]\nembeddings: [{{name: M, model: {model}, layers: 0}}]\n",
        )
    )
    compare = load_compare_config(
        _write(
            tmp_path,
            "cmp.yaml",
            f"output: o\nlanguages: [en]\nmodels: [{{name: M, model: {model}}}]\ncrows: {{}}\n",
        )
    )
    assert grid.sources[0].spec.location == f"hf:{expected}"
    assert compare.models[0].model == expected


def test_entries_are_counted_from_one_in_every_message(tmp_path: Path) -> None:
    grid = _grid_error(
        tmp_path / "g",
        "languages: [en]\nembeddings:\n  - {name: a, path: a.vec}\n"
        "  - {name: m, model: x, layers: [top]}\n",
    )
    assert grid == "embeddings[2].layers: expected int, got str 'top'"
    compare = _compare_error(
        tmp_path / "c",
        "output: o\nlanguages: [en]\nmodels:\n  - {name: A, model: m}\n"
        "  - {name: B, model: m, kind: seq2seq}\ncrows: {}\n",
    )
    assert compare == "models[2].kind: choose mlm or glm, not 'seq2seq'"
    nested = _grid_error(
        tmp_path / "n",
        "languages: [en]\nembeddings:\n  - {name: a, path: a.vec}\n"
        "  - {name: m, model: x, layers: 0, contextual: {batch_size: 0}}\n",
    )
    assert nested.startswith("embeddings[2].contextual.batch_size: must be a positive integer")


def test_layers_zero_is_layer_zero_in_both_files(tmp_path: Path) -> None:
    grid = load_grid_config(
        _write(
            tmp_path, "exp.yaml", "languages: [en]\nembeddings: [{name: M, model: m, layers: 0}]\n"
        )
    )
    compare = load_compare_config(_write(tmp_path, "cmp.yaml", f"{COMPARE}weat: {{layers: 0}}\n"))
    assert grid.sources[0].spec.layers == compare.weat.layers == (0,)
    for text in ("layers: [0, 0]", "layers: []", "layers: true"):
        g = _grid_error(
            tmp_path / "g", f"languages: [en]\nembeddings: [{{name: M, model: m, {text}}}]\n"
        )
        c = _compare_error(tmp_path / "c", f"{COMPARE}weat: {{{text}}}\n")
        assert g.split(".layers: ")[1] == c.split(".layers: ")[1]


# --------------------------------------------------------------------------------------------
# duplicate keys


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        (f"{GRID}engine: {{seed: 1}}\nengine: {{seed: 2}}\n", 4, "engine"),
        (f"{GRID}engine:\n  seed: 1\n  n_bootstrap: 10\n  seed: 2\n", 6, "seed"),
        (f"{COMPARE}crows: {{}}\nlanguages: [de]\n", 5, "languages"),
    ],
)
def test_a_yaml_key_given_twice_is_refused(tmp_path: Path, text: str, line: int, key: str) -> None:
    for loader, name in ((load_grid_config, "exp.yaml"), (load_compare_config, "cmp.yaml")):
        path = _write(tmp_path, name, text)
        with pytest.raises(ConfigError) as info:
            loader(path)
        assert str(info.value).startswith(f"{path} line {line}: invalid YAML: key {key!r}")
        assert "given twice" in str(info.value)


def test_yaml_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    text = f"{GRID}engine:\n  <<: {{n_bootstrap: 10, seed: 1}}\n  seed: 2\n"
    config = load_grid_config(_write(tmp_path, "exp.yaml", text))
    assert (config.run.engine.n_bootstrap, config.run.engine.seed) == (10, 2)


def test_a_toml_key_given_twice_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "exp.toml", 'languages = ["en"]\nlanguages = ["de"]\n')
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_grid_config(path)


# --------------------------------------------------------------------------------------------
# library validators name fields; the schema names keys and flags


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: IsoOptions(energy=2.0).validate(), "energy"),
        (lambda: IsoOptions(n_words={"ev": 1}).validate(), "n_words"),
        (lambda: IsoOptions(center_over="none").validate(), "center_over"),
        (lambda: IsoOptions(gh_dims=(2,)).validate(), "gh_dims"),
        (lambda: ContextualOptions(batch_size=0).validate(), "batch_size"),
        (lambda: ContextualOptions(subwords="max").validate(), "subwords"),
        (lambda: ContextualOptions(template="x").validate(), "template"),
        (lambda: EngineOptions(n_bootstrap=-1).validate(), "n_bootstrap"),
        (lambda: EngineOptions(confidence_level=1.0).validate(), "confidence_level"),
        (lambda: RunConfig(min_coverage=5), "min_coverage"),
        (lambda: RunConfig(equalize="bogus"), "equalize"),
    ],
)
def test_library_validators_name_the_field_not_a_flag(build: Any, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert "--" not in str(info.value)


def test_defaults_and_choices_are_the_dataclasses_own() -> None:
    for section, cls in (
        (schema.ENGINE, EngineOptions),
        (schema.CONTEXTUAL, ContextualOptions),
        (schema.ISO, IsoOptions),
        (schema.LISTS, RunConfig),
        (schema.LOADING, RunConfig),
        (schema.POOLING, RunConfig),
        (schema.SAMPLE, SampleOptions),
        (schema.SECTIONS["CEAT"], CeatOptions),
    ):
        default = cls()
        names = {f.name for f in fields(cls)}
        for option in section.options:
            assert option.name in names, option.name
            assert option.default == getattr(default, option.name), option.name
    assert schema.ENGINE["metric"].choices == METRICS
    assert schema.ENGINE["alternative"].choices == ALTERNATIVES
    assert schema.SECTIONS["CEAT"]["draw_method"].choices == DRAW_METHODS
    assert schema.ENGINE["ci_method"].choices == CI_METHODS
    assert schema.LISTS["equalize"].choices == EQUALIZE_MODES
    assert schema.CONTEXTUAL["subwords"].choices == SUBWORD_POOLING
    assert schema.ISO["center_over"].choices == CENTER_OVER
    every_engine_field = {f.name for f in fields(EngineOptions)}
    assert {o.name for o in schema.ENGINE.options} == every_engine_field


# --------------------------------------------------------------------------------------------
# the command line from the same declarations


def _command() -> click.Command:
    """A ``run``-like command whose options are all generated from the declarations."""
    shared = ("device", "allow_pickle")  # declared once, by ENGINE and LOADING

    @click.command()
    @schema.click_options(schema.LISTS)
    @schema.click_options(schema.LOADING)
    @schema.click_options(schema.ENGINE)
    @schema.click_options(
        schema.CONTEXTUAL, only=[o.name for o in schema.CONTEXTUAL.options if o.name not in shared]
    )
    @schema.click_options(schema.ISO, prefix="iso-")
    @click.option("--isomorphism")
    @click.option("--iso-words")
    def command(**opts: Any) -> None:
        config = run_config_from_cli(opts, embeddings=("glove-6b-50d",))
        click.echo(repr(config))

    return command


def _cli_error(*args: str) -> str:
    result = CliRunner().invoke(_command(), list(args))
    assert result.exit_code == 1 and isinstance(result.exception, WeatkitError), result.output
    return str(result.exception)


@pytest.mark.parametrize(
    ("args", "key", "value"),
    [
        (["--bootstrap", "-1"], "engine.n_bootstrap", "-1"),
        (["--confidence", "1.5"], "engine.confidence_level", "1.5"),
        (["--ci", "bootstrap"], "engine.ci_method", "bootstrap"),
        (["--min-coverage", "5"], "min_coverage", "5"),
        (["--equalize", "bogus"], "equalize", "bogus"),
        (["--batch-size", "0"], "contextual.batch_size", "0"),
        (["--iso-energy", "2"], "isomorphism.energy", "2"),
    ],
)
def test_the_command_line_gives_the_files_message_with_the_flag(
    tmp_path: Path, args: list[str], key: str, value: str
) -> None:
    section, _, name = key.rpartition(".")
    text = f"{GRID}{section}: {{{name}: {value}}}\n" if section else f"{GRID}{name}: {value}\n"
    if section == "isomorphism":
        text = f"{GRID}isomorphism: {{reference: en, {name}: {value}}}\n"
    from_file = _grid_error(tmp_path, text)
    from_cli = _cli_error(*args)
    assert from_file.startswith(f"{key}: ")
    assert from_cli == f"{args[0]}: " + from_file.removeprefix(f"{key}: ")


def test_the_command_line_and_a_file_build_the_same_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        _command(),
        [
            *("--lists", "weat,x-weat", "--test", "weat1", "--bootstrap", "10", "--ci", "bca"),
            *("--equalize", "truncate", "--iso-measures", "ev", "--iso-n-words", "ev=50"),
            *("--isomorphism", "en", "--no-special-tokens", "--device", "cpu"),
        ],
    )
    assert result.exit_code == 0, result.output
    data = {
        "lists": ["weat", "x-weat"],
        "tests": ["weat1"],
        "equalize": "truncate",
        "engine": {"n_bootstrap": 10, "ci_method": "bca", "device": "cpu"},
        "contextual": {"special_tokens": False, "device": "cpu"},
        "isomorphism": {
            "reference": "en",
            "measures": ["ev"],
            "n_words": {**IsoOptions().n_words, "ev": 50},
            "device": "cpu",
        },
    }
    from_file = run_config_from_mapping(data, Source("f.yaml"), tmp_path)
    assert result.output.strip() == repr(from_file)


def test_generated_help_names_every_flag_once() -> None:
    text = CliRunner().invoke(_command(), ["--help"]).output
    for flag in ("--bootstrap", "--min-coverage", "--iso-energy", "--special-tokens", "--lang"):
        assert len(re.findall(rf"{flag}\b", text)) == 1, flag


# --------------------------------------------------------------------------------------------
# the real command line: ``weatkit run`` reads the same declarations


def _weatkit(*args: str) -> Any:
    from weatkit.cli import main

    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(
    ("args", "text", "key"),
    [
        (["--bootstrap", "-1"], "engine: {n_bootstrap: -1}", "engine.n_bootstrap"),
        (["--seed", "-1"], "engine: {seed: -1}", "engine.seed"),
        (["--confidence", "1.5"], "engine: {confidence_level: 1.5}", "engine.confidence_level"),
        (["--metric", "foo"], "engine: {metric: foo}", "engine.metric"),
        (["--ddof", "2"], "engine: {ddof: 2}", "engine.ddof"),
        (["--min-coverage", "5"], "min_coverage: 5", "min_coverage"),
        (["--equalize", "bogus"], "equalize: bogus", "equalize"),
        (["--batch-size", "0"], "contextual: {batch_size: 0}", "contextual.batch_size"),
        (["--subwords", "max"], "contextual: {subwords: max}", "contextual.subwords"),
        (["--iso-energy", "2"], "isomorphism: {reference: en, energy: 2}", "isomorphism.energy"),
        (
            ["--iso-gh-dims", "2"],
            "isomorphism: {reference: en, gh_dims: [2]}",
            "isomorphism.gh_dims",
        ),
    ],
)
def test_weatkit_run_and_a_grid_file_give_one_message(
    tmp_path: Path, args: list[str], text: str, key: str
) -> None:
    """The same bad value: the same problem, named by the flag on the command line and by the
    YAML key in a file; a one-line error with exit code 1 (not click's usage error, 2)."""
    from_file = _grid_error(tmp_path, f"{GRID}{text}\n")
    assert from_file.startswith(f"{key}: ")
    problem = from_file.removeprefix(f"{key}: ")
    result = _weatkit("run", "--lists", "weat", "--no-progress", *args)
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == f"weatkit: error: {args[0]}: {problem}"


@pytest.mark.parametrize("command", ["crows", "gest", "stereoset", "mbe"])
def test_a_negative_seed_of_a_sentence_command_is_refused_when_parsed(command: str) -> None:
    # like their --bootstrap; before, numpy's "expected non-negative integer" ended the run
    result = _weatkit(command, "--seed", "-1")
    assert result.exit_code == 2
    assert "Invalid value for '--seed': -1 is not in the range x>=0." in result.output


def test_weatkit_run_builds_the_run_a_file_describes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``weatkit run`` hands the library the same :class:`RunConfig` a grid file's keys give
    (the run itself is stopped: only the configuration is compared)."""
    seen: list[RunConfig] = []

    def stop(config: RunConfig, **_: Any) -> None:
        seen.append(config)
        raise WeatkitError("stopped before running")

    monkeypatch.setattr("weatkit.cli.run.run", stop)
    result = _weatkit(
        *("run", "--lists", "weat,x-weat", "--test", "weat1", "--bootstrap", "10", "--ci", "bca"),
        *("--equalize", "truncate", "--iso-measures", "ev", "--iso-n-words", "ev=50"),
        *("--isomorphism", "en", "--no-special-tokens", "--device", "cpu", "--compat", "wefe"),
        *("--batch-size", "8", "--no-cache", "--allow-pickle", "--no-progress"),
    )
    assert result.exit_code == 1 and "stopped before running" in result.stderr, result.output
    data = {
        "lists": ["weat", "x-weat"],
        "tests": ["weat1"],
        "equalize": "truncate",  # given: beats the preset's "none"
        "compat": "wefe",
        "allow_pickle": True,
        "engine": {"n_bootstrap": 10, "ci_method": "bca", "device": "cpu", "ddof": 0},
        "contextual": {
            "special_tokens": False,
            "device": "cpu",
            "batch_size": 8,
            "cache": False,
            "allow_pickle": True,
        },
        "isomorphism": {
            "reference": "en",
            "measures": ["ev"],
            "n_words": {**IsoOptions().n_words, "ev": 50},
            "device": "cpu",
        },
    }
    from_file = run_config_from_mapping(data, Source("f.yaml"), tmp_path)
    assert seen == [from_file]


def test_compat_presets_name_declared_fields() -> None:
    """``--compat`` presets set options by field name, which is each generated option's
    parameter name (so an explicit flag is recognised and wins)."""
    from weatkit.engine.compat import COMPAT_PRESETS

    sections = (schema.ENGINE, schema.LISTS, schema.CONTEXTUAL)
    flagged = {o.name for s in sections for o in s.options if o.flag}
    for preset in COMPAT_PRESETS.values():
        assert set(preset) <= flagged, set(preset) - flagged


def test_weatkit_run_help_lists_every_declared_flag_once() -> None:
    text = _weatkit("run", "--help").output
    sections = (schema.ENGINE, schema.LISTS, schema.LOADING, schema.POOLING)
    flags = [o.flag for s in sections for o in s.options]
    # every model option but vLLM's tensor parallelism: word vectors never come from vllm:
    flags += [o.flag for o in schema.CONTEXTUAL.options if o.name != "tensor_parallel"]
    flags += ["--iso-" + o.flag.removeprefix("--") for o in schema.ISO.options if o.flag]
    for flag in {f for f in flags if f is not None}:
        assert len(re.findall(rf"(?<![\w-]){flag}(?![\w-])", text)) == 1, flag
    assert "--tensor-parallel" not in text


#: Every list-valued option of the command line (kind names, ints or counts).
LIST_OPTIONS = [
    pytest.param(option, id=f"{section}.{option.name}")
    for section, declared in schema.SECTIONS.items()
    for option in declared.options
    if option.kind in ("names", "ints", "counts") and option.flag is not None
]


@pytest.mark.parametrize("option", LIST_OPTIONS)
@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_empty_list_value_is_an_error_naming_the_flag(option: schema.Option, value: str) -> None:
    """No list option takes an empty value (issue 37 §2): its default is had by leaving the
    option out, as a file's ``key: []`` is refused; ``""`` is never read as the default (which
    would run what was not asked: ``--metrics ""`` ran weat) nor as "none"."""
    parsed = value if option.kind == "ints" else (value,)  # how click passes each kind
    with pytest.raises(ConfigError) as err:
        option.from_cli(parsed, option.flag)
    assert str(err.value).startswith(option.flag)
