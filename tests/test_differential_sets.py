"""Differential test for sets: a seeded random sequence of every set command (SADD, SREM,
SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER/SUNION/SDIFF and
their STORE forms, SINTERCARD, SSCAN), mixed with string and list writes and key commands on
the same keys (so WRONGTYPE, TYPE, COPY, RENAME, EXPIRE and DEL cover sets), runs on a real
redis-server and on goblin, alternating the ring and RESP; every reply must be equal.

Members cross every encoding threshold (integers, wide integers, integer-like text, strings
over 64 bytes, batches over 128 and 512). Set replies compare as sets (the order of a
hashtable is each server's own). Random replies are checked for what Redis promises: SPOP's
members are then SREMed from the reference (which must find every one of them, so both
servers keep the same set), SRANDMEMBER's are members of the reference's set with the
right count and distinctness; SSCAN compares the whole iteration. OBJECT ENCODING is not
compared: goblin follows Redis 7.2's encodings (listpack sets), the reference is 7.0.
GOBLIN_DIFF_OPS sets the length (default 4000 per seed).
"""

import os
import random

import pytest

from goblin_ring import ResponseError, RespClient
from test_differential import outcome, random_value

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))
KEYS = ["a", "b", "c", "d"]


def random_member(rng):
    choice = rng.random()
    if choice < 0.35:
        return str(rng.randint(-50, 600)).encode()
    if choice < 0.45:
        return str(rng.choice([2**31, -2**31 - 1, 2**63 - 1, -2**63, 70000, -40000])).encode()
    if choice < 0.5:
        return rng.choice([b"01", b"+1", b"-0", b" 1", b"1.5", b"9223372036854775808", b""])
    if choice < 0.9:
        return rng.choice([b"x", b"y", b"z", b"w"]) + str(rng.randint(0, 150)).encode()
    return random_value(rng)


def batch(rng):
    size = rng.choice([1, 1, 2, 3, 10, 60, 130, 520])
    if size >= 130 and rng.random() < 0.5:   # a run of integers: intset up to its limit
        start = rng.randint(-100, 100)
        return [str(start + i).encode() for i in range(size)]
    return [random_member(rng) for _ in range(size)]


def random_command(rng):
    key, other, third = rng.choice(KEYS), rng.choice(KEYS), rng.choice(KEYS)
    some = rng.sample(KEYS, rng.randint(1, 4))
    count = rng.choice([None, 0, 1, 2, 5, 50, 200, -1, -3, -40])
    table = [
        ("sadd", (key, *batch(rng)), {}), ("sadd", (key, *batch(rng)), {}), ("sadd", (key, *batch(rng)), {}),
        ("srem", (key, *[random_member(rng) for _ in range(rng.choice([1, 2, 30]))]), {}),
        ("smembers", (key,), {}), ("scard", (key,), {}),
        ("sismember", (key, random_member(rng)), {}),
        ("smismember", (key, [random_member(rng) for _ in range(rng.randint(1, 5))]), {}),
        ("spop", (key,) if count is None else (key, count), {}),
        ("srandmember", (key,) if count is None else (key, count), {}),
        ("smove", (key, other, random_member(rng)), {}),
        ("sinter", tuple(some), {}), ("sunion", tuple(some), {}), ("sdiff", tuple(some), {}),
        ("sinterstore", (third, some), {}), ("sunionstore", (third, some), {}), ("sdiffstore", (third, some), {}),
        ("sintercard", (len(some), some), {"limit": rng.choice([0, 0, 1, 3, 100])}),
        ("sscan_all", (key,), {"match": rng.choice([None, None, "x*", "*1", "[0-9]*"]),
                               "count": rng.choice([None, 1, 10, 1000])}),
        # refused SSCANs (a valid one pages as each server's table does: sscan_all compares those)
        ("execute_command", ("SSCAN", key, rng.choice(["x", "18446744073709551616"])), {}),
        ("execute_command", ("SSCAN", key, "0", *rng.choice([("COUNT", "0"), ("COUNT", "x"), ("MATCH",), ("NOPE", "1")])), {}),
        ("execute_command", ("SPOP", key, *rng.choice([("-1",), ("x",), ("1", "2")])), {}),
        ("execute_command", ("SRANDMEMBER", key, *rng.choice([("x",), ("1", "2"), ("-9223372036854775808",)])), {}),
        ("execute_command", ("SINTERCARD", *rng.choice([("0", key), ("x", key), ("3", key, other), ("1", key, "LIMIT"),
                                                         ("1", key, "LIMIT", "-1"), ("1", key, "FOO", "1")])), {}),
        # the same keys as other types, and the key commands over sets
        ("set", (key, random_value(rng)), {}), ("rpush", (key, random_value(rng)), {}),
        ("delete", (key,), {}), ("exists", (key, other), {}), ("type", (key,), {}),
        ("rename", (key, other), {}), ("copy", (key, other), rng.choice([{}, {"replace": True}])),
        ("expire", (key, rng.choice([1000, 5000])), {}), ("persist", (key,), {}), ("dbsize", (), {}),
    ]
    return rng.choice(table)


def sscan_all(client, key, match, count):
    """Every member one whole SSCAN iteration returns, as a set (pagination differs per server)."""
    seen, cursor, calls = set(), 0, 0
    while True:
        cursor, members = client.sscan(key, cursor, match=match, count=count)
        seen.update(members)
        calls += 1
        if cursor == 0 or calls > 100_000:
            return seen


def run(client, name, args, kwargs):
    if name == "sscan_all":
        try:
            return ("ok", sscan_all(client, *args, kwargs["match"], kwargs["count"]))
        except ResponseError as error:
            return ("error", str(error))
    return outcome(client, name, args, kwargs)


def random_reply_checked(name, args, got, reference):
    """SPOP / SRANDMEMBER: goblin's random answer checked against, and applied to, the reference."""
    key = args[0]
    count = args[1] if len(args) > 1 else None
    if got[0] == "error":
        # nothing changed on goblin: the reference runs the same command and fails the same way
        assert outcome(reference, name, args, {}) == got
        return
    kind = reference.type(key)
    assert kind in (b"set", b"none"), f"redis holds a {kind} there"
    assert not (name == "spop" and count is not None and count < 0), "redis refuses a negative SPOP count"
    members = reference.smembers(key) if kind == b"set" else set()
    reply = got[1]
    if count is None:
        assert reply in members if members else reply is None
        picked = [reply]
    else:
        assert isinstance(reply, list)
        assert all(m in members for m in reply)
        if count >= 0:
            assert len(reply) == min(count, len(members))
            assert len(set(reply)) == len(reply)
        else:
            assert len(reply) == (-count if members else 0)
        picked = reply
    if name == "spop" and members and count != 0:
        assert reference.srem(key, *picked) == len(picked)   # the same members leave the reference


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_set_commands_reply_exactly_like_redis(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        for step in range(OPS):
            name, args, kwargs = random_command(rng)
            client = ring if step % 2 == 0 else resp     # both transports, one keyspace
            where = f"step {step}: {name}{args}{kwargs}"
            if name in ("spop", "srandmember"):
                got = outcome(client, name, args, kwargs)
                try:
                    random_reply_checked(name, args, got, reference)
                except AssertionError as failure:
                    raise AssertionError(f"{where}: {got}") from failure
                continue
            expected = run(reference, name, args, kwargs)
            got = run(client, name, args, kwargs)
            assert got == expected, where
        for key in KEYS:
            kind = reference.type(key)
            assert ring.type(key) == resp.type(key) == kind
            if kind == b"set":
                assert ring.smembers(key) == resp.smembers(key) == reference.smembers(key)
    finally:
        reference.close()
