"""Word vectors of decoder-only LMs (issue 25 §2): Llama (the tokenizer adds ``<s>``), Qwen2 (no
BOS token at all) and XGLM (the tokenizer puts ``</s>`` in front, not its BOS ``<s>``), tiny and
random-weight (tests/tiny_models.py), at the embedding layer, a middle layer and the last one,
pooled over the item's tokens by ``mean`` and ``last``, alone and in a template, against a plain
loop: one unpadded transformers forward pass with ``output_hidden_states`` over the ids the
tokenizer gives (its own start token, none for Qwen2), the item's tokens found by character
offsets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.tiny_models import make_causal_lm, make_char_mlm
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions

ARCHS = ("llama", "qwen2", "xglm")
#: One token, several tokens, two words, bytes of accented letters.
ITEMS = ["doctor", "sunflower", "tulips", "rotten egg", "Ünïcödé", "she"]
LAYERS = [0, 1, -1]  # embedding layer, the middle one of 2, the last
TEMPLATES = [None, "This is {}.", "{} is here"]


@pytest.fixture(scope="module", params=ARCHS)
def decoder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("decoder") / request.param, request.param)


def plain_vector(model_dir: Path, item: str, template: str | None, layer: int, pool: str):
    """``mean`` or ``last`` of ``hidden_states[layer]`` over the item's tokens in one forward
    pass over ``tokenizer(sentence)`` (the special tokens it adds, nothing else)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    sentence = item if template is None else template.replace("{}", item)
    start = 0 if template is None else template.index("{}")
    enc = tok(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
    positions = [
        i
        for i, ((a, b), special) in enumerate(
            zip(enc["offset_mapping"], enc["special_tokens_mask"], strict=True)
        )
        if not special and a < start + len(item) and b > start
    ]
    with torch.no_grad():
        out = model(input_ids=torch.tensor([enc["input_ids"]]), output_hidden_states=True)
    hidden = out.hidden_states[layer][0, positions]
    return (hidden[-1] if pool == "last" else hidden.mean(0)).numpy()


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("pool", ["last", "mean"])
def test_vectors_equal_a_plain_loop(
    decoder: Path, template: str | None, pool: str
) -> None:
    options = ContextualOptions(subwords=pool, template=template, batch_size=4, cache=False)
    got = ContextualExtractor(str(decoder), options).extract(ITEMS, LAYERS, show_progress=False)
    for layer in LAYERS:
        assert got[layer].words == ITEMS
        for item, vector in zip(ITEMS, got[layer].vectors, strict=True):
            expected = plain_vector(decoder, item, template, layer, pool)
            np.testing.assert_allclose(vector, expected, rtol=1e-5, atol=1e-4,
                                       err_msg=f"{item!r} at layer {layer}")  # fmt: skip


def test_the_start_token_is_the_tokenizers_own(tmp_path: Path) -> None:
    """XGLM's tokenizer starts every input with ``</s>`` (fairseq's document start); no ``<s>``
    is put in front of it (the extractor read ``<s> </s> w`` before), and the vectors cached
    before that are not reused (decoder-only keys only)."""
    from transformers import AutoTokenizer

    model = make_causal_lm(tmp_path / "xglm", "xglm")
    tok = AutoTokenizer.from_pretrained(model)
    assert tok.convert_ids_to_tokens(tok("she")["input_ids"]) == ["</s>", "she"]
    extractor = ContextualExtractor(str(model), ContextualOptions())
    encoded = extractor._encode(extractor._load(), *extractor._placed("she"))
    assert tok.convert_ids_to_tokens(encoded.ids) == ["</s>", "she"] and encoded.positions == [1]
    cache = extractor._items.cache
    assert cache is not None and cache.inputs["decoder_vectors"] == 2
    bert = ContextualExtractor(str(make_char_mlm(tmp_path / "bert")), ContextualOptions())
    assert bert._items.cache is not None and "decoder_vectors" not in bert._items.cache.inputs
