"""``weatkit.ceat``: CEAT of WEAT tests on a transformer model, with contexts from a corpus.

The steps: the tests of ``lists`` (:func:`weatkit.lists.sources.select_lists`, as ``weatkit
run`` selects them); every word's contexts in ``corpus``
(:func:`weatkit.ceat.contexts.find_contexts`); a word with fewer than ``min_contexts``
contexts counts as missing, and a test in which a set keeps less than ``min_coverage`` of its
words (or fewer than one word; three in X and Y together) is skipped with one line naming the
words and their counts; the words' vectors in their contexts at ``layers``
(:meth:`weatkit.embeddings.contextual.ContextualExtractor.extract_spans`: the occurrence's
sub-tokens pooled by ``subwords``); then the draws and their combined effect size per test and
layer (:func:`weatkit.ceat.draws.ceat_test`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from weatkit.ceat.contexts import ContextSample, find_contexts
from weatkit.ceat.draws import QUANTILES, CeatResult, ceat_test
from weatkit.ceat.options import CeatOptions
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.lists.model import SET_KEYS, AssociationTest
from weatkit.lists.sources import select_lists


class NoContexts(WeatkitError):
    """No test keeps enough words with contexts in the corpus (the message names them)."""


def percentile(q: float) -> str:
    """The column name of quantile ``q`` of the draws: 0.025 -> ``p2_5``, 0.5 -> ``p50``."""
    return f"p{100 * q:g}".replace(".", "_")


#: Columns of :attr:`CeatRun.results`.
RESULT_COLUMNS = [
    "list_set", "lang", "list_id", "test", "model", "layer", "n_X", "n_Y", "n_A", "n_B",
    "ces", "pvalue", "ci_low", "ci_high", "se", "tau2", "q", "i2", "n_draws", "alternative",
    "draws_mean", "draws_sd", *(f"draws_{percentile(q)}" for q in QUANTILES),
]  # fmt: skip


@dataclass
class CeatRun:
    """What :func:`ceat` computed.

    Attributes:
        results: one row per test and layer (:data:`RESULT_COLUMNS`).
        draws: (test key, layer) -> its :class:`~weatkit.ceat.draws.CeatResult` (with every
            draw's effect size and variance).
        contexts: one row per word: ``word``, ``found`` (occurrences), ``kept`` (contexts used).
        skipped: one line per test skipped for want of contexts.
        dropped: one line per test that runs without some of its words.
        manifest: the settings, for ``manifest.json``.
    """

    results: pd.DataFrame
    draws: dict[tuple[tuple[str, str, str, str], int], CeatResult]
    contexts: pd.DataFrame
    skipped: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    manifest: dict[str, object] = field(default_factory=dict)


def ceat(
    model: str,
    corpus: str,
    *,
    lists: Sequence[str] = ("caliskan",),
    langs: Sequence[str] | None = None,
    tests: Sequence[str] | None = None,
    layers: Sequence[int] = (-1,),
    options: CeatOptions | None = None,
    contextual: ContextualOptions | None = None,
    min_coverage: float = 0.8,
    seed: int = 0,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    device: str = "auto",
    show_progress: bool | None = None,
) -> CeatRun:
    """CEAT (Guo & Caliskan 2021) of the tests of ``lists`` on ``model`` (module docstring).

    Args:
        model: a Hugging Face hub id or local directory (``hf:`` optional).
        corpus: a text file, a ``.jsonl`` file or ``hf:DATASET`` (:mod:`weatkit.ceat.contexts`).
        lists, langs, tests: the tests, as ``weatkit run`` selects them.
        layers: hidden-state layers (``-1`` the last, as ``ceat.py``).
        options: contexts and draws (:class:`~weatkit.ceat.options.CeatOptions`).
        contextual: the extractor's pooling and loading options (``subwords``…).
        min_coverage: the share of each set's words that must have contexts.
        seed: seeds the context sample and the draws.
        alternative, confidence_level: of CES's p-value and interval.
        device: where the draws run (the model's device is ``contextual.device``).

    Raises:
        WeatkitError: a bad option, a corpus that cannot be read, or no test with enough
            contexts (naming the words and their counts).

    Example:
        >>> run = weatkit.ceat("bert-base-cased", "reddit.txt", tests=["weat6"])  # doctest: +SKIP
        >>> run.results[["test", "layer", "ces", "pvalue"]]  # doctest: +SKIP
    """
    options = options or CeatOptions()
    options.validate()
    contextual = contextual or ContextualOptions()
    if not 0 <= min_coverage <= 1:
        raise WeatkitError(f"--min-coverage must be in [0, 1], not {min_coverage}")
    model = model.removeprefix("hf:")
    selection = select_lists(list(lists), langs, tests=tests)
    words = sorted({w for t in selection.tests for s in SET_KEYS for w in getattr(t, s)})
    sample = find_contexts(
        corpus,
        words,
        max_contexts=options.contexts_per_word,
        seed=seed,
        ignore_case=options.ignore_case,
        window=options.window,
        text_field=options.text_field,
        split=options.split,
    )
    runnable, skipped, dropped = _usable(selection.tests, sample, options, min_coverage)
    if not runnable:
        raise NoContexts(f"no test has enough contexts in {corpus}: {skipped[0]}")
    needed = sorted({w for t in runnable for s in SET_KEYS for w in getattr(t, s)})
    spans = [(c.text, c.start, c.end) for w in needed for c in sample.contexts[w]]
    extractor = ContextualExtractor(model, contextual)
    vectors = extractor.extract_spans(spans, layers, show_progress=show_progress)
    rows, draws = [], {}
    for layer in layers:
        per_word, at = {}, 0
        for w in needed:
            n = len(sample.contexts[w])
            per_word[w] = vectors[layer][at : at + n]
            at += n
        for test in runnable:
            sets = [[per_word[w] for w in getattr(test, s)] for s in SET_KEYS]
            result = ceat_test(
                sets,
                n_draws=options.n_draws,
                seed=seed,
                alternative=alternative,
                confidence_level=confidence_level,
                device=device,
                method=options.draw_method,
            )
            draws[(test.key, layer)] = result
            rows.append(_row(test, model, layer, result))
    contexts = pd.DataFrame(
        {"word": words, "found": [sample.found[w] for w in words],
         "kept": [len(sample.contexts[w]) for w in words]}
    )  # fmt: skip
    manifest = {
        "model": model,
        "identity": extractor.identity,
        "contextual": asdict(contextual),
        "ceat": asdict(options),
        "corpus": corpus,
        "texts_read": sample.n_texts,
        "layers": list(layers),
        "seed": seed,
        "alternative": alternative,
        "confidence_level": confidence_level,
        "min_coverage": min_coverage,
        "lists": list(lists),
        "sources": selection.sources,
        "skipped": skipped,
        "dropped": dropped,
    }
    return CeatRun(
        pd.DataFrame(rows, columns=RESULT_COLUMNS), draws, contexts, skipped, dropped, manifest
    )


def _usable(
    tests: Sequence[AssociationTest],
    sample: ContextSample,
    options: CeatOptions,
    min_coverage: float,
) -> tuple[list[AssociationTest], list[str], list[str]]:
    """The tests that keep enough words with contexts (without the others), and one line per
    test skipped or run without some words."""
    enough = {w for w, c in sample.contexts.items() if len(c) >= options.min_contexts}
    runnable, skipped, dropped = [], [], []
    for test in tests:
        kept = {s: tuple(w for w in getattr(test, s) if w in enough) for s in SET_KEYS}
        lacking = [w for s in SET_KEYS for w in getattr(test, s) if w not in enough]
        counts = ", ".join(f"{w!r} {len(sample.contexts[w])}" for w in lacking)
        named = (test.list_set,) if test.list_id == test.list_set else (test.list_set, test.list_id)
        label = " ".join((*named, test.test))
        short = [
            s for s in SET_KEYS
            if not kept[s] or len(kept[s]) < min_coverage * len(getattr(test, s))
        ]  # fmt: skip
        if short or len(kept["X"]) + len(kept["Y"]) < 3:
            where = ", ".join(short) or "X and Y"
            skipped.append(
                f"{label}: skipped, {where} under --min-coverage {min_coverage:g} with "
                f"--min-contexts {options.min_contexts} (contexts: {counts})"
            )
            continue
        if lacking:
            dropped.append(f"{label}: without {counts} (fewer than --min-contexts contexts)")
        runnable.append(
            AssociationTest(
                test.test, test.lang, test.list_set, test.list_id, *(kept[s] for s in SET_KEYS),
                names=test.names, meta=test.meta,
            )
        )  # fmt: skip
    return runnable, skipped, dropped


def _row(test: AssociationTest, model: str, layer: int, r: CeatResult) -> list[object]:
    es = r.effect_sizes
    return [
        test.list_set, test.lang, test.list_id, test.test, model, layer,
        *(len(getattr(test, s)) for s in SET_KEYS),
        r.statistic, r.pvalue, *r.confidence_interval, r.se, r.tau2, r.q, r.i2, r.n_draws,
        r.alternative, float(es.mean()), float(es.std(ddof=1)),
        *(r.quantiles[q] for q in QUANTILES),
    ]  # fmt: skip


def draw_rows(run: CeatRun) -> pd.DataFrame:
    """Every draw of every test and layer: ``list_set``, ``lang``, ``list_id``, ``test``,
    ``layer``, ``draw``, ``effect_size``, ``variance`` (``--log-items``)."""
    frames = [
        pd.DataFrame(
            {
                "list_set": key[0],
                "lang": key[1],
                "list_id": key[2],
                "test": key[3],
                "layer": layer,
                "draw": np.arange(r.n_draws),
                "effect_size": r.effect_sizes,
                "variance": r.variances,
            }
        )
        for (key, layer), r in run.draws.items()
    ]
    return pd.concat(frames, ignore_index=True)
