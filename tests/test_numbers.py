"""The one number format (issue 37 §4): the digits shown never contradict a flag.

A flag says whether an interval excludes its neutral value; the printed interval, read back,
must say the same, and ``low ≤ estimate ≤ high`` must hold in the digits whenever it holds in
the values (:mod:`weatkit.report.numbers`).
"""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from weatkit.report.numbers import estimate_decimals, format_estimate, format_p

_CELL = re.compile(r"^(\S+) \[(\S+), (\S+)\]$")


def _parse(text: str) -> tuple[float, float, float]:
    match = _CELL.match(text)
    assert match, text
    est, low, high = (float(g) for g in match.groups())
    return est, low, high


def _excludes(low: float, high: float, neutral: float) -> bool:
    return not low <= neutral <= high


def test_the_compare_gest_row_shows_its_distance_from_1() -> None:
    # tiny-3's gest:g_s of examples/offline: printed 1.000 [1.000, 1.000]* before
    text = format_estimate(
        1.0001531901275182, 1.0000188981588203, 1.0002886904653334, neutral=1.0, decimals=3
    )
    assert text == "1.00015 [1.00002, 1.00029]"


def test_an_interval_that_is_not_one_point_is_not_printed_as_one() -> None:
    # tiny-1's gest:g_s: contains 1, so no star, but [1.000, 1.000] read as degenerate
    text = format_estimate(
        1.000048187967816, 0.9999357192443455, 1.000136266407478, neutral=1.0, decimals=3
    )
    assert text == "1.0000 [0.9999, 1.0001]"
    assert format_estimate(1.0, 1.0, 1.0, neutral=1.0) == "1.000 [1.000, 1.000]"


def test_a_wide_interval_keeps_the_requested_decimals() -> None:
    assert format_estimate(61.4247, 56.9892, 65.3226, neutral=50.0, decimals=2) == (
        "61.42 [56.99, 65.32]"
    )
    assert format_estimate(0.5, decimals=2) == "0.50"
    assert format_estimate(math.nan, decimals=2) == "–"
    assert estimate_decimals(0.5, decimals=2) == 2


def test_p_values() -> None:
    assert [format_p(p) for p in (9.999e-05, 1e-4, 0.0548)] == ["< 1e-4", "0.0001", "0.0548"]


_centre = st.floats(-1e4, 1e4, allow_nan=False)
_offset = st.one_of(
    st.floats(-1e-2, 1e-2, allow_nan=False),
    st.floats(-1e-6, 1e-6, allow_nan=False),
    st.floats(-100, 100, allow_nan=False),
    st.just(0.0),
)


@settings(max_examples=2000, deadline=None)
@given(_centre, st.lists(_offset, min_size=3, max_size=3), _offset, st.integers(0, 4))
def test_digits_never_contradict_the_flag(
    neutral: float, offsets: list[float], shift: float, decimals: int
) -> None:
    low, est, high = sorted(neutral + shift + o for o in offsets)
    text = format_estimate(est, low, high, neutral=neutral, decimals=decimals)
    p_est, p_low, p_high = _parse(text)
    assert _excludes(p_low, p_high, neutral) == _excludes(low, high, neutral), text
    assert p_low <= p_est <= p_high, text
    if low < high:
        assert p_low < p_high, text
    assert len(text.split(" [")[0].split(".")[-1]) >= decimals or decimals == 0
