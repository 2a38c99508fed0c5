"""The word-list model: one association test (X, Y, A, B) for one language and list, with the
definitional pairs of the metrics that take them (RIPA, DirectBias)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SET_KEYS = ("X", "Y", "A", "B")

_DIGITS = re.compile(r"(\d+)")


def _flat(pairs: tuple[tuple[str, str], ...]) -> list[str]:
    return [word for pair in pairs for word in pair]


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside ids by value: ``de2`` < ``de10`` < ``de11``
    (text order would give ``de10, de11, de2``); text parts compare case-insensitively."""
    parts = _DIGITS.split(text)  # text at even positions, digit runs at odd ones
    return tuple(
        (0, int(part)) if i % 2 else (1, part.casefold()) for i, part in enumerate(parts) if part
    )


@dataclass(frozen=True)
class AssociationTest:
    """Two target sets (X, Y) and two attribute sets (A, B), Caliskan et al. (2017).

    Attributes:
        test: test id, e.g. ``"weat1"`` (flowers/insects vs pleasant/unpleasant).
        lang: language code of the items, e.g. ``"en"``, ``"de"``.
        list_set: the collection the list came from, e.g. ``"ca-weat:v1"``, ``"weat"``, a file path.
        list_id: the list's id inside its set, e.g. ``"en_US1"`` (one annotator's list).
        X, Y, A, B: the items, in the order given by the source.
        names: human names of the four sets, e.g. ``("flowers", "insects", "pleasant",
            "unpleasant")``.
        meta: free-form notes of the list file.
        pairs: definitional pairs ``(x, y)`` (e.g. ``("she", "he")``) that define the direction
            of RIPA and DirectBias (:mod:`weatkit.association.query`); empty when the list has
            none (those metrics are then skipped).
    """

    test: str
    lang: str
    list_set: str
    list_id: str
    X: tuple[str, ...]
    Y: tuple[str, ...]
    A: tuple[str, ...]
    B: tuple[str, ...]
    names: tuple[str, str, str, str] = ("X", "Y", "A", "B")
    meta: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    pairs: tuple[tuple[str, str], ...] = ()

    def sets(self) -> dict[str, tuple[str, ...]]:
        """The four sets keyed by ``"X"``, ``"Y"``, ``"A"``, ``"B"``."""
        return {"X": self.X, "Y": self.Y, "A": self.A, "B": self.B}

    def vocabulary(self) -> set[str]:
        """Every distinct item of the test, its definitional pairs' words included."""
        return set(self.X) | set(self.Y) | set(self.A) | set(self.B) | set(_flat(self.pairs))

    @property
    def key(self) -> tuple[str, str, str, str]:
        """``(list_set, lang, list_id, test)``: unique within a run."""
        return (self.list_set, self.lang, self.list_id, self.test)
