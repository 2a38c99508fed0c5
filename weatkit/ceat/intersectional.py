"""IBD and EIBD, the intersectional bias detection of Guo & Caliskan (AIES 2021): from the
supplementary material (``doc/supp.pdf`` of https://github.com/weiguowilliam/CEAT) §8.2, "Formal
Definition of EIBD", and §9.5, and the reference code ``code/ibd.py`` of that repository.

Intersectional groups C_1 … C_K (e.g. African American females AF, …, European American males
EM) are each one value of every category (race, gender) and a set of target words (given
names). A candidate attribute w's association with group G against group H is the SC-WEAT
(WEFAT) effect size of :mod:`weatkit.association.sc_weat`, ``get_effectsize`` in ``ibd.py``
(sd with ddof = 1 over the cosines with all names of G and H)::

    s(w, G, H) = (mean_{g∈G} cos(w, g) − mean_{h∈H} cos(w, h)) / sd_{x∈G∪H} cos(w, x)

**IBD** (``inner_ibd`` in ``ibd.py``): with C = C_1 the group studied, w is detected as an
intersectional bias of C when its association with C beats the threshold t against at least one
other intersectional group::

    W_IB = ∪_{j≠1} W_j,   W_j = {w | s(w, C, C_j) > t},   i.e.
    w ∈ W_IB  ⟺  max_{j≠1} s(w, C, C_j) > t

**EIBD** (supplementary §8.2; ``inner_eibd``): the constituent groups are the single values of
each category (S_race=African American, S_gender=female …), each the names of all the
intersectional groups that have that value. With P the pairs (C's value, another value) of every
category (African American/European American, African American/Mexican American, female/male),
the emergent biases are those of W_IB not associated with *all* of C's constituents::

    W_EIB = ∪_{p∈P} (W_IB − W_p),   W_p = {w ∈ W_IB | s(w, S_p,C, S_p,other) > t}
          i.e.   w ∈ W_EIB ⟺ w ∈ W_IB and min_{p∈P} s(w, S_p,C, S_p,other) ≤ t

with the same t for W_IB and the W_p, as the paper ("the same positive threshold t_mn used in
IBD") and ``ibd.py`` (``t_u = t_m``) take it.

**Evaluation** (§9.5 and ``ibd.py``): the candidates are every attribute of the lists (the
paper's 98: all the stereotype lists of Ghavami & Peplau 2013 and random insect names); the
truth is the known intersectional stereotypes of C (IBD) or its known emergent ones (EIBD); with
TP, FP, TN, FN counted over the n candidates,

    accuracy = (TP + TN) / n,   TPR = TP / (TP + FN),   FPR = FP / (FP + TN),
    chance   = (TP + FN) / n    (the paper's "random chance of correct classification":
                                 14 / 98 = 14.3 % for AF's intersectional stereotypes)

**The threshold**: ``ibd.py`` sweeps t over −2, −1.95, …, 1.95 (IBD and EIBD separately), draws
the ROC curve and marks one point by hand (AF's IBD: TPR 5/14, FPR 9/84, accuracy 80/98 =
81.6 %), but neither the code nor the supplementary text says by what rule the point was
chosen. weatkit takes ``threshold`` when given; otherwise it
evaluates every distinct operating point (t at each score the rule compares, and −∞: the grid's
points are among them) and chooses the one with the largest TPR − FPR (Youden's J), the largest
t among ties: **weatkit's rule, not one the reference documents**.

Where weatkit differs from ``ibd.py`` otherwise: the scores are computed here from the vectors
(``ibd.py`` reads them from ``race_all_words_6.csv``, which is not in the repository, so how its
constituent groups' names were formed is not known: here they are the intersectional groups'
names together); its Mexican American females' IBD compares with LF/EF, LF/LM, LF/EM, LF/AF and
again LF/EM (a column read twice, none for LF/AM), here every other group once; any number of
categories and values, not three races and two genders.

The vectors are one per word (the paper detects in static GloVe embeddings; CEAT then measures
the detected words in contextual ones). All cosines are one matrix product
(:func:`weatkit.association._common.cosines`), all thresholds one boolean array.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from weatkit.association._common import Inputs, cosines
from weatkit.association.sc_weat import word_effects
from weatkit.errors import DataError, WeatkitError

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors

#: The file suffixes of a lists file.
SUFFIXES = (".json", ".yaml", ".yml")


@dataclass(frozen=True)
class Group:
    """An intersectional group: its value of every category and its target words."""

    name: str
    categories: tuple[tuple[str, str], ...]
    words: tuple[str, ...]


@dataclass(frozen=True)
class IntersectionalLists:
    """The groups and the known stereotypes of a lists file (:func:`read_lists`).

    Attributes:
        source: the file (or ``lists``), for messages.
        groups: the intersectional groups, in the file's order.
        intersectional: group -> its known intersectional stereotypes (IBD's truth).
        emergent: group -> its known emergent ones (EIBD's truth).
        attributes: every candidate attribute, in the order of first appearance.
    """

    source: str
    groups: tuple[Group, ...]
    intersectional: Mapping[str, tuple[str, ...]]
    emergent: Mapping[str, tuple[str, ...]]
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class IntersectionalResult:
    """What IBD or EIBD detected for one group, scipy-style (module docstring).

    Attributes:
        method: ``ibd`` or ``eibd``; group: the group studied.
        detected: the attributes detected, in the order of ``attributes``.
        threshold: t; chosen: True when t was chosen on the ROC (max TPR − FPR), False when
            given.
        accuracy, tpr, fpr: of the detection against ``known``; chance: the share of known
            attributes among the candidates.
        true_positives, false_positives, true_negatives, false_negatives: the counts.
        attributes: the candidates; known: which are known (the truth), ``(n,)``.
        pairs: ``C/C_j`` for every other group; effect_sizes: s(w, C, C_j), ``(n, len(pairs))``.
        constituent_pairs: ``S/S'`` of EIBD's constituents (empty for IBD);
            constituent_effect_sizes: their s(w, S, S'), ``(n, len(constituent_pairs))``.
        roc_thresholds, roc_tpr, roc_fpr: every distinct operating point, t ascending.
    """

    method: str
    group: str
    detected: tuple[str, ...]
    threshold: float
    chosen: bool
    accuracy: float
    chance: float
    tpr: float
    fpr: float
    true_positives: int
    false_positives: int
    true_negatives: int
    false_negatives: int
    attributes: tuple[str, ...]
    known: np.ndarray = field(repr=False)
    pairs: tuple[str, ...]
    effect_sizes: np.ndarray = field(repr=False)
    constituent_pairs: tuple[str, ...]
    constituent_effect_sizes: np.ndarray = field(repr=False)
    roc_thresholds: np.ndarray = field(repr=False)
    roc_tpr: np.ndarray = field(repr=False)
    roc_fpr: np.ndarray = field(repr=False)


def ibd(
    lists: IntersectionalLists | Mapping[str, Any] | str | os.PathLike[str],
    group: str,
    *,
    vectors: WordVectors,
    threshold: float | None = None,
) -> IntersectionalResult:
    """IBD: the attributes associated with intersectional ``group`` against any other group
    (Guo & Caliskan 2021; module docstring).

    Args:
        lists: a lists file (``.json``, ``.yaml``; :func:`read_lists`), its mapping, or read.
        group: the group studied (a key of ``groups``).
        vectors: the word vectors of the names and attributes.
        threshold: t; None: the operating point of largest TPR − FPR.

    Example:
        >>> import numpy as np
        >>> from weatkit.embeddings.vectors import WordVectors
        >>> words = ["ann", "bo", "cy", "dee", "loud", "tall", "ant", "bee"]
        >>> rng = np.random.default_rng(0)
        >>> v = WordVectors("toy", words, rng.normal(size=(8, 6)))
        >>> lists = {"groups": {"AF": {"race": "A", "gender": "f", "words": ["ann"]},
        ...                     "AM": {"race": "A", "gender": "m", "words": ["bo"]},
        ...                     "EF": {"race": "E", "gender": "f", "words": ["cy"]},
        ...                     "EM": {"race": "E", "gender": "m", "words": ["dee"]}},
        ...          "stereotypes": {"AF": {"intersectional": ["loud"]},
        ...                          "EM": {"intersectional": ["tall"]}, "random": ["ant", "bee"]}}
        >>> r = ibd(lists, "AF", vectors=v)
        >>> r.attributes, round(r.chance, 2)
        (('loud', 'tall', 'ant', 'bee'), 0.25)
    """
    return _detect("ibd", lists, group, vectors, threshold)


def eibd(
    lists: IntersectionalLists | Mapping[str, Any] | str | os.PathLike[str],
    group: str,
    *,
    vectors: WordVectors,
    threshold: float | None = None,
) -> IntersectionalResult:
    """EIBD: the attributes IBD detects for ``group`` that are not associated with all of its
    constituent groups: its emergent intersectional biases (Guo & Caliskan 2021, supplementary
    §8.2; module docstring). Arguments as :func:`ibd`; the truth is the group's ``emergent``
    list.

    Example:
        >>> import numpy as np
        >>> from weatkit.embeddings.vectors import WordVectors
        >>> words = ["ann", "bo", "cy", "dee", "bigbutt", "loud", "tall", "ant"]
        >>> v = WordVectors("toy", words, np.random.default_rng(0).normal(size=(8, 6)))
        >>> lists = {"groups": {"AF": {"race": "A", "gender": "f", "words": ["ann"]},
        ...                     "AM": {"race": "A", "gender": "m", "words": ["bo"]},
        ...                     "EF": {"race": "E", "gender": "f", "words": ["cy"]},
        ...                     "EM": {"race": "E", "gender": "m", "words": ["dee"]}},
        ...          "stereotypes": {"AF": {"intersectional": ["bigbutt", "loud"],
        ...                                 "emergent": ["bigbutt"]}, "other": ["tall", "ant"]}}
        >>> eibd(lists, "AF", vectors=v).constituent_pairs
        ('race A/E', 'gender f/m')
    """
    return _detect("eibd", lists, group, vectors, threshold)


def _detect(
    method: str,
    lists: IntersectionalLists | Mapping[str, Any] | str | os.PathLike[str],
    group: str,
    vectors: WordVectors,
    threshold: float | None,
) -> IntersectionalResult:
    spec = lists if isinstance(lists, IntersectionalLists) else read_lists(lists)
    by_name = {g.name: g for g in spec.groups}
    if group not in by_name:
        raise WeatkitError(
            f"{method}: no group {group!r} in {spec.source} (groups: {', '.join(by_name)})"
        )
    truth = (spec.intersectional if method == "ibd" else spec.emergent).get(group)
    kind = "intersectional" if method == "ibd" else "emergent"
    if not truth:
        raise WeatkitError(
            f"{method}: {spec.source}: stereotypes.{group} has no {kind} list: {method} needs "
            f"the known {kind} stereotypes of {group}"
        )
    if len(truth) == len(spec.attributes):
        raise WeatkitError(
            f"{method}: {spec.source}: every attribute is a known {kind} stereotype of {group}: "
            "add candidates that are not"
        )
    real = isinstance(threshold, numbers.Real) and not isinstance(threshold, bool)
    if threshold is not None and not (real and np.isfinite(threshold)):
        raise WeatkitError(f"{method}: threshold must be a finite number, got {threshold!r}")
    inputs = Inputs(method, vectors, normalize=False)
    attributes = inputs.one("attributes", spec.attributes)
    columns = {g.name: inputs.one(f"groups.{g.name}.words", g.words) for g in spec.groups}
    sim = cosines(attributes.rows, np.concatenate([c.rows for c in columns.values()]))
    offsets = np.cumsum([0, *(len(c) for c in columns.values())])
    at = {name: np.arange(offsets[i], offsets[i + 1]) for i, name in enumerate(columns)}

    def effect(first: Sequence[str], second: Sequence[str], label: str) -> np.ndarray:
        a = np.concatenate([at[g] for g in first])
        b = np.concatenate([at[g] for g in second])
        es = word_effects(
            sim[:, np.concatenate([a, b])],
            len(a),
            np.ones((1, len(a))),
            np.ones((1, len(b))),
            ddof=1,
        )[1][:, 0]
        if np.isnan(es).any():
            word = spec.attributes[int(np.flatnonzero(np.isnan(es))[0])]
            raise DataError(
                f"{method}: attribute {word!r} has the same cosine with every name "
                f"of {label}: its effect size is undefined"
            )
        return es

    others = [g for g in by_name if g != group]
    pairs = tuple(f"{group}/{g}" for g in others)
    effect_sizes = np.stack([effect([group], [g], f"{group}/{g}") for g in others], axis=1)
    constituent_pairs: tuple[str, ...] = ()
    constituent = np.empty((len(spec.attributes), 0))
    if method == "eibd":
        constituent_pairs, members = _constituents(spec, by_name[group])
        constituent = np.stack(
            [effect(a, b, p) for p, (a, b) in zip(constituent_pairs, members, strict=True)], axis=1
        )
    known = np.array([w in truth for w in spec.attributes])
    best = effect_sizes.max(axis=1)
    weakest = constituent.min(axis=1) if method == "eibd" else None

    def detections(t: np.ndarray) -> np.ndarray:  # (k,) thresholds -> (k, n) detected
        found = best[None, :] > t[:, None]
        return found if weakest is None else found & (weakest[None, :] <= t[:, None])

    scores = [best] if weakest is None else [best, weakest]
    roc_t = np.concatenate([[-np.inf], np.unique(np.concatenate(scores))])
    roc = detections(roc_t)
    n_pos, n_neg = int(known.sum()), int((~known).sum())
    tp_all, fp_all = (roc & known).sum(axis=1), (roc & ~known).sum(axis=1)
    if threshold is None:
        j = tp_all * n_neg - fp_all * n_pos  # (TPR − FPR) · n_pos · n_neg, exact
        pick = int(np.flatnonzero(j == j.max())[-1])
        t, found = float(roc_t[pick]), roc[pick]
    else:
        t, found = float(threshold), detections(np.array([threshold], dtype=float))[0]
    tp, fp = int((found & known).sum()), int((found & ~known).sum())
    tn, fn = n_neg - fp, n_pos - tp
    n = len(spec.attributes)
    return IntersectionalResult(
        method=method,
        group=group,
        detected=tuple(w for w, f in zip(spec.attributes, found, strict=True) if f),
        threshold=t,
        chosen=threshold is None,
        accuracy=(tp + tn) / n,
        chance=n_pos / n,
        tpr=tp / n_pos,
        fpr=fp / n_neg,
        true_positives=tp,
        false_positives=fp,
        true_negatives=tn,
        false_negatives=fn,
        attributes=spec.attributes,
        known=known,
        pairs=pairs,
        effect_sizes=effect_sizes,
        constituent_pairs=constituent_pairs,
        constituent_effect_sizes=constituent,
        roc_thresholds=roc_t,
        roc_tpr=tp_all / n_pos,
        roc_fpr=fp_all / n_neg,
    )


def _constituents(
    spec: IntersectionalLists, studied: Group
) -> tuple[tuple[str, ...], list[tuple[list[str], list[str]]]]:
    """EIBD's pairs ``category value/other`` and the groups on each side of each."""
    labels, members = [], []
    if not studied.categories:
        raise WeatkitError(f"eibd: {spec.source}: the groups have no categories (race, gender…)")
    for category, value in studied.categories:
        values = dict.fromkeys(dict(g.categories)[category] for g in spec.groups)
        if len(values) < 2:
            raise WeatkitError(
                f"eibd: {spec.source}: every group has {category} {value!r}: EIBD compares "
                f"{studied.name}'s {category} with another"
            )
        side = [g.name for g in spec.groups if dict(g.categories)[category] == value]
        for other in values:
            if other != value:
                labels.append(f"{category} {value}/{other}")
                rest = [g.name for g in spec.groups if dict(g.categories)[category] == other]
                members.append((side, rest))
    return tuple(labels), members


# -- the lists file --------------------------------------------------------------------------


def read_lists(source: Mapping[str, Any] | str | os.PathLike[str]) -> IntersectionalLists:
    """The groups and known stereotypes of a ``.json``/``.yaml`` file or its mapping::

        groups:                 # two or more; every group has a value of every category
          AF: {race: African American, gender: female, words: [Aisha, Keisha]}
          EM: {race: European American, gender: male, words: [Brad, Frank]}
          ...
        stereotypes:            # the candidates: every word of every list
          AF: {intersectional: [loud, bigbutt], emergent: [bigbutt]}   # a group's: the truth
          female: [caring]      # any other list: candidates only
          random: [ant]

    A group's ``emergent`` stereotypes must be among its ``intersectional`` ones (as in the
    paper's lists).

    Raises:
        DataError: naming the file and key: a group without words, a word in two groups, an
            emergent word in no intersectional list, an unknown key, a wrong type, a word listed
            twice in one list.
    """
    if isinstance(source, Mapping):
        name, document = "lists", source
    else:
        name, document = str(source), _load(source)
    if not isinstance(document, Mapping):
        raise DataError(f"{name}: expected a mapping with groups and stereotypes")
    for key in document:
        if key not in ("groups", "stereotypes"):
            raise DataError(f"{name}: unknown key {key!r} (known: groups, stereotypes)")
    groups = _groups(document.get("groups"), name)
    intersectional: dict[str, tuple[str, ...]] = {}
    emergent: dict[str, tuple[str, ...]] = {}
    attributes: dict[str, None] = {}
    lists = document.get("stereotypes")
    if not isinstance(lists, Mapping) or not lists:
        raise DataError(f"{name}: stereotypes must be a non-empty mapping of lists")
    names = {g.name for g in groups}
    for key, value in lists.items():
        where = f"{name}: stereotypes.{key}"
        if key not in names:
            attributes.update(dict.fromkeys(_words(value, where)))
            continue
        if not isinstance(value, Mapping) or "intersectional" not in value:
            raise DataError(
                f"{where}: a group's stereotypes are a mapping with intersectional "
                "(and emergent) lists"
            )
        for sub in value:
            if sub not in ("intersectional", "emergent"):
                raise DataError(f"{where}: unknown key {sub!r} (known: intersectional, emergent)")
        intersectional[key] = _words(value["intersectional"], f"{where}.intersectional")
        attributes.update(dict.fromkeys(intersectional[key]))
        if "emergent" in value:
            emergent[key] = _words(value["emergent"], f"{where}.emergent")
            stray = [w for w in emergent[key] if w not in intersectional[key]]
            if stray:
                raise DataError(
                    f"{where}.emergent: {stray[0]!r} is in no intersectional list of {key}"
                )
    return IntersectionalLists(name, groups, intersectional, emergent, tuple(attributes))


def _load(path: str | os.PathLike[str]) -> Any:
    from weatkit._io.jsonfile import load_json
    from weatkit._io.textfile import read_text_file

    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise DataError(f"{path}: an intersectional lists file is .json, .yaml or .yml")
    text = read_text_file(path, "intersectional lists file")
    if suffix == ".json":
        return load_json(text, str(path))
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise DataError(
            f"{path}{where}: invalid YAML: {getattr(err, 'problem', None) or err}"
        ) from None


def _groups(value: Any, name: str) -> tuple[Group, ...]:
    if not isinstance(value, Mapping) or len(value) < 2:
        raise DataError(f"{name}: groups must be a mapping of two or more groups")
    groups, owner = [], {}
    for key, entry in value.items():
        where = f"{name}: groups.{key}"
        if not isinstance(entry, Mapping) or "words" not in entry:
            raise DataError(f"{where}: a group is a mapping with its words (and categories)")
        words = _words(entry["words"], f"{where}.words")
        categories = []
        for category, category_value in entry.items():
            if category == "words":
                continue
            if not isinstance(category_value, str) or not category_value.strip():
                raise DataError(f"{where}.{category}: a category's value is a non-empty string")
            categories.append((str(category), category_value))
        for word in words:
            if word in owner:
                raise DataError(f"{where}.words: {word!r} is also a word of {owner[word]}")
            owner[word] = key
        groups.append(Group(str(key), tuple(categories), words))
    first = groups[0]
    for g in groups:
        if {c for c, _ in g.categories} != {c for c, _ in first.categories}:
            raise DataError(
                f"{name}: groups.{g.name} has categories "
                f"{[c for c, _ in g.categories]}, groups.{first.name} "
                f"{[c for c, _ in first.categories]}"
            )
        same = [h.name for h in groups if h is not g and dict(h.categories) == dict(g.categories)]
        if g.categories and same:
            raise DataError(f"{name}: groups.{g.name} has the categories of {same[0]}")
    return tuple(groups)


def _words(value: Any, where: str) -> tuple[str, ...]:
    """A non-empty list of distinct non-empty strings."""
    if not isinstance(value, list) or not value:
        raise DataError(f"{where}: expected a non-empty list of words, got {value!r:.60}")
    for word in value:
        if not isinstance(word, str) or not word.strip():
            raise DataError(f"{where}: {word!r:.60} is not a word")
    seen: set[str] = set()
    for word in value:
        if word in seen:
            raise DataError(f"{where}: {word!r} is listed twice")
        seen.add(word)
    return tuple(value)
