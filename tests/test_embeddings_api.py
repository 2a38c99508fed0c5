"""Word vectors from an embeddings API end to end (issue 25 §2): ``weatkit run --embeddings
S=openai:URL#MODEL`` against llama.cpp's server with SmolLM2-135M gives the WEAT of the vectors
the same model computes in process, caches the vectors by the server's identity, and writes the
API key nowhere."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("openai", reason="the openai backend needs the openai extra")

from tests import naive_weat
from tests.llama_server import ALIAS, in_process
from weatkit.cli import main
from weatkit.data import cache_dir
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.errors import ConfigError

LISTS = {
    "tests": [
        {
            "test": "weat1",
            "lang": "en",
            "list_id": "mine",
            "X": ["rose", "tulip", "daisy", "lily"],
            "Y": ["ant", "wasp", "flea", "moth"],
            "A": ["love", "peace", "happy", "gift"],
            "B": ["hatred", "war", "ugly", "rotten egg"],
        }
    ]
}
KEY = "sk-weatkit-e2e-7c2a91"


def _run(tmp_path: Path, url: str, out: str) -> dict:
    lists = tmp_path / "mine.json"
    lists.write_text(json.dumps(LISTS))
    args = [
        "run", "--lists", str(lists), "--embeddings", f"S=openai:{url}#{ALIAS}",
        "--bootstrap", "0", "--permutations", "0", "--out", str(tmp_path / out),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def in_process_d() -> float:
    """The WEAT effect size of :data:`LISTS` on the vectors the same model computes in process
    (llama.cpp's Python binding)."""
    pytest.importorskip("llama_cpp")
    llm = in_process(embedding=True)
    try:
        sets = [
            np.array([llm.embed(w) for w in LISTS["tests"][0][s]]) for s in ("X", "Y", "A", "B")
        ]
    finally:
        llm.close()
    return naive_weat.effect_size(*sets)


def test_weat_on_api_vectors_equals_weat_on_in_process_vectors(
    llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_process_d: float
) -> None:
    monkeypatch.setenv("WEATKIT_OPENAI_API_KEY", KEY)
    _run(tmp_path, llama_server, "first")
    rows = (tmp_path / "first" / "results.csv").read_text()
    row = pd.read_csv(tmp_path / "first" / "results.csv").iloc[0]
    assert row["n_oov"] == 0 and row["coverage"] == 1.0
    assert row["effect_size"] == pytest.approx(in_process_d, abs=1e-4)

    # a second run takes every vector from the cache (the server is not asked again)
    cached = sorted(cache_dir("vectors").glob("*/shard-*.safetensors"))
    assert len(cached) == 1
    _run(tmp_path, llama_server, "second")
    assert sorted(cache_dir("vectors").glob("*/shard-*.safetensors")) == cached
    assert (tmp_path / "second" / "results.csv").read_text() == rows

    # the key is in no output, manifest or cache file
    written = [*tmp_path.rglob("*"), *cache_dir("vectors").rglob("*")]
    for path in written:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_a_grid_runs_weat_on_an_embeddings_api(
    llama_server: str, tmp_path: Path, in_process_d: float
) -> None:
    """An ``openai:`` model entry of a grid: one source, no layers, the vectors of the server,
    and the WEAT of the in-process vectors; the entry's ``contextual`` options ask the server."""
    (tmp_path / "mine.json").write_text(json.dumps(LISTS))
    experiment = {
        "output": "out",
        "languages": ["en"],
        "lists": ["mine.json"],
        "engine": {"n_bootstrap": 0, "n_permutations": 0},
        "embeddings": [
            {"name": "S", "model": f"openai:{llama_server}#{ALIAS}",
             "contextual": {"concurrency": 2, "max_retries": 0}},
        ],
    }  # fmt: skip
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False))
    result = CliRunner().invoke(main, ["grid", str(path)])
    assert result.exit_code == 0, result.output
    row = pd.read_csv(tmp_path / "out" / "results.csv").iloc[0]
    assert (row["embeddings"], row["lang"], row["n_oov"]) == ("S", "en", 0)
    assert row["effect_size"] == pytest.approx(in_process_d, abs=1e-4)


def test_bad_api_specs_are_one_line() -> None:
    with pytest.raises(ConfigError) as err:
        parse_embeddings_specs("S=openai:http://127.0.0.1:8080/v1")
    assert str(err.value) == (
        "embeddings 'openai:http://127.0.0.1:8080/v1': name the served model after '#' "
        "(openai:BASE_URL#MODEL)"
    )
    (spec,) = parse_embeddings_specs("openai:http://127.0.0.1:8080/v1/#smollm2")
    assert (spec.name, spec.location, spec.layer) == (
        "smollm2", "openai:http://127.0.0.1:8080/v1#smollm2", None
    )
    assert spec.is_contextual


def test_run_with_the_server_down_is_one_line(tmp_path: Path) -> None:
    lists = tmp_path / "mine.json"
    lists.write_text(json.dumps(LISTS))
    result = CliRunner().invoke(
        main,
        ["run", "--lists", str(lists), "--embeddings", "S=openai:http://127.0.0.1:9/v1#m",
         "--bootstrap", "0", "--permutations", "0", "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code != 0
    assert "openai:http://127.0.0.1:9/v1#m: cannot connect to http://127.0.0.1:9/v1" in (
        result.output
    )
    assert not (tmp_path / "out" / "results.csv").exists()
