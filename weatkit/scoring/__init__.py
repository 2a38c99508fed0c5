"""The scoring layer: the one way a measure reaches a model (issue 25).

A *model spec* names a backend and a model in one syntax, declared once
(:class:`~weatkit.scoring.spec.ModelSpec`)::

    hf:ID_OR_DIR              in process, Hugging Face transformers (a bare id or directory too)
    vllm:ID_OR_DIR            vLLM's offline engine (optional extra, CUDA)
    openai:BASE_URL#MODEL     any OpenAI-compatible server (vllm serve, llama.cpp, SGLang, TGI,
                              OpenAI); the API key only from $WEATKIT_OPENAI_API_KEY (or
                              $OPENAI_API_KEY), never written anywhere

Every backend implements :class:`~weatkit.scoring.base.Scorer`: the log-probability of every
token of a text given the tokens before it (causal LMs), and text embeddings. The registry
(:data:`~weatkit.scoring.registry.BACKENDS`) records what each backend offers and which extra
it needs; :func:`~weatkit.scoring.registry.get_scorer` loads a backend module only when a spec
names it, so ``import weatkit.scoring`` loads neither torch nor an HTTP client.
"""

from __future__ import annotations

from weatkit.scoring.base import CAPABILITIES, Scorer, TokenLogprobs
from weatkit.scoring.registry import BACKENDS, Backend, get_scorer
from weatkit.scoring.spec import ModelSpec, parse_model_spec

__all__ = [
    "BACKENDS",
    "CAPABILITIES",
    "Backend",
    "ModelSpec",
    "Scorer",
    "TokenLogprobs",
    "get_scorer",
    "parse_model_spec",
]
