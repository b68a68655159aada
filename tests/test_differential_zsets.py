"""Differential test for sorted sets: a seeded random sequence of sorted-set commands (mixed with
a few string, set and key commands on the same keys, so WRONGTYPE, RENAME, COPY and DUMP/RESTORE
paths, and sets as ZUNION/ZINTER/ZDIFF inputs, are compared too) runs on a real redis-server 7.0 (Debian's, started here) and on goblin
over the ring and over RESP alternately; every reply must be equal, scores as Redis writes
them (the raw text is compared through execute_command too). Sets cross the compact/standard
threshold (members from a pool of 220, some longer than 64 bytes); scores tie often, include
infinities and fractions, so member order and score text are both exercised. ZSCAN iterations
are compared as sets of (member, score) (a standard set's scan order is each server's own); ZRANDMEMBER
by what must hold (size, membership, distinctness). GOBLIN_DIFF_OPS sets the length (default
4000 per seed)."""

import os
import random

import pytest

from goblin_ring import ResponseError, RespClient
from test_differential import random_number_text

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))
KEYS = ["z1", "z2", "z3", "s"]
LEX_KEY = "zl"
MEMBER_POOL = [f"m{i}".encode() for i in range(200)] + [b"L" * 70 + str(i).encode() for i in range(20)]
SCORES = [0, 0, 1, 1, 2, -1, 0.5, 1.1, -2.25, 3e10, 1e-5, float("inf"), float("-inf"), 7, 100]
SCORE_TEXTS = ["0", "1", "(1", "-inf", "+inf", "(-inf", "2.5", "(0", "x", "nan", "1e400", "", " 1", "(3"]
LEX_TEXTS = ["-", "+", "[m1", "(m1", "[m5", "(m50", "[", "(", "m1", "+x", "[L"]


def random_member(rng):
    if rng.random() < 0.5:
        return rng.choice(MEMBER_POOL[:10])
    return rng.choice(MEMBER_POOL[:200] if rng.random() < 0.9 else MEMBER_POOL)


def random_mapping(rng):
    return {random_member(rng): rng.choice(SCORES) for _ in range(rng.choice([1, 2, 5, 40, 140]))}


def random_rank(rng):
    return rng.choice([0, 1, -1, -2, 3, 10, -50, 150, 1000])


def random_zset_command(rng):
    key = rng.choice(KEYS)
    other = rng.choice(KEYS)
    member = random_member(rng)
    flags = rng.choice([{}, {}, {"nx": True}, {"xx": True}, {"gt": True}, {"lt": True}, {"ch": True},
                        {"xx": True, "gt": True, "ch": True}])
    lex = rng.choice(LEX_TEXTS)
    lex2 = rng.choice(LEX_TEXTS)
    lo, hi = rng.choice(SCORE_TEXTS), rng.choice(SCORE_TEXTS)
    limit = rng.choice([[], [], ["LIMIT", rng.choice([0, 1, 3, -1]), rng.choice([1, 5, -1, 0])]])
    numkeys_keys = rng.sample(KEYS[:3], rng.randint(1, 3))
    table = [
        ("zadd", (key, random_mapping(rng)), flags),
        ("zadd", (key, {member: rng.choice(SCORES)}), {"incr": True, **rng.choice([{}, {"nx": True}, {"xx": True}, {"gt": True}])}),
        ("execute_command", ("ZADD", key, rng.choice(["1", "nan", "x", "inf", "-inf", "(1"]), member), {}),
        ("zincrby", (key, rng.choice([1, -1, 0.5, float("inf"), float("-inf")]), member), {}),
        ("execute_command", ("ZINCRBY", key, random_number_text(rng), member), {}),
        ("execute_command", ("ZSCORE", key, member), {}),
        ("zmscore", (key, [random_member(rng) for _ in range(3)]), {}),
        ("zcard", (key,), {}),
        ("execute_command", ("ZCOUNT", key, lo, hi), {}),
        ("zrank", (key, member), {}), ("zrevrank", (key, member), {}),
        ("execute_command", ("ZRANGE", key, random_rank(rng), random_rank(rng),
                             *rng.choice([[], ["REV"], ["WITHSCORES"], ["REV", "WITHSCORES"]])), {}),
        ("execute_command", ("ZRANGE", key, lo, hi, "BYSCORE", *rng.choice([[], ["REV"]]), *limit,
                             *rng.choice([[], ["WITHSCORES"]])), {}),
        ("execute_command", ("ZRANGEBYSCORE", key, lo, hi, *rng.choice([[], ["WITHSCORES"]]), *limit), {}),
        ("execute_command", ("ZREVRANGEBYSCORE", key, hi, lo, *limit, *rng.choice([[], ["WITHSCORES"]])), {}),
        ("zrevrange", (key, random_rank(rng), random_rank(rng)), {"withscores": rng.random() < 0.5}),
        ("execute_command", ("ZRANGESTORE", other, key, random_rank(rng), random_rank(rng)), {}),
        ("execute_command", ("ZRANGESTORE", other, key, lo, hi, "BYSCORE", *limit), {}),
        ("zrem", (key, *[random_member(rng) for _ in range(rng.randint(1, 6))]), {}),
        ("execute_command", ("ZREMRANGEBYRANK", key, random_rank(rng), random_rank(rng)), {}),
        ("execute_command", ("ZREMRANGEBYSCORE", key, lo, hi), {}),
        ("execute_command", ("ZPOPMIN", key, *rng.choice([[], ["1"], ["3"], ["0"], ["-1"], ["200"]])), {}),
        ("execute_command", ("ZPOPMAX", key, *rng.choice([[], ["2"], ["x"]])), {}),
        ("execute_command", ("ZMPOP", len(numkeys_keys), *numkeys_keys, rng.choice(["MIN", "MAX", "mid"]),
                             *rng.choice([[], ["COUNT", "2"], ["COUNT", "0"], ["COUNT", "300"]])), {}),
        ("execute_command", ("ZUNION", len(numkeys_keys), *numkeys_keys,
                             *rng.choice([[], ["WEIGHTS", *(["2"] * len(numkeys_keys))]]),
                             *rng.choice([[], ["AGGREGATE", "MIN"], ["AGGREGATE", "MAX"], ["AGGREGATE", "SUM"]]),
                             *rng.choice([[], ["WITHSCORES"]])), {}),
        ("execute_command", ("ZINTER", len(numkeys_keys), *numkeys_keys,
                             *rng.choice([[], ["WEIGHTS", *(["0.5"] * len(numkeys_keys))]]),
                             *rng.choice([[], ["AGGREGATE", "MAX"]]), *rng.choice([[], ["WITHSCORES"]])), {}),
        ("execute_command", ("ZDIFF", len(numkeys_keys), *numkeys_keys, *rng.choice([[], ["WITHSCORES"]])), {}),
        ("execute_command", (rng.choice(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]), other, len(numkeys_keys),
                             *numkeys_keys), {}),
        ("execute_command", ("ZINTERCARD", len(numkeys_keys), *numkeys_keys,
                             *rng.choice([[], ["LIMIT", "1"], ["LIMIT", "-1"], ["BAD"], ["WEIGHTS", "1"]])), {}),
        ("zscan_iter", (key,), rng.choice([{}, {"match": "m1*"}, {"count": 5}])),
        ("zrandmember", (key,), {}), ("zrandmember", (key, rng.choice([0, 3, -4, 300])), {}),
        ("zrandmember", (key, rng.choice([2, -3])), {"withscores": True}),
        ("sadd", (key, *[random_member(rng) for _ in range(rng.choice([1, 3, 20]))]), {}),   # sets feed ZUNION...
        ("set", (key, "x"), {}), ("delete", (key,), {}), ("type", (key,), {}),
        ("rename", (key, other), {}), ("exists", (key,), {}),
        ("copy", (key, other), rng.choice([{}, {"replace": True}])),
        ("execute_command", ("OBJECT", "ENCODING", key), {}),
    ]
    if rng.random() < 0.15:   # lex ranges, on the one key whose scores all equal (else their order is undefined)
        table = [
            ("zadd", (LEX_KEY, {random_member(rng): 0 for _ in range(rng.choice([1, 3, 30, 140]))}), {}),
            ("zrem", (LEX_KEY, *[random_member(rng) for _ in range(rng.randint(1, 6))]), {}),
            ("execute_command", ("ZLEXCOUNT", LEX_KEY, lex, lex2), {}),
            ("execute_command", ("ZRANGE", LEX_KEY, lex, lex2, "BYLEX", *rng.choice([[], ["REV"]]), *limit), {}),
            ("execute_command", ("ZRANGEBYLEX", LEX_KEY, lex, lex2, *limit), {}),
            ("execute_command", ("ZREVRANGEBYLEX", LEX_KEY, lex2, lex, *limit), {}),
            ("execute_command", ("ZREMRANGEBYLEX", LEX_KEY, lex, lex2), {}),
            ("execute_command", ("ZRANGESTORE", "zl-copy", LEX_KEY, lex, lex2, "BYLEX", *limit), {}),
            ("execute_command", ("OBJECT", "ENCODING", LEX_KEY), {}),
        ]
    return rng.choice(table)


def normalise(name, args, kwargs, reply):
    if name == "zrandmember":
        if reply is None or isinstance(reply, bytes):
            return ("one", reply is None)
        return ("many", len(reply))
    return reply


def outcome(client, name, args, kwargs):
    if name == "execute_command" and args[:2] == ("OBJECT", "ENCODING") and client.type(args[2]) == b"set":
        return ("set", "redis 7.0 has no listpack sets: test_set_commands.py checks set encodings")
    try:
        reply = getattr(client, name)(*args, **kwargs)
        if name == "zscan_iter":   # a whole scan: each server's cursors are its own, and SCAN may
            reply = sorted(set(reply))   # return an element twice (a table mid-rehash), as Redis's may
    except ResponseError as error:
        return ("error", str(error))
    return ("ok", normalise(name, args, kwargs, reply))


def zset_state(client, key):
    kind = client.type(key)
    if kind == b"zset":
        return kind, client.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
    if kind == b"set":
        return kind, sorted(client.smembers(key))
    return kind, client.get(key) if kind == b"string" else None


def run(reference, ring, resp, seed):
    for client in (reference, ring, resp):
        client.flushall()
    rng = random.Random(seed)
    for step in range(OPS):
        name, args, kwargs = random_zset_command(rng)
        expected = outcome(reference, name, args, kwargs)
        client = ring if step % 2 == 0 else resp     # both transports, one keyspace
        got = outcome(client, name, args, kwargs)
        assert got == expected, f"step {step}: {name}{args}{kwargs}"
    for key in (*KEYS, LEX_KEY, "zl-copy"):
        assert zset_state(ring, key) == zset_state(resp, key) == zset_state(reference, key)
    # DUMP/RESTORE round trips: each server restores its own payload to an equal set
    for key in KEYS[:3]:
        for client in (reference, ring):
            payload = client.dump(key)
            if payload is not None:
                client.restore("restored-" + key, 0, payload, replace=True)
        assert zset_state(ring, "restored-" + key) == zset_state(reference, "restored-" + key)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_sorted_set_commands_reply_exactly_like_redis(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        run(reference, ring, resp, seed)
    finally:
        reference.close()


SCAN_OPTION_LISTS = [
    (), ("COUNT", "5"), ("COUNT", "0"), ("COUNT", "-1"), ("COUNT", "x"), ("COUNT",), ("MATCH",),
    ("MATCH", "m*"), ("MATCH", "*", "COUNT", "2"), ("COUNT", "2", "MATCH"), ("MATCH", "COUNT", "5"),
    ("NOVALUES",), ("NOPE", "1"), ("COUNT", "3", "COUNT", "x"),
]


@pytest.mark.parametrize("command", ["HSCAN", "SSCAN", "ZSCAN"])
def test_scan_options_are_refused_or_accepted_as_redis_does(command, redis_server, ring, resp):
    """HSCAN, SSCAN and ZSCAN share one options parser (commands/member_scan.c): each option list
    is an error with Redis 7.0's text exactly when redis-server refuses it (NOVALUES is 7.4+)."""
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    fill = {"HSCAN": ("HSET", "scan:k", "m1", "a", "m2", "b"), "SSCAN": ("SADD", "scan:k", "m1", "m2"),
            "ZSCAN": ("ZADD", "scan:k", "1", "m1", "2", "m2")}[command]
    try:
        for client in (reference, ring, resp):
            client.delete("scan:k")
            client.execute_command(*fill)
        for options in SCAN_OPTION_LISTS:
            if command == "HSCAN" and options == ("NOVALUES",):
                continue
            args = (command, "scan:k", "0", *options)
            expected = outcome(reference, "execute_command", args, {})
            for client in (ring, resp):
                got = outcome(client, "execute_command", args, {})
                assert got[0] == expected[0], (args, got, expected)
                if expected[0] == "error":
                    assert got == expected, args
    finally:
        for client in (reference, ring, resp):
            client.delete("scan:k")
        reference.close()


@pytest.mark.parametrize("fill", [("HSET", "scan:k", "m1", "a", "m2", "b"), ("SADD", "scan:k", "m1", "m2"),
                                  ("SADD", "scan:k", "1", "2"), ("ZADD", "scan:k", "1", "m1", "2", "m2")],
                         ids=["hash", "set", "intset", "zset"])
def test_scan_match_of_an_empty_pattern_matches_no_member_as_redis(fill, redis_server, ring, resp):
    """MATCH "" is a pattern that matches only an empty member (Redis's stringmatchlen), not "no
    filter": SSCAN's own collector had taken an empty pattern for none given."""
    command = {"HSET": "HSCAN", "SADD": "SSCAN", "ZADD": "ZSCAN"}[fill[0]]
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for client in (reference, ring, resp):
            client.delete("scan:k")
            client.execute_command(*fill)
        args = (command, "scan:k", "0", "MATCH", "", "COUNT", "100")
        expected = reference.execute_command(*args)
        assert expected[1] == []
        for client in (ring, resp):
            assert client.execute_command(*args) == expected, (client, args)
    finally:
        for client in (reference, ring, resp):
            client.delete("scan:k")
        reference.close()
