"""SEAT (May et al., NAACL 2019): WEAT over the embeddings of sentences, and its file shape.

The Sentence Encoder Association Test puts the words of WEAT 1-10 (and of new tests: angry black
woman stereotype, Heilman double bind, religion) into semantically bleached templates ("This is
a flower.", "A rose is here.") and runs WEAT on one vector per sentence. In weatkit it is list
sets of ``weatkit run`` on a sentence encoder (docs/measures/seat.md), so the engine's d,
bootstrap CIs, permutation p and everything after them apply unchanged.

Files: ``bias-bench/data/seat/<test>.jsonl`` of McGill-NLP/bias-bench at the commit pinned in
the data registry (byte-identical copies of W4ngatang/sent-bias's ``tests/``;
``bias-bench/SOURCE.md``). Despite the suffix each file is ONE JSON object::

    {"targ1": {"category": "Flowers", "examples": ["This is a rose.", ...]},
     "targ2": {...}, "attr1": {...}, "attr2": {...}}

with X = ``targ1``, Y = ``targ2``, A = ``attr1``, B = ``attr2`` (WEATHub's files,
:mod:`weatkit.lists.weathub`, have the same shape). The list set ``seat`` holds every file as
one :class:`AssociationTest`: ``test`` = the file stem (``weat6``, ``sent-weat6b``,
``heilman_double_bind_competent_1+3-``), ``lang`` ``en``, ``list_id`` ``seat``, ``names`` = the
four categories. ``weat*`` tests hold words (they run on static vectors too), the others
sentences (on a static space they are out of vocabulary: skipped for low coverage). One test is
picked like in every list set, ``--lists seat --test sent-weat6b``.

A user file of this shape (``.json`` or ``.jsonl``) is a list file too
(:func:`weatkit.lists.files.parse_list_bytes`): one test named after the file stem.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath
from typing import Any

from weatkit import data
from weatkit._io.jsonfile import load_json
from weatkit._io.textfile import decode
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest, natural_key

#: The list set's name, and where its files are in the data directory.
LIST_SET = "seat"
ROOT = "bias-bench/data/seat/"
#: The upstream key of each set.
KEYS = {"X": "targ1", "Y": "targ2", "A": "attr1", "B": "attr2"}
_PART_KEYS = ("category", "examples")


def is_seat_document(document: Any) -> bool:
    """Whether a parsed JSON document is meant as a SEAT test: a mapping with a ``targ1``,
    ``targ2``, ``attr1`` or ``attr2`` key and no ``tests`` list (a weatkit list file)."""
    return (
        isinstance(document, dict)
        and "tests" not in document
        and any(key in document for key in KEYS.values())
    )


def seat_sets(document: Any, name: str) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """The four sets (keyed ``X``, ``Y``, ``A``, ``B``) and category names of a document of the
    SEAT shape (module docstring).

    Raises:
        WeatkitError: one line naming ``name`` and the key: not a mapping, a missing or unknown
            key, a category that is not a non-empty string, examples that are not a non-empty
            list of non-empty strings.
    """
    if not isinstance(document, dict):
        raise WeatkitError(
            f"{name}: expected a SEAT test, a mapping with targ1, targ2, attr1 and attr2, "
            f"got {type(document).__name__}"
        )
    for key in document:
        if key not in KEYS.values():
            raise WeatkitError(
                f"{name}: unknown key {str(key)!r} (a SEAT test has targ1, targ2, attr1, attr2)"
            )
    sets: dict[str, tuple[str, ...]] = {}
    names: list[str] = []
    for role, key in KEYS.items():
        if key not in document:
            raise WeatkitError(f"{name}: {key} is required (a SEAT test has targ1, targ2, attr1, "
                               "attr2)")  # fmt: skip
        part = document[key]
        if not isinstance(part, dict):
            raise WeatkitError(
                f"{name}: {key} must be a mapping with category and examples, got "
                f"{type(part).__name__}"
            )
        for inner in part:
            if inner not in _PART_KEYS:
                raise WeatkitError(
                    f"{name}: {key} has an unknown key {str(inner)!r} (allowed: category, examples)"
                )
        category = part.get("category")
        if not isinstance(category, str) or not category.strip():
            raise WeatkitError(f"{name}: {key}.category must be a non-empty string")
        examples = part.get("examples")
        if not isinstance(examples, list) or not examples:
            raise WeatkitError(f"{name}: {key}.examples must be a non-empty list of strings")
        for i, item in enumerate(examples, 1):
            if not isinstance(item, str) or not item.strip():
                raise WeatkitError(
                    f"{name}: {key}.examples[{i}] must be a non-empty string, got {item!r:.40}"
                )
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise WeatkitError(
                    f"{name}: {key}.examples[{i}] contains an invalid character (lone surrogate)"
                ) from None
        sets[role] = tuple(examples)
        names.append(category.strip())
    return sets, names


def seat_test(
    document: Any, name: str, *, test: str, list_set: str, list_id: str, lang: str = "en"
) -> AssociationTest:
    """One :class:`AssociationTest` from a document of the SEAT shape (:func:`seat_sets`)."""
    sets, names = seat_sets(document, name)
    return AssociationTest(
        test=test,
        lang=lang,
        list_set=list_set,
        list_id=list_id,
        names=tuple(names),  # type: ignore[arg-type]
        meta={"file": name},
        **sets,
    )


def files() -> list[str]:
    """The registered data paths of the SEAT tests, in natural order of their names."""
    paths = [p for p in data.registry() if p.startswith(ROOT) and p.endswith(".jsonl")]
    return sorted(paths, key=lambda p: natural_key(p[len(ROOT) :]))


def load_seat() -> tuple[list[AssociationTest], list[dict[str, str]], list[str]]:
    """The tests of the ``seat`` list set, their provenance and (no) source notes.

    Every file comes from :func:`weatkit.data.fetch` (``$WEATKIT_DATA`` or a checked download).
    The provenance is one record for the set: ``path`` = the folder read, ``sha256`` = SHA-256
    of the lines ``<relpath>\\t<sha256 of the file>\\n`` of every file, in load order.
    """

    tests: list[AssociationTest] = []
    digest = hashlib.sha256()
    paths = files()
    if not paths:
        raise WeatkitError(f"{LIST_SET}: no SEAT files in the data registry")
    folder = None
    for relpath in paths:
        path = data.fetch(relpath)
        folder = folder or path.parent
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise WeatkitError(f"{path}: cannot read ({err.strerror or err})") from None
        digest.update(f"{relpath}\t{hashlib.sha256(raw).hexdigest()}\n".encode())
        document = load_json(decode(raw, str(path)), str(path))
        stem = PurePosixPath(relpath).name.removesuffix(".jsonl")
        tests.append(seat_test(document, str(path), test=stem, list_set=LIST_SET, list_id="seat"))
    entry = data.registry_entry(paths[0])
    source = {
        "path": f"{folder} ({len(paths)} files)",
        "sha256": digest.hexdigest(),
        "list_set": LIST_SET,
        "licence": entry.licence,
        "citation": entry.citation,
    }
    return tests, [source], []
