"""CrowS-Pairs variants (French, revised English) and the control pairs of Pikuliak et al. 2023:
loading counts as in bias-methodology/SOURCE.md, the corrections, the controls scored with a
tiny masked LM against a plain loop, the "control as biased" rule, downloads and CLI errors."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.http_mirror import serve
from tests.test_crows import slow_pll, tiny_pairs
from tests.tiny_models import make_gest_mlm
from weatkit.cli import main
from weatkit.crows import (
    control_summary,
    crows_corrections,
    crows_metric,
    load_controls,
    load_crows,
    score_controls,
)
from weatkit.errors import WeatkitError
from weatkit.measures import crows
from weatkit.measures.controls import as_biased
from weatkit.sentence.masked_lm import MaskedLM

# --- loading ----------------------------------------------------------------------------------


def test_revised_english(data_dir: Path) -> None:
    pairs = load_crows(data="revised")
    assert len(pairs) == 1467 and pairs.pair_id.is_unique
    assert len(set(range(1508)) - set(pairs.pair_id)) == 41  # dropped pairs keep their ids
    assert pairs.direction.value_counts().to_dict() == {"stereo": 1257, "antistereo": 210}
    # SOURCE.md's counts, with id 409 (Race-color) and id 1293 ("stereo") corrected
    assert pairs.bias_type.value_counts().to_dict() == {
        "race-color": 501, "gender": 250, "socioeconomic": 169, "nationality": 153,
        "religion": 101, "age": 83, "sexual-orientation": 80, "physical-appearance": 63,
        "disability": 58, "other": 9,
    }  # fmt: skip
    fixed = pairs.set_index("pair_id").loc[[409, 1293], "bias_type"].tolist()
    assert fixed == ["race-color", "socioeconomic"]
    corrections = crows_corrections("en", "revised")
    assert corrections[["pair_id", "column", "found", "used"]].values.tolist() == [
        [409, "bias_type", "Race-color", "race-color"],
        [1293, "bias_type", "stereo", "socioeconomic"],
    ]
    assert crows_corrections("en").empty and crows_corrections("ja").empty


def test_french(data_dir: Path) -> None:
    pairs = load_crows(lang="fr")
    # 1,677 rows: 1,467 translated pairs (ids 0..1507 with gaps) + LA0..LA209, less pair 129
    assert len(pairs) == 1676 and pairs.pair_id.is_unique
    assert 129 not in set(pairs.pair_id)
    assert pairs.pair_id.tail(210).tolist() == list(range(10_000, 10_210))
    assert pairs.direction.value_counts().to_dict() == {"stereo": 1465, "antistereo": 211}
    counts = pairs.bias_type.value_counts().to_dict()
    assert counts["other"] == 13 and "autre" not in counts and counts["gender"] == 321
    assert counts["socioeconomic"] == 195  # 196 less the dropped pair 129
    assert sum(counts.values()) == 1676 and len(counts) == 10
    # tab-separated, CSV-quoted: doubled quotes inside a quoted field are one quote
    assert any(s.startswith('Elle soupira et dit: "je') for s in pairs.sent_more)
    corrections = crows_corrections("fr")
    assert len(corrections) == 14
    dropped = corrections[corrections.used == ""]
    assert dropped[["pair_id", "column"]].values.tolist() == [[129, "sent_less"]]
    assert (corrections.drop(dropped.index).found == "autre").all()


def test_controls_load(data_dir: Path) -> None:
    table = load_controls()
    assert table.control.value_counts().to_dict() == {"negation": 66, "antistereotype": 65}
    assert table.groupby("control").pair_id.nunique().to_dict() == {
        "negation": 59, "antistereotype": 65,
    }  # fmt: skip
    gender = load_crows(data="revised").query("bias_type == 'gender'").set_index("pair_id")
    assert set(table.pair_id) <= set(gender.index)
    assert (gender.loc[table.pair_id, "direction"].to_numpy() == table.direction).all()
    first = table[table.control == "antistereotype"].iloc[0]
    assert "a doctor" in first.sent_more and "a nurse" in first.control_more
    assert "he would" in first.control_more and "she would" in first.control_less


# --- the flag -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("original", "low", "high", "flag"),
    [
        (70.0, 55.0, 69.9, False),  # control clearly less biased
        (70.0, 55.0, 70.0, True),  # its CI reaches the original
        (70.0, 72.0, 80.0, True),  # more biased than the original
        (30.0, 30.1, 45.0, False),  # below 50: the biased side is downwards
        (30.0, 25.0, 45.0, True),
        (30.0, 51.0, 60.0, False),  # reversed: not as biased
        (float("nan"), 40.0, 60.0, False),
    ],
)
def test_as_biased_rule(original: float, low: float, high: float, flag: bool) -> None:
    assert as_biased(original, low, high) is flag


def test_control_summary_on_hand_made_outcomes() -> None:
    # originals: 4 wins of 5; controls: 1 win of 5 (negation), 4 of 5 (antistereotype)
    def table(wins: list[int], kinds: list[str]) -> pd.DataFrame:
        columns = {"control": kinds, "bias_type": "gender", "direction": "stereo"}
        return pd.DataFrame({**columns, "win": wins, "neutral": False})

    kinds = ["negation"] * 5 + ["antistereotype"] * 5
    originals = table([1, 1, 1, 0, 1] * 2, kinds)
    controls = table([0, 0, 1, 0, 0, 1, 1, 0, 1, 1], kinds)
    summary = control_summary(
        originals, controls, n_bootstrap=400, seed=5, confidence_level=0.9
    ).set_index("control")
    assert summary.original.tolist() == [80.0, 80.0]
    assert summary.metric.tolist() == [20.0, 80.0]
    draws = np.random.default_rng(5).integers(0, 5, size=(400, 5))
    for kind, wins in (("negation", [0, 0, 1, 0, 0]), ("antistereotype", [1, 1, 0, 1, 1])):
        stats = 100.0 * np.asarray(wins)[draws].mean(axis=1)
        low, high = np.quantile(stats, [0.05, 0.95])
        assert summary.loc[kind].ci_low == pytest.approx(low)
        assert summary.loc[kind].ci_high == pytest.approx(high)
        assert summary.loc[kind].as_biased == (high >= 80.0)
    assert summary.as_biased.tolist() == [False, True]


# --- scored with a tiny masked LM ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gest_mlm(tmp_path_factory.mktemp("controls") / "mlm")


def test_controls_equal_a_direct_computation(data_dir: Path, tiny: Path) -> None:
    rows = load_controls()
    rows = pd.concat(
        [rows[rows.control == "negation"].head(4), rows[rows.control == "antistereotype"].head(4)]
    ).reset_index(drop=True)
    originals, controls = score_controls(MaskedLM(str(tiny)), rows, method="pll", decimals=None)
    wins = {"original": [], "control": []}
    for i, row in rows.iterrows():
        for side, more, less, scored in (
            ("original", row.sent_more, row.sent_less, originals),
            ("control", row.control_more, row.control_less, controls),
        ):
            a, b = slow_pll(tiny, more, less)
            assert scored.score_more[i] == pytest.approx(a, abs=1e-4)
            assert scored.score_less[i] == pytest.approx(b, abs=1e-4)
            wins[side].append(int(a > b))
    summary = control_summary(
        originals, controls, n_bootstrap=0, seed=0, confidence_level=0.95
    ).set_index("control")
    for kind, part in (("negation", slice(0, 4)), ("antistereotype", slice(4, 8))):
        assert summary.loc[kind].original == pytest.approx(100 * np.mean(wins["original"][part]))
        assert summary.loc[kind].metric == pytest.approx(100 * np.mean(wins["control"][part]))
        assert summary.loc[kind].n == 4


def test_cli_controls_end_to_end(data_dir: Path, tiny: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    tiny_pairs().rename(columns={"direction": "stereo_antistereo"}).to_csv(data, index=False)
    out = tmp_path / "out"
    args = ["crows", "--model", str(tiny), "--data", str(data), "--controls", "--out", str(out),
            "--format", "csv", "--table", "controls", "--bootstrap", "100", "--seed", "2",
            "--no-progress"]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    printed = pd.read_csv(io.StringIO(res.stdout))
    written = pd.read_csv(out / "controls.csv")
    pd.testing.assert_frame_equal(printed, written)
    assert written.control.tolist() == ["negation", "antistereotype"]
    assert written.n.tolist() == [66, 65]
    pairs = pd.read_csv(out / "control_pairs.csv", keep_default_na=False)
    assert pairs.side.value_counts().to_dict() == {"original": 131, "control": 131}
    for row in written.itertuples():
        for side, column in (("original", "original"), ("control", "metric")):
            part = pairs[(pairs.side == side) & (pairs.control == row.control)]
            expected = crows_metric(part, n_bootstrap=100, seed=2).iloc[0]
            assert getattr(row, column) == pytest.approx(expected.metric)
        assert row.as_biased == as_biased(row.original, row.ci_low, row.ci_high)
    assert not (out / "corrections.csv").exists()  # your own pairs: nothing corrected


def test_api_controls_and_corrections(data_dir: Path, tiny: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    tiny_pairs().rename(columns={"direction": "stereo_antistereo"}).to_csv(data, index=False)
    result = crows(str(tiny), data=data, n_bootstrap=0, show_progress=False)
    assert result.controls is None and result.corrections.empty and len(result.pairs) == 5
    with pytest.raises(WeatkitError, match="controls exist for English only"):
        crows(str(tiny), lang="fr", controls=True)
    with pytest.raises(WeatkitError, match="unknown data set 'revisd'"):
        crows(str(tiny), data="revisd")
    with pytest.raises(WeatkitError, match="data, controls and limit are for a model"):
        crows(pairs=tiny_pairs(), controls=True)


# --- downloads and bad input --------------------------------------------------------------------


def test_new_files_are_downloaded_and_checked(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = load_crows(lang="fr")
    controls = load_controls(["negation"])
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path / "empty"))  # no local copy: download
    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        pd.testing.assert_frame_equal(load_crows(lang="fr"), expected)
        pd.testing.assert_frame_equal(load_controls(["negation"]), controls)
    assert (tmp_path / "empty").exists() is False  # downloads go to the cache, verified
    mirror = tmp_path / "mirror" / "bias-methodology" / "data"
    mirror.mkdir(parents=True)
    shutil.copy(data_dir / "bias-methodology/data/crows_revised.csv", mirror)
    (mirror / "crows_negation.csv").write_text("a\r\nb\r\n", encoding="utf-8")
    monkeypatch.setenv("WEATKIT_CACHE", str(tmp_path / "cache2"))  # nothing cached yet
    with serve(tmp_path / "mirror") as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        with pytest.raises(WeatkitError, match="checksum mismatch for bias-methodology/data/crow"):
            load_controls(["negation"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--lang", "de"), "unknown language 'de': choose one of en, fr, ja, ru"),
        (("--data", "revisd"), "unknown data set 'revisd': choose one of original, revised"),
        (("--lang", "fr", "--data", "revised"), "no revised CrowS-Pairs in 'fr'"),
        (("--lang", "fr", "--controls"), "--controls exist for English only"),
        (("--lang", "en", "--data", "bad.csv"), "--lang or --data"),
        # a request that selects nothing, or a table nothing asked for (issue 37 §2)
        (("--controls", ",,"), "--controls: ',,' names nothing: give at least one"),
        (("--controls=",), "--controls: '' names nothing"),
        (("--bias-type", ","), "--bias-type: ',' names nothing"),
        (("--table", "control_pairs", "--format", "csv"), "--table control_pairs needs --controls"),
        (("--table", "pairs"), "--table pairs picks the table --format prints: add --format"),
    ],
)
def test_cli_bad_input_is_one_line(
    data_dir: Path, tiny: Path, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    (tmp_path / "bad.csv").write_text("x\n", encoding="utf-8")
    args = tuple(str(tmp_path / a) if a == "bad.csv" else a for a in args)
    res = CliRunner().invoke(
        main, ["crows", "--model", str(tiny), *args, "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 1
    assert len(res.output.strip().splitlines()) == 1 and message in res.output
    assert not (tmp_path / "o").exists()


def test_cli_controls_need_a_model(tmp_path: Path) -> None:
    scores = tmp_path / "s.csv"
    scores.write_text("score_more,score_less,bias_type,direction\n-1,-2,gender,stereo\n")
    res = CliRunner().invoke(main, ["crows", "--scores", str(scores), "--controls"])
    assert res.exit_code == 1 and "--controls is for --model" in res.output
    res = CliRunner().invoke(main, ["crows", "--scores", str(scores), "--table", "controls"])
    assert res.exit_code == 1 and "--table controls needs --controls" in res.output
