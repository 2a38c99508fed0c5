"""LPBS, the log-probability bias score of a masked LM (Kurita, Vyas, Pareek, Black & Tsvetkov,
GeBNLP 2019, "Measuring Bias in Contextualized Word Representations").

* :mod:`weatkit.lpbs.templates` — ``[TARGET]``/``[ATTRIBUTE]`` templates;
* :mod:`weatkit.lpbs.score` — the masked-token log-probabilities (through
  :class:`~weatkit.sentence.masked_lm.MaskedLM`);
* :mod:`weatkit.lpbs.stats` — scores, bias scores, S, d, permutation p and bootstrap CIs;
* :mod:`weatkit.lpbs.measure` — :func:`lpbs` on one test; :mod:`weatkit.lpbs.run` — on the
  tests of list sets, with the tables the command prints and writes.

``weatkit.lpbs`` (the package attribute of ``weatkit``) is the function :func:`lpbs`.
"""

from __future__ import annotations

from weatkit.lpbs.templates import DEFAULT_TEMPLATES, Template, parse_template

__all__ = ["DEFAULT_TEMPLATES", "Template", "parse_template"]
