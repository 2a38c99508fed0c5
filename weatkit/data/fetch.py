"""Checked access to registered third-party files: local copy, cache, or download.

:func:`fetch` resolves a path of the data-directory layout in this order:

1. ``$WEATKIT_DATA/<relpath>`` when that file exists (a local copy; trusted, only warned about
   when its SHA-256 differs from the registry);
2. else ``<cache>/data/<relpath>`` when it was downloaded before and still verifies;
3. else it is downloaded from ``$WEATKIT_DATA_URL/<relpath>`` (a mirror with the data-directory
   layout; checked against the file's SHA-256) or, without a mirror, from the upstream
   repository at the pinned commit (checked against the upstream SHA-256, then transformed, e.g.
   gzip'ed, and the result's content checked again), and only then moved into the cache.

A cached file verifies when its SHA-256 is the registered one or, for a ``.gz`` file, when the
SHA-256 of its uncompressed content is the registered ``content_sha256``.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from weatkit._io.atomic import remove_stale, temp_file
from weatkit.data.paths import (
    ENV_DATA,
    ENV_DATA_URL,
    cache_dir,
    check_relpath,
    data_dir,
    ensure_cache_dir,
)
from weatkit.data.registry import DataFile, is_registered, registry_entry
from weatkit.errors import DataError

#: Seconds to wait for the server on connect and on each read.
DOWNLOAD_TIMEOUT = 30.0
_CHUNK = 1 << 16


class DataChecksumWarning(UserWarning):
    """A file in ``$WEATKIT_DATA`` differs from the registered version (it is used anyway)."""


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def gunzip_sha256(path: str | os.PathLike[str]) -> str | None:
    """Hex SHA-256 of a gzip file's uncompressed content; None when it is not valid gzip."""
    digest = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
    except (OSError, EOFError, zlib.error):
        return None
    return digest.hexdigest()


def verifies(path: Path, entry: DataFile) -> bool:
    """Whether ``path`` holds the registered file (its bytes, or for ``.gz`` its content)."""
    if sha256_file(path) == entry.sha256:
        return True
    return entry.content_sha256 is not None and gunzip_sha256(path) == entry.content_sha256


def local_path(relpath: str) -> Path | None:
    """``$WEATKIT_DATA/relpath`` when it exists as a file, else None."""
    root = data_dir()
    if root is None:
        return None
    candidate = root / check_relpath(relpath)
    return candidate if candidate.is_file() else None


def source_url(relpath: str) -> str:
    """Where :func:`fetch` downloads ``relpath``: the mirror when set, else the upstream URL."""
    entry = registry_entry(relpath)
    mirror = _mirror()
    if mirror:
        return mirror.rstrip("/") + "/" + urllib.parse.quote(entry.relpath)
    if entry.url is None:
        raise DataError(
            f"{entry.relpath} is a conversion made for the weatkit data directory and has no "
            f"upstream download; set {ENV_DATA} to a data directory that has it or {ENV_DATA_URL} "
            "to a mirror"
        )
    return entry.url


def _mirror() -> str:
    return os.environ.get(ENV_DATA_URL, "").strip()


_verified_local: dict[tuple[str, int, int], bool] = {}


def _warn_if_modified(path: Path, entry: DataFile) -> None:
    """Warn (once per file version) when a local data file differs from the registered one."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _verified_local:
        _verified_local[key] = verifies(path, entry)
        if not _verified_local[key]:
            warnings.warn(
                f"{path} differs from the registered {entry.relpath} (expected SHA-256 "
                f"{entry.sha256}); using it anyway",
                DataChecksumWarning,
                stacklevel=3,
            )


def fetch(relpath: str, *, quiet: bool = False) -> Path:
    """The path of a data file, downloading (and verifying) it into the cache on first use.

    Args:
        relpath: path in the data-directory layout, e.g. ``"ca-weat/data/CA-WEATv1.tsv"``.
        quiet: do not print the source, licence and citation after a download.

    Raises:
        DataError: unknown file, no download source, unreachable server, checksum mismatch.
    """
    relpath = check_relpath(relpath)
    local = local_path(relpath)
    if local is not None:
        if is_registered(relpath):
            _warn_if_modified(local, registry_entry(relpath))
        return local

    entry = registry_entry(relpath)
    cached = cache_dir("data") / entry.relpath
    if cached.is_file():
        if verifies(cached, entry):
            return cached
        cached.unlink()  # stale or damaged: download again

    url = source_url(relpath)
    _download(url, cached, entry, upstream=not _mirror())
    if not quiet:
        print(
            f"weatkit: downloaded {entry.relpath} from {url}\n"
            f"  licence: {entry.licence}\n  cite: {entry.citation}",
            file=sys.stderr,
        )
    return cached


def _mismatch(entry: DataFile, url: str, expected: str, detail: str) -> DataError:
    return DataError(
        f"checksum mismatch for {entry.relpath} downloaded from {url}: expected SHA-256 "
        f"{expected}, {detail}; nothing was cached"
    )


def _download(url: str, target: Path, entry: DataFile, *, upstream: bool) -> None:
    """Download ``url`` to ``target`` via a temp file beside it (one file system, whatever is
    mounted in the cache); verify (and, for an upstream download, transform and verify again)
    before renaming into place."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise DataError(f"cannot download {url}: only http, https and file URLs are supported")
    expected, limit = (entry.upstream_sha256, entry.upstream_size) if upstream else (
        entry.sha256,
        entry.size,
    )
    try:
        root = ensure_cache_dir("data")
        made = [d for d in target.relative_to(root).parents if not (root / d).exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(target.parent, "download", ".part")  # downloads of killed processes
        fd, tmp_name = temp_file(target.parent, "download", suffix=".part")
    except OSError as err:
        where = cache_dir("data")
        raise DataError(f"cannot write to the weatkit cache {where}: {err.strerror}") from None
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            _copy_url(url, out, digest, entry, expected, limit)
        actual = digest.hexdigest()
        if actual != expected:
            raise _mismatch(entry, url, expected, f"got {actual}")
        if upstream and entry.transform == "gzip":
            _gzip_in_place(tmp)
            if not verifies(tmp, entry):
                raise _mismatch(entry, url, entry.sha256, "the gzip'ed content differs")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        for folder in made:  # deepest first: nothing is left of a failed download
            with contextlib.suppress(OSError):
                (root / folder).rmdir()
        raise


def _gzip_in_place(path: Path) -> None:
    """Replace ``path``'s bytes by their gzip (no name, no time stamp: reproducible)."""
    data = path.read_bytes()
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


def _copy_url(
    url: str, out: BinaryIO, digest: Any, entry: DataFile, expected: str, limit: int
) -> None:
    """Stream ``url`` into ``out`` and ``digest``; every failure is a one-line DataError."""
    hint = f"check the connection or set {ENV_DATA} to a local data directory"
    request = urllib.request.Request(url, headers={"User-Agent": "weatkit"})
    written = 0
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                written += len(chunk)
                if written > limit:
                    raise _mismatch(
                        entry, url, expected, f"got more than the expected {limit} bytes"
                    )
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as err:
        raise DataError(f"cannot download {url}: HTTP {err.code} {err.reason}; {hint}") from None
    except urllib.error.URLError as err:
        raise DataError(f"cannot download {url}: {err.reason}; {hint}") from None
    except (OSError, http.client.HTTPException) as err:  # timeouts, resets, truncated replies
        reason = str(err) or type(err).__name__
        raise DataError(f"cannot download {url}: {reason}; {hint}") from None
