"""What every association metric shares: word sets to vectors, the bootstrap, the result shape.

**Inputs.** A *word set* is a list of words, looked up in a
:class:`~weatkit.embeddings.vectors.WordVectors` given as ``vectors=``, or an ``(n, dim)``
array of vectors (its rows named ``"0"``, ``"1"``, ...). A metric taking several sets takes a
list of them, or a mapping ``name -> set`` whose names its result uses. Definitional *pairs*
are a list of ``(x, y)`` word pairs, or a tuple of two ``(n, dim)`` arrays whose rows pair up.
Words missing from the vectors are an error naming them (leave them out of the lists), as are an
empty set, sets of different widths, and NaN, infinite or all-zero vectors. ``normalize=True``
scales every vector to unit length first (WEFE's ``normalize``).

**Bootstrap.** Each list is resampled with replacement, independently of the others, B times:
the positions drawn come from :func:`weatkit.stats.resampling.bootstrap_draws` (scheme
``"weat"``, one generator seeded by ``[seed, n_1, …, n_k, 0]`` for the sets of sizes
n_1 … n_k in the order each metric documents), so **a plan depends only on the seed and the set
sizes**. On sets of the sizes of a WEAT test, in the order X, Y, A, B, the resamples are those
of the WEAT engine (common random numbers: the metrics and d of one test are paired over the same
resamples). A resample is a count matrix ``(B, n_j)`` (how often each item is drawn); every
cheap metric computes all resamples at once from these weights. The interval is the percentile
interval of :func:`weatkit.stats.intervals.percentile_interval`; resamples where the statistic
is undefined (NaN) are left out and counted in ``n_undefined``. For a statistic that averages
over the pairs of words of two lists resampled independently (MAC; WEAT's s), the interval is
conservative when what is proper to each pair dominates (McCullagh 2000, Bernoulli 6:285): with
random vectors every one of 100 95% intervals of MAC held the population value, while a mean
over one list of 15 words was covered 93% of the time (``tests/test_association_common.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from weatkit.arguments import (
    VECTORS,
    WORDS,
    check_rows,
    instance,
    is_empty,
    is_words,
    real_number,
    vector_array,
    whole_number,
    wrong_type,
    wrong_value,
)
from weatkit.errors import ArgumentTypeError, ArgumentValueError, ConfigError
from weatkit.stats.intervals import percentile_interval
from weatkit.stats.resampling import bootstrap_draws, counts_from_indices

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors
    from weatkit.engine.null import NullSample

#: One word set: words (looked up in ``vectors=``) or an ``(n, dim)`` array.
WordSet = Sequence[str] | np.ndarray
#: Several word sets: a list, or a mapping name -> set.
WordSets = Sequence[WordSet] | Mapping[str, WordSet]
#: Definitional pairs: ``(x, y)`` word pairs, or two ``(n, dim)`` arrays whose rows pair up.
Pairs = Sequence[Sequence[str]] | tuple[np.ndarray, np.ndarray]

#: Default bootstrap resamples of the cheap metrics (as the WEAT engine).
N_BOOTSTRAP = 5000
_MEMORY_BUDGET = 2**22  # float64 elements per intermediate array (32 MiB)


@dataclass(frozen=True)
class Vectors:
    """One resolved word set: its name, its words (row names) and ``(n, dim)`` float64 rows."""

    name: str
    words: tuple[str, ...]
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.words)


class Inputs:
    """Resolves the word sets of one call of ``metric`` to :class:`Vectors` (module docstring),
    checking that all have one width; every failure is an
    :class:`~weatkit.errors.ArgumentError` naming ``metric`` and the set
    (:mod:`weatkit.arguments`)."""

    def __init__(self, metric: str, vectors: WordVectors | None, normalize: bool) -> None:
        from weatkit.embeddings.vectors import WordVectors

        if vectors is not None:
            instance(metric, "vectors", vectors, WordVectors, "a WordVectors (or None)")
        self.metric = metric
        self.vectors = vectors
        self.normalize = normalize
        self.dim: int | None = None

    def error(self, message: str) -> ArgumentValueError:
        return wrong_value(self.metric, message)

    def one(self, name: str, words: WordSet, *, at_least: int = 1) -> Vectors:
        """One set; fewer than ``at_least`` items is an error."""
        if is_words(words):
            names = tuple(str(w) for w in words)  # type: ignore[union-attr]
            rows = self._lookup(name, names)
            check_rows(self.metric, name, rows, width=self.dim, at_least=at_least)
        elif is_empty(words):
            raise self.error(f"{name} is empty")
        else:
            expected = f"{WORDS} or {VECTORS}"
            given = vector_array(
                self.metric, name, words, width=self.dim, at_least=at_least, expected=expected
            )
            rows = given.astype(np.float64)
            names = tuple(str(i) for i in range(len(rows)))
        self.dim = rows.shape[1]
        if self.normalize:
            rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return Vectors(name, names, rows)

    def many(
        self,
        what: str,
        sets: WordSets,
        *,
        at_least: int = 1,
        exactly: int | None = None,
    ) -> list[Vectors]:
        """Several sets (``what`` names them in messages: ``"target sets"``)."""
        expected = "a list (or a mapping name -> set) of word sets"
        if isinstance(sets, np.ndarray) or is_words(sets):
            raise ArgumentTypeError(
                f"{self.metric}: {what} must be {expected}, not one set; wrap it in a list"
            )
        if isinstance(sets, str) or not isinstance(sets, Sequence | Mapping):
            raise wrong_type(self.metric, what, expected, sets)
        named = (
            list(sets.items())
            if isinstance(sets, Mapping)
            else [(f"{what.split()[0]} set {i + 1}", s) for i, s in enumerate(sets)]
        )
        count = f"exactly {exactly}" if exactly is not None else f"at least {at_least}"
        if (exactly is not None and len(named) != exactly) or len(named) < at_least:
            raise self.error(f"needs {count} {what}, got {len(named)}")
        return [self.one(str(n), s) for n, s in named]

    def pairs(self, pairs: Pairs) -> tuple[Vectors, Vectors]:
        """Definitional pairs as two row-aligned sets (the x and the y of each pair)."""
        if (
            isinstance(pairs, tuple)
            and len(pairs) == 2
            and any(isinstance(p, np.ndarray) for p in pairs)
        ):
            x, y = self.one("pairs (x)", pairs[0]), self.one("pairs (y)", pairs[1])
            if len(x) != len(y):
                raise self.error(f"pairs: {len(x)} x rows but {len(y)} y rows")
            return x, y
        if isinstance(pairs, str) or not isinstance(pairs, Sequence):
            raise wrong_type(self.metric, "pairs", PAIRS, pairs)
        items = list(pairs)
        if not items:
            raise self.error("needs at least one definitional pair (x, y), got none")
        for i, p in enumerate(items):
            if not is_words(p) or len(p) != 2:
                got = repr(tuple(p)) if is_words(p) else type(p).__name__
                raise ArgumentTypeError(
                    f"{self.metric}: pair {i + 1} must be two words (x, y), got {got} (vectors: "
                    "give a tuple (X, Y) of two row-aligned (n, dim) arrays)"
                )
        x = self.one("pairs (x)", [p[0] for p in items])
        y = self.one("pairs (y)", [p[1] for p in items])
        x = Vectors(x.name, tuple(f"{a}-{b}" for a, b in items), x.rows)
        return x, y

    def _lookup(self, name: str, words: tuple[str, ...]) -> np.ndarray:
        if self.vectors is None:
            raise ArgumentTypeError(
                f"{self.metric}: {name} is a list of words: give vectors= (a WordVectors) to look "
                "them up, or pass arrays of vectors"
            )
        missing = list(dict.fromkeys(w for w in words if w not in self.vectors))
        if missing:
            shown = ", ".join(repr(w) for w in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise self.error(
                f"{len(missing)} word(s) of {name} not in {self.vectors.name}: {shown}{more} "
                "(leave them out of the list)"
            )
        return np.asarray(self.vectors.lookup(words), dtype=np.float64).reshape(len(words), -1)


#: What definitional pairs are, in messages.
PAIRS = "(x, y) word pairs or a tuple (X, Y) of two row-aligned (n, dim) arrays"


def check_resampling(n_bootstrap: int, confidence_level: float, seed: int) -> None:
    """ConfigError naming the option when a bootstrap setting is impossible."""
    whole_number("n_bootstrap", n_bootstrap)
    real_number("confidence_level", confidence_level)
    whole_number("seed", seed)
    if n_bootstrap < 0:
        raise ConfigError(f"must be >= 0 (0: no interval), got {n_bootstrap}", field="n_bootstrap")
    if not 0 < confidence_level < 1:
        raise ConfigError(f"must be in (0, 1), got {confidence_level}", field="confidence_level")
    if seed < 0:
        raise ConfigError(f"must be >= 0, got {seed}", field="seed")


def check_choice(field: str, value: object, choices: Sequence[str]) -> None:
    """ConfigError naming the option when ``value`` is not one of ``choices``."""
    if value not in choices:
        raise ConfigError(f"must be one of {', '.join(choices)}, got {value!r}", field=field)


def bootstrap_weights(sizes: Sequence[int], n_bootstrap: int, seed: int) -> list[np.ndarray]:
    """One ``(n_bootstrap, n_j)`` count matrix per set: how often resample r draws each item
    (module docstring; the plan depends only on ``seed`` and ``sizes``)."""
    draws = bootstrap_draws(sizes, n_bootstrap, seed=seed, scheme="weat")
    return [counts_from_indices(idx, n) for idx, n in zip(draws, sizes, strict=True)]


def unit_weights(sizes: Sequence[int]) -> list[np.ndarray]:
    """The observed sample as one "resample": every item once, ``(1, n_j)`` per set."""
    return [np.ones((1, n)) for n in sizes]


def chunks(n_resamples: int, per_resample: int) -> Iterator[slice]:
    """Slices of resamples whose intermediates hold about 4 million numbers."""
    step = max(1, _MEMORY_BUDGET // max(per_resample, 1))
    for start in range(0, n_resamples, step):
        yield slice(start, min(start + step, n_resamples))


def interval(
    distribution: np.ndarray, confidence_level: float
) -> tuple[tuple[float, float] | None, int]:
    """The percentile interval of a ``(B,)`` bootstrap distribution (None without resamples) and
    the number of resamples where the statistic is undefined."""
    if distribution.size == 0:
        return None, 0
    undefined = int(np.isnan(distribution).sum())
    if undefined == distribution.size:
        return (float("nan"), float("nan")), undefined
    low, high = percentile_interval(distribution[None, :], confidence_level)
    return (float(low[0]), float(high[0])), undefined


def standard_error(distribution: np.ndarray | None) -> float:
    """The bootstrap standard error of a statistic: the standard deviation (ddof 1) of its
    defined resamples, as WEAT's ``effect_size_se`` (NaN without two of them). The
    random-effects pooling (``--pool``) weights each statistic by its square."""
    if distribution is None:
        return float("nan")
    defined = distribution[~np.isnan(distribution)]
    return float(defined.std(ddof=1)) if len(defined) > 1 else float("nan")


def cosines(rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``(n, m)`` cosine similarities, by the engine's :func:`~weatkit.engine.similarity.
    similarity_matrix` (computed once per call; every resample reuses them)."""
    import torch

    from weatkit.engine.similarity import similarity_matrix

    sim = similarity_matrix(torch.from_numpy(rows)[None], torch.from_numpy(columns)[None])
    return sim[0].numpy()


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(..., B)`` weighted means over the items: ``values (..., n)`` with ``weights (B, n)``."""
    return values @ weights.T / weights.sum(axis=1)


@dataclass(frozen=True, kw_only=True)
class AssociationResult:
    """What every metric returns (each adds its own fields), in the style of ``scipy.stats``.

    Attributes:
        statistic: the metric's value.
        confidence_interval: the bootstrap percentile interval (None with ``n_bootstrap=0``).
        confidence_level: of the interval.
        n_bootstrap: resamples drawn; n_undefined: those where the statistic is undefined (NaN,
            left out of the interval).
        seed: of the resample plan.
        bootstrap_statistic: the ``(n_bootstrap,)`` bootstrap distribution (None without).
    """

    statistic: float
    confidence_interval: tuple[float, float] | None
    confidence_level: float
    n_bootstrap: int
    n_undefined: int
    seed: int
    bootstrap_statistic: np.ndarray | None = field(default=None, repr=False)


def resampled(
    observed: float,
    distribution: np.ndarray | None,
    n_bootstrap: int,
    confidence_level: float,
    seed: int,
) -> dict[str, object]:
    """The :class:`AssociationResult` fields of a statistic and its bootstrap distribution."""
    dist = np.zeros(0) if distribution is None else distribution
    ci, undefined = interval(dist, confidence_level)
    return {
        "statistic": float(observed),
        "confidence_interval": ci,
        "confidence_level": confidence_level,
        "n_bootstrap": n_bootstrap,
        "n_undefined": undefined,
        "seed": seed,
        "bootstrap_statistic": distribution,
    }


@dataclass(frozen=True)
class Query:
    """One test as the metrics read it.

    Attributes:
        label: names the test in messages (``weat1 (weat, list weat, en) on glove-6b-50d``).
        sets: the words of X, Y, A and B kept by the run (after OOV removal, equalisation).
        pairs: the test's definitional pairs ``(x, y)`` (all of them; those in the vocabulary
            are used).
        vectors: the vectors the words are looked up in.
        min_coverage: the share of the pairs that must be in the vocabulary.
        null: the test's frequency-matched random draws of X and Y (``--null``;
            :mod:`weatkit.association.null`), None without.
    """

    label: str
    sets: Mapping[str, tuple[str, ...]]
    pairs: tuple[tuple[str, str], ...]
    vectors: WordVectors
    min_coverage: float = 0.0
    null: NullSample | None = None
