"""CEAT plugged into weatkit (:mod:`weatkit.measures.plugins`): its function, command, options
and ``--compat`` preset.

``--compat ceat`` — weiguowilliam/CEAT ``code/ceat.py`` and ``generate_ebd_bert.py``: the
one-sided p-value ``norm.sf(z)`` of CES (``alternative=greater``) and the word's last sub-token
(``subwords=last``); :mod:`weatkit.ceat.draws` says what else differs.
"""

from __future__ import annotations

from weatkit.config.declare import Option, Section
from weatkit.measures.measure import Measure
from weatkit.measures.plugins import Compare, Plugin

GUO = (
    "Guo & Caliskan (2021). Detecting Emergent Intersectional Biases: Contextualized Word "
    "Embeddings Contain a Distribution of Human-like Biases. AIES 2021."
)
#: CEAT's registry entry: a contextual model's measure, whatever its head.
MEASURE = Measure(
    "ceat",
    "ceat",
    "CEAT",
    "combined effect size CES = Σ_i w_i ES_i / Σ_i w_i of N WEATs drawn with one corpus context "
    "per word, w_i = 1 / (V_i + σ²_between) the random-effects weights",
    neutral=0.0,
    stereotypical="above",
    citation=GUO,
    model_kinds=("mlm", "glm"),
)

#: The options of ``weatkit ceat`` (:class:`weatkit.ceat.options.CeatOptions`): the corpus's
#: contexts and the draws.
SECTION = Section(
    "ceat",
    (
        Option(
            "text_field",
            "str",
            "text",
            "The text of a JSONL record or a dataset row.",
            "--text-field",
        ),
        Option("split", "str", "train", "The split of an hf: dataset.", "--split"),
        Option(
            "contexts_per_word",
            "int",
            1000,
            "At most this many contexts per word, a reservoir sample drawn with --seed.",
            "--contexts-per-word",
        ),
        Option(
            "ignore_case",
            "bool",
            False,
            "Find the words in the corpus whatever their case.",
            "--ignore-case",
        ),
        Option(
            "window",
            "int",
            None,
            "Keep this many words on each side of the word in its context (default: the "
            "whole line).",
            "--window",
        ),
        Option(
            "n_draws",
            "int",
            10_000,
            "N, the WEATs drawn with one random context per word (the paper's 10,000).",
            "--draws",
        ),
        Option(
            "min_contexts",
            "int",
            1,
            "A word with fewer contexts counts as missing (--min-coverage of its set).",
            "--min-contexts",
        ),
        Option(
            "draw_method",
            "str",
            "auto",
            "How the draws are computed: a table of every context pair's cosine, or the drawn "
            "vectors (the same numbers; auto: the cheaper).",
            "--draw-method",
            choices=("auto", "table", "vectors"),
        ),
    ),
)

PLUGIN = Plugin(
    name="ceat",
    api={
        "ceat": "weatkit.ceat.run:ceat",
        "ibd": "weatkit.ceat.intersectional:ibd",
        "eibd": "weatkit.ceat.intersectional:eibd",
    },
    command="weatkit.ceat.command:ceat_command",
    summary="CEAT: WEATs drawn with one corpus context per word, pooled into a combined effect "
    "size (Guo & Caliskan, AIES 2021).",
    section=SECTION,
    presets={"ceat": {"alternative": "greater", "subwords": "last"}},
    docs="measures/ceat.md",
    measures=(MEASURE,),
    compare=Compare(
        section="weatkit.ceat.compare:read_section",
        rows="weatkit.ceat.compare:ceat_rows",
        inputs="weatkit.ceat.compare:job_inputs",
    ),
    report="weatkit.ceat.report:sections",
    plots={"forest": "weatkit.ceat.plots:forest", "draws": "weatkit.ceat.plots:draws"},
)
