"""StereoSet's gender-swapped control set: is SS driven by the group or by the keywords?

Pikuliak, M., Beňová, I. and Bachratý, V. (2023). In-Depth Look at Word Filling Societal Bias
Measures. EACL 2023 (github.com/kinit-sk/bias-methodology, ``bias-methodology/SOURCE.md``).

**Data.** ``stereoset_genderswap.txt`` (251 items) and ``stereoset_genderswap_filtered.txt``
(147 items, the subset kept as genuinely about gender, 3 slips corrected) hold StereoSet
intrasentence ``gender`` items whose stereotype and anti-stereotype differ in one word, the
*keyword*, written ``<keyword>``. Blocks of two lines separated by blank lines alternate: [the
stereotype sentence, its gender-swapped copy], [the anti-stereotype sentence, its
gender-swapped copy]; one item is two blocks. The swap changes who the sentence is about
(she↔he, mother↔father, schoolgirl↔schoolboy, …) and keeps both keywords::

    The <caring> mother went to her crying daughter.       stereotype
    The <caring> father went to his crying daughter.       swapped stereotype

    The <uncaring> mother went to her crying daughter.     anti-stereotype
    The <uncaring> father went to his crying daughter.     swapped anti-stereotype

(upstream ``src/dataset.py`` reads the non-empty lines ``L`` as items ``(L[0], L[2], L[1],
L[3])``, ``(L[4], L[6], L[5], L[7])``, … = (stereotype, anti-stereotype, swapped stereotype,
swapped anti-stereotype)). Each sentence becomes a StereoSet intrasentence candidate: its
context is the sentence with ``<keyword>`` replaced by ``BLANK``, its word the keyword. Items
are used as the files have them, slips included ("Jane considers his sister his <friend>." for
"John …", a keyword swapped with the group: "<female>" → "<male>"); upstream's model-specific
filter (keyword token counts that differ between the pairs) is not applied.

**Scores.** Every sentence gets StereoSet's intrasentence score
(:class:`weatkit.stereoset.scoring.IntrasentenceScorer`: masked LMs, the mean probability of
the keyword's tokens predicted one at a time; causal LMs, the geometric mean token probability
of the sentence). Per item, as StereoSet's SS (:mod:`weatkit.stereoset.metrics`; a tie counts
as anti-stereotypical)::

    pro_original = [s(stereotype) > s(anti-stereotype)]
    pro_control  = [s(swapped stereotype) > s(swapped anti-stereotype)]

and over the n items of a file::

    original = 100 · Σ pro_original / n      (SS of the matched originals)
    metric   = 100 · Σ pro_control / n       (SS of the gender-swapped items)

each with a percentile bootstrap CI over items from one plan
(:func:`weatkit.stats.resampling.one_sample_bootstrap` with the seed and n: both intervals
resample the same items, a paired bootstrap, as :mod:`weatkit.crows.controls`). This is the
share of positive scores of the paper's ``ss`` score and of its swapped (control) side, with
StereoSet's own scoring of the keyword. A measure of a *gender* stereotype prefers the
stereotypical keyword for the original group and much less (or the reverse) for the swapped
group; a control SS as far from 50 as the original's shows that the keywords themselves
(frequency, polarity, negation prefixes) drive the score. The flag "control as biased" is
:func:`weatkit.measures.controls.as_biased`, the rule shared with the CrowS-Pairs controls.

**Not available.** Pikuliak et al.'s race and profession controls (the group word replaced by
10 random other nationalities / professions) are generated from StereoSet's ``stereoset.json``,
which the data directory lacks (``bias-methodology/SOURCE.md``): asking for them is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from weatkit._io.textfile import read_text_or_gzip
from weatkit.data import fetch
from weatkit.errors import DataError, WeatkitError
from weatkit.measures.controls import CONTROL_SUMMARY_COLUMNS, as_biased
from weatkit.stats.intervals import percentile_interval
from weatkit.stats.resampling import counts_from_indices, one_sample_bootstrap
from weatkit.stereoset.data import BLANK, Example, Sentence, StereoSet
from weatkit.stereoset.metrics import ss_score

if TYPE_CHECKING:
    from weatkit.stereoset.scoring import IntrasentenceScorer

#: Control kind -> its file in the data-directory layout.
CONTROL_FILES: dict[str, str] = {
    "genderswap": "bias-methodology/data/stereoset_genderswap.txt",
    "genderswap-filtered": "bias-methodology/data/stereoset_genderswap_filtered.txt",
}
CONTROL_KINDS: tuple[str, ...] = tuple(CONTROL_FILES)
#: Pikuliak et al.'s controls that need StereoSet's ``stereoset.json`` (absent from the data).
UNAVAILABLE_KINDS: tuple[str, ...] = ("race", "profession")
DEFAULT_BOOTSTRAP = 1000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE_LEVEL = 0.95

#: The four sentences of an item, in upstream's order (s0, s1, s2, s3).
ROLES: tuple[str, ...] = (
    "stereotype", "anti_stereotype", "swapped_stereotype", "swapped_anti_stereotype",
)  # fmt: skip
ITEM_COLUMNS = ["control", "item", "line", *ROLES]
SCORED_ITEM_COLUMNS = [
    "control", "item", "side", "stereotype", "anti_stereotype", "stereotype_word",
    "anti_stereotype_word", "score_stereotype", "score_anti_stereotype", "pro",
]  # fmt: skip
_KEYWORD = re.compile(r"<([^<>]*)>")


def control_kinds(controls: bool | str | Sequence[str]) -> tuple[str, ...]:
    """The kinds asked for: ``True`` = all of :data:`CONTROL_KINDS`, ``False`` = none, a
    comma-separated string or a sequence of kinds.

    Raises:
        WeatkitError: a race or profession control (not buildable here) or an unknown kind.
    """
    if isinstance(controls, bool):
        return CONTROL_KINDS if controls else ()
    names = controls.split(",") if isinstance(controls, str) else list(controls)
    kinds = tuple(dict.fromkeys(str(k).strip() for k in names if str(k).strip()))
    for kind in kinds:
        if kind in UNAVAILABLE_KINDS:
            raise WeatkitError(
                f"StereoSet's {kind} control cannot be built: Pikuliak et al. generate it from "
                "StereoSet's stereoset.json, which the data directory lacks "
                f"(bias-methodology/SOURCE.md); choose {', '.join(CONTROL_KINDS)}"
            )
        if kind not in CONTROL_FILES:
            raise WeatkitError(
                f"unknown StereoSet control {kind!r}: choose {', '.join(CONTROL_KINDS)}"
            )
    if not kinds:
        raise WeatkitError(f"no StereoSet control named: choose {', '.join(CONTROL_KINDS)}")
    return kinds


def parse_genderswap(text: str, name: str) -> list[tuple[int, tuple[str, str, str, str]]]:
    """The items of a gender-swap file (module docstring): ``(line, (stereotype,
    anti-stereotype, swapped stereotype, swapped anti-stereotype))``, sentences as in the file
    (with their ``<keyword>``), ``line`` the 1-based line of the stereotype sentence.

    Raises:
        DataError: naming the file and line: a block that is not two lines, an odd number of
            blocks, a sentence without exactly one non-empty ``<keyword>`` or with ``BLANK``.
    """
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    for number, raw in enumerate([*text.splitlines(), ""], start=1):
        line = raw.strip()
        if line:
            if not current:
                blocks.append((number, current))
            current.append(line)
            _keyword(line, name, number)
        else:
            current = []
    for start, lines in blocks:
        if len(lines) != 2:
            raise DataError(
                f"{name}: line {start}: a block of {len(lines)} line(s); expected 2 (a sentence "
                "and its gender-swapped copy)"
            )
    if len(blocks) % 2:
        raise DataError(
            f"{name}: line {blocks[-1][0]}: a stereotype block without its anti-stereotype "
            f"block ({len(blocks)} blocks; items are pairs of blocks)"
        )
    items = []
    for (start, (stereo, swapped_stereo)), (_, (anti, swapped_anti)) in zip(
        blocks[0::2], blocks[1::2], strict=True
    ):
        items.append((start, (stereo, anti, swapped_stereo, swapped_anti)))
    return items


def _keyword(line: str, name: str, number: int) -> re.Match[str]:
    found = _KEYWORD.search(line)
    if line.count("<") != 1 or line.count(">") != 1 or found is None or not found[1].strip():
        raise DataError(f"{name}: line {number}: expected exactly one <keyword>: {line!r}")
    if BLANK in line:
        raise DataError(f"{name}: line {number}: the sentence contains {BLANK}: {line!r}")
    return found


def split_keyword(sentence: str) -> tuple[str, str, str]:
    """``(context, keyword, text)`` of a sentence with one ``<keyword>``: the context has
    ``BLANK`` in its place, the text the bare keyword."""
    found = _keyword(sentence, "sentence", 1)
    head, tail = sentence[: found.start()], sentence[found.end() :]
    return head + BLANK + tail, found[1], head + found[1] + tail


def load_genderswap(kinds: Sequence[str] = CONTROL_KINDS) -> pd.DataFrame:
    """The items of the gender-swap files of ``kinds``, one row per item.

    Returns:
        ``control`` (the kind), ``item`` (1-based, in file order), ``line`` (of its stereotype
        sentence), ``stereotype, anti_stereotype, swapped_stereotype,
        swapped_anti_stereotype`` (the sentences with their ``<keyword>``).

    Raises:
        WeatkitError: an unknown kind, or a file that is not in the documented format.
    """
    rows = []
    for kind in control_kinds(kinds):
        relpath = CONTROL_FILES[kind]
        items = parse_genderswap(read_text_or_gzip(fetch(relpath), "control file"), relpath)
        rows += [(kind, i, line, *sentences) for i, (line, sentences) in enumerate(items, 1)]
    table = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    return table.astype({"item": np.int64, "line": np.int64})


def score_genderswap(
    scorer: IntrasentenceScorer, items: pd.DataFrame, show_progress: bool | None = None
) -> pd.DataFrame:
    """StereoSet scores of every sentence of :func:`load_genderswap`'s ``items``.

    Each sentence is its own intrasentence candidate (context with ``BLANK``, keyword as the
    word), so a slip that changes the context of one sentence is scored as written.

    Returns:
        Two rows per item, first every item's ``side`` = ``original`` then every ``control``
        (the gender-swapped pair): :data:`SCORED_ITEM_COLUMNS` (sentences without the brackets,
        their keywords and scores, ``pro`` = [score_stereotype > score_anti_stereotype]).
    """
    examples = []
    parts: dict[str, tuple[str, str]] = {}
    for row in items.itertuples(index=False):
        for role in ROLES:
            sid = f"{row.control}:{row.item}:{role}"
            context, word, text = split_keyword(getattr(row, role))
            parts[sid] = (text, word)
            label = "anti-stereotype" if "anti" in role else "stereotype"
            sentence = Sentence(sid, text, label, word)
            examples.append(Example(sid, "", "", "gender", context, (sentence,)))
    scores = scorer.score(StereoSet(tuple(examples), (), source="gender-swap controls"),
                          show_progress=show_progress)  # fmt: skip
    sides = (("original", ROLES[:2]), ("control", ROLES[2:]))
    rows = []
    for side, (stereo_role, anti_role) in sides:
        for row in items.itertuples(index=False):
            ids = [f"{row.control}:{row.item}:{role}" for role in (stereo_role, anti_role)]
            stereo, anti = (scores[sid] for sid in ids)
            rows.append((
                row.control, row.item, side, parts[ids[0]][0], parts[ids[1]][0],
                parts[ids[0]][1], parts[ids[1]][1], stereo, anti, int(stereo > anti),
            ))  # fmt: skip
    table = pd.DataFrame(rows, columns=SCORED_ITEM_COLUMNS)
    return table.astype({"item": np.int64, "pro": np.int64})


def control_summary(
    scored: pd.DataFrame,
    *,
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> pd.DataFrame:
    """SS of the matched originals and of the gender-swapped items per control kind, with
    their paired percentile bootstrap CIs and the flag (module docstring).

    Args:
        scored: :func:`score_genderswap`'s table (``control, item, side, pro`` are read).
        n_bootstrap: resamples of the items (0: no CI, NaN bounds, no flag).
        seed: seed of every kind's plan.
        confidence_level: coverage of the percentile intervals.

    Returns:
        One row per kind: :data:`~weatkit.measures.controls.CONTROL_SUMMARY_COLUMNS`.
    """
    if n_bootstrap < 0:
        raise WeatkitError("n_bootstrap must be 0 or more")
    if not 0 < confidence_level < 1:
        raise WeatkitError(f"the confidence level must be between 0 and 1, not {confidence_level}")
    rows = []
    for kind in dict.fromkeys(scored["control"]):
        part = scored[scored["control"] == kind]
        pro = {
            side: part[part["side"] == side].sort_values("item")["pro"].to_numpy(np.float64)
            for side in ("original", "control")
        }
        n = len(pro["control"])
        if len(pro["original"]) != n:
            raise WeatkitError(f"control {kind}: {len(pro['original'])} originals for {n} controls")
        counts = None
        if n and n_bootstrap:
            counts = counts_from_indices(one_sample_bootstrap(n, n_bootstrap, seed=seed), n)
        value: dict[str, tuple[float, float, float]] = {}
        for side, outcome in pro.items():
            low = high = math.nan
            if counts is not None:
                lo, hi = percentile_interval(
                    ss_score(counts @ outcome, n)[None, :], confidence_level
                )
                low, high = float(lo[0]), float(hi[0])
            value[side] = (float(ss_score(outcome.sum(), n)) if n else math.nan, low, high)
        (original, o_low, o_high), (metric, c_low, c_high) = value["original"], value["control"]
        rows.append(
            (kind, n, original, o_low, o_high, metric, c_low, c_high,
             as_biased(original, c_low, c_high))
        )  # fmt: skip
    return pd.DataFrame(rows, columns=CONTROL_SUMMARY_COLUMNS)
