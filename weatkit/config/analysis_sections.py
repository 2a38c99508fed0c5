"""What a run computes beyond WEAT on its spaces, declared once: :data:`ISO`, :data:`POOLING`,
:data:`METRICS` and :data:`ASSOCIATION`.

- :data:`ISO` → ``IsoOptions`` (file section ``isomorphism``): the isomorphism of two spaces
  (EV, GH, GW; :mod:`weatkit.isomorphism`);
- :data:`POOLING` → the ``pool`` and ``reliability`` fields of ``RunConfig`` (top level):
  d pooled over lists, languages or layers, and its reliability across parallel lists;
- :data:`METRICS` → the ``metrics`` field of ``RunConfig`` (top level) and
  :data:`ASSOCIATION` → ``AssociationOptions`` (file section ``association``): the association
  metrics of the field on a run's tests (:mod:`weatkit.association`).

Read through :mod:`weatkit.config.declare`; listed with every other section in
:data:`weatkit.config.schema.SECTIONS`, where callers import them from.
"""

from __future__ import annotations

from weatkit.config.declare import Option, Section

# --------------------------------------------------------------------------------------------
# the isomorphism measures: weatkit.isomorphism.measures.IsoOptions (defaults equal its own:
# tests/test_config_schema.py)

ISO = Section(
    "isomorphism",
    (
        Option(
            "measures",
            "names",
            ("ev", "gh"),
            "Isomorphism measures (ev, gh, gw); repeatable or comma-separated.",
            "--measures",
        ),
        Option(
            "n_words",
            "counts",
            {"ev": 10_000, "gh": 5_000, "gw": 1_000},
            "Words per measure: N for all, or MEASURE=N; repeatable.",
            "--n-words",
        ),
        Option(
            "ev_order",
            "str",
            "ascending",
            "EV spectrum order: ascending = iso-study code; descending = Søgaard et al.'s k "
            "largest eigenvalues.",
            "--ev-order",
            choices=("ascending", "descending"),
        ),
        Option("energy", "float", 0.9, "Spectrum fraction that sets k for EV.", "--energy"),
        Option(
            "gh_dims",
            "ints",
            (0,),
            "Homology dimensions for GH: 0 (reference) or 0,1.",
            "--gh-dims",
        ),
        Option(
            "gh_points",
            "str",
            "distances",
            "Rips on the distance matrix, or on its rows as points (iso-study under gudhi<3).",
            "--gh-points",
            choices=("distances", "distance-rows"),
        ),
        Option(
            "center_over",
            "str",
            "all",
            "Mean-centre over all rows of the file (reference) or only the measured words.",
            "--center-over",
            choices=("all", "subset"),
        ),
        Option("device", "str", "auto", "Torch device of the measures."),
    ),
)

# --------------------------------------------------------------------------------------------
# issue 19, pooling: fields of RunConfig (top level in files)

POOLING = Section(
    "",
    (
        Option(
            "pool",
            "names",
            (),
            "Random-effects pooling of d (DerSimonian-Laird) over lists, languages and/or "
            "layers; comma-separated; writes pooled.csv (association_pooled.csv for the "
            "association metrics).",
            "--pool",
        ),
        Option(
            "reliability",
            "bool",
            False,
            "Reliability across the parallel lists of a language (split-half r_SB, ICC(2,1) and "
            "ICC(2,k) with the embeddings as units; needs 3 embeddings and 2 lists of a test); "
            "writes reliability.csv.",
            "--reliability",
        ),
    ),
)

# --------------------------------------------------------------------------------------------
# issue 26, the association metrics of the field on a run's tests: the ``metrics`` field of
# RunConfig (top level) and weatkit.association.options.AssociationOptions (``association``)

METRICS = Section(
    "",
    (
        Option(
            "metrics",
            "names",
            ("weat",),
            "Metrics computed on every test: weat (results.csv), rnd, rnsb, mac, ect, ripa, "
            "sc_weat, direct_bias (association.csv); comma-separated.",
            "--metrics",
        ),
    ),
)

ASSOCIATION = Section(
    "association",
    (
        Option(
            "rnd_reduction",
            "str",
            "sum",
            "RND summed over the words (Garg et al.) or averaged (WEFE).",
            "--rnd-reduction",
            choices=("sum", "mean"),
        ),
        Option(
            "rnd_normalize",
            "bool",
            True,
            "RND on unit vectors (Garg et al.); --no-rnd-normalize: as they are (WEFE).",
            "--rnd-normalize",
        ),
        Option(
            "rnsb_over",
            "str",
            "sets",
            "RNSB's distribution over the target sets (the paper) or their words (WEFE).",
            "--rnsb-over",
            choices=("sets", "words"),
        ),
        Option(
            "rnsb_holdout",
            "float",
            0.0,
            "Share of the attribute words RNSB's classifier holds out (WEFE: 0.2).",
            "--rnsb-holdout",
        ),
        Option(
            "rnsb_bootstrap",
            "int",
            1000,
            "RNSB's bootstrap resamples at most (each trains a classifier).",
            "--rnsb-bootstrap",
        ),
        Option(
            "ripa_relation",
            "str",
            "pca",
            "RIPA's relation: first principal component of the pairs (the paper) or the mean "
            "of their unit differences (WEFE).",
            "--ripa-relation",
            choices=("pca", "mean"),
        ),
    ),
)
