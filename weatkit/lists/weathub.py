"""The WEATHub list set (Mukherjee et al., EMNLP 2023): 24 languages plus English.

Files: ``weathub/data/<folder>/weat<N>.json`` of github.com/iamshnoo/weathub at the commit pinned
in the data registry (``weathub/SOURCE.md``), each ``{"targ1": {"category": str, "examples":
[str, ...]}, "targ2": ..., "attr1": ..., "attr2": ...}`` with X = ``targ1``, Y = ``targ2``,
A = ``attr1``, B = ``attr2``. The folder names the language and the source of the lists:

- ``<l>_human`` / ``<l>_gt`` / ``<l>_all`` (24 languages): WEAT 1, 2, 6, 7, 8, 9 as annotator-
  corrected human translation, Google-Translate output, or all words the annotators supplied
  (longer, unequal lists with many duplicates). The variant of ``weathub:<variant>`` picks one
  of these; ``weathub`` is ``weathub:human`` (the lists native speakers checked, the paper's HT).
- ``<l>_new`` (24 languages + en): the culture-specific WEAT 11-15 and the valence controls
  12b/13b, written by native speakers; ``<l>_india`` (bn hi mr pa te ur + en): WEAT 16-26;
  ``en``: the English originals WEAT 1-10. These exist in one version and are in every variant.

Each file is one :class:`AssociationTest`: ``test`` = the file stem (``weat12b``), ``lang`` = the
folder's language code (``ckb``, ``ku``, ``tl`` ...), ``list_id`` = the folder (``de_human``,
``hi_india``, ``en``), ``names`` = the upstream category names.

Upstream defects are reported, not absorbed: the literal item ``"nan"`` (a pandas NaN written as
text, 10 occurrences in el_new, mr_gt, vi_gt) is dropped with a warning here (the files are read
with :mod:`json`, so it stays the string ``"nan"``); duplicated items and items in both opposing
sets are reported by :mod:`weatkit.lists.normalize` like in every list set, which also skips the
tests whose two target sets are identical (WEAT 17 and 18 of ``en_india`` and ``bn_india``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath

from weatkit import data
from weatkit._io.textfile import decode
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest, natural_key
from weatkit.lists.seat import seat_sets

#: Source variants of WEAT 1, 2, 6-9; the first is the default of ``weathub``.
VARIANTS = ("human", "gt", "all")
DEFAULT_VARIANT = "human"
#: Folder suffixes that are in every variant (one version only upstream).
SHARED_SUFFIXES = ("new", "india")
#: Items that are upstream placeholders, not words: pandas' NaN written as text.
PLACEHOLDERS = frozenset({"nan"})

_ROOT = "weathub/data/"


def list_set_name(variant: str) -> str:
    """``weathub:<variant>``."""
    return f"weathub:{variant}"


def check_variant(spec: str) -> str:
    """The variant of a ``weathub[:variant]`` spec; one-line WeatkitError for an unknown one."""
    _, _, variant = spec.strip().lower().partition(":")
    variant = variant or DEFAULT_VARIANT
    if variant not in VARIANTS:
        choices = ", ".join(list_set_name(v) for v in VARIANTS)
        raise WeatkitError(f"unknown WEATHub variant {variant!r} in {spec!r}: use one of {choices}")
    return variant


def _folder_in(folder: str, variant: str) -> bool:
    suffix = folder.partition("_")[2]
    return folder == "en" or suffix == variant or suffix in SHARED_SUFFIXES


def files(variant: str) -> list[str]:
    """The registered data paths of ``variant``, ordered by folder and test number."""
    paths = []
    for relpath in data.registry():
        if not relpath.startswith(_ROOT) or not relpath.endswith(".json"):
            continue
        folder = PurePosixPath(relpath).parent.name
        if _folder_in(folder, variant):
            paths.append(relpath)
    return sorted(paths, key=lambda p: natural_key(p[len(_ROOT) :]))


def parse_weathub_json(
    text: str, name: str, *, folder: str, list_set: str
) -> tuple[AssociationTest, list[str]]:
    """One test from a WEATHub JSON file, and a warning per placeholder item dropped.

    Raises:
        WeatkitError: not JSON, or not of the SEAT shape (:func:`weatkit.lists.seat.seat_sets`).
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise WeatkitError(f"{name}: line {err.lineno}: invalid JSON ({err.msg})") from None
    test_id = PurePosixPath(name).stem.lower()
    lang = folder.partition("_")[0]
    sets, names = seat_sets(document, name)
    notes: list[str] = []
    for (key, items), category in zip(sets.items(), names, strict=True):
        for item in items:
            if item in PLACEHOLDERS:
                notes.append(
                    f"warning: {list_set} {folder} {test_id} {key} ({category}): item {item!r} "
                    "dropped (an upstream placeholder: pandas NaN written as text)"
                )
        sets[key] = tuple(x for x in items if x not in PLACEHOLDERS)
    test = AssociationTest(
        test=test_id,
        lang=lang,
        list_set=list_set,
        list_id=folder,
        **sets,
        names=tuple(names),  # type: ignore[arg-type]
        meta={"folder": folder, "file": name},
    )
    return test, notes


def load_weathub(
    variant: str,
) -> tuple[list[AssociationTest], list[dict[str, str]], list[str]]:
    """The tests of ``weathub:<variant>``, their provenance and the placeholder warnings.

    Every file comes from :func:`weatkit.data.fetch` (``$WEATKIT_DATA`` or a checked download).
    The provenance is one record for the whole set: ``path`` = the folder read, ``sha256`` =
    SHA-256 of the lines ``<relpath>\\t<sha256 of the file>\\n`` of every file, in load order.
    """
    list_set = list_set_name(variant)
    tests: list[AssociationTest] = []
    notes: list[str] = []
    digest = hashlib.sha256()
    folder_path: Path | None = None
    paths = files(variant)
    if not paths:
        raise WeatkitError(f"{list_set}: no WEATHub files in the data registry")
    for relpath in paths:
        path = data.fetch(relpath)
        folder_path = folder_path or path.parent.parent
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise WeatkitError(f"{path}: cannot read ({err.strerror or err})") from None
        digest.update(f"{relpath}\t{hashlib.sha256(raw).hexdigest()}\n".encode())
        folder = PurePosixPath(relpath).parent.name
        test, found = parse_weathub_json(
            decode(raw, str(path)), str(path), folder=folder, list_set=list_set
        )
        tests.append(test)
        notes += found
    entry = data.registry_entry(paths[0])
    source = {
        "path": f"{folder_path} ({len(paths)} files)",
        "sha256": digest.hexdigest(),
        "list_set": list_set,
        "licence": entry.licence,
        "citation": entry.citation,
    }
    return tests, [source], notes


__all__ = [
    "DEFAULT_VARIANT",
    "PLACEHOLDERS",
    "VARIANTS",
    "check_variant",
    "files",
    "list_set_name",
    "load_weathub",
    "parse_weathub_json",
]
