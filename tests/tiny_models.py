"""Tiny, randomly initialised Hugging Face models (and tokenizers) built offline for tests.

Each ``make_*`` function seeds torch, builds a model from a config, writes it and a matching
tokenizer with a hand-written vocabulary to a directory with ``save_pretrained`` and returns the
directory. ``manual_word_vector`` independently recomputes a word vector from such a directory.

Tokenisations (checked when each tokenizer is built, see ``EXPECTED_*``):

* BERT (WordPiece, cased unless ``lowercase=True``): whole words ``doctor nurse he she man woman
  flower insect good bad this This is a sun . ...``; ``roses`` = ``rose ##s``, ``tulip`` =
  ``tul ##ip``, ``tulips`` = ``tul ##ip ##s``, ``sunflower`` = ``sun ##flow ##er``.
* XLM-R (Unigram + Metaspace): whole words ``▁doctor ▁nurse ...``; ``roses`` = ``▁rose s``,
  ``tulip`` = ``▁tul ip``, ``sunflower`` = ``▁sun flow er``.
* GPT-2 (byte-level BPE, no specials added): whole words ``doctor ...`` and ``Ġdoctor ...``;
  ``roses`` = ``rose s``, ``tulip`` = ``tul ip``, ``tulips`` = ``tul ip s``,
  ``sunflower`` = ``sun flow er``, ``flower`` = ``flow er`` (but `` flower`` = ``Ġflower``).
* BART (byte-level BPE, same merges as GPT-2, ``<s> ... </s>``): as GPT-2.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import torch

WHOLE_WORDS = (
    "doctor", "nurse", "he", "she", "man", "woman", "flower", "insect", "good", "bad",
    "this", "This", "is", "a", "sun", "pleasant", "unpleasant", "tree",
)  # fmt: skip
PIECES = ("rose", "tul", "sun", "flow")
CONTINUATIONS = ("s", "ip", "flow", "er")

# word -> the tokens it is split into when encoded alone (without special tokens)
EXPECTED_BERT = {
    "doctor": ["doctor"],
    "she": ["she"],
    "roses": ["rose", "##s"],
    "tulip": ["tul", "##ip"],
    "tulips": ["tul", "##ip", "##s"],
    "sunflower": ["sun", "##flow", "##er"],
    "sun flower": ["sun", "flower"],
    "This is roses.": ["This", "is", "rose", "##s", "."],
}
EXPECTED_XLMR = {
    "doctor": ["▁doctor"],
    "she": ["▁she"],
    "roses": ["▁rose", "s"],
    "tulip": ["▁tul", "ip"],
    "tulips": ["▁tul", "ip", "s"],
    "sunflower": ["▁sun", "flow", "er"],
    "sun flower": ["▁sun", "▁flower"],
}
EXPECTED_GPT2 = {
    "doctor": ["doctor"],
    "she": ["she"],
    "woman": ["woman"],
    "roses": ["rose", "s"],
    "tulip": ["tul", "ip"],
    "tulips": ["tul", "ip", "s"],
    "sunflower": ["sun", "flow", "er"],
    "flower": ["flow", "er"],
    "sun flower": ["sun", "Ġflower"],
    "This is roses.": ["This", "Ġis", "Ġrose", "s", "."],
}


def _config_kwargs() -> dict:
    return {"num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 48}


def _bert_config(n_vocab: int) -> Any:
    """The 2-layer, hidden-24 BERT configuration of the tiny BERT models."""
    from transformers import BertConfig

    return BertConfig(
        vocab_size=n_vocab,
        hidden_size=24,
        max_position_embeddings=64,
        type_vocab_size=2,
        pad_token_id=0,
        **_config_kwargs(),
    )


def _gpt2_config(n_vocab: int, *, bos: int, eos: int) -> Any:
    """The 2-layer, hidden-24 GPT-2 configuration of the tiny causal models."""
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=n_vocab, n_embd=24, n_layer=2, n_head=2, n_inner=48, n_positions=64,
        bos_token_id=bos, eos_token_id=eos,
    )  # fmt: skip


# --------------------------------------------------------------------------------------- BERT


def make_bert(path: Path, *, lowercase: bool = False) -> Path:
    """A 2-layer BERT (hidden 24) with a cased (or uncased) WordPiece vocabulary."""
    from transformers import BertModel, BertTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words = [w for w in WHOLE_WORDS if not (lowercase and w != w.lower())]
    vocab = [*specials, *words, ".", ",", "rose", "tul"]
    vocab += [f"##{c}" for c in CONTINUATIONS]
    vocab = list(dict.fromkeys(vocab))
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizerFast(str(vocab_file), do_lower_case=lowercase)
    tok.model_max_length = 64
    for text, tokens in EXPECTED_BERT.items():
        if lowercase and text != text.lower():
            continue
        got = tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])
        assert got == tokens, (text, got)
    config = _bert_config(len(vocab))
    model = BertModel(config).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# -------------------------------------------------------------------------------------- XLM-R


def make_xlmr(path: Path) -> Path:
    """A 2-layer XLM-R (hidden 24) with a Unigram + Metaspace tokenizer (``<s> ... </s>``)."""
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    pieces: list[tuple[str, float]] = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    pieces += [(f"▁{w}", -2.0) for w in WHOLE_WORDS]
    pieces += [(f"▁{p}", -3.0) for p in PIECES if p not in WHOLE_WORDS]
    pieces += [(c, -3.0) for c in CONTINUATIONS]
    pieces += [(".", -2.0), (",", -2.0), ("▁", -5.0)]
    pieces += [(c, -10.0) for c in "abcdefghijklmnopqrstuvwxyzT"]
    pieces = list({p: (p, s) for p, s in pieces}.values())
    pieces.append(("<mask>", 0.0))
    tok = XLMRobertaTokenizerFast(vocab=pieces)
    tok.model_max_length = 62
    for text, tokens in EXPECTED_XLMR.items():
        got = tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])
        assert got == tokens, (text, got)
    assert tok.convert_ids_to_tokens(tok("roses")["input_ids"]) == ["<s>", "▁rose", "s", "</s>"]
    config = XLMRobertaConfig(
        vocab_size=len(pieces),
        hidden_size=24,
        max_position_embeddings=64,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **_config_kwargs(),
    )
    model = XLMRobertaModel(config).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# ------------------------------------------------------------------------- byte-level BPE


def _byte_level_bpe(specials_first: list[str], specials_last: list[str]):
    """(vocab, merges) of a byte-level BPE whose merges build ``WHOLE_WORDS`` and the pieces.

    Merges are added word by word: the word is tokenised with the merges so far and its pieces
    are then joined left to right, so later merges never pre-empt earlier words' merges.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    merges: list[tuple[str, str]] = []
    vocab_list: list[str] = [*specials_first, *alphabet]

    def pieces_of(word: str) -> list[str]:
        vocab = {t: i for i, t in enumerate(vocab_list)}
        bpe = Tokenizer(models.BPE(vocab=vocab, merges=list(merges)))
        return bpe.encode(word).tokens

    def add(word: str) -> None:
        parts = pieces_of(word)
        while len(parts) > 1:
            a, b = parts[0], parts[1]
            merges.append((a, b))
            vocab_list.append(a + b)
            parts = [a + b, *parts[2:]]

    # word pieces first, then whole words with and without the leading-space marker
    for p in ("rose", "tul", "ip", "sun", "flow", "er"):
        add(p)
    for w in WHOLE_WORDS:
        if w != "flower":  # bare "flower" stays "flow er"; " flower" is one token
            add(w)
        add("Ġ" + w)
    add("Ġrose")
    vocab_list = list(dict.fromkeys([*vocab_list, *specials_last]))
    vocab = {t: i for i, t in enumerate(vocab_list)}
    return vocab, merges


def _check_bpe(tok, expected: dict[str, list[str]]) -> None:
    for text, tokens in expected.items():
        got = tok.convert_ids_to_tokens(tok(text, add_special_tokens=False)["input_ids"])
        assert got == tokens, (text, got)


def make_gpt2(path: Path) -> Path:
    """A 2-layer GPT-2 (hidden 24): byte-level BPE, no pad token, no specials added."""
    from transformers import GPT2Model, GPT2TokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    vocab, merges = _byte_level_bpe([], ["<|endoftext|>"])
    tok = GPT2TokenizerFast(vocab=vocab, merges=merges)
    tok.model_max_length = 64
    _check_bpe(tok, EXPECTED_GPT2)
    assert tok.pad_token is None
    assert tok("roses")["input_ids"] == tok("roses", add_special_tokens=False)["input_ids"]
    eot = vocab["<|endoftext|>"]
    config = _gpt2_config(len(vocab), bos=eot, eos=eot)
    model = GPT2Model(config).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_bart(path: Path) -> Path:
    """A 2+2-layer BART (d_model 24) with a byte-level BPE tokenizer adding ``<s> ... </s>``."""
    from transformers import BartConfig, BartModel, BartTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    vocab, merges = _byte_level_bpe(["<s>", "<pad>", "</s>", "<unk>"], ["<mask>"])
    tok = BartTokenizerFast(vocab=vocab, merges=merges)
    tok.model_max_length = 62
    _check_bpe(tok, EXPECTED_GPT2)
    assert tok.convert_ids_to_tokens(tok("roses")["input_ids"]) == ["<s>", "rose", "s", "</s>"]
    config = BartConfig(
        vocab_size=len(vocab),
        d_model=24,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=48,
        decoder_ffn_dim=48,
        max_position_embeddings=64,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_eos_token_id=2,
    )
    model = BartModel(config).eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# ----------------------------------------------------------------------------- the reference

_POOLS = {
    "sum": lambda h: h.sum(0),
    "mean": lambda h: h.mean(0),
    "first": lambda h: h[0],
    "last": lambda h: h[-1],
}


@functools.lru_cache(maxsize=16)
def _load(model_dir: str):
    """AutoTokenizer + AutoModel (float32, eval, CPU) of a directory, loaded once per process."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, dtype=torch.float32).eval()
    return tok, model


def manual_word_vector(
    model_dir: Path | str,
    text: str,
    positions: list[int],
    layer: int,
    pool: str = "sum",
    *,
    add_special_tokens: bool = True,
) -> np.ndarray:
    """``hidden_states[layer][0, positions]`` of one unpadded input ``tok(text)``, pooled.

    Decoder-only models (no specials added by the tokenizer) get the BOS id prepended when
    ``add_special_tokens`` is true; encoder-decoder models use the encoder alone.
    """
    tok, model = _load(str(model_dir))
    ids = list(tok(text, add_special_tokens=add_special_tokens)["input_ids"])
    is_decoder_only = not model.config.is_encoder_decoder and model.config.model_type == "gpt2"
    if is_decoder_only and add_special_tokens and (not ids or ids[0] != tok.bos_token_id):
        ids = [tok.bos_token_id, *ids]
    net = model.get_encoder() if model.config.is_encoder_decoder else model
    with torch.no_grad():
        out = net(input_ids=torch.tensor([ids]), output_hidden_states=True)
    hidden = out.hidden_states[layer][0, positions]
    return _POOLS[pool](hidden).numpy().astype(np.float32)


# ------------------------------------------------------------------------------- GEST scoring

#: Words of the GEST tests' sentences and templates (each one token of the word-level tokenizers).
GEST_WORDS = (
    "I", "am", "was", "happy", "sad", "strong", "cried", "often", "never", "lift", "heavy",
    "weights", "every", "day", "love", "flowers", "my", "job", "saw", "today", "yesterday",
    "emotivny", "emotivna", "the", "The", "said", "he", "she", "He", "She", "man", "woman",
)  # fmt: skip
GEST_PUNCTUATION = ('"', ",", ".", ":", "!", "?")
#: Pieces of the split (WordPiece) vocabulary: He = H ##e, She = S ##he, woman = wo ##man,
#: women = wo ##men; the whole words He, She and woman are left out of that vocabulary.
GEST_SPLIT_PIECES = ("H", "##e", "S", "##he", "wo", "##man", "##men")


def _gest_tokenizer(vocab: list[str], *, wordpiece: bool, unk: str, post_processor=None):
    """A ``tokenizers`` object: word-level (or WordPiece) over whitespace + punctuation splits."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    table = {t: i for i, t in enumerate(vocab)}
    if wordpiece:
        model = models.WordPiece(vocab=table, unk_token=unk, max_input_chars_per_word=100)
    else:
        model = models.WordLevel(vocab=table, unk_token=unk)
    tk = Tokenizer(model)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()  # whitespace, every punctuation mark
    if post_processor is not None:
        tk.post_processor = post_processor
    return tk


def make_gest_mlm(
    path: Path,
    *,
    split_words: bool = False,
    drop: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    max_length: int = 64,
) -> Path:
    """A 2-layer ``BertForMaskedLM`` (hidden 24) with a word-level tokenizer for GEST tests.

    ``[CLS] ... [SEP]`` are added; ``[MASK]`` is the mask token. With ``split_words`` the
    tokenizer is WordPiece and ``He``, ``She``, ``woman`` (and ``women``) are two tokens each
    (see :data:`GEST_SPLIT_PIECES`); ``drop`` leaves words out of the vocabulary (``[UNK]``),
    ``extra`` adds words (e.g. of EuroGEST sentences) after the GEST words.
    """
    from tokenizers import processors
    from transformers import BertForMaskedLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1)
    split = {"He", "She", "woman"} if split_words else set()
    words = [w for w in (*GEST_WORDS, *extra) if w not in split and w not in drop]
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = list(GEST_SPLIT_PIECES) if split_words else []
    vocab = list(dict.fromkeys([*specials, *words, *GEST_PUNCTUATION, *pieces]))
    post = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))],
    )
    tk = _gest_tokenizer(vocab, wordpiece=split_words, unk="[UNK]", post_processor=post)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
    )
    config = _bert_config(len(vocab))
    config.max_position_embeddings = max_length
    BertForMaskedLM(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_gest_glm(
    path: Path,
    *,
    bos: bool = False,
    drop: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    max_length: int = 64,
) -> Path:
    """A 2-layer ``GPT2LMHeadModel`` (hidden 24) with a word-level tokenizer for GEST tests.

    No pad token (like GPT-2). By default no special token is added; with ``bos`` the tokenizer
    puts ``<s>`` in front of every input (like Llama). ``drop`` leaves words out (``<unk>``),
    ``extra`` adds words after the GEST words.
    """
    from tokenizers import processors
    from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(2)
    words = [w for w in (*GEST_WORDS, *extra) if w not in drop]
    vocab = list(dict.fromkeys(["<unk>", "<s>", "<|endoftext|>", *words, *GEST_PUNCTUATION]))
    post = (
        processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)]) if bos else None
    )
    tk = _gest_tokenizer(vocab, wordpiece=False, unk="<unk>", post_processor=post)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="<unk>",
        bos_token="<s>" if bos else "<|endoftext|>",
        eos_token="<|endoftext|>",
        model_max_length=max_length,
    )
    config = _gpt2_config(
        len(vocab),
        bos=vocab.index("<s>" if bos else "<|endoftext|>"),
        eos=vocab.index("<|endoftext|>"),
    )
    config.n_positions = max_length
    GPT2LMHeadModel(config).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


# -------------------------------------------------------------------------- StereoSet scoring

#: Words of the StereoSet tests' contexts and sentences (one token each in the word-level
#: tokenizers).
STEREOSET_WORDS = (
    "The", "the", "My", "nurse", "doctor", "friend", "was", "is", "very", "said", "then", "left",
    "and", "a", "caring", "strong", "purple", "smart", "lazy", "table", "hello", "goodbye",
    "banana", "kind", "rude", "unfriendly", "green",
)  # fmt: skip
STEREOSET_PUNCTUATION = (".", ",", "!", "?", "'")
#: Pieces of the split (WordPiece) vocabulary: caring = car ##ing, banana = ban ##ana,
#: unfriendly = un ##friend ##ly; the whole words are left out of that vocabulary.
STEREOSET_SPLIT = {
    "caring": ("car", "##ing"),
    "banana": ("ban", "##ana"),
    "unfriendly": ("un", "##friend", "##ly"),
}


def make_stereoset_mlm(path: Path, *, split_words: bool = False) -> Path:
    """A 2-layer ``BertForMaskedLM`` (hidden 24) with a word-level tokenizer for StereoSet tests.

    ``[CLS] ... [SEP]`` are added; ``[MASK]`` is the mask token. With ``split_words`` the
    tokenizer is WordPiece (with its decoder, so ``decode([un, ##friend]) == "unfriend"``) and the
    words of :data:`STEREOSET_SPLIT` are 2 or 3 tokens.
    """
    from tokenizers import decoders, processors
    from transformers import BertForMaskedLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(3)
    split = set(STEREOSET_SPLIT) if split_words else set()
    words = [w for w in STEREOSET_WORDS if w not in split]
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = [p for w in sorted(split) for p in STEREOSET_SPLIT[w]]
    vocab = list(dict.fromkeys([*specials, *words, *STEREOSET_PUNCTUATION, *pieces]))
    post = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))],
    )
    tk = _gest_tokenizer(vocab, wordpiece=split_words, unk="[UNK]", post_processor=post)
    if split_words:
        tk.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=64,
    )
    for word in split:
        got = tok.convert_ids_to_tokens(tok(word, add_special_tokens=False)["input_ids"])
        assert tuple(got) == STEREOSET_SPLIT[word], (word, got)
    BertForMaskedLM(_bert_config(len(vocab))).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_stereoset_glm(path: Path) -> Path:
    """A 2-layer ``GPT2LMHeadModel`` (hidden 24) with a word-level tokenizer for StereoSet
    tests: no pad token and no special tokens added (like GPT-2); BOS = EOS =
    ``<|endoftext|>``."""
    from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(4)
    vocab = list(
        dict.fromkeys(["<unk>", "<|endoftext|>", *STEREOSET_WORDS, *STEREOSET_PUNCTUATION])
    )
    tk = _gest_tokenizer(vocab, wordpiece=False, unk="<unk>")
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="<unk>",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        model_max_length=64,
    )
    eot = vocab.index("<|endoftext|>")
    GPT2LMHeadModel(_gpt2_config(len(vocab), bos=eot, eos=eot)).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


# ------------------------------------------------------------- word-level models of any vocabulary


def make_word_mlm(path: Path, words: list[str], *, seed: int = 5) -> Path:
    """A 2-layer ``BertForMaskedLM`` (hidden 24) whose word-level tokenizer knows ``words`` (and
    splits on whitespace and every punctuation mark): ``[CLS] ... [SEP]``, ``[MASK]``."""
    from tokenizers import processors
    from transformers import BertForMaskedLM, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    vocab = list(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]))
    post = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))],
    )
    tk = _gest_tokenizer(vocab, wordpiece=False, unk="[UNK]", post_processor=post)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=64,
    )  # fmt: skip
    BertForMaskedLM(_bert_config(len(vocab))).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_word_glm(path: Path, words: list[str], *, seed: int = 6) -> Path:
    """A 2-layer ``GPT2LMHeadModel`` (hidden 24) whose word-level tokenizer knows ``words``; no
    pad token, no special tokens added, BOS = EOS = ``<|endoftext|>`` (like GPT-2)."""
    from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    vocab = list(dict.fromkeys(["<unk>", "<|endoftext|>", *words]))
    tk = _gest_tokenizer(vocab, wordpiece=False, unk="<unk>")
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="<unk>", bos_token="<|endoftext|>",
        eos_token="<|endoftext|>", model_max_length=64,
    )  # fmt: skip
    eot = vocab.index("<|endoftext|>")
    GPT2LMHeadModel(_gpt2_config(len(vocab), bos=eot, eos=eot)).eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


# ------------------------------------------------- causal LMs of three architectures, any text

#: Architectures of :func:`make_causal_lm`: GPT-2 (no BOS added; BOS = EOS = ``<|endoftext|>``),
#: Llama (the tokenizer adds ``<s>``), Qwen2 (no BOS token at all; EOS ``<|endoftext|>``). It
#: also makes ``xglm``: the tokenizer puts ``</s>`` in front, not its BOS ``<s>`` (as XGLM's).
CAUSAL_ARCHS = ("gpt2", "llama", "qwen2")
#: Tokens the causal LMs of :func:`make_causal_lm` take (real sentences are many byte tokens).
CAUSAL_MAX_LENGTH = 256


def make_causal_lm(path: Path, arch: str, *, seed: int = 7, hidden: int = 24) -> Path:
    """A 2-layer causal LM (hidden 24, 2 heads) of ``arch`` (:data:`CAUSAL_ARCHS`) with a
    byte-level BPE tokenizer (the merges of :func:`make_gpt2`), so every text has tokens and
    character offsets: unknown words fall back to bytes. ``hidden`` widens it (vLLM's attention
    kernels take heads of 64: ``hidden=128``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import (
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        PreTrainedTokenizerFast,
        Qwen2Config,
        Qwen2ForCausalLM,
        XGLMConfig,
        XGLMForCausalLM,
    )

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    specials = {"gpt2": ["<|endoftext|>"], "llama": ["<unk>", "<s>", "</s>"],
                "qwen2": ["<|endoftext|>"],
                "xglm": ["<s>", "<pad>", "</s>", "<unk>"]}[arch]  # fmt: skip
    # XGLM's specials come first, as in its vocabulary: the pad id is its positions' padding index
    first, last = (specials, []) if arch == "xglm" else ([], specials)
    vocab, merges = _byte_level_bpe(first, last)
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    if arch == "llama":
        tk.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", vocab["<s>"])]
        )
        names = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    elif arch == "xglm":
        tk.post_processor = processors.TemplateProcessing(
            single="</s> $A", special_tokens=[("</s>", vocab["</s>"])]
        )
        names = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>",
                 "unk_token": "<unk>"}  # fmt: skip
    elif arch == "gpt2":
        names = {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"}
    else:
        names = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, model_max_length=CAUSAL_MAX_LENGTH, **names)
    tok.add_special_tokens({k: v for k, v in names.items()})
    size = dict(hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=1,
                max_position_embeddings=CAUSAL_MAX_LENGTH)  # fmt: skip
    if arch == "gpt2":
        eot = vocab["<|endoftext|>"]
        config = _gpt2_config(len(vocab), bos=eot, eos=eot)
        config.n_positions = CAUSAL_MAX_LENGTH
        config.n_embd, config.n_inner = hidden, 2 * hidden
        model = GPT2LMHeadModel(config)
    elif arch == "llama":
        config = LlamaConfig(vocab_size=len(vocab), bos_token_id=vocab["<s>"],
                             eos_token_id=vocab["</s>"], **size)  # fmt: skip
        model = LlamaForCausalLM(config)
    elif arch == "qwen2":
        eot = vocab["<|endoftext|>"]
        config = Qwen2Config(vocab_size=len(vocab), bos_token_id=None, eos_token_id=eot, **size)
        model = Qwen2ForCausalLM(config)
    elif arch == "xglm":
        config = XGLMConfig(
            vocab_size=len(vocab), d_model=hidden, ffn_dim=2 * hidden, num_layers=2,
            attention_heads=2, max_position_embeddings=CAUSAL_MAX_LENGTH,
            pad_token_id=vocab["<pad>"], bos_token_id=vocab["<s>"], eos_token_id=vocab["</s>"],
            decoder_start_token_id=vocab["</s>"],
        )  # fmt: skip
        model = XGLMForCausalLM(config)
    else:
        raise ValueError(arch)
    with torch.no_grad():  # random weights large enough that token log-probabilities differ
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.5 * (24 / hidden) ** 0.5)
    model.eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_char_mlm(path: Path, *, seed: int = 8) -> Path:
    """A 2-layer ``BertForMaskedLM`` (hidden 24) whose cased WordPiece vocabulary has a few whole
    words and every ASCII letter, digit and punctuation mark alone and as ``##`` continuation, so
    any ASCII word is one or more tokens (``tall`` = ``t ##a ##l ##l``; ``she`` whole)."""
    import string

    from transformers import BertForMaskedLM, BertTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    chars = string.ascii_letters + string.digits
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WHOLE_WORDS, "the", "The", "He",
             "She", "was", *chars, *string.punctuation, *(f"##{c}" for c in chars)]  # fmt: skip
    vocab = list(dict.fromkeys(vocab))
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizerFast(str(vocab_file), do_lower_case=False)
    tok.model_max_length = 256
    assert tok.tokenize("tall she") == ["t", "##a", "##l", "##l", "she"]
    config = _bert_config(len(vocab))
    config.max_position_embeddings = 256
    model = BertForMaskedLM(config)
    with torch.no_grad():  # weights large enough that a token's context changes its score
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    model.eval().save_pretrained(path)
    tok.save_pretrained(path)
    return path


#: Masked-LM architectures of :func:`make_mlm` (``deberta-v2-lm``: DeBERTa-v2 with the
#: non-legacy ``lm_predictions`` head).
MLM_ARCHS = ("bert", "roberta", "xlm-roberta", "camembert", "deberta", "deberta-v2",
             "deberta-v2-lm", "albert", "distilbert", "electra")  # fmt: skip
#: Token ids the models of :func:`make_mlm` take (no tokenizer is saved with them).
MLM_VOCAB = 40


def make_mlm(path: Path, arch: str, *, seed: int = 9) -> Path:
    """A 2-layer masked LM (hidden 24) of ``arch`` (:data:`MLM_ARCHS`), :data:`MLM_VOCAB` token
    ids, weights only (no tokenizer): for checks on token ids. Weights are drawn large enough
    that each part of the head (transform, activation, norm, decoder) moves the logits."""
    import transformers as tf

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    size = dict(vocab_size=MLM_VOCAB, hidden_size=24, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=48, max_position_embeddings=64, pad_token_id=0)  # fmt: skip
    if arch == "bert":
        model = tf.BertForMaskedLM(tf.BertConfig(**size))
    elif arch in ("roberta", "xlm-roberta", "camembert"):
        name = {"roberta": "Roberta", "xlm-roberta": "XLMRoberta", "camembert": "Camembert"}[arch]
        config = getattr(tf, f"{name}Config")(**size, bos_token_id=1, eos_token_id=2)
        model = getattr(tf, f"{name}ForMaskedLM")(config)
    elif arch == "deberta":
        model = tf.DebertaForMaskedLM(tf.DebertaConfig(**size, relative_attention=True))
    elif arch in ("deberta-v2", "deberta-v2-lm"):
        config = tf.DebertaV2Config(**size, relative_attention=True, position_buckets=8,
                                    legacy=arch == "deberta-v2")  # fmt: skip
        model = tf.DebertaV2ForMaskedLM(config)
    elif arch == "albert":
        model = tf.AlbertForMaskedLM(tf.AlbertConfig(**size, embedding_size=12))
    elif arch == "distilbert":
        config = tf.DistilBertConfig(vocab_size=MLM_VOCAB, dim=24, n_layers=2, n_heads=2,
                                     hidden_dim=48, max_position_embeddings=64, pad_token_id=0)
        model = tf.DistilBertForMaskedLM(config)
    elif arch == "electra":
        model = tf.ElectraForMaskedLM(tf.ElectraConfig(**size, embedding_size=12))
    else:
        raise ValueError(arch)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    model.eval().save_pretrained(path)
    return path
