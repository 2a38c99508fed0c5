"""The options of an LPBS run (declared for the command line and files in
:data:`weatkit.lpbs.plugin.SECTION`)."""

from __future__ import annotations

from dataclasses import dataclass

from weatkit.errors import ConfigError, WeatkitError
from weatkit.lpbs.score import SUBTOKENS
from weatkit.lpbs.stats import ALTERNATIVES, UNITS
from weatkit.lpbs.templates import DEFAULT_TEMPLATES, parse_template


@dataclass(frozen=True)
class LpbsOptions:
    """How :func:`weatkit.lpbs.measure.lpbs` scores and tests (its arguments of the same names).

    Attributes:
        templates: texts with one ``[TARGET]`` and one ``[ATTRIBUTE]``.
        swap: mask A and B, insert X and Y.
        unit: ``attribute`` (the paper) or ``sentence`` (the reference notebook).
        subtokens: a masked word of several tokens: ``refuse`` or ``first`` (the reference).
        alternative: of the permutation p, ``two-sided`` (the reference), ``greater``, ``less``.
        n_permutations: random re-splits when they cannot all be enumerated (0: no p).
        max_exact: enumerate every re-split when there are at most this many.
    """

    templates: tuple[str, ...] = DEFAULT_TEMPLATES
    swap: bool = False
    unit: str = "attribute"
    subtokens: str = "refuse"
    alternative: str = "two-sided"
    n_permutations: int = 10000
    max_exact: int = 1_000_000

    def validate(self) -> None:
        """ConfigError naming the field of a bad value (a bad template names itself)."""
        for name, value, choices in (
            ("unit", self.unit, UNITS),
            ("subtokens", self.subtokens, SUBTOKENS),
            ("alternative", self.alternative, ALTERNATIVES),
        ):
            if value not in choices:
                raise ConfigError(f"choose {', '.join(choices)}, not {value!r}", field=name)
        for name in ("n_permutations", "max_exact"):
            if getattr(self, name) < 0:
                raise ConfigError(f"must be >= 0, got {getattr(self, name)}", field=name)
        if not self.templates:
            raise ConfigError("give at least one template", field="templates")
        for text in self.templates:
            try:
                parse_template(text)
            except WeatkitError as err:
                raise ConfigError(str(err), field="templates") from err
