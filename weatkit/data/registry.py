"""The data-set registry: every third-party file weatkit reads, pinned and checksummed.

The registry is the data file ``registry.json`` shipped in this package, read once. Its
``sources`` name each upstream repository with the commit pinned for it, the licence and the
citation; its ``files`` give, per file of the data-directory layout (``<source>/<path>``), the
SHA-256 and size of the exact bytes weatkit expects and where they come from upstream:

* ``upstream``: the path in the repository at the pinned commit, or null for a conversion made
  for the data directory (downloadable only from a mirror, ``$WEATKIT_DATA_URL``);
* ``transform``: how the upstream bytes become the file: absent for a byte-identical copy,
  ``"gzip"`` for a gzip of the upstream bytes (verified by ``content_sha256``, the SHA-256 of
  the uncompressed content, since gzip headers differ between compressors);
* ``upstream_sha256`` / ``upstream_size``: the checksum and size of the upstream bytes;
* ``licence`` / ``citation`` / ``commit``: per-file overrides of the source's (``commit`` for a
  file taken from another commit of the same repository, e.g. one deleted later);
* ``mirrored``: ``false`` for a file the shared data directory (the mirror tests and CI read)
  does not hold: it is only downloaded from ``upstream`` and checked against ``sha256``, whose
  value was computed from the upstream bytes (absent: ``true``).

``python -m weatkit.data.maintain`` regenerates the checksums from a local data directory.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from weatkit.data.paths import check_relpath
from weatkit.errors import DataError

REGISTRY_RESOURCE = "registry.json"
#: Transforms from upstream bytes to the file of the data directory.
TRANSFORMS: tuple[str, ...] = ("gzip",)


@dataclass(frozen=True)
class DataFile:
    """One registered third-party file.

    Attributes:
        relpath: path in the data-directory layout, e.g. ``"ca-weat/data/CA-WEATv1.tsv"``.
        sha256: hex digest of the exact bytes of the file in the data directory.
        size: size in bytes of that file.
        repo: the upstream GitHub repository (``owner/name``).
        commit: the pinned upstream commit (40 hex digits).
        upstream: path in ``repo`` at ``commit``, or None for a conversion.
        transform: None (a copy of the upstream bytes) or ``"gzip"``.
        upstream_sha256: hex digest of the upstream bytes (equals ``sha256`` for a copy).
        upstream_size: size of the upstream bytes (a download larger than this is aborted).
        content_sha256: for a ``.gz`` file, the digest of its uncompressed content, else None.
        licence: the licence as the upstream repository states it.
        citation: what to cite when using the file.
        mirrored: whether the shared data directory holds the file (False: downloaded from
            upstream only; :mod:`weatkit.data.maintain` keeps its recorded checksum).
    """

    relpath: str
    sha256: str
    size: int
    repo: str
    commit: str
    upstream: str | None
    transform: str | None
    upstream_sha256: str
    upstream_size: int
    content_sha256: str | None
    licence: str
    citation: str
    mirrored: bool = True

    @property
    def url(self) -> str | None:
        """Raw URL of the upstream file at the pinned commit, or None for a conversion."""
        if self.upstream is None:
            return None
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.upstream}"


def _entry(item: Mapping[str, Any], sources: Mapping[str, Any]) -> DataFile:
    relpath = check_relpath(item["path"])
    source = sources[item["source"]]
    transform = item.get("transform")
    if transform is not None and transform not in TRANSFORMS:
        raise DataError(f"{REGISTRY_RESOURCE}: {relpath}: unknown transform {transform!r}")
    if item.get("mirrored") is False and item.get("upstream") is None:
        raise DataError(f"{REGISTRY_RESOURCE}: {relpath}: a file not mirrored needs an upstream")
    return DataFile(
        relpath=relpath,
        sha256=item["sha256"],
        size=int(item["size"]),
        repo=source["repo"],
        commit=item.get("commit", source["commit"]),
        upstream=item.get("upstream"),
        transform=transform,
        upstream_sha256=item.get("upstream_sha256", item["sha256"]),
        upstream_size=int(item.get("upstream_size", item["size"])),
        content_sha256=item.get("content_sha256"),
        licence=item.get("licence", source["licence"]),
        citation=item.get("citation", source["citation"]),
        mirrored=bool(item.get("mirrored", True)),
    )


def parse_registry(obj: Mapping[str, Any]) -> dict[str, DataFile]:
    """The entries of a registry document (the JSON object of ``registry.json``)."""
    sources = obj["sources"]
    entries = [_entry(item, sources) for item in obj["files"]]
    return {entry.relpath: entry for entry in entries}


@functools.cache
def registry() -> Mapping[str, DataFile]:
    """Every registered file keyed by its data-directory path (read once from the package)."""
    text = resources.files(__package__).joinpath(REGISTRY_RESOURCE).read_text(encoding="utf-8")
    return MappingProxyType(parse_registry(json.loads(text)))


def registry_entry(relpath: str) -> DataFile:
    """The registry entry of ``relpath``; DataError naming the known sources when it has none."""
    entries = registry()
    try:
        return entries[check_relpath(relpath)]
    except KeyError:
        folders = sorted({key.split("/", 1)[0] for key in entries})
        raise DataError(
            f"unknown data file {relpath!r}: not in the weatkit data registry (which has files "
            f"of {', '.join(folders)})"
        ) from None


def is_registered(relpath: str) -> bool:
    """Whether ``relpath`` has a registry entry."""
    return check_relpath(relpath) in registry()
