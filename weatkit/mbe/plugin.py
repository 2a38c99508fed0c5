"""MBE plugged into weatkit (:mod:`weatkit.measures.plugins`): its function, command, ``--compat``
preset, registry entries and ``compare`` section.

==================  ========  ===============  =========================================
measure             neutral   stereotypical    source
==================  ========  ===============  =========================================
``mbe:aul|aula``    50        above            Kaneko et al. (2022), NAACL
``mbe:mean-ll``     50        above            Kaneko et al. (2022); causal LMs
==================  ========  ===============  =========================================

``--compat mbe`` — kanekomasahiro/bias_eval_in_multiple_mlm ``eval.py`` (commit bb2f2c7): the
pair weights are the dot products of the sentence embeddings (``weight=dot``: its ``cos_sim`` of
two matrices divides by one constant, which cancels in Eq. 2).
"""

from __future__ import annotations

from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

KANEKO_MBE = (
    "Kaneko, Imankulova, Bollegala & Okazaki (2022). Gender Bias in Masked Language Models for "
    "Multiple Languages. NAACL 2022."
)
_SCORE = "MBE = 100 · Σ_(m,f) C(m, f) [A(m) > A(f)] / Σ C(m, f), A = "
#: MBE's registry entries: AULA and AUL of masked LMs, the mean log-likelihood of causal LMs.
MEASURES = (
    *(
        Measure(
            f"mbe:{method}",
            "mbe",
            "MBE",
            f"{_SCORE}{method.upper()} of the male (m) and female (f) sentences",
            neutral=50.0,
            stereotypical="above",
            citation=KANEKO_MBE,
            model_kinds=("mlm",),
        )
        for method in ("aula", "aul")
    ),
    Measure(
        "mbe:mean-ll",
        "mbe",
        "MBE",
        f"{_SCORE}mean token log-likelihood (1/n) Σ_i log P(w_i | w_<i) of the male (m) and "
        "female (f) sentences: the causal analogue of AUL",
        neutral=50.0,
        stereotypical="above",
        citation=KANEKO_MBE,
        model_kinds=("glm",),
    ),
)

PLUGIN = Plugin(
    name="mbe",
    api={"mbe": "weatkit.mbe.measure:mbe"},
    command="weatkit.cli.mbe:mbe_command",
    summary="MBE gender-bias score of a masked LM from a parallel corpus (Kaneko et al., NAACL "
    "2022).",
    presets={"mbe": {"weight": "dot"}},
    docs="sentence/mbe.md",
    measures=MEASURES,
    compare=Compare(
        section="weatkit.mbe.compare:read_section",
        rows="weatkit.mbe.compare:mbe_rows",
        strata="male, female sentences",
        neutral_test="exact binomial over pairs",
        inputs="weatkit.mbe.compare:job_inputs",
    ),
)
