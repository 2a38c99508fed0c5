"""CEAT (weatkit.ceat): contexts found in corpora, the draws against slow loops (the paper's
formulas and ceat.py's arithmetic, written here from their text), and weatkit ceat end to end
on a tiny BERT with contexts from GEST's sentences (../shared/data/gest/data/gest.csv) and
sentences written here."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from tests.tiny_models import make_char_mlm, manual_word_vector
from weatkit.ceat.contexts import find_contexts
from weatkit.ceat.draws import ceat_test, combine, draw_effect_sizes
from weatkit.errors import DataError, WeatkitError
from weatkit.stats.resampling import context_draws

REPO = Path(__file__).resolve().parents[1]
GEST = Path(os.environ.get("WEATKIT_DATA", REPO.parent / "shared" / "data")) / "gest/data/gest.csv"


def _corpus(tmp_path: Path, lines: list[str], name: str = "c.txt") -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _found(sample, word: str) -> list[str]:
    return [
        c.text[c.start : c.end] + "@" + c.where.rsplit(":", 1)[1] for c in sample.contexts[word]
    ]


# -- contexts --------------------------------------------------------------------------------


def test_words_are_found_as_whole_words_in_every_script(tmp_path: Path) -> None:
    lines = [
        "He said she is (he) there, he's the shepherd.",  # 1
        "the hero",  # 2
        "Grün-Weiß ist grüner als grün.",  # 3
        "他是一名医生。iPhone医生",  # 4
        "Cafe\u0301 au lait, café noir",  # 5: a decomposed é (NFC makes it one character)
        "snake_case he_said",  # 6: _ is a word character
    ]
    corpus = _corpus(tmp_path, lines)
    sample = find_contexts(corpus, ["he", "Grün", "grün", "医生", "café", "iPhone"])
    assert _found(sample, "he") == ["he@1", "he@1"]  # not He, she, shepherd, hero, he_said
    assert _found(sample, "Grün") == ["Grün@3"]
    assert _found(sample, "grün") == ["grün@3"]  # not in grüner
    assert _found(sample, "医生") == ["医生@4", "医生@4"]  # no spaces in Chinese
    assert _found(sample, "iPhone") == ["iPhone@4"]  # next to a Han character
    assert _found(sample, "café") == ["café@5"]
    assert sample.found == {"he": 2, "Grün": 1, "grün": 1, "医生": 2, "café": 1, "iPhone": 1}
    folded = find_contexts(corpus, ["he", "café"], ignore_case=True)
    assert _found(folded, "he") == ["He@1", "he@1", "he@1"]
    assert _found(folded, "café") == ["Café@5", "café@5"]
    windowed = find_contexts(corpus, ["there"], window=1)
    (ctx,) = windowed.contexts["there"]
    assert (ctx.text, ctx.text[ctx.start : ctx.end]) == ("(he) there, he's", "there")


def test_at_most_n_contexts_a_seeded_uniform_sample(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, [f"word {i} here and word again" for i in range(50)])
    full = find_contexts(corpus, ["word", "again"], max_contexts=1000)
    assert full.found == {"word": 100, "again": 50} and len(full.contexts["word"]) == 100
    capped = find_contexts(corpus, ["word", "again"], max_contexts=7, seed=3)
    assert capped.counts() == {"word": 7, "again": 7} and capped.found == full.found
    again = find_contexts(corpus, ["word"], max_contexts=7, seed=3)  # other words don't matter
    assert again.contexts["word"] == capped.contexts["word"]
    other = find_contexts(corpus, ["word"], max_contexts=7, seed=4)
    assert other.contexts["word"] != capped.contexts["word"]
    # reservoir sampling keeps every occurrence with probability N / n: over 400 seeds each of
    # the 50 lines of "again" is kept 400 * 7 / 50 = 56 times on average (sd ≈ 7)
    kept = np.zeros(50)
    for seed in range(400):
        for c in find_contexts(corpus, ["again"], max_contexts=7, seed=seed).contexts["again"]:
            kept[int(c.where.rsplit(":", 1)[1]) - 1] += 1
    assert kept.sum() == 2800 and kept.min() > 30 and kept.max() < 85


def test_jsonl_and_datasets_corpora(tmp_path: Path) -> None:
    records = [{"id": i, "body": f"she wrote {i}"} for i in range(3)]
    folder = tmp_path / "ds"
    folder.mkdir()
    jsonl = folder / "train.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    from_file = find_contexts(str(jsonl), ["she"], text_field="body")
    assert [c.text for c in from_file.contexts["she"]] == [
        "she wrote 0",
        "she wrote 1",
        "she wrote 2",
    ]
    from_hf = find_contexts(f"hf:{folder}", ["she"], text_field="body")
    assert [c.text for c in from_hf.contexts["she"]] == [c.text for c in from_file.contexts["she"]]
    assert from_hf.contexts["she"][2].where == f"hf:{folder}:2"
    with pytest.raises(
        DataError, match=r"^corpus hf:.*: no column 'text' \(it has id, body; give --text-field\)$"
    ):
        find_contexts(f"hf:{folder}", ["she"])


BAD_BYTE = "invalid start byte at byte"
FIELD = "(give the text field with --text-field)"


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (None, "missing.txt", "corpus {path}: no such file"),
        (b"\n  \n", "empty.txt", "corpus {path}: empty (no text to look for words in)"),
        (b"fine\nbad \xff byte\n", "latin.txt", "{path}:2: not UTF-8 (" + BAD_BYTE + " 4)"),
        (b'{"text": "ok"}\n{"body": "x"}\n', "c.jsonl", "{path}:2: no field 'text' " + FIELD),
        (b'{"text": "ok"}\nnot json\n', "c.jsonl", "{path}:2: not JSON (Expecting value)"),
        # mtime=0: the bytes are the test's id, the same in every xdist worker
        (gzip.compress(b"ok\n\xfe\n", mtime=0), "c.txt.gz",
         "{path}:2: not UTF-8 (" + BAD_BYTE + " 0)"),
    ],
)  # fmt: skip
def test_bad_corpora_are_one_line_errors(
    tmp_path: Path, content: bytes | None, name: str, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DataError) as info:
        find_contexts(str(path), ["ok"])
    assert str(info.value) == message.format(path=path)


# -- the draws -------------------------------------------------------------------------------


def _random_sets(seed: int, sizes=(4, 3, 3, 2), dim: int = 6) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        [rng.normal(size=(int(rng.integers(1, 5)), dim)) + 0.8 * (k in (0, 2)) for _ in range(n)]
        for k, n in enumerate(sizes)
    ]


def _slow_draws(sets, plan, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Per draw, the paper's ES and its in-sample variance, from the drawn vectors."""
    words = [v for s in sets for v in s]
    bounds = np.cumsum([0, *(len(s) for s in sets)])
    es, var = [], []
    for row in plan:
        drawn = [words[j][row[j]] for j in range(len(words))]
        X, Y, A, B = (drawn[bounds[k] : bounds[k + 1]] for k in range(4))

        def cos(u, v):
            return u @ v / np.linalg.norm(u) / np.linalg.norm(v)

        def s(w, A=A, B=B):
            return np.mean([cos(w, a) for a in A]) - np.mean([cos(w, b) for b in B])

        scores = [s(w) for w in X + Y]
        sd = np.std(scores, ddof=ddof)
        es.append((np.mean(scores[: len(X)]) - np.mean(scores[len(X) :])) / sd)
        var.append(sd**2)
    return np.array(es), np.array(var)


@pytest.mark.parametrize("method", ["table", "vectors"])
def test_ces_and_p_match_the_papers_formulas_on_a_slow_loop(method: str) -> None:
    sets = _random_sets(1)
    plan = context_draws([len(v) for s in sets for v in s], 300, seed=5)
    es, var = draw_effect_sizes(sets, plan, device="cpu", method=method)
    slow_es, slow_var = _slow_draws(sets, plan)
    np.testing.assert_allclose(es, slow_es, rtol=1e-10)
    np.testing.assert_allclose(var, slow_var, rtol=1e-10)
    # the random-effects model of the paper, written out
    w = 1 / slow_var
    q = (w * slow_es**2).sum() - (w * slow_es).sum() ** 2 / w.sum()
    n = len(slow_es)
    tau2 = (q - (n - 1)) / (w.sum() - (w**2).sum() / w.sum()) if q > n - 1 else 0.0
    v = 1 / (slow_var + tau2)
    ces = (v * slow_es).sum() / v.sum()
    se = np.sqrt(1 / v.sum())
    result = ceat_test(sets, n_draws=300, seed=5, device="cpu", method=method)
    assert tau2 > 0 and result.statistic == pytest.approx(ces, rel=1e-10)
    assert result.tau2 == pytest.approx(tau2, rel=1e-10) and result.se == pytest.approx(se)
    assert result.pvalue == pytest.approx(2 * norm.sf(abs(ces / se)), rel=1e-9)
    z = norm.ppf(0.975)
    assert result.confidence_interval == pytest.approx((ces - z * se, ces + z * se))
    assert result.quantiles[0.5] == pytest.approx(np.median(slow_es))
    assert result.n_draws == 300 and result.statistic > 0  # X and A were shifted together


def _ceat_py_meta(e_lst: list[float], v_lst: list[float]) -> tuple[float, float]:
    """ceat.py's ceat_meta after its loop (Q, tao_square, PES, one-sided p), read and retyped."""
    e_ary, w_ary = np.array(e_lst), 1 / np.array(v_lst)
    q = np.sum(w_ary * e_ary**2) - np.sum(e_ary * w_ary) ** 2 / np.sum(w_ary)
    df = len(e_lst) - 1
    tao = (q - df) / (np.sum(w_ary) - np.sum(w_ary**2) / np.sum(w_ary)) if q > df else 0
    w_star = 1 / (np.array(v_lst) + tao)
    pes = np.sum(w_star * e_ary) / np.sum(w_star)
    return pes, norm.sf(pes / np.sqrt(1 / np.sum(w_star)))


def test_compat_ceat_reproduces_ceat_py_on_the_same_draws() -> None:
    from sklearn.metrics.pairwise import cosine_similarity

    sets = _random_sets(2, sizes=(3, 3, 2, 2))
    plan = context_draws([len(v) for s in sets for v in s], 200, seed=0)
    words = [v for s in sets for v in s]
    e_lst, v_lst = [], []
    for row in plan:  # ceat.py's effect_size on the vectors of the draw
        drawn = np.array([words[j][row[j]] for j in range(len(words))])
        X, Y, A, B = drawn[0:3], drawn[3:6], drawn[6:8], drawn[8:10]

        def associate(w, A=A, B=B):
            w = w.reshape(1, -1)
            return cosine_similarity(w, A).mean() - cosine_similarity(w, B).mean()

        delta = np.mean([associate(x) for x in X]) - np.mean([associate(y) for y in Y])
        sd = np.std([associate(w) for w in np.concatenate((X, Y))], ddof=1)
        e_lst.append(delta / sd)
        v_lst.append(sd**2)
    pes, p = _ceat_py_meta(e_lst, v_lst)
    result = ceat_test(sets, n_draws=200, seed=0, alternative="greater", device="cpu")
    assert result.statistic == pytest.approx(pes, rel=1e-10)
    assert result.pvalue == pytest.approx(p, rel=1e-9)
    assert combine(result.effect_sizes, result.variances).pvalue == pytest.approx(
        2 * min(p, 1 - p), rel=1e-9
    )


def test_the_draws_depend_on_the_seed_and_sizes_only() -> None:
    sets = _random_sets(3)
    a = ceat_test(sets, n_draws=50, seed=1, device="cpu")
    b = ceat_test([[v.copy() for v in s] for s in sets], n_draws=50, seed=1, device="cpu")
    c = ceat_test(sets, n_draws=50, seed=2, device="cpu")
    assert np.array_equal(a.effect_sizes, b.effect_sizes)
    assert not np.array_equal(a.effect_sizes, c.effect_sizes)
    with pytest.raises(WeatkitError, match="n_draws: must be >= 2, got 1"):
        ceat_test(sets, n_draws=1)


# -- end to end ------------------------------------------------------------------------------

LISTS = {
    "tests": [
        {
            "test": "home", "lang": "en", "list_id": "gest",
            "X": ["family", "home", "mother"], "Y": ["office", "career", "father"],
            "A": ["good", "happy"], "B": ["bad", "sad"],
        },
        {
            "test": "none", "lang": "en", "list_id": "gest",
            "X": ["family", "zyzzyva"], "Y": ["office", "qwxq"], "A": ["good"], "B": ["bad"],
        },
    ]
}  # fmt: skip
WRITTEN = [  # sentences written here: the attribute words in a few more contexts
    "We had a happy day at home.", "The office was sad and quiet.",
    "My mother said it was good.", "Her career made her happy.",
]  # fmt: skip


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_char_mlm(tmp_path_factory.mktemp("ceat") / "bert")


def _weatkit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "weatkit", "ceat", *args], capture_output=True, text=True, env=env
    )


def test_weatkit_ceat_on_a_tiny_bert_with_gest_sentences(bert: Path, tmp_path: Path) -> None:
    import weatkit
    from weatkit.ceat.options import CeatOptions
    from weatkit.embeddings.contextual import ContextualOptions

    gest = [row["sentence"] for row in csv.DictReader(GEST.open(encoding="utf-8"))]
    corpus = _corpus(tmp_path, gest[:1500] + WRITTEN)
    lists = tmp_path / "lists.json"
    lists.write_text(json.dumps(LISTS))
    out = tmp_path / "out"
    common = ["--model", str(bert), "--corpus", corpus, "--lists", str(lists), "--no-cache"]
    options = ["--draws", "400", "--contexts-per-word", "6", "--device", "cpu"]
    written = ["--out", str(out), "--log-items", "csv"]
    done = _weatkit(*common, *options, "--layer", "-1", "--layer", "1", *written)
    assert done.returncode == 0, done.stderr
    assert (
        "note: lists.json gest none: skipped, X, Y under --min-coverage 0.8 with --min-contexts 1 "
        "(contexts: 'zyzzyva' 0, 'qwxq' 0)"
    ) in done.stderr.replace(str(lists), "lists.json")
    results = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["test"], r["layer"], r["n_draws"]) for r in results] == [
        ("home", "-1", "400"), ("home", "1", "400")
    ]  # fmt: skip
    contexts = {r["word"]: r for r in csv.DictReader((out / "contexts.csv").open())}
    assert contexts["sad"] == {"word": "sad", "found": "10", "kept": "6"}  # 9 GEST + 1 here
    assert contexts["zyzzyva"] == {"word": "zyzzyva", "found": "0", "kept": "0"}
    assert contexts["family"]["kept"] == "6" and int(contexts["family"]["found"]) > 6
    draws = list(csv.DictReader((out / "draws.csv").open()))
    assert len(draws) == 800
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"] == "weatkit ceat" and manifest["ceat"]["n_draws"] == 400
    # the same run through the API; one context vector against a manual forward pass
    run = weatkit.ceat(str(bert), corpus, lists=[str(lists)], tests=["home"], layers=[-1, 1],
                       options=CeatOptions(n_draws=400, contexts_per_word=6),
                       contextual=ContextualOptions(cache=False), device="cpu")  # fmt: skip
    assert float(results[0]["ces"]) == pytest.approx(run.results["ces"][0], rel=1e-6)
    key = next(iter(run.draws))[0]
    es = run.draws[(key, -1)].effect_sizes
    np.testing.assert_allclose([float(d["effect_size"]) for d in draws[:400]], es, rtol=1e-6)


def test_a_span_vector_is_the_sum_of_its_tokens_in_the_sentence(bert: Path) -> None:
    from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions

    ex = ContextualExtractor(str(bert), ContextualOptions(cache=False))
    sentence = "tall she said"  # t ##a ##l ##l she said: 'tall' is tokens 1-4 after [CLS]
    got = ex.extract_spans([(sentence, 0, 4), (sentence, 5, 8)], [-1])[-1]
    np.testing.assert_allclose(
        got[0], manual_word_vector(bert, sentence, [1, 2, 3, 4], -1), atol=1e-5
    )
    np.testing.assert_allclose(got[1], manual_word_vector(bert, sentence, [5], -1), atol=1e-5)
    with pytest.raises(WeatkitError, match="span 3:20 is outside the sentence 'tall she said'"):
        ex.extract_spans([(sentence, 3, 20)], [-1])


def test_no_test_with_contexts_is_a_one_line_error(bert: Path, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, ["family and office, good or bad."])
    lists = tmp_path / "lists.json"
    lists.write_text(json.dumps(LISTS))
    done = _weatkit("--model", str(bert), "--corpus", corpus, "--lists", str(lists), "--test",
                    "home", "--no-cache", "--out", str(tmp_path / "out"))  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"weatkit: error: no test has enough contexts in {corpus}: {lists} gest home: skipped, "
        "X, Y, A, B under --min-coverage 0.8 with --min-contexts 1 (contexts: 'home' 0, "
        "'mother' 0, 'career' 0, 'father' 0, 'happy' 0, 'sad' 0)"
    ]
    assert not (tmp_path / "out").exists()


def test_a_skipped_list_set_test_is_named_once() -> None:
    """A list set whose list id is its own name (caliskan) is named once in the skip line."""
    from weatkit.ceat.contexts import ContextSample
    from weatkit.ceat.options import CeatOptions
    from weatkit.ceat.run import _usable
    from weatkit.lists.sources import select_lists

    (test,) = select_lists(["caliskan"], ["en"], tests=["weat6"]).tests
    words = {w for s in "XYAB" for w in getattr(test, s)}
    sample = ContextSample({w: [] for w in words}, {w: 0 for w in words}, 0, "c.txt")
    runnable, skipped, _ = _usable([test], sample, CeatOptions(), 0.8)
    assert not runnable and skipped[0].startswith("caliskan weat6: skipped, X, Y, A, B under")
