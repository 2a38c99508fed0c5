"""Out-of-vocabulary handling: which list items an embedding covers, and set equalisation.

Items missing from the embeddings are dropped from their set. A set whose coverage (found /
distinct items) is below ``min_coverage``, or that ends up empty, is an error. Optionally the
target sets X/Y and the attribute sets A/B are then made the same size:

* ``"truncate"``: drop items from the end of the longer list (XWEAT / CA-WEAT reference code);
* ``"subsample"``: keep a seeded random subset of the longer set, in the original order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError
from weatkit.lists.model import SET_KEYS, AssociationTest

#: Accepted values of ``equalize``.
EQUALIZE_MODES = ("none", "truncate", "subsample")

_PAIRS = (("X", "Y"), ("A", "B"))
_MAX_SHOWN = 8


class CoverageError(WeatkitError):
    """A set of a test is too poorly covered by the embeddings (or empty after OOV removal)."""


@dataclass(frozen=True)
class CoveredTest:
    """A test restricted to the items the embeddings know, with their vectors.

    Attributes:
        test: the original test.
        items: kept items per set (``"X"``, ``"Y"``, ``"A"``, ``"B"``), in the list's order.
        vectors: float32 ``(len(items[k]), dim)`` per set, rows aligned with ``items``.
        missing: out-of-vocabulary items per set (distinct, in the list's order).
        coverage: found / total distinct items per set, in ``[0, 1]``.
        dropped_by_equalisation: items removed to equalise set sizes, per set.
    """

    test: AssociationTest
    items: dict[str, tuple[str, ...]]
    vectors: dict[str, np.ndarray]
    missing: dict[str, tuple[str, ...]]
    coverage: dict[str, float]
    dropped_by_equalisation: dict[str, tuple[str, ...]]

    @property
    def n_oov(self) -> int:
        """Number of out-of-vocabulary items, summed over the four sets."""
        return sum(len(v) for v in self.missing.values())


def _set_label(test: AssociationTest, key: str) -> str:
    human = test.names[SET_KEYS.index(key)] if len(test.names) == 4 else key
    return key if human == key else f"{key} ({human})"


def _words_preview(words: tuple[str, ...]) -> str:
    shown = ", ".join(repr(w) for w in words[:_MAX_SHOWN])
    more = len(words) - _MAX_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _equalise_pair(
    a: list[str], b: list[str], mode: str, rng: np.random.Generator
) -> tuple[list[str], list[str], list[str], list[str]]:
    """``(kept_a, kept_b, dropped_a, dropped_b)`` with ``len(kept_a) == len(kept_b)``."""
    n = min(len(a), len(b))

    def shrink(items: list[str]) -> tuple[list[str], list[str]]:
        if len(items) == n:
            return items, []
        if mode == "truncate":
            return items[:n], items[n:]
        chosen = np.sort(rng.choice(len(items), size=n, replace=False))
        keep = set(chosen.tolist())
        return [items[i] for i in chosen], [w for i, w in enumerate(items) if i not in keep]

    kept_a, dropped_a = shrink(a)
    kept_b, dropped_b = shrink(b)
    return kept_a, kept_b, dropped_a, dropped_b


def cover_test(
    test: AssociationTest,
    vectors: WordVectors,
    *,
    min_coverage: float = 0.8,
    equalize: str = "none",
    seed: int = 0,
) -> CoveredTest:
    """Drop OOV items of ``test``, check coverage, optionally equalise set sizes, get vectors.

    Args:
        test: the association test.
        vectors: the embeddings (items are looked up exactly as written).
        min_coverage: minimum fraction of each set's distinct items that must be found.
        equalize: ``"none"``, ``"truncate"`` or ``"subsample"`` (see the module docstring).
        seed: seed of ``numpy.random.default_rng`` for ``"subsample"``.

    Raises:
        CoverageError: a set is below ``min_coverage`` or empty after OOV removal.
        WeatkitError: unknown ``equalize`` mode or ``min_coverage`` outside ``[0, 1]``.
    """
    if equalize not in EQUALIZE_MODES:
        raise WeatkitError(
            f"unknown equalize mode {equalize!r}; use one of {', '.join(EQUALIZE_MODES)}"
        )
    if not 0.0 <= float(min_coverage) <= 1.0:
        raise WeatkitError(f"min_coverage must be between 0 and 1, got {min_coverage!r}")

    sets = test.sets()
    kept: dict[str, list[str]] = {}
    missing: dict[str, tuple[str, ...]] = {}
    coverage: dict[str, float] = {}
    for key in SET_KEYS:
        items = sets[key]
        distinct = tuple(dict.fromkeys(items))
        miss = tuple(w for w in distinct if w not in vectors)
        kept[key] = [w for w in items if w in vectors]
        missing[key] = miss
        coverage[key] = (len(distinct) - len(miss)) / len(distinct) if distinct else 0.0

    failures = [
        key for key in SET_KEYS if not kept[key] or coverage[key] + 1e-9 < float(min_coverage)
    ]
    if failures:
        where = (
            f"embeddings {vectors.name!r}, test {test.test!r}, lang {test.lang!r}, "
            f"list {test.list_id!r} ({test.list_set})"
        )
        parts = []
        for key in failures:
            total = len(dict.fromkeys(sets[key]))
            found = total - len(missing[key])
            what = "is empty" if total == 0 else f"coverage {100 * coverage[key]:.1f}%"
            part = f"set {_set_label(test, key)} {what} ({found}/{total} found)"
            if missing[key]:
                part += f", missing {_words_preview(missing[key])}"
            parts.append(part)
        raise CoverageError(
            f"{where}: {'; '.join(parts)} (minimum coverage {100 * float(min_coverage):.0f}%)"
        )

    dropped: dict[str, tuple[str, ...]] = {key: () for key in SET_KEYS}
    if equalize != "none":
        rng = np.random.default_rng(seed)
        for a, b in _PAIRS:
            kept[a], kept[b], drop_a, drop_b = _equalise_pair(kept[a], kept[b], equalize, rng)
            dropped[a], dropped[b] = tuple(drop_a), tuple(drop_b)

    items = {key: tuple(kept[key]) for key in SET_KEYS}
    vecs = {
        key: np.ascontiguousarray(vectors.lookup(items[key]), dtype=np.float32) for key in SET_KEYS
    }
    return CoveredTest(
        test=test,
        items=items,
        vectors=vecs,
        missing=missing,
        coverage=coverage,
        dropped_by_equalisation=dropped,
    )
