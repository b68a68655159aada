"""Differential test for SORT/SORT_RO (over lists, sets and sorted sets), DUMP/RESTORE, RENAMENX, TOUCH and
RANDOMKEY: seeded random commands run on a real redis-server and on goblin (alternating the ring and RESP, one keyspace);
every reply and every step of the dirty counter (INFO rdb_changes_since_last_save) must be
equal (RANDOMKEY's by what it names: a live key, or none).

The elements come from a small vocabulary (numbers in many spellings, words, binary bytes), so
the weight and GET keys their patterns build ("w_<element>", "g_<element>") often exist,
sometimes as a hash (read by the "key->field" patterns), the wrong type or a text that is no
number. DUMP payloads differ from Redis's by
design, so a round trip is compared by what a user sees: each server DUMPs a key and RESTOREs
its own payload (with random REPLACE, TTL, ABSTTL and IDLETIME options, sometimes truncated),
and the RESTORE replies and the restored values must agree. GOBLIN_DIFF_OPS sets the length
(default 4000 per seed).

No weight overflows or underflows a double here: redis-server 7.0.15 does not clear errno before
its strtod, so after one such weight it refuses every later SORT whose weights are not plain
integers, until something else resets errno (test_sort.py checks goblin's answer on its own)."""

from __future__ import annotations

import os
import random

import pytest

from goblin_ring import ResponseError, RespClient
from test_differential import FAR_FUTURE, outcome, random_value

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))


@pytest.fixture(scope="module")
def goblin(goblin_each_list_implementation):
    """Both list engines: SORT reads their ranges backwards and STORE builds lists on them."""
    return goblin_each_list_implementation


LISTS = ["l0", "l1", "l2"]
VOCABULARY = [b"1", b"2", b"10", b"-3", b"2.5", b"1e2", b"007", b"-0", b"inf", b"0.1", b"3",
              b"apple", b"Banana", b"cherry", b"", b"\x00z", b"z\x00", b"\xc3\xa9t\xc3\xa9", b"\xff", b"1 "]
NUMERIC = VOCABULARY[:11]
PATTERNS = ["#", "g_*", "w_*", "g_*->f", "w_*->g", "constant", "w_*x", "*", "g_*->"]


def random_element(rng, numeric_only):
    return rng.choice(NUMERIC if numeric_only else VOCABULARY)


def random_sort(rng):
    name = rng.choice(["sort", "sort", "sort", "sort_ro"])
    numeric_only = rng.random() < 0.5
    kwargs = {"desc": rng.random() < 0.4, "alpha": rng.random() < (0.3 if numeric_only else 0.7)}
    kind = rng.random()
    if kind < 0.35:
        kwargs["by"] = "w_*"
    elif kind < 0.5:
        kwargs["by"] = rng.choice(["nosort", "w_*->f", "g_*->g", "g_*"])
    if rng.random() < 0.4:
        kwargs["start"], kwargs["num"] = rng.choice([(0, 2), (1, 3), (-2, 2), (2, -1), (0, 0), (5, 100),
                                                     (rng.randint(0, 8), rng.randint(-1, 8))])
    if rng.random() < 0.5:
        kwargs["get"] = [rng.choice(PATTERNS) for _ in range(rng.randint(1, 3))]
    if name == "sort" and rng.random() < 0.35:
        kwargs["store"] = rng.choice(["dst", "l0", "w_1", "l1"])
    return name, (rng.choice(LISTS + ["missing", "w_1"]),), kwargs


SETS = ["s0", "s1"]
# b"\x00z" would compare equal to b"" under ALPHA (bytes up to the first NUL): equal members keep
# the set's own order, which differs between the servers
SET_VOCABULARY = [v for v in VOCABULARY if not v.startswith(b"\x00")]


def random_set_sort(rng):
    """A SORT of a set whose reply Redis fixes: no ALPHA with BY a pattern (equal weights would
    keep the set's own order, which differs between the servers); BY a constant without STORE
    leaves a set unordered, and set_sort_outcome compares such a reply as a multiset."""
    name = rng.choice(["sort", "sort_ro"])
    kwargs = {"desc": rng.random() < 0.4}
    kind = rng.random()
    if kind < 0.3:
        kwargs["by"] = "w_*"
    elif kind < 0.45:
        kwargs["by"] = "nosort"
    else:
        kwargs["alpha"] = rng.random() < 0.5
    if rng.random() < 0.3:
        kwargs["start"], kwargs["num"] = rng.choice([(0, 2), (1, 3), (2, -1), (0, 0), (rng.randint(0, 6), rng.randint(-1, 6))])
    if rng.random() < 0.4:
        kwargs["get"] = [rng.choice(["#", "g_*", "w_*", "constant"]) for _ in range(rng.randint(1, 2))]
    if name == "sort" and rng.random() < 0.35:
        kwargs["store"] = rng.choice(["dst", "l0", "s1"])
    return "set_sort", (name, rng.choice(SETS + ["missing"])), kwargs


def set_sort_outcome(client, name, key, kwargs):
    result = outcome(client, name, (key,), kwargs)
    if result[0] == "ok" and isinstance(result[1], list) and kwargs.get("by") == "nosort" and "store" not in kwargs:
        width = len(kwargs.get("get") or []) or 1
        rows = [tuple(result[1][i:i + width]) for i in range(0, len(result[1]), width)]
        if "start" in kwargs:
            return ("ok", "unordered", len(rows))              # which members a LIMIT picks is the set's order
        return ("ok", "unordered", sorted(rows, key=repr))
    return result


ZSETS = ["z0", "z1"]


def random_zset_sort(rng):
    """A SORT of a sorted set: BY a constant keeps its score order (DESC reversed, LIMIT read
    from the rank), so every form's reply is fixed, except ALPHA with BY a pattern (equal
    weights keep the order Redis's dict gives); ALPHA compares up to the first NUL, so the
    members are SET_VOCABULARY's."""
    name = rng.choice(["sort", "sort_ro"])
    kwargs = {"desc": rng.random() < 0.4}
    kind = rng.random()
    if kind < 0.3:
        kwargs["by"] = rng.choice(["w_*", "w_*->f"])
    elif kind < 0.6:
        kwargs["by"] = "nosort"
    else:
        kwargs["alpha"] = rng.random() < 0.5
    if rng.random() < 0.4:
        kwargs["start"], kwargs["num"] = rng.choice([(0, 2), (1, 3), (2, -1), (0, 0), (rng.randint(0, 6), rng.randint(-1, 6))])
    if rng.random() < 0.4:
        kwargs["get"] = [rng.choice(["#", "g_*", "w_*", "constant"]) for _ in range(rng.randint(1, 2))]
    if name == "sort" and rng.random() < 0.35:
        kwargs["store"] = rng.choice(["dst", "l0", "z1"])
    return name, (rng.choice(ZSETS + ["missing"]),), kwargs


def random_command(rng):
    kind = rng.random()
    key = rng.choice(LISTS)
    if kind < 0.05:
        numeric_only = rng.random() < 0.6
        members = {rng.choice(NUMERIC if numeric_only else SET_VOCABULARY): rng.choice([0, 1, 1, 2.5, -3, 7])
                   for _ in range(rng.choice([1, 2, 4, 8, 20, 150]))}
        if rng.random() < 0.7:
            return "zadd", (rng.choice(ZSETS), members), {}
        return "zrem", (rng.choice(ZSETS), *members), {}
    if kind < 0.1:
        return random_zset_sort(rng)
    if kind < 0.15:
        return "zrange", (rng.choice(ZSETS), 0, -1), {"withscores": True}
    if kind < 0.2:
        numeric_only = rng.random() < 0.6
        items = [rng.choice(NUMERIC if numeric_only else SET_VOCABULARY) for _ in range(rng.choice([1, 2, 4, 8, 20]))]
        return rng.choice(["sadd", "sadd", "srem"]), (rng.choice(SETS), *items), {}
    if kind < 0.25:
        return random_set_sort(rng)
    if kind < 0.45:
        return random_sort(rng)
    if kind < 0.55:
        numeric_only = rng.random() < 0.6
        items = [random_element(rng, numeric_only) for _ in range(rng.choice([1, 2, 3, 6, 12, 12, 150]))]
        return rng.choice(["rpush", "lpush"]), (key, *items), {}
    if kind < 0.75:
        element = random_element(rng, False)
        prefix = rng.choice([b"w_", b"g_"])
        value = rng.choice([random_element(rng, True), random_element(rng, False), random_value(rng)])
        if rng.random() < 0.25:                 # a hash, for the "key->field" patterns
            return "hset", (prefix + element,), {"mapping": {rng.choice([b"f", b"g"]): value}}
        return "set", (prefix + element, value), {}
    table = [
        ("lrange", ("dst", 0, -1), {}), ("lrange", (key, 0, -1), {}), ("type", ("dst",), {}),
        ("delete", (key,), {}), ("lpop", (key,), {}), ("ltrim", (key, 0, rng.choice([3, 6, 60, 200])), {}),
        ("rpush", ("w_" + rng.choice(["1", "2", "apple"]), "list"), {}),
        ("delete", ("w_" + rng.choice(["1", "2", "apple", "10"]),), {}),
        ("set", ("dst", "string"), {"ex": 1000}), ("ttl", ("dst",), {}),
        ("round_trip", (rng.choice(LISTS + SETS + ["dst", "w_1", "g_2", "w_apple", "missing"]),), {}),
        ("renamenx", (rng.choice(LISTS + ["dst", "w_1"]), rng.choice(LISTS + ["dst", "fresh"])), {}),
        ("touch", (key, "dst", "missing", key), {}), ("randomkey", (), {}),
    ]
    return rng.choice(table)


def round_trip(client, rng_state, source):
    """DUMP source and RESTORE the payload under "copy" with options drawn from rng_state (the
    same on both servers); the replies and what "copy" then holds."""
    rng = random.Random(rng_state)
    payload = client.dump(source)
    if payload is None:
        return ("nil",)
    cut = rng.random()                     # drawn the same way whatever the payload's length
    if rng.random() < 0.15:
        payload = payload[:int(cut * len(payload))]
    options = {"replace": rng.random() < 0.6}
    ttl = rng.choice([0, 0, 100_000])
    if rng.random() < 0.2:
        options["absttl"] = True
        ttl = rng.choice([1, FAR_FUTURE * 1000])
    if rng.random() < 0.2:
        options["idletime"] = rng.choice([0, 50])
    try:
        reply = client.restore("copy", ttl, payload, **options)
    except ResponseError as error:
        reply = ("error", str(error))
    kind = client.type("copy")
    contents = (client.lrange("copy", 0, -1) if kind == b"list" else client.get("copy") if kind == b"string"
                else client.hgetall("copy") if kind == b"hash" else sorted(client.smembers("copy")) if kind == b"set"
                else None)
    expiry = client.pttl("copy")
    return reply, kind, contents, "volatile" if expiry >= 0 else expiry


def random_key_outcome(client):
    key = client.randomkey()
    return "empty" if key is None else ("a live key", client.exists(key))


def dirty(client):
    return client.info("persistence")["rdb_changes_since_last_save"]


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_random_sorts_and_round_trips_reply_exactly_like_redis(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        theirs_before, ours_before = dirty(reference), dirty(resp)
        for step in range(OPS):
            name, args, kwargs = random_command(rng)
            client = ring if step % 2 == 0 else resp
            if name == "round_trip":
                state = rng.getrandbits(32)
                expected, got = round_trip(reference, state, *args), round_trip(client, state, *args)
            elif name == "randomkey":       # which key is random: compare that one exists, or none
                expected, got = random_key_outcome(reference), random_key_outcome(client)
            elif name == "set_sort":
                expected, got = set_sort_outcome(reference, *args, kwargs), set_sort_outcome(client, *args, kwargs)
            else:
                expected, got = outcome(reference, name, args, kwargs), outcome(client, name, args, kwargs)
            assert got == expected, f"step {step}: {name}{args}{kwargs}"
            theirs, ours = dirty(reference), dirty(resp)
            assert ours - ours_before == theirs - theirs_before, f"step {step}: {name}{args}{kwargs} -> {expected}"
            theirs_before, ours_before = theirs, ours
    finally:
        reference.close()
