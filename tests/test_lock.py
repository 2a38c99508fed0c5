"""constraints.txt is a lock of every package the tests install, generated from pyproject.toml
(issue 24 §1): a requirement added to pyproject.toml without refreshing the lock fails here."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
#: The command that refreshes the lock; constraints.txt's header and the README give it.
REFRESH = (
    "uv pip compile pyproject.toml --extra test --universal --python-version 3.11 "
    "-c constraints.in -o constraints.txt"
)


def _pins() -> dict[str, list[Requirement]]:
    """Each locked package's pins (one per environment marker) by canonical name."""
    pins: dict[str, list[Requirement]] = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            req = Requirement(line)
            pins.setdefault(canonicalize_name(req.name), []).append(req)
    return pins


def _tested_requirements(extra: str = "test") -> list[Requirement]:
    """The project's dependencies and those of ``extra``, self-referencing extras expanded."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    todo, seen = [extra], set()
    while todo:
        name = todo.pop()
        seen.add(name)
        for spec in project["optional-dependencies"][name]:
            req = Requirement(spec)
            if canonicalize_name(req.name) == canonicalize_name(project["name"]):
                todo.extend(sorted(req.extras - seen))
            else:
                reqs.append(req)
    return reqs


def test_lock_pins_every_tested_requirement_within_its_range() -> None:
    pins = _pins()
    for req in _tested_requirements():
        if req.marker is not None and not req.marker.evaluate({"extra": "test"}):
            continue
        here = [
            p for p in pins.get(canonicalize_name(req.name), [])
            if p.marker is None or p.marker.evaluate()
        ]
        assert len(here) == 1, f"constraints.txt has no pin of {req.name}: refresh the lock"
        (pin,) = here
        (spec,) = pin.specifier
        assert spec.operator == "==", f"{pin}: not a pin"
        assert req.specifier.contains(spec.version, prereleases=True), (
            f"constraints.txt pins {pin}, outside pyproject.toml's {req}: refresh the lock"
        )


def test_lock_says_how_it_was_made() -> None:
    assert REFRESH in (REPO / "constraints.txt").read_text()
    assert "torch==2.13.0" in (REPO / "constraints.in").read_text()
    assert [str(p) for p in _pins()["torch"]] == ["torch==2.13.0"]
