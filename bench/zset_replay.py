"""zset_replay.py — the `zset-replay` workload: a reproducible stream of ZINCRBY 1 shaped like a
Wikimedia page-edit counter.

The reference's real stream had 2,000,000 commands on one key touching 279,458 members, score
sum 2,000,000, largest score 11,792. This generator draws page ranks from a Zipf-Mandelbrot
law, P(rank k) proportional to (k + OFFSET) ** -EXPONENT over RANKS ranks, tuned so that
2,000,000 draws touch about 280,000 members with a largest count near 11,800, and maps each
rank to a page id by a fixed bijection of 0 .. 2**26 - 1 (so members look like scattered page
ids: decimal int32 texts, the packed encoding's case).

Reproducible everywhere: the uniform draws come from splitmix64 computed in numpy's uint64
arithmetic (no library generator whose stream might change), the law's table from one float64
cumsum. Nothing here depends on the machine.

    python bench/zset_replay.py [--count 2000000] [--seed 20240601] [--key KEY] [--out FILE]
        writes the stream as redis-cli input lines (ZINCRBY KEY 1 <id>), prints the summary
    python bench/zset_replay.py --summary      the expected final state only

goblin-ring-bench zset-replay (goblin_ring/bench/scenario_zset_replay.py) imports this file.
"""

from __future__ import annotations

import argparse
import hashlib
import sys

import numpy

COUNT = 2_000_000
SEED = 20240601
KEY = b"wiki:edits"
EXPONENT = 1.1
OFFSET = 25.6
RANKS = 708_000
ID_BITS = 26                     # page ids in 0 .. 2**26 - 1
ID_MULTIPLIER = 0x9E3779B1 | 1   # odd: a bijection modulo 2**ID_BITS
ID_ADDEND = 1_234_567

_MASK64 = numpy.uint64(0xFFFFFFFFFFFFFFFF)


def uniforms(count: int, seed: int) -> numpy.ndarray:
    """count doubles in [0, 1): splitmix64's outputs for state seed + i * golden (i = 1 ..)."""
    with numpy.errstate(over="ignore"):
        index = numpy.arange(1, count + 1, dtype=numpy.uint64)
        z = numpy.uint64(seed & 0xFFFFFFFFFFFFFFFF) + index * numpy.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> numpy.uint64(30))) * numpy.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> numpy.uint64(27))) * numpy.uint64(0x94D049BB133111EB)
        z = z ^ (z >> numpy.uint64(31))
    return (z >> numpy.uint64(11)).astype(numpy.float64) * (1.0 / (1 << 53))


def ranks(count: int = COUNT, seed: int = SEED) -> numpy.ndarray:
    """The stream's page ranks (0 = the most edited page), by inverse transform of the law."""
    weights = (numpy.arange(1, RANKS + 1, dtype=numpy.float64) + OFFSET) ** -EXPONENT
    cumulative = numpy.cumsum(weights)
    return numpy.searchsorted(cumulative, uniforms(count, seed) * cumulative[-1], side="right").clip(0, RANKS - 1)


def page_ids(count: int = COUNT, seed: int = SEED) -> numpy.ndarray:
    """The stream: one page id (int64) per ZINCRBY, in order."""
    r = ranks(count, seed).astype(numpy.uint64)
    with numpy.errstate(over="ignore"):
        ids = (r * numpy.uint64(ID_MULTIPLIER) + numpy.uint64(ID_ADDEND)) & numpy.uint64((1 << ID_BITS) - 1)
    return ids.astype(numpy.int64)


def members(ids: numpy.ndarray) -> list[bytes]:
    """The ids as the members the commands name (decimal text)."""
    return [b"%d" % i for i in ids.tolist()]


def state_digest(pairs) -> str:
    """A digest of a member -> score mapping, however it was read: sha256 over
    "member:score\\n" lines sorted by member bytes, the score as an integer (every score of this
    workload is a whole count)."""
    h = hashlib.sha256()
    for member, score in sorted((bytes(m), int(round(float(s)))) for m, s in pairs):
        h.update(b"%s:%d\n" % (member, score))
    return h.hexdigest()[:16]


def expected_state(ids: numpy.ndarray) -> dict:
    """What every engine must hold after replaying ids: member count, score sum, max, digest."""
    unique, counts = numpy.unique(ids, return_counts=True)
    return {"members": int(len(unique)), "score_sum": int(counts.sum()), "max_score": int(counts.max(initial=0)),
            "digest": state_digest(zip(members(unique), counts.tolist()))}


def write_stream(ids: numpy.ndarray, path: str, key: bytes = KEY) -> int:
    """The stream as redis-cli input, one command a line; returns the bytes written."""
    prefix = b"ZINCRBY " + key + b" 1 "
    data = b"".join(prefix + b"%d\n" % i for i in ids.tolist())
    with open(path, "wb") as handle:
        handle.write(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=COUNT)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--key", default=KEY.decode())
    parser.add_argument("--out", help="write the stream here as redis-cli input lines")
    parser.add_argument("--summary", action="store_true", help="print the expected final state only")
    args = parser.parse_args(argv)
    ids = page_ids(args.count, args.seed)
    if args.out and not args.summary:
        size = write_stream(ids, args.out, args.key.encode())
        print(f"wrote {args.count} commands ({size} bytes) to {args.out}")
    state = expected_state(ids)
    print(" ".join(f"{k}={v}" for k, v in state.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
