"""Benchmark GEST and StereoSet scoring of a causal LM against the reference loops, items/s.

Usage::

    WEATKIT_DATA=../shared/data python benchmarks/bench_sentence_items.py [--parts gest,stereoset]
        [--items 400] [--loop-items 100] [--rounds 3]

The model is a random-weight 6-layer, 384-wide ``GPT2LMHeadModel`` with a 50,257-token output
layer (GPT-2's size: the LM head is most of the work per token) and a word-level tokenizer over
every word of the items scored (one token per word, as :func:`tests.tiny_models.make_word_glm`
builds it; BOS = EOS = ``<|endoftext|>``, no special tokens added, like GPT-2's).

(a) ``gest``: GEST's first causal template, ``"{s}", he`` against ``"{s}", she``, of the first
    ``--items`` GEST samples (:func:`weatkit.gest.scoring.score_gest`, ``templates=[0]``), against
    (1) the reference notebook's loop (github.com/kinit-sk/gest ``_inference.ipynb``): one
    forward pass of the prefix per sample, batch 1, ``log_softmax`` of the last position's
    logits, the two words' ids read from it; (2) a batched implementation: prefixes sorted by
    length and right-padded in batches of 64, full logits at every position, the last real
    position's row read. weatkit scores both completed texts (``prefix he``, ``prefix she``)
    through the Scorer (one scoring layer for every backend: a server scores texts, not
    next-token distributions); the hf backend runs the two as one row, the prefix, and its LM
    head only at the word's position (``read_from``): one forward pass of the prefix per
    sample, as (1) and (2), whose LM head runs at every position.
(b) ``stereoset``: StereoSet intrasentence scores (``exp`` of the mean token log-probability
    after ``<|endoftext|>``) of the three sentences of the first ``--items`` English examples
    (:class:`weatkit.stereoset.scoring.IntrasentenceScorer`), against (1) one sentence per
    forward pass, batch 1, full logits; (2) batches of 64 sentences sorted by length, full logits.

Each round times every implementation once, in an order that rotates between rounds, after a
warm-up; medians over ``--rounds``; every baseline's scores are checked against weatkit's
(largest difference printed). The load average before and after is printed. Timings are printed,
not asserted; CUDA is used when present.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sentence import _alternated, _load, padded_batches  # noqa: E402
from common import Figure, print_table  # noqa: E402

from tests.tiny_models import make_word_glm  # noqa: E402
from weatkit.embeddings.contextual import ContextualOptions  # noqa: E402
from weatkit.engine.device import resolve_device  # noqa: E402
from weatkit.gest.data import load_gest  # noqa: E402
from weatkit.gest.scoring import score_gest  # noqa: E402
from weatkit.models import pool  # noqa: E402
from weatkit.stereoset.data import load_stereoset, sample_examples  # noqa: E402
from weatkit.stereoset.scoring import IntrasentenceScorer  # noqa: E402

BATCH = 64
WORD = re.compile(r"\w+|[^\w\s]")


def _model(root: Path, texts: list[str]) -> Path:
    """The word-level tokenizer of :func:`make_word_glm` with a 6 × 384 GPT-2 of 50,257 outputs."""
    from transformers import GPT2Config, GPT2LMHeadModel

    path = make_word_glm(root / "glm", sorted({w for t in texts for w in WORD.findall(t)}))
    eot = GPT2Config.from_pretrained(path).eos_token_id
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=50_257, n_embd=384, n_layer=6, n_head=12, n_positions=512,
                        bos_token_id=eot, eos_token_id=eot)  # fmt: skip
    GPT2LMHeadModel(config).eval().save_pretrained(path)
    return path


def _gest_runs(root: Path, n: int, n_loop: int, options: ContextualOptions):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    samples = load_gest("1.0").head(n).reset_index(drop=True)
    prefixes = [f'"{s}",' for s in samples.sentence]
    path = _model(root, [*prefixes, "he she"])
    device = resolve_device(options.device)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval().to(device)
    he, she = (tok(w, add_special_tokens=False)["input_ids"][0] for w in ("he", "she"))
    encoded = [tok(p)["input_ids"] for p in prefixes]
    log10 = float(np.log(10.0))

    def reference() -> np.ndarray:
        out = []
        with torch.inference_mode():
            for ids in encoded[:n_loop]:
                logits = model(torch.tensor([ids], device=device)).logits[0, -1]
                logp = torch.log_softmax(logits.float(), dim=-1)
                out.append(float(logp[he] - logp[she]) / log10)
        return np.array(out)

    def batched() -> np.ndarray:
        out = np.zeros(len(encoded))
        with torch.inference_mode():
            for chunk, ids, mask in padded_batches(encoded, BATCH):
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
                last = logits[torch.arange(len(chunk)), mask.sum(1).to(device) - 1].float()
                logp = torch.log_softmax(last, dim=-1)
                out[chunk] = ((logp[:, he] - logp[:, she]) / log10).cpu().numpy()
        return out

    def weatkit() -> np.ndarray:
        table = score_gest(str(path), samples, kind="glm", templates=[0], options=options,
                           show_progress=False)  # fmt: skip
        return table.sort_values("sample_id")["score"].to_numpy()

    weatkit()  # warm-up: loads the weights
    what = f"GEST causal template 0, GPT-2 6×384, 50,257 vocab, {n} samples, {device}"
    return what, "samples/s", {
        "reference loop": (reference, n_loop),
        "batched, full logits": (batched, n),
        "weatkit": (weatkit, n),
    }


def _stereoset_runs(root: Path, n: int, n_loop: int, options: ContextualOptions):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dataset, _ = sample_examples(load_stereoset("en"), n, 0)
    sentences = [(s.id, s.sentence) for _, s in dataset.sentences("intrasentence")]
    path = _model(root, [text for _, text in sentences])
    device = resolve_device(options.device)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval().to(device)
    encoded = [[tok.bos_token_id, *tok(t, add_special_tokens=False)["input_ids"]]
               for _, t in sentences]  # fmt: skip
    per_example = len(sentences) / n

    def reference() -> np.ndarray:
        out = []
        with torch.inference_mode():
            for ids in encoded[: int(n_loop * per_example)]:
                x = torch.tensor([ids], device=device)
                logp = torch.log_softmax(model(x).logits[0, :-1].float(), dim=-1)
                out.append(float(logp[torch.arange(len(ids) - 1), x[0, 1:]].double().mean()))
        return np.exp(out)

    def batched() -> np.ndarray:
        out = np.zeros(len(encoded))
        with torch.inference_mode():
            for chunk, ids, mask in padded_batches(encoded, BATCH):
                ids, mask = ids.to(device), mask.to(device)
                logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
                logp = torch.log_softmax(logits, dim=-1).gather(2, ids[:, 1:, None])[..., 0]
                real = mask[:, 1:].double()
                out[chunk] = ((logp.double() * real).sum(1) / real.sum(1)).exp().cpu().numpy()
        return out

    scorer = IntrasentenceScorer(str(path), "glm", options)

    def weatkit() -> np.ndarray:
        scores = scorer.score(dataset, show_progress=False)
        return np.array([scores[sid] for sid, _ in sentences])

    weatkit()  # warm-up: loads the weights
    what = f"StereoSet intrasentence, GPT-2 6×384, 50,257 vocab, {n} examples, {device}"
    return what, "examples/s", {
        "reference loop": (reference, n_loop),
        "batched, full logits": (batched, n),
        "weatkit": (weatkit, n),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="gest,stereoset", help="comma-separated")
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--loop-items", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    options = ContextualOptions(device=str(resolve_device("auto")), cache=False)
    makers = {"gest": _gest_runs, "stereoset": _stereoset_runs}
    figures: list[Figure] = []
    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.parts.split(","):
            pool.clear()
            what, unit, runs = makers[part](Path(tmp) / part, args.items, args.loop_items,
                                             options)  # fmt: skip
            print(f"{what}:", flush=True)
            result = _alternated(runs, args.rounds, unit)
            ours, ours_scores = result["weatkit"]
            for name in ("reference loop", "batched, full logits"):
                rate, theirs = result[name]
                diff = float(np.abs(theirs - ours_scores[: len(theirs)]).max())
                note = f"max abs score difference {diff:.1e}"
                figures.append(Figure(what, ours, unit, name, rate, note, True))
            loads.append(_load())
    print_table(
        f"GEST and StereoSet scores, median of {args.rounds} alternated rounds "
        f"({'; '.join(loads)})",
        figures,
    )


if __name__ == "__main__":
    main()
