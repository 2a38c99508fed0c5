"""Reading small UTF-8 text inputs (list files, word lists, dictionaries, ``.gz`` data files) with
one-line errors."""

from __future__ import annotations

import gzip
import os
import zlib
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


def read_bytes(path: str | os.PathLike[str], what: str) -> bytes:
    """The bytes of ``path``; WeatkitError saying which ``what`` is missing, a directory or
    unreadable."""
    p = Path(path).expanduser()
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise WeatkitError(f"{what} not found: {p}") from None
    except IsADirectoryError:
        raise WeatkitError(f"{what} {p} is a directory, not a file") from None
    except ValueError:  # a null byte in the path
        raise WeatkitError(f"{what} {str(path)!r} is not a valid path") from None
    except OSError as err:
        raise WeatkitError(f"cannot read {what} {p}: {err.strerror or err}") from None


def read_text_file(path: str | os.PathLike[str], what: str) -> str:
    """The text of ``path``; WeatkitError saying which ``what`` (e.g. "dictionary") is missing,
    unreadable or not UTF-8."""
    p = Path(path).expanduser()
    return decode(read_bytes(p, what), str(p))


def read_text_or_gzip(path: str | os.PathLike[str], what: str) -> str:
    """UTF-8 text of a file, gunzipped when its name ends in ``.gz``; WeatkitError saying which
    ``what`` is missing, unreadable, not gzip or not UTF-8."""
    p = Path(path).expanduser()
    raw = read_bytes(p, what)
    if p.suffix.lower() != ".gz":
        return decode(raw, str(p))
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as err:
        raise WeatkitError(f"{p}: not a valid gzip file ({err})") from None
    return decode(data, str(p))
