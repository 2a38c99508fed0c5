"""One bias measure per method, model and language, as rows of the long score table.

Every function returns rows ``{model, lang, method, measure, value, ci_low, ci_high, n}`` (see
:data:`SCORE_COLUMNS`) and raises :class:`NotApplicable` when the method has nothing to measure
for that model or language (no data in the language, a causal LM where a masked LM is needed).

Measures and their direction (larger = more stereotypical unless noted):

=========================  ==================================================================
``SET:TEST@L``             WEAT effect size d of the word vectors at layer L, e.g.
                           ``ca-weat:weat1@-2`` (CA-WEAT: the median over the lists and its
                           order-statistic CI; Caliskan et al. 2017)
``gest:g_s``               GEST stereotype rate g_s = q_m / q_f (> 1: stereotypical), mean
                           over the templates; CI only with one template
``stereoset:ss``,          StereoSet SS (50 = unbiased), LMS and ICAT (100 = ideal), per
``stereoset:lms``,         target term (the reference convention; ICAT of the averaged LMS
``stereoset:icat``         and SS)
``crows:METHOD``           % of CrowS-Pairs pairs where the more stereotypical sentence scores
                           higher (50 = unbiased), with its bootstrap CI
``mbe:METHOD``             MBE score (Kaneko et al. 2022, Eq. 2): > 50 = the male sentences are
                           more likely
=========================  ==================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from weatkit.crossmethod.config import (
    CrowsSection,
    GestSection,
    MbeSection,
    ModelEntry,
    StereosetSection,
    WeatSection,
)
from weatkit.crows.data import OVERALL, load_crows
from weatkit.crows.score import crows_metric, score_crows
from weatkit.embeddings.contextual import ContextualOptions, ExtractorPool
from weatkit.embeddings.spec import parse_embeddings_specs
from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import aggregate_scores
from weatkit.gest.data import load_gest
from weatkit.gest.scoring import score_samples
from weatkit.lists.sources import available_languages
from weatkit.mbe.run import run_mbe_parallel
from weatkit.pipeline import run
from weatkit.sentence import MaskedLM
from weatkit.stereoset.data import LANGS as STEREOSET_LANGS
from weatkit.stereoset.data import load_stereoset
from weatkit.stereoset.metrics import evaluate
from weatkit.stereoset.scoring import score_intrasentence

SCORE_COLUMNS = ["model", "lang", "method", "measure", "value", "ci_low", "ci_high", "n"]
GEST_LANGS = ("en",)
#: CrowS-Pairs: English (all bias types); Japanese and Russian (MBE's gender pairs).
CROWS_LANGS = ("en", "ja", "ru")
#: Bootstrap resamples of the per-method CIs (the CIs are shown, not correlated).
N_BOOTSTRAP = 1000


class NotApplicable(Exception):
    """The method does not apply to this model or language (the reason is the message)."""


@dataclass
class MethodContext:
    """What every method shares: loading options, progress bars, loaded masked LMs."""

    options: ContextualOptions
    show_progress: bool | None = None
    masked: dict[str, MaskedLM] = field(default_factory=dict)
    extractors: ExtractorPool = field(default_factory=ExtractorPool)

    def masked_lm(self, entry: ModelEntry, kind: str, method: str) -> MaskedLM:
        """The entry's model as a :class:`MaskedLM` (loaded once per model)."""
        if kind != "mlm":
            raise NotApplicable(f"{method} needs a masked LM; {entry.name} is a causal LM")
        if entry.model not in self.masked:
            self.masked[entry.model] = MaskedLM(entry.model, self.options)
        return self.masked[entry.model]


def _row(
    model: str,
    lang: str,
    method: str,
    measure: str,
    value: float,
    ci: tuple[float, float] = (np.nan, np.nan),
    n: float = np.nan,
) -> dict[str, Any]:
    return {
        "model": model,
        "lang": lang,
        "method": method,
        "measure": measure,
        "value": float(value),
        "ci_low": float(ci[0]),
        "ci_high": float(ci[1]),
        "n": n,
    }


def weat_rows(
    entry: ModelEntry, kind: str, lang: str, section: WeatSection, ctx: MethodContext
) -> list[dict[str, Any]]:
    """Effect sizes of the model's word vectors at each layer in one language."""
    if not any(lang in available_languages(spec) for spec in section.lists):
        raise NotApplicable(f"no lists for {lang} in {', '.join(section.lists)}")
    name = entry.name
    layers = ",".join(str(x) for x in section.layers)
    specs = parse_embeddings_specs(f"{name}=hf:{entry.model}@{layers}", ctx.options)
    config = replace(section.run, langs=(lang,), embeddings=tuple(specs), contextual=ctx.options)
    result = run(
        config, show_progress=ctx.show_progress, extractors=ctx.extractors, allow_empty=True
    )
    rows = []
    for r in result.summary.itertuples(index=False):
        layer = str(r.embeddings).rsplit("@", 1)[-1]
        rows.append(
            _row(
                name,
                str(r.lang),
                "weat",
                f"{r.list_set}:{r.test}@{layer}",
                r.effect_size,
                (r.effect_size_ci_low, r.effect_size_ci_high),
                r.n_lists,
            )
        )
    return rows


def gest_rows(
    entry: ModelEntry, kind: str, lang: str, section: GestSection, ctx: MethodContext
) -> list[dict[str, Any]]:
    """GEST g_s (Pikuliak et al. 2023): English only; the mean over the chosen templates."""
    if lang not in GEST_LANGS:
        raise NotApplicable(f"GEST is English only, not {lang}")
    name = entry.name
    samples = load_gest("1.0")
    scores = score_samples(
        entry.model,
        samples["sentence"].tolist(),
        kind=kind,
        templates=section.templates(kind),
        options=ctx.options,
        show_progress=ctx.show_progress,
    )
    scores = scores.merge(samples, on="sample_id", how="left", validate="many_to_one")
    summaries = [
        aggregate_scores(part, n_bootstrap=N_BOOTSTRAP).summary.iloc[0]
        for _, part in scores.groupby("template", sort=True)
    ]
    if not summaries:
        raise WeatkitError(f"{name}: no GEST template scored")
    g_s = np.mean([s["g_s"] for s in summaries])
    ci = (
        (summaries[0]["g_s_ci_low"], summaries[0]["g_s_ci_high"])
        if len(summaries) == 1
        else (np.nan, np.nan)
    )
    n = int(sum(s["n_samples"] for s in summaries))
    return [_row(name, lang, "gest", "gest:g_s", g_s, ci, n)]


def crows_rows(
    entry: ModelEntry, kind: str, lang: str, section: CrowsSection, ctx: MethodContext
) -> list[dict[str, Any]]:
    """CrowS-Pairs metric (Nangia et al. 2020) over all pairs of the language, with its CI."""
    if lang not in CROWS_LANGS:
        raise NotApplicable(f"CrowS-Pairs has {', '.join(CROWS_LANGS)}, not {lang}")
    lm = ctx.masked_lm(entry, kind, "CrowS-Pairs")
    per_pair = score_crows(
        lm, load_crows(lang=lang), method=section.method, show_progress=ctx.show_progress
    )
    summary = crows_metric(per_pair, n_bootstrap=N_BOOTSTRAP)
    overall = summary[summary["bias_type"] == OVERALL].iloc[0]
    return [
        _row(
            entry.name,
            lang,
            "crows",
            f"crows:{section.method}",
            overall["metric"],
            (overall["ci_low"], overall["ci_high"]),
            overall["n"],
        )
    ]


def stereoset_rows(
    entry: ModelEntry, kind: str, lang: str, section: StereosetSection, ctx: MethodContext
) -> list[dict[str, Any]]:
    """StereoSet intrasentence SS, LMS and ICAT over all bias types, per-term convention."""
    if lang not in STEREOSET_LANGS:
        raise NotApplicable(f"StereoSet has {', '.join(STEREOSET_LANGS)}, not {lang}")
    dataset = load_stereoset(lang)
    scores = score_intrasentence(
        entry.model, dataset, kind=kind, options=ctx.options, show_progress=ctx.show_progress
    )
    table = evaluate(dataset, {"intrasentence": scores})
    overall = table[(table["split"] == "intrasentence") & (table["bias_type"] == "overall")]
    row = overall.iloc[0]
    return [
        _row(entry.name, lang, "stereoset", f"stereoset:{name}", row[column], n=row["n"])
        for name, column in (("ss", "term_ss"), ("lms", "term_lms"), ("icat", "micro_icat"))
    ]


def mbe_rows(
    entry: ModelEntry, kind: str, lang: str, section: MbeSection, ctx: MethodContext
) -> list[dict[str, Any]]:
    """MBE score (Kaneko et al. 2022, Eq. 2) from the language's parallel corpus."""
    if lang not in section.corpora:
        raise NotApplicable(f"no parallel corpus for {lang} in the mbe section")
    lm = ctx.masked_lm(entry, kind, "MBE")
    run_ = run_mbe_parallel(
        lm,
        section.corpora[lang],
        method=section.method,
        weight=section.weight,
        seed=section.seed,
        max_sentences=section.max_sentences,
        show_progress=ctx.show_progress,
    )
    n = run_.result.n_male + run_.result.n_female
    return [_row(entry.name, lang, "mbe", f"mbe:{section.method}", run_.result.score, n=n)]
