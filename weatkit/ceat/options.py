"""The options of a CEAT run (declared for files and the command line in
:data:`weatkit.ceat.plugin.SECTION`; the list selection, ``--seed``, ``--device``,
``--alternative`` and ``--confidence`` are the run's and the engine's own declarations)."""

from __future__ import annotations

from dataclasses import dataclass

from weatkit.errors import ConfigError

#: How the draws' association scores are computed (:func:`weatkit.ceat.draws.choose_method`).
DRAW_METHODS = ("auto", "table", "vectors")


@dataclass(frozen=True)
class CeatOptions:
    """Where the contexts come from and how many draws are made.

    Attributes:
        text_field: the text of a JSONL record or a dataset row.
        split: the split of a ``hf:`` dataset.
        contexts_per_word: at most this many contexts per word (a seeded reservoir sample).
        ignore_case: find words whatever their case.
        window: keep this many words on each side of the word (None: the whole line).
        n_draws: N, the WEATs drawn (10,000 as in the paper and ``ceat.py``'s default).
        min_contexts: a word with fewer contexts counts as missing from its set.
        draw_method: ``auto``, ``table`` or ``vectors`` (the same numbers).
    """

    text_field: str = "text"
    split: str = "train"
    contexts_per_word: int = 1000
    ignore_case: bool = False
    window: int | None = None
    n_draws: int = 10_000
    min_contexts: int = 1
    draw_method: str = "auto"

    def validate(self) -> None:
        """:class:`ConfigError` naming the field of a value out of range."""
        for name, low in (("contexts_per_word", 1), ("n_draws", 2), ("min_contexts", 1)):
            if getattr(self, name) < low:
                raise ConfigError(f"must be >= {low}, got {getattr(self, name)}", field=name)
        if self.window is not None and self.window < 0:
            raise ConfigError(f"must be >= 0, got {self.window}", field="window")
        if self.draw_method not in DRAW_METHODS:
            raise ConfigError(
                f"unknown method {self.draw_method!r}: choose {', '.join(DRAW_METHODS)}",
                field="draw_method",
            )
