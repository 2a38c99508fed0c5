"""Isomorphism of every language's space to a reference language's, and its correlation with bias.

CA-WEAT paper §5 and Figure 4: for each embeddings and language, EV and GH between the language's
space and the English space of the same embeddings; then, across languages, how effect sizes
correlate with each measure (Pearson and Spearman with p-values, R² of the linear fit).

The p-values are permutation p-values and a row with too few languages is flagged, by the same
rules as ``weatkit compare`` (:func:`weatkit.stats.correlation.correlate_pair`): exact over all
n! pairings up to 8 languages, else 9,999 seeded pairings; with fewer than
:func:`weatkit.stats.correlation.min_units` languages (5 at α = 0.05) no p can reach α and
``flag`` says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.spec import LANG_PLACEHOLDER, EmbeddingsSpec
from weatkit.errors import ConfigError
from weatkit.isomorphism.measures import (
    ISO_COLUMNS,
    IsoOptions,
    Space,
    measure_spaces,
    prepare_space,
    read_word_list,
)
from weatkit.stats.correlation import pearson_spearman

#: Columns of the correlation table.
CORRELATION_COLUMNS = [
    "embeddings",
    "list_set",
    "test",
    "measure",
    "n_languages",
    "pearson_r",
    "pearson_p",
    "spearman_rho",
    "spearman_p",
    "r2",
    "permutation_method",
    "n_permutations",
    "n_min",
    "flag",
]


def isomorphism_to_reference(
    specs: Sequence[EmbeddingsSpec],
    langs: Sequence[str],
    reference: str,
    options: IsoOptions,
    *,
    words_template: str | None = None,
    extractors: ExtractorPool | None = None,
    allow_pickle: bool = False,
) -> tuple[pd.DataFrame, list[str]]:
    """Measures between each language's space and the ``reference`` language's, per embeddings.

    A spec with ``{lang}`` has one space per language. Any other spec (a joint multilingual
    space, a contextual model) needs ``words_template``, a word-list path with ``{lang}`` giving
    each language's vocabulary; without it the spec is skipped with a note.

    Returns:
        The table (:data:`weatkit.isomorphism.measures.ISO_COLUMNS` plus ``embeddings`` and
        ``lang``) and notes for the run report.
    """
    options.validate()
    if words_template is not None and LANG_PLACEHOLDER not in words_template:
        raise ConfigError(f"{words_template!r} must contain {LANG_PLACEHOLDER}", field="iso_words")
    frames, notes = [], []
    pool = extractors or ExtractorPool()
    others = sorted(set(langs) - {reference})
    for spec in specs:
        if not others:
            break
        if not spec.per_language and words_template is None:
            notes.append(
                f"isomorphism: {spec.name} is one space for all languages; give --iso-words "
                "PATH_WITH_{lang} (each language's vocabulary) to measure it"
            )
            continue

        def space(lang: str, spec: EmbeddingsSpec = spec) -> Space:
            words = None
            if words_template is not None:
                words = read_word_list(words_template.replace(LANG_PLACEHOLDER, lang))
            return prepare_space(
                spec, lang, options, words=words, extractors=pool, allow_pickle=allow_pickle
            )

        ref_space = space(reference)
        for lang in others:
            table = measure_spaces(space(lang), ref_space, options)
            frames.append(table.assign(embeddings=spec.name, lang=lang))
    columns = ["embeddings", "lang", *ISO_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns), notes
    return pd.concat(frames, ignore_index=True)[columns], notes


def with_isomorphism(summary: pd.DataFrame, iso: pd.DataFrame) -> pd.DataFrame:
    """The summary with one ``iso_<measure>`` column per measure, joined on embeddings and lang."""
    if iso.empty:
        return summary
    wide = iso.pivot_table(index=["embeddings", "lang"], columns="measure", values="value")
    wide.columns = [f"iso_{m}" for m in wide.columns]
    return summary.merge(wide.reset_index(), on=["embeddings", "lang"], how="left")


def correlation_table(
    summary: pd.DataFrame, *, confidence_level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Across languages, effect size against each ``iso_*`` column of ``summary``.

    One row per (embeddings, list set, test, measure), plus rows with ``embeddings = "all"``
    pooling every embeddings' languages (Figure 4 of the CA-WEAT paper). Pearson's r and
    Spearman's ρ with their two-sided permutation p-values, and R² = r² of the least-squares
    line (:func:`weatkit.stats.correlation.correlate_pair`: exact p up to 8 languages, else
    9,999 pairings drawn with ``seed``). ``n_min`` is the fewest languages at which p can reach
    α = 1 − ``confidence_level`` and ``flag`` says when ``n_languages`` is below it. Fewer than
    3 languages (or a constant column) give NaN.
    """
    measures = [c for c in summary.columns if c.startswith("iso_")]
    rows = []
    keys = ["list_set", "test"]
    for (list_set, test), group in summary.groupby(keys, sort=True):
        per_embeddings = [(name, g) for name, g in group.groupby("embeddings", sort=True)]
        for name, frame in [*per_embeddings, ("all", group)]:
            for column in measures:
                pairs = frame[["effect_size", column]].dropna()
                rows.append(
                    {
                        "embeddings": name,
                        "list_set": list_set,
                        "test": test,
                        "measure": column.removeprefix("iso_"),
                        "n_languages": len(pairs),
                        **_correlations(
                            pairs["effect_size"].to_numpy(),
                            pairs[column].to_numpy(),
                            confidence_level,
                            seed,
                        ),
                    }
                )
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


def _correlations(
    x: np.ndarray, y: np.ndarray, confidence_level: float, seed: int
) -> dict[str, float | int | str]:
    """Pearson and Spearman with permutation p (:func:`pearson_spearman`) and R² = r²."""
    out = pearson_spearman(x, y, confidence_level=confidence_level, seed=seed)
    return out | {"r2": float(out["pearson_r"]) ** 2}
