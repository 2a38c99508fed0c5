"""StereoSet: stereotype scores (LMS, SS, ICAT) of language models.

Nadeem, M., Bethke, A. and Reddy, S. (2021). StereoSet: Measuring stereotypical bias in
pretrained language models. ACL 2021 (github.com/moinnadeem/StereoSet); the translated sets of
Öztürk et al., "How Different is Stereotypical Bias across Languages?"
(github.com/slds-lmu/stereotypes-multi).

:mod:`weatkit.stereoset.data` reads the dataset (English dev set, de/fr/es/tr translations or a
file of the same schema) and reference prediction files, :mod:`weatkit.stereoset.metrics`
computes LMS, SS and ICAT in the pooled and the per-target-term conventions, and
:mod:`weatkit.stereoset.scoring` scores the intrasentence task with masked or causal LMs.
"""

from weatkit.stereoset.data import (
    LANGS,
    Example,
    Sentence,
    StereoSet,
    load_stereoset,
    read_predictions,
)
from weatkit.stereoset.metrics import COLUMNS, evaluate, to_nested

__all__ = [
    "COLUMNS",
    "LANGS",
    "Example",
    "Sentence",
    "StereoSet",
    "evaluate",
    "load_stereoset",
    "read_predictions",
    "to_nested",
]
