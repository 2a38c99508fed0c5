"""How a model's weights are loaded: the options that make two loads of one model differ.

:class:`LoadOptions` is shared by the loading functions (:mod:`weatkit.models.hub`), the handle
(:mod:`weatkit.models.handle`) and the pool's key (:mod:`weatkit.models.pool`). Besides dtype and
device it places a model too large for one device (``device_map``: accelerate shards its layers
over every GPU, then CPU memory, within ``max_memory``) and quantizes its weights
(``quantization``: bitsandbytes 8-bit or 4-bit, CUDA only). The dtype and the quantization change
the scores (:meth:`LoadOptions.weights`); where the layers sit does not. The ``vllm`` backend
(:mod:`weatkit.scoring.vllm`) reads the same options, and shards a model over GPUs itself
(``tensor_parallel``); :meth:`LoadOptions.check_backend` refuses an option a backend does not
take.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, fields

import torch

from weatkit.errors import ConfigError, ModelError

#: ``--dtype`` -> the weights' torch dtype.
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
#: ``--device-map``: accelerate's placements (``auto`` = ``balanced`` over the GPUs, then CPU).
DEVICE_MAPS = ("auto", "balanced", "sequential")
#: ``--quantization``: bitsandbytes' 8-bit (LLM.int8) or 4-bit (NF4) weights.
QUANTIZATIONS = ("8bit", "4bit")
#: The extra that installs bitsandbytes.
QUANT_EXTRA = "pip install 'weatkit[quant]'"

_UNITS = {
    "": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]i?b)?", re.IGNORECASE)


def parse_max_memory(text: str) -> dict[int | str, int]:
    """``0=20GiB,cpu=64GiB`` as accelerate's ``max_memory``: ``{0: 21474836480, "cpu": ...}``.

    Each entry is ``DEVICE=SIZE``: DEVICE a GPU index (``0``, ``1``), ``cpu``, ``mps`` or
    ``disk``; SIZE a number of bytes or a number with a unit, KiB/MiB/GiB/TiB (powers of 2) or
    KB/MB/GB/TB (powers of 10), case-insensitive.

    Raises:
        ConfigError: an entry that is not of this form, named (``field="max_memory"``).

    Example:
        >>> parse_max_memory("0=1.5GiB, cpu=64GB")
        {0: 1610612736, 'cpu': 64000000000}
    """
    budget: dict[int | str, int] = {}
    for entry in (e.strip() for e in text.split(",")):
        device, sep, size = (part.strip() for part in entry.partition("="))
        key: int | str = int(device) if device.isdigit() else device.lower()
        match = _SIZE.fullmatch(size)
        if not sep or not (isinstance(key, int) or key in ("cpu", "mps", "disk")):
            raise ConfigError(
                f"{entry!r} is not DEVICE=SIZE (DEVICE a GPU index, cpu, mps or disk; e.g. "
                "0=20GiB,cpu=64GiB)",
                field="max_memory",
            )
        if match is None:
            raise ConfigError(
                f"{entry!r}: {size!r} is not a size such as 20GiB, 500MB or a number of bytes",
                field="max_memory",
            )
        if key in budget:
            raise ConfigError(f"{device} is given twice in {text!r}", field="max_memory")
        budget[key] = int(float(match.group(1)) * _UNITS[(match.group(2) or "").lower()])
    return budget


@dataclass(frozen=True)
class LoadOptions:
    """How a model's weights are loaded (everything that makes two loads differ).

    Attributes:
        dtype: weights' dtype: ``float32``, ``float16`` or ``bfloat16`` (on CPU too).
        device: ``auto`` (CUDA when available, then MPS, then the CPU), ``cpu``, ``cuda[:N]``,
            ``mps``.
        revision: hub revision (branch, tag or commit); resolved to a commit hash.
        trust_remote_code: allow models whose code lives in their repository (runs that code).
        allow_pickle: allow ``pytorch_model.bin`` weights (a pickle); safetensors otherwise.
        device_map: ``auto``, ``balanced`` or ``sequential``: accelerate places the layers over
            every GPU, then CPU memory (``device`` stays ``auto``); None: the whole model on
            ``device``.
        max_memory: with ``device_map``, the memory each device may hold, ``0=20GiB,cpu=64GiB``
            (:func:`parse_max_memory`); None: what is free.
        quantization: ``8bit`` or ``4bit`` weights through bitsandbytes (CUDA only; computed in
            ``dtype``); None: unquantized.
        tensor_parallel: ``vllm:`` models only: the GPUs vLLM shards the model over (its
            ``tensor_parallel_size``); 1 for every other backend.
    """

    dtype: str = "float32"
    device: str = "auto"
    revision: str | None = None
    trust_remote_code: bool = False
    allow_pickle: bool = False
    device_map: str | None = None
    max_memory: str | None = None
    quantization: str | None = None
    tensor_parallel: int = 1

    @classmethod
    def of(cls, options: object | None) -> LoadOptions:
        """The loading options of any options object with these attributes (e.g.
        :class:`weatkit.embeddings.contextual.ContextualOptions`; those it lacks keep their
        defaults); None gives the defaults."""
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        return cls(**{f.name: getattr(options, f.name, f.default) for f in fields(cls)})

    def validate(self) -> None:
        """:class:`ConfigError` naming the field of an unknown dtype, device map or
        quantization, a bad ``max_memory``, ``max_memory`` without a device map, a device
        map with a chosen ``device``, or a ``tensor_parallel`` that is not a whole number >= 1."""
        for name, value, choices in (
            ("dtype", self.dtype, tuple(DTYPES)),
            ("device_map", self.device_map, DEVICE_MAPS),
            ("quantization", self.quantization, QUANTIZATIONS),
        ):
            if value is not None and value not in choices:
                raise ConfigError(
                    f"unknown {name.replace('_', ' ')} {value!r}: choose {', '.join(choices)}",
                    field=name,
                )
        if self.max_memory is not None:
            if self.device_map is None:
                raise ConfigError(
                    "needs a device map (--device-map auto): it bounds what each device holds",
                    field="max_memory",
                )
            parse_max_memory(self.max_memory)
        if self.device_map is not None and self.device != "auto":
            raise ConfigError(
                f"places the layers itself over every GPU and the CPU; leave --device at auto "
                f"(got {self.device!r}) or drop --device-map",
                field="device_map",
            )
        n = self.tensor_parallel
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"must be a whole number of GPUs >= 1, got {n!r}",
                              field="tensor_parallel")  # fmt: skip

    def check_backend(self, backend: str) -> None:
        """A one-line :class:`ConfigError` naming the option that ``backend`` (``hf``, ``vllm``,
        ``openai``) does not take: ``--tensor-parallel`` above 1 is vLLM's alone; a ``vllm:``
        model takes no ``--device-map``, ``--max-memory`` or ``--quantization`` (accelerate's
        and bitsandbytes') and runs on the GPUs CUDA makes visible (``--device`` auto or cuda)."""
        if self.tensor_parallel != 1 and backend != "vllm":
            instead = {
                "hf": "an hf: model is spread over several GPUs with --device-map auto",
                "openai": "an openai: server shards its model itself (e.g. vllm serve "
                f"--tensor-parallel-size {self.tensor_parallel})",
            }
            raise ConfigError(
                f"--tensor-parallel {self.tensor_parallel} is for vllm: models; "
                + instead.get(backend, f"{backend}: models take none")
            )
        if backend != "vllm":
            return
        for flag, value in (
            ("--device-map", self.device_map),
            ("--max-memory", self.max_memory),
            ("--quantization", self.quantization),
        ):
            if value is not None:
                raise ConfigError(
                    f"{flag} {value} is for hf: models; a vllm: model is sharded over GPUs with "
                    "--tensor-parallel N and reads a quantized checkpoint's own quantization"
                )
        if self.device not in ("auto", "cuda"):
            raise ConfigError(
                f"--device {self.device}: a vllm: model runs on the GPUs CUDA_VISIBLE_DEVICES "
                "lists (--tensor-parallel N of them); leave --device at auto"
            )

    def weights(self) -> dict[str, object]:
        """What of these options changes the weights, hence every score and vector: the dtype,
        and the quantization when there is one (part of the model's identity in cache keys)."""
        return {"dtype": self.dtype} | (
            {"quantization": self.quantization} if self.quantization else {}
        )

    def check_installed(self) -> None:
        """A one-line :class:`~weatkit.errors.ModelError` naming the option when what it needs
        is missing here: accelerate for ``device_map``; CUDA and bitsandbytes (the ``quant``
        extra) for ``quantization``."""
        if self.device_map is not None and importlib.util.find_spec("accelerate") is None:
            raise ModelError(
                f"--device-map {self.device_map} needs accelerate: pip install accelerate"
            )
        if self.quantization is None:
            return
        missing = []
        if not torch.cuda.is_available():
            missing.append("no CUDA device is available")
        elif self.device.split(":")[0] not in ("auto", "cuda"):
            missing.append(f"--device is {self.device}")
        if importlib.util.find_spec("bitsandbytes") is None:
            missing.append(f"bitsandbytes is not installed ({QUANT_EXTRA})")
        if missing:
            raise ModelError(
                f"--quantization {self.quantization} needs CUDA and bitsandbytes: "
                + "; ".join(missing)
            )
