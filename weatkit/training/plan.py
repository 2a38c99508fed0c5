"""Which models a training run makes and where their files go."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from weatkit._io.paths import check_not_input
from weatkit.embeddings.loader_utils import split_compression
from weatkit.errors import WeatkitError
from weatkit.training.corpus import corpus_path
from weatkit.training.options import (
    JOINT_MODES,
    LANG_PLACEHOLDER,
    VECTOR_SUFFIXES,
    check_language,
    check_placeholders,
)


@dataclass(frozen=True)
class ModelPlan:
    name: str
    languages: tuple[str, ...]
    vectors: Path
    joint: str


def _output_path(template: str, lang: str | None) -> Path:
    text = template if lang is None else template.replace(LANG_PLACEHOLDER, lang)
    return Path(text).expanduser()


def _check_template(template: str, joint: str) -> None:
    check_placeholders(template, "output template")
    has_lang = LANG_PLACEHOLDER in template
    if joint == "multilingual" and has_lang:
        raise WeatkitError(
            f"output template {template!r}: --joint multilingual writes one file for every "
            f"language; remove {LANG_PLACEHOLDER}"
        )
    if joint != "multilingual" and not has_lang:
        raise WeatkitError(
            f"output template {template!r} must contain {LANG_PLACEHOLDER} "
            f"(--joint {joint} writes one file per language)"
        )
    base, _ = split_compression(template)
    if base.suffix.lower() not in VECTOR_SUFFIXES:
        raise WeatkitError(
            f"output template {template!r}: vectors are written as word2vec text; end it with "
            ".vec or .txt (optionally .gz, .bz2 or .xz)"
        )


def plan_models(languages: Sequence[str], template: str, joint: str, pivot: str) -> list[ModelPlan]:
    if joint not in JOINT_MODES:
        raise WeatkitError(f"joint must be one of {', '.join(JOINT_MODES)}, got {joint!r}")
    _check_template(template, joint)
    if joint == "none":
        return [ModelPlan(lang, (lang,), _output_path(template, lang), joint) for lang in languages]
    if joint == "multilingual":
        if len(languages) < 2:
            raise WeatkitError("--joint multilingual needs corpora in at least two languages")
        path = _output_path(template, None)
        return [ModelPlan("+".join(languages), tuple(languages), path, joint)]
    if pivot not in languages:
        raise WeatkitError(
            f"pivot language {pivot!r} has no corpus (corpora: {', '.join(languages)})"
        )
    others = [lang for lang in languages if lang != pivot]
    if not others:
        raise WeatkitError(f"--joint bilingual needs a corpus besides the pivot {pivot!r}")
    return [
        ModelPlan(f"{pivot}+{lang}", (pivot, lang), _output_path(template, lang), joint)
        for lang in others
    ]


def check_corpora(corpora: Mapping[str, str | os.PathLike[str]]) -> dict[str, Path]:
    if not corpora:
        raise WeatkitError("no corpora given")
    return {check_language(lang, "corpus"): corpus_path(p) for lang, p in corpora.items()}


def check_outputs(plans: Sequence[ModelPlan], sources: Mapping[str, Path]) -> None:
    """Refuse a model whose files would overwrite one of the corpora (``sources``) it reads."""
    outputs = [
        path
        for plan in plans
        for path in (plan.vectors, binary_path(plan.vectors), metadata_path(plan.vectors))
    ]
    check_not_input(outputs, sources.values())


def binary_path(vectors: Path) -> Path:
    """Where the fastText model of ``vectors`` goes: ``cce.de.vec(.gz)`` -> ``cce.de.bin``."""
    base, _ = split_compression(vectors)
    return base.with_suffix(".bin")


def metadata_path(vectors: Path) -> Path:
    """The sidecar of ``vectors``: ``cce.de.vec`` -> ``cce.de.vec.train.json``."""
    return vectors.with_name(vectors.name + ".train.json")
