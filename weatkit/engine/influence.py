"""Which words drive the effect: the jackknife influence of every item on the effect size d.

For each item i of each set K ∈ {X, Y, A, B} (Antoniak & Mimno, ACL 2021, "Bad Seeds:
Evaluating Lexical Methods for Bias Measurement"; Du, Fang & Nguyen, EMNLP 2021, "Assessing the
Reliability of Word Embedding Gender Bias Measures")::

    d_without(K, i) = d(X, Y, A, B with item i left out of K)
    delta(K, i)     = d_without(K, i) − d

where d is the engine's effect size (Caliskan et al. 2017, with the run's ``ddof``; see
:mod:`weatkit.engine.association`): s(w, A, B) = mean_A sim(w, a) − mean_B sim(w, b) and
d = (mean_X s − mean_Y s) / std_{w∈X∪Y} s(w). A positive delta means that the item *lowers* d
(d is larger without it).

Exact and batched: leaving out item i of K is the resample whose weights are all 1 except a 0
at i (:func:`weatkit.stats.resampling.jackknife_weights`). The ``n_x + n_y + n_a + n_b``
leave-one-out samples of a test are the rows of one weight matrix
(:func:`weatkit.engine.leave_one_out.leave_one_out_weights`),
so all of them come from one matrix product with the similarities the engine has already
computed (:func:`weatkit.engine.association.weighted_statistics`) — no re-embedding and no
similarity recomputed. The same values are the jackknife of the BCa intervals.

Exactness: with ``cosine`` and ``euclidean`` a similarity depends only on its two words, so
d_without equals the engine's d on the reduced lists. ``csls`` scales each similarity by the
word's neighbourhood among the test's words, which leaving a word out changes; influence is
refused for it (:meth:`weatkit.engine.weat.EngineOptions.validate`).

Undefined values are NaN, never an error: an item that is the only one of its set (the set would
be empty: no mean), and an item of X or Y when X∪Y without it has too few words for the standard
deviation (n_x + n_y − 1 ≤ ddof). The influence is that of the lists as tested: after
out-of-vocabulary items were removed and set sizes equalised; the reduced sets are not
re-equalised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from weatkit.arguments import vector_sets
from weatkit.engine.leave_one_out import SET_NAMES
from weatkit.engine.weat import EngineOptions, WeatInput, run_weat
from weatkit.errors import WeatkitError

#: Columns of :func:`influence` (and, after the test's keys, of ``influence.csv``).
ITEM_COLUMNS = ["set", "item", "d_without", "delta"]


def influence_rows(
    d_without: Mapping[str, np.ndarray],
    effect_size: float,
    items: Mapping[str, Sequence[str]] | None = None,
) -> list[tuple[str, str, float, float]]:
    """One ``(set, item, d_without, delta)`` per item, sets in the order X, Y, A, B, with
    ``delta = d_without − d``.

    Args:
        d_without: per set, the d of the test with each item left out.
        effect_size: the test's d.
        items: the items' names per set (None: their positions, ``"0"``, ``"1"``, ...).
    """
    rows = []
    for key in SET_NAMES:
        values = np.asarray(d_without[key], dtype=float)
        names = (items or {}).get(key) or [str(i) for i in range(len(values))]
        for name, value in zip(names, values, strict=True):
            rows.append((key, name, float(value), float(value - effect_size)))
    return rows


def influence(
    X: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    *,
    items: Mapping[str, Sequence[str]] | None = None,
    ddof: int = 1,
    metric: str = "cosine",
    device: str = "auto",
) -> pd.DataFrame:
    """The jackknife influence of every item of X, Y, A and B on the effect size d.

    d_without = d with the item left out of its set; delta = d_without − d (module docstring;
    Antoniak & Mimno 2021; Du et al. 2021). NaN where leaving the item out leaves d undefined.

    Args:
        X, Y, A, B: ``(n_set, dim)`` vectors of the four sets.
        items: the items' names per set, ``{"X": [...], ...}`` (None: positions ``"0"``, ...).
        ddof: of the standard deviation in d (1: Caliskan et al.; 0: WEFE, CA-WEAT code).
        metric: ``cosine`` or ``euclidean``.
        device: ``auto``, ``cpu``, ``cuda[:N]`` or ``mps``.

    Returns:
        One row per item, sets in the order X, Y, A, B: ``set``, ``item``, ``d_without``,
        ``delta``.

    Example:
        >>> import numpy as np, weatkit
        >>> rng = np.random.default_rng(0)
        >>> X, Y, A, B = (rng.normal(size=(4, 5)) for _ in range(4))
        >>> table = weatkit.influence(X, Y, A, B)
        >>> len(table), list(table.columns)
        (16, ['set', 'item', 'd_without', 'delta'])
        >>> reduced = weatkit.weat(X[1:], Y, A, B, n_bootstrap=0, n_permutations=0)
        >>> bool(np.isclose(table.d_without[0], reduced.effect_size))
        True

    Raises:
        ArgumentError: X, Y, A or B is not as :func:`weatkit.weat` takes it
            (:mod:`weatkit.arguments`).
    """
    sets = vector_sets("influence", {"X": X, "Y": Y, "A": A, "B": B})
    for key, names in (items or {}).items():
        if key not in sets or len(names) != len(sets[key]):
            raise WeatkitError(
                f"items[{key!r}]: expected {len(sets.get(key, ()))} names (one per row of "
                f"{key}), got {len(names)}"
                if key in sets
                else f"items: unknown set {key!r} (X, Y, A or B)"
            )
    options = EngineOptions(
        metric=metric, ddof=ddof, device=device, n_bootstrap=0, n_permutations=0, influence=True
    )
    res = run_weat([WeatInput(**sets)], options)[0]
    assert res.influence is not None
    rows = influence_rows(res.influence, res.effect_size, items)
    return pd.DataFrame(rows, columns=ITEM_COLUMNS)
