"""The one check of what the public functions take: arrays of word vectors, word sets and the
spaces words are looked up in.

Each failure is one line naming the function and the argument, e.g.
``weat: B must be a 2-D numeric array of word vectors, got None``: an
:class:`~weatkit.errors.ArgumentTypeError` (also a ``TypeError``) for a value of the wrong kind
(None, a string, an array of strings, a ragged list), an
:class:`~weatkit.errors.ArgumentValueError` (also a ``ValueError``) for a value of the right kind
that cannot be used (its shape, no rows, NaN or infinite values, an all-zero vector, a width
other than the other sets').

An array of vectors is anything :func:`numpy.asarray` reads as a 2-D array of integers or
floats (a NumPy array, a list of lists of numbers); integers become float64.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from weatkit.errors import ArgumentTypeError, ArgumentValueError, ConfigError

#: What an array of word vectors is, in messages.
VECTORS = "a 2-D numeric array of word vectors"
#: What a list of words is, in messages.
WORDS = "a list of words"


def describe(value: object) -> str:
    """A short description of ``value`` for a message: ``None``, ``str 'abc'``, ``an array of
    dtype <U1 and shape (2, 2)``, ``a list of 3 item(s)``."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    if isinstance(value, str | bytes | bool | int | float | complex | np.generic):
        text = repr(value)
        return f"{type(value).__name__} {text[:40]}{'…' if len(text) > 40 else ''}"
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    if isinstance(value, Sequence | Mapping):
        return f"{article} {kind} of {len(value)} item(s)"
    return f"{article} {kind}"


def wrong_type(function: str, name: str, expected: str, value: object) -> ArgumentTypeError:
    """``function: name must be expected, got <value described>``."""
    return ArgumentTypeError(f"{function}: {name} must be {expected}, got {describe(value)}")


def wrong_value(function: str, problem: str) -> ArgumentValueError:
    """``function: problem`` (the problem names the argument)."""
    return ArgumentValueError(f"{function}: {problem}")


def numbers(function: str, name: str, value: object, *, ndim: int, expected: str) -> np.ndarray:
    """``value`` as a float array of ``ndim`` dimensions (float16, float32 and float64 kept,
    other numbers as float64), all finite.

    Raises:
        ArgumentTypeError: not an array (or nested list) of integers or floats.
        ArgumentValueError: another number of dimensions, or a NaN or infinite value.
    """
    if value is None or isinstance(value, str | bytes | Mapping):
        raise wrong_type(function, name, expected, value)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError):  # a ragged list, an object that is no array
        raise wrong_type(function, name, expected, value) from None
    if array.dtype.kind not in "iuf" or array.ndim == 0:  # not numbers, or one number
        raise wrong_type(function, name, expected, value)
    if array.ndim != ndim:
        shape = "(n, dim)" if ndim == 2 else "(n,)"
        raise wrong_value(function, f"{name} must be an {shape} array, got shape {array.shape}")
    if array.dtype not in (np.float16, np.float32, np.float64):  # integers, long doubles
        array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise wrong_value(function, f"{name} has NaN or infinite values")
    return array


def vector_array(
    function: str,
    name: str,
    value: object,
    *,
    width: int | None = None,
    at_least: int = 1,
    expected: str = VECTORS,
) -> np.ndarray:
    """``value`` as an ``(n, dim)`` array of word vectors (:func:`numbers`), checked by
    :func:`check_rows`: at least ``at_least`` rows of ``width`` (None: any) columns."""
    array = numbers(function, name, value, ndim=2, expected=expected)
    check_rows(function, name, array, width=width, at_least=at_least)
    return array


def check_rows(
    function: str, name: str, rows: np.ndarray, *, width: int | None = None, at_least: int = 1
) -> None:
    """The rows of a set of word vectors (given, or looked up): at least ``at_least`` of them,
    ``width`` columns (None: any but 0), finite and none all zero (a norm of 0 in the rows'
    precision, as the WEAT engine's check).

    Raises:
        ArgumentValueError: naming ``function`` and the set ``name``.
    """
    n, dim = rows.shape
    if n < at_least:
        few = f"has {n} item(s); it needs at least {at_least}" if n else "is empty"
        raise wrong_value(function, f"{name} {few}")
    if dim == 0 or (width is not None and dim != width):
        others = f", others {width}" if width is not None else ""
        raise wrong_value(function, f"{name} has vectors of width {dim}{others}")
    if not np.all(np.isfinite(rows)):
        raise wrong_value(function, f"{name} has NaN or infinite values")
    with np.errstate(all="ignore"):  # a norm that underflows to 0 is a zero vector's
        if np.any(np.linalg.norm(rows, axis=1) == 0):
            raise wrong_value(function, f"{name} has an all-zero vector")


def vector_sets(function: str, sets: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Several arrays of word vectors of one width (``{"X": X, ...}``), each by
    :func:`vector_array`; the first one's width is the others'."""
    checked: dict[str, np.ndarray] = {}
    width: int | None = None
    for name, value in sets.items():
        checked[name] = vector_array(function, name, value, width=width)
        width = checked[name].shape[1]
    return checked


def is_words(value: object) -> bool:
    """Whether ``value`` is a non-empty list (sequence, or 1-D array) of strings."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.dtype.kind in "UO" and is_words(value.tolist())
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) > 0
        and all(isinstance(w, str) for w in value)
    )


def is_empty(value: object) -> bool:
    """Whether ``value`` is an empty list (sequence other than a string, or 1-D array)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 1 and value.size == 0
    return isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 0


def words(function: str, name: str, value: object) -> tuple[str, ...]:
    """``value`` as a tuple of words: a non-empty list (or tuple, 1-D array) of non-empty
    strings.

    Raises:
        ArgumentTypeError: not a list of strings (a string alone, None, numbers).
        ArgumentValueError: an empty list, or an empty word.
    """
    if not is_words(value):
        if is_empty(value):
            raise wrong_value(function, f"{name} is empty")
        raise wrong_type(function, name, WORDS, value)
    found = tuple(str(w) for w in value)  # type: ignore[union-attr]
    if not all(w.strip() for w in found):
        raise wrong_value(function, f"{name} has an empty word")
    return found


def instance(function: str, name: str, value: object, kind: type | tuple[type, ...],
             expected: str) -> Any:  # fmt: skip
    """``value`` when it is a ``kind``; :class:`ArgumentTypeError` naming it otherwise."""
    if not isinstance(value, kind):
        raise wrong_type(function, name, expected, value)
    return value


def whole_number(field: str, value: object) -> None:
    """:class:`~weatkit.errors.ConfigError` naming the option ``field`` when ``value`` is not an
    integer (a bool is not), before any comparison with it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ConfigError(f"must be a whole number, got {describe(value)}", field=field)


def real_number(field: str, value: object) -> None:
    """:class:`~weatkit.errors.ConfigError` naming the option ``field`` when ``value`` is not a
    real number (an integer or a float; a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ConfigError(f"must be a number, got {describe(value)}", field=field)
