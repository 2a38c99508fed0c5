"""The WEATHub list set (issue 20): counts on the shipped files, defect reports, variants,
checked downloads, and a GloVe run whose d is recomputed here with numpy.

Expected numbers come from ``weathub/SOURCE.md`` and its ``derived/wordlist_index.tsv`` (counted
independently of weatkit from the JSON files), or are counted here from the JSON with :mod:`json`.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.http_mirror import serve
from weatkit import data
from weatkit.cli import main
from weatkit.embeddings.default import default_files
from weatkit.errors import WeatkitError
from weatkit.lists import LIST_SETS, load_list_set, select_lists
from weatkit.lists.normalize import Normalization

LANGS = sorted(
    {"ar", "bn", "ckb", "da", "de", "el", "es", "fa", "fr", "hi", "it", "ja", "ko", "ku", "mr"}
    | {"pa", "ru", "te", "th", "tl", "tr", "ur", "vi", "zh"}
)
INDIA = {"bn", "hi", "mr", "pa", "te", "ur"}
IDENTICAL = {("en_india", "weat17"), ("en_india", "weat18")} | {
    ("bn_india", "weat17"),
    ("bn_india", "weat18"),
}
FAST = ["--bootstrap", "200", "--permutations", "200", "--no-progress"]
KEYS = {"X": "targ1", "Y": "targ2", "A": "attr1", "B": "attr2"}


def _json(data_dir: Path, folder: str, test: str) -> dict:
    return json.loads((data_dir / "weathub" / "data" / folder / f"{test}.json").read_text("utf-8"))


def _index(data_dir: Path) -> dict[str, dict[str, str]]:
    path = data_dir / "weathub" / "derived" / "wordlist_index.tsv"
    with path.open(encoding="utf-8") as fh:
        return {f"{r['folder']}/{r['test']}": r for r in csv.DictReader(fh, delimiter="\t")}


def test_registry_has_every_file_pinned(data_dir: Path) -> None:
    entries = {p: e for p, e in data.registry().items() if p.startswith("weathub/")}
    assert len(entries) == 694  # SOURCE.md: 694 JSON files in 105 folders
    assert len({p.split("/")[2] for p in entries}) == 105
    with (data_dir / "weathub" / "MANIFEST.tsv").open(encoding="utf-8") as fh:
        manifest = {r["local_path"]: r for r in csv.DictReader(fh, delimiter="\t")}
    for relpath, entry in entries.items():
        row = manifest[relpath.removeprefix("weathub/")]
        assert entry.sha256 == row["sha256"] and entry.size == int(row["bytes"])
        assert entry.url == (
            f"https://raw.githubusercontent.com/iamshnoo/weathub/{row['upstream_commit']}/"
            f"{row['upstream_path']}"
        )
        assert row["upstream_commit"] == "878d6cea7aabc0ce4233bcf48e7ed1759ef41538"


@pytest.mark.parametrize("variant", ["human", "gt", "all"])
def test_loading_counts(variant: str, data_dir: Path) -> None:
    tests = load_list_set(f"weathub:{variant}")
    assert len(tests) == 24 * 6 + 25 * 7 + 7 * 11 + 10 == 406
    per_lang: dict[str, set[str]] = {}
    for test in tests:
        per_lang.setdefault(test.lang, set()).add(test.list_id)
        assert test.list_set == f"weathub:{variant}"
    assert sorted(per_lang) == sorted([*LANGS, "en"])
    for lang in LANGS:
        expected = {f"{lang}_{variant}", f"{lang}_new"}
        if lang in INDIA:
            expected.add(f"{lang}_india")
        assert per_lang[lang] == expected
    assert per_lang["en"] == {"en", "en_new", "en_india"}
    ids = {t.test for t in tests if t.list_id == f"de_{variant}"}
    assert ids == {"weat1", "weat2", "weat6", "weat7", "weat8", "weat9"}
    ids = {t.test for t in tests if t.list_id == "de_new"}
    assert ids == {"weat11", "weat12", "weat12b", "weat13", "weat13b", "weat14", "weat15"}
    assert {t.test for t in tests if t.list_id == "hi_india"} == {f"weat{n}" for n in range(16, 27)}
    # item counts per set: as in the upstream file, less the "nan" placeholders
    index = _index(data_dir)
    for test in tests:
        row = index[f"{test.list_id}/{test.test}"]
        sizes = [int(row[f"n_{k}"]) for k in KEYS.values()]
        found = [len(test.X), len(test.Y), len(test.A), len(test.B)]
        assert sum(sizes) - sum(found) == int(row["n_nan_items"])
        assert test.names == tuple(row[f"{k}_category"] for k in KEYS.values())


def test_all_three_variants_hold_every_item_but_the_placeholders(data_dir: Path) -> None:
    seen = {}
    for variant in ("human", "gt", "all"):
        for test in load_list_set(f"weathub:{variant}"):
            seen[(test.list_id, test.test)] = sum(len(s) for s in test.sets().values())
    assert len(seen) == 694
    assert sum(seen.values()) == 38_825 - 10  # SOURCE.md: 38,825 items, 10 literal "nan"


def test_default_variant_and_items_as_in_the_file(data_dir: Path) -> None:
    assert LIST_SETS["weathub"] == "alias of weathub:human"
    default = load_list_set("weathub", ["de"], tests=["weat1"])
    assert [t.list_id for t in default] == ["de_human"]
    assert default[0].list_set == "weathub:human"
    (gt,) = load_list_set("weathub:gt", ["de"], tests=["weat1"])
    raw = _json(data_dir, "de_gt", "weat1")
    for key, upstream in KEYS.items():
        assert gt.sets()[key] == tuple(raw[upstream]["examples"])
    (every,) = load_list_set("weathub:all", ["de"], tests=["weat1"])
    assert len(every.A) == len(_json(data_dir, "de_all", "weat1")["attr1"]["examples"]) != 25


def test_unknown_variant_is_a_one_line_error() -> None:
    with pytest.raises(WeatkitError, match=r"unknown WEATHub variant 'foo' in 'weathub:foo'"):
        select_lists(["weathub:foo"])
    res = CliRunner().invoke(main, ["run", "--lists", "weathub:foo", *FAST])
    assert res.exit_code != 0
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert lines == [
        "weatkit: error: unknown WEATHub variant 'foo' in 'weathub:foo': use one of "
        "weathub:human, weathub:gt, weathub:all"
    ]


def test_nan_placeholders_are_dropped_and_reported(data_dir: Path) -> None:
    expected = {"human": 8, "gt": 10, "all": 8}  # el_new weat12/12b 4 each; mr_gt, vi_gt 1 each
    for variant, count in expected.items():
        selection = select_lists([f"weathub:{variant}"])
        lines = [line for line in selection.report if "'nan' dropped" in line]
        assert len(lines) == count
        assert all("nan" not in t.vocabulary() for t in selection.tests)
    selection = select_lists(["weathub:gt"], ["vi"], tests=["weat6"])
    (line,) = [line for line in selection.report if "'nan' dropped" in line]
    assert line.startswith("warning: weathub:gt vi_gt weat6 Y (FemaleNames): item 'nan' dropped")
    raw = _json(data_dir, "vi_gt", "weat6")["targ2"]["examples"]
    (vi,) = selection.tests
    assert "nan" in raw and len(vi.Y) == len(raw) - raw.count("nan")


def _per_file(report: list[str], pattern: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in report:
        match = re.match(pattern, line)
        if match:
            counts[f"{match[1]}/{match[2]}"] += 1
    return counts


@pytest.mark.parametrize("variant", ["human", "all"])
def test_duplicates_and_overlaps_reported_per_file(variant: str, data_dir: Path) -> None:
    """Every duplicate removed and every item in both opposing sets is one report line, as
    counted in ``derived/wordlist_index.tsv``. Two known differences: the index counts the four
    "nan" of el_new weat12/12b as duplicates (3 each; they are dropped before), and it counts
    the shared items of the tests with identical targets, which are skipped instead."""
    norm = Normalization(join_phrases=None)
    selection = select_lists([f"weathub:{variant}"], normalization=norm)
    dups = _per_file(selection.report, r"warning: \S+ (\S+) (\S+) \S+ .*: duplicate item .*removed")
    shared = _per_file(selection.report, r"note: \S+ (\S+) (\S+): .* is in both ")
    index = _index(data_dir)
    keys = {(t.list_id, t.test) for t in selection.tests} | {
        (t.list_id, t.test) for t, _ in selection.skipped
    }
    assert len(keys) == 406
    for list_id, test in keys:
        row = index[f"{list_id}/{test}"]
        nan_dups = 3 if (list_id, test) in {("el_new", "weat12"), ("el_new", "weat12b")} else 0
        assert dups[f"{list_id}/{test}"] == int(row["n_duplicate_items"]) - nan_dups
        expected = 0 if (list_id, test) in IDENTICAL else int(
            row["n_items_shared_between_opposite_sets"]
        )
        assert shared[f"{list_id}/{test}"] == expected, (list_id, test)
    assert sum(dups.values()) > 900 and sum(shared.values()) > 100
    assert (
        f"note: weathub:{variant} es_{variant} weat7: 'su' is in both A (MaleTerms) and "
        "B (FemaleTerms) (kept in both)"
    ) in selection.report


def test_identical_target_sets_are_skipped_with_the_reason(data_dir: Path) -> None:
    selection = select_lists(["weathub"])
    assert {(t.list_id, t.test) for t, _ in selection.skipped} == IDENTICAL
    assert not {(t.list_id, t.test) for t in selection.tests} & IDENTICAL
    for test, reason in selection.skipped:
        raw = _json(data_dir, test.list_id, test.test)
        assert raw["targ1"]["examples"] == raw["targ2"]["examples"]
        assert "identical target sets" in reason and test.test in reason
    assert "tests skipped (identical target sets) 4" in selection.report[-1]
    with pytest.raises(WeatkitError, match="identical target sets"):
        select_lists(["weathub"], ["en"], tests=["weat17"])


def test_lists_command_shows_languages_tests_and_variants() -> None:
    res = CliRunner().invoke(main, ["lists", "weathub:gt"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert "weathub:gt: 406 tests in 25 languages" in res.stdout
    (row,) = [line for line in res.stdout.splitlines() if line.startswith("│ hi ")]
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells[1:3] == ["3", "hi_gt, hi_india, hi_new"]
    assert cells[3].startswith("weat1, weat2, weat6,") and cells[3].endswith("weat25, weat26")
    assert "weathub:human (default: weathub), weathub:gt, weathub:all" in res.stdout
    assert "10 placeholder item(s) dropped" in res.stdout
    assert res.stdout.count("skipped: weathub:gt ") == 4


@pytest.mark.usefixtures("data_dir")
def test_download_from_a_mirror_is_checked(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WEATKIT_DATA", raising=False)
    mirror = tmp_path / "mirror"
    shutil.copytree(data_dir / "weathub" / "data", mirror / "weathub" / "data")
    with serve(mirror) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        tests = load_list_set("weathub:gt", ["de"])
        assert {t.list_id for t in tests} == {"de_gt", "de_new"}
        cached = data.cache_dir("data") / "weathub" / "data"
        files = sorted(cached.rglob("*.json"))
        assert len(files) == 406
        for path in files:
            relpath = path.relative_to(data.cache_dir("data")).as_posix()
            assert data.sha256_file(path) == data.registry()[relpath].sha256
        # a damaged file on the mirror is rejected, naming it, and not cached
        shutil.rmtree(cached)
        bad = mirror / "weathub" / "data" / "el_new" / "weat12.json"
        bad.write_bytes(bad.read_bytes().replace(b'"nan"', b'"NaN"', 1))
        with pytest.raises(WeatkitError, match="checksum mismatch for weathub/data/el_new/weat12"):
            load_list_set("weathub:gt")
    assert not (cached / "el_new" / "weat12.json").exists()


def _textbook_d(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Caliskan et al. (2017): s(w) = mean cos(w, A) - mean cos(w, B);
    d = (mean_X s - mean_Y s) / std_{X u Y} s (sample std, ddof = 1)."""

    def unit(m: np.ndarray) -> np.ndarray:
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def s(w: np.ndarray) -> np.ndarray:
        return (unit(w) @ unit(a).T).mean(1) - (unit(w) @ unit(b).T).mean(1)

    sx, sy = s(x), s(y)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1))


def test_run_on_glove_matches_the_textbook_d(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    res = CliRunner().invoke(
        main, ["run", "--lists", "weathub", "--lang", "en", "--out", str(out), *FAST]
    )
    assert res.exit_code == 0, res.output
    results = pd.read_csv(out / "results.csv")
    assert set(results.list_id) == {"en", "en_new", "en_india"}
    assert set(results.list_set) == {"weathub:human"}
    # GloVe rows read from the package files, not through weatkit's loader
    matrix_path, index_path = default_files()
    words = pd.read_parquet(index_path).iloc[:, 0].tolist()
    matrix = np.load(matrix_path, mmap_mode="r")
    row_of = {w: i for i, w in enumerate(words)}
    checked = 0
    for list_id, test in [("en_new", "weat14"), ("en_india", "weat16"), ("en", "weat6")]:
        raw = _json(data_dir, list_id, test)
        sets = []
        for upstream in KEYS.values():
            examples = raw[upstream]["examples"]
            items = dict.fromkeys(w.strip().lower().replace(" ", "_") for w in examples)
            assert all(w in row_of for w in items), (test, items)  # full coverage: no OOV
            sets.append(np.asarray(matrix[[row_of[w] for w in items]], dtype=np.float64))
        (got,) = results[(results.list_id == list_id) & (results.test == test)].effect_size
        assert got == pytest.approx(_textbook_d(*sets), abs=1e-6)
        checked += 1
    assert checked == 3
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    skipped = {(s["list_id"], s["test"]): s for s in manifest["skipped"]}
    for key in [("en_india", "weat17"), ("en_india", "weat18")]:
        assert "identical target sets" in skipped[key]["reason"]
        assert skipped[key]["cause"] == "lists"
    assert "skipped: glove-6b-50d/en: 2 of 28 tests (1 of 3 lists), identical target sets" in (
        res.stderr.splitlines()
    )
    (source,) = [s for s in manifest["list_sources"] if s["list_set"] == "weathub:human"]
    assert source["path"].endswith("weathub/data (406 files)") and len(source["sha256"]) == 64
