"""Benchmark the sentence-level engine: MBE pair weighting and batched AUL/AULA scoring.

Usage::

    WEATKIT_DATA=../shared/data python benchmarks/bench_sentence.py [--pairs 5000] [--sentences 512]

(a) MBE score (Kaneko et al. 2022, Eq. 2) over all n × n male × female pairs of random scores
    and 768-d embeddings: the tensorised :func:`weatkit.mbe.score.mbe_score` against a Python
    double loop over pairs (timed on a 200 × 200 corner and scaled by the pair count), and the
    McNemar test against a random indicator;
(b) AUL/AULA of CrowS-Pairs sentences with a BERT-base-sized masked LM (random weights, built
    from ``BertConfig()``; the work is the same as for trained weights): batched
    (``--batch-size``) against one sentence per forward pass, in sentences per second.

Timings are printed, not asserted; CUDA is used when present.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weatkit.crows.data import load_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.engine.device import resolve_device
from weatkit.mbe.score import mbe_score, mcnemar_random
from weatkit.sentence import MaskedLM


def _loop_score(sm, sf, em, ef) -> float:
    num = den = 0.0
    for i in range(len(sm)):
        for j in range(len(sf)):
            c = float(em[i] @ ef[j]) / (np.linalg.norm(em[i]) * np.linalg.norm(ef[j]))
            num += c * (sm[i] > sf[j])
            den += c
    return 100 * num / den


def bench_mbe(n: int) -> None:
    rng = np.random.default_rng(0)
    sm, sf = rng.normal(size=n), rng.normal(size=n)
    em, ef = rng.random((n, 768)).astype(np.float32), rng.random((n, 768)).astype(np.float32)
    t0 = time.perf_counter()
    mbe_score(sm, sf, em, ef, weight="cosine")
    fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    mcnemar_random(sm, sf, seed=0)
    test = time.perf_counter() - t0
    k = 200
    t0 = time.perf_counter()
    _loop_score(sm[:k], sf[:k], em[:k], ef[:k])
    loop = (time.perf_counter() - t0) * (n * n) / (k * k)
    print(f"MBE score, {n} × {n} pairs: {fast:.2f} s tensorised vs {loop:.0f} s loop "
          f"(estimated) = {loop / fast:.0f}×; McNemar {test:.2f} s")  # fmt: skip


def bench_scoring(n: int, batch_size: int) -> None:
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    pairs = load_crows(lang="en")
    sentences = list(pairs["sent_more"][:n])
    with tempfile.TemporaryDirectory() as tmp:
        words = sorted({w.strip(".,!?\"'").lower() for s in sentences for w in s.split()})
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *[w for w in words if w]]
        (Path(tmp) / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)))
        tok = BertTokenizerFast(vocab_file=str(Path(tmp) / "vocab.txt"))
        tok.save_pretrained(tmp)
        torch.manual_seed(0)
        BertForMaskedLM(BertConfig(vocab_size=len(tok))).eval().save_pretrained(tmp)
        for size in (batch_size, 1):
            lm = MaskedLM(tmp, ContextualOptions(batch_size=size, cache=False))
            tokens = lm.tokenize(sentences if size > 1 else sentences[: max(1, n // 4)])
            t0 = time.perf_counter()
            lm.unmasked(tokens, show_progress=False)
            rate = len(tokens) / (time.perf_counter() - t0)
            label = f"batch {size}" if size > 1 else "one at a time"
            print(f"AUL/AULA, BERT-base size on {resolve_device('auto')}: {rate:.0f} sentences/s "
                  f"({label})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    bench_mbe(args.pairs)
    bench_scoring(args.sentences, args.batch_size)


if __name__ == "__main__":
    main()
