"""CEAT, the Contextualized Embedding Association Test (Guo & Caliskan, AIES 2021): WEATs drawn
with one corpus context per word, pooled by a random-effects model.

* :mod:`weatkit.ceat.contexts` — the words' contexts in a corpus (text, JSONL, ``datasets``);
* :mod:`weatkit.ceat.draws` — the draws and their combined effect size (the formulas);
* :mod:`weatkit.ceat.options` — :class:`CeatOptions`;
* :mod:`weatkit.ceat.run` — :func:`ceat`, the whole run on a transformer model;
* :mod:`weatkit.ceat.intersectional` — the paper's intersectional bias detection, IBD and EIBD;
* :mod:`weatkit.ceat.command` — ``weatkit ceat``; :mod:`weatkit.ceat.plugin` — what the rest of
  weatkit reads of the measure (:mod:`weatkit.measures.plugins`).

Nothing is imported here, so that reading the plugin stays cheap; ``weatkit.ceat`` (the
attribute of ``weatkit``) is the function :func:`weatkit.ceat.run.ceat`.
"""
