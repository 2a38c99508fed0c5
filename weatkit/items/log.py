"""Per-item logs of the sentence measures: one row per scored item, one schema for all.

What ``--log-items`` (and ``log_items`` of a compare file) writes to ``items.parquet`` (or
``items.csv``), as lm-evaluation-harness's ``--log_samples``. Every builder takes the per-item
table its measure already produced (nothing is scored again) and returns :data:`ITEM_COLUMNS`
with, between ``bias_type`` and ``outcome``, a ``text_<option>`` and a ``score_<option>``
column per option of the item:

=============  =================================  ===============================================
measure        options                            outcome
=============  =================================  ===============================================
``crows``      ``more``, ``less``                 ``stereotype`` (score_more > score_less, after
                                                  the method's rounding), ``anti-stereotype``,
                                                  ``tie``
``stereoset``  ``stereotype``,                    ``stereotype`` (s_stereo > s_anti),
               ``anti_stereotype``, ``unrelated``  ``anti-stereotype``, ``tie`` (counted as
                                                  anti-stereotypical by SS)
``gest``       ``sentence`` (score: s_j =         ``male`` (s_j > 0), ``female``, ``tie``
               log_b P(w_m) − log_b P(w_f))
``eurogest``   ``male``, ``female`` (S_m, S_f)    ``male`` (r_j > 0.5), ``female``, ``tie``
``mbe``        ``male`` or ``female`` (the        ``male`` when the pairs the sentence is in
               sentence's side; score A)          prefer the male sentence (similarity-weighted
                                                  share > 0.5), ``female``, ``tie``
=============  =================================  ===============================================

``influence`` is the item's leave-one-out influence on the measure's headline value
(:mod:`weatkit.items.influence`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from weatkit.errors import ConfigError
from weatkit.items import influence as loo

#: The columns of every log, before the options' ``text_*``/``score_*`` and after them.
LEADING_COLUMNS = ["measure", "model", "method", "language", "item_id", "bias_type"]
TRAILING_COLUMNS = ["outcome", "influence"]
ITEM_COLUMNS = [*LEADING_COLUMNS, *TRAILING_COLUMNS]
#: The file formats of a log, the default first.
ITEM_FORMATS: tuple[str, ...] = ("parquet", "csv")


@dataclass(frozen=True)
class ItemLogOptions:
    """``--log-items[=FORMAT]`` (``log_items`` of a compare file): write the per-item log in
    FORMAT (:data:`ITEM_FORMATS`); None: no log. Declared in
    :data:`weatkit.config.schema.ITEM_LOG`."""

    log_items: str | None = None

    def validate(self) -> None:
        if self.log_items is not None and self.log_items not in ITEM_FORMATS:
            raise ConfigError(
                f"unknown format {self.log_items!r}: choose {' or '.join(ITEM_FORMATS)}",
                field="log_items",
            )


def item_log_files(items: pd.DataFrame, fmt: str) -> dict[str, bytes]:
    """``{"items.FORMAT": bytes}`` for :func:`weatkit.report.tables.write_outputs` (which writes
    all of a command's files at once, atomically)."""
    from weatkit.report.tables import render

    ItemLogOptions(fmt).validate()
    return {f"items.{fmt}": render(items, fmt)}


def concat_items(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Logs of several measures as one table: :data:`LEADING_COLUMNS`, every option column in
    the order met, :data:`TRAILING_COLUMNS`."""
    options = [c for f in frames for c in f.columns if c not in ITEM_COLUMNS]
    columns = [*LEADING_COLUMNS, *dict.fromkeys(options), *TRAILING_COLUMNS]
    parts = [f for f in frames if len(f)]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).reindex(columns=columns)


def items_frame(
    measure: str,
    model: str,
    method: str | Sequence[str],
    language: str,
    item_id: Sequence[Any],
    bias_type: Sequence[Any],
    options: Mapping[str, tuple[Sequence[Any], Sequence[float]]],
    outcome: Sequence[str],
    influence: np.ndarray,
) -> pd.DataFrame:
    """One measure's log in :data:`ITEM_COLUMNS` (a builder's last step, here and in the
    measure packages): ``options`` maps an option's name to its texts and scores
    (``text_NAME``, ``score_NAME`` columns)."""
    n = len(item_id)
    data: dict[str, Any] = {
        "measure": [measure] * n,
        "model": [model] * n,
        "method": [method] * n if isinstance(method, str) else list(method),
        "language": [language] * n,
        "item_id": [str(i) for i in item_id],
        "bias_type": [str(b) for b in bias_type],
    }
    for name, (texts, scores) in options.items():
        data[f"text_{name}"] = ["" if pd.isna(t) else str(t) for t in texts]
        data[f"score_{name}"] = np.asarray(scores, dtype=np.float64)
    data["outcome"] = list(outcome)
    data["influence"] = np.asarray(influence, dtype=np.float64)
    return pd.DataFrame(data)


def sign_outcome(diff: np.ndarray, above: str, below: str) -> list[str]:
    """Per item, ``above`` where the difference is positive, ``below`` where negative, else
    ``tie``."""
    return [above if d > 0 else below if d < 0 else "tie" for d in diff]


def crows_items(
    pairs: pd.DataFrame, *, model: str, method: str, language: str = "en"
) -> pd.DataFrame:
    """The log of CrowS-Pairs (``crows``) from its per-pair table (``pairs.csv``:
    :func:`weatkit.crows.score.score_crows`, or read scores with ``win``/``neutral``); the
    scored pairs, in table order. ``influence``:
    :func:`~weatkit.items.influence.proportion_influence` of the wins (metric = 100 W / N)."""
    from weatkit.crows.score import scored_outcomes

    scored, win, neutral = scored_outcomes(pairs)
    table = pairs.loc[scored]
    w, tie = win[scored], neutral[scored]
    ids = table["pair_id"] if "pair_id" in table.columns else np.flatnonzero(scored)
    blank, missing = [""] * len(table), np.full(len(table), np.nan)  # win/neutral tables
    options = {
        side: (table.get(f"sent_{side}", blank), table.get(f"score_{side}", missing))
        for side in ("more", "less")
    }
    outcome = np.where(tie, "tie", np.where(w == 1, "stereotype", "anti-stereotype"))
    return items_frame(
        "crows", model, method, language, list(ids), table["bias_type"], options, outcome,
        loo.proportion_influence(w),
    )  # fmt: skip


def stereoset_items(
    dataset: Any,
    predictions: Mapping,
    *,
    model: str,
    language: str,
    splits: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The log of StereoSet (``stereoset``): one row per example of the scored splits
    (:func:`weatkit.stereoset.metrics.outcomes`), the three sentences and their scores.
    ``method`` is ``ss_term``, the headline of ``influence``:
    :func:`~weatkit.items.influence.term_mean_influence` of ``pro`` by target term (over both
    splits when both are scored, as the ``overall`` row)."""
    from weatkit.stereoset.data import GOLD_LABELS
    from weatkit.stereoset.metrics import outcomes

    table = outcomes(dataset, predictions, splits)
    text = {s.id: s.sentence for split in dict.fromkeys(table["split"]) for _, s in
            dataset.sentences(split)}  # fmt: skip
    examples = {ex.id: ex for split in dict.fromkeys(table["split"]) for ex in
                dataset.split(split)}  # fmt: skip
    options = {}
    for label in GOLD_LABELS:
        column = label.replace("-", "_")
        texts = [text[examples[i].sentence(label).id] for i in table["example_id"]]
        options[column] = (texts, table[column])
    diff = table["stereotype"].to_numpy() - table["anti_stereotype"].to_numpy()
    return items_frame(
        "stereoset", model, "ss_term", language, table["example_id"], table["bias_type"],
        options, sign_outcome(diff, "stereotype", "anti-stereotype"),
        loo.term_mean_influence(table["pro"], list(table["term"])),
    )  # fmt: skip


def gest_items(scores: pd.DataFrame, *, model: str, language: str = "en") -> pd.DataFrame:
    """The log of GEST (``gest``) from its per-sample scores (``scores.csv``: ``stereotype,
    score`` and, when there, ``sample_id, template, sentence``); the scored samples in table
    order. ``method`` is ``template T`` (``scores`` without a template column);
    ``influence``: :func:`~weatkit.items.influence.gest_influence`."""
    from weatkit.gest.data import STEREOTYPES

    values = pd.to_numeric(scores["score"], errors="coerce")
    table = scores.loc[values.notna().to_numpy()]
    x = values[values.notna()].to_numpy(np.float64)
    st = table["stereotype"].astype(np.int64).to_numpy()
    ids = table["sample_id"] if "sample_id" in table.columns else np.flatnonzero(values.notna())
    templates = list(table["template"]) if "template" in table.columns else None
    method = "scores" if templates is None else [f"template {t}" for t in templates]
    texts = table.get("sentence", [""] * len(table))
    return items_frame(
        "gest", model, method, language, list(ids), [STEREOTYPES[s] for s in st],
        {"sentence": (texts, x)}, sign_outcome(x, "male", "female"),
        loo.gest_influence(x, st, templates),
    )  # fmt: skip


def eurogest_items(scored: pd.DataFrame, *, model: str, language: str, code: str) -> pd.DataFrame:
    """The log of EuroGEST (``eurogest``) from its scored items (``masculine, feminine,
    score_m, score_f, r``: :func:`weatkit.gest.eurogest_scoring.score_items`); the scored items.
    ``method`` is ``code VERSION``; ``influence``:
    :func:`~weatkit.items.influence.eurogest_influence`."""
    from weatkit.gest.data import STEREOTYPES

    r = scored["r"].to_numpy(np.float64)
    table = scored.loc[~np.isnan(r)]
    st = table["stereotype"].astype(np.int64).to_numpy()
    options = {
        "male": (table["masculine"], table["score_m"]),
        "female": (table["feminine"], table["score_f"]),
    }
    rates = r[~np.isnan(r)]
    return items_frame(
        "eurogest", model, f"code {code}", language, table["sample_id"],
        [STEREOTYPES[s] for s in st], options, sign_outcome(rates - 0.5, "male", "female"),
        loo.eurogest_influence(rates, st),
    )  # fmt: skip


def mbe_items(run: Any, *, model: str, language: str = "") -> pd.DataFrame:
    """The log of MBE (``mbe``) from an :class:`~weatkit.mbe.run.MbeRun`: one row per scored
    sentence, male then female, ``item_id`` ``male:K``/``female:K`` (the ids of its
    ``--limit`` sample), ``bias_type`` ``gender``, the target text (empty for the token-id
    sets) and score A under ``text_male``/``score_male`` or ``text_female``/``score_female``.
    ``influence``: :func:`~weatkit.items.influence.mbe_influence` (the run's embeddings)."""
    from weatkit.mbe.score import score_column

    result, sentences = run.result, run.sentences
    male = (sentences["set"] == "male").to_numpy()
    a = sentences[score_column(result.method)].to_numpy(np.float64)
    emb = np.asarray(run.embedding)
    influence, preferred, weights = loo.mbe_influence(
        a[male], a[~male], emb[male], emb[~male], result.weight
    )
    # the share of the sentence's (weighted) pairs won by the male side
    with np.errstate(invalid="ignore", divide="ignore"):
        share = preferred / weights
    order = np.concatenate([np.flatnonzero(male), np.flatnonzero(~male)])
    table = sentences.iloc[order]
    texts = table.get("target", pd.Series([""] * len(table))).to_numpy()
    sides = table["set"].to_numpy()
    options = {
        side: (np.where(sides == side, texts, ""), np.where(sides == side, a[order], np.nan))
        for side in ("male", "female")
    }
    ids = [f"{s}:{i}" for s, i in zip(sides, table["index"], strict=True)]
    return items_frame(
        "mbe", model, result.method, language, ids, ["gender"] * len(ids), options,
        sign_outcome(share - 0.5, "male", "female"), influence,
    )  # fmt: skip
