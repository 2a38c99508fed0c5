"""fastText itself: importing it, its version, training one model."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from weatkit.errors import WeatkitError
from weatkit.training.options import TrainOptions


def import_fasttext() -> ModuleType:
    """The ``fasttext`` module; WeatkitError with the install command when it is missing."""
    try:
        import fasttext
    except ImportError:
        raise WeatkitError(
            "weatkit train needs the fasttext package: pip install 'weatkit[train]'"
        ) from None
    return fasttext


def fasttext_version() -> str:
    """Version of the installed fastText distribution (``fasttext-wheel`` or ``fasttext``)."""
    for dist in ("fasttext-wheel", "fasttext"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


def fit(fasttext: ModuleType, path: Path, options: TrainOptions, verbose: int, name: str) -> Any:
    try:
        return fasttext.train_unsupervised(
            input=str(path),
            model=options.model,
            dim=options.dim,
            minn=options.minn,
            maxn=options.maxn,
            ws=options.ws,
            neg=options.neg,
            epoch=options.epoch,
            minCount=options.min_count,
            lr=float(options.lr),
            thread=options.threads,
            bucket=options.bucket,
            verbose=verbose,
        )
    except (RuntimeError, ValueError, MemoryError) as err:
        raise WeatkitError(f"fastText could not train the {name} model: {err}") from None
