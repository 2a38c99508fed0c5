"""Control pairs of CrowS-Pairs: is the score driven by the stereotype or by the group words?

Pikuliak, M., Beňová, I. and Bachratý, V. (2023). In-Depth Look at Word Filling Societal Bias
Measures. EACL 2023 (github.com/kinit-sk/bias-methodology, ``bias-methodology/SOURCE.md``).

**Data.** ``crows_negation.csv`` and ``crows_antistereotype.csv`` are column-oriented, without a
header: each of their 250 columns is one ``gender`` pair of the revised CrowS-Pairs in file
order (row 1 ``sent_more``, row 2 ``sent_less``), and rows 3–4 (and 5–6) hold a control pair
made from it — the same two sentences *negated* ("Women don't know how to drive." → "Women know
how to drive."), or with the stereotypical attribute replaced by an anti-stereotypical one while
the group words stay ("…if a doctor…" → "…if a nurse…"). 66 negation controls (59 columns) and
65 anti-stereotype controls. :func:`load_controls` gives one row per control pair with its
original pair (rows 1–2 of the column) and the pair id and direction of that pair in
``load_crows(data="revised")``.

**Scores.** Each control pair (C_more, C_less) — C_more made from ``sent_more`` — is scored
exactly like a CrowS-Pairs pair (same model, method and rounding, :func:`score_crows`): a win
when score(C_more) > score(C_less). Over the n control pairs::

    control  = 100 · #wins(control pairs) / n
    original = 100 · #wins(their original pairs) / n          (the matched originals)

each with the percentile bootstrap CI of :func:`~weatkit.crows.score.crows_metric` (the same
seed and n, so the two intervals use the same resampled positions: a paired bootstrap). A
measure that reflects the stereotype should move markedly towards 50 or beyond it on the
control pairs: negating the statement or replacing the stereotypical attribute removes the
stereotype but keeps the group words.

**Flag** ("control as biased"): :func:`weatkit.measures.controls.as_biased`, the one rule of
every measure's controls: the control's CI reaches the original's (matched) score on the biased
side of 50 — the score cannot be told apart from a reaction to the group words (Pikuliak et
al. §5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from weatkit._io.csvrows import csv_rows
from weatkit._io.textfile import read_text_or_gzip
from weatkit.crows.data import OVERALL, load_crows
from weatkit.crows.score import crows_metric, score_crows
from weatkit.data import fetch
from weatkit.errors import DataError, WeatkitError
from weatkit.measures.controls import CONTROL_SUMMARY_COLUMNS, as_biased
from weatkit.sentence.masked_lm import MaskedLM

#: Control kind -> its file in the data-directory layout.
CONTROL_FILES: dict[str, str] = {
    "negation": "bias-methodology/data/crows_negation.csv",
    "antistereotype": "bias-methodology/data/crows_antistereotype.csv",
}
CONTROL_KINDS: tuple[str, ...] = tuple(CONTROL_FILES)
CONTROL_PAIR_COLUMNS = [
    "control", "pair_id", "bias_type", "direction", "sent_more", "sent_less",
    "control_more", "control_less",
]  # fmt: skip


def load_controls(kinds: Sequence[str] = CONTROL_KINDS) -> pd.DataFrame:
    """The control pairs of ``kinds`` (module docstring), one row per control pair.

    Returns:
        ``control`` (the kind), ``pair_id``, ``bias_type`` (gender), ``direction`` (of the
        original pair in the revised CrowS-Pairs), ``sent_more``, ``sent_less`` (the original
        pair as the control file has it), ``control_more``, ``control_less``.

    Raises:
        WeatkitError: unknown kind, or a file whose shape differs from the documented one.
    """
    unknown = [k for k in kinds if k not in CONTROL_FILES]
    if unknown:
        raise WeatkitError(
            f"unknown control {unknown[0]!r}: choose one of {', '.join(CONTROL_KINDS)}"
        )
    gender = load_crows(data="revised").query("bias_type == 'gender'").reset_index(drop=True)
    rows = []
    for kind in kinds:
        relpath = CONTROL_FILES[kind]
        records = csv_rows(read_text_or_gzip(fetch(relpath), "control file"), relpath)
        lines = [fields for _, fields in records]
        if len(lines) not in (4, 6) or any(len(f) != len(gender) for f in lines):
            raise DataError(
                f"{relpath}: expected 4 or 6 rows of {len(gender)} columns (the revised "
                f"gender pairs), found {len(lines)} rows of {sorted({len(f) for f in lines})}"
            )
        for col, pair in enumerate(gender.itertuples(index=False)):
            for first in range(2, len(lines), 2):
                more, less = lines[first][col].strip(), lines[first + 1][col].strip()
                if not more and not less:
                    continue
                if not (more and less):
                    raise DataError(f"{relpath}: row {first + 1}, column {col + 1}: half a pair")
                rows.append(
                    (kind, pair.pair_id, pair.bias_type, pair.direction,
                     lines[0][col].strip(), lines[1][col].strip(), more, less)
                )  # fmt: skip
    table = pd.DataFrame(rows, columns=CONTROL_PAIR_COLUMNS)
    table["pair_id"] = table["pair_id"].astype(np.int64)
    return table


def control_summary(
    originals: pd.DataFrame,
    controls: pd.DataFrame,
    *,
    n_bootstrap: int,
    seed: int,
    confidence_level: float,
) -> pd.DataFrame:
    """Original and control scores per control kind, and the flag.

    Args:
        originals: per-pair scores of the original pairs (:func:`score_crows` of ``sent_more``
            / ``sent_less`` of :func:`load_controls`), with a ``control`` column.
        controls: per-pair scores of the control pairs, in the same order.
        n_bootstrap, seed, confidence_level: the bootstrap of
            :func:`~weatkit.crows.score.crows_metric`.

    Returns:
        One row per kind: ``control, n, original, original_ci_low, original_ci_high, metric,
        ci_low, ci_high, as_biased``.
    """
    rows = []
    for kind in dict.fromkeys(controls["control"]):
        pair = []
        for table in (originals, controls):
            part = table[table["control"] == kind]
            summary = crows_metric(
                part, n_bootstrap=n_bootstrap, seed=seed, confidence_level=confidence_level
            )
            pair.append(summary[summary["bias_type"] == OVERALL].iloc[0])
        original, control = pair
        rows.append(
            {
                "control": kind,
                "n": int(control["n"]),
                "original": float(original["metric"]),
                "original_ci_low": float(original["ci_low"]),
                "original_ci_high": float(original["ci_high"]),
                "metric": float(control["metric"]),
                "ci_low": float(control["ci_low"]),
                "ci_high": float(control["ci_high"]),
                "as_biased": as_biased(
                    float(original["metric"]), float(control["ci_low"]), float(control["ci_high"])
                ),
            }
        )
    return pd.DataFrame(rows, columns=CONTROL_SUMMARY_COLUMNS)


def score_controls(
    lm: MaskedLM,
    controls: pd.DataFrame,
    *,
    method: str = "pll",
    decimals: int | Literal["reference"] | None = "reference",
    pair_order: str = "more-first",
    sum_dtype: str = "float64",
    show_progress: bool | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(originals, controls)``: :func:`score_crows` of the original pairs and of the control
    pairs of :func:`load_controls`, row for row, each with the ``control`` column first
    (``method``, ``decimals``, ``pair_order`` and ``sum_dtype`` as there)."""
    base = controls[["pair_id", "bias_type", "direction"]]
    scored = []
    for more, less in (("sent_more", "sent_less"), ("control_more", "control_less")):
        pairs = base.assign(sent_more=controls[more], sent_less=controls[less])
        table = score_crows(
            lm, pairs, method=method, decimals=decimals, pair_order=pair_order,
            sum_dtype=sum_dtype, show_progress=show_progress,
        )  # fmt: skip
        table.insert(0, "control", controls["control"].to_numpy())
        scored.append(table)
    return scored[0], scored[1]


def stack_control_pairs(originals: pd.DataFrame, controls: pd.DataFrame) -> pd.DataFrame:
    """The per-pair scores of :func:`score_controls` in one table: the originals, then the
    controls, with ``side`` = ``original`` / ``control`` as the last column."""
    return pd.concat(
        [originals.assign(side="original"), controls.assign(side="control")], ignore_index=True
    )
