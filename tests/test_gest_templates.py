"""Kendall's W and the between-template spread of GEST (issue 19.6) against hand computations."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import aggregate_by_template, kendall_w, template_spread


def test_kendall_w_hand_worked_examples() -> None:
    # 3 raters, 4 items: R = 6, 7, 8, 9; S = 5; W = 12·5 / (9·(64 − 4)) = 1/9
    assert kendall_w(np.array([[1, 2, 3, 4], [1, 2, 3, 4], [4, 3, 2, 1]])) == pytest.approx(1 / 9)
    # ties: R = 2.5, 3.5, 6; S = 6.5; T = 2³ − 2 = 6; W = 78 / (4·24 − 2·6) = 78/84
    assert kendall_w(np.array([[1, 2, 3], [1.5, 1.5, 3]])) == pytest.approx(78 / 84)
    assert kendall_w(np.array([[1, 2, 3], [1, 2, 3]])) == pytest.approx(1.0)
    assert math.isnan(kendall_w(np.array([[1, 2, 3]])))


def test_template_spread_of_three_templates() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for template in (0, 1, 2):
        for stereotype in range(1, 17):
            for score in rng.normal(0.05 * stereotype * (template + 1) / 16, 0.1, size=4):
                rows.append((template, stereotype, score))
    scores = pd.DataFrame(rows, columns=["template", "stereotype", "score"])
    result = aggregate_by_template(scores, n_bootstrap=0)
    spread = template_spread(result).iloc[0]
    # g_s per template by hand: exp(mean of the male-stereotype means − the female ones)
    g_s = []
    ranks = []
    for template in (0, 1, 2):
        part = scores[scores.template == template]
        means = [part[part.stereotype == s].score.mean() for s in range(1, 17)]
        g_s.append(math.exp(sum(means[7:]) / 9 - sum(means[:7]) / 7))
        order = sorted(range(16), key=lambda i: means[i])
        rank = [0] * 16
        for position, i in enumerate(order, 1):
            rank[i] = position
        ranks.append(rank)
    assert spread.n_templates == 3
    assert spread.g_s_sd == pytest.approx(statistics.stdev(g_s), rel=1e-9)
    assert spread.g_s_range == pytest.approx(max(g_s) - min(g_s), rel=1e-9)
    totals = [sum(r[i] for r in ranks) for i in range(16)]
    mean = sum(totals) / 16
    s = sum((t - mean) ** 2 for t in totals)
    assert spread.kendall_w == pytest.approx(12 * s / (9 * (16**3 - 16)), rel=1e-9)
    with pytest.raises(WeatkitError, match="no template column"):
        template_spread(aggregate_by_template(scores.drop(columns="template"), n_bootstrap=0))
