"""GEST and EuroGEST plugged into weatkit (:mod:`weatkit.measures.plugins`): their function,
command, ``--compat`` preset, registry entries and ``compare`` section.

=====================  ========  ===============  =========================================
measure                neutral   stereotypical    source
=====================  ========  ===============  =========================================
``gest:g_s``           g_s = 1   above            Pikuliak et al. (2023), arXiv:2311.18711
``eurogest:g_s``       g_s = 1   above            Rowe et al. (2025), EMNLP
=====================  ========  ===============  =========================================

``gest:g_s`` (English GEST) and ``eurogest:g_s`` (its translations into 29 European languages)
are two measures, not one in several languages: their g_s are different formulas (GEST: a ratio
of geometric means of probability ratios; EuroGEST: a ratio of arithmetic means of masculine
shares r ∈ (0, 1)), so their values are not comparable across the two. Both are the ``gest``
method of ``weatkit compare``.

``--compat gest`` — kinit-sk/gest ``src/masked_models/utils.py`` and ``_inference.ipynb`` (commit
7dd908c): base-10 logarithms (``log_base=10``), weatkit's default too.
"""

from __future__ import annotations

from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

PIKULIAK = (
    "Pikuliak, Hrckova, Oresko & Simko (2023). Women Are Beautiful, Men Are Leaders: Gender "
    "Stereotypes in Machine Translation and Language Modeling. arXiv:2311.18711."
)
ROWE = (
    "Rowe, Klimaszewski, Guillou, Vallor & Birch (2025). EuroGEST: Investigating gender "
    "stereotypes in multilingual language models. EMNLP 2025, arXiv:2506.03867."
)
#: The EuroGEST languages (ISO 639-1; Norwegian is ``no``): :data:`weatkit.gest.eurogest.
#: LANGUAGES`, spelled out here so that reading the plugin loads no data module.
EUROGEST_LANGUAGES: tuple[str, ...] = (
    "bg", "ca", "cs", "da", "de", "el", "es", "et", "fi", "fr", "ga", "gl", "hr", "hu", "it",
    "lt", "lv", "mt", "nl", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sv", "tr", "uk",
)  # fmt: skip
#: GEST's registry entries: English GEST's g_s, then EuroGEST's.
MEASURES = (
    Measure(
        "gest:g_s",
        "gest",
        "GEST",
        "stereotype rate g_s = q_m / q_f of the masculine rates of the male and the female "
        "stereotypes",
        neutral=1.0,
        stereotypical="above",
        citation=PIKULIAK,
        model_kinds=("mlm", "glm"),
        languages=("en",),
    ),
    Measure(
        "eurogest:g_s",
        "gest",
        "EuroGEST",
        "stereotype rate g_s = mean(R_8 … R_16) / mean(R_1 … R_7) of the masculine rates "
        "R_s = mean_j r_j, r_j = exp(S_m) / (exp(S_m) + exp(S_f)), over the items of the "
        "male (8–16) and the female (1–7) stereotypes",
        neutral=1.0,
        stereotypical="above",
        citation=ROWE,
        model_kinds=("mlm", "glm"),
        languages=EUROGEST_LANGUAGES,
    ),
)

PLUGIN = Plugin(
    name="gest",
    api={"gest": "weatkit.gest.measure:gest"},
    command="weatkit.cli.gest:gest_command",
    summary="GEST gender-stereotype scores of a language model or an MT system.",
    presets={"gest": {"log_base": "10"}},
    docs="sentence/gest.md",
    measures=MEASURES,
    compare=Compare(
        section="weatkit.gest.compare:read_section",
        rows="weatkit.gest.compare:gest_rows",
        strata="samples within stereotype, per template (EuroGEST: items within stereotype)",
        neutral_test="CI excludes 1",
    ),
)
