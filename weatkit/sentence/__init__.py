"""Sentence likelihoods under masked language models (AUL, AULA, pseudo-log-likelihood)."""

from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence, UnmaskedScores

__all__ = ["MaskedLM", "TokenizedSentence", "UnmaskedScores"]
