"""CrowS-Pairs plugged into weatkit (:mod:`weatkit.measures.plugins`): its function, command,
``--compat`` presets, registry entries and ``compare`` section.

=======================  ========  ===============  =========================================
measure                  neutral   stereotypical    source
=======================  ========  ===============  =========================================
``crows:pll``            50        above            Nangia et al. (2020), EMNLP
``crows:pll-word-l2r``   50        above            Kauf & Ivanova (2023), ACL
``crows:aul|aula``       50        above            Kaneko & Bollegala (2022), AAAI
``crows:sum|shared``     50        above            Nangia et al. (2020); causal LMs
=======================  ========  ===============  =========================================

What each ``--compat`` preset's tool does (read in its repository; docs/guides/compat.md):

* ``crows-pairs`` — nyu-mll/crows-pairs ``metric.py`` (Nangia et al. 2020; commit 8aaac11): PLL
  of the shared tokens, scores rounded to 3 decimals before the comparison, ties neutral,
  ``difflib`` given ``sent_more`` first for stereo pairs and ``sent_less`` first for antistereo
  pairs (``pair_order=by-direction``), the token log-probabilities summed in float64.
* ``bias-eval-mlm`` — kanekomasahiro/evaluate_bias_in_mlm ``evaluate.py`` (Kaneko & Bollegala
  2022; commit 6b10239), ``--method`` as chosen (its ``cps`` is ``pll``): ``sent_more`` always
  first (``pair_order=more-first``), the PLL summed in float32 by ``torch.sum``
  (``sum_dtype=float32``), 3 decimals for ``pll`` and none for ``aul``/``aula``
  (``decimals=reference``); a tie is not a win, as in weatkit's metric
  (:mod:`weatkit.crows.score` has the options themselves).
"""

from __future__ import annotations

from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

NANGIA = (
    "Nangia, Vania, Bhalerao & Bowman (2020). CrowS-Pairs: A Challenge Dataset for Measuring "
    "Social Biases in Masked Language Models. EMNLP 2020."
)
KANEKO_AUL = (
    "Kaneko & Bollegala (2022). Unmasking the Mask – Evaluating Social Biases in Masked "
    "Language Models. AAAI 2022."
)
KAUF = "Kauf & Ivanova (2023). A Better Way to Do Masked Language Model Scoring. ACL 2023."
_LANGUAGES = ("en", "fr", "ja", "ru")
_RATE = "100 · #(pairs whose more stereotypical sentence has the higher "


def _measure(method: str, text: str, citation: str, kind: str) -> Measure:
    return Measure(
        f"crows:{method}",
        "crows",
        "CrowS-Pairs",
        f"{_RATE}{text}) / N",
        neutral=50.0,
        stereotypical="above",
        citation=citation,
        model_kinds=(kind,),
        languages=_LANGUAGES,
    )


#: CrowS-Pairs' registry entries: one per scoring method, masked LMs' then causal LMs'.
MEASURES = (
    *(
        _measure(method, method.upper(), NANGIA if method == "pll" else KANEKO_AUL, "mlm")
        for method in ("pll", "aul", "aula")
    ),
    _measure(
        "pll-word-l2r", "PLL, the later sub-tokens of a scored token's word masked too", KAUF, "mlm"
    ),
    _measure("sum", "sum of token log-probabilities Σ_i log P(w_i | w_<i)", NANGIA, "glm"),
    _measure(
        "shared", "sum of the shared tokens' log-probabilities given all before them", NANGIA, "glm"
    ),
)

PLUGIN = Plugin(
    name="crows",
    api={"crows": "weatkit.crows.measure:crows"},
    command="weatkit.cli.crows:crows_command",
    summary="CrowS-Pairs: % of pairs where a masked or causal LM prefers the more stereotypical "
    "sentence.",
    presets={
        "crows-pairs": {
            "method": "pll",
            "decimals": 3,
            "pair_order": "by-direction",
            "sum_dtype": "float64",
        },
        "bias-eval-mlm": {
            "decimals": "reference",
            "pair_order": "more-first",
            "sum_dtype": "float32",
        },
    },
    docs="sentence/crows-pairs.md",
    measures=MEASURES,
    compare=Compare(
        section="weatkit.crows.compare:read_section",
        rows="weatkit.crows.compare:crows_rows",
        strata="pairs",
        neutral_test="exact binomial",
    ),
)
