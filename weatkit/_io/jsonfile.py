"""JSON documents read strictly: a duplicate key is an error, as is anything ``json`` rejects;
each a one-line :class:`~weatkit.errors.WeatkitError` naming the file."""

from __future__ import annotations

import json
from typing import Any

from weatkit.errors import WeatkitError


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


class _DuplicateKey(ValueError):
    pass


def load_json(text: str, name: str) -> Any:
    """The JSON document ``text``; WeatkitError naming ``name`` (and line, column or duplicate
    key) when it is not valid JSON."""
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except _DuplicateKey as err:
        raise WeatkitError(f"{name}: duplicate key {err.args[0]!r} in a JSON object") from None
    except json.JSONDecodeError as err:
        raise WeatkitError(
            f"{name}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}"
        ) from None
    except (ValueError, RecursionError) as err:  # e.g. huge integers, absurd nesting
        raise WeatkitError(f"{name}: invalid JSON: {type(err).__name__}") from None
