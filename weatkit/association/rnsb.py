"""RNSB, the relative negative sentiment bias (Sweeney & Najafian, ACL 2019).

A logistic regression is trained on word vectors of negative and positive words (the paper: the
Bing Liu sentiment lexicon) and gives every target word t its probability of being negative,
p(t). For target sets T_1 … T_m (the paper: one identity term each, e.g. "american",
"mexican")::

    q_k  = mean_{t∈T_k} p(t)                  P_k = q_k / Σ_j q_j
    RNSB = KL(P ‖ U) = Σ_k P_k log(m · P_k)    U the uniform distribution over the m sets

0 when every set is equally negative (the neutral value); larger, more bias, whatever its
direction (the statistic is unsigned, the stereotypical side *above*). With one word per set
this is the paper's definition. ``over="words"`` makes every target word an outcome of its own
(P over all the words, U uniform over them), as WEFE does.

**The classifier.** ``sklearn.linear_model.LogisticRegression(solver="liblinear",
max_iter=10000, random_state=seed)`` — WEFE's defaults (and ``liblinear`` was scikit-learn's
default solver when the paper was written); ``classifier`` overrides any of its parameters. The
positive words are stacked first with label +1, the negative ones after with label −1, as WEFE
does. ``holdout`` (a share, 0 by default: train on every attribute word) holds that share of the
attribute words out, stratified, by ``train_test_split(shuffle=True, random_state=seed,
stratify=labels)`` (``accuracy`` is then the held-out accuracy, else the training accuracy).

**WEFE 1.0.1** (``wefe.metrics.RNSB.run_query``) takes the attribute sets as [positive,
negative], normalises over the words (``over="words"``), and holds out 20% by default
(``holdout=True``), with a fresh random split (and liblinear shuffle) every call unless
``random_state`` is given; ``n_iterations`` averages the KL of that many classifiers. weatkit
``holdout=0.2, over="words", n_seeds=1, seed=s`` trains the classifier WEFE trains with
``random_state=s`` (same split, same fit).

**Seeds.** RNSB depends on the classifier: ``n_seeds`` classifiers are trained with seeds
``seed, seed + 1, …``; ``statistic`` is the mean of their KL (WEFE's ``n_iterations``
average), ``seed_statistics`` the KL of each and ``seed_std`` their standard deviation (ddof 1),
the spread due to the classifier alone. Without a holdout it is only the solver's tolerance (the
regularised fit has one optimum); WEFE's random 80/20 splits make it large (see the docs page).

**Bootstrap** (:mod:`weatkit.association._common`): the target sets, then the negative and the
positive words are resampled, in this order; resample r trains one classifier (seed
``seed + r``) on its resampled attribute words (repeats included) and re-weights the targets, so
the interval covers the word lists and the classifier's randomness. One fit per resample: this
loop is the cost of RNSB (about 1 ms of CPU a fit on 50 attribute words of 300 dimensions, so
about 1 s for the default 1,000 resamples; it grows with the attribute lists, e.g. the 6,800
words of the Bing Liu lexicon). The refits skip scikit-learn's checks of the parameters and
of finite values (the first fit made them) and the accuracy, and the probabilities are
``predict_proba``'s operations without its checks: the same numbers, in 60% of the CPU time.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from weatkit.association._common import (
    AssociationResult,
    Inputs,
    Vectors,
    WordSet,
    WordSets,
    check_choice,
    check_resampling,
    resampled,
)
from weatkit.errors import ConfigError
from weatkit.stats.resampling import bootstrap_draws, counts_from_indices

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors

OVER = ("sets", "words")
#: The classifier's parameters unless ``classifier`` overrides them (WEFE's).
CLASSIFIER = {"solver": "liblinear", "max_iter": 10000}
#: Largest magnitude of a value the liblinear solver is given (sklearn's limit for the largest).
_LIBLINEAR_MAX = 1e30
#: Default bootstrap resamples: each trains a classifier.
N_BOOTSTRAP = 1000


@dataclass(frozen=True, kw_only=True)
class RnsbResult(AssociationResult):
    """RNSB (the mean KL over the classifier seeds) with its bootstrap interval.

    Attributes:
        distribution: P, over the target sets (or words), from the mean probabilities.
        negative_probability: p(t) per target word, the mean over the seeds.
        seed_statistics: the KL of each classifier seed; seed_std: their standard deviation
            (ddof 1; NaN with one seed).
        accuracy: the classifiers' mean accuracy (held-out with ``holdout``, else training).
        over, holdout: how it was computed.
    """

    distribution: dict[str, float]
    negative_probability: dict[str, float]
    seed_statistics: np.ndarray
    seed_std: float
    accuracy: float
    over: str
    holdout: float


def rnsb(
    targets: WordSets,
    negative: WordSet,
    positive: WordSet,
    *,
    vectors: WordVectors | None = None,
    over: str = "sets",
    holdout: float = 0.0,
    n_seeds: int = 1,
    classifier: Mapping[str, Any] | None = None,
    normalize: bool = False,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> RnsbResult:
    """The relative negative sentiment bias of two or more target sets.

    Args:
        targets: the target sets (at least 2; a list, or a mapping name -> set).
        negative, positive: the words the classifier learns negative and positive from.
        vectors: the word vectors the words are looked up in.
        over: ``sets`` (P over the target sets) or ``words`` (over the words, WEFE).
        holdout: share of the attribute words held out of training (WEFE: 0.2).
        n_seeds: classifiers trained (seeds ``seed``, ``seed + 1``, ...), their KL averaged.
        classifier: ``LogisticRegression`` parameters overriding :data:`CLASSIFIER`.
        normalize: unit vectors first (WEFE's default is False).
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> neg, pos = np.array([[-1.0, 0.0], [-2.0, 0.5]]), np.array([[1.0, 0.0], [2.0, 0.5]])
        >>> res = rnsb([np.array([[-1.0, 1.0]]), np.array([[1.0, 1.0]])], neg, pos,
        ...            n_bootstrap=0)
        >>> res.distribution["target set 1"] > 0.5, round(res.statistic, 3)
        (True, 0.112)
    """
    check_resampling(n_bootstrap, confidence_level, seed)
    check_choice("over", over, OVER)
    if not 0 <= holdout < 1:
        raise ConfigError(f"must be a share in [0, 1), got {holdout}", field="holdout")
    if n_seeds < 1:
        raise ConfigError(f"must be >= 1, got {n_seeds}", field="n_seeds")
    inputs = Inputs("rnsb", vectors, normalize)
    t_sets = inputs.many("target sets", targets, at_least=2)
    neg, pos = inputs.one("negative", negative), inputs.one("positive", positive)
    params = {**CLASSIFIER, **(classifier or {})}
    rows = np.concatenate([t.rows for t in t_sets])
    ones = [np.ones((1, len(t))) for t in t_sets]

    fits = [
        fit_classifier(inputs, neg.rows, pos.rows, seed + i, holdout, params)
        for i in range(n_seeds)
    ]
    probability = np.stack([prob_negative(model, rows) for model, _ in fits])
    kls = np.array([kl_to_uniform(p, ones, over)[0] for p in probability])
    mean_p = probability.mean(axis=0)
    boot = _bootstrap(inputs, t_sets, neg, pos, holdout, params, over, n_bootstrap, seed)
    names = [t.name for t in t_sets] if over == "sets" else [w for t in t_sets for w in t.words]
    return RnsbResult(
        **resampled(kls.mean(), boot, n_bootstrap, confidence_level, seed),  # type: ignore[arg-type]
        distribution=dict(zip(names, kl_to_uniform(mean_p, ones, over)[1].tolist(), strict=True)),
        negative_probability=dict(
            zip([w for t in t_sets for w in t.words], mean_p.tolist(), strict=True)
        ),
        seed_statistics=kls,
        seed_std=float(kls.std(ddof=1)) if n_seeds > 1 else float("nan"),
        accuracy=float(np.mean([acc for _, acc in fits])),
        over=over,
        holdout=holdout,
    )


def _bootstrap(
    inputs: Inputs,
    t_sets: list[Vectors],
    neg: Vectors,
    pos: Vectors,
    holdout: float,
    params: Mapping[str, Any],
    over: str,
    n_bootstrap: int,
    seed: int,
) -> np.ndarray | None:
    """The KL of every resample: one classifier each (module docstring)."""
    if not n_bootstrap:
        return None
    sizes = [*(len(t) for t in t_sets), len(neg), len(pos)]
    draws = list(bootstrap_draws(sizes, n_bootstrap, seed=seed, scheme="weat"))
    counts = [counts_from_indices(d, len(t)) for d, t in zip(draws[:-2], t_sets, strict=True)]
    rows = np.concatenate([t.rows for t in t_sets])
    out = np.empty(n_bootstrap)
    with unchecked():
        for r in range(n_bootstrap):
            model, _ = fit_classifier(
                inputs,
                neg.rows[draws[-2][r]],
                pos.rows[draws[-1][r]],
                seed + r,
                holdout,
                params,
                score=False,
            )
            weights = [c[r : r + 1] for c in counts]
            out[r] = kl_to_uniform(prob_negative(model, rows), weights, over)[0]
    return out


def unchecked() -> AbstractContextManager[None]:
    """scikit-learn without its checks of parameters and finite values, for the refits of a
    classifier whose parameters and vectors were checked by a first fit (the same numbers: the
    checks only raise; they are most of a small fit's time)."""
    import sklearn

    return sklearn.config_context(assume_finite=True, skip_parameter_validation=True)


def fit_classifier(
    inputs: Inputs,
    neg: np.ndarray,
    pos: np.ndarray,
    seed: int,
    holdout: float,
    params: Mapping[str, Any],
    *,
    score: bool = True,
) -> tuple[Any, float]:
    """A logistic regression of positive (+1, first) against negative (−1) words, and its
    accuracy (held-out with ``holdout``; NaN unless ``score``)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    x = np.concatenate([pos, neg])
    if params.get("solver") == "liblinear" and np.abs(x).max() > _LIBLINEAR_MAX:
        raise inputs.error(  # sklearn checks the largest value only; a fit then never ends
            f"the positive and negative words have values beyond ±{_LIBLINEAR_MAX:g}, where "
            "the liblinear classifier does not finish: rescale the vectors or give normalize=True"
        )
    y = np.concatenate([np.ones(len(pos)), -np.ones(len(neg))])
    x_test, y_test = x, y
    if holdout:
        try:
            x, x_test, y, y_test = train_test_split(
                x, y, shuffle=True, random_state=seed, test_size=holdout, stratify=y
            )
        except ValueError as err:
            raise inputs.error(
                f"cannot hold out {holdout:g} of {len(pos)} positive and {len(neg)} negative "
                f"words, stratified ({str(err).splitlines()[0]}); give more words or holdout=0"
            ) from None
    try:
        model = LogisticRegression(**{"random_state": seed, **params}).fit(x, y)
    except (TypeError, ValueError) as err:  # a parameter sklearn does not take
        raise inputs.error(f"classifier {dict(params)}: {str(err).splitlines()[0]}") from None
    return model, float(model.score(x_test, y_test)) if score else float("nan")


def prob_negative(model: Any, rows: np.ndarray) -> np.ndarray:
    """The probability of the negative class (−1, ``classes_[0]``) of every row,
    1 − expit(x·coef + intercept): what ``model.predict_proba(rows)[:, 0]`` computes for two
    classes, by the same operations (the same bits), without its checks of ``rows``."""
    from scipy.special import expit

    scores = rows @ model.coef_.T + model.intercept_
    return 1 - expit(scores.reshape(-1))


def kl_to_uniform(p: np.ndarray, weights: list[np.ndarray], over: str) -> tuple[float, np.ndarray]:
    """KL(P ‖ U) and P, for the negative probabilities ``p`` of the target words (sets after
    one another) each counted as often as its set's weights ``(1, n_k)`` say."""
    w = np.concatenate([c[0] for c in weights])
    if over == "words":
        share = p / (w * p).sum()  # P of each drawn entry; an item drawn k times has k
        return float((w * share * np.log(share * w.sum())).sum()), share
    q, start = [], 0
    for c in weights:
        n = c.shape[1]
        q.append((c[0] * p[start : start + n]).sum() / c[0].sum())
        start += n
    share = np.array(q) / np.sum(q)
    return float((share * np.log(share * len(share))).sum()), share
