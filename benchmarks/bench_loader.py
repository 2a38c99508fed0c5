"""Benchmark the static text loader against gensim on a large generated ``.vec`` file.

Usage::

    python benchmarks/bench_loader.py --size-mb 200 --tmp /tmp/weatkit-bench

Generates (or reuses) a word2vec text file of about ``--size-mb`` MB with random words and
random floats, then times, on a warm page cache:

(a) ``load_static(path, words=<--words random present words>)`` against gensim's
    ``KeyedVectors.load_word2vec_format(path)`` (a full load: gensim cannot filter);
(b) the first ``--first`` rows, ``load_static(path, words=[], first_n=10000)`` against
    ``load_word2vec_format(path, limit=10000)``;
(c) both (as for isomorphism: list words plus the most frequent rows) against the full load;
(d) ``load_static(path)``, every row, against the full load.

Rates are MB of the file read per second (for (b): the bytes of the rows read).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from common import Figure, print_table, timed

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


def _head_bytes(path: Path, n_rows: int) -> int:
    """Bytes of the header and the first ``n_rows`` rows."""
    with open(path, "rb") as f:
        return sum(len(f.readline()) for _ in range(n_rows + 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=1000, help="file size (default 1000)")
    parser.add_argument("--dim", type=int, default=300, help="vector dimension (default 300)")
    parser.add_argument("--words", type=int, default=500, help="words to look up (default 500)")
    parser.add_argument("--first", type=int, default=10_000, help="first rows (default 10,000)")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()) / "weatkit-bench")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measure (best is kept)")
    args = parser.parse_args(argv)
    from gensim.models import KeyedVectors

    args.tmp.mkdir(parents=True, exist_ok=True)
    path = args.tmp / f"bench-{args.size_mb:g}MB-{args.dim}d.vec"
    vocab = generate(path, args.size_mb, args.dim)
    rng = np.random.default_rng(1)
    wanted = [
        vocab[i] for i in rng.choice(len(vocab), size=min(args.words, len(vocab)), replace=False)
    ]
    mb = path.stat().st_size / 2**20
    head_mb = _head_bytes(path, args.first) / 2**20
    _warm(path)

    def gensim(limit: int | None = None) -> KeyedVectors:
        return KeyedVectors.load_word2vec_format(str(path), limit=limit)

    wv, ours = timed(lambda: load_static(path, words=wanted), args.repeat)
    kv, full_s = timed(gensim, args.repeat)
    np.testing.assert_array_equal(wv.vectors[0], kv[wv.words[0]])  # same numbers
    del kv
    head, head_s = timed(lambda: load_static(path, words=[], first_n=args.first), args.repeat)
    kv_head, gensim_head_s = timed(lambda: gensim(args.first), args.repeat)
    assert list(head.words) == list(kv_head.index_to_key)
    both, both_s = timed(lambda: load_static(path, words=wanted, first_n=args.first), args.repeat)
    assert len(both) >= args.first
    _, all_s = timed(lambda: load_static(path), args.repeat)

    def rate(what: str, size_mb: float, secs: float, base_name: str, base_s: float) -> Figure:
        note = f"{secs:.2f} s vs {base_s:.2f} s"
        return Figure(what, size_mb / secs, "MB/s", base_name, size_mb / base_s, note, True)

    full = "gensim load_word2vec_format (full load)"
    print_table(
        f"Loader: {mb:,.0f} MB .vec, {len(vocab):,} rows × {args.dim}d (warm page cache)",
        [
            rate(f"{len(wanted)} words (whole file scanned)", mb, ours, full, full_s),
            rate(
                f"first {args.first:,} rows ({head_mb:.0f} MB read)",
                head_mb,
                head_s,
                f"gensim load_word2vec_format(limit={args.first:,})",
                gensim_head_s,
            ),
            rate(f"{len(wanted)} words + first {args.first:,} rows", mb, both_s, full, full_s),
            rate("every row", mb, all_s, full, full_s),
        ],
    )


if __name__ == "__main__":
    main()
