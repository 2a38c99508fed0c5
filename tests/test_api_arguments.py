"""Bad arguments of the public functions are weatkit's own one-line errors naming the function
and the argument (issue 37 §2; :mod:`weatkit.arguments`): ``weatkit.weat(X, Y, A, None)`` was an
``AttributeError``, an array of strings a ``ValueError`` of numpy's or torch's.

Every function that takes arrays of vectors or word sets gets the same bad values in the same
position, and the same message; a ``hypothesis`` fuzz of argument values finds no exception but
weatkit's."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import weatkit
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArgumentValueError,
    ConfigError,
    WeatkitError,
)

RNG = np.random.default_rng(0)
X, Y, A, B = (RNG.normal(size=(4, 5)) for _ in range(4))
FAST = {"n_bootstrap": 0}

#: Public function -> (a call with ``bad`` in one set of vectors, that argument's name in the
#: message, what the message says it must be).
VECTORS = "a 2-D numeric array of word vectors"
WORDS_OR_VECTORS = f"a list of words or {VECTORS}"
CALLS: dict[str, tuple[Callable[[object], object], str, str]] = {
    "weat": (lambda b: weatkit.weat(X, Y, A, b, n_bootstrap=0, n_permutations=0), "B", VECTORS),
    "influence": (lambda b: weatkit.influence(X, Y, A, b), "B", VECTORS),
    "rnd": (lambda b: weatkit.rnd(X, A, b, **FAST), "B", WORDS_OR_VECTORS),
    "rnsb": (lambda b: weatkit.rnsb([X, Y], A, b, **FAST), "positive", WORDS_OR_VECTORS),
    "mac": (lambda b: weatkit.mac([X], [A, b], **FAST), "attribute set 2", WORDS_OR_VECTORS),
    "ect": (lambda b: weatkit.ect([X, b], A, **FAST), "target set 2", WORDS_OR_VECTORS),
    "ripa": (lambda b: weatkit.ripa([X], (A, b), **FAST), "pairs (y)", WORDS_OR_VECTORS),
    "direct_bias": (lambda b: weatkit.direct_bias(X, (A, b), **FAST), "pairs (y)",
                    WORDS_OR_VECTORS),
    "wefat": (lambda b: weatkit.wefat(X, A, b, [1, 2, 3, 4], **FAST), "B", WORDS_OR_VECTORS),
    "sc_weat": (lambda b: weatkit.sc_weat(X[0], A, b, n_permutations=0, **FAST), "B",
                WORDS_OR_VECTORS),
}

#: A bad value, the error class, and the message after ``function: argument``.
BAD_VECTORS = [
    pytest.param(None, ArgumentTypeError, "must be {expected}, got None", id="None"),
    pytest.param("abc", ArgumentTypeError, "must be {expected}, got str 'abc'", id="str"),
    pytest.param(3, ArgumentTypeError, "must be {expected}, got int 3", id="scalar"),
    pytest.param(
        np.array([["a", "b"]] * 4),
        ArgumentTypeError,
        "must be {expected}, got an array of dtype <U1 and shape (4, 2)",
        id="strings",
    ),
    pytest.param(
        [[1.0, 2.0], [1.0]], ArgumentTypeError, "must be {expected}, got a list of 2 item(s)",
        id="ragged",
    ),
    pytest.param(
        np.ones((4, 5), dtype=bool),
        ArgumentTypeError,
        "must be {expected}, got an array of dtype bool and shape (4, 5)",
        id="bool",
    ),
    pytest.param(
        {"a": 1}, ArgumentTypeError, "must be {expected}, got a dict of 1 item(s)", id="dict"
    ),
    pytest.param(
        np.ones(5), ArgumentValueError, "must be an (n, dim) array, got shape (5,)", id="1-D"
    ),
    pytest.param(np.zeros((0, 5)), ArgumentValueError, "is empty", id="empty"),
    pytest.param(
        np.full((4, 5), np.inf), ArgumentValueError, "has NaN or infinite values", id="inf"
    ),
    pytest.param(
        np.ones((4, 3)), ArgumentValueError, "has vectors of width 3, others 5", id="width"
    ),
    pytest.param(np.zeros((4, 5)), ArgumentValueError, "has an all-zero vector", id="zero"),
]


@pytest.mark.parametrize("function", sorted(CALLS))
@pytest.mark.parametrize(("bad", "kind", "message"), BAD_VECTORS)
def test_a_bad_set_of_vectors_names_the_function_and_the_argument(
    function: str, bad: object, kind: type[ArgumentError], message: str
) -> None:
    call, name, expected = CALLS[function]
    with pytest.raises(ArgumentError) as err:
        call(bad)
    assert type(err.value) is kind
    assert str(err.value) == f"{function}: {name} " + message.format(expected=expected)


def test_the_errors_are_weatkits_and_pythons() -> None:
    with pytest.raises(TypeError) as err:
        weatkit.weat(X, Y, A, None)
    assert isinstance(err.value, WeatkitError)
    assert str(err.value) == f"weat: B must be {VECTORS}, got None"
    with pytest.raises(ValueError) as err:
        weatkit.weat(X, Y, A, np.zeros((4, 5)))
    assert isinstance(err.value, WeatkitError) and not isinstance(err.value, TypeError)


def test_lists_of_numbers_are_vectors_and_give_the_arrays_numbers() -> None:
    as_arrays = weatkit.weat(X, Y, A, B, n_bootstrap=0, n_permutations=0)
    as_lists = weatkit.weat(X.tolist(), Y, A, B.tolist(), n_bootstrap=0, n_permutations=0)
    assert as_lists.effect_size == as_arrays.effect_size
    ints = np.array([[1, 0], [2, 1]])
    floats = weatkit.rnd(ints.astype(float), ints[:1] + 1.0, ints[1:], **FAST).statistic
    assert weatkit.rnd(ints, ints[:1] + 1, ints[1:], **FAST).statistic == floats


@pytest.fixture(scope="module")
def tiny() -> WordVectors:
    words = [f"w{i}" for i in range(30)]
    return WordVectors("tiny", words, RNG.normal(size=(30, 5)).astype("float32"))


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (
            lambda v: weatkit.null_baseline(None, ["w0"], ["w1"], ["w2"], ["w3"]),
            ArgumentTypeError,
            "null_baseline: vectors must be a WordVectors, got None",
        ),
        (
            lambda v: weatkit.null_baseline(v, "w0", ["w1"], ["w2"], ["w3"]),
            ArgumentTypeError,
            "null_baseline: X must be a list of words, got str 'w0'",
        ),
        (
            lambda v: weatkit.null_baseline(v, ["w0"], ["w1"], ["w2"], [3, 4]),
            ArgumentTypeError,
            "null_baseline: B must be a list of words, got a list of 2 item(s)",
        ),
        (
            lambda v: weatkit.null_baseline(v, ["w0"], [], ["w2"], ["w3"]),
            ArgumentValueError,
            "null_baseline: Y is empty",
        ),
        (
            lambda v: weatkit.iso(None, v),
            ArgumentTypeError,
            "iso: src must be a path, an embeddings spec (str) or a WordVectors, got None",
        ),
        (
            lambda v: weatkit.iso(v, np.ones((3, 3))),
            ArgumentTypeError,
            "iso: tgt must be a path, an embeddings spec (str) or a WordVectors, got an array of "
            "dtype float64 and shape (3, 3)",
        ),
        (
            lambda v: weatkit.iso(v, v, tgt_words=[1, 2]),
            ArgumentTypeError,
            "iso: tgt_words must be a list of words, got a list of 2 item(s)",
        ),
        (
            lambda v: weatkit.rnd(["w0"], ["w1"], ["w2"], vectors={"w0": [1.0]}),
            ArgumentTypeError,
            "rnd: vectors must be a WordVectors (or None), got a dict of 1 item(s)",
        ),
        (
            lambda v: weatkit.wefat(["w0", "w1", "w2"], ["w3"], ["w4"], ["a", "b", "c"],
                                    vectors=v),
            ArgumentTypeError,
            "wefat: values must be numbers: a mapping word -> value, a list aligned with the "
            "targets, or a file, got a list of 3 item(s)",
        ),
        (
            lambda v: weatkit.sc_weat(None, ["w3"], ["w4"], vectors=v),
            ArgumentTypeError,
            "sc_weat: word must be one word or one (dim,) vector, got None",
        ),
    ],
)
def test_bad_words_and_spaces_name_the_argument(
    tiny: WordVectors, call: Callable[[WordVectors], object], kind: type, message: str
) -> None:
    with pytest.raises(ArgumentError) as err:
        call(tiny)
    assert type(err.value) is kind and str(err.value) == message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: weatkit.weat(X, Y, A, B, n_bootstrap="5"), "n_bootstrap: must be a whole "
         "number, got str '5'"),
        (lambda: weatkit.weat(X, Y, A, B, confidence_level=None), "confidence_level: must be a "
         "number, got None"),
        (lambda: weatkit.rnd(X, A, B, seed=1.5), "seed: must be a whole number, got float 1.5"),
        (lambda: weatkit.mac([X], [A], n_bootstrap=True), "n_bootstrap: must be a whole "
         "number, got bool True"),
    ],
)
def test_a_resampling_option_of_the_wrong_type_names_it(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        call()
    assert str(err.value) == message


def test_what_the_fuzz_found_is_a_weatkit_error_or_an_undefined_statistic() -> None:
    huge = np.zeros((4, 5))
    huge[:, 4] = [1.0, 1.3407807929942597e154, 1.0, 1.3407807929942597e154]
    # RIPA's direction of differences whose d dᵀ overflows: undefined (NaN), not a LinAlgError
    with np.errstate(all="ignore"):
        assert np.isnan(weatkit.ripa([X], (A, huge), n_bootstrap=0).statistic)
    # a value below -1e30 froze liblinear (sklearn checks only the largest value)
    with pytest.raises(ArgumentValueError, match=r"^rnsb: the positive and negative words have "
                       r"values beyond ±1e\+30, where the liblinear classifier does not finish"):
        weatkit.rnsb([X, Y], A, np.array([[1.0, 0, 0, 0, -1e244]] * 2), n_bootstrap=0)
    with pytest.raises(WeatkitError, match=r"^values file '\\x00' is not a valid path$"):
        weatkit.wefat(X[:3], A, B, "\x00", n_bootstrap=0)


# --- fuzz -----------------------------------------------------------------------------------

#: Argument values of every kind: nothing, numbers, text, (ragged) lists, arrays of any dtype
#: and shape (NaN, infinities, huge and tiny numbers included), mappings.
VALUES = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.text(max_size=5),
    st.lists(st.text(max_size=3), max_size=4),
    st.lists(st.lists(st.floats(), min_size=0, max_size=5), max_size=4),
    st.dictionaries(st.text(max_size=3), st.floats(), max_size=3),
    hnp.arrays(
        dtype=st.sampled_from([np.float16, np.float32, np.float64, np.int64, np.bool_,
                               np.complex128, np.dtype("U3")]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    ),
)
FUZZ_CALLS: dict[str, Callable[[object, WordVectors], object]] = {
    **{name: (lambda v, _w, call=call: call(v)) for name, (call, _, _) in CALLS.items()},
    "weat:X": lambda v, _w: weatkit.weat(v, Y, A, B, n_bootstrap=0, n_permutations=0),
    "rnd:targets": lambda v, w: weatkit.rnd(v, ["w1"], ["w2"], vectors=w, **FAST),
    "mac:attributes": lambda v, _w: weatkit.mac([X], v, **FAST),
    "ripa:pairs": lambda v, w: weatkit.ripa([["w0"]], v, vectors=w, **FAST),
    "wefat:values": lambda v, w: weatkit.wefat(["w0", "w1", "w2"], ["w3"], ["w4"], v,
                                               vectors=w, **FAST),
    "sc_weat:word": lambda v, w: weatkit.sc_weat(v, ["w3"], ["w4"], vectors=w, n_permutations=0,
                                                 **FAST),
    "null_baseline:A": lambda v, w: weatkit.null_baseline(
        w, ["w0"], ["w1"], v, ["w3"], n_draws=5, frequency="rank", n_candidates=30
    ),
    "iso:src_words": lambda v, w: weatkit.iso(w, w, src_words=v, measures=("ev",), device="cpu"),
}
#: Resampling options: values of every kind, whole numbers small (a large one is a valid, long
#: request).
OPTION_VALUES = VALUES.filter(lambda v: not isinstance(v, int)) | st.integers(-3, 30)
OPTION_CALLS: dict[str, Callable[[object], object]] = {
    "weat:n_bootstrap": lambda v: weatkit.weat(X, Y, A, B, n_bootstrap=v, n_permutations=0),
    "weat:seed": lambda v: weatkit.weat(X, Y, A, B, seed=v, n_bootstrap=5, n_permutations=5),
    "rnd:confidence_level": lambda v: weatkit.rnd(X, A, B, confidence_level=v, n_bootstrap=5),
    "mac:n_bootstrap": lambda v: weatkit.mac([X], [A], n_bootstrap=v),
}


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.sampled_from(sorted(FUZZ_CALLS)), value=VALUES)
def test_fuzz_only_weatkit_errors_escape(tiny: WordVectors, name: str, value: object) -> None:
    try:
        with np.errstate(all="ignore"):
            FUZZ_CALLS[name](value, tiny)
    except WeatkitError as err:
        assert "\n" not in str(err)
        if isinstance(err, ArgumentError):
            assert str(err).startswith(name.split(":")[0] + ": ")


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(sorted(OPTION_CALLS)), value=OPTION_VALUES)
def test_fuzz_resampling_options_only_weatkit_errors_escape(name: str, value: object) -> None:
    try:
        OPTION_CALLS[name](value)
    except WeatkitError as err:
        assert "\n" not in str(err)
