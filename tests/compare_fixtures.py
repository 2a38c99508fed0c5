"""Tiny masked LMs for ``weatkit compare`` tests: whole GEST words plus single characters.

The WordPiece vocabulary holds the GEST test words whole (so GEST templates score) and every
ASCII letter as a word start and as a ``##`` continuation, so any word of the WEAT lists becomes
a distinct character sequence (distinct word vectors) and any sentence can be scored.
"""

from __future__ import annotations

import string
from pathlib import Path

import torch

from tests.tiny_models import GEST_PUNCTUATION, GEST_WORDS, _bert_config, _gest_tokenizer


def make_char_mlm(path: Path, seed: int) -> Path:
    """A 2-layer ``BertForMaskedLM`` (hidden 24) whose random weights depend on ``seed``."""
    from tokenizers import processors
    from transformers import BertForMaskedLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    letters = list(string.ascii_letters)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = list(
        dict.fromkeys(
            [*specials, *GEST_WORDS, *GEST_PUNCTUATION, *letters, *(f"##{c}" for c in letters)]
        )
    )
    post = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))],
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=_gest_tokenizer(vocab, wordpiece=True, unk="[UNK]", post_processor=post),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=512,
    )
    torch.manual_seed(seed)
    config = _bert_config(len(vocab))
    config.max_position_embeddings = 512
    BertForMaskedLM(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path
