"""Loading Hugging Face models: config, tokenizer, weights and the identity of the weights.

The functions behind :class:`weatkit.models.handle.ModelHandle`; other modules use the handle.
Safety defaults: weights are read from safetensors files only unless the user allows pickles
(``pytorch_model.bin``), and code shipped with a model runs only with ``trust_remote_code``.
The identity of a hub model is its id and the commit its revision resolves to (never a moving
branch name such as ``main``); a local directory is identified by a hash of its files.
"""

from __future__ import annotations

import functools
import os
import pickle
import re
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open

from weatkit._io.fingerprint import file_fingerprint
from weatkit.engine.device import resolve_device
from weatkit.errors import ModelError
from weatkit.models.options import DTYPES, LoadOptions, parse_max_memory

#: Files of a local model directory that define its vectors (for the content hash).
_MODEL_FILE_SUFFIXES = (".json", ".safetensors", ".bin", ".txt", ".model", ".py", ".pt")
#: A full git commit hash (what a hub revision resolves to).
_COMMIT = re.compile(r"[0-9a-f]{40}")
#: Seconds the one probe of the hub (:func:`hub_reachable`) waits for an answer.
_PROBE_TIMEOUT_S = 5.0


def max_length(tokenizer: Any, config: Any) -> int | None:
    """The longest input the model takes (position embeddings or tokenizer limit), if known."""
    limits = [
        getattr(config, "max_position_embeddings", None),
        getattr(config, "n_positions", None),
    ]
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and limit < 1_000_000:
        limits.append(limit)
    known = [x for x in limits if isinstance(x, int) and x > 0]
    return min(known) if known else None


def lowercases(tokenizer: Any) -> bool:
    """True when the tokenizer maps upper-case letters to lower case (an uncased model)."""
    try:
        return tokenizer.tokenize("DOCTOR") == tokenizer.tokenize("doctor")
    except Exception:  # pragma: no cover - exotic tokenizers
        return False


def is_local(model: str) -> bool:
    """True when ``model`` is an existing directory (else it is taken as a hub id)."""
    return Path(os.path.expanduser(model)).is_dir()


def looks_like_path(model: str) -> bool:
    """Hub ids are ``name`` or ``org/name``; anything else is meant as a directory."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model


def load_config(model: str, options: LoadOptions) -> Any:
    """``AutoConfig`` of a local directory or hub id, with one-line errors."""
    from transformers import AutoConfig

    if not is_local(model) and looks_like_path(model):
        raise ModelError(f"model directory not found: {model}")
    try:
        return AutoConfig.from_pretrained(os.path.expanduser(model), **_pretrained(model, options))
    except ValueError as err:
        if "trust_remote_code" in str(err):
            raise ModelError(
                f"{model} needs code from its repository: pass --trust-remote-code if you trust it"
            ) from err
        raise ModelError(f"cannot load the config of {model}: {first_line(err)}") from err
    except OSError as err:
        raise _not_cached(model, options) or ModelError(
            f"cannot load model {model}: {first_line(err)}"
        ) from err


@functools.cache
def hub_reachable() -> bool:
    """Whether the Hugging Face Hub (``HF_ENDPOINT``) answers one request within
    ``_PROBE_TIMEOUT_S`` seconds; asked once per process.

    Without this probe every file of an unreachable hub costs five ``Retrying in Ns`` lines and
    23 s of back-off in ``huggingface_hub`` before it falls back to its cache.
    """
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    try:
        get_session().head(constants.ENDPOINT, timeout=_PROBE_TIMEOUT_S)
    except Exception:  # any transport failure (DNS, refused, timeout, TLS, proxy): unreachable
        return False
    return True


def hub_offline(model: str) -> str | None:
    """Why hub id ``model`` must come from the local cache, or None when the hub may be asked
    (or ``model`` is a local directory): ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set,
    or the hub cannot be reached (:func:`hub_reachable`)."""
    from huggingface_hub import constants

    if is_local(model):
        return None
    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    if not hub_reachable():
        return f"cannot reach the Hugging Face Hub ({constants.ENDPOINT})"
    return None


def _pretrained(model: str, options: LoadOptions) -> dict[str, Any]:
    """The ``from_pretrained`` arguments every load shares: revision, remote code, and
    ``local_files_only`` when the hub is not to be asked (:func:`hub_offline`)."""
    kwargs: dict[str, Any] = {
        "revision": options.revision,
        "trust_remote_code": options.trust_remote_code,
    }
    if hub_offline(model) is not None:
        kwargs["local_files_only"] = True
    return kwargs


def _not_cached(model: str, options: LoadOptions) -> ModelError | None:
    """The one-line error for a hub model that could only come from the cache and is not
    there; None when the hub was asked (the error is then another one)."""
    from huggingface_hub import constants

    why = hub_offline(model)
    if why is None:
        return None
    what = repr(model) if options.revision is None else f"{model!r} (revision {options.revision})"
    if why.startswith("HF_HUB_OFFLINE"):
        advice = "unset it to download the model, or pass a local model directory"
    else:
        advice = (
            "use a model cached there (HF_HUB_OFFLINE=1 skips the network) or pass a local "
            "model directory"
        )
    return ModelError(
        f"{why} and {what} is not in the local cache ({constants.HF_HUB_CACHE}): {advice}"
    )


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (library errors can run to many lines)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def model_identity(model: str, config: Any, options: LoadOptions) -> dict[str, object]:
    """What identifies the weights: a content hash for a local directory, else id + commit;
    and the quantization of quantized weights (``"quantization": "8bit"``: other weights, other
    scores).

    The commit is the one the config was read from (``config._commit_hash`` where
    ``transformers`` sets it, else :func:`resolve_commit`); a revision that cannot be resolved
    is a ModelError rather than a key on a moving branch.
    """
    quantized = {"quantization": options.quantization} if options.quantization else {}
    if is_local(model):
        root = Path(os.path.expanduser(model))
        files = sorted(
            p for p in root.rglob("*") if p.is_file() and p.suffix in _MODEL_FILE_SUFFIXES
        )
        fingerprints = [{**file_fingerprint(p), "path": str(p.relative_to(root))} for p in files]
        return {"model": str(root.resolve()), "content": fingerprints, **quantized}
    commit = getattr(config, "_commit_hash", None) or resolve_commit(model, options.revision)
    if commit is None:
        raise ModelError(
            f"cannot resolve {model} revision {options.revision or 'main'!r} to a commit hash "
            "(needed to key cached results); give the commit with --revision"
        )
    return {"model": model, "revision": commit, **quantized}


def resolve_commit(model: str, revision: str | None) -> str | None:
    """The commit hash ``revision`` (None = ``main``) of hub model ``model`` stands for.

    A full commit hash is its own answer; otherwise the local hub cache answers (the config was
    just downloaded into ``snapshots/<commit>/``, and ``refs/<revision>`` names that commit), so
    no network is needed. None when the cache does not know.
    """
    if revision is not None and _COMMIT.fullmatch(revision):
        return revision
    from huggingface_hub import try_to_load_from_cache

    try:
        path = try_to_load_from_cache(model, "config.json", revision=revision)
    except ValueError:  # not a valid repository id
        return None
    if not isinstance(path, str):
        return None
    found = re.search(r"[/\\]snapshots[/\\]([0-9a-f]{40})[/\\]", path)
    return found.group(1) if found else None


def count_layers(config: Any) -> int:
    """Number of transformer layers (the encoder's for encoder-decoder models)."""
    for attr in ("num_hidden_layers", "encoder_layers", "num_layers", "n_layer"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ModelError(
        f"cannot tell how many layers {config.__class__.__name__} has (no num_hidden_layers)"
    )


def is_decoder_only(config: Any) -> bool:
    """True for causal-LM-only architectures (GPT-2, XGLM, Llama): they get a BOS token."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    if getattr(config, "is_encoder_decoder", False):
        return False
    kind = getattr(config, "model_type", "")
    return (
        kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    )


def checkpoint_head(config: Any) -> str | None:
    """``"mlm"`` or ``"glm"`` when the checkpoint's declared architecture has a masked- or
    causal-LM head (``config.architectures``), else None; encoder-decoder models give None."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    if getattr(config, "is_encoder_decoder", False):
        return None
    declared = set(getattr(config, "architectures", None) or [])
    for head, mapping in (
        ("mlm", MODEL_FOR_MASKED_LM_MAPPING_NAMES),
        ("glm", MODEL_FOR_CAUSAL_LM_MAPPING_NAMES),
    ):
        names: set[str] = set()
        for value in mapping.values():
            names.update([value] if isinstance(value, str) else value)
        if declared & names:
            return head
    return None


def load_tokenizer(model: str, options: LoadOptions, **kwargs: Any) -> Any:
    """``AutoTokenizer`` of a local directory or hub id (``kwargs`` go to ``from_pretrained``)."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            os.path.expanduser(model), **_pretrained(model, options), **kwargs
        )
    except OSError as err:
        raise _not_cached(model, options) or ModelError(
            f"cannot load the tokenizer of {model}: {first_line(err)}"
        ) from err
    except ValueError as err:
        raise ModelError(f"cannot load the tokenizer of {model}: {first_line(err)}") from err


def broken_weights_file(model: str, options: LoadOptions) -> str | None:
    """The first ``*.safetensors`` file of ``model`` (a local directory, or the hub cache's
    snapshot of its revision) whose header cannot be read, or None when none is found."""
    root: Path | None = None
    if is_local(model):
        root = Path(os.path.expanduser(model))
    else:
        from huggingface_hub import try_to_load_from_cache

        try:
            config = try_to_load_from_cache(model, "config.json", revision=options.revision)
        except ValueError:  # not a valid repository id
            return None
        root = Path(config).parent if isinstance(config, str) else None
    if root is None:
        return None
    for path in sorted(root.glob("*.safetensors")):
        try:
            with safe_open(str(path), framework="pt"):
                pass
        except (SafetensorError, OSError):
            return str(path)
    return None


def pad_id(tokenizer: Any) -> int:
    """The id batches are padded with: pad, else EOS, else UNK, else 0 (never attended)."""
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id):
        if candidate is not None:
            return int(candidate)
    return 0


class UntrainedHeadError(ModelError):
    """The checkpoint has no trained weights for the LM head asked for."""


_AUTO_CLASSES = {None: "AutoModel", "mlm": "AutoModelForMaskedLM", "glm": "AutoModelForCausalLM"}


def load_network(
    model: str, config: Any, options: LoadOptions, head: str | None = None
) -> tuple[Any, torch.device]:
    """The model in eval mode, and the device its inputs go to: the whole model on the chosen
    device, or its layers placed by accelerate (``options.device_map``), its weights quantized
    by bitsandbytes (``options.quantization``).

    Args:
        head: None for the bare network (its encoder for encoder-decoder models), ``"mlm"``
            for ``AutoModelForMaskedLM`` or ``"glm"`` for ``AutoModelForCausalLM``.

    Weights load from safetensors unless ``options.allow_pickle``; code from the repository
    runs only with ``options.trust_remote_code``.
    """
    import transformers
    from transformers.utils import logging as hf_logging

    auto = getattr(transformers, _AUTO_CLASSES[head])
    device = resolve_device(options.device)
    placement = _placement(options, device)
    hf_logging.disable_progress_bar()  # one "Loading weights" bar per model is noise here
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the load report is checked below, not printed
    try:
        network, info = auto.from_pretrained(
            os.path.expanduser(model),
            config=config,
            dtype=DTYPES[options.dtype],
            use_safetensors=None if options.allow_pickle else True,
            output_loading_info=True,
            **placement,
            **_pretrained(model, options),
        )
    except torch.OutOfMemoryError as err:
        raise ModelError(
            f"out of memory loading {model}; try --dtype bfloat16, --quantization 8bit or "
            "--device-map auto"
        ) from err
    except (SafetensorError, RuntimeError, EOFError, pickle.UnpicklingError) as err:
        # a truncated or corrupt weights file (an interrupted download, a full disk), or
        # weights that do not fit the config
        broken = broken_weights_file(model, options)
        if broken is None:
            raise ModelError(f"cannot load the weights of {model}: {first_line(err)}") from err
        raise ModelError(
            f"cannot load the weights of {model}: {broken}: {first_line(err)} (a truncated or "
            "corrupt file: delete it and download or save the model again)"
        ) from err
    except (OSError, ValueError) as err:
        message = first_line(err)
        if not options.allow_pickle and "no file named model.safetensors" in message:
            raise ModelError(
                f"{model} has no safetensors weights; pass --allow-pickle to load its "
                f"pytorch_model.bin (a pickle: only for files you trust)"
            ) from err
        if head is not None and "Unrecognized configuration class" in message:
            what = "causal" if head == "glm" else "masked"
            raise ModelError(
                f"{model} ({config.__class__.__name__}) is not a {what} language model "
                f"(kind={head!r})"
            ) from err
        offline = _not_cached(model, options) if isinstance(err, OSError) else None
        raise offline or ModelError(f"cannot load the weights of {model}: {message}") from err
    finally:
        hf_logging.set_verbosity(verbosity)
    missing = sorted(info.get("missing_keys") or [])
    if head is not None and missing:
        what = "masked" if head == "mlm" else "causal"
        raise UntrainedHeadError(
            f"{model} has no trained {what}-LM weights for {', '.join(missing[:3])}"
            f"{' …' if len(missing) > 3 else ''}: its likelihoods would be random"
        )
    if head is None and getattr(config, "is_encoder_decoder", False):
        network = network.get_encoder()
    network.eval()
    if placement:  # accelerate or bitsandbytes placed the weights
        offloaded = [k for k, v in getattr(network, "hf_device_map", {}).items() if v == "disk"]
        if offloaded:
            raise ModelError(
                f"{model} does not fit in the memory --max-memory {options.max_memory or '(free)'} "
                f"allows: {len(offloaded)} of its modules would be read from disk; give the "
                "devices more (e.g. cpu=64GiB) or use --quantization 8bit"
            )
        return network, network.get_input_embeddings().weight.device
    try:
        network.to(device)
    except torch.OutOfMemoryError as err:
        raise ModelError(
            f"out of memory moving {model} to {device}; try --dtype bfloat16, "
            "--quantization 8bit or --device-map auto"
        ) from err
    return network, device


def _placement(options: LoadOptions, device: torch.device) -> dict[str, Any]:
    """The ``from_pretrained`` arguments that place and quantize the weights: accelerate's
    ``device_map`` and ``max_memory``, bitsandbytes' ``quantization_config`` (a quantized model
    without a device map goes whole onto ``device``); {} for a plain load."""
    placement: dict[str, Any] = {}
    if options.device_map is not None:
        placement["device_map"] = options.device_map
        if options.max_memory is not None:
            placement["max_memory"] = parse_max_memory(options.max_memory)
    if options.quantization is not None:
        from transformers import BitsAndBytesConfig

        bits = {"8bit": {"load_in_8bit": True}, "4bit": {"load_in_4bit": True}}
        extra = (
            {"bnb_4bit_compute_dtype": DTYPES[options.dtype]}
            if options.quantization == "4bit"
            else {}
        )
        placement["quantization_config"] = BitsAndBytesConfig(**bits[options.quantization], **extra)
        placement.setdefault("device_map", {"": device})
    return placement
