"""Benchmark the static text loader against gensim on a large generated ``.vec`` file.

Usage::

    python benchmarks/bench_loader.py --size-mb 200 --tmp /tmp/weatkit-bench

Generates (or reuses) a word2vec text file of about ``--size-mb`` MB with random words and
random floats, then times, on a warm page cache:

(a) ``load_static(path, words=<--words random present words>)``
(b) gensim ``KeyedVectors.load_word2vec_format(path)`` (full load, as most toolkits do)
(c) ``load_static(path, words=..., first_n=10000)``
(d) ``load_static(path)`` (our full load, for reference)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weatkit.embeddings.static import load_static

_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype="S1")
_BLOCK = 2000


def _random_words(rng: np.random.Generator, start: int, n: int) -> list[bytes]:
    """``n`` random lower-case words, unique thanks to a base-36 suffix of the row number."""
    lengths = rng.integers(3, 9, size=n)
    letters = _LETTERS[rng.integers(0, 26, size=int(lengths.sum()))].tobytes()
    out, pos = [], 0
    for i, length in enumerate(lengths):
        out.append(letters[pos : pos + length] + np.base_repr(start + i, 36).lower().encode())
        pos += length
    return out


def generate(path: Path, size_mb: float, dim: int, seed: int = 0) -> list[str]:
    """Write the file (header + rows) unless a complete one of the same size exists.

    Returns the words of the file (kept in a ``.words`` sidecar for reuse).
    """
    meta_path = path.with_suffix(".meta.json")
    words_path = path.with_suffix(".words")
    target = int(size_mb * 2**20)
    if path.exists() and meta_path.exists() and words_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("bytes") == path.stat().st_size and meta.get("target") == target:
            print(f"reusing {path} ({path.stat().st_size / 2**20:.0f} MB, {meta['rows']} rows)")
            return words_path.read_text(encoding="utf-8").split("\n")
    print(f"generating {path} (~{size_mb:g} MB, dim {dim}) ...", flush=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pool = [f"{x:.5f}".encode() for x in rng.standard_normal(1 << 16) * 0.3]
    words: list[bytes] = []
    header_width = 40  # "N DIM" padded with spaces, filled in at the end
    size = header_width
    with open(path, "wb") as f:
        f.write(b" " * (header_width - 1) + b"\n")
        while size < target:
            block_words = _random_words(rng, len(words), _BLOCK)
            idx = rng.integers(0, len(pool), size=(_BLOCK, dim))
            for w, row in zip(block_words, idx, strict=True):
                if size >= target:
                    break
                line = w + b" " + b" ".join([pool[i] for i in row]) + b"\n"
                f.write(line)
                size += len(line)
                words.append(w)
        f.seek(0)
        f.write(f"{len(words)} {dim}".encode())
    decoded = [w.decode() for w in words]
    words_path.write_text("\n".join(decoded), encoding="utf-8")
    meta = {"bytes": path.stat().st_size, "target": target, "rows": len(words), "dim": dim}
    meta_path.write_text(json.dumps(meta))
    print(f"  {len(words)} rows written in {time.perf_counter() - t0:.1f} s")
    return decoded


def _warm(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def _time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=1000, help="file size (default 1000)")
    parser.add_argument("--dim", type=int, default=300, help="vector dimension (default 300)")
    parser.add_argument("--words", type=int, default=500, help="words to look up (default 500)")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()) / "weatkit-bench")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measure (best is kept)")
    parser.add_argument("--skip-gensim", action="store_true", help="do not time gensim")
    args = parser.parse_args(argv)

    args.tmp.mkdir(parents=True, exist_ok=True)
    path = args.tmp / f"bench-{args.size_mb:g}MB-{args.dim}d.vec"
    vocab = generate(path, args.size_mb, args.dim)
    rng = np.random.default_rng(1)
    wanted = [
        vocab[i] for i in rng.choice(len(vocab), size=min(args.words, len(vocab)), replace=False)
    ]
    mb = path.stat().st_size / 2**20
    _warm(path)

    measures: list[tuple[str, float]] = []
    t, wv = _time(lambda: load_static(path, words=wanted), args.repeat)
    assert len(wv) == len(wanted)  # type: ignore[arg-type]
    measures.append((f"(a) load_static(words={len(wanted)})", t))
    ours = t
    if not args.skip_gensim:
        from gensim.models import KeyedVectors

        t, kv = _time(lambda: KeyedVectors.load_word2vec_format(str(path)), args.repeat)
        np.testing.assert_array_equal(wv.vectors[0], kv[wv.words[0]])  # type: ignore[union-attr,index]
        del kv
        measures.append(("(b) gensim load_word2vec_format (full)", t))
    t, wv2 = _time(lambda: load_static(path, words=wanted, first_n=10000), args.repeat)
    assert len(wv2) >= 10000 or len(wv2) == len(vocab)  # type: ignore[arg-type]
    measures.append(("(c) load_static(words, first_n=10000)", t))
    t, _ = _time(lambda: load_static(path), args.repeat)
    measures.append(("(d) load_static(all rows)", t))

    print(f"\nfile: {path}  {mb:.0f} MB, {len(vocab)} rows x {args.dim}d (warm page cache)")
    print(f"{'measure':<42} {'seconds':>9} {'MB/s':>9} {'gensim/this':>12}")
    gensim_t = dict(measures).get("(b) gensim load_word2vec_format (full)")
    for label, secs in measures:
        ratio = f"{gensim_t / secs:>11.1f}x" if gensim_t else f"{'-':>12}"
        print(f"{label:<42} {secs:>9.3f} {mb / secs:>9.0f} {ratio}")
    if gensim_t:
        print(f"\nfiltered load is {gensim_t / ours:.0f}x faster than gensim's full load")


if __name__ == "__main__":
    main()
