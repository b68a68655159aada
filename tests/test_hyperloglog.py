"""HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST against redis-server 7.0, and the
engine against a Python reference.

- Differential: a seeded random sequence of PFADD / PFCOUNT / PFMERGE / PFDEBUG, with GET of every
  key after each step, runs on redis-server and on goblin over the ring and over RESP (one keyspace,
  alternating); replies and the values' bytes must be equal — the sparse opcodes, the promotion to
  dense, the cached cardinality in the header. Run with two hll-sparse-max-bytes settings.
- Interchange: an HLL made by redis-server, copied into goblin with SET (and the reverse), counts and
  merges the same on both.
- Reference model: every register of an HLL (PFDEBUG GETREG) and its count equal a Python model
  computing MurmurHash64A, the register update and the estimator.
- Bad input: corrupted HLL strings give Redis's errors (WRONGTYPE for a non-HLL string, INVALIDOBJ for
  broken sparse opcodes) on both servers, and the server keeps serving.

GOBLIN_HLL_OPS sets the differential's length (default 1500 per seed).
"""

from __future__ import annotations

import math
import os
import random

import pytest

from goblin_ring import ResponseError, RespClient

OPS = int(os.environ.get("GOBLIN_HLL_OPS", "1500"))
KEYS = ["h0", "h1", "h2", "s"]


def reply_of(client, *argv):
    try:
        return ("ok", client.execute_command(*argv))
    except ResponseError as error:
        return ("error", str(error))


def random_element(rng):
    roll = rng.random()
    if roll < 0.6:
        return str(rng.randint(0, 3000))
    if roll < 0.9:
        return rng.randbytes(rng.randint(0, 20))
    return "e" * rng.randint(0, 100)


def random_command(rng):
    roll = rng.random()
    key = rng.choice(KEYS)
    if roll < 0.55:
        return ("PFADD", key, *[random_element(rng) for _ in range(rng.choice([0, 1, 1, 3, 10, 60]))])
    if roll < 0.75:
        return ("PFCOUNT", *rng.sample(KEYS + ["missing"], rng.randint(1, 3)))
    if roll < 0.85:
        return ("PFMERGE", key, *rng.sample(KEYS + ["missing"], rng.randint(0, 3)))
    if roll < 0.93:
        return ("PFDEBUG", rng.choice(["ENCODING", "DECODE", "TODENSE", "GETREG", "encoding", "bogus"]),
                rng.choice(KEYS + ["missing"]))
    if roll < 0.97:
        return ("SET", "s", rng.choice(["plain", "HYLL", "HYLL\x05" + "x" * 20]))
    return ("DEL", key)


@pytest.mark.parametrize("sparse_max", ["3000", "40"])
@pytest.mark.parametrize("seed", [1, 2])
def test_random_hyperloglog_commands_match_redis_byte_for_byte(seed, sparse_max, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for client in (reference, resp):
            client.flushall()
            client.config_set("hll-sparse-max-bytes", sparse_max)
        rng = random.Random(seed)
        for step in range(OPS):
            argv = random_command(rng)
            client = ring if step % 2 else resp
            expected = reply_of(reference, *argv)
            assert reply_of(client, *argv) == expected, (step, argv[:4])
            if step % 7 == 0 or argv[0] != "PFADD":
                for key in KEYS:
                    assert client.get(key) == reference.get(key), (step, argv[:4], key)
    finally:
        for client in (reference, resp):
            client.config_set("hll-sparse-max-bytes", "3000")
        reference.close()


def test_an_hll_made_by_either_server_counts_and_merges_the_same_on_the_other(redis_server, client):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        reference.flushall()
        rng = random.Random(7)
        small = [rng.randbytes(8) for _ in range(200)]      # stays sparse
        large = [rng.randbytes(8) for _ in range(50_000)]   # dense
        reference.pfadd("r-small", *small)
        reference.pfadd("r-large", *large)
        client.pfadd("g-small", *small[:100])
        client.pfadd("g-large", *large[:20_000])
        for key in ("r-small", "r-large"):
            client.set(key, reference.get(key))
        for key in ("g-small", "g-large"):
            reference.set(key, client.get(key))
        for keys in (["r-small"], ["r-large"], ["g-small"], ["g-large"], ["r-small", "g-large"],
                     ["r-large", "g-small", "g-large"]):
            assert client.pfcount(*keys) == reference.pfcount(*keys), keys
        for both in (client, reference):
            assert both.pfmerge("merged", "r-small", "g-large", "r-large") is True
        assert client.get("merged") == reference.get("merged")
        assert client.execute_command("PFDEBUG", "ENCODING", "merged") in (b"dense", "dense")
    finally:
        reference.close()


# ---- the Python reference model ----

def murmur64a(data: bytes, seed: int = 0xADC83B19) -> int:
    mask = (1 << 64) - 1
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & mask
    whole = len(data) - len(data) % 8
    for i in range(0, whole, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = (k * m) & mask
        k ^= k >> r
        k = (k * m) & mask
        h ^= k
        h = (h * m) & mask
    tail = data[whole:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * m) & mask
    h ^= h >> r
    h = (h * m) & mask
    h ^= h >> r
    return h


def register_of(element: bytes) -> tuple[int, int]:
    h = murmur64a(element)
    index = h & 16383
    rest = (h >> 14) | (1 << 50)
    count = 1
    while not rest & 1:
        count += 1
        rest >>= 1
    return index, count


def estimate(registers: list[int]) -> int:
    m = 16384.0
    histogram = [0] * 64
    for value in registers:
        histogram[value] += 1

    def tau(x):
        if x in (0.0, 1.0):
            return 0.0
        y, z = 1.0, 1 - x
        while True:
            x = math.sqrt(x)
            previous = z
            y *= 0.5
            z -= math.pow(1 - x, 2) * y
            if previous == z:
                return z / 3

    def sigma(x):
        if x == 1.0:
            return math.inf
        y, z = 1.0, x
        while True:
            x *= x
            previous = z
            z += x * y
            y += y
            if previous == z:
                return z

    z = m * tau((m - histogram[51]) / m)
    for j in range(50, 0, -1):
        z += histogram[j]
        z *= 0.5
    z += m * sigma(histogram[0] / m)
    return math.floor(0.721347520444481703680 * m * m / z + 0.5)


@pytest.mark.parametrize("size", [0, 1, 10, 700, 5_000, 200_000])
def test_registers_and_count_equal_the_python_model(size, ring):
    ring.delete("model")
    rng = random.Random(size)
    elements = [rng.randbytes(rng.randint(0, 16)) for _ in range(size)]
    registers = [0] * 16384
    for element in elements:
        index, count = register_of(element)
        registers[index] = max(registers[index], count)
    for start in range(0, len(elements), 10_000):
        ring.pfadd("model", *elements[start:start + 10_000])
    if not elements:
        ring.pfadd("model")
    assert ring.pfcount("model") == estimate(registers)
    assert ring.execute_command("PFDEBUG", "GETREG", "model") == registers


# ---- bad input ----

def corrupted_values(reference):
    """HLL strings with broken sparse opcodes (too few registers, too many, a truncated XZERO)."""
    reference.delete("seed")
    reference.pfadd("seed", "a", "b")
    good = reference.get("seed")
    header = good[:16]
    return [
        header + bytes([0x40 | 0x3F, 0xFE]),          # XZERO of 16383: one register short
        header + bytes([0x7F, 0xFF, 0x80]),           # 16384 zeros and a VAL: one too many
        header + bytes([0x7F]),                       # a truncated XZERO
        header[:15] + bytes([header[15] | 0x80]) + bytes([0x7F, 0xF0, 0x83] * 3),
    ]


def test_corrupted_hll_values_get_redis_errors_and_the_server_keeps_serving(redis_server, client):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        reference.flushall()
        client.set("keep", "safe")
        for value in corrupted_values(reference):
            for server in (reference, client):
                server.set("bad", value)
                server.set("plain", "not an hll, but long enough")
            for argv in (("PFCOUNT", "bad"), ("PFADD", "bad", "x", "y", "z"), ("PFCOUNT", "bad", "plain"),
                         ("PFCOUNT", "bad", "missing"), ("PFMERGE", "dest", "bad"), ("PFDEBUG", "GETREG", "bad"),
                         ("PFDEBUG", "DECODE", "bad"), ("PFADD", "plain", "x"), ("PFMERGE", "plain", "missing")):
                assert reply_of(client, *argv) == reply_of(reference, *argv), (value, argv)
        assert client.get("keep") == b"safe"
        assert client.ping()
    finally:
        reference.close()


def test_pfselftest_passes(goblin):
    """Redis's self test (registers, then cardinality error bounds up to 10M elements) takes
    seconds of server time: once, over RESP, with a client that waits long enough for it on a
    loaded machine."""
    client = RespClient(port=goblin.port, socket_timeout=300.0)
    try:
        assert client.execute_command("PFSELFTEST") in (b"OK", "OK", True)
    finally:
        client.close()


def test_pfdebug_reports_encodings(client):
    client.delete("h")
    client.pfadd("h", "a")
    assert client.execute_command("PFDEBUG", "ENCODING", "h") in (b"sparse", "sparse")
    assert client.execute_command("PFDEBUG", "TODENSE", "h") == 1
    assert client.execute_command("PFDEBUG", "ENCODING", "h") in (b"dense", "dense")
    assert client.execute_command("PFDEBUG", "TODENSE", "h") == 0
    assert client.pfcount("h") == 1
    assert len(client.get("h")) == 16 + 16384 * 6 // 8
