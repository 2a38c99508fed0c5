"""The registry of bias measures: each measure is registered once, with its metadata.

Every measure weatkit computes has one :class:`Measure` entry in :data:`MEASURES`: its neutral
value (what an unbiased model scores), which side of it is stereotypical, the paper it comes
from, the model kinds and languages it applies to. ``weatkit compare`` reads its applicability
decisions and the measures' metadata from here.

=====================  ========  ===============  =========================================
measure                neutral   stereotypical    source
=====================  ========  ===============  =========================================
``weat``               d = 0     above            Caliskan et al. (2017), Science 356
``rnd``                0         below            Garg et al. (2018), PNAS 115
``rnsb``               0         above            Sweeney & Najafian (2019), ACL
``mac``                none      —                Manzini et al. (2019), NAACL
``ect``                ρ = 1     below            Dev & Phillips (2019), AISTATS
``ripa``               0         above            Ethayarajh et al. (2019), ACL
``wefat``              r = 0     above            Caliskan et al. (2017), Science 356
``sc-weat``            ES = 0    above            Toney & Caliskan (2021), EMNLP
``direct-bias``        0         above            Bolukbasi et al. (2016), NeurIPS
=====================  ========  ===============  =========================================

The measure packages (:mod:`weatkit.measures.plugins`) register theirs after these, each listed
in its package's ``plugin`` module (``weatkit.<name>.plugin``).

The word-vector association metrics (:mod:`weatkit.association`) say which side is biased as
their papers read them: RND below 0 (the targets nearer the first group), ECT below ρ = 1 (the
groups order the attributes differently); RNSB and DirectBias are unsigned, so every value above
0 is bias; MAC is a distance with no neutral value (compared between embeddings). What a
word-level measure takes of a test (X, Y, A, B) in ``weatkit run --metrics`` is its ``accepts``
(:data:`ACCEPTS`).

Model kinds are ``static`` (word embeddings), ``mlm`` (masked
LMs) and ``glm`` (generative, i.e. causal LMs).
"""

from __future__ import annotations

from collections.abc import Iterable

from weatkit.errors import WeatkitError
from weatkit.measures.measure import KIND_NAMES, KINDS, Measure, Side
from weatkit.measures.plugins import plugins

CALISKAN = (
    "Caliskan, Bryson & Narayanan (2017). Semantics derived automatically from language corpora "
    "contain human-like biases. Science 356(6334)."
)
GARG = (
    "Garg, Schiebinger, Jurafsky & Zou (2018). Word embeddings quantify 100 years of gender and "
    "ethnic stereotypes. PNAS 115(16)."
)
SWEENEY = (
    "Sweeney & Najafian (2019). A Transparent Framework for Evaluating Unintended Demographic "
    "Bias in Word Embeddings. ACL 2019."
)
MANZINI = (
    "Manzini, Lim, Tsvetkov & Black (2019). Black is to Criminal as Caucasian is to Police: "
    "Detecting and Removing Multiclass Bias in Word Embeddings. NAACL 2019."
)
DEV = "Dev & Phillips (2019). Attenuating Bias in Word Vectors. AISTATS 2019."
ETHAYARAJH = (
    "Ethayarajh, Duvenaud & Hirst (2019). Understanding Undesirable Word Embedding Associations. "
    "ACL 2019."
)
TONEY = (
    "Toney & Caliskan (2021). ValNorm Quantifies Semantics to Reveal Consistent Valence Biases "
    "Across Languages and Over Centuries. EMNLP 2021."
)
BOLUKBASI = (
    "Bolukbasi, Chang, Zou, Saligrama & Kalai (2016). Man is to Computer Programmer as Woman is "
    "to Homemaker? Debiasing Word Embeddings. NeurIPS 2016."
)


#: Every registered measure by name.
MEASURES: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    """Add ``measure`` to :data:`MEASURES` (each name once)."""
    if measure.name in MEASURES:
        raise WeatkitError(f"measure {measure.name!r} is already registered")
    unknown = set(measure.model_kinds) - set(KINDS)
    if unknown:
        raise WeatkitError(f"measure {measure.name!r}: unknown model kind {sorted(unknown)[0]}")
    MEASURES[measure.name] = measure
    return measure


def get_measure(name: str) -> Measure:
    """The registered measure ``name`` (WEAT tests, e.g. ``"ca-weat:v1:weat1@-2"``, are all the
    measure ``weat``: see :attr:`~weatkit.measures.result.MeasureResult.test`).

    Raises:
        WeatkitError: no such measure.
    """
    if name in MEASURES:
        return MEASURES[name]
    raise WeatkitError(f"unknown measure {name!r}: choose one of {', '.join(MEASURES)}")


def check_kind(name: str, kind: str, source: str) -> None:
    """A one-line WeatkitError naming the method when measure ``name`` (``FAMILY:METHOD``) does
    not take a model of ``kind``, with the methods of the family that do.

    Example: ``check_kind("crows:pll", "glm", "gpt2")`` raises ``--method pll needs a masked
    LM; gpt2 is a causal LM (for a causal LM: --method sum or shared)``.
    """
    measure = get_measure(name)
    if kind in measure.model_kinds:
        return
    prefix, _, method = name.partition(":")
    needs = " or ".join(KIND_NAMES[k] for k in measure.model_kinds)
    fits = [
        m.name.partition(":")[2]
        for m in family_measures(measure.family)
        if kind in m.model_kinds and m.name.startswith(prefix + ":")
    ]
    hint = f" (for {KIND_NAMES.get(kind, kind)}: --method {' or '.join(fits)})" if fits else ""
    raise WeatkitError(
        f"--method {method} needs {needs}; {source} is {KIND_NAMES.get(kind, kind)}{hint}"
    )


def family_measures(family: str) -> list[Measure]:
    """The registered measures of one ``weatkit compare`` method, in registration order."""
    return [m for m in MEASURES.values() if m.family == family]


def _register_all(measures: Iterable[Measure]) -> None:
    for m in measures:
        register(m)


#: What each word-level measure takes of a test (X, Y, A, B) in ``weatkit run --metrics``
#: (:mod:`weatkit.association.query`; WEFAT needs a property per word: not a run's metric).
ACCEPTS = {
    "weat": "a test: targets X, Y and attributes A, B",
    "rnd": "a test: the words of A, then of B, between the groups X and Y",
    "rnsb": "a test: the target sets X, Y; A the positive, B the negative words",
    "mac": "a test: the targets X, Y and the attribute sets A, B",
    "ect": "a test: the groups X, Y over the words of A, then of B (3 words at least)",
    "ripa": "a test with definitional pairs: the words of A, then of B",
    "sc-weat": "a test: every word of X and Y against A and B",
    "direct-bias": "a test with definitional pairs: the words of A, then of B",
}
#: The association metrics of word vectors (weatkit.association): name, label, description,
#: neutral value, biased side, citation.
_ASSOCIATION: list[tuple[str, str, str, float | None, Side | None, str]] = [
    ("rnd", "RND", "relative norm distance Σ_v (‖v − m_A‖ − ‖v − m_B‖) of the targets v to the "
     "mean vectors of the groups A and B; below 0: nearer to A", 0.0, "below", GARG),
    ("rnsb", "RNSB", "KL(P ‖ U) of the target sets' normalised mean negative probability under a "
     "logistic regression trained on negative and positive words", 0.0, "above", SWEENEY),
    ("mac", "MAC", "mean over targets and attribute sets of the mean cosine distance "
     "1 − cos(t, a); no neutral value", None, None, MANZINI),
    ("ect", "ECT", "Spearman ρ of the cosines of the two target sets' mean vectors to each "
     "attribute word; 1: no bias", 1.0, "below", DEV),
    ("ripa", "RIPA", "mean over the targets of ⟨w, b⟩, b the unit first principal component of "
     "the definitional pairs' differences x − y", 0.0, "above", ETHAYARAJH),
    ("wefat", "WEFAT", "Pearson r between the targets' effect sizes s(w, A, B) / std_{A∪B} "
     "cos(w, x) and a real-world property of each", 0.0, "above", CALISKAN),
    ("sc-weat", "SC-WEAT", "effect size of one word, (mean_A cos(w, a) − mean_B cos(w, b)) / "
     "std_{A∪B} cos(w, x), with its permutation p", 0.0, "above", TONEY),
    ("direct-bias", "DirectBias", "mean over neutral words of |cos(w, g)|^c, g the first "
     "principal component of the pair-centred definitional pairs", 0.0, "above", BOLUKBASI),
]  # fmt: skip
_register_all(
    [
        Measure(
            "weat",
            "weat",
            "WEAT",
            "Cohen's d = (mean_X s(x) − mean_Y s(y)) / std_{X∪Y} s(w), s(w) = mean_A cos(w, a) "
            "− mean_B cos(w, b); X, A the stereotypically associated sets",
            neutral=0.0,
            stereotypical="above",
            citation=CALISKAN,
            model_kinds=KINDS,
            accepts=ACCEPTS["weat"],
        ),
        *(
            Measure(
                name, name, label, text, neutral, side, cite, KINDS, accepts=ACCEPTS.get(name, "")
            )
            for name, label, text, neutral, side, cite in _ASSOCIATION
        ),
    ]
)
#: The measures of the measure packages (:mod:`weatkit.measures.plugins`), after the built-in ones.
_register_all(m for plugin in plugins() for m in plugin.measures)
