"""MBE in ``weatkit compare``: an ``mbe`` section of a comparison file, and its rows.

::

    mbe:                                 # a parallel corpus per language (causal LMs: mean-ll)
      method: aula                       # aula or aul (masked LMs), mean-ll (causal LMs)
      weight: cosine                     # or dot: the pair weight C(m, f)
      corpora: {de: "corpora/en-de.tsv"}   # or {de: {english: en.txt, target: de.txt}}
      max_sentences: 500
      seed: 0                            # of max_sentences' and limit's samples
      limit: 200                         # a seeded sample of the pairs (as --limit)

One column ``mbe:METHOD`` per model and language with a corpus (other languages are not
applicable), valued MBE (Kaneko et al. 2022, Eq. 2) with its percentile bootstrap interval over
the male and female sentences and the exact binomial p of #(A(m) > A(f)) over the pairs as the
neutral test (the resamples and level are the ``scores`` section's). The job's key holds the
corpus files' fingerprints: a changed corpus is scored again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from weatkit.config.declare import Source
from weatkit.config.files import check_keys, config_path, dataclass_from, describe, mapping
from weatkit.errors import ConfigError
from weatkit.mbe.measure import mbe_measures
from weatkit.mbe.run import run_mbe_parallel
from weatkit.mbe.score import score_column


@dataclass(frozen=True)
class MbeSection:
    """Parallel corpora per language: a TSV path, or ``(english, target)`` aligned text files."""

    corpora: dict[str, str | tuple[str, str]] = field(default_factory=dict)
    method: str = "aula"
    weight: str = "cosine"
    max_sentences: int | None = None
    seed: int = 0
    limit: int | None = None

    def validate(self) -> None:
        from weatkit.crossmethod.sections import check_method

        check_method("mbe", self.method)
        if self.weight not in ("cosine", "dot"):
            raise ConfigError(f"choose cosine or dot, not {self.weight!r}", field="weight")
        if self.max_sentences is not None:
            if isinstance(self.max_sentences, bool) or not isinstance(self.max_sentences, int):
                got = describe(self.max_sentences)
                raise ConfigError(f"expected int, got {got}", field="max_sentences")
            if self.max_sentences < 1:
                raise ConfigError("must be at least 1", field="max_sentences")


def read_section(values: dict[str, Any], base: Path, source: Source, contextual: Any) -> MbeSection:
    """The ``mbe`` section of a comparison file; errors name the file and the key."""
    from weatkit.crossmethod.sections import read_limit

    limit = read_limit(values, source)
    corpora = _corpora(values.pop("corpora", None), base, source.key("corpora"))
    section = dataclass_from(MbeSection, values, str(source))
    return replace(section, corpora=corpora, limit=limit)


def _corpora(value: Any, base: Path, where: str) -> dict[str, str | tuple[str, str]]:
    table = mapping(value, where)
    if not table:
        raise ConfigError(f"{where}: give a parallel corpus for at least one language")
    out: dict[str, str | tuple[str, str]] = {}
    for lang, entry in table.items():
        at = f"{where}.{lang}"
        if isinstance(entry, str):
            out[str(lang)] = config_path(entry, base, at)
            continue
        pair = mapping(entry, at)
        check_keys(pair, {"english", "target"}, at)
        if set(pair) != {"english", "target"}:
            raise ConfigError(f"{at}: give a TSV path or both english and target files")
        out[str(lang)] = (
            config_path(pair["english"], base, f"{at}.english"),
            config_path(pair["target"], base, f"{at}.target"),
        )
    return out


def job_inputs(section: MbeSection, lang: str) -> object:
    """The fingerprints of the parallel corpus' files in ``lang`` (the job's key)."""
    from weatkit.grid.jobs import file_identity

    corpus = section.corpora.get(lang)
    paths = [corpus] if isinstance(corpus, str) else list(corpus or ())
    return [file_identity(path) for path in paths]


def mbe_rows(entry: Any, kind: str, lang: str, section: MbeSection, ctx: Any) -> list[dict]:
    """MBE score (Kaneko et al. 2022, Eq. 2) from the language's parallel corpus, with a
    bootstrap CI over the male and female sentences
    (:func:`~weatkit.crossmethod.uncertainty.mbe_interval`) and the exact binomial p of
    #(A(m) > A(f)) over the pairs."""
    from weatkit.crossmethod.methods import NotApplicable, check_applicable, score_rows, with_ci
    from weatkit.crossmethod.uncertainty import binomial_p, mbe_interval, mbe_weights, mbe_wins
    from weatkit.items.log import mbe_items

    if lang not in section.corpora:
        raise NotApplicable(f"no parallel corpus for {lang} in the mbe section")
    check_applicable(f"mbe:{section.method}", entry, kind, lang)
    lm = ctx.language_model(entry, kind, "MBE")
    run_ = run_mbe_parallel(
        lm,
        section.corpora[lang],
        method=section.method,
        weight=section.weight,
        seed=section.seed,
        max_sentences=section.max_sentences,
        show_progress=ctx.show_progress,
        limit=section.limit,
    )
    ctx.log(lambda: mbe_items(run_, model=entry.name, language=lang))
    sentences = run_.sentences
    male = (sentences["set"] == "male").to_numpy()
    values = sentences[score_column(section.method)].to_numpy(np.float64)
    embedding = run_.embedding  # the embeddings the score's weights came from
    weights = mbe_weights(embedding[male], embedding[~male], section.weight)
    low, high = mbe_interval(values[male], values[~male], weights, **ctx.plan)
    wins = mbe_wins(values[male], values[~male])
    how = "percentile bootstrap over male and female sentences"
    measures = mbe_measures(run_.result, source=entry.name, lang=lang)
    results = [
        with_ci(r, low, high, how, ctx.scores.confidence_level)
        for r in ctx.record("mbe", entry, lang, measures, run_.sample)
    ]
    return score_rows(results, {results[0].column: binomial_p(wins, run_.result.n_pairs)})
