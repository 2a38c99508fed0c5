"""CEAT in ``weatkit compare``: a ``ceat`` section of a comparison file, and its rows.

::

    ceat:
      corpus: corpora/news.txt         # a text or .jsonl file, or hf:DATASET (as --corpus)
      lists: [caliskan]                # list sets or files, as weat's (default: caliskan)
      tests: [weat6, weat7]            # optional
      layers: [-1]                     # hidden-state layers (default: the last, as ceat.py)
      min_coverage: 0.8
      n_draws: 10000                   # and the other options of weatkit ceat (file keys)

One column per test and layer, ``ceat:SET:TEST@LAYER`` (a list set of several lists per language,
such as CA-WEAT's: ``ceat:SET:LIST:TEST@LAYER``), valued CES with its interval and its p-value as
the neutral test (:func:`weatkit.ceat.ceat`, two-sided; the level and the seed are the ``scores``
section's, the model's pooling options the file's ``contextual``). A model in a language without
lists, or without enough contexts for any test, is not applicable (the reason names the words).
The job's key holds the corpus's fingerprint and the lists' SHA-256: a changed corpus is drawn
again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weatkit.ceat.options import CeatOptions
from weatkit.ceat.plugin import SECTION
from weatkit.config.declare import Source, options_from_file
from weatkit.config.files import check_keys, config_path, layer_numbers
from weatkit.config.run import run_config_from_mapping
from weatkit.errors import ConfigError

_LIST_KEYS = ("lists", "tests", "min_coverage", "lower", "strip_accents")


@dataclass(frozen=True)
class CeatSection:
    """A comparison file's ``ceat`` section (the module docstring)."""

    corpus: str
    lists: tuple[str, ...] = ("caliskan",)
    tests: tuple[str, ...] | None = None
    layers: tuple[int, ...] = (-1,)
    min_coverage: float = 0.8
    options: CeatOptions = field(default_factory=CeatOptions)


def read_section(
    values: dict[str, Any], base: Path, source: Source, contextual: Any
) -> CeatSection:
    """The ``ceat`` section of a comparison file; errors name the file and the key."""
    keys = {"corpus", "layers", *_LIST_KEYS, *SECTION.file_keys}
    check_keys(values, keys, str(source))
    if "corpus" not in values:
        raise ConfigError(f"{source.key('corpus')}: give the corpus the contexts come from")
    corpus = values.pop("corpus")
    if not (isinstance(corpus, str) and corpus.startswith("hf:")):
        corpus = config_path(corpus, base, source.key("corpus"))
    layers = layer_numbers(values.pop("layers", [-1]), source.key("layers"))
    listed = {k: values.pop(k) for k in _LIST_KEYS if k in values}
    run = run_config_from_mapping(
        {"lists": ["caliskan"], **listed}, source, base, keys=_LIST_KEYS, contextual=contextual
    )
    options = options_from_file(CeatOptions, SECTION, values, source)
    return CeatSection(corpus, run.lists, run.tests, layers, run.min_coverage, options)


def job_inputs(section: CeatSection, lang: str) -> object:
    """The corpus's fingerprint and the SHA-256 of the lists in ``lang`` (the job's key)."""
    from weatkit.grid.jobs import file_identity
    from weatkit.lists.sources import lists_identity

    corpus = section.corpus if section.corpus.startswith("hf:") else file_identity(section.corpus)
    return {"corpus": corpus, "lists": lists_identity(section.lists, lang, section.tests)}


def ceat_rows(entry: Any, kind: str, lang: str, section: CeatSection, ctx: Any) -> list[dict]:
    """CES of every test of ``section`` in ``lang`` at each layer, as compare's score rows."""
    from weatkit.ceat.run import NoContexts, ceat
    from weatkit.crossmethod.methods import (
        NotApplicable,
        check_applicable,
        check_lists,
        list_test_keys,
        score_rows,
    )
    from weatkit.measures.result import MeasureResult

    check_applicable("ceat", entry, kind, lang)
    check_lists(section.lists, lang)
    try:
        run = ceat(
            entry.model,
            section.corpus,
            lists=section.lists,
            langs=(lang,),
            tests=section.tests,
            layers=section.layers,
            options=section.options,
            contextual=ctx.options,
            min_coverage=section.min_coverage,
            seed=ctx.scores.seed,
            confidence_level=ctx.scores.confidence_level,
            device=ctx.options.device,
            show_progress=ctx.show_progress,
        )
    except NoContexts as err:
        raise NotApplicable(str(err)) from err
    results, p_values = [], {}
    for r, key in zip(
        run.results.itertuples(index=False), list_test_keys(run.results), strict=True
    ):
        test = f"ceat:{key}@{r.layer}"
        results.append(
            MeasureResult(
                "ceat", entry.name, lang, float(r.ces), float(r.ci_low), float(r.ci_high),
                ctx.scores.confidence_level, int(r.n_draws),
                f"random-effects CES of {r.n_draws} draws; z interval", test,
            )
        )  # fmt: skip
        p_values[test] = float(r.pvalue)
    return score_rows(results, p_values)
