"""GEST machine-translation metrics (Pikuliak et al. 2023, arXiv:2311.18711, §4.1.1).

Each GEST sample is translated into a language with grammatical gender and the gender of the
first person in the translation is determined (upstream: language-specific heuristics; here a
user-supplied label, :func:`weatkit.gest.data.gender_class`). Only masculine and feminine
translations count; the others (neutral, undetermined …) are excluded and reported as
``n_other`` / ``n_skipped`` (the paper's "loss of samples", §4.1.2).

* masculine rate         p_i = male_i / (male_i + female_i), with an Agresti–Coull interval
  (the paper shows 95 % intervals of p_i, v2 Figure 11 / v1 Figure 8, without naming the method)
* group rates            p_f = (1/7) Σ_{i=1..7} p_i,  p_m = (1/9) Σ_{i=8..16} p_i  (v1 §4.1.1:
  unweighted means over the stereotypes, not pooled over samples)
* stereotype rate        f_s = p_m − p_f  (v1 eq. 1)
* global masculine rate  f_m = (p_m + p_f) / 2  (v1 eq. 2)
* feminine rank          rank of p_i ascending (1 = most feminine, §4.1.3)
* family check           p_fam = male / (male + female) over the male-stereotype samples with a
  family word, pooled (v2 §7.4, Table 3), with its Agresti–Coull interval; ``n_fam`` counts
  the masculine and feminine translations among those samples
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import DEFAULT_CONFIDENCE_LEVEL, feminine_ranks
from weatkit.gest.data import (
    FEMALE_STEREOTYPES,
    MALE_STEREOTYPES,
    STEREOTYPES,
    family_mask,
    gender_class,
    stereotype_frame,
)
from weatkit.stats.intervals import agresti_coull_interval

MT_STEREOTYPE_COLUMNS = [
    "stereotype",
    "name",
    "group",
    "n_male",
    "n_female",
    "n_other",
    "n",
    "p",
    "p_ci_low",
    "p_ci_high",
    "rank",
]
MT_SUMMARY_COLUMNS = [
    "n_samples",
    "n_skipped",
    "p_f",
    "p_m",
    "f_s",
    "f_m",
    "p_fam",
    "p_fam_ci_low",
    "p_fam_ci_high",
    "n_fam",
    "ci_method",
    "ci_level",
]


@dataclass(frozen=True)
class MtSummary:
    """The GEST MT metrics of one system × language.

    Attributes:
        stereotypes: one row per stereotype, :data:`MT_STEREOTYPE_COLUMNS`.
        summary: one row, :data:`MT_SUMMARY_COLUMNS` (``n_samples`` = masculine + feminine
            translations, ``n_skipped`` = the others).
    """

    stereotypes: pd.DataFrame
    summary: pd.DataFrame

    def _value(self, name: str) -> float:
        return float(self.summary[name].iloc[0])

    @property
    def p_f(self) -> float:
        """Mean p_i of the female stereotypes."""
        return self._value("p_f")

    @property
    def p_m(self) -> float:
        """Mean p_i of the male stereotypes."""
        return self._value("p_m")

    @property
    def f_s(self) -> float:
        """Stereotype rate p_m − p_f."""
        return self._value("f_s")

    @property
    def f_m(self) -> float:
        """Global masculine rate (p_m + p_f) / 2."""
        return self._value("f_m")


def mt_metrics(
    genders: pd.DataFrame, *, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
) -> MtSummary:
    """p_i with Agresti–Coull intervals, feminine ranks, p_f, p_m, f_s, f_m and p_fam.

    Args:
        genders: one row per translated sample with ``stereotype`` (1–16) and ``gender`` (a
            label, see :func:`weatkit.gest.data.gender_class`); with a ``sentence`` column p_fam
            is computed too. E.g. from :func:`weatkit.gest.data.read_genders_csv`.
        confidence_level: confidence level of the intervals.

    Raises:
        WeatkitError: missing columns, stereotypes outside 1–16, a stereotype without masculine
            or feminine translations.
    """
    for col in ("stereotype", "gender"):
        if col not in genders.columns:
            raise WeatkitError(f"genders table has no {col!r} column")
    stereotypes = pd.to_numeric(genders["stereotype"], errors="coerce")
    if not stereotypes.isin(list(STEREOTYPES)).all():
        raise WeatkitError("genders table has stereotypes outside 1–16")
    stereotypes = stereotypes.to_numpy(dtype=np.int64)
    kind = gender_class(genders["gender"])
    male, female = kind == "male", kind == "female"

    per = stereotype_frame()
    ids = per["stereotype"].to_numpy()
    in_group = stereotypes[None, :] == ids[:, None]
    per["n_male"] = (in_group & male).sum(axis=1)
    per["n_female"] = (in_group & female).sum(axis=1)
    per["n_other"] = (in_group & ~(male | female)).sum(axis=1)
    per["n"] = per["n_male"] + per["n_female"]
    empty = per.loc[per["n"] == 0, "stereotype"].tolist()
    if empty:
        raise WeatkitError(
            f"no masculine or feminine translations for stereotype {empty[0]} "
            f"({STEREOTYPES[empty[0]]}); p_f, p_m, f_s and f_m need all 16"
        )
    per["p"] = per["n_male"] / per["n"]
    per["p_ci_low"], per["p_ci_high"] = agresti_coull_interval(
        per["n_male"], per["n"], confidence_level
    )
    per["rank"] = feminine_ranks(per["p"])

    p = per["p"].to_numpy()
    p_f = float(p[np.asarray(FEMALE_STEREOTYPES) - 1].mean())
    p_m = float(p[np.asarray(MALE_STEREOTYPES) - 1].mean())
    if "sentence" in genders.columns:
        fam = family_mask(genders["sentence"], stereotypes)
        fam_male, n_fam = int((fam & male).sum()), int((fam & (male | female)).sum())
    else:
        fam_male, n_fam = 0, 0
    fam_low, fam_high = agresti_coull_interval(fam_male, n_fam, confidence_level)
    row = {
        "n_samples": int(per["n"].sum()),
        "n_skipped": int(per["n_other"].sum()),
        "p_f": p_f,
        "p_m": p_m,
        "f_s": p_m - p_f,
        "f_m": (p_m + p_f) / 2.0,
        "p_fam": fam_male / n_fam if n_fam else np.nan,
        "p_fam_ci_low": float(fam_low),
        "p_fam_ci_high": float(fam_high),
        "n_fam": n_fam,
        "ci_method": "agresti-coull",
        "ci_level": confidence_level,
    }
    return MtSummary(
        stereotypes=per[MT_STEREOTYPE_COLUMNS],
        summary=pd.DataFrame([row], columns=MT_SUMMARY_COLUMNS),
    )
