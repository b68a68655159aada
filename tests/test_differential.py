"""Differential test: a seeded random sequence of list, string, expiry and key commands (COPY too) runs
on a real redis-server (Debian's, started here) and on goblin over the ring and over RESP;
every reply must be equal. The keys are shared between types, so WRONGTYPE paths are
compared too. TTL and PTTL replies are compared by kind (-2, -1 or a remaining time),
because the two servers set an expiry a few microseconds apart; absolute expiry times
(EXPIREAT, EXPIRETIME) are compared exactly. GOBLIN_DIFF_OPS sets the length (default
4000 per seed). It runs against a goblin server of each --list-implementation.

Transactions are compared too: random MULTI/EXEC batches (with queue-time errors) and
WATCH races between two clients, on both transports."""

import itertools
import os
import random

import pytest

from goblin_ring import ResponseError, RespClient, WatchError


@pytest.fixture(scope="module")
def goblin(goblin_each_list_implementation):
    return goblin_each_list_implementation


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


FAR_FUTURE = 4_102_444_800   # 2100-01-01, in seconds

# A relative EXPIRE/PEXPIRE with GT compares now + duration with the key's expiry; when that was
# set by the same duration, the answer is whether a millisecond passed between the two commands,
# which each server decides at its own instant (seen once in CI: redis False, goblin True). So
# each GT duration gets one more second added than the one before it: it ends later than any
# expiry set earlier with the same base duration, on both servers alike.
_GT_SECONDS = itertools.count(1)


def random_number_text(rng):
    return rng.choice([b"0", b"1", b"-7", b"42", b"9223372036854775806", b"-9223372036854775807",
                       b"3.5", b"1e3", b"abc", b" 1", b"01", b"-0"])


def random_string_command(rng):
    key = rng.choice(KEYS)
    other = rng.choice(KEYS)
    value = random_value(rng) if rng.random() < 0.6 else random_number_text(rng)
    expiry = rng.choice([{}, {}, {"ex": rng.choice([1000, 5000])}, {"px": 900_000},
                         {"exat": FAR_FUTURE + rng.randint(0, 9)}, {"pxat": FAR_FUTURE * 1000 + 5},
                         {"keepttl": True}, {"exat": 1}])
    condition = rng.choice([{}, {}, {"nx": True}, {"xx": True}])
    table = [
        ("set", (key, value), {**expiry, **condition, "get": rng.random() < 0.3}),
        ("get", (key,), {}), ("getdel", (key,), {}), ("setnx", (key, value), {}),
        ("setex", (key, rng.choice([1000, 0, -5]), value), {}),
        ("getex", (key,), rng.choice([{}, {"ex": 2000}, {"persist": True}, {"exat": FAR_FUTURE}, {"pxat": 1}])),
        ("mset", ({key: value, other: random_value(rng)},), {}),
        ("msetnx", ({key: value, other: random_value(rng)},), {}),
        ("mget", ([key, other, "nokey"],), {}),
        ("incr", (key,), {}), ("decr", (key,), {}),
        ("incrby", (key, rng.choice([1, -100, 2 ** 62, -(2 ** 63)])), {}),
        ("decrby", (key, rng.choice([1, 2 ** 63 - 1, -5])), {}),
        ("incrbyfloat", (key, rng.choice([0.5, -2.25, 1e10, 3])), {}),
        ("append", (key, value), {}), ("strlen", (key,), {}),
        ("getrange", (key, random_index(rng), random_index(rng)), {}),
        ("setrange", (key, rng.choice([0, 1, 5, 40, -1]), value), {}),
        ("expire", (key, rng.choice([100, 5000, -1])), rng.choice([{}, {"nx": True}, {"xx": True}, {"gt": True},
                                                                   {"lt": True}, {"xx": True, "lt": True}])),
        ("pexpire", (key, rng.choice([100_000, 9_000_000])), rng.choice([{}, {"gt": True}, {"lt": True}])),
        ("expireat", (key, rng.choice([FAR_FUTURE, FAR_FUTURE + 60, 1])), rng.choice([{}, {"gt": True}, {"nx": True}])),
        ("pexpireat", (key, FAR_FUTURE * 1000 + rng.randint(0, 999)), {}),
        ("ttl", (key,), {}), ("pttl", (key,), {}), ("expiretime", (key,), {}), ("pexpiretime", (key,), {}),
        ("persist", (key,), {}),
    ]
    name, args, kwargs = rng.choice(table)
    if name in ("expire", "pexpire") and kwargs.get("gt") and args[1] > 0:
        later = next(_GT_SECONDS) * (1000 if name == "pexpire" else 1)
        args = (args[0], args[1] + later)
    return name, args, kwargs


def random_command(rng):
    if rng.random() < 0.4:
        return random_string_command(rng)
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
        ("copy", (key, other), rng.choice([{}, {"replace": True}, {"destination_db": 0},
                                           {"destination_db": 1}, {"destination_db": 1, "replace": True}])),
    ]
    return rng.choice(table)


def outcome(client, name, args, kwargs):
    if name == "dbsize":
        # A key given a past expiry (SET EXAT 1) stays counted until each server's own active
        # expiry reclaims it; touching every key expires such keys on both first.
        client.exists(*KEYS)
    try:
        reply = getattr(client, name)(*args, **kwargs)
    except ResponseError as error:
        return ("error", str(error))
    if name in ("ttl", "pttl") and reply >= 0:
        reply = "remaining"
    if name in ("expiretime", "pexpiretime") and reply >= 0 and reply < FAR_FUTURE * (1000 if name[0] == "p" else 1):
        reply = "relative"   # set by a relative EXPIRE on each server at its own instant
    return ("ok", reply)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_commands_reply_exactly_like_redis(seed, redis_server, ring, resp):
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
            kind = reference.type(key)
            assert ring.type(key) == resp.type(key) == kind
            if kind == b"list":
                assert ring.lrange(key, 0, -1) == resp.lrange(key, 0, -1) == reference.lrange(key, 0, -1)
            elif kind == b"string":
                assert ring.get(key) == resp.get(key) == reference.get(key)
    finally:
        reference.close()


def transaction_outcome(client, commands, watch=None):
    """MULTI/EXEC of commands through client's transactional pipeline: each reply normalised
    as outcome() does, the EXECABORT text, or "watch" when a WATCHed key was touched."""
    pipe = client.pipeline(transaction=True)
    try:
        for name, args, kwargs in commands:
            if name == "bad-arity":
                pipe.execute_command("GET")
            else:
                getattr(pipe, name)(*args, **kwargs)
        try:
            replies = pipe.execute(raise_on_error=False)
        except WatchError:
            return ("watch",)
        except ResponseError as error:
            return ("error", str(error).split(" (")[0])   # EXECABORT (goblin's client adds the cause)
    finally:
        pipe.__exit__(None, None, None)
    normalised = []
    for (name, _args, _kwargs), reply in zip(commands, replies):
        if isinstance(reply, ResponseError):
            normalised.append(("error", str(reply)))
            continue
        if name in ("ttl", "pttl") and isinstance(reply, int) and reply >= 0:
            reply = "remaining"
        if name in ("expiretime", "pexpiretime") and isinstance(reply, int) and 0 <= reply < FAR_FUTURE * (
                1000 if name[0] == "p" else 1):
            reply = "relative"
        normalised.append(("ok", reply))
    return ("exec", normalised)


def brief(commands):
    """Commands as name(first argument) for a readable failure message."""
    return [f"{name}({str(args[0])[:20] if args else ''}{', ...' if len(args) > 1 else ''})" for name, args, _ in commands]


def random_untimed_command(rng):
    """random_command without a relative EXPIRE/PEXPIRE GT or LT: pipelined, two of them can
    land in one millisecond on one server and not on the other, and then compare differently."""
    while True:
        name, args, kwargs = random_command(rng)
        if not (name in ("expire", "pexpire") and ("gt" in kwargs or "lt" in kwargs)):
            return name, args, kwargs


def random_transaction(rng):
    commands = [random_untimed_command(rng) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.08:                          # a queue-time error: EXEC answers EXECABORT
        commands.insert(rng.randrange(len(commands) + 1), ("bad-arity", (), {}))
    return commands


@pytest.mark.parametrize("seed", [11, 12])
def test_random_transactions_and_watch_races_reply_exactly_like_redis(seed, redis_server, goblin, ring, resp):
    """Transactions of random commands, and WATCH races: one client WATCHes some keys, a
    second client (each on the ring or RESP, in turn, for goblin) runs commands that may or may not
    modify them, then the first runs a transaction; EXEC must run or fail (nil) exactly as
    on redis-server, and every reply must be equal."""
    reference, reference_other = (RespClient(port=redis_server.port, socket_timeout=10) for _ in range(2))
    resp_other = RespClient(port=goblin.port, socket_timeout=10)
    try:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        for step in range(max(OPS // 20, 50)):
            # watcher and toucher on either transport, in turn (an EXEC reply holding errors or
            # nested arrays travels over the ring as one ArrayReply tree)
            watcher, toucher = [(ring, resp), (resp, ring), (resp, resp_other), (ring, ring)][step % 4]
            watched = rng.sample(KEYS, rng.randint(0, 2))
            if watched:
                assert reference.watch(*watched) == watcher.watch(*watched) is True
            touches = []
            for _ in range(rng.choice([0, 0, 1, 2])):
                name, args, kwargs = random_untimed_command(rng)
                touches.append((name, args, kwargs))
                expected = outcome(reference_other, name, args, kwargs)
                assert outcome(toucher, name, args, kwargs) == expected, f"step {step}: {name}{args}{kwargs}"
            commands = random_transaction(rng)
            expected = transaction_outcome(reference, commands)
            got = transaction_outcome(watcher, commands)
            assert got == expected, f"step {step}: watched {watched}, touched by {brief(touches)}, ran {brief(commands)}"
            if rng.random() < 0.2:                   # UNWATCH leaves nothing watched
                assert reference.unwatch() == watcher.unwatch() is True
    finally:
        reference.close()
        reference_other.close()
        resp_other.close()
