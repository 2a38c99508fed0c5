"""LPBS plugged into weatkit (:mod:`weatkit.measures.plugins`): its function, command, options
and ``--compat`` preset.

``--compat kurita`` — keitakurita/contextual_embedding_bias_measure
``notebooks/weat_result_replication.ipynb`` and ``lib/bert_utils.py``: every (template,
attribute) row a unit of the test (``unit=sentence``), a word of several WordPieces read as its
first (``subtokens=first``, ``accept_wordpiece=True``); ``docs/measures/lpbs.md`` says what else
differs.
"""

from __future__ import annotations

from weatkit.config.declare import Option, Section
from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

KURITA = (
    "Kurita, Vyas, Pareek, Black & Tsvetkov (2019). Measuring Bias in Contextualized Word "
    "Representations. GeBNLP 2019."
)
#: LPBS's registry entry: the effect size d of the test over the attribute sets.
MEASURE = Measure(
    "lpbs",
    "lpbs",
    "LPBS",
    "effect size d = (mean(U_A) − mean(U_B)) / std(U_A ∪ U_B) of the log-probability bias "
    "scores b(a, t) = log P(X | t(·, a)) / P(X | t(·, ·)) − log P(Y | t(·, a)) / P(Y | t(·, ·))",
    neutral=0.0,
    stereotypical="above",
    citation=KURITA,
    model_kinds=("mlm",),
)

#: The options of ``weatkit lpbs`` (:class:`weatkit.lpbs.options.LpbsOptions`).
SECTION = Section(
    "",
    (
        Option(
            "templates",
            "texts",
            ("[TARGET] likes [ATTRIBUTE].", "[TARGET] is interested in [ATTRIBUTE]."),
            "A template with one [TARGET] (the masked word) and one [ATTRIBUTE]; repeatable.",
            "--template",
        ),
        Option(
            "swap",
            "bool",
            False,
            "Mask the attribute sets A/B and insert the targets X/Y (for tests whose gendered "
            "words are A/B, as Caliskan's WEAT 7 and 8).",
            "--swap",
        ),
        Option(
            "unit",
            "str",
            "attribute",
            "Units of the test: per attribute the mean over templates (the paper), or every "
            "template x attribute sentence (the reference notebook).",
            "--unit",
            choices=("attribute", "sentence"),
        ),
        Option(
            "subtokens",
            "str",
            "refuse",
            "A masked word of several tokens: refuse it, or read its first token (the "
            "reference code).",
            "--subtokens",
            choices=("refuse", "first"),
        ),
        Option(
            "alternative",
            "str",
            "two-sided",
            "Alternative of the permutation p.",
            "--alternative",
            choices=("two-sided", "greater", "less"),
        ),
        Option(
            "n_permutations",
            "int",
            10000,
            "Random re-splits of the permutation p when they cannot all be enumerated (0: no p).",
            "--permutations",
        ),
        Option(
            "max_exact",
            "int",
            1_000_000,
            "Enumerate every re-split when there are at most this many.",
            "--max-exact",
        ),
    ),
)

PLUGIN = Plugin(
    name="lpbs",
    api={"lpbs": "weatkit.lpbs.measure:lpbs"},
    command="weatkit.lpbs.command:lpbs_command",
    summary="LPBS: log-probability bias score of a masked LM on association tests (Kurita et al., "
    "GeBNLP 2019).",
    section=SECTION,
    presets={"kurita": {"unit": "sentence", "subtokens": "first"}},
    docs="measures/lpbs.md",
    measures=(MEASURE,),
    compare=Compare(
        section="weatkit.lpbs.compare:read_section",
        rows="weatkit.lpbs.compare:lpbs_rows",
        inputs="weatkit.lpbs.compare:job_inputs",
    ),
    report="weatkit.lpbs.report:sections",
    plots={"forest": "weatkit.lpbs.plots:forest"},
)
