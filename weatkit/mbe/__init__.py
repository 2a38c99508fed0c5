"""MBE: the Multilingual Bias Evaluation score of masked language models.

Kaneko, Imankulova, Bollegala and Okazaki (2022), "Gender Bias in Masked Language Models for
Multiple Languages", NAACL 2022, §3; reference code github.com/kanekomasahiro/
bias_eval_in_multiple_mlm (``eval.py``). :mod:`weatkit.mbe.data` reads English word lists and
parallel corpora, selects the target-language sentences whose English side is male or female
(Step 1) and loads the shipped token-id sets; :mod:`weatkit.mbe.score` computes the weighted MBE
score (Eq. 2) from AUL/AULA likelihoods (Step 2, :mod:`weatkit.sentence.masked_lm`) and the
McNemar test against a random indicator; :mod:`weatkit.mbe.run` runs the whole pipeline
(:func:`~weatkit.mbe.run.run_mbe_parallel`: a parallel corpus in, an :class:`MbeRun` out).
"""

from weatkit.mbe.data import (
    MBE_MODELS,
    MBE_SETS,
    check_tokenizer,
    downsample,
    gendered_indices,
    load_gender_words,
    load_mbe_set,
    read_parallel_texts,
    read_parallel_tsv,
    select_gendered,
)
from weatkit.mbe.run import (
    MbeRun,
    MbeSentence,
    run_mbe,
    run_mbe_parallel,
    run_mbe_set,
    sentences_from_parallel,
    sentences_from_set,
)
from weatkit.mbe.score import MbeResult, McNemarResult, evaluate_mbe, mbe_score, mcnemar_random

__all__ = [
    "MBE_MODELS",
    "MBE_SETS",
    "MbeResult",
    "MbeRun",
    "MbeSentence",
    "McNemarResult",
    "check_tokenizer",
    "downsample",
    "evaluate_mbe",
    "gendered_indices",
    "load_gender_words",
    "load_mbe_set",
    "mbe_score",
    "mcnemar_random",
    "read_parallel_texts",
    "read_parallel_tsv",
    "run_mbe",
    "run_mbe_parallel",
    "run_mbe_set",
    "select_gendered",
    "sentences_from_parallel",
    "sentences_from_set",
]
