"""How a model is loaded, asked and pooled into word vectors, declared once: :data:`CONTEXTUAL`.

One section, the fields of :class:`~weatkit.embeddings.contextual.ContextualOptions` (file
section ``contextual``): how an item's sub-word vectors are pooled (``--subwords``, ``--span``,
``--template``, ...), how the model is loaded (``--dtype``, ``--device-map``,
``--quantization``, ...) and how a ``vllm:`` or ``openai:`` model's backend is asked. The
commands that take word vectors from a transformer and those that score sentences with a
language model read it alike. Read through :mod:`weatkit.config.declare`; listed with every
other section in :data:`weatkit.config.schema.SECTIONS`, where callers import it from.
"""

from __future__ import annotations

from weatkit.config.declare import Option, Section

# defaults equal ContextualOptions' own (tests/test_config_schema.py)

CONTEXTUAL = Section(
    "contextual",
    (
        Option(
            "subwords",
            "str",
            "sum",
            "How an item's sub-word vectors are pooled (sum = CA-WEAT).",
            "--subwords",
            choices=("sum", "mean", "first", "last"),
        ),
        Option(
            "special_tokens",
            "bool",
            True,
            "Encode items with the model's special tokens ([CLS] w [SEP], <s> w </s>, BOS).",
            "--special-tokens",
        ),
        Option(
            "span",
            "str",
            "item",
            "Which positions the sub-word pooling takes: the item's own tokens (item) or every "
            "position of the encoded sequence, special tokens included (sequence: one vector per "
            "sentence; with first, BERT's [CLS]).",
            "--span",
            choices=("item", "sequence"),
        ),
        Option(
            "template",
            "optional_str",
            None,
            'Embed each item in a sentence, e.g. "This is {}."; only its tokens are pooled.',
            "--template",
        ),
        Option("lower", "bool", False, "Lower-case items before encoding."),
        Option(
            "dtype",
            "str",
            "float32",
            "Model weights' dtype.",
            "--dtype",
            choices=("float32", "float16", "bfloat16"),
        ),
        Option(
            "batch_size",
            "int_or_auto",
            64,
            "Items per forward pass, or auto: the largest that fits (halved on out-of-memory).",
            "--batch-size",
        ),
        Option("device", "str", "auto", "auto, cpu, cuda[:N] or mps.", "--device"),
        Option(
            "revision",
            "optional_str",
            None,
            "Hub revision (branch, tag or commit) of hub models.",
            "--revision",
        ),
        Option(
            "trust_remote_code",
            "bool",
            False,
            "Allow models that run code from their repository (only for models you trust).",
            "--trust-remote-code",
        ),
        Option(
            "allow_pickle",
            "bool",
            False,
            "Allow pytorch_model.bin weights (a pickle); safetensors otherwise.",
            "--allow-pickle",
        ),
        Option(
            "cache",
            "bool",
            True,
            "Reuse and store computed vectors and scores in the on-disk cache.",
            "--cache",
        ),
        Option(
            "device_map",
            "optional_str",
            None,
            "Shard the model's layers over every GPU, then CPU memory (accelerate).",
            "--device-map",
            choices=("auto", "balanced", "sequential"),
        ),
        Option(
            "max_memory",
            "optional_str",
            None,
            "Memory each device may hold when the layers are sharded, e.g. 0=20GiB,cpu=64GiB.",
            "--max-memory",
        ),
        Option(
            "quantization",
            "optional_str",
            None,
            "8-bit or 4-bit weights through bitsandbytes (CUDA only; pip install "
            "'weatkit[quant]').",
            "--quantization",
            choices=("8bit", "4bit"),
        ),
    ),
)

# Issue 25, model backends: vLLM's tensor parallelism (weatkit.models.options.LoadOptions) and
# how an openai: model's server is asked (weatkit.scoring.options.OpenAIOptions), declared in
# their own block.
CONTEXTUAL = Section(
    CONTEXTUAL.name,
    (
        *CONTEXTUAL.options,
        Option(
            "tensor_parallel",
            "int",
            1,
            "vllm: models: shard the model over this many GPUs (vLLM's tensor parallelism; "
            "pip install 'weatkit[vllm]').",
            "--tensor-parallel",
        ),
        Option(
            "timeout",
            "float",
            60.0,
            "openai: models: seconds one request to the server may take before it fails (and "
            "is retried).",
            "--api-timeout",
        ),
        Option(
            "max_retries",
            "int",
            2,
            "openai: models: retries of a request after a connection error, a timeout, or a "
            "408, 409, 429 or 5xx answer (exponential backoff).",
            "--api-max-retries",
        ),
        Option(
            "concurrency",
            "int",
            4,
            "openai: models: requests to the server in flight at once.",
            "--api-concurrency",
        ),
    ),
)
