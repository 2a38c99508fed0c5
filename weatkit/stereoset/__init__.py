"""StereoSet: stereotype scores (LMS, SS, ICAT) of language models.

Nadeem, M., Bethke, A. and Reddy, S. (2021). StereoSet: Measuring stereotypical bias in
pretrained language models. ACL 2021 (github.com/moinnadeem/StereoSet); the translated sets of
Öztürk et al., "How Different is Stereotypical Bias across Languages?"
(github.com/slds-lmu/stereotypes-multi).

:mod:`weatkit.stereoset.data` reads the dataset (English dev set, de/fr/es/tr translations or a
file of the same schema) and reference prediction files, :mod:`weatkit.stereoset.metrics`
computes LMS, SS and ICAT in the pooled and the per-target-term conventions, and
:mod:`weatkit.stereoset.scoring` scores the intrasentence task with masked or causal LMs.

The names are imported on first use, so reading the package's plugin
(:mod:`weatkit.stereoset.plugin`) imports neither torch nor the data.
"""

from __future__ import annotations

from weatkit._lazy import lazy_exports

#: Public name -> the module it is imported from on first use.
_LAZY = {
    "COLUMNS": "weatkit.stereoset.metrics",
    "LANGS": "weatkit.stereoset.data",
    "Example": "weatkit.stereoset.data",
    "Sentence": "weatkit.stereoset.data",
    "StereoSet": "weatkit.stereoset.data",
    "evaluate": "weatkit.stereoset.metrics",
    "load_stereoset": "weatkit.stereoset.data",
    "read_predictions": "weatkit.stereoset.data",
    "to_nested": "weatkit.stereoset.metrics",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
