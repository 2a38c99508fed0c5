"""A bias measure's metadata (:class:`Measure`): what :data:`weatkit.measures.registry.MEASURES`
holds, and what a measure package declares in its plugin (:mod:`weatkit.measures.plugins`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Side = Literal["above", "below"]
KINDS: tuple[str, ...] = ("static", "mlm", "glm")
#: Display names of the model kinds in messages.
KIND_NAMES = {"static": "word embeddings", "mlm": "a masked LM", "glm": "a causal LM"}


@dataclass(frozen=True)
class Measure:
    """A registered bias measure.

    Attributes:
        name: registered name, ``FAMILY:VARIANT`` for sentence measures (``"crows:pll"``).
        family: the ``weatkit compare`` method computing it (``weat``, ``gest``, ...).
        label: display name of the family in messages (``"CrowS-Pairs"``).
        description: what the value is, formula first.
        neutral: the value of an unbiased model, or None when the measure has none.
        stereotypical: which side of ``neutral`` is stereotypical (``"above"``/``"below"``),
            None without a neutral value.
        ideal: the best value when it is not the neutral one (LMS, ICAT: 100), else None.
        citation: the paper defining it.
        model_kinds: the kinds of source it applies to (:data:`KINDS`).
        languages: the languages it has data for, or None for any language (the data come
            with the request: word lists, a parallel corpus).
        accepts: what a word-level measure takes of a test (X, Y, A, B) in ``weatkit run
            --metrics`` (:mod:`weatkit.association.query`); empty for the others.
    """

    name: str
    family: str
    label: str
    description: str
    neutral: float | None
    stereotypical: Side | None
    citation: str
    model_kinds: tuple[str, ...]
    languages: tuple[str, ...] | None = None
    ideal: float | None = None
    accepts: str = ""

    def not_applicable(self, kind: str, lang: str, source: str = "the model") -> str | None:
        """Why the measure does not apply to a ``kind`` source in ``lang`` (None: it does).

        The language is checked first, then the model kind.

        Example:
            >>> MEASURES["crows:pll"].not_applicable("glm", "en", "gpt2")
            'CrowS-Pairs needs a masked LM; gpt2 is a causal LM'
        """
        if self.languages is not None and lang not in self.languages:
            if self.languages == ("en",):
                return f"{self.label} is English only, not {lang}"
            return f"{self.label} has {', '.join(self.languages)}, not {lang}"
        if kind not in self.model_kinds:
            needs = " or ".join(KIND_NAMES[k] for k in self.model_kinds)
            return f"{self.label} needs {needs}; {source} is {KIND_NAMES.get(kind, kind)}"
        return None

    def side(self, value: float) -> str:
        """``"stereotypical"``, ``"anti-stereotypical"`` or ``"neutral"`` (``""`` for NaN or a
        measure without a neutral value)."""
        if self.neutral is None or self.stereotypical is None or value != value:
            return ""
        if value == self.neutral:
            return "neutral"
        above = value > self.neutral
        return "stereotypical" if above == (self.stereotypical == "above") else "anti-stereotypical"
