"""MBE: the Multilingual Bias Evaluation score of masked language models.

Kaneko, Imankulova, Bollegala and Okazaki (2022), "Gender Bias in Masked Language Models for
Multiple Languages", NAACL 2022, §3; reference code github.com/kanekomasahiro/
bias_eval_in_multiple_mlm (``eval.py``). :mod:`weatkit.mbe.data` reads English word lists and
parallel corpora, selects the target-language sentences whose English side is male or female
(Step 1) and loads the shipped token-id sets; :mod:`weatkit.mbe.score` computes the weighted MBE
score (Eq. 2) from AUL/AULA likelihoods (Step 2, :mod:`weatkit.sentence.masked_lm`) and the
McNemar test against a random indicator; :mod:`weatkit.mbe.run` runs the whole pipeline
(:func:`~weatkit.mbe.run.run_mbe_parallel`: a parallel corpus in, an :class:`MbeRun` out).

The names are imported on first use, so reading the package's plugin (:mod:`weatkit.mbe.plugin`)
imports neither torch nor the data.
"""

from __future__ import annotations

from weatkit._lazy import lazy_exports

#: Public name -> the module it is imported from on first use.
_LAZY = {
    "MBE_MODELS": "weatkit.mbe.data",
    "MBE_SETS": "weatkit.mbe.data",
    "check_tokenizer": "weatkit.mbe.data",
    "downsample": "weatkit.mbe.data",
    "gendered_indices": "weatkit.mbe.data",
    "load_gender_words": "weatkit.mbe.data",
    "load_mbe_set": "weatkit.mbe.data",
    "read_parallel_texts": "weatkit.mbe.data",
    "read_parallel_tsv": "weatkit.mbe.data",
    "select_gendered": "weatkit.mbe.data",
    "MbeRun": "weatkit.mbe.run",
    "MbeSentence": "weatkit.mbe.run",
    "run_mbe": "weatkit.mbe.run",
    "run_mbe_parallel": "weatkit.mbe.run",
    "run_mbe_set": "weatkit.mbe.run",
    "sentences_from_parallel": "weatkit.mbe.run",
    "sentences_from_set": "weatkit.mbe.run",
    "MbeResult": "weatkit.mbe.score",
    "McNemarResult": "weatkit.mbe.score",
    "evaluate_mbe": "weatkit.mbe.score",
    "mbe_score": "weatkit.mbe.score",
    "mcnemar_random": "weatkit.mbe.score",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
