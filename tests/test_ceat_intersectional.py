"""IBD and EIBD (weatkit.ceat.intersectional) against a slow implementation written here from
the paper's definitions (Guo & Caliskan 2021, supplementary §8.2; ``inner_ibd``/``inner_eibd``
and ``get_effectsize`` of the reference ``code/ibd.py``), on vectors with planted associations,
on small cases worked by hand, and with bad lists."""

from __future__ import annotations

import doctest
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import weatkit
from weatkit.ceat import intersectional
from weatkit.ceat.intersectional import eibd, ibd, read_lists
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import DataError, WeatkitError

# -- the slow implementation -----------------------------------------------------------------


def slow_es(w: np.ndarray, first: list[np.ndarray], second: list[np.ndarray]) -> float:
    """get_effectsize: mean cos to the first names − mean cos to the second, over the sd
    (ddof 1) of all those cosines."""
    cos = [float(w @ v / np.linalg.norm(w) / np.linalg.norm(v)) for v in first + second]
    a, b = cos[: len(first)], cos[len(first) :]
    return (sum(a) / len(a) - sum(b) / len(b)) / float(np.std(cos, ddof=1))


def slow(method: str, lists: dict, vecs: dict, group: str, threshold: float | None) -> dict:
    groups = lists["groups"]
    attributes: list[str] = []
    for key, value in lists["stereotypes"].items():
        for word in value["intersectional"] if key in groups else value:
            if word not in attributes:
                attributes.append(word)
    entry = lists["stereotypes"][group]
    truth = set(entry["intersectional"] if method == "ibd" else entry["emergent"])
    names = {g: [vecs[w] for w in groups[g]["words"]] for g in groups}
    scores = {w: [slow_es(vecs[w], names[group], names[g]) for g in groups if g != group]
              for w in attributes}  # fmt: skip
    units = {w: [] for w in attributes}
    if method == "eibd":
        for category, value in groups[group].items():
            if category == "words":
                continue
            values = []
            for g in groups.values():
                if g[category] not in values:
                    values.append(g[category])
            mine = [v for g in groups for v in names[g] if groups[g][category] == value]
            for other in values:
                if other != value:
                    theirs = [v for g in groups for v in names[g] if groups[g][category] == other]
                    for w in attributes:
                        units[w].append(slow_es(vecs[w], mine, theirs))

    def detected(t: float) -> list[str]:
        out = []
        for w in attributes:
            in_ib = any(s > t for s in scores[w])
            if method == "ibd" and in_ib:
                out.append(w)
            if method == "eibd" and in_ib and not all(u > t for u in units[w]):
                out.append(w)
        return out

    P, N = len(truth), len(attributes) - len(truth)
    # the thresholds where the detections can change: each word's strongest association with
    # the group (and, for EIBD, its weakest with a constituent), and below them all
    compared = [max(scores[w]) for w in attributes]
    if method == "eibd":
        compared += [min(units[w]) for w in attributes]
    candidates = [-np.inf, *sorted(set(compared))]
    roc = []
    for t in candidates:
        found = detected(t)
        tp = sum(w in truth for w in found)
        roc.append((t, Fraction(tp, P), Fraction(len(found) - tp, N)))
    if threshold is None:
        best = None
        for t, tpr, fpr in roc:  # ascending: the last of equal J is the largest t
            if best is None or tpr - fpr >= best[1]:
                best = (t, tpr - fpr)
        threshold = best[0]
    found = detected(threshold)
    tp = sum(w in truth for w in found)
    fp = len(found) - tp
    return {
        "detected": found,
        "threshold": threshold,
        "accuracy": (tp + N - fp) / len(attributes),
        "tpr": tp / P,
        "fpr": fp / N,
        "chance": P / len(attributes),
        "attributes": attributes,
        "scores": scores,
        "units": units,
        "roc": roc,
    }


def check_against_slow(method: str, lists: dict, vecs: dict, group: str, threshold=None):
    vectors = WordVectors("v", list(vecs), np.array(list(vecs.values())))
    got = (ibd if method == "ibd" else eibd)(lists, group, vectors=vectors, threshold=threshold)
    want = slow(method, lists, vecs, group, threshold)
    assert got.attributes == tuple(want["attributes"])
    assert got.detected == tuple(want["detected"])
    assert got.threshold == pytest.approx(want["threshold"], abs=1e-9)
    for key in ("accuracy", "tpr", "fpr", "chance"):
        assert getattr(got, key) == pytest.approx(want[key], abs=1e-12), key
    np.testing.assert_allclose(
        got.effect_sizes, [want["scores"][w] for w in want["attributes"]], atol=1e-9
    )
    if method == "eibd":
        np.testing.assert_allclose(
            got.constituent_effect_sizes, [want["units"][w] for w in want["attributes"]], atol=1e-9
        )
    np.testing.assert_allclose(got.roc_thresholds, [r[0] for r in want["roc"]], atol=1e-9)
    np.testing.assert_allclose(got.roc_tpr, [float(r[1]) for r in want["roc"]])
    np.testing.assert_allclose(got.roc_fpr, [float(r[2]) for r in want["roc"]])
    return got


# -- planted associations ----------------------------------------------------------------------

RACES, GENDERS = ("African American", "European American", "Mexican American"), ("f", "m")
GROUPS = {f"{r[0]}{g.upper()}": (r, g) for r in RACES for g in GENDERS}  # AF, AM, EF, ...
N_NAMES = 20


def planted(seed: int = 0) -> tuple[dict, dict, list[str], list[str]]:
    """Names orthonormal, so that cos(w, name) is w's coefficient on it over |w|. Emergent
    words load on AF's names only; race-and-gender words on African American and on female
    names (AF twice); the others are noise (some load on EM's names)."""
    rng = np.random.default_rng(seed)
    n = N_NAMES * len(GROUPS)
    basis = np.linalg.qr(rng.normal(size=(n + 8, n + 8)))[0]
    names, vecs, lists = {}, {}, {"groups": {}, "stereotypes": {}}
    for i, (key, (race, gender)) in enumerate(GROUPS.items()):
        names[key] = [f"{key.lower()}{k}" for k in range(N_NAMES)]
        for k, word in enumerate(names[key]):
            vecs[word] = basis[i * N_NAMES + k]
        lists["groups"][key] = {"race": race, "gender": gender, "words": names[key]}

    def attribute(loads: dict[str, float]) -> np.ndarray:
        coef = 0.1 * rng.normal(size=n)
        for key, load in loads.items():
            i = list(GROUPS).index(key)
            coef[i * N_NAMES : (i + 1) * N_NAMES] += load
        return coef @ basis[:n] + 0.5 * basis[n + rng.integers(8)]

    emergent = [f"emergent{k}" for k in range(4)]
    both = [f"both{k}" for k in range(4)]
    noise = [f"noise{k}" for k in range(12)]
    em = [f"em{k}" for k in range(4)]
    for w in emergent:
        vecs[w] = attribute({"AF": 1.0})
    for w in both:
        vecs[w] = attribute({"AF": 2.0, "AM": 1.0, "EF": 1.0, "MF": 1.0})
    for w in noise:
        vecs[w] = attribute({})
    for w in em:
        vecs[w] = attribute({"EM": 1.0})
    lists["stereotypes"] = {
        "AF": {"intersectional": emergent + both, "emergent": emergent},
        "EM": {"intersectional": em},
        "random": noise,
    }
    return lists, vecs, emergent, both


def test_ibd_detects_exactly_the_planted_words() -> None:
    lists, vecs, emergent, both = planted()
    chosen = check_against_slow("ibd", lists, vecs, "AF")
    assert chosen.detected == (*emergent, *both)
    assert (chosen.tpr, chosen.fpr, chosen.accuracy, chosen.chance) == (1.0, 0.0, 1.0, 8 / 24)
    # the largest t of perfect separation: the highest score of a word not planted
    not_planted = ~chosen.known
    assert chosen.threshold == chosen.effect_sizes[not_planted].max()
    assert chosen.chosen and chosen.pairs == ("AF/AM", "AF/EF", "AF/EM", "AF/MF", "AF/MM")
    given = check_against_slow("ibd", lists, vecs, "AF", threshold=1.5)
    assert given.detected == (*emergent, *both) and not given.chosen
    assert (given.true_positives, given.false_positives) == (8, 0)
    assert (given.true_negatives, given.false_negatives) == (16, 0)


def test_eibd_detects_exactly_the_emergent_words() -> None:
    lists, vecs, emergent, both = planted()
    got = check_against_slow("eibd", lists, vecs, "AF")
    assert got.detected == tuple(emergent)
    assert (got.tpr, got.fpr, got.accuracy, got.chance) == (1.0, 0.0, 1.0, 4 / 24)
    assert got.constituent_pairs == (
        "race African American/European American",
        "race African American/Mexican American",
        "gender f/m",
    )
    # the race-and-gender words are associated with all of AF's constituents, emergent ones
    # with none at the strength of their association with AF itself
    is_both = np.isin(got.attributes, both)
    assert got.constituent_effect_sizes[is_both].min() > 1.2
    assert got.constituent_effect_sizes[~is_both].min(axis=1).max() < 1.2
    # at a threshold above the race-and-gender words' weakest constituent: they are emergent too
    low = check_against_slow("eibd", lists, vecs, "AF", threshold=1.6)
    assert low.detected == (*emergent, *both)


@pytest.mark.parametrize("seed", range(6))
def test_random_vectors_match_the_slow_implementation(seed: int) -> None:
    """Few names and random vectors: many ties between operating points, all operating
    points compared, in both methods and for a group whose race has a third value."""
    rng = np.random.default_rng(seed)
    dim = 5
    lists = {"groups": {}, "stereotypes": {}}
    vecs = {}
    for key, (race, gender) in GROUPS.items():
        words = [f"{key}{k}" for k in range(int(rng.integers(2, 4)))]
        lists["groups"][key] = {"race": race, "gender": gender, "words": words}
        vecs.update({w: rng.normal(size=dim) for w in words})
    attributes = [f"w{k}" for k in range(10)]
    vecs.update({w: rng.normal(size=dim) for w in attributes})
    lists["stereotypes"] = {
        "AF": {"intersectional": attributes[:4], "emergent": attributes[1:3]},
        "MM": {"intersectional": attributes[3:6], "emergent": attributes[5:6]},
        "others": attributes[6:],
    }
    for method in ("ibd", "eibd"):
        for group in ("AF", "MM"):
            check_against_slow(method, lists, vecs, group)
            check_against_slow(method, lists, vecs, group, threshold=0.25)


# -- worked by hand ----------------------------------------------------------------------------

#: Three groups of two names, the names orthonormal: cos(w, name) = coefficient / |w|, and the
#: effect sizes below are worked from the coefficients (AF1 AF2 AM1 AM2 EM1 EM2).
HAND = {
    "bold": [2, 2, 0, 0, 1, 1],  # AF/AM √3, AF/EM √3; race 0, gender 1.5/√0.8 = 1.677
    "loud": [3, 1, 1, 1, 1, 1],  # AF/AM 1, AF/EM 1; race 0.5/√(2/3) = 0.612, gender 1.225
    "calm": [1, 1, 3, 1, 1, 3],  # AF/AM −1, AF/EM −1
    "ant": [3, 1, 2, 0, 4, 4],  # AF/AM 1/√(5/3) = 0.775, AF/EM < 0; race < 0
    "bee": [2, 1, 0, 1, 5, 5],  # AF/AM 1/√(2/3) = 1.225, AF/EM < 0; race < 0
}


def hand(emergent: list[str]) -> tuple[dict, WordVectors]:
    words = ["af1", "af2", "am1", "am2", "em1", "em2"]
    vectors = WordVectors("hand", words + list(HAND), np.vstack([np.eye(6), list(HAND.values())]))
    lists = {
        "groups": {
            "AF": {"race": "A", "gender": "f", "words": ["af1", "af2"]},
            "AM": {"race": "A", "gender": "m", "words": ["am1", "am2"]},
            "EM": {"race": "E", "gender": "m", "words": ["em1", "em2"]},
        },
        "stereotypes": {
            "AF": {"intersectional": ["bold", "loud"], "emergent": emergent},
            "other": ["calm", "ant", "bee"],
        },
    }
    return lists, vectors


def test_ibd_threshold_by_hand() -> None:
    lists, vectors = hand(["bold"])
    r = ibd(lists, "AF", vectors=vectors)
    np.testing.assert_allclose(
        r.effect_sizes[:, 0], [3**0.5, 1, -1, 0.6**0.5, 1.5**0.5], rtol=1e-12
    )
    # max_j s: bold √3, loud 1, calm −1, ant 0.775, bee 1.225. TPR − FPR at t = −∞: 1 − 1;
    # −1: 1 − 2/3; 0.775: 1 − 1/3; 1: 1/2 − 1/3; 1.225: 1/2 − 0; √3: 0. Best: t = 0.775.
    np.testing.assert_allclose(r.roc_tpr, [1, 1, 1, 0.5, 0.5, 0])
    np.testing.assert_allclose(r.roc_fpr, [1, 2 / 3, 1 / 3, 1 / 3, 0, 0])
    assert r.threshold == pytest.approx(0.6**0.5)
    assert r.detected == ("bold", "loud", "bee")
    assert (r.accuracy, r.tpr, r.chance) == (0.8, 1.0, 0.4)
    assert r.fpr == pytest.approx(1 / 3)
    given = ibd(lists, "AF", vectors=vectors, threshold=1.1)
    assert given.detected == ("bold", "bee") and given.accuracy == pytest.approx(3 / 5)


def test_ibd_ties_go_to_the_largest_threshold() -> None:
    # candidates bold, loud, calm, bee: TPR − FPR at t = −1 (bold, loud, bee): 1 − 1/2, and at
    # t = 1.225 (bold): 1/2 − 0; the largest of the tied thresholds is chosen
    lists, vectors = hand(["bold"])
    lists["stereotypes"]["other"] = ["calm", "bee"]
    r = ibd(lists, "AF", vectors=vectors)
    np.testing.assert_allclose(r.roc_thresholds, [-np.inf, -1, 1, 1.5**0.5, 3**0.5])
    np.testing.assert_allclose(r.roc_tpr - r.roc_fpr, [0, 0.5, 0, 0.5, 0], atol=1e-12)
    assert r.threshold == pytest.approx(1.5**0.5)
    assert r.detected == ("bold",) and r.accuracy == 0.75


def test_eibd_by_hand() -> None:
    lists, vectors = hand(["bold"])
    r = eibd(lists, "AF", vectors=vectors, threshold=0.5)
    assert r.constituent_pairs == ("race A/E", "gender f/m")
    np.testing.assert_allclose(r.constituent_effect_sizes[0], [0, 1.5 / 0.8**0.5], atol=1e-12)
    np.testing.assert_allclose(r.constituent_effect_sizes[1], [0.5 / (2 / 3) ** 0.5, 1.5**0.5])
    # IBD at 0.5: bold, loud, ant, bee; loud is above 0.5 against both constituents: not emergent
    assert r.detected == ("bold", "ant", "bee")
    assert (r.true_positives, r.false_positives, r.true_negatives, r.false_negatives) == (
        1,
        2,
        2,
        0,
    )
    assert (r.accuracy, r.tpr, r.fpr, r.chance) == (0.6, 1.0, 0.5, 0.2)
    # at 0.7 loud's race association (0.612) no longer counts: it is emergent too
    assert eibd(lists, "AF", vectors=vectors, threshold=0.7).detected == (
        "bold",
        "loud",
        "ant",
        "bee",
    )


def test_the_docstring_examples_run() -> None:
    result = doctest.testmod(intersectional)
    assert result.attempted > 0 and result.failed == 0


def test_the_public_names_and_a_yaml_file(tmp_path: Path) -> None:
    lists, vectors = hand(["bold"])
    path = tmp_path / "lists.yaml"
    import yaml

    path.write_text(yaml.safe_dump(lists), encoding="utf-8")
    from_file = weatkit.ibd(str(path), "AF", vectors=vectors)
    assert from_file.detected == ibd(lists, "AF", vectors=vectors).detected
    assert weatkit.eibd(path, "AF", vectors=vectors, threshold=0.5).detected == (
        "bold",
        "ant",
        "bee",
    )
    assert read_lists(path).attributes == ("bold", "loud", "calm", "ant", "bee")


# -- bad input ---------------------------------------------------------------------------------


def one_line(excinfo: pytest.ExceptionInfo) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def test_a_group_with_no_words() -> None:
    lists, vectors = hand(["bold"])
    lists["groups"]["AM"]["words"] = []
    with pytest.raises(DataError) as e:
        ibd(lists, "AF", vectors=vectors)
    assert one_line(e) == "lists: groups.AM.words: expected a non-empty list of words, got []"


def test_an_emergent_attribute_in_no_intersectional_list() -> None:
    lists, vectors = hand(["bold", "calm"])
    with pytest.raises(DataError) as e:
        eibd(lists, "AF", vectors=vectors)
    assert (
        one_line(e) == "lists: stereotypes.AF.emergent: 'calm' is in no intersectional list of AF"
    )


def test_other_bad_lists() -> None:
    lists, vectors = hand(["bold"])
    cases = [
        ({"groups": lists["groups"]}, "lists: stereotypes must be a non-empty mapping of lists"),
        ({**lists, "extra": 1}, "lists: unknown key 'extra' (known: groups, stereotypes)"),
        (
            {**lists, "stereotypes": {"AF": ["bold"]}},
            "lists: stereotypes.AF: a group's stereotypes are a mapping with intersectional "
            "(and emergent) lists",
        ),
        (
            {**lists, "stereotypes": {"other": ["bold", "bold"]}},
            "lists: stereotypes.other: 'bold' is listed twice",
        ),
        (
            {"groups": {**lists["groups"], "EF": {"race": "E", "gender": "f", "words": ["af1"]}},
             "stereotypes": lists["stereotypes"]},
            "lists: groups.EF.words: 'af1' is also a word of AF",
        ),
        (
            {"groups": {**lists["groups"], "EF": {"race": "E", "words": ["x"]}},
             "stereotypes": lists["stereotypes"]},
            "lists: groups.EF has categories ['race'], groups.AF ['race', 'gender']",
        ),
    ]  # fmt: skip
    for bad, message in cases:
        with pytest.raises(DataError) as e:
            ibd(bad, "AF", vectors=vectors)
        assert one_line(e) == message


def test_bad_calls() -> None:
    lists, vectors = hand(["bold"])
    with pytest.raises(WeatkitError) as e:
        ibd(lists, "MF", vectors=vectors)
    assert one_line(e) == "ibd: no group 'MF' in lists (groups: AF, AM, EM)"
    with pytest.raises(WeatkitError) as e:
        eibd(lists, "EM", vectors=vectors)
    assert one_line(e) == (
        "eibd: lists: stereotypes.EM has no emergent list: eibd needs the known emergent "
        "stereotypes of EM"
    )
    lists["stereotypes"]["other"].append("wasp")
    with pytest.raises(WeatkitError) as e:
        ibd(lists, "AF", vectors=vectors)
    assert (
        one_line(e)
        == "ibd: 1 word(s) of attributes not in hand: 'wasp' (leave them out of the list)"
    )


def test_malformed_files(tmp_path: Path) -> None:
    lists, vectors = hand(["bold"])
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(lists)[:-1], encoding="utf-8")
    with pytest.raises(WeatkitError) as e:
        ibd(broken, "AF", vectors=vectors)
    assert one_line(e).startswith(f"{broken}: invalid JSON at line 1 column ")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("groups:\n  AF: [unclosed\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        ibd(bad_yaml, "AF", vectors=vectors)
    assert one_line(e).startswith(f"{bad_yaml} line 3: invalid YAML: ")
    listing = tmp_path / "lists.txt"
    listing.write_text("AF: bold", encoding="utf-8")
    with pytest.raises(DataError) as e:
        ibd(listing, "AF", vectors=vectors)
    assert one_line(e) == f"{listing}: an intersectional lists file is .json, .yaml or .yml"
    top = tmp_path / "top.json"
    top.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DataError) as e:
        ibd(top, "AF", vectors=vectors)
    assert one_line(e) == f"{top}: expected a mapping with groups and stereotypes"
    with pytest.raises(WeatkitError) as e:
        ibd(lists, "AF", vectors=vectors, threshold=float("nan"))
    assert one_line(e) == "ibd: threshold must be a finite number, got nan"
