"""Differential test: a seeded random sequence of list and key commands runs on a real
redis-server (Debian's, started here) and on goblin over the ring and over RESP; every
reply must be equal. GOBLIN_DIFF_OPS sets the length (default 4000 per seed)."""

import os
import random

import pytest

from goblin_ring import ResponseError, RespClient

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))
KEYS = ["a", "b", "c", "d"]


def random_value(rng):
    choice = rng.random()
    if choice < 0.6:
        return rng.choice([b"x", b"y", b"z", b"w", b""])
    if choice < 0.95:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 40)))
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(100, 3000)))


def random_index(rng):
    return rng.choice([0, 1, -1, -2, rng.randint(-300, 300), rng.randint(-10, 10)])


def random_command(rng):
    key = rng.choice(KEYS)
    other = rng.choice(KEYS)
    end = rng.choice(["LEFT", "RIGHT"])
    kind = rng.random()
    if kind < 0.25:
        name = rng.choice(["rpush", "lpush", "rpushx", "lpushx"])
        return name, (key, *[random_value(rng) for _ in range(rng.choice([1, 1, 2, 5, 40, 150]))]), {}
    table = [
        ("lpop", (key,), {}), ("rpop", (key,), {}),
        ("lpop", (key, rng.randint(0, 20)), {}), ("rpop", (key, rng.randint(0, 20)), {}),
        ("llen", (key,), {}), ("lindex", (key, random_index(rng)), {}),
        ("lrange", (key, random_index(rng), random_index(rng)), {}),
        ("lset", (key, random_index(rng), random_value(rng)), {}),
        ("linsert", (key, rng.choice(["BEFORE", "AFTER"]), random_value(rng), random_value(rng)), {}),
        ("lrem", (key, rng.randint(-3, 3), random_value(rng)), {}),
        ("ltrim", (key, random_index(rng), random_index(rng)), {}),
        ("lpos", (key, random_value(rng)), {"rank": rng.choice([None, 1, 2, -1, -3]),
                                            "count": rng.choice([None, 0, 1, 3]),
                                            "maxlen": rng.choice([None, 0, 5, 50])}),
        ("lmove", (key, other, end, rng.choice(["LEFT", "RIGHT"])), {}),
        ("rpoplpush", (key, other), {}),
        ("lmpop", (2, key, other), {"direction": end, "count": rng.randint(1, 10)}),
        ("delete", (key,), {}), ("exists", (key, other), {}), ("type", (key,), {}),
        ("rename", (key, other), {}), ("dbsize", (), {}),
    ]
    return rng.choice(table)


def outcome(client, name, args, kwargs):
    try:
        return ("ok", getattr(client, name)(*args, **kwargs))
    except ResponseError as error:
        return ("error", str(error))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_list_commands_reply_exactly_like_redis(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        for step in range(OPS):
            name, args, kwargs = random_command(rng)
            expected = outcome(reference, name, args, kwargs)
            client = ring if step % 2 == 0 else resp     # both transports, one keyspace
            got = outcome(client, name, args, kwargs)
            assert got == expected, f"step {step}: {name}{args}{kwargs}"
        for key in KEYS:
            assert ring.lrange(key, 0, -1) == reference.lrange(key, 0, -1)
            assert resp.lrange(key, 0, -1) == reference.lrange(key, 0, -1)
    finally:
        reference.close()
