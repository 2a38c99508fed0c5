"""CrowS-Pairs: the loaders, shared tokens, PLL/AUL/AULA pair scores, the metric and the CLI."""

from __future__ import annotations

import difflib
import io
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import weatkit
from tests.http_mirror import serve
from tests.tiny_models import make_gest_mlm
from weatkit.cli import main
from weatkit.crows import (
    bootstrap_indices,
    crows_metric,
    load_crows,
    pair_outcomes,
    read_pair_scores,
    score_crows,
    shared_positions,
)
from weatkit.errors import WeatkitError
from weatkit.sentence.masked_lm import MaskedLM

# --- the metric on hand-made pairs ----------------------------------------------------------

# (bias_type, direction, score_more, score_less): win, loss, tie, win | win, loss, tie | unscored
HAND = [
    ("gender", "stereo", -1.0, -2.0),
    ("gender", "stereo", -3.0, -1.0),
    ("gender", "stereo", -2.0, -2.0),
    ("gender", "antistereo", -1.0, -5.0),
    ("race-color", "stereo", 0.0, -1.0),
    ("race-color", "antistereo", -4.0, -3.0),
    ("race-color", "antistereo", -1.0, -1.0),
    ("gender", "antistereo", np.nan, -1.0),
]


def hand_pairs() -> pd.DataFrame:
    table = pd.DataFrame(HAND, columns=["bias_type", "direction", "score_more", "score_less"])
    table.insert(0, "pair_id", range(len(table)))
    return table


def test_metric_by_hand() -> None:
    summary = crows_metric(hand_pairs(), n_bootstrap=0).set_index("bias_type")
    assert list(summary.index) == ["overall", "gender", "race-color"]
    overall, gender, race = summary.loc["overall"], summary.loc["gender"], summary.loc["race-color"]
    # overall: 7 scored pairs, wins: gender stereo 1, gender antistereo 1, race stereo 1
    assert (overall.n, overall.n_neutral, overall.n_skipped) == (7, 2, 1)
    assert overall.metric == pytest.approx(300 / 7)
    assert overall.stereo_score == pytest.approx(200 / 3)  # 2 wins / 3 non-neutral stereo
    assert overall.antistereo_score == pytest.approx(50.0)  # 1 win / 2 non-neutral antistereo
    assert (overall.n_stereo, overall.n_antistereo) == (4, 3)
    assert (gender.n, gender.n_neutral, gender.n_skipped) == (4, 1, 1)
    assert gender.metric == pytest.approx(50.0)
    assert gender.stereo_score == pytest.approx(50.0)
    assert gender.antistereo_score == pytest.approx(100.0)
    assert (race.n, race.n_neutral, race.n_skipped) == (3, 1, 0)
    assert race.metric == pytest.approx(100 / 3)
    assert race.stereo_score == pytest.approx(100.0)
    assert race.antistereo_score == pytest.approx(0.0)
    assert summary[["ci_low", "ci_high"]].isna().all().all()


def test_metric_uses_win_and_neutral_columns_when_present() -> None:
    table = hand_pairs()
    table["win"], table["neutral"] = pair_outcomes(table.score_more, table.score_less)
    table.loc[0, ["win", "neutral"]] = [0, True]  # as if pair 0 had tied after rounding
    gender = crows_metric(table, n_bootstrap=0).set_index("bias_type").loc["gender"]
    # gender: 0 neutral, 1 lost, 2 neutral (stereo); 3 won (antistereo); 7 unscored
    assert (gender.n, gender.n_neutral) == (4, 2)
    assert gender.metric == pytest.approx(25.0)
    assert gender.stereo_score == pytest.approx(0.0)
    assert gender.antistereo_score == pytest.approx(100.0)


def test_bootstrap_ci_equals_a_slow_loop() -> None:
    table = hand_pairs()
    summary = crows_metric(table, n_bootstrap=500, seed=7, confidence_level=0.9)
    summary = summary.set_index("bias_type")
    win, _ = pair_outcomes(table.score_more, table.score_less)
    scored = table.score_more.notna().to_numpy()
    for name in ("overall", "gender", "race-color"):
        member = scored & ((table.bias_type == name).to_numpy() | (name == "overall"))
        wins = win[member]
        drawn = bootstrap_indices(len(wins), 500, 7)
        stats = [100.0 * np.mean([wins[i] for i in row]) for row in drawn]
        low, high = np.quantile(stats, [0.05, 0.95])
        assert summary.loc[name].ci_low == pytest.approx(low, abs=1e-12)
        assert summary.loc[name].ci_high == pytest.approx(high, abs=1e-12)
        assert low <= summary.loc[name].metric <= high
    again = crows_metric(table, n_bootstrap=500, seed=7, confidence_level=0.9)
    pd.testing.assert_frame_equal(again, summary.reset_index())


def test_pair_outcomes_round_like_python() -> None:
    win, neutral = pair_outcomes([-1.0004, 2.675, -3.0], [-1.0001, 2.6749, -3.5])
    assert win.tolist() == [0, 1, 1] and neutral.tolist() == [False, False, False]
    win, neutral = pair_outcomes([-1.0004, 2.675, -3.0], [-1.0001, 2.6749, -3.5], decimals=3)
    assert win.tolist() == [0, 0, 1] and neutral.tolist() == [True, True, False]
    win, neutral = pair_outcomes([2.675], [2.67], decimals=2)  # round(2.675, 2) == 2.67
    assert neutral.tolist() == [True]


def test_metric_rejects_bad_tables() -> None:
    with pytest.raises(WeatkitError, match="score_more"):
        crows_metric(hand_pairs().drop(columns=["score_more"]))
    bad = hand_pairs().assign(direction="sideways")
    with pytest.raises(WeatkitError, match="direction"):
        crows_metric(bad)


# --- shared tokens ----------------------------------------------------------------------------


def test_shared_positions_replace_and_insert() -> None:
    cls, sep = 101, 102
    # [CLS] the man is tall [SEP]  vs  [CLS] the old woman is tall [SEP]: "man" -> "old woman"
    a = [cls, 1, 2, 3, 4, sep]
    b = [cls, 1, 5, 6, 3, 4, sep]
    special_a = [True, False, False, False, False, True]
    special_b = [True, False, False, False, False, False, True]
    assert shared_positions(a, b, special_a, special_b) == ([1, 3, 4], [1, 4, 5])
    # [CLS] he is tall [SEP]  vs  [CLS] he is very tall [SEP]: "very" inserted
    a = [cls, 7, 3, 4, sep]
    b = [cls, 7, 3, 8, 4, sep]
    pa, pb = shared_positions(a, b, [True, *[False] * 3, True], [True, *[False] * 4, True])
    assert (pa, pb) == ([1, 2, 3], [1, 2, 4])
    assert [a[p] for p in pa] == [b[p] for p in pb]
    assert shared_positions(a, a, [False] * 5, [False] * 5) == ([0, 1, 2, 3, 4],) * 2


# --- scores with the tiny masked LM ------------------------------------------------------------

TINY_PAIRS = [
    ("He was strong .", "She was strong .", "stereo", "gender"),
    ("The man cried often .", "The woman cried .", "antistereo", "gender"),
    ("I love my flowers", "I love flowers today !", "stereo", "socioeconomic"),
    ("He said : I am happy", "She said : I was sad yesterday", "stereo", "gender"),
    ("I saw the man", "I saw the man", "antistereo", "age"),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gest_mlm(tmp_path_factory.mktemp("crows") / "mlm")


def tiny_pairs() -> pd.DataFrame:
    table = pd.DataFrame(TINY_PAIRS, columns=["sent_more", "sent_less", "direction", "bias_type"])
    table.insert(0, "pair_id", [10, 11, 12, 13, 14])
    return table


def slow_pll(model_dir: Path, more: str, less: str) -> tuple[float, float]:
    """Plain AutoModelForMaskedLM: each shared token masked alone, log-softmax summed."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    ids = [tok(more)["input_ids"], tok(less)["input_ids"]]
    shared: list[list[int]] = [[], []]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ids[0], ids[1]).get_opcodes():
        if op == "equal":
            shared[0] += list(range(i1, i2))
            shared[1] += list(range(j1, j2))
    scores = []
    for sentence, positions in zip(ids, shared, strict=True):
        total = 0.0
        for p in positions[1:-1]:  # [CLS] and [SEP] are the first and last shared tokens
            masked = list(sentence)
            masked[p] = tok.mask_token_id
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([masked])).logits[0, p]
            total += float(torch.log_softmax(logits, dim=-1)[sentence[p]])
        scores.append(total)
    return scores[0], scores[1]


def test_pll_equals_a_direct_computation(tiny: Path) -> None:
    lm = MaskedLM(str(tiny))
    scores = score_crows(lm, tiny_pairs(), method="pll", show_progress=False)
    assert scores.pair_id.tolist() == [10, 11, 12, 13, 14]
    for row in scores.itertuples():
        more, less = slow_pll(tiny, row.sent_more, row.sent_less)
        assert row.score_more == pytest.approx(more, abs=1e-4)
        assert row.score_less == pytest.approx(less, abs=1e-4)
    assert (scores.skipped == "").all()
    win, neutral = pair_outcomes(scores.score_more, scores.score_less, decimals=3)
    assert scores.win.tolist() == win.tolist() and scores.neutral.tolist() == neutral.tolist()
    assert bool(scores.neutral.iloc[-1])  # identical sentences tie
    exact = score_crows(lm, tiny_pairs(), method="pll", decimals=None)
    assert exact.win.tolist() == (exact.score_more > exact.score_less).astype(int).tolist()


@pytest.mark.parametrize("method", ["aul", "aula"])
def test_aul_and_aula_are_the_unmasked_scores(tiny: Path, method: str) -> None:
    lm = MaskedLM(str(tiny))
    pairs = tiny_pairs()
    scores = score_crows(lm, pairs, method=method)
    for column, sentences in (("score_more", pairs.sent_more), ("score_less", pairs.sent_less)):
        direct = getattr(lm.unmasked(lm.tokenize(sentences.tolist())), method)
        assert np.allclose(scores[column], direct, rtol=0, atol=1e-6)
    assert scores.win.tolist() == (scores.score_more > scores.score_less).astype(int).tolist()
    assert scores.neutral.tolist() == (scores.score_more == scores.score_less).tolist()


def test_too_long_pairs_are_skipped_and_counted(tiny: Path) -> None:
    pairs = tiny_pairs()
    pairs.loc[1, "sent_less"] = " ".join(["happy"] * 70)
    scores = score_crows(MaskedLM(str(tiny)), pairs, method="aul")
    assert np.isnan(scores.score_more[1]) and scores.skipped[1].startswith("sent_less is 72")
    assert (scores.skipped.drop(index=1) == "").all()
    summary = crows_metric(scores, n_bootstrap=10).set_index("bias_type")
    assert summary.loc["overall"].n == 4 and summary.loc["overall"].n_skipped == 1
    assert summary.loc["gender"].n_skipped == 1


def test_score_crows_rejects_bad_input(tiny: Path) -> None:
    lm = MaskedLM(str(tiny))
    with pytest.raises(WeatkitError, match="unknown method"):
        score_crows(lm, tiny_pairs(), method="cps")
    with pytest.raises(WeatkitError, match="sent_less"):
        score_crows(lm, tiny_pairs().drop(columns=["sent_less"]))


# --- data files -------------------------------------------------------------------------------


def test_shipped_pairs(data_dir: Path) -> None:
    en = load_crows()
    assert len(en) == 1508 and en.pair_id.tolist() == list(range(1508))
    assert en.bias_type.value_counts().to_dict() == {
        "race-color": 516, "gender": 262, "socioeconomic": 172, "nationality": 159,
        "religion": 105, "age": 87, "sexual-orientation": 84, "physical-appearance": 63,
        "disability": 60,
    }  # fmt: skip
    assert en.direction.value_counts().to_dict() == {"stereo": 1290, "antistereo": 218}
    gender = en[en.bias_type == "gender"]
    for lang in ("ja", "ru"):
        pairs = load_crows(lang=lang)
        assert len(pairs) == 262 and set(pairs.bias_type) == {"gender"}
        assert pairs.pair_id.tolist() == list(range(262))
        assert pairs.direction.tolist() == gender.direction.tolist()  # same order as English
    assert "医者" in load_crows(lang="ja").sent_more[0]  # English pair 2: "... a doctor ... he"
    assert gender.pair_id.iloc[0] == 2 and "doctor" in gender.sent_more.iloc[0]


def test_mbe_files_are_downloaded_and_checked(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = load_crows(lang="ru")
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path))  # no local copy: download from a mirror
    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        pd.testing.assert_frame_equal(load_crows(lang="ru"), expected)
    mirror = tmp_path / "mirror" / "mbe" / "translated_data"
    mirror.mkdir(parents=True)
    (mirror / "japanese.json").write_text("[]", encoding="utf-8")
    with serve(tmp_path / "mirror") as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        with pytest.raises(WeatkitError, match=r"checksum mismatch for mbe/translated_data/jap"):
            load_crows(lang="ja")
    with pytest.raises(WeatkitError, match="unknown language"):
        load_crows(lang="de")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


HEADER = ",sent_more,sent_less,stereo_antistereo,bias_type\n"


def test_user_csv_and_json(tmp_path: Path) -> None:
    csv = write(tmp_path / "p.csv", HEADER + '5,"A, b",B,Stereo,Gender \n9,C,D,antistereo,age\n')
    pairs = load_crows(csv)
    assert pairs.to_dict("list") == {
        "pair_id": [5, 9], "sent_more": ["A, b", "C"], "sent_less": ["B", "D"],
        "direction": ["stereo", "antistereo"], "bias_type": ["gender", "age"],
    }  # fmt: skip
    no_ids = write(tmp_path / "q.csv", "sent_more,sent_less,direction,bias_type\nA,B,stereo,x\n")
    assert load_crows(no_ids).pair_id.tolist() == [0]
    entries = [{"stereotype": "A", "anti-stereotype": "B", "direction": "stereo",
                "bias_type": "gender", "bias_score": 3}]  # fmt: skip
    js = write(tmp_path / "p.json", json.dumps(entries))
    assert load_crows(js).iloc[0].tolist() == [0, "A", "B", "stereo", "gender"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (",sent_more,sent_less,bias_type\n0,a,b,age\n", "line 1: missing column stereo_antistereo"),
        (HEADER + "0,a,b,stereo,age\n1, ,b,stereo,age\n", "line 3: sent_more is empty"),
        (HEADER + "0,a,b,pro,age\n", "line 2: direction 'pro' must be stereo or antistereo"),
        (HEADER + "0,a,b,stereo,age\n0,c,d,stereo,age\n", "line 3: duplicate pair id 0"),
        (HEADER + "x,a,b,stereo,age\n", "line 2: pair id 'x' is not a 64-bit integer"),
        (HEADER + f"{2**63},a,b,stereo,age\n", "line 2: pair id '9223372036854775808' is not"),
        (HEADER + "0,a,b,stereo,\n", "line 2: bias_type '' is empty"),
        (HEADER + "0,a,b,stereo,overall\n", "line 2: 'overall' is reserved"),
        (HEADER + "0,a,b,stereo\n", "line 2: expected 5 fields"),
        (HEADER, "no sentence pairs"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "bad.csv", text)
    with pytest.raises(WeatkitError) as err:
        load_crows(path)
    assert str(path) in str(err.value) and message in str(err.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"a": 1}, "expected a JSON list"),
        ([{"stereotype": "a", "anti-stereotype": "b", "direction": "stereo"}], "entry 0: missing"),
        ([{"stereotype": "a", "anti-stereotype": 3, "direction": "stereo", "bias_type": "x"}],
         "entry 0: anti-stereotype is empty or not text"),
        (["x"], "entry 0: expected an object"),
    ],
)  # fmt: skip
def test_json_errors_name_file_and_entry(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path / "bad.json", json.dumps(data))
    with pytest.raises(WeatkitError, match=message):
        load_crows(path)
    with pytest.raises(WeatkitError, match="line 1: not valid JSON"):
        load_crows(write(tmp_path / "broken.json", "[{"))


def test_read_pair_scores(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.csv",
        "score_more,score_less,bias_type,direction,extra\n-1,-2,gender,stereo,x\n,-1,age,antistereo,y\n",
    )
    scores = read_pair_scores(path)
    assert scores.pair_id.tolist() == [0, 1] and np.isnan(scores.score_more[1])
    with pytest.raises(WeatkitError, match="line 2: score_more 'abc' is not a number"):
        read_pair_scores(write(tmp_path / "t.csv", "score_more,score_less,bias_type,direction\n"
                                                   "abc,-2,gender,stereo\n"))  # fmt: skip


_fuzz_files = itertools.count()
CELLS = ("stereo", "antistereo", "Stereo", "gender", "0", "1", "-3.5", "", " ", "nan", "overall",
         '"', '"a,b"', "x\ny", "\x00", "é")  # fmt: skip
COLUMNS = ("", "pair_id", "sent_more", "sent_less", "stereo_antistereo", "direction", "bias_type",
           "score_more", "score_less", "other")  # fmt: skip
cells = st.one_of(st.sampled_from(CELLS), st.text(max_size=6))
columns = st.sampled_from(COLUMNS)


GOOD = {
    "": st.integers(0, 9).map(str),
    "pair_id": st.sampled_from([-3, 0, 1, 2, 5, 9, 2**63, -(2**63)]).map(str),
    "sent_more": st.sampled_from(["He is tall.", '"A, b"', "日本語", "x"]),
    "sent_less": st.sampled_from(["She is tall.", "y", '"q ""w"""']),
    "stereo_antistereo": st.sampled_from(["stereo", "antistereo", " Stereo "]),
    "direction": st.sampled_from(["stereo", "antistereo"]),
    "bias_type": st.sampled_from(["gender", "age", "Race-color"]),
    "score_more": st.sampled_from(["-1.5", "0", "", "nan", "2e3"]),
    "score_less": st.sampled_from(["-1.5", "-7", "", "1"]),
    "other": st.text(max_size=3).filter(lambda t: not set(t) & set(',"\r\n')),
}
HEADERS = (
    ["", "sent_more", "sent_less", "stereo_antistereo", "bias_type"],
    ["pair_id", "sent_more", "sent_less", "direction", "bias_type", "other"],
    ["score_more", "score_less", "bias_type", "direction"],
    ["pair_id", "bias_type", "stereo_antistereo", "score_less", "score_more", "sent_more"],
)


@st.composite
def csv_files(draw) -> bytes:
    """CrowS-like CSV files, mostly well-formed, with random defects."""
    if draw(st.integers(0, 3)):
        header = list(draw(st.sampled_from(HEADERS)))
    else:
        header = draw(st.lists(columns, min_size=0, max_size=7))
    lines = [",".join(header)]
    for _ in range(draw(st.integers(0, 5))):
        if draw(st.integers(0, 5)):  # a well-formed row, maybe with one bad cell
            row = [draw(GOOD[col]) for col in header]
            if row and not draw(st.integers(0, 4)):
                row[draw(st.integers(0, len(row) - 1))] = draw(cells)
        else:
            row = [draw(cells) for _ in range(draw(st.integers(0, 7)))]
        lines.append(",".join(row))
    data = draw(st.sampled_from(["\n", "\r\n"])).join(lines).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0:
        data = data.replace(b"e", b"\xff")
    return data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=csv_files(), reader=st.sampled_from([load_crows, read_pair_scores]))
def test_fuzz_csv_readers_raise_only_weatkit_errors(tmp_path_factory, data, reader) -> None:
    path = tmp_path_factory.getbasetemp() / f"fuzz{next(_fuzz_files)}.csv"
    path.write_bytes(data)
    try:
        table = reader(path)
    except WeatkitError as err:
        assert "\n" not in str(err)
        return
    assert len(table) > 0 and table.pair_id.is_unique
    assert set(table.direction) <= {"stereo", "antistereo"}


# --- the command line ---------------------------------------------------------------------------


def invoke(*args: str):
    return CliRunner().invoke(main, ["crows", *args])


def test_cli_end_to_end(tiny: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    tiny_pairs().rename(columns={"direction": "stereo_antistereo"}).to_csv(data, index=False)
    out = tmp_path / "out"
    res = invoke("--model", str(tiny), "--data", str(data), "--out", str(out), "--format", "csv",
                 "--bootstrap", "200", "--seed", "3", "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    printed = pd.read_csv(io.StringIO(res.stdout))
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False, na_values=[""])
    summary = pd.read_csv(out / "summary.csv")
    pd.testing.assert_frame_equal(printed, summary)
    direct = score_crows(MaskedLM(str(tiny)), tiny_pairs(), method="pll")
    assert pairs.pair_id.tolist() == direct.pair_id.tolist()
    assert np.allclose(pairs.score_more, direct.score_more, atol=1e-9)
    assert pairs.win.tolist() == direct.win.tolist()
    expected = crows_metric(direct, n_bootstrap=200, seed=3)
    assert np.allclose(summary.metric, expected.metric, equal_nan=True)
    assert np.allclose(summary.ci_low, expected.ci_low, equal_nan=True)
    assert summary.bias_type.tolist() == ["overall", "age", "gender", "socioeconomic"]
    # the --scores mode recomputes the same summary from the pairs file (3 decimals as pll)
    res = invoke("--scores", str(out / "pairs.csv"), "--decimals", "3", "--format", "csv",
                 "--bootstrap", "200", "--seed", "3")  # fmt: skip
    assert res.exit_code == 0, res.output
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(res.stdout)), summary)
    # --bias-type, AULA and the readable table
    res = invoke("--model", str(tiny), "--data", str(data), "--method", "aula",
                 "--bias-type", "gender", "--no-progress")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "overall" in res.stdout and "gender" in res.stdout and "age" not in res.stdout


def test_cli_limit_scores_a_stratified_sample(tiny: Path, tmp_path: Path) -> None:
    """--limit 4 of 10 pairs (gender 5, age 3, socioeconomic 2): q = (2.0, 1.2, 0.8) gives
    gender 2, age 1, socioeconomic 1; the note, the manifest and the pairs say so."""
    rows = [(*TINY_PAIRS[k % 5][:3], bias) for k, bias in enumerate(
        ["gender"] * 5 + ["age"] * 3 + ["socioeconomic"] * 2)]  # fmt: skip
    table = pd.DataFrame(rows, columns=["sent_more", "sent_less", "stereo_antistereo", "bias_type"])
    table.insert(0, "pair_id", range(100, 110))
    data = tmp_path / "pairs.csv"
    table.to_csv(data, index=False)
    out = tmp_path / "out"
    args = ("--model", str(tiny), "--data", str(data), "--bootstrap", "0", "--no-progress",
            "--limit", "4", "--seed", "5")  # fmt: skip
    res = invoke(*args, "--out", str(out))
    assert res.exit_code == 0, res.output
    note = "note: scoring a sample of 4 of 10 pairs, stratified by bias type (seed 5) (--limit)"
    assert note in res.stderr
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False)
    assert pairs.bias_type.value_counts().to_dict() == {"gender": 2, "age": 1, "socioeconomic": 1}
    summary = pd.read_csv(out / "summary.csv")
    assert summary.set_index("bias_type").n.to_dict()["overall"] == 4
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["contextual"]["batch_size"] == 32  # the loading options of the --model run
    assert {k: v for k, v in manifest.items() if k != "contextual"} == {
        "command": "weatkit crows",
        "weatkit_version": weatkit.__version__,
        "log_items": None,
        "sample": {
            "limit": 4, "seed": 5, "n_items": 10, "unit": "pairs", "stratified_by": "bias type",
            "strata": {"age": {"n": 1, "of": 3}, "gender": {"n": 2, "of": 5},
                       "socioeconomic": {"n": 1, "of": 2}},
        },
    }  # fmt: skip
    # the same seed draws the same pairs; the library function too
    again = invoke(*args, "--format", "csv", "--table", "pairs")
    assert pd.read_csv(io.StringIO(again.stdout)).pair_id.tolist() == pairs.pair_id.tolist()
    from weatkit.measures import crows

    result = crows(str(tiny), data=data, limit=4, seed=5, n_bootstrap=0, show_progress=False)
    assert result.pairs.pair_id.tolist() == pairs.pair_id.tolist()
    assert result.sample is not None and result.sample.to_dict() == manifest["sample"]
    assert result.measures[0].n == 4 and "sample of 4 of 10 pairs" in result.measures[0].method
    # --limit 10 (all the pairs) is no sample: no note, no sample in the manifest
    res = invoke(*args[:-4], "--limit", "10", "--out", str(tmp_path / "all"))
    assert res.exit_code == 0 and "sample" not in res.stderr
    assert "sample" not in json.loads((tmp_path / "all" / "manifest.json").read_text())


@pytest.mark.parametrize("value", ["0", "-2", "2.5", "x"])
def test_cli_bad_limit_is_one_line(value: str) -> None:
    res = invoke("--scores", "s.csv", "--limit", value)
    assert res.exit_code == 1
    assert len(res.output.strip().splitlines()) == 1 and "--limit: " in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "exactly one of --model"),
        (("--scores", "s.csv", "--model", "m"), "exactly one of --model"),
        (("--scores", "s.csv", "--lang", "ja"), "--lang is for --model"),
        (("--scores", "s.csv", "--method", "aul"), "--method is for --model"),
        (("--scores", "missing.csv"), "scores file not found"),
        (("--scores", "s.csv", "--bias-type", "religion"), "--bias-type 'religion'"),
        (("--scores", "s.csv", "--decimals", "x"), "--decimals 'x'"),
        (("--model", "MODEL", "--data", "bad.csv"), "bad.csv: line 2: direction"),
        (("--model", "MODEL", "--lang", "ja", "--data", "bad.csv"), "--lang or --data"),
        (("--scores", "s.csv", "--limit", "3"), "--limit is for --model"),
    ],
)
def test_cli_errors_are_one_line(tiny: Path, tmp_path: Path, args, message: str) -> None:
    write(tmp_path / "s.csv", "score_more,score_less,bias_type,direction\n-1,-2,gender,stereo\n")
    write(tmp_path / "bad.csv", HEADER + "0,a,b,sideways,age\n")
    paths = {"s.csv", "missing.csv", "bad.csv"}
    resolved = [str(tmp_path / a) if a in paths else str(tiny) if a == "MODEL" else a for a in args]
    res = invoke(*resolved)
    assert res.exit_code == 1
    assert len(res.output.strip().splitlines()) == 1 and message in res.output


def test_the_summary_says_how_ties_count_and_flags_a_degenerate_interval(tmp_path: Path) -> None:
    # issue 37 §4: overall 43.50 below both stereo 49.65 and antistereo 51.61 because the ties
    # stay in the overall denominator; a group of 2 pairs both preferred: 100.00 [100.00, 100.00]
    rows = [  # gender: 2 stereo pairs preferred; race: 1 win, 1 loss, 2 ties
        ("gender", "stereo", -1.0, -2.0), ("gender", "stereo", -1.0, -3.0),
        ("race", "stereo", -1.0, -2.0), ("race", "antistereo", -2.0, -1.0),
        ("race", "stereo", -1.0, -1.0), ("race", "antistereo", -4.0, -4.0),
    ]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["bias_type", "direction", "score_more", "score_less"])
    frame.to_csv(tmp_path / "s.csv", index=False)
    res = CliRunner().invoke(
        main, ["crows", "--scores", str(tmp_path / "s.csv"), "--bootstrap", "200"], color=False
    )
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    overall = next(line for line in lines if "overall" in line)
    # 3 of 6 pairs preferred = 50.00; stereo 3 of 3 untied = 100.00, antistereo 0 of 1 = 0.00
    cells = r"overall\s*│\s*6\s*│\s*2\s*│\s*50\.00 \[[\d.]+, [\d.]+\]\s*│\s*100\.00\s*│\s*0\.00"
    assert re.search(cells, overall), overall
    gender = next(line for line in lines if "gender" in line)
    assert "100.00 [100.00, 100.00] ‡" in gender
    race = next(line for line in lines if "race" in line)
    assert "‡" not in race
    text = " ".join(res.stdout.split())
    assert "a tie (equal scores) counts as not preferring it and stays in the denominator (2 of " \
        "6 pairs here)" in text
    assert "‡ degenerate CI: every bootstrap resample gives the same value" in text
