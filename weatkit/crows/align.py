"""Nangia et al.'s *unmodified tokens*: the positions two sentences of a CrowS-Pairs pair share,
found as the reference ``metric.py`` (``get_span``) finds them. Shared by the masked
(:mod:`weatkit.crows.score`) and causal (:mod:`weatkit.crows.causal`) methods."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from weatkit.errors import WeatkitError


def shared_positions(
    ids_a: Sequence[int],
    ids_b: Sequence[int],
    special_a: Sequence[bool],
    special_b: Sequence[bool],
) -> tuple[list[int], list[int]]:
    """Positions of the tokens the two sentences share (Nangia et al.'s unmodified tokens).

    ``difflib.SequenceMatcher(None, ids_a, ids_b)`` (default settings, as the reference
    ``get_span``) aligns the id lists; every position of an ``equal`` block is shared, except
    special tokens. The two lists are aligned: ``ids_a[pa[k]] == ids_b[pb[k]]``.

    Example: ``[CLS] the man is tall [SEP]`` vs ``[CLS] the old woman is tall [SEP]`` share
    ``the``, ``is``, ``tall``: positions (1, 3, 4) and (1, 4, 5).
    """
    if len(ids_a) != len(special_a) or len(ids_b) != len(special_b):
        raise WeatkitError("token ids and special-token flags differ in length")
    a, b = [int(i) for i in ids_a], [int(i) for i in ids_b]
    positions_a: list[int] = []
    positions_b: list[int] = []
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag != "equal":
            continue
        for offset in range(i2 - i1):
            p, q = i1 + offset, j1 + offset
            if not (special_a[p] or special_b[q]):
                positions_a.append(p)
                positions_b.append(q)
    return positions_a, positions_b
