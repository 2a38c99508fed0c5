"""Progress without a terminal: log lines at a rate, and the up-front estimate of model scoring
(issue 17, item 5)."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import weatkit.models.batching as batching
import weatkit.progress as progress_module
from tests.test_crows import TINY_PAIRS
from tests.tiny_models import make_gest_mlm
from weatkit.cli import main
from weatkit.progress import duration, progress, progress_line

LINE = re.compile(r"^(?P<desc>.+): (?P<n>\d+)/(?P<total>\d+) (?P<unit>\S+) \((?P<pct>\d+)%\)")


def test_duration_and_line_text() -> None:
    assert [duration(s) for s in (0, 44.6, 130, 3599, 3900)] == [
        "0s", "45s", "2m10s", "59m59s", "1h05m",
    ]  # fmt: skip
    # 320 of 1508 in 130 s: 130 / 320 * 1188 = 482.6 s left
    assert progress_line("crows", 320, 1508, "pair", 130.0) == (
        "crows: 320/1508 pairs (21%), 2m10s elapsed, ~8m03s left"
    )
    assert progress_line("training", 3, 3, "corpus", 5.0) == (
        "training: 3/3 corpora (100%), 5s elapsed"
    )
    assert progress_line("x", 2, None, "pass", 1.0) == "x: 2 passes, 1s elapsed"


def _updates(steps: list[int], show: bool | None) -> None:
    with progress(total=sum(steps), desc="work", unit="item", show=show) as bar:
        for k in steps:
            bar.update(k)


def test_log_lines_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress_module, "LOG_EVERY_S", 0.0)
    _updates([3, 3, 4], show=None)
    err = capsys.readouterr().err.splitlines()
    assert [LINE.match(line).group("n", "total", "pct") for line in err] == [
        ("3", "10", "30"), ("6", "10", "60"), ("10", "10", "100"),
    ]  # fmt: skip
    assert all(line.startswith("work: ") and "\r" not in line for line in err)
    _updates([3, 3, 4], show=False)  # --no-progress: silent
    assert capsys.readouterr().err == ""
    for item in progress(["a", "b"], desc="loop", unit="corpus", show=True):
        assert item in ("a", "b")
    assert capsys.readouterr().err.splitlines()[-1].startswith("loop: 2/2 corpora (100%)")


def test_short_work_prints_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress_module, "LOG_EVERY_S", 30.0)  # the default (conftest: inf)
    _updates([3, 3, 4], show=None)
    assert capsys.readouterr().err == ""


class _FakeClock:
    """A clock that moves only when a fake forward pass says it took time."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def _timed_run(
    monkeypatch: pytest.MonkeyPatch, lengths: list[int], seconds: Callable[[int, list[int]], float]
) -> tuple[list[str], float]:
    """run_batches over items of ``lengths`` (batch size 8), batch ``b`` taking ``seconds(b,
    its lengths)`` on a fake clock; the note lines printed and the total seconds."""
    clock = _FakeClock()
    monkeypatch.setattr(batching, "time", clock)
    monkeypatch.setattr(progress_module, "LOG_EVERY_S", 30.0)
    notes: list[str] = []
    monkeypatch.setattr(progress_module, "note", notes.append)
    calls = iter(range(len(lengths)))

    def compute(batch: list[int]) -> np.ndarray:
        clock.now += seconds(next(calls), batch)
        return np.zeros(len(batch))

    batching.run_batches(lengths, compute, length=lambda n: n, batch_size=8, desc="PLL with m",
                         model_name="m", device="cpu", inputs="for 3 sentences")  # fmt: skip
    return notes, clock.now


@pytest.mark.parametrize("per_token", [0.0, 0.002])  # the fixed part dominates, or the tokens
def test_the_estimate_leaves_the_warm_up_out_and_is_within_2x(
    monkeypatch: pytest.MonkeyPatch, per_token: float
) -> None:
    """A first batch of 20 s (warm-up), then 0.1 s a batch plus ``per_token`` s a padded token:
    the estimate is made once the later batches ran 5 s, from their pace, and is within a factor
    2 of the total (extrapolated from the first batch, it was 20 to 50 times too long)."""
    lengths = [10 + i // 40 for i in range(2000)]  # 250 batches of 8 items, 10 to 59 tokens

    def seconds(call: int, batch: list[int]) -> float:
        return 20.0 if call == 0 else 0.1 + per_token * len(batch) * max(batch)

    notes, total = _timed_run(monkeypatch, lengths, seconds)
    assert len(notes) == 1, notes
    found = re.fullmatch(
        r"PLL with m: 2000 forward passes for 3 sentences on cpu, batch size 8 \(250 batches\); "
        r"(\d+) done in (\S+), roughly (\S+) in all",
        notes[0],
    )
    assert found is not None, notes[0]
    assert total / 2 <= _seconds(found[3]) <= total * 2, (notes[0], total)


def test_the_estimate_waits_until_the_pace_settles(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the cold first batch, 8 batches of 0.45 s (as measured with two OpenMP threads on
    a loaded machine), then 0.02 s a batch: made from the first 5 s the estimate would be 5
    times too long; it is made once the later half of the batches run the pace of all of them
    (about 344 batches in), and is within a factor 2 of the total."""

    def seconds(call: int, batch: list[int]) -> float:
        return 20.0 if call == 0 else 0.45 if call < 9 else 0.02

    notes, total = _timed_run(monkeypatch, [10] * 16_000, seconds)
    assert len(notes) == 1, notes
    found = re.search(r"; (\d+) done in \S+, roughly (\S+) in all$", notes[0])
    assert found is not None, notes[0]
    assert int(found[1]) > 300
    assert total / 2 <= _seconds(found[2]) <= total * 2, (notes[0], total)


def _seconds(text: str) -> float:
    """``2m10s`` -> 130 (:func:`weatkit.progress.duration`'s format)."""
    found = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    assert found is not None and text, text
    h, m, s = (int(x or 0) for x in found.groups())
    return 3600 * h + 60 * m + s


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gest_mlm(tmp_path_factory.mktemp("progress") / "mlm")


def _maskable_tokens(model_dir: Path, more: str, less: str) -> int:
    """Shared non-special tokens of a pair, in both sentences (Nangia et al.'s U(S))."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    a, b = tok(more)["input_ids"], tok(less)["input_ids"]
    special = set(tok.all_special_ids)
    shared = 0
    for op, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if op == "equal":
            shared += sum(1 for t in a[i1:i2] if t not in special)
    return 2 * shared


@pytest.mark.slow
def test_crows_pll_logs_its_forward_passes(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_module, "LOG_EVERY_S", 0.0)
    monkeypatch.setattr(batching, "ESTIMATE_AFTER_S", 0.0)  # the line after 2 timed batches
    monkeypatch.setattr(batching, "SETTLED", math.inf)
    pairs = TINY_PAIRS[:4]
    assert len({s for more, less, *_ in pairs for s in (more, less)}) == 8  # no repeated sentence
    data = tmp_path / "pairs.csv"
    rows = ["sent_more,sent_less,stereo_antistereo,bias_type"]
    rows += [",".join(p) for p in pairs]
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    res = CliRunner().invoke(
        main,
        ["crows", "--model", str(tiny), "--data", str(data), "--batch-size", "4",
         "--bootstrap", "0", "--no-cache", "--format", "csv"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    expected = sum(_maskable_tokens(tiny, more, less) for more, less, *_ in pairs)
    estimate = [line for line in res.stderr.splitlines() if "forward passes" in line]
    assert len(estimate) == 1
    found = re.search(r": (\d+) forward passes for (\d+) sentences on cpu, batch size 4 \((\d+) ",
                      estimate[0])  # fmt: skip
    assert found is not None, estimate
    assert int(found[1]) == expected and int(found[2]) == 8
    assert int(found[3]) == -(-expected // 4)  # batches
    counts = [LINE.match(line) for line in res.stderr.splitlines() if LINE.match(line)]
    assert [int(m["n"]) for m in counts] == [*range(4, expected, 4), expected]
    assert {(m["total"], m["unit"]) for m in counts} == {(str(expected), "passes")}
    # --no-progress: no estimate and no progress lines
    quiet = CliRunner().invoke(
        main,
        ["crows", "--model", str(tiny), "--data", str(data), "--batch-size", "4",
         "--bootstrap", "0", "--no-cache", "--format", "csv", "--no-progress"],
    )  # fmt: skip
    assert quiet.exit_code == 0 and quiet.stdout == res.stdout
    assert "passes" not in quiet.stderr
