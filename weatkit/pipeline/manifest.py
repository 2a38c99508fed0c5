"""The manifest of a run: versions, configuration, seeds, inputs and timings."""

from __future__ import annotations

import platform
import sys
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

import numpy as np
import torch

import weatkit
from weatkit.embeddings.spec import EmbeddingsSpec
from weatkit.embeddings.vectors import WordVectors
from weatkit.pipeline.run_config import RunConfig

if TYPE_CHECKING:  # pragma: no cover
    from gensim.models import KeyedVectors


def entry_label(entry: str | EmbeddingsSpec | WordVectors | KeyedVectors) -> str:
    """How the manifest's ``config`` writes one ``embeddings`` entry."""
    if isinstance(entry, EmbeddingsSpec):
        return f"{entry.name}={entry.location}" + (
            f"@{entry.layer}" if entry.layer is not None else ""
        )
    return entry if isinstance(entry, str) else f"<in-memory {type(entry).__name__}>"


def environment() -> dict[str, object]:
    """Versions, platform and command line, for manifests."""
    return {
        "weatkit_version": weatkit.__version__,
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "command": sys.argv,
    }


def run_manifest(
    config: RunConfig,
    device: torch.device,
    sources: list[dict[str, str]],
    inputs: list[dict[str, object]],
    skipped: list[dict[str, str]],
    report: list[str],
    timings: dict[str, float],
) -> dict[str, object]:
    """The manifest of a run: :func:`environment`, the device, the configuration, its seed,
    list sources, embeddings inputs, skipped tests, report lines and timings."""
    return {
        **environment(),
        "device": str(device),
        "config": asdict(replace(config, embeddings=tuple(map(entry_label, config.embeddings)))),
        "seed": config.engine.seed,
        "list_sources": sources,
        "embeddings": inputs,
        "skipped": skipped,
        "report": report,
        "timings_s": timings,
    }
