"""The model a sentence measure scores with: a masked LM or a causal LM's Scorer, by its kind.

A masked-LM method (CrowS-Pairs ``pll``, ``pll-word-l2r``, ``aul``, ``aula``; MBE ``aul``,
``aula``) scores through :class:`~weatkit.sentence.masked_lm.MaskedLM`; a causal-LM method
(CrowS-Pairs ``sum``, ``shared``; MBE ``mean-ll``) through the
:class:`~weatkit.scoring.base.Scorer` of the model spec (:func:`weatkit.scoring.get_scorer`),
so it works with every backend that offers ``causal``. Which kind a model is comes from its
config (:func:`weatkit.scoring.registry.model_kind`); a method of the other kind is a one-line
error naming the method and the model's kind (:func:`weatkit.measures.registry.check_kind`).
"""

from __future__ import annotations

from typing import Any

from weatkit.errors import WeatkitError
from weatkit.measures.registry import MEASURES, check_kind, family_measures
from weatkit.scoring.base import Scorer
from weatkit.scoring.registry import get_scorer, model_kind
from weatkit.scoring.spec import parse_model_spec
from weatkit.sentence.masked_lm import MaskedLM


def sentence_lm(measure: str, model: str, options: Any = None) -> MaskedLM | Scorer:
    """The model of ``model`` (a model spec) for registered measure ``measure``
    (``"crows:sum"``): a :class:`MaskedLM` for a masked-LM method, the spec's Scorer for a
    causal-LM one; :class:`~weatkit.errors.WeatkitError` when the kinds do not fit."""
    family, _, method = measure.partition(":")
    if measure not in MEASURES:
        methods = [m.name.partition(":")[2] for m in family_measures(family)]
        raise WeatkitError(f"unknown method {method!r}: choose one of {', '.join(methods)}")
    spec = parse_model_spec(str(model))
    kind = model_kind(spec, options)
    check_kind(measure, kind, str(model))
    if kind == "glm":
        return get_scorer(spec, options)
    return MaskedLM(spec.model, options)
