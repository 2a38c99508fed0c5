"""Writing a trained model: its vector file, fastText binary and ``.train.json`` sidecar."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from weatkit import __version__
from weatkit.embeddings.export import vec_bytes
from weatkit.embeddings.vectors import WordVectors
from weatkit.training.corpus import PreparedCorpus
from weatkit.training.fit import fasttext_version
from weatkit.training.options import TrainedModel, TrainOptions
from weatkit.training.plan import ModelPlan, binary_path, metadata_path
from weatkit.training.staging import staging

_ROWS_PER_CHUNK = 4096


def write_vectors(out: BinaryIO, model: Any) -> int:
    """Write every word of a fastText ``model`` with ``model.get_word_vector`` as word2vec text
    (see :func:`weatkit.embeddings.export.vec_bytes`: 9 significant digits, float32 exact),
    streamed in chunks of rows; return the number of words."""
    words = list(model.words)
    out.write(f"{len(words)} {model.get_dimension()}\n".encode())
    for start in range(0, len(words), _ROWS_PER_CHUNK):
        chunk = words[start : start + _ROWS_PER_CHUNK]
        rows = np.stack([model.get_word_vector(word) for word in chunk])
        data = vec_bytes(WordVectors(name="chunk", words=chunk, vectors=rows))
        out.write(data[data.index(b"\n") + 1 :])  # drop the chunk's own header
    return len(words)


def _sidecar(
    plan: ModelPlan,
    corpora: Sequence[PreparedCorpus],
    options: TrainOptions,
    binary: Path | None,
    vocab_size: int,
    notes: Sequence[str],
) -> dict[str, object]:
    return {
        "tool": "weatkit train",
        "weatkit_version": __version__,
        "fasttext_version": fasttext_version(),
        "model": plan.name,
        "joint": plan.joint,
        "languages": list(plan.languages),
        "options": asdict(options),
        "position_weights": False,
        "corpora": {
            c.lang: {"fingerprint": c.fingerprint, "words_used": c.words, "words": c.total}
            for c in corpora
        },
        "words": sum(c.words for c in corpora),
        "vocab_size": vocab_size,
        "vectors": str(plan.vectors),
        "binary": None if binary is None else str(binary),
        "notes": list(notes),
    }


def write_model(
    model: Any,
    plan: ModelPlan,
    corpora: Sequence[PreparedCorpus],
    options: TrainOptions,
    save_bin: bool,
    notes: Sequence[str],
) -> TrainedModel:
    binary = binary_path(plan.vectors) if save_bin else None
    meta = metadata_path(plan.vectors)
    with staging() as stage:
        with stage.writing(plan.vectors) as out:
            vocab_size = write_vectors(out, model)
        if binary is not None:
            model.save_model(str(stage.new(binary)))
        sidecar = _sidecar(plan, corpora, options, binary, vocab_size, notes)
        # as weatkit.report.tables.manifest_bytes, whose module would import torch and pandas
        stage.new(meta).write_text(json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n")
    words = sum(c.words for c in corpora)
    return TrainedModel(plan.name, plan.languages, plan.vectors, binary, meta, words, vocab_size)
