"""A small grid on generated vectors: two languages, three spaces, two baselines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from weatkit.lists.sources import select_lists

LANGS = ("en", "de")
LISTS = ["x-weat", "ca-weat"]
TESTS = ["weat1", "weat2"]
DIM = 12


def write_vec(path: Path, vocab: dict[str, np.ndarray]) -> None:
    lines = [f"{len(vocab)} {DIM}"]
    lines += [w + " " + " ".join(repr(float(x)) for x in v) for w, v in vocab.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def break_vec(path: Path) -> list[str]:
    """Cut the last value of line 4 of a .vec file (a job reading it fails: "line 4: ... has 11
    values, expected 12"); its previous lines, to put back."""
    lines = path.read_text(encoding="utf-8").splitlines()
    broken = [*lines[:3], lines[3].rsplit(" ", 1)[0], *lines[4:]]
    path.write_text("\n".join(broken) + "\n", encoding="utf-8")
    return lines


def make_grid(root: Path, **overrides: object) -> Path:
    """Vectors ``mono``, ``rotated`` (mono × an orthogonal matrix) and ``noisy`` (mono plus
    noise, a few words missing) per language, and ``experiment.yaml`` comparing the last two
    with ``mono``."""
    root.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    rotation, _ = np.linalg.qr(rng.normal(size=(DIM, DIM)))
    for lang in LANGS:
        tests = select_lists(LISTS, (lang,), tests=TESTS).tests
        words = sorted(set().union(*(t.vocabulary() for t in tests)))
        mono = {w: rng.normal(size=DIM) for w in words}
        write_vec(root / f"mono.{lang}.vec", mono)
        write_vec(root / f"rotated.{lang}.vec", {w: v @ rotation for w, v in mono.items()})
        noisy = {w: v + 0.8 * rng.normal(size=DIM) for i, (w, v) in enumerate(mono.items())}
        write_vec(
            root / f"noisy.{lang}.vec", {w: v for i, (w, v) in enumerate(noisy.items()) if i % 17}
        )
    experiment = {
        "output": "out",
        "languages": list(LANGS),
        "lists": LISTS,
        "tests": TESTS,
        "min_coverage": 0.5,
        "reliability": True,
        "engine": {"n_bootstrap": 200, "n_permutations": 200, "seed": 3},
        "embeddings": [
            {"name": "mono", "path": "mono.{lang}.vec"},
            {"name": "rotated", "path": "rotated.{lang}.vec", "baseline": "mono"},
            {"name": "noisy", "path": "noisy.{lang}.vec", "baseline": "mono"},
        ],
        **overrides,
    }
    path = root / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False), encoding="utf-8")
    return path
