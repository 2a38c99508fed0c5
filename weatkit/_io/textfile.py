"""Reading small UTF-8 text inputs (list files, word lists, dictionaries) with one-line errors."""

from __future__ import annotations

import os
from pathlib import Path

from weatkit.errors import WeatkitError


def decode(data: bytes, name: str) -> str:
    """UTF-8 text of a file (a leading BOM is dropped); WeatkitError naming the file otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise WeatkitError(
            f"{name}: not valid UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start}); "
            "save the file as UTF-8"
        ) from None


def read_text_file(path: str | os.PathLike[str], what: str) -> str:
    """The text of ``path``; WeatkitError saying which ``what`` (e.g. "dictionary") is missing,
    unreadable or not UTF-8."""
    p = Path(path).expanduser()
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise WeatkitError(f"{what} not found: {p}") from None
    except OSError as err:
        raise WeatkitError(f"cannot read {what} {p}: {err.strerror or err}") from None
    return decode(data, str(p))
