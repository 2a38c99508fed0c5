"""weatkit.scoring: the one model-spec syntax and the backend registry (issue 25 §1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from weatkit.cli import main
from weatkit.errors import ConfigError
from weatkit.scoring import BACKENDS, ModelSpec, TokenLogprobs, get_scorer, parse_model_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpt2", ModelSpec("hf", "gpt2")),
        ("hf:gpt2", ModelSpec("hf", "gpt2")),
        ("org/model-1b", ModelSpec("hf", "org/model-1b")),
        ("./models/tiny", ModelSpec("hf", "./models/tiny")),
        ("C:\\models\\tiny", ModelSpec("hf", "C:\\models\\tiny")),
        ("vllm:meta-llama/Llama-3.1-8B", ModelSpec("vllm", "meta-llama/Llama-3.1-8B")),
        (
            "openai:http://127.0.0.1:8080/v1/#smollm2",
            ModelSpec("openai", "smollm2", "http://127.0.0.1:8080/v1"),
        ),
    ],
)
def test_specs_parse(text: str, expected: ModelSpec) -> None:
    assert parse_model_spec(text) == expected
    assert parse_model_spec(str(expected)) == expected  # str() round-trips


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "--model: empty model spec"),
        ("tgi:foo", "unknown backend 'tgi': choose from hf, vllm, openai"),
        ("hf:", "name a model after 'hf:'"),
        ("openai:127.0.0.1#m", "openai needs a base URL"),
        ("openai:http://127.0.0.1:8080/v1", "name the served model after '#'"),
        ("openai:https://user:key@api.example/v1#m", "no credentials in the URL"),
    ],
)
def test_bad_specs_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^--model") as info:
        parse_model_spec(text)
    assert message in str(info.value) and "\n" not in str(info.value)


@given(st.text(max_size=40))
def test_parsing_any_text_gives_a_spec_or_a_config_error(text: str) -> None:
    try:
        spec = parse_model_spec(text)
    except ConfigError:
        return
    assert spec.backend in BACKENDS and spec.model


def test_a_backend_whose_package_is_missing_names_its_extra() -> None:
    message = r"the vllm backend needs vllm: pip install 'weatkit\[vllm\]'"
    with pytest.raises(ConfigError, match=message):
        get_scorer("vllm:some/model")


def test_token_logprobs_sum_and_spans() -> None:
    import numpy as np

    scored = TokenLogprobs(
        "He is a nurse", ("He", " is", " a", " nurse"),
        ((0, 2), (2, 5), (5, 7), (7, 13)), np.array([np.nan, -1.5, -0.5, -4.0]),
    )  # fmt: skip
    assert scored.total() == -6.0
    assert scored.within(2, 13).tolist() == [False, True, True, True]
    with pytest.raises(ValueError, match="3 tokens, 4 offsets"):
        TokenLogprobs("x", ("a", "b", "c"), ((0, 1),) * 4, np.zeros(4))


SECRET = "sk-do-not-show"
URL = f"http://user:{SECRET}@127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"openai:{URL}#m", "--model 'openai:http://***@127.0.0.1:9/v1#m': no credentials in the "
         "URL; the API key comes from $WEATKIT_OPENAI_API_KEY or $OPENAI_API_KEY"),
        (f"openai:{URL}", "--model 'openai:http://***@127.0.0.1:9/v1': name the served model "
         "after '#' (openai:BASE_URL#MODEL)"),
        (f"{URL}#m", "--model 'http://***@127.0.0.1:9/v1#m': unknown backend 'http': choose from "
         "hf, vllm, openai, st (BACKEND:MODEL), or give a hub id or directory"),
    ],
)  # fmt: skip
def test_a_refused_spec_is_shown_without_its_credentials(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_model_spec(text)
    assert str(info.value) == message


def _files_holding(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.parametrize(
    "args",
    [
        ["crows", "--model", f"openai:{URL}#m", "--limit", "4"],
        ["crows", "--model", f"oops:{URL}#m", "--limit", "4"],
        ["run", "--lists", "weat", "--embeddings", f"x=openai:{URL}#m"],
        ["run", "--lists", "weat", "--embeddings", f"x={URL}/vectors.txt"],
        ["embed", "--lists", "weat", "--model", f"x=openai:{URL}#m", "--layer", "0"],
    ],
)
def test_no_secret_of_a_url_reaches_stderr_or_a_file(args: list[str], tmp_path: Path) -> None:
    """The secret of a URL's user part is in no error line, no output directory (manifest,
    tables, report) and no MLflow store, whatever command it was given to."""
    out = tmp_path / "out"
    extra = ["--out", str(out / "e.vec")] if args[0] == "embed" else ["--out", str(out)]
    if args[0] == "run":
        extra += ["--mlflow", f"sqlite:///{tmp_path / 'store' / 'mlflow.db'}"]
    res = CliRunner().invoke(main, [*args, *extra, "--no-progress"])
    assert res.exit_code == 1, res.output
    error = res.stderr.splitlines()[-1]
    assert error.startswith("weatkit: error: ") and "***@127.0.0.1:9" in error
    assert SECRET not in res.output
    assert not out.exists() and _files_holding(tmp_path, SECRET) == []


def test_model_takes_hf_models_only() -> None:
    res = CliRunner().invoke(
        main, ["run", "--lists", "weat", "--model", "openai:http://127.0.0.1:9/v1#m", "--layer",
               "0", "--no-progress"]
    )  # fmt: skip
    assert res.exit_code == 1
    assert res.stderr == (
        "weatkit: error: --model 'openai:http://127.0.0.1:9/v1#m': word vectors come from the "
        "layers of an hf: model, not a openai: one (an embeddings server is --embeddings "
        "NAME=openai:BASE_URL#MODEL)\n"
    )
