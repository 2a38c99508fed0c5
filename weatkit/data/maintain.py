"""Maintainer tool: regenerate the registry's checksums from a local data directory.

Procedure (after the data directory changed, e.g. a source was re-pinned to a new commit)::

    python -m weatkit.data.maintain /path/to/shared/data            # rewrite registry.json
    python -m weatkit.data.maintain /path/to/shared/data --check    # exit 1 if out of date
    python -m weatkit.data.maintain /path/to/shared/data --add mbe 'translated_data/*.json'

For every registered file it recomputes ``sha256`` and ``size`` from ``<data>/<path>`` (a file
marked ``"mirrored": false`` that the directory lacks keeps its recorded ones); for a
``.gz`` file also ``content_sha256`` (of the uncompressed bytes); for a ``"gzip"`` transform the
upstream bytes are that content, so ``upstream_sha256`` / ``upstream_size`` follow. It checks
each source's pinned commit against the ``Commit:`` line of ``<data>/<source>/SOURCE.md``.
``--add SOURCE GLOB`` registers the files of ``<data>/<source>/MANIFEST.tsv`` whose local path
matches GLOB: ``copy`` rows become downloads of the upstream path, ``gzip`` rows gzip
transforms, and every other transform a conversion (no upstream download; mirror only).
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from weatkit.data.fetch import sha256_file
from weatkit.data.registry import REGISTRY_RESOURCE, parse_registry

REGISTRY_FILE = Path(__file__).with_name(REGISTRY_RESOURCE)
_COMMIT = re.compile(r"^- Commit[^`]*`([0-9a-f]{40})`", re.MULTILINE)


def pinned_commit(data: Path, source: str) -> str | None:
    """The commit named on the ``- Commit: `...``` line of ``<data>/<source>/SOURCE.md``."""
    path = data / source / "SOURCE.md"
    if not path.is_file():
        return None
    match = _COMMIT.search(path.read_text(encoding="utf-8"))
    return match.group(1) if match else None


def _checksums(path: Path, transform: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    if path.name.endswith(".gz"):
        content = gzip.decompress(path.read_bytes())
        out["content_sha256"] = hashlib.sha256(content).hexdigest()
        if transform == "gzip":
            out["upstream_sha256"] = out["content_sha256"]
            out["upstream_size"] = len(content)
    return out


def refresh(document: dict[str, Any], data: Path) -> list[str]:
    """Recompute every file's checksums in ``document`` from ``data``; the changes, described.

    Raises:
        FileNotFoundError: a registered file is missing from ``data``.
    """
    changes = []
    for name, source in document["sources"].items():
        commit = pinned_commit(data, name)
        if commit is not None and commit != source["commit"]:
            changes.append(f"{name}: commit {source['commit']} -> {commit}")
            source["commit"] = commit
    for item in document["files"]:
        path = data / item["path"]
        if item.get("mirrored") is False and not path.is_file():
            continue  # downloaded from upstream only: its recorded checksum stands
        if not path.is_file():
            raise FileNotFoundError(f"{path}: registered in {REGISTRY_RESOURCE} but missing")
        for key, value in _checksums(path, item.get("transform")).items():
            if item.get(key) != value:
                changes.append(f"{item['path']}: {key} {item.get(key)} -> {value}")
                item[key] = value
    parse_registry(document)  # still a valid registry
    return changes


def add_from_manifest(document: dict[str, Any], data: Path, source: str, pattern: str) -> list[str]:
    """Register the files of ``<data>/<source>/MANIFEST.tsv`` whose local path matches
    ``pattern`` (checksums are filled in by :func:`refresh`); the paths added."""
    if source not in document["sources"]:
        raise KeyError(f"unknown source {source!r}: add it to 'sources' first")
    known = {item["path"] for item in document["files"]}
    lines = (data / source / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")  # named columns: older manifests have fewer of them
    added = []
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t"), strict=True))
        local, upstream, transform = row["local_path"], row["upstream_path"], row["transform"]
        relpath = f"{source}/{local}"
        if not fnmatch.fnmatch(local, pattern) or relpath in known:
            continue
        item: dict[str, Any] = {"path": relpath, "source": source}
        if transform == "copy":
            item["upstream"] = upstream
        elif transform == "gzip":
            item["upstream"] = upstream
            item["transform"] = "gzip"
        else:
            item["upstream"] = None
        document["files"].append(item)
        added.append(relpath)
    return added


def dump(document: dict[str, Any]) -> str:
    """The registry as written to ``registry.json`` (files sorted by path)."""
    document["files"].sort(key=lambda item: item["path"])
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weatkit.data.maintain", description=__doc__)
    parser.add_argument("data", type=Path, help="the local data directory")
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if stale")
    parser.add_argument("--add", nargs=2, metavar=("SOURCE", "GLOB"), action="append")
    parser.add_argument("--registry", type=Path, default=REGISTRY_FILE)
    args = parser.parse_args(argv)
    document = json.loads(args.registry.read_text(encoding="utf-8"))
    changes = []
    for source, pattern in args.add or []:
        changes += [f"added {p}" for p in add_from_manifest(document, args.data, source, pattern)]
    changes += refresh(document, args.data)
    for change in changes:
        print(change)
    if args.check:
        return 1 if changes else 0
    args.registry.write_text(dump(document), encoding="utf-8")
    print(f"{args.registry}: {len(document['files'])} files, {len(changes)} changes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
