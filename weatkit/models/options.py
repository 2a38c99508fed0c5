"""How a model's weights are loaded: the options that make two loads of one model differ.

:class:`LoadOptions` is shared by the loading functions (:mod:`weatkit.models.hub`), the handle
(:mod:`weatkit.models.handle`) and the pool's key (:mod:`weatkit.models.pool`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from weatkit.errors import ModelError

#: ``--dtype`` -> the weights' torch dtype.
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class LoadOptions:
    """How a model's weights are loaded (everything that makes two loads differ).

    Attributes:
        dtype: weights' dtype: ``float32``, ``float16`` or ``bfloat16``.
        device: ``auto`` (CUDA when available, then MPS, then the CPU), ``cpu``, ``cuda[:N]``,
            ``mps``.
        revision: hub revision (branch, tag or commit); resolved to a commit hash.
        trust_remote_code: allow models whose code lives in their repository (runs that code).
        allow_pickle: allow ``pytorch_model.bin`` weights (a pickle); safetensors otherwise.
    """

    dtype: str = "float32"
    device: str = "auto"
    revision: str | None = None
    trust_remote_code: bool = False
    allow_pickle: bool = False

    @classmethod
    def of(cls, options: object | None) -> LoadOptions:
        """The loading options of any options object with these attributes (e.g.
        :class:`weatkit.embeddings.contextual.ContextualOptions`); None gives the defaults."""
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        return cls(**{f.name: getattr(options, f.name) for f in fields(cls)})

    def validate(self) -> None:
        """ModelError for an unknown dtype."""
        if self.dtype not in DTYPES:
            raise ModelError(f"unknown dtype {self.dtype!r}: choose {', '.join(DTYPES)}")
