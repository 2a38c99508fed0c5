"""The measure pages of the docs (docs/measures/) name every registered measure and preset."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from weatkit.engine.compat import COMPAT_PRESETS
from weatkit.measures.compat import SENTENCE_PRESETS
from weatkit.measures.registry import MEASURES

PAGES = Path(__file__).resolve().parents[1] / "docs" / "measures"
#: The page of each registry family (``weatkit compare`` method) and of each preset's command.
FAMILY_PAGES = {
    "weat": "weat.md",
    "stereoset": "stereoset.md",
    "crows": "crows-pairs.md",
    "sc-weat": "wefat.md",
}
COMMAND_PAGES = {"crows": "crows-pairs.md", "stereoset": "stereoset.md", "mbe": "mbe.md"}


def _text(page: str) -> str:
    return (PAGES / page).read_text(encoding="utf-8")


def test_index_lists_every_registered_measure_with_its_neutral_value() -> None:
    lines = _text("index.md").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| measure | neutral |"))
    table = list(itertools.takewhile(lambda line: line.startswith("|"), lines[start:]))
    rows = {
        name: line
        for line in table
        if line.startswith("| `")
        for name in re.findall(r"`([a-z-]+(?::[a-z0-9_-]+)?)`", line.split("|")[1])
    }
    assert set(MEASURES) <= set(rows)
    for name, measure in MEASURES.items():
        cells = [cell.strip() for cell in rows[name].split("|")]
        neutral, side = cells[2], cells[3]
        if measure.neutral is None:
            assert neutral.startswith("none"), name
            assert side == "—", name
        else:
            assert neutral.endswith(f"{measure.neutral:g}"), name
            assert side == measure.stereotypical, name


def test_each_measure_page_names_its_measures_and_citation() -> None:
    for name, measure in MEASURES.items():
        family = name.split(":")[0]
        page = _text(FAMILY_PAGES.get(family, f"{family}.md"))
        assert f"`{name}`" in page, name
        authors = measure.citation.split(" (")[0]
        assert authors in page, (name, authors)


def test_every_compat_preset_is_documented_with_its_values() -> None:
    index = _text("index.md")
    for preset in COMPAT_PRESETS:
        assert f"`{preset}`" in index and f"`{preset}`" in _text("weat.md"), preset
    for command, presets in SENTENCE_PRESETS.items():
        page = _text(COMMAND_PAGES.get(command, f"{command}.md"))
        for preset, values in presets.items():
            assert f"`{preset}`" in index, preset
            assert f"--compat {preset}" in page or f"`{preset}`" in page, (command, preset)
            for option, value in values.items():
                flag = "--" + option.replace("_", "-")
                if isinstance(value, bool):
                    flag = flag if value else "--no-" + option.replace("_", "-")
                assert flag in page, (command, preset, flag)
