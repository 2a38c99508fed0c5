"""LPBS templates: a sentence with one ``[TARGET]`` and one ``[ATTRIBUTE]`` placeholder.

``[TARGET]`` is the slot the masked LM predicts (a word of a target group, e.g. *he*);
``[ATTRIBUTE]`` is filled with an attribute word (e.g. *programmer*). Other bracketed upper-case
placeholders (``[MASK]``, ``[TARGETS]``) are refused: weatkit places the masks itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from weatkit.errors import WeatkitError

TARGET = "[TARGET]"
ATTRIBUTE = "[ATTRIBUTE]"
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")

#: The templates weatkit uses when none are given: the singular ones of Kurita et al.'s WEAT
#: 6-8 replication (``notebooks/weat_result_replication.ipynb``: "GGG likes XXX.",
#: "GGG is interested in XXX.").
DEFAULT_TEMPLATES: tuple[str, ...] = (
    "[TARGET] likes [ATTRIBUTE].",
    "[TARGET] is interested in [ATTRIBUTE].",
)
#: The paper's example template (Kurita et al. 2019, §3), Delobelle et al.'s ("GGG is a XXX").
PAPER_TEMPLATE = "[TARGET] is a [ATTRIBUTE]."


@dataclass(frozen=True)
class Filled:
    """A template filled in: the sentence and the character spans ``[start, end)`` of the
    target and of the attribute."""

    text: str
    target: tuple[int, int]
    attribute: tuple[int, int]


@dataclass(frozen=True)
class Template:
    """A parsed template: the text before, between and after the two placeholders, and whether
    the target comes first."""

    text: str
    parts: tuple[str, str, str]
    target_first: bool

    def fill(self, target: str, attribute: str) -> Filled:
        """The sentence with ``target`` and ``attribute`` in their slots (spans computed, not
        searched: a word that also occurs elsewhere in the sentence is located exactly)."""
        head, middle, tail = self.parts
        first, second = (target, attribute) if self.target_first else (attribute, target)
        start1 = len(head)
        start2 = start1 + len(first) + len(middle)
        text = head + first + middle + second + tail
        span1, span2 = (start1, start1 + len(first)), (start2, start2 + len(second))
        return Filled(text, *((span1, span2) if self.target_first else (span2, span1)))


def parse_template(text: str) -> Template:
    """A :class:`Template` from ``text``; :class:`~weatkit.errors.WeatkitError` in one line
    naming the template when it has not exactly one ``[TARGET]`` and one ``[ATTRIBUTE]`` or has
    another placeholder.

    Example:
        >>> parse_template("[TARGET] is a [ATTRIBUTE].").fill("he", "nurse").text
        'he is a nurse.'
    """
    if not isinstance(text, str) or not text.strip():
        raise WeatkitError(f"template {text!r} is empty")
    for name in (TARGET, ATTRIBUTE):
        count = text.count(name)
        if count != 1:
            raise WeatkitError(
                f"template {text!r} has {count} {name}: give exactly one {TARGET} and one "
                f"{ATTRIBUTE}"
            )
    for found in _PLACEHOLDER.findall(text):
        if found not in (TARGET, ATTRIBUTE):
            raise WeatkitError(
                f"template {text!r} has {found}: only {TARGET} and {ATTRIBUTE} are placeholders "
                "(weatkit places the masks)"
            )
    target_first = text.index(TARGET) < text.index(ATTRIBUTE)
    first, second = (TARGET, ATTRIBUTE) if target_first else (ATTRIBUTE, TARGET)
    head, rest = text.split(first)
    middle, tail = rest.split(second)
    return Template(text, (head, middle, tail), target_first)
