"""StereoSet's gender-swapped control set (Pikuliak et al., EACL 2023): the files as
bias-methodology/SOURCE.md describes them, the control SS of tiny models against a plain
one-sentence-at-a-time computation, the bootstrap against a plain loop over the documented plan,
the flag rule shared with CrowS-Pairs, the download, the CLI and one-line errors."""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from tests.http_mirror import serve
from tests.tiny_models import make_word_glm, make_word_mlm
from weatkit.cli import main
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import DataError, WeatkitError
from weatkit.measures import stereoset
from weatkit.measures.controls import CONTROL_SUMMARY_COLUMNS, as_biased
from weatkit.stereoset.controls import (
    ROLES,
    control_summary,
    load_genderswap,
    parse_genderswap,
    score_genderswap,
)
from weatkit.stereoset.scoring import IntrasentenceScorer

NO_CACHE = ContextualOptions(cache=False, device="cpu")
GS = "bias-methodology/data/stereoset_genderswap.txt"
GS_FILTERED = "bias-methodology/data/stereoset_genderswap_filtered.txt"

# --- the files ------------------------------------------------------------------------------


def test_counts_and_order_as_source_md(data_dir: Path) -> None:
    table = load_genderswap()
    assert table.groupby("control", sort=False).size().to_dict() == {
        "genderswap": 251,
        "genderswap-filtered": 147,
    }
    first = table.iloc[0]
    # non-empty lines L: items are (L0, L2, L1, L3): stereotype, anti, swapped ones
    assert (first.stereotype, first.anti_stereotype) == (
        "The <innnocent> schoolgirl gave a recital at her school.",
        "The <angry> schoolgirl gave a recital at her school.",
    )
    assert (first.swapped_stereotype, first.swapped_anti_stereotype) == (
        "The <innnocent> schoolboy gave a recital at his school.",
        "The <angry> schoolboy gave a recital at his school.",
    )
    # an independent reading: the non-empty lines, 4 per item
    for kind, path in (("genderswap", GS), ("genderswap-filtered", GS_FILTERED)):
        lines = [s for s in (data_dir / path).read_text(encoding="utf-8").splitlines() if s]
        assert len(lines) == 4 * (table["control"] == kind).sum()
        part = table[table["control"] == kind]
        assert part["stereotype"].tolist() == lines[0::4]
        assert part["swapped_stereotype"].tolist() == lines[1::4]
        assert part["anti_stereotype"].tolist() == lines[2::4]
        assert part["swapped_anti_stereotype"].tolist() == lines[3::4]
        assert part["line"].tolist() == list(range(1, 6 * len(part), 6))
    # 144 items of the filtered file are identical to unfiltered ones, 3 are corrected
    sentences = list(ROLES)
    full = {tuple(r) for r in table[table.control == "genderswap"][sentences].to_numpy()}
    kept = [tuple(r) for r in table[table.control == "genderswap-filtered"][sentences].to_numpy()]
    assert sum(k in full for k in kept) == 144
    # slips are kept as written (SOURCE.md)
    assert table.iloc[194].swapped_anti_stereotype == "Jane considers his sister his <friend>."


def test_parse_errors_name_file_and_line() -> None:
    good = "A <x> b.\nA <x> c.\n\nA <y> b.\nA <y> c.\n"
    item = ("A <x> b.", "A <y> b.", "A <x> c.", "A <y> c.")
    assert parse_genderswap(good, "f.txt") == [(1, item)]
    assert parse_genderswap(good.replace("\n", "\r\n"), "f.txt") == parse_genderswap(good, "f")
    cases = [
        ("A <x> b.\nA <x> c.\nA <x> d.\n\nA <y> b.\nA <y> c.\n", "f.txt: line 1: a block of 3"),
        (good + "\nA <z> b.\nA <z> c.\n", "f.txt: line 7: a stereotype block without its anti"),
        ("A x b.\nA <x> c.\n\nA <y> b.\nA <y> c.\n", "f.txt: line 1: expected exactly one <key"),
        ("A <x> b.\nA <x> <c>.\n\nA <y> b.\nA <y> c.\n", "f.txt: line 2: expected exactly one"),
        ("A <x> b.\nA <x> c.\n\nA <> b.\nA <y> c.\n", "f.txt: line 4: expected exactly one"),
        ("A <x> BLANK.\nA <x> c.\n\nA <y> b.\nA <y> c.\n", "f.txt: line 1: the sentence contai"),
    ]
    for text, message in cases:
        with pytest.raises(DataError, match=re.escape(message)) as err:
            parse_genderswap(text, "f.txt")
        assert "\n" not in str(err.value)


def test_unknown_and_unavailable_controls() -> None:
    with pytest.raises(WeatkitError, match=r"race control cannot be built: .*stereoset\.json"):
        load_genderswap(["race"])
    with pytest.raises(WeatkitError, match="profession control cannot be built"):
        load_genderswap(["genderswap", "profession"])
    with pytest.raises(WeatkitError, match="unknown StereoSet control 'gender': choose gender"):
        load_genderswap(["gender"])


# --- scores against a plain computation --------------------------------------------------------


def _words(table: pd.DataFrame) -> list[str]:
    from tokenizers import pre_tokenizers

    split = pre_tokenizers.BertPreTokenizer().pre_tokenize_str
    texts = [re.sub(r"[<>]", "", s) for role in ROLES for s in table[role]]
    return sorted({w for text in texts for w, _ in split(text)})


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> dict[str, str]:
    root = tmp_path_factory.mktemp("gs-models")
    words = _words(load_genderswap())
    return {
        "mlm": str(make_word_mlm(root / "mlm", words)),
        "glm": str(make_word_glm(root / "glm", words)),
    }


@functools.lru_cache(maxsize=4)
def _load(model_dir: str, causal: bool):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    return AutoTokenizer.from_pretrained(model_dir), auto.from_pretrained(model_dir).eval()


def plain_glm_logprob(model_dir: str, sentence: str) -> float:
    """Mean log P(t_j | BOS, t_<j) of the filled-in sentence, one forward pass."""
    tok, model = _load(model_dir, causal=True)
    filled = re.sub(r"[<>]", "", sentence)
    ids = [tok.bos_token_id, *tok(filled, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
    return float(np.mean([logp[j, ids[j + 1]].item() for j in range(len(ids) - 1)]))


def plain_mlm_logprob(model_dir: str, sentence: str) -> float:
    """log P(keyword | the sentence with the (one-token) keyword masked)."""
    tok, model = _load(model_dir, causal=False)
    head, word, tail = re.split(r"<([^<>]*)>", sentence)
    (target,) = tok(word, add_special_tokens=False)["input_ids"]
    ids = tok(head + tok.mask_token + tail)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, ids.index(tok.mask_token_id)]
    return float(torch.log_softmax(logits.double(), -1)[target])


@pytest.mark.parametrize("kind", ["glm", "mlm"])
def test_control_ss_equals_a_plain_loop(data_dir: Path, tiny: dict[str, str], kind: str) -> None:
    items = load_genderswap(["genderswap-filtered"]).head(30)  # a plain loop is slow
    scorer = IntrasentenceScorer(tiny[kind], kind=kind, options=NO_CACHE)
    scored = score_genderswap(scorer, items, show_progress=False)
    plain = plain_glm_logprob if kind == "glm" else plain_mlm_logprob
    expected = {}
    for side, (stereo_role, anti_role) in (("original", ROLES[:2]), ("control", ROLES[2:])):
        pro = [
            plain(tiny[kind], getattr(row, stereo_role))
            > plain(tiny[kind], getattr(row, anti_role))
            for row in items.itertuples()
        ]
        got = scored[scored["side"] == side]
        assert got["pro"].tolist() == [int(p) for p in pro]
        expected[side] = 100.0 * sum(pro) / len(pro)
    assert 0 < sum(scored["pro"]) < len(scored)  # the test can fail: not all ties
    summary = control_summary(scored, n_bootstrap=0)
    row = summary.iloc[0]
    assert (row.control, row.n) == ("genderswap-filtered", 30)
    assert row.original == pytest.approx(expected["original"], abs=1e-12)
    assert row.metric == pytest.approx(expected["control"], abs=1e-12)
    assert math.isnan(row.ci_low) and row.as_biased is np.False_


def test_paired_bootstrap_equals_a_plain_loop() -> None:
    rng = np.random.default_rng(11)
    original, control = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    scored = pd.DataFrame(
        {"control": "genderswap", "item": np.tile(np.arange(1, 41), 2),
         "side": ["original"] * 40 + ["control"] * 40, "pro": np.r_[original, control]}
    )  # fmt: skip
    row = control_summary(scored, n_bootstrap=300, seed=4, confidence_level=0.9).iloc[0]
    draws = np.random.default_rng(4).integers(0, 40, size=(300, 40))  # the documented plan
    for values, (low, high) in ((original, (row.original_ci_low, row.original_ci_high)),
                                (control, (row.ci_low, row.ci_high))):  # fmt: skip
        resampled = [100.0 * values[d].mean() for d in draws]
        assert (low, high) == pytest.approx(tuple(np.quantile(resampled, [0.05, 0.95])))
    assert row.original == 100.0 * original.mean() and row.metric == 100.0 * control.mean()


def test_the_flag_is_the_crows_rule() -> None:
    from weatkit.crows.controls import as_biased as crows_flag
    from weatkit.stereoset.controls import as_biased as stereoset_flag

    assert stereoset_flag is as_biased is crows_flag

    def scored(original: list[int], control: list[int]) -> pd.DataFrame:
        n = len(original)
        return pd.DataFrame(
            {"control": "genderswap", "item": list(range(1, n + 1)) * 2,
             "side": ["original"] * n + ["control"] * n, "pro": original + control}
        )  # fmt: skip

    # originals 8 of 10 (SS 80); controls 2 of 10 (clearly less biased) / 8 of 10 (as biased)
    less = control_summary(scored([1] * 8 + [0] * 2, [1] * 2 + [0] * 8), n_bootstrap=200)
    same = control_summary(scored([1] * 8 + [0] * 2, [0] * 2 + [1] * 8), n_bootstrap=200)
    assert less.as_biased.tolist() == [False] and same.as_biased.tolist() == [True]
    # below 50 the biased side is downwards: originals 2 of 10, controls 3 of 10
    low = control_summary(scored([1] * 2 + [0] * 8, [1] * 3 + [0] * 7), n_bootstrap=200)
    for table in (less, same, low):
        row = table.iloc[0]
        assert row.as_biased == as_biased(row.original, row.ci_low, row.ci_high)
    assert low.as_biased.tolist() == [low.iloc[0].ci_low <= 20.0]
    assert list(less.columns) == CONTROL_SUMMARY_COLUMNS


# --- API, CLI ---------------------------------------------------------------------------------


def _tiny_dataset(path: Path) -> Path:
    labels = ("stereotype", "anti-stereotype", "unrelated")
    words = ("caring", "strong", "table")
    example = {
        "id": "e1", "target": "mother", "bias_type": "gender", "context": "The mother is BLANK.",
        "sentences": [{"id": f"e1-{label}", "sentence": f"The mother is {w}.", "gold_label": label}
                      for label, w in zip(labels, words, strict=True)],
    }  # fmt: skip
    path.write_text(json.dumps({"data": {"intrasentence": [example]}}), encoding="utf-8")
    return path


def test_api_controls(
    data_dir: Path, tiny: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from weatkit.stereoset import data as stereoset_data

    small = stereoset_data.load_stereoset(path=_tiny_dataset(tmp_path / "tiny.json"))
    # the main run on one example instead of the dev set's 2,106 (the controls are the subject)
    monkeypatch.setattr(stereoset_data, "load_stereoset", lambda lang: small)
    result = stereoset(tiny["glm"], controls=["genderswap-filtered"], n_bootstrap=50, seed=3,
                       options=NO_CACHE)  # fmt: skip
    items = load_genderswap(["genderswap-filtered"])
    scorer = IntrasentenceScorer(tiny["glm"], options=NO_CACHE)
    expected = control_summary(score_genderswap(scorer, items), n_bootstrap=50, seed=3)
    pd.testing.assert_frame_equal(result.controls, expected)
    assert len(result.control_items) == 2 * 147
    assert stereoset(tiny["glm"], options=NO_CACHE).controls is None
    with pytest.raises(WeatkitError, match="controls exist for English only"):
        stereoset(tiny["glm"], lang="de", controls=True)
    with pytest.raises(WeatkitError, match="controls are for a model"):
        stereoset(predictions={"e1-stereotype": 1.0}, controls=True)
    with pytest.raises(WeatkitError, match="race control cannot be built"):
        stereoset(tiny["glm"], controls="race")


def test_cli_controls_end_to_end(data_dir: Path, tiny: dict[str, str], tmp_path: Path) -> None:
    dataset = _tiny_dataset(tmp_path / "tiny.json")
    out = tmp_path / "out"
    args = ["stereoset", "--model", tiny["mlm"], "--dataset", str(dataset), "--controls",
            "--bootstrap", "100", "--seed", "2", "--device", "cpu", "--no-cache",
            "--no-progress", "--out", str(out)]  # fmt: skip
    res = CliRunner().invoke(main, [*args, "--format", "csv", "--table", "controls"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == [
        "control_items.csv", "controls.csv", "manifest.json", "predictions.json", "scores.csv"
    ]
    written = pd.read_csv(out / "controls.csv")
    assert written.control.tolist() == ["genderswap", "genderswap-filtered"]
    assert written.n.tolist() == [251, 147]
    scorer = IntrasentenceScorer(tiny["mlm"], options=NO_CACHE)
    expected = control_summary(score_genderswap(scorer, load_genderswap()), n_bootstrap=100, seed=2)
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)
    items = pd.read_csv(out / "control_items.csv")
    assert items.groupby(["control", "side"]).size().to_dict() == {
        ("genderswap", "control"): 251, ("genderswap", "original"): 251,
        ("genderswap-filtered", "control"): 147, ("genderswap-filtered", "original"): 147,
    }  # fmt: skip
    printed = CliRunner().invoke(main, [*args[:-2], "--controls", "genderswap-filtered"])
    assert printed.exit_code == 0, printed.output
    assert "Controls (Pikuliak et al. 2023)" in printed.stdout
    assert "control as biased" in printed.stdout and "genderswap-filtered" in printed.stdout
    assert "Main SS (intrasentence, gender)" in printed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--controls", "race"), "StereoSet's race control cannot be built"),
        (("--controls", "profession,genderswap"), "StereoSet's profession control cannot be"),
        (("--controls=bogus",), "unknown StereoSet control 'bogus'"),
        (("--lang", "de", "--controls"), "--controls exist for English only"),
        (("--table", "controls"), "--table controls needs --controls"),
        (("--controls", "--table", "controls"), "--table controls picks the table --format"),
        (("--controls", ","), "--controls: ',' names nothing"),
    ],
)
def test_cli_bad_input_is_one_line(
    data_dir: Path, tiny: dict[str, str], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    res = CliRunner().invoke(
        main, ["stereoset", "--model", tiny["glm"], *args, "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 1
    assert len(res.output.strip().splitlines()) == 1 and message in res.output
    assert not (tmp_path / "o").exists()


def test_cli_controls_need_a_model(tmp_path: Path) -> None:
    predictions = tmp_path / "p.json"
    predictions.write_text('{"intrasentence": [{"id": "x", "score": 1.0}]}')
    res = CliRunner().invoke(main, ["stereoset", "--predictions", str(predictions), "--controls"])
    assert res.exit_code == 1 and "--controls is for --model" in res.output


# --- download --------------------------------------------------------------------------------


def test_files_are_downloaded_and_checked(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = load_genderswap()
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path / "empty"))  # no local copy: download
    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        pd.testing.assert_frame_equal(load_genderswap(), expected)
    assert (tmp_path / "empty").exists() is False  # downloads go to the cache, verified
    mirror = tmp_path / "mirror" / "bias-methodology" / "data"
    mirror.mkdir(parents=True)
    shutil.copy(data_dir / GS_FILTERED, mirror)
    (mirror / "stereoset_genderswap.txt").write_text("A <x> b.\r\nA <x> c.\r\n", encoding="utf-8")
    monkeypatch.setenv("WEATKIT_CACHE", str(tmp_path / "cache2"))  # nothing cached yet
    with serve(tmp_path / "mirror") as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        assert len(load_genderswap(["genderswap-filtered"])) == 147
        with pytest.raises(WeatkitError, match="checksum mismatch for bias-methodology/data/ster"):
            load_genderswap(["genderswap"])
