"""Which metrics a run computes on its tests, and their options (``--metrics``, ``association``).

``weatkit run --metrics weat,rnd,ripa`` (``metrics: [weat, rnd, ripa]`` in a run, grid or
compare file) computes, on every WEAT-style test (X, Y, A, B) of the run, each metric of
:data:`METRICS`: ``weat`` is the WEAT engine (``results.csv``), the others the association
metrics of :mod:`weatkit.association` (``association.csv``; which sets each takes:
:mod:`weatkit.association.query`). The options of :class:`AssociationOptions` (a file's
``association`` section, or their flags) choose between the conventions of the papers (the
defaults) and WEFE's (:data:`COMPAT`, set by ``--compat wefe``).

Imports nothing heavy: ``weatkit lists`` and the ``--help`` of the commands read it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from weatkit.errors import ConfigError

#: Every metric ``--metrics`` takes, in the order of their columns and rows.
METRICS = ("weat", "rnd", "rnsb", "mac", "ect", "ripa", "sc_weat", "direct_bias")
#: The metrics that need definitional pairs (a list file's ``pairs``).
PAIR_METRICS = ("ripa", "direct_bias")
#: The metrics a run computes unless told otherwise: WEAT alone.
DEFAULT_METRICS = ("weat",)
#: Bootstrap resamples of RNSB at most (each trains a classifier), unless ``rnsb_bootstrap``.
RNSB_BOOTSTRAP = 1000


#: The robustness options (``--influence``, ``--null``, ``--pool``) → why a metric cannot take
#: it, for the metrics that cannot (every other metric of :data:`METRICS` takes it: WEAT's d,
#: :mod:`weatkit.association.influence`, :mod:`weatkit.association.null`,
#: :func:`weatkit.report.tables.association_pooled_frame`).
CANNOT_TAKE: dict[str, dict[str, str]] = {
    "influence": {},  # every metric has a per-word decomposition
    "null": {
        "ripa": "its statistic reads A, B and the pairs, not the X and Y that the null replaces",
        "direct_bias": (
            "its statistic reads A, B and the pairs, not the X and Y that the null replaces"
        ),
    },
    "pool": {
        "sc_weat": "its rows are words, which differ from one list or language to another",
    },
}


def check_robustness(metrics: tuple[str, ...], option: str) -> list[str]:
    """The metrics of ``metrics`` that ``option`` (``influence``, ``null``, ``pool``) leaves out,
    each as ``"METRIC: why"``; a :class:`ConfigError` (field ``option``) naming the first metric
    when no metric of the run takes it."""
    cannot = CANNOT_TAKE[option]
    left_out = [m for m in metrics if m in cannot]
    if left_out and len(left_out) == len(metrics):
        metric = left_out[0]
        takes = ", ".join(m for m in METRICS if m not in cannot)
        raise ConfigError(
            f"not for {metric}: {cannot[metric]} (metrics that take it: {takes})",
            field=option,
        )
    return [f"{m}: {cannot[m]}" for m in left_out]


def measure_name(metric: str) -> str:
    """The registered measure of a metric (:data:`weatkit.measures.registry.MEASURES`):
    ``sc_weat`` -> ``sc-weat``, ``direct_bias`` -> ``direct-bias``."""
    return metric.replace("_", "-")


def check_metrics(metrics: tuple[str, ...]) -> None:
    """:class:`ConfigError` (field ``metrics``) naming an unknown or repeated metric, with the
    choices."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(
            f"unknown metric {unknown[0]!r}: choose from {', '.join(METRICS)}", field="metrics"
        )
    if not metrics:
        raise ConfigError(f"name at least one of {', '.join(METRICS)}", field="metrics")
    if len(set(metrics)) != len(metrics):
        raise ConfigError(f"a metric is given twice: {', '.join(metrics)}", field="metrics")


@dataclass(frozen=True)
class AssociationOptions:
    """How the association metrics are computed in a run (the papers' conventions by default).

    Attributes:
        rnd_reduction: RND summed over the words (``sum``, Garg et al.) or averaged (``mean``,
            WEFE).
        rnd_normalize: RND on unit vectors (Garg et al.) or on the vectors as they are (WEFE).
        rnsb_over: RNSB's distribution over the target sets (``sets``, the paper) or over their
            words (``words``, WEFE).
        rnsb_holdout: share of the attribute words RNSB's classifier does not train on (0; WEFE:
            0.2, a stratified split seeded by the run's seed).
        rnsb_bootstrap: RNSB's bootstrap resamples at most (each trains a classifier); the run's
            ``n_bootstrap`` when lower.
        ripa_relation: RIPA's relation vector: the first principal component of the pairs
            (``pca``, the paper) or the mean of their unit differences (``mean``, WEFE).
    """

    rnd_reduction: str = "sum"
    rnd_normalize: bool = True
    rnsb_over: str = "sets"
    rnsb_holdout: float = 0.0
    rnsb_bootstrap: int = RNSB_BOOTSTRAP
    ripa_relation: str = "pca"

    def validate(self) -> None:
        """:class:`ConfigError` naming the field of a value that cannot be."""
        for name, value, choices in (
            ("rnd_reduction", self.rnd_reduction, ("sum", "mean")),
            ("rnsb_over", self.rnsb_over, ("sets", "words")),
            ("ripa_relation", self.ripa_relation, ("pca", "mean")),
        ):
            if value not in choices:
                raise ConfigError(f"must be one of {', '.join(choices)}, got {value!r}", field=name)
        if not 0 <= self.rnsb_holdout < 1:
            raise ConfigError(
                f"must be a share in [0, 1), got {self.rnsb_holdout}", field="rnsb_holdout"
            )
        if self.rnsb_bootstrap < 0:
            raise ConfigError(f"must be >= 0, got {self.rnsb_bootstrap}", field="rnsb_bootstrap")


#: The option fields of :class:`AssociationOptions` (where a ``--compat`` preset sets them).
ASSOCIATION_KEYS = frozenset(f.name for f in fields(AssociationOptions))

#: ``--compat`` preset -> the association options that reproduce the tool (the presets of the
#: WEAT engine and the lists are :data:`weatkit.engine.compat.COMPAT_PRESETS`). WEFE 1.0.1
#: (``wefe.metrics``): RND averaged on the vectors as they are (``normalize=False``,
#: ``distance="norm"``), RNSB over the words with its 80/20 holdout (``holdout=True``,
#: ``random_state`` = the run's seed), RIPA with the mean of the pairs' unit differences.
COMPAT: MappingProxyType[str, MappingProxyType[str, Any]] = MappingProxyType(
    {
        "wefe": MappingProxyType(
            {
                "rnd_reduction": "mean",
                "rnd_normalize": False,
                "rnsb_over": "words",
                "rnsb_holdout": 0.2,
                "ripa_relation": "mean",
            }
        )
    }
)
