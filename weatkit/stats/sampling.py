"""A seeded, stratified sample of N items: what ``--limit N`` of the sentence measures scores.

M items fall into strata h (CrowS-Pairs and StereoSet: the bias type; GEST and EuroGEST: the
stereotype id; MBE: the male and female sentences) of M_h items each. A sample of N < M items
takes n_h items from stratum h.

**Allocation** (proportional, largest remainder; Hamilton's method)::

    q_h = N · M_h / M
    n_h = ⌊q_h⌋ + 1  for the N − Σ_h ⌊q_h⌋ strata with the largest q_h − ⌊q_h⌋
    n_h = ⌊q_h⌋      for the others

ties of the fractional part go to the larger stratum, then to the stratum that sorts first
(``sorted`` of the labels). So Σ n_h = N and n_h ≤ M_h; a stratum whose share is below one
item may get none.

**Selection**: within stratum h, the items are ranked by the SHA-256 digest of
``"{seed}:{id}"`` and the first n_h are kept, in their original order. The sample therefore
depends only on the seed, N and the item ids with their strata: not on the order of the items
(reordering a file does not change it), and a larger N keeps every item of a smaller one's
stratum sample. N ≥ M keeps every item and is no sample (None).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from weatkit.errors import ConfigError, WeatkitError


@dataclass(frozen=True)
class SampleOptions:
    """``--limit N`` (``limit`` in a compare file's method section): score a sample of N items
    (None: every item). Declared in :data:`weatkit.config.schema.SAMPLE`."""

    limit: int | None = None

    def validate(self) -> None:
        check_limit(self.limit)


def check_limit(limit: Any) -> int | None:
    """``limit`` when it is None or a whole number ≥ 1, else a :class:`ConfigError` naming the
    field ``limit``."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int | np.integer):
        raise ConfigError(f"expected a whole number of items, got {limit!r}", field="limit")
    if limit < 1:
        raise ConfigError(f"must be at least 1, got {limit}", field="limit")
    return int(limit)


@dataclass(frozen=True)
class ItemSample:
    """A sample drawn by :func:`stratified_sample`.

    Attributes:
        limit: N, the items kept.
        seed: the seed of the selection.
        n_items: M, the items there were.
        by: what the strata are, in words (``bias type``).
        unit: what an item is, plural (``pairs``).
        strata: stratum label (as text) -> ``(n_h, M_h)``, in sorted label order.
    """

    limit: int
    seed: int
    n_items: int
    by: str
    unit: str = "items"
    strata: dict[str, tuple[int, int]] = field(default_factory=dict)

    def describe(self) -> str:
        """``sample of 100 of 1,508 pairs, stratified by bias type (seed 0)``."""
        return (
            f"sample of {self.limit:,} of {self.n_items:,} {self.unit}, stratified by {self.by} "
            f"(seed {self.seed})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The manifest entry: ``{"limit", "seed", "n_items", "unit", "stratified_by",
        "strata": {label: {"n": n_h, "of": M_h}}}``."""
        return {
            "limit": self.limit,
            "seed": self.seed,
            "n_items": self.n_items,
            "unit": self.unit,
            "stratified_by": self.by,
            "strata": {k: {"n": n, "of": m} for k, (n, m) in self.strata.items()},
        }


def allocate(sizes: Mapping[Hashable, int], limit: int) -> dict[Hashable, int]:
    """n_h of each stratum for a sample of ``limit`` items (largest remainder; module
    docstring); every stratum's M_h when ``limit`` ≥ M."""
    total = sum(sizes.values())
    if limit >= total:
        return dict(sizes)
    order = sorted(sizes, key=_label_key)
    counts = {h: limit * sizes[h] // total for h in order}  # ⌊q_h⌋ in exact integers
    left = limit - sum(counts.values())
    # the fractional part of q_h is (limit · M_h mod M) / M: compared as integers
    by_remainder = sorted(order, key=lambda h: (-(limit * sizes[h] % total), -sizes[h]))
    for h in by_remainder[:left]:
        counts[h] += 1
    return counts


def _label_key(label: Hashable) -> tuple[int, Any]:
    """Numbers before text, each in its own order (GEST's stereotypes 1 … 16, not 1, 10, 11)."""
    if isinstance(label, int | float | np.integer | np.floating) and not isinstance(label, bool):
        return (0, float(label))
    return (1, str(label))


def _rank(seed: int, item_id: Hashable) -> bytes:
    return hashlib.sha256(f"{seed}:{item_id}".encode()).digest()


def stratified_sample(
    ids: Sequence[Hashable],
    strata: Sequence[Hashable],
    limit: int | None,
    seed: int,
    *,
    by: str,
    unit: str = "items",
    least: int = 0,
) -> tuple[np.ndarray, ItemSample | None]:
    """The positions of a sample of ``limit`` items (module docstring), ascending, and its
    description; every position and None when ``limit`` is None or ≥ the number of items.

    Args:
        ids: one id per item, unique (the selection ranks items by ``"{seed}:{id}"``).
        strata: one stratum label per item.
        limit: N (checked by :func:`check_limit`).
        seed: the run's seed.
        by: the strata in words, for :meth:`ItemSample.describe` (``bias type``).
        unit: the items in words, plural.
        least: items every stratum must get (the measure needs each stratum: GEST's g_s every
            stereotype); a smaller sample is a :class:`ConfigError` naming the least N.

    Raises:
        ConfigError: a bad ``limit``, or one too small for ``least`` (field ``limit``).
        WeatkitError: ``ids`` and ``strata`` of different lengths, or an id repeated.
    """
    limit = check_limit(limit)
    n = len(ids)
    if len(strata) != n:
        raise WeatkitError(f"{n} item ids but {len(strata)} strata")
    everything = np.arange(n, dtype=np.int64)
    if limit is None or limit >= n:
        return everything, None
    if len(set(ids)) != n:
        raise WeatkitError(f"the {unit} to sample have repeated ids")
    members: dict[Hashable, list[int]] = {}
    for position, label in enumerate(strata):
        members.setdefault(label, []).append(position)
    sizes = {h: len(p) for h, p in members.items()}
    counts = allocate(sizes, limit)
    if least and any(counts[h] < min(least, sizes[h]) for h in sizes):
        short = next(h for h in sorted(sizes, key=_label_key) if counts[h] < min(least, sizes[h]))
        got = f"without {unit}" if counts[short] == 0 else f"with {counts[short]} {unit}"
        raise ConfigError(
            f"{limit} leaves {by} {short} {got}; the measure needs {least} in each {by}: give "
            f"at least {_least_limit(sizes, least, limit, n)}",
            field="limit",
        )
    kept: list[int] = []
    for h, positions in members.items():
        ranked = sorted(positions, key=lambda p: _rank(seed, ids[p]))
        kept.extend(ranked[: counts[h]])
    sample = ItemSample(
        limit=limit,
        seed=int(seed),
        n_items=n,
        by=by,
        unit=unit,
        strata={str(h): (counts[h], sizes[h]) for h in sorted(sizes, key=_label_key)},
    )
    return np.sort(np.asarray(kept, dtype=np.int64)), sample


def _least_limit(sizes: Mapping[Hashable, int], least: int, start: int, total: int) -> int:
    """The smallest N ≥ ``start`` whose allocation gives every stratum ``least`` items (or all
    of a smaller one)."""
    for limit in range(start, total + 1):
        counts = allocate(sizes, limit)
        if all(counts[h] >= min(least, sizes[h]) for h in sizes):
            return limit
    return total


def sample_rows(
    table: pd.DataFrame,
    limit: int | None,
    seed: int,
    *,
    id_column: str,
    stratum_column: str,
    by: str,
    unit: str = "items",
    least: int = 0,
) -> tuple[pd.DataFrame, ItemSample | None]:
    """The rows of ``table`` that :func:`stratified_sample` keeps (ids and strata from two of
    its columns; index reset), and the sample (None: every row)."""
    keep, sample = stratified_sample(
        table[id_column].tolist(),
        table[stratum_column].tolist(),
        limit,
        seed,
        by=by,
        unit=unit,
        least=least,
    )
    if sample is None:
        return table, None
    return table.iloc[keep].reset_index(drop=True), sample
