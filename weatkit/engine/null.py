"""A null baseline per space: how large is d for random target lists that should carry no bias?

Dobrzeniecka & Urbaniak (Computational Linguistics 2024, "A Bayesian approach to uncertainty in
word embedding bias estimation") ask what effect sizes *unrelated* word lists get in a space;
Valentini et al. (Findings of EMNLP 2022, "The Undesirable Dependence on Frequency of Gender Bias
Metrics Based on Word Embeddings") show that word frequency alone moves such measures. So the
random lists are matched in size and in frequency band to the real targets:

* **Candidate vocabulary** (:class:`Candidates`). A static space: its first ``N = 20,000``
  rows (the files are in frequency order), keeping words made of letters only (``str.isalpha``:
  no numbers, punctuation, phrases joined by ``_``). An ``hf:`` model (no vocabulary): the
  language's ``wordfreq.top_n_list(lang, N)``, letters-only words; the drawn words are embedded
  by the same extraction as the list items (and its vector cache).
* **Frequency** f(w): wordfreq's frequency of w in the test's language
  (:func:`weatkit.asymmetry.wordfreq_counts`) where wordfreq has the language — candidates it
  does not know (f = 0) are then left out — else the space's rank order, f(w) = −row of w
  (a target word outside the first N rows has f = −∞).
* **Bands**: the M candidates sorted by decreasing f (ties in source order) are cut into
  ``N_BANDS = 10`` equal-count bands, band(candidate at sorted position i) = ⌊10 i / M⌋ (band
  0 the most frequent tenth). A target word w falls in band ⌊10 p / M⌋ with
  p = #{candidates c : f(c) > f(w)}, clipped to 9: the band where it would be inserted.
* **Draw** k = 1 … K (:func:`weatkit.stats.resampling.null_plan`): X'_k and Y'_k replace each
  word of the real X and Y by a candidate of the word's band, all n_x + n_y words of a draw
  distinct, none of them a word of the test (X, Y, A or B; compared case-folded). The real A
  and B are kept. The plan depends only on the seed, the sizes and the candidate bands.
* **Null effect sizes** d_k = d(X'_k, Y'_k, A, B), the engine's d with the run's metric and
  ``ddof`` (:mod:`weatkit.engine.association`), computed for all K draws of all the tests of a
  space and language at once: s of every drawn word for every test in one product (cosine;
  :func:`null_effect_sizes_of_tests`), then one ``(K, n_x + n_y)`` gather per test.

Summary over the K' draws whose d is defined (K' = K unless a d is undefined):

* ``null_mean`` = mean d_k, ``null_sd`` = SD with ddof 1;
* ``null_percentile`` = 100 · #{d_k ≤ d} / K' (the observed d's percentile in the null);
* ``p_null`` = (k + 1) / (K' + 1) (Phipson & Smyth 2010), with the run's ``alternative`` as the
  permutation test has it: ``greater`` k = #{d_k ≥ d}; ``less`` k = #{d_k ≤ d}; ``two-sided``
  min(1, 2 min(p_greater, p_less)) — the tails of the null itself, which is not centred on 0
  when X and Y differ in frequency (:func:`weatkit.stats.resampling.pvalue_from_counts`).
  Values within 1e-9 (relative) of d count as equal, as in the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np
import torch

from weatkit import arguments
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.association import statistic_and_effect_size
from weatkit.engine.device import engine_dtype, resolve_device
from weatkit.engine.similarity import METRICS, similarity_matrix, unit_rows
from weatkit.errors import CoverageError, DataError, WeatkitError
from weatkit.stats.resampling import null_plan, pvalue_from_counts

#: Rows of a static space (or words of wordfreq's list) the candidates are taken from.
N_CANDIDATES = 20_000
#: Equal-count frequency bands of the candidate vocabulary.
N_BANDS = 10
#: Columns of ``null.csv`` after the test's keys.
DRAW_COLUMNS = ["draw", "d"]


@dataclass(frozen=True)
class Candidates:
    """The candidate vocabulary of a space and language, in frequency bands (module docstring).

    Attributes:
        words: the candidates, in source order.
        frequency: f per candidate (larger: more frequent).
        bands: band per candidate, 0 (most frequent tenth) to ``N_BANDS - 1``.
        source: ``wordfreq:LANG`` or ``rank``.
        n_rows: rows (or list words) the candidates were taken from.
    """

    words: tuple[str, ...]
    frequency: np.ndarray
    bands: np.ndarray
    source: str
    n_rows: int
    _rank: dict[str, int] = field(default_factory=dict, repr=False)
    _lang: str = ""

    def frequency_of(self, words: Sequence[str]) -> np.ndarray:
        """f of any words (the targets): wordfreq's, or −row (−∞ beyond the rows used)."""
        if self.source == "rank":
            return np.array([-self._rank.get(w, np.inf) for w in words], dtype=float)
        from weatkit.asymmetry import wordfreq_counts

        counts = wordfreq_counts(words, self._lang)
        return np.array([counts[w] for w in words], dtype=float)

    def band_of(self, words: Sequence[str]) -> np.ndarray:
        """Band of each word: ⌊N_BANDS · #{c : f(c) > f(w)} / M⌋, at most N_BANDS − 1."""
        ascending = self._ascending
        above = len(ascending) - np.searchsorted(ascending, self.frequency_of(words), "right")
        return np.minimum(above * N_BANDS // len(ascending), N_BANDS - 1)

    def positions_of(self, words: Iterable[str]) -> list[int]:
        """The positions of the candidates equal to any of ``words``, compared case-folded."""
        at = self._casefolded
        return sorted(i for w in {w.casefold() for w in words} for i in at.get(w, ()))

    @cached_property
    def _ascending(self) -> np.ndarray:
        return np.sort(self.frequency)

    @cached_property
    def _casefolded(self) -> dict[str, list[int]]:
        at: dict[str, list[int]] = {}
        for i, w in enumerate(self.words):
            at.setdefault(w.casefold(), []).append(i)
        return at

    def describe(self) -> dict[str, object]:
        """For the manifest: the frequency source, the candidates and the rows they came from."""
        return {"source": self.source, "candidates": len(self.words), "rows": self.n_rows}


def candidates_from_words(
    words: Sequence[str], lang: str, *, frequency: str = "auto", size: int = N_CANDIDATES
) -> Candidates:
    """The candidate vocabulary of the first ``size`` of ``words`` (in frequency order).

    Args:
        words: a space's words in row order, or wordfreq's list.
        lang: the language whose wordfreq frequencies band the words.
        frequency: ``wordfreq``, ``rank``, or ``auto`` (wordfreq where it has the language).
        size: how many of ``words`` to consider.

    Raises:
        DataError: no letters-only word among them; WeatkitError: ``frequency="wordfreq"``
            for a language wordfreq lacks.
    """
    return _candidates(tuple(words[:size]), lang, frequency, size)


@lru_cache(maxsize=16)
def _candidates(rows: tuple[str, ...], lang: str, frequency: str, size: int) -> Candidates:
    """:func:`candidates_from_words` of the rows, once per process for the same rows: a grid's
    spaces of one vocabulary (one file named by several entries, or spaces mapped from one
    monolingual space) share their candidates, and with them their case-folded index."""
    rank: dict[str, int] = {}
    for i, w in enumerate(rows):
        rank.setdefault(w, i)
    kept = [w for w, i in rank.items() if w.isalpha()]
    source = _frequency_source(lang, frequency)
    proto = Candidates((), np.zeros(0), np.zeros(0, dtype=np.int64), source, len(rows), rank, lang)
    freq = proto.frequency_of(kept)
    if source != "rank":
        kept = [w for w, f in zip(kept, freq, strict=True) if f > 0]
        freq = freq[freq > 0]
    if not kept:
        raise DataError(f"null baseline ({lang}): no candidate word among the first {size} rows")
    order = np.argsort(-freq, kind="stable")
    bands = np.empty(len(kept), dtype=np.int64)
    bands[order] = np.arange(len(kept)) * N_BANDS // len(kept)
    return Candidates(tuple(kept), freq, bands, source, len(rows), rank, lang)


def wordfreq_candidates(lang: str, size: int = N_CANDIDATES) -> Candidates:
    """The candidates of a model without vocabulary: wordfreq's top ``size`` words of ``lang``.

    Raises:
        WeatkitError: wordfreq has no list for the language (or needs a missing tokenizer).
    """
    import wordfreq

    from weatkit.asymmetry import wordfreq_language

    top = wordfreq.top_n_list(wordfreq_language(lang), size)
    return candidates_from_words(top, lang, frequency="wordfreq", size=size)


def _frequency_source(lang: str, frequency: str) -> str:
    if frequency == "rank":
        return "rank"
    if frequency not in ("auto", "wordfreq"):
        raise WeatkitError(f"frequency must be auto, wordfreq or rank, got {frequency!r}")
    from weatkit.asymmetry import wordfreq_counts

    try:
        wordfreq_counts(["the"], lang)  # the language's list and its tokenizer are there
    except WeatkitError:
        if frequency == "wordfreq":
            raise
        return "rank"
    return f"wordfreq:{lang}"


@dataclass(frozen=True)
class NullDraws:
    """The plan of one test: ``plan[k, j]`` is the candidate replacing target j in draw k
    (X's targets first, then Y's)."""

    plan: np.ndarray
    n_x: int
    target_bands: np.ndarray


def draw_null(
    candidates: Candidates,
    items: Mapping[str, Sequence[str]],
    n_draws: int,
    *,
    seed: int,
    label: str = "test",
) -> NullDraws:
    """Draw the K random target lists of one test (``items``: its X, Y, A and B words).

    Raises:
        DataError: K < 1, or a band with too few candidates, naming the test and the band.
    """
    targets = [*items["X"], *items["Y"]]
    bands = candidates.band_of(targets)
    exclude = candidates.positions_of(w for key in "XYAB" for w in items[key])
    try:
        plan = null_plan(candidates.bands, bands, n_draws, seed=seed, exclude=exclude)
    except DataError as err:
        raise DataError(f"{label}: null baseline: {err}") from None
    return NullDraws(plan, len(items["X"]), bands)


def null_effect_sizes(
    vectors: np.ndarray,
    plan: np.ndarray,
    n_x: int,
    A: np.ndarray,
    B: np.ndarray,
    *,
    metric: str = "cosine",
    csls_k: int = 10,
    ddof: int = 1,
    device: str | torch.device = "auto",
) -> np.ndarray:
    """d_k = d(X'_k, Y'_k, A, B) of every draw, ``(K,)``: the rows ``vectors[plan[k, :n_x]]``
    are X'_k and ``vectors[plan[k, n_x:]]`` Y'_k; a plan entry −1 (no vector) makes that d
    NaN. Only the rows the plan names are read (:func:`null_effect_sizes_of_tests`)."""
    used, where = np.unique(plan.clip(min=0), return_inverse=True)
    rows = np.where(plan < 0, -1, where.reshape(plan.shape))
    return null_effect_sizes_of_tests(
        np.asarray(vectors)[used], [(rows, n_x, A, B)],
        metric=metric, csls_k=csls_k, ddof=ddof, device=device,
    )[0]


def null_effect_sizes_of_tests(
    vectors: np.ndarray,
    tests: Sequence[tuple[np.ndarray, int, np.ndarray, np.ndarray]],
    *,
    metric: str = "cosine",
    csls_k: int = 10,
    ddof: int = 1,
    device: str | torch.device = "auto",
) -> list[np.ndarray]:
    """The null d's ``(K,)`` of several tests whose draws are rows of the same ``vectors``
    (``tests``: ``(plan, n_x, A, B)``, as in :func:`null_effect_sizes`).

    Cosine: s(w) = mean_a cos(w, a) − mean_b cos(w, b) = ŵ · (mean_a â − mean_b b̂) (x̂ = x/‖x‖),
    so one product ``(vectors @ directionsᵀ) / ‖row‖`` gives s of every row for every test,
    and each draw's d is its targets' s gathered. CSLS gives the cosine d: within a test
    CSLS(w, a) = 2 cos(w, a) − r(w) − r(a) moves every s(w) by the same constant and doubles
    it, which d (a difference of means over their SD) cancels. Euclidean, 1/(1 + ‖ŵ − â‖), is
    not linear: each row's similarities to A and B once per test, gathered per draw.
    """
    if metric not in METRICS:
        raise WeatkitError(f"unknown similarity {metric!r}: choose one of {', '.join(METRICS)}")
    dev = resolve_device(device)
    dtype = engine_dtype(dev)
    table = torch.as_tensor(np.asarray(vectors), dtype=dtype, device=dev)
    units = [
        (unit_rows(torch.as_tensor(A, dtype=dtype, device=dev)),
         unit_rows(torch.as_tensor(B, dtype=dtype, device=dev)))
        for _, _, A, B in tests
    ]  # fmt: skip
    if metric != "euclidean":
        directions = torch.stack([a.mean(dim=0) - b.mean(dim=0) for a, b in units])
        s_all = (table @ directions.T) / torch.linalg.vector_norm(table, dim=1)[:, None]
    out = []
    for t, (plan, n_x, _, _) in enumerate(tests):
        index = torch.as_tensor(plan, device=dev).clamp(min=0)
        if metric == "euclidean":
            a, b = units[t]
            sim = similarity_matrix(table[None], torch.cat([a, b])[None], metric, csls_k)[0]
            s_rows = sim[:, : len(a)].mean(dim=1) - sim[:, len(a) :].mean(dim=1)
        else:
            s_rows = s_all[:, t]
        s = s_rows[index]  # (K, n)
        _, d = statistic_and_effect_size(s, n_x, torch.ones_like(s[:1]), ddof)
        d = torch.where(torch.as_tensor((plan < 0).any(axis=1), device=dev), torch.nan, d)
        out.append(d.cpu().numpy().astype(np.float64))
    return out


@dataclass(frozen=True)
class NullSummary:
    """The null distribution summarised against the observed d (module docstring).

    Attributes:
        mean, sd: of the defined null d's (SD with ddof 1).
        percentile: 100 · #{d_k ≤ d} / K'.
        pvalue: p_null = (k + 1) / (K' + 1) with the alternative's k.
        n_draws: K', the draws whose d is defined.
    """

    mean: float
    sd: float
    percentile: float
    pvalue: float
    n_draws: int

    def columns(self) -> dict[str, float]:
        """The ``results.csv`` columns."""
        return {
            "null_mean": self.mean,
            "null_sd": self.sd,
            "null_percentile": self.percentile,
            "p_null": self.pvalue,
            "null_k": self.n_draws,
        }


#: The ``results.csv`` columns of a test without a null baseline.
NO_NULL: dict[str, float] = dict.fromkeys(
    ["null_mean", "null_sd", "null_percentile", "p_null", "null_k"], np.nan
)


def summarize_null(
    null_d: np.ndarray, observed: float, alternative: str = "greater"
) -> NullSummary:
    """Mean, SD, the observed d's percentile and p_null (module docstring)."""
    values = np.asarray(null_d, dtype=float)
    values = values[~np.isnan(values)]
    k = len(values)
    if k == 0 or not np.isfinite(observed):
        return NullSummary(np.nan, np.nan, np.nan, np.nan, k)
    tol = 1e-9 * max(abs(observed), 1.0)
    ge = int((values >= observed - tol).sum())
    le = int((values <= observed + tol).sum())
    p = pvalue_from_counts(np.array(ge), np.array(le), k, False, alternative)
    sd = float(values.std(ddof=1)) if k > 1 else np.nan
    return NullSummary(float(values.mean()), sd, 100.0 * le / k, float(p), k)


@dataclass(frozen=True)
class NullSample:
    """The K draws of one test with their vectors: ``vectors[rows[k, :n_x]]`` are X'_k and
    ``vectors[rows[k, n_x:]]`` Y'_k; a row −1 is a drawn word without a vector (that draw's
    statistic is NaN), and ``vectors`` is None when no drawn word has one. The WEAT null
    (:func:`null_effect_sizes`) and the association metrics' (:mod:`weatkit.association.null`)
    read the same draws."""

    vectors: np.ndarray | None = field(repr=False)
    rows: np.ndarray = field(repr=False)
    n_x: int


def null_samples(
    tests: Sequence[tuple[str, Mapping[str, Sequence[str]]]],
    candidates: Candidates,
    embed: Callable[[list[str]], WordVectors],
    *,
    n_draws: int,
    seed: int,
) -> list[NullSample]:
    """The draws of several tests of one space and language (``tests``: ``(label, items)``,
    items their X, Y, A, B words), their words embedded at once: ``embed`` gives the vectors
    of some candidate words (a model encodes them in one go; words it leaves out are −1)."""
    draws = [
        draw_null(candidates, items, n_draws, seed=seed, label=label) for label, items in tests
    ]
    drawn = np.zeros(len(candidates.words), dtype=bool)
    for d in draws:
        drawn[d.plan.ravel()] = True
    used = np.flatnonzero(drawn)
    space = embed([candidates.words[i] for i in used])
    row_of = np.full(len(candidates.words), -1, dtype=np.int64)
    present = [i for i in used if candidates.words[i] in space]
    row_of[present] = np.arange(len(present))
    vectors = space.lookup([candidates.words[i] for i in present]) if present else None
    return [NullSample(vectors, row_of[d.plan], d.n_x) for d in draws]


def null_d_of(
    samples: Sequence[tuple[NullSample, np.ndarray, np.ndarray]],
    *,
    metric: str = "cosine",
    csls_k: int = 10,
    ddof: int = 1,
    device: str | torch.device = "auto",
) -> list[np.ndarray]:
    """The null d's ``(K,)`` of the draws of several tests of one space and language
    (``samples``: ``(sample, A, B)`` from one :func:`null_samples` call, which share their
    vectors), at once (:func:`null_effect_sizes_of_tests`); all NaN without vectors."""
    if not samples or samples[0][0].vectors is None:
        return [np.full(len(sample.rows), np.nan) for sample, _, _ in samples]
    vectors = samples[0][0].vectors
    assert all(sample.vectors is vectors for sample, _, _ in samples)
    return null_effect_sizes_of_tests(
        vectors, [(sample.rows, sample.n_x, A, B) for sample, A, B in samples],
        metric=metric, csls_k=csls_k, ddof=ddof, device=device,
    )


@dataclass(frozen=True)
class NullResult:
    """:func:`null_baseline`'s result.

    Attributes:
        effect_size: the observed d.
        distribution: the K null d's.
        summary: mean, SD, percentile, p_null, K'.
        plan: ``(K, n_x + n_y)`` positions in ``candidates.words`` (X' then Y').
        candidates: the candidate vocabulary and its bands.
    """

    effect_size: float
    distribution: np.ndarray = field(repr=False)
    summary: NullSummary
    plan: np.ndarray = field(repr=False)
    candidates: Candidates = field(repr=False)


def null_baseline(
    vectors: WordVectors,
    X: Sequence[str],
    Y: Sequence[str],
    A: Sequence[str],
    B: Sequence[str],
    *,
    n_draws: int = 1000,
    lang: str = "en",
    frequency: str = "auto",
    n_candidates: int = N_CANDIDATES,
    metric: str = "cosine",
    ddof: int = 1,
    alternative: str = "greater",
    seed: int = 0,
    device: str = "auto",
) -> NullResult:
    """d of frequency-matched random target lists in a space, against the observed d.

    K pairs (X'_k, Y'_k) drawn from the first ``n_candidates`` rows of ``vectors``, each word
    from the frequency band of the target word it replaces, with the real A and B;
    null mean, SD, the observed d's percentile and p_null = (k + 1) / (K + 1) (module docstring;
    Dobrzeniecka & Urbaniak 2024; Valentini et al. 2022).

    Args:
        vectors: the space (rows in frequency order).
        X, Y, A, B: the test's words (all in ``vectors``).
        n_draws: K.
        lang: the language of the wordfreq frequencies.
        frequency: ``auto`` (wordfreq where it has ``lang``, else rank), ``wordfreq``, ``rank``.
        n_candidates: rows the candidates are taken from.
        metric, ddof, alternative, seed, device: as in :func:`weatkit.weat`.

    Example:
        >>> import weatkit
        >>> glove = weatkit.load_vectors(first_n=5000, words=["rose", "tulip", "ant", "wasp"])
        >>> out = weatkit.null_baseline(
        ...     glove, ["rose", "tulip"], ["ant", "wasp"], ["love", "peace"], ["hate", "war"],
        ...     n_draws=200, n_candidates=5000)
        >>> out.distribution.shape, out.summary.n_draws, out.candidates.source
        ((200,), 200, 'wordfreq:en')
        >>> 0 < out.summary.pvalue <= 1
        True
    """
    arguments.instance("null_baseline", "vectors", vectors, WordVectors, "a WordVectors")
    given = {"X": X, "Y": Y, "A": A, "B": B}
    sets = {k: list(arguments.words("null_baseline", k, v)) for k, v in given.items()}
    for key, items in sets.items():
        absent = [w for w in items if w not in vectors]
        if absent:
            raise CoverageError(
                f"null_baseline: set {key} word {absent[0]!r} is not in {vectors.name}"
            )
    from weatkit.engine.weat import weat

    arrays = {k: vectors.lookup(w) for k, w in sets.items()}
    observed = weat(
        *arrays.values(), metric=metric, ddof=ddof, n_bootstrap=0, n_permutations=0, device=device
    ).effect_size
    candidates = candidates_from_words(vectors.words, lang, frequency=frequency, size=n_candidates)
    draws = draw_null(candidates, sets, n_draws, seed=seed, label="null_baseline")
    rows = np.array([vectors.index(w) for w in candidates.words])
    null_d = null_effect_sizes(
        vectors.vectors, rows[draws.plan], len(sets["X"]), arrays["A"], arrays["B"],
        metric=metric, ddof=ddof, device=device,
    )
    summary = summarize_null(null_d, observed, alternative)
    return NullResult(observed, null_d, summary, draws.plan, candidates)
