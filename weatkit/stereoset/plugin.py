"""StereoSet plugged into weatkit (:mod:`weatkit.measures.plugins`): its function, command,
``--compat`` preset, registry entries and ``compare`` section.

=====================  ========  ===============  =========================================
measure                neutral   stereotypical    source
=====================  ========  ===============  =========================================
``stereoset:ss_C``     50        above            Nadeem et al. (2021), ACL
``stereoset:lms_C``    none      (ideal 100)      Nadeem et al. (2021), ACL
``stereoset:icat_C``   none      (ideal 100)      Nadeem et al. (2021), ACL
=====================  ========  ===============  =========================================

LMS measures language modelling, not bias: an unbiased model can have any LMS. ICAT = LMS ·
min(SS, 100 − SS) / 50 is 100 only for a perfect language model without bias and falls on both
sides of SS = 50, so it has no neutral value and no stereotypical side; both have ``ideal``
100. The measures come in two conventions C (:mod:`weatkit.stereoset.metrics`): ``term``
(StereoSet's official scores: means over target terms, ICAT of the means) and ``pooled`` (over
examples).

``--compat stereoset`` — moinnadeem/StereoSet ``code/eval_discriminative_models.py`` and
``eval_generative_models.py`` (commit ead7d08): every ``BLANK`` of a context replaced by the
masked insertion, the first mask read (``blanks=all``); GPT-2's first token scored from a pass
over ``<|endoftext|>`` alone and the others from the sentence without it
(``bos_pass=separate``); the candidate word tokenised alone (``leading_space=false``: for
RoBERTa the word-initial BPE token, the bug reported in McGill-NLP/bias-bench issue 5).
"""

from __future__ import annotations

from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

NADEEM = (
    "Nadeem, Bethke & Reddy (2021). StereoSet: Measuring stereotypical bias in pretrained "
    "language models. ACL 2021."
)
#: StereoSet's registry entries: SS, LMS and ICAT in each convention.
MEASURES = tuple(
    Measure(
        f"stereoset:{name}_{convention}",
        "stereoset",
        "StereoSet",
        f"{text} ({how})",
        neutral=neutral,
        stereotypical="above" if neutral is not None else None,
        citation=NADEEM,
        model_kinds=("mlm", "glm"),
        languages=("en", "de", "fr", "es", "tr"),
        ideal=ideal,
    )
    for convention, how in (
        ("term", "mean over target terms; ICAT of the means: StereoSet's scores"),
        ("pooled", "counts pooled over all N examples"),
    )
    for name, text, neutral, ideal in (
        ("ss", "SS = 100 · #(stereotype preferred to anti-stereotype) / N", 50.0, None),
        ("lms", "LMS = 100 · #(meaningful preferred to unrelated) / 2N", None, 100.0),
        ("icat", "ICAT = LMS · min(SS, 100 − SS) / 50", None, 100.0),
    )
)

PLUGIN = Plugin(
    name="stereoset",
    api={"stereoset": "weatkit.stereoset.measure:stereoset"},
    command="weatkit.cli.stereoset:stereoset_command",
    summary="StereoSet stereotype scores (LMS, SS, ICAT) of a language model or a predictions "
    "file.",
    presets={"stereoset": {"blanks": "all", "bos_pass": "separate", "leading_space": False}},
    docs="sentence/stereoset.md",
    measures=MEASURES,
    compare=Compare(
        section="weatkit.stereoset.compare:read_section",
        rows="weatkit.stereoset.compare:stereoset_rows",
        strata="examples within target term",
        neutral_test="exact binomial (SS)",
    ),
)
