"""The openai backend's failures against real local sockets (issue 25 §6, §8): nothing listening,
a server that accepts and never answers, and small real HTTP servers answering 500, 429 or 401
(counting requests, so the SDK's retries are seen happening). No llama.cpp needed."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import socket
import threading
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner

import weatkit.progress as progress_module
from weatkit.cli import main

pytest.importorskip("openai", reason="the openai backend needs the openai extra")

from weatkit.errors import ConfigError, ModelError
from weatkit.scoring import get_scorer
from weatkit.scoring.openai import OpenAIOptions

MODELS = {"object": "list", "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "x"}]}


#: ``answer(request body) -> (status, raw body)`` of a stub's POST (:func:`_http_server`).
Answer = Callable[[dict], tuple[int, bytes]]


@contextlib.contextmanager
def _http_server(
    status: int,
    *,
    models_status: int = 200,
    models: dict | bytes = MODELS,
    answer: Answer | None = None,
) -> Iterator[tuple[str, dict]]:
    """A real HTTP server on 127.0.0.1 listing model ``m`` (or answering ``models_status``;
    ``models`` as raw bytes: that body) and answering every POST with ``status`` and
    ``Retry-After: 0`` (``answer``: with what it returns for the request's JSON); yields its
    base URL and a dict counting requests by method and recording the Authorization headers and
    the POSTs' JSON bodies."""
    seen: dict = {"GET": 0, "POST": 0, "auth": [], "posted": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, code: int, body: dict | bytes) -> None:
            seen["auth"].append(self.headers.get("Authorization"))
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            seen["GET"] += 1
            ok = models_status == 200
            self._answer(models_status, models if ok else {"error": {"message": "no entry"}})

        def do_POST(self) -> None:
            seen["POST"] += 1
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            seen["posted"].append(request)
            if answer is not None:
                self._answer(*answer(request))
            else:
                self._answer(status, {"error": {"message": f"stub answer {status}"}})

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def _silent_server() -> Iterator[tuple[str, list]]:
    """A socket on 127.0.0.1 that accepts connections and never answers; yields its base URL
    and the list of accepted connections."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in accepted:
            conn.close()
        listener.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_down_is_one_line_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(ModelError) as err:
        get_scorer(f"openai:{url}#m", OpenAIOptions(max_retries=0))
    assert str(err.value).startswith(f"openai:{url}#m: cannot connect to {url} (after 0 retries):")
    assert "refused" in str(err.value)
    assert str(err.value).endswith("; is the server running?")
    assert "\n" not in str(err.value)


def test_timeout_is_retried_then_one_line() -> None:
    with _silent_server() as (url, accepted):
        with pytest.raises(ModelError) as err:
            get_scorer(f"openai:{url}#m", OpenAIOptions(timeout=0.3, max_retries=1))
        assert len(accepted) == 2  # the request and one retry
    assert str(err.value) == (
        f"openai:{url}#m: no answer within the 0.3 s timeout (after 1 retry); "
        "raise the timeout or lower the concurrency"
    )


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "server error (500) after 1 retry: stub answer 500"),
        (503, "server error (503) after 1 retry: stub answer 503"),
        (429, "rate limited (429) after 1 retry: stub answer 429; "
              "lower the concurrency or raise max_retries"),
    ],
)
def test_5xx_and_429_are_retried_then_one_line(status: int, message: str) -> None:
    with _http_server(status) as (url, seen):
        scorer = get_scorer(f"openai:{url}#m", OpenAIOptions(max_retries=1))
        with pytest.raises(ModelError) as err:
            scorer.causal_logprobs(["a text"])
        assert seen["POST"] == 2
        with pytest.raises(ModelError):
            scorer.embed(["a text"])
        assert seen["POST"] == 4
    assert str(err.value) == f"openai:{url}#m: {message}"


def test_no_start_is_refused_before_any_request() -> None:
    """A server encodes a text prompt with its model's special tokens: ``start="none"`` is one
    line, and nothing is sent."""
    with _http_server(500) as (url, seen):
        scorer = get_scorer(f"openai:{url}#m", OpenAIOptions(max_retries=0))
        with pytest.raises(ModelError) as err:
            scorer.causal_logprobs(["a text"], start="none")
        assert seen["POST"] == 0
    assert str(err.value) == (
        f"openai:{url}#m: an OpenAI-compatible server cannot score a text without its start "
        "token (start 'none': the completions API encodes a text prompt with the model's "
        "special tokens); use an hf: or vllm: model"
    )


def test_a_model_the_server_does_not_list_is_refused_before_scoring() -> None:
    with _http_server(500) as (url, seen):
        with pytest.raises(ModelError) as err:
            get_scorer(f"openai:{url}#other", OpenAIOptions(max_retries=0))
        assert seen["POST"] == 0
    assert str(err.value) == (
        f"openai:{url}#other: the server does not serve model 'other' (it serves: m)"
    )


def test_rejected_key_is_one_line_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEATKIT_OPENAI_API_KEY", "sk-weatkit-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-secret")
    with _http_server(401, models_status=401) as (url, seen):
        with pytest.raises(ModelError) as err:
            get_scorer(f"openai:{url}#m", OpenAIOptions(max_retries=3))
        assert seen["GET"] == 1  # a 401 is not retried
        assert seen["auth"] == ["Bearer sk-weatkit-secret"]  # WEATKIT_ first
    assert str(err.value) == (
        f"openai:{url}#m: the server refused the API key (401): set "
        "$WEATKIT_OPENAI_API_KEY or $OPENAI_API_KEY"
    )


@pytest.mark.parametrize(
    ("env", "sent"),
    [({"OPENAI_API_KEY": "sk-openai"}, "Bearer sk-openai"), ({}, "Bearer EMPTY")],
)
def test_key_falls_back_to_openai_api_key_then_a_placeholder(
    monkeypatch: pytest.MonkeyPatch, env: dict, sent: str
) -> None:
    monkeypatch.delenv("WEATKIT_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with _http_server(200) as (url, seen):
        get_scorer(f"openai:{url}#m")
    assert seen["auth"] == [sent]


def _vllm_models(root: str, permission_id: str) -> dict:
    entry = {"id": "m", "object": "model", "created": 1, "owned_by": "vllm", "root": root,
             "max_model_len": 2048, "permission": [{"id": permission_id, "created": 2}]}
    return {"object": "list", "data": [entry]}


def test_identity_hashes_what_the_server_says_of_the_model_except_names_and_dates() -> None:
    identities = []
    for root, permission in [("/m/a", "perm-1"), ("/m/a", "perm-2"), ("/m/b", "perm-1")]:
        with _http_server(200, models=_vllm_models(root, permission)) as (url, _):
            identities.append(get_scorer(f"openai:{url}#m").identity.removeprefix(f"openai:{url}"))
    assert identities[0] == identities[1] != identities[2]
    assert identities[0].startswith("#m@") and len(identities[0]) == len("#m@") + 12


def test_no_models_endpoint_trusts_the_spec() -> None:
    with _http_server(500, models_status=404) as (url, _):
        scorer = get_scorer(f"openai:{url}#m", OpenAIOptions(max_retries=0))
    assert scorer.identity == f"openai:{url}#m"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (OpenAIOptions(timeout=0), "timeout: must be a positive number of seconds, got 0"),
        (OpenAIOptions(max_retries=-1), "max_retries: must be >= 0, got -1"),
        (OpenAIOptions(concurrency=0), "concurrency: must be >= 1, got 0"),
        (OpenAIOptions(batch_size=0), "batch_size: must be >= 1, got 0"),
    ],
)
def test_bad_options_name_the_field(options: OpenAIOptions, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        get_scorer("openai:http://127.0.0.1:9/v1#m", options)
    assert str(err.value) == message


MALFORMED = b'{"object": "list", "data": ['  # an answer cut off


#: Where a server's answer is read, and the endpoint a message names.
ENDPOINTS = [("models", "GET /models"), ("completions", "POST /completions"),
             ("embeddings", "POST /embeddings")]  # fmt: skip


def _error_of_answer(where: str, body: bytes) -> tuple[str, str]:
    """The base URL of a stub answering ``body`` at ``where`` (the others answer as a server
    does) and the one-line error of a scorer reading it."""
    models = body if where == "models" else MODELS
    stub = _http_server(200, models=models, answer=lambda _: (200, body))
    with stub as (url, _), pytest.raises(ModelError) as err:
        scorer = get_scorer(f"openai:{url}#m", OpenAIOptions(max_retries=0))
        if where == "completions":
            scorer.causal_logprobs(["a text"])
        scorer.embed(["a text"])
    return url, str(err.value)


@pytest.mark.parametrize(("where", "endpoint"), ENDPOINTS)
def test_malformed_json_is_one_line_naming_the_server_and_the_endpoint(
    where: str, endpoint: str
) -> None:
    url, message = _error_of_answer(where, MALFORMED)
    method, path = endpoint.split()
    assert message == (
        f"openai:{url}#m: {method} {url}{path} answered malformed JSON (Expecting value: line 1 "
        "column 29 (char 28)); is it an OpenAI-compatible server?"
    )


def test_the_first_definitive_failure_ends_the_call() -> None:
    """6 texts against a server answering 500: the first request and its retry, then nothing
    (12 requests were sent before: every text, each retried)."""
    with _http_server(500) as (url, seen):
        options = OpenAIOptions(max_retries=1, concurrency=1, batch_size=1)
        scorer = get_scorer(f"openai:{url}#m", options)
        with pytest.raises(ModelError, match=r"server error \(500\) after 1 retry"):
            scorer.embed([f"text {i}" for i in range(6)])
        assert seen["POST"] == 2
        assert [r["input"] for r in seen["posted"]] == [["text 0"], ["text 0"]]


def test_batch_size_auto_is_refused_before_any_request() -> None:
    with _http_server(200) as (url, seen):
        res = CliRunner().invoke(
            main, ["crows", "--model", f"openai:{url}#m", "--batch-size", "auto", "--method", "sum",
                   "--limit", "4", "--no-progress"],
        )  # fmt: skip
        assert seen["GET"] == seen["POST"] == 0
    assert res.exit_code == 1
    assert res.stderr.splitlines()[-1] == (
        "weatkit: error: --batch-size auto is for hf: models (the largest forward pass that fits "
        "in memory); an openai: server batches the requests it is sent itself: --api-concurrency "
        "sets how many are in flight"
    )


def _echo(request: dict) -> tuple[int, bytes]:
    """A causal LM's answer to ``/v1/completions`` (one character a token, each −1 nat given the
    ones before it, the first ``null``; ``!`` generated), which the probe accepts."""
    prompt = request["prompt"]
    if request["echo"]:
        tokens, offsets = [*prompt, "!"], list(range(len(prompt) + 1))
        values = [None] + [-1.0] * len(prompt)
    else:
        tokens, offsets, values = ["!"], [len(prompt)], [-1.0]
    logprobs = {"tokens": tokens, "text_offset": offsets, "token_logprobs": values,
                "top_logprobs": None}  # fmt: skip
    choice = {"index": 0, "text": "!", "finish_reason": "length", "logprobs": logprobs}
    body = {"id": "c", "object": "text_completion", "created": 0, "model": "m",
            "choices": [choice]}  # fmt: skip
    return 200, json.dumps(body).encode()


def test_a_server_scoring_shows_its_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress_module, "LOG_EVERY_S", 0.0)  # a line at every answer
    texts = ["one", "two", "three", "four", "five"]
    with _http_server(200, answer=_echo) as (url, seen):
        scored = get_scorer(f"openai:{url}#m").causal_logprobs(texts)
    assert seen["POST"] == 3 + len(texts)  # the probe's three, then one per text
    assert [s.total() for s in scored] == [-(len(t) - 1) for t in texts]
    lines = capsys.readouterr().err.splitlines()
    done = [re.match(r"token log-probabilities with m: (\d)/5 texts \(\d+%\), \d+s elapsed", line)
            for line in lines]  # fmt: skip
    assert all(done) and [int(m[1]) for m in done] == [1, 2, 3, 4, 5], lines


@pytest.mark.parametrize("body", [b"{}", b"[]", b"null", b'{"data": [{"index": 0}]}'])
@pytest.mark.parametrize(("where", "endpoint"), ENDPOINTS)
def test_json_of_another_shape_is_one_line_naming_the_server_and_the_endpoint(
    where: str, endpoint: str, body: bytes
) -> None:
    """Valid JSON that is not an OpenAI answer (``{}``, ``[]``, ``null``, an entry without its
    fields) ended in an internal AttributeError or TypeError."""
    url, message = _error_of_answer(where, body)
    method, path = endpoint.split()
    if (where, body) == ("models", b"{}"):  # read by the SDK as a list of no models
        assert message == f"openai:{url}#m: the server does not serve model 'm' (it serves: none)"
    elif where == "completions" and body.startswith(b"{"):  # read as choices without logprobs
        assert message.startswith(f"openai:{url}#m: the server gives no prompt log-probabilities")
    else:
        assert message.startswith(f"openai:{url}#m: {method} {url}{path} answered JSON of another ")
        assert message.endswith("; is it an OpenAI-compatible server?")
    assert "\n" not in message
