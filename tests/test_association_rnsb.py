"""RNSB (weatkit.association.rnsb) equals a plain loop with scikit-learn's logistic regression
and scipy's KL divergence, trains the classifier WEFE 1.0.1 trains (same split, same fit) for the
same random_state, reports the spread over classifier seeds, and recomputes every bootstrap
resample as a loop would."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

import weatkit
from tests import naive_association as naive
from weatkit.errors import WeatkitError
from weatkit.stats.resampling import bootstrap_draws

GROUPS = {"female": naive.FEMALE[:4], "male": naive.MALE[:4], "jobs": naive.OCCUPATIONS[:5]}


def _negative_probabilities(neg, pos, targets, seed=0, holdout=0.0) -> list[np.ndarray]:
    """WEFE's _train_classifier and predict_proba: positive words first (+1), negative (−1)."""
    x = np.concatenate([pos, neg])
    y = np.concatenate([np.ones(len(pos)), -np.ones(len(neg))])
    if holdout:
        x, _, y, _ = train_test_split(
            x, y, shuffle=True, random_state=seed, test_size=holdout, stratify=y
        )
    model = LogisticRegression(solver="liblinear", max_iter=10000, random_state=seed).fit(x, y)
    column = list(model.classes_).index(-1)
    return [model.predict_proba(t)[:, column] for t in targets]


def test_rnsb_equals_the_loop_on_glove() -> None:
    glove = naive.glove()
    targets = [naive.rows(words) for words in GROUPS.values()]
    neg, pos = naive.rows(naive.UNPLEASANT), naive.rows(naive.PLEASANT)
    for over in ("sets", "words"):
        res = weatkit.rnsb(
            GROUPS, naive.UNPLEASANT, naive.PLEASANT, vectors=glove, over=over, n_bootstrap=0
        )
        probabilities = _negative_probabilities(neg, pos, targets)
        assert res.statistic == pytest.approx(naive.rnsb_kl(probabilities, over), rel=1e-9)
        flat = np.concatenate(probabilities)
        assert list(res.negative_probability.values()) == pytest.approx(flat, rel=1e-9)
    assert list(res.distribution) == [w for words in GROUPS.values() for w in words]
    by_set = weatkit.rnsb(GROUPS, naive.UNPLEASANT, naive.PLEASANT, vectors=glove, n_bootstrap=0)
    assert list(by_set.distribution) == list(GROUPS)
    assert sum(by_set.distribution.values()) == pytest.approx(1.0)


def test_rnsb_trains_what_wefe_trains_for_the_same_random_state() -> None:
    """WEFE: holdout=True (80/20, stratified, random_state), KL over the words by
    scipy.stats.entropy(P, uniform)."""
    rng = np.random.default_rng(5)
    targets = [rng.normal(size=(3, 6)) for _ in range(4)]
    neg, pos = rng.normal(size=(10, 6)) - 0.3, rng.normal(size=(10, 6)) + 0.3
    for seed in (0, 11):
        res = weatkit.rnsb(targets, neg, pos, holdout=0.2, over="words", seed=seed, n_bootstrap=0)
        p = np.concatenate(_negative_probabilities(neg, pos, targets, seed, holdout=0.2))
        p = p / p.sum()
        assert res.statistic == pytest.approx(entropy(p, np.full(len(p), 1 / len(p))), rel=1e-9)


def test_rnsb_reports_the_spread_over_classifier_seeds() -> None:
    rng = np.random.default_rng(8)
    targets = [rng.normal(size=(4, 6)) for _ in range(3)]
    neg, pos = rng.normal(size=(10, 6)) - 0.2, rng.normal(size=(10, 6)) + 0.2
    res = weatkit.rnsb(targets, neg, pos, holdout=0.2, n_seeds=8, seed=3, n_bootstrap=0)
    expected = [
        naive.rnsb_kl(_negative_probabilities(neg, pos, targets, 3 + i, holdout=0.2), "sets")
        for i in range(8)
    ]
    np.testing.assert_allclose(res.seed_statistics, expected, rtol=1e-9)
    assert res.statistic == pytest.approx(np.mean(expected))
    assert res.seed_std == pytest.approx(np.std(expected, ddof=1)) and res.seed_std > 0
    # without a holdout the regularised fit has one optimum: the seeds agree
    fixed = weatkit.rnsb(targets, neg, pos, n_seeds=4, n_bootstrap=0)
    assert fixed.seed_std < 1e-6 * fixed.statistic
    assert np.isnan(weatkit.rnsb(targets, neg, pos, n_bootstrap=0).seed_std)


def test_rnsb_bootstrap_trains_one_classifier_per_resample() -> None:
    rng = np.random.default_rng(9)
    T1, T2 = rng.normal(size=(3, 5)), rng.normal(size=(4, 5))
    neg, pos = rng.normal(size=(6, 5)) - 0.5, rng.normal(size=(7, 5)) + 0.5
    res = weatkit.rnsb([T1, T2], neg, pos, n_bootstrap=12, seed=4)
    d1, d2, d_neg, d_pos = bootstrap_draws((3, 4, 6, 7), 12, seed=4, scheme="weat")
    expected = []
    for r in range(12):
        p1, p2 = _negative_probabilities(neg[d_neg[r]], pos[d_pos[r]], [T1, T2], seed=4 + r)
        expected.append(naive.rnsb_kl([p1[d1[r]], p2[d2[r]]], "sets"))
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-8)


def test_rnsb_negative_probability_is_predict_proba_bit_for_bit() -> None:
    """prob_negative computes predict_proba's operations without its checks: the same bits, for
    WEFE's liblinear and for another solver."""
    from weatkit.association.rnsb import prob_negative

    rng = np.random.default_rng(3)
    for seed, params in enumerate(({"solver": "liblinear"}, {"solver": "lbfgs", "C": 0.5})):
        x, y = rng.normal(size=(30, 8)), np.repeat([1.0, -1.0], 15)
        model = LogisticRegression(random_state=seed, **params).fit(x, y)
        rows = rng.normal(size=(11, 8))
        np.testing.assert_array_equal(prob_negative(model, rows), model.predict_proba(rows)[:, 0])


def test_rnsb_errors() -> None:
    rng = np.random.default_rng(0)
    T, neg, pos = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    with pytest.raises(WeatkitError, match=r"^rnsb: needs at least 2 target sets, got 1$"):
        weatkit.rnsb([T], neg, pos)
    with pytest.raises(WeatkitError, match=r"^holdout: must be a share in \[0, 1\), got 1$"):
        weatkit.rnsb([T, T], neg, pos, holdout=1)
    with pytest.raises(WeatkitError, match=r"^rnsb: cannot hold out 0.2 of 1 positive and 3 neg"):
        weatkit.rnsb([T, T], neg, pos[:1], holdout=0.2, n_bootstrap=0)
    with pytest.raises(WeatkitError, match=r"^over: must be one of sets, words, got 'terms'$"):
        weatkit.rnsb([T, T], neg, pos, over="terms")
    with pytest.raises(WeatkitError, match=r"^rnsb: classifier \{.*'C': -1\}: .*C"):
        weatkit.rnsb([T, T], neg, pos, classifier={"C": -1}, n_bootstrap=0)
    with pytest.raises(WeatkitError, match=r"^rnsb: classifier \{.*'depth': 3\}: .*depth"):
        weatkit.rnsb([T, T], neg, pos, classifier={"depth": 3}, n_bootstrap=0)
