"""``weatkit.lpbs``: the log-probability bias score of a masked LM on one association test.

Roles. LPBS masks a target group's word and inserts an attribute word (Kurita et al. 2019: the
targets *he*/*she*, the attributes career/family words). weatkit reads a test's X and Y as the
two target groups (G₁ = X, G₂ = Y: the ``[TARGET]`` slot) and A and B as the attribute sets
(the ``[ATTRIBUTE]`` slot). ``swap=True`` exchanges the roles — A and B are masked, X and Y
inserted — for tests whose gendered words are the attributes (Caliskan's WEAT 7 and 8: X/Y =
math or science/arts, A/B = male/female terms). The sign keeps WEAT's meaning either way:
S > 0 when X goes with A and Y with B (the double difference is symmetric in the two roles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest
from weatkit.lpbs.options import LpbsOptions
from weatkit.lpbs.score import score_words
from weatkit.lpbs.stats import (
    BIAS_COLUMNS,
    LpbsStatistics,
    bias_scores,
    lpbs_statistics,
    units,
)
from weatkit.lpbs.templates import DEFAULT_TEMPLATES, parse_template

if TYPE_CHECKING:
    from weatkit.embeddings.contextual import ContextualOptions


@dataclass(frozen=True)
class LpbsResult(LpbsStatistics):
    """One test's LPBS, in the style of ``scipy.stats`` results: its statistics (the fields of
    :class:`~weatkit.lpbs.stats.LpbsStatistics`: S = mean(U_A) − mean(U_B), d = S /
    std(U_A ∪ U_B) with ddof 1, the permutation p and the percentile bootstrap intervals) and:

    Attributes:
        test: the association test (its X, Y, A, B as given).
        swap: whether A and B were masked and X and Y inserted.
        unit: ``attribute`` or ``sentence``; n_a, n_b: units per attribute set.
        templates: the templates' texts.
        scores: b(a, t) per template and attribute (:data:`~weatkit.lpbs.stats.BIAS_COLUMNS`;
            ``set`` is the name of the attribute set, ``s_1``/``s_2`` the masked groups').
        words: the log-probabilities per template, group, target word and attribute
            (:data:`~weatkit.lpbs.score.WORD_COLUMNS`).
    """

    test: AssociationTest
    swap: bool
    unit: str
    n_a: int
    n_b: int
    templates: tuple[str, ...]
    scores: pd.DataFrame = field(repr=False)
    words: pd.DataFrame = field(repr=False)

    @property
    def confidence_interval(self) -> tuple[float, float] | None:
        """The effect size's interval (scipy-style alias, as :class:`~weatkit.engine.
        weat_types.WeatResult`)."""
        return self.effect_size_ci


def lpbs(
    model: str,
    test: AssociationTest | Sequence[Sequence[str]],
    *,
    templates: Sequence[str] | None = None,
    swap: bool = False,
    unit: str = "attribute",
    subtokens: str = "refuse",
    n_bootstrap: int = 5000,
    n_permutations: int = 10000,
    max_exact: int = 1_000_000,
    alternative: str = "two-sided",
    seed: int = 0,
    confidence_level: float = 0.95,
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
) -> LpbsResult:
    """LPBS (Kurita, Vyas, Pareek, Black & Tsvetkov 2019) of a masked LM on one test.

    For each template t, masked-group word w and inserted attribute a::

        s(G, a, t) = log Σ_{w∈G} P([MASK]=w | t(MASK, a)) − log Σ_{w∈G} P([MASK]=w | t(MASK, MASK))
        b(a, t)    = s(G₁, a, t) − s(G₂, a, t)
        S = mean_{u∈U_A} u − mean_{u∈U_B} u,   d = S / std(U_A ∪ U_B)

    the units U being per attribute the mean of b over templates (``unit="attribute"``, the
    paper) or every (template, attribute) (``"sentence"``, the reference notebook); details in
    :mod:`weatkit.lpbs.stats`.

    Args:
        model: a masked LM: ``hf:ID_OR_DIR``, a hub id or a directory.
        test: an :class:`~weatkit.lists.model.AssociationTest` or four word lists (X, Y, A, B).
        templates: texts with one ``[TARGET]`` and one ``[ATTRIBUTE]``
            (:data:`~weatkit.lpbs.templates.DEFAULT_TEMPLATES` when None).
        swap: mask A and B and insert X and Y (module docstring).
        unit: ``attribute`` or ``sentence``.
        subtokens: a masked word of several tokens is refused (``refuse``) or read as its first
            token (``first``, the reference code).
        n_bootstrap, n_permutations, max_exact, alternative, seed, confidence_level: the test.
        options: model loading options (device, dtype, batch size, cache).
        show_progress: progress bar (None: on a terminal).

    Raises:
        WeatkitError: a model of another backend or without a mask token, a bad template, an
            unknown word or a multi-token masked word (one line naming it).

    Example:
        >>> res = lpbs("bert-base-uncased", [["he"], ["she"], ["engineer", "doctor"],
        ...            ["nurse", "teacher"]], n_bootstrap=1000)  # doctest: +SKIP
        >>> res.statistic, res.pvalue, res.confidence_interval  # doctest: +SKIP
    """
    from weatkit.scoring.spec import parse_model_spec
    from weatkit.sentence.masked_lm import MaskedLM

    if not isinstance(test, AssociationTest):
        sets = [tuple(str(w) for w in words) for words in test]
        if len(sets) != 4:
            raise WeatkitError(f"give a test or four word lists (X, Y, A, B), got {len(sets)}")
        test = AssociationTest("lpbs", "en", "words", "words", *sets)
    texts = tuple(DEFAULT_TEMPLATES if templates is None else templates)
    LpbsOptions(texts, swap, unit, subtokens, alternative, n_permutations, max_exact).validate()
    parsed = [parse_template(t) for t in texts]
    names = dict(zip("XYAB", test.names, strict=True))
    masked, inserted = ("A", "B"), ("X", "Y")
    if not swap:
        masked, inserted = inserted, masked
    sets = test.sets()
    for key in (*masked, *inserted):
        if not sets[key]:
            raise WeatkitError(f"set {key} ({names[key]}) of test {test.test} is empty")
    spec = parse_model_spec(str(model))
    if spec.backend != "hf":
        raise WeatkitError(f"LPBS needs a masked LM of the hf backend; {model} is {spec.backend}:")
    lm = MaskedLM(spec.model, options)
    attributes = list(dict.fromkeys([*sets[inserted[0]], *sets[inserted[1]]]))
    words = score_words(
        lm,
        parsed,
        {k: sets[k] for k in masked},
        attributes,
        subtokens=subtokens,
        show_progress=show_progress,
    )
    scores = bias_scores(words, masked, {k: sets[k] for k in inserted})
    u_a, u_b = units(scores, inserted[0], unit), units(scores, inserted[1], unit)
    stats: LpbsStatistics = lpbs_statistics(
        u_a,
        u_b,
        n_bootstrap=n_bootstrap,
        n_permutations=n_permutations,
        max_exact=max_exact,
        alternative=alternative,
        seed=seed,
        confidence_level=confidence_level,
    )
    scores = scores.assign(set=scores["set"].map(names))[BIAS_COLUMNS]
    words = words.assign(group=words["group"].map(names))
    return LpbsResult(
        **vars(stats),
        test=test,
        swap=swap,
        unit=unit,
        n_a=len(u_a),
        n_b=len(u_b),
        templates=texts,
        scores=scores,
        words=words,
    )
