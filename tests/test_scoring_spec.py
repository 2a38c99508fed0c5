"""weatkit.scoring: the one model-spec syntax and the backend registry (issue 25 §1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
