"""The backends, registered once with their metadata, and :func:`get_scorer`.

Each backend is one module of this package (``weatkit.scoring.<name>``) with a ``make_scorer
(spec, options) -> Scorer`` function, imported only when a spec names it (lm-evaluation-harness
keeps one file per model backend behind one registry the same way).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from weatkit.errors import ConfigError
from weatkit.scoring.base import Scorer
from weatkit.scoring.spec import ModelSpec, parse_model_spec


@dataclass(frozen=True)
class Backend:
    """One backend's metadata.

    Attributes:
        name: the spec prefix (``hf``, ``vllm``, ``openai``, ``st``).
        module: the module implementing it (``make_scorer``).
        capabilities: what its models can offer (a model may offer less: a server without
            prompt log-probabilities has no ``causal``).
        requires: import names the backend needs, with the pip extra that installs them.
        description: one line for ``--help`` and the docs.
    """

    name: str
    module: str
    capabilities: frozenset[str]
    requires: tuple[tuple[str, str], ...]
    description: str

    def check_installed(self) -> None:
        """A one-line :class:`~weatkit.errors.ConfigError` naming the extra when a required
        package is missing."""
        for package, extra in self.requires:
            if importlib.util.find_spec(package) is None:
                raise ConfigError(
                    f"the {self.name} backend needs {package}: pip install 'weatkit[{extra}]'"
                )


BACKENDS: Mapping[str, Backend] = MappingProxyType(
    {
        "hf": Backend(
            "hf",
            "weatkit.scoring.hf",
            frozenset({"causal", "embed"}),
            (("transformers", "weatkit"),),
            "in process, Hugging Face transformers (dtype, device map, quantization)",
        ),
        "vllm": Backend(
            "vllm",
            "weatkit.scoring.vllm",
            frozenset({"causal"}),
            (("vllm", "vllm"),),
            "vLLM's offline engine with prompt log-probabilities (CUDA)",
        ),
        "openai": Backend(
            "openai",
            "weatkit.scoring.openai",
            frozenset({"causal", "embed"}),
            (("openai", "openai"),),
            "an OpenAI-compatible server: /v1/completions (echo, logprobs), /v1/embeddings",
        ),
        "st": Backend(
            "st",
            "weatkit.scoring.st",
            frozenset({"embed"}),
            (("sentence_transformers", "st"),),
            "a sentence-transformers model: its own pooling and normalisation, sentence "
            "vectors only",
        ),
    }
)


def get_scorer(spec: str | ModelSpec, options: Any = None) -> Scorer:
    """The :class:`~weatkit.scoring.base.Scorer` of ``spec`` under ``options`` (the backend's
    own options object, or one with its fields such as a command's ``ContextualOptions``; None
    for its defaults), its causal scores cached on disk (:class:`weatkit.scoring.cache.
    CachedScorer`; not when ``options.cache`` is False). An option the backend does not take
    (``--tensor-parallel`` of a model that is not ``vllm:``, :meth:`weatkit.models.options.
    LoadOptions.check_backend`; ``--batch-size auto`` of an ``openai:`` model, whose server
    batches what it is sent itself) is a one-line :class:`ConfigError`."""
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    backend = BACKENDS[parsed.backend]
    if parsed.backend == "openai" and getattr(options, "batch_size", None) == "auto":
        raise ConfigError(
            "--batch-size auto is for hf: models (the largest forward pass that fits in memory); "
            "an openai: server batches the requests it is sent itself: --api-concurrency sets "
            "how many are in flight"
        )
    if getattr(options, "tensor_parallel", 1) != 1:  # torch is imported only then
        from weatkit.models.options import LoadOptions

        LoadOptions.of(options).check_backend(parsed.backend)
    backend.check_installed()
    try:
        module = importlib.import_module(backend.module)
    except ModuleNotFoundError as exc:
        if exc.name != backend.module:
            raise
        raise ConfigError(f"the {backend.name} backend is not available in this version") from None
    from weatkit.scoring.cache import CachedScorer

    return CachedScorer(module.make_scorer(parsed, options), options)


def model_kind(spec: str | ModelSpec, options: Any = None) -> str:
    """``"mlm"`` (a masked LM) or ``"glm"`` (a causal LM) of a model spec: an ``hf`` model's
    from its config (:meth:`weatkit.models.handle.ModelHandle.lm_kind`; reads the config, not
    the weights), every other backend's models are causal LMs."""
    parsed = parse_model_spec(spec) if isinstance(spec, str) else spec
    if parsed.backend != "hf":
        return "glm"
    from weatkit.models.pool import get_model

    return get_model(parsed.model, options).lm_kind()
