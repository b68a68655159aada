"""Differential test of the bitmap commands and GETSET and LCS: a seeded
random sequence of SETBIT, GETBIT, BITCOUNT (BYTE/BIT ranges), BITPOS, BITOP (AND, OR, XOR,
NOT), BITFIELD (GET/SET/INCRBY, OVERFLOW WRAP/SAT/FAIL, #offsets, i1..i64 and u1..u63) and
BITFIELD_RO, GETSET and LCS (LEN, IDX, MINMATCHLEN, WITHMATCHLEN), mixed with the string, list
and key commands that make and change the values they read, runs on a real redis-server and on
goblin, alternately over the ring and over RESP (one keyspace); every reply must be equal,
errors included (their texts, and which error wins when several apply). Malformed argument
lists go through execute_command, so the parse-error paths are compared too. The keys are
shared between types, so WRONGTYPE paths are compared as well.

Random MULTI/EXEC batches of the same commands are compared too (an EXEC reply holding
BITFIELD arrays, LCS ranges and errors). A further run compares the dirty counter (INFO persistence rdb_changes_since_last_save) after
every command too: a bit write that changes nothing counts nothing, as in Redis.

GOBLIN_DIFF_OPS sets the length (default 4000 per seed; the counter run takes a quarter), as
in test_differential.py, whose reply normalisation (outcome) and value generator this reuses."""

from __future__ import annotations

import os
import random

import pytest

from goblin_ring import ResponseError, RespClient
from test_differential import outcome, random_value

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000"))
KEYS = ["a", "b", "c", "d"]

SIGNED_TYPES = [f"i{n}" for n in (1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 33, 63, 64)]
UNSIGNED_TYPES = [f"u{n}" for n in (1, 2, 3, 4, 8, 9, 15, 16, 24, 32, 62, 63)]
BAD_TYPES = ["u64", "i65", "i0", "x8", "u", "8", "i-1", "I8"]


def random_offset(rng):
    """A bit offset: mostly inside a small string, sometimes past it, rarely out of range
    (the 512 MB bound is checked, never reached: Redis would allocate it)."""
    roll = rng.random()
    if roll < 0.7:
        return rng.randint(0, 64)
    if roll < 0.9:
        return rng.randint(0, 700)
    if roll < 0.95:
        return rng.choice([4000, 20_000])
    return rng.choice([-1, "x", "1.5", "", 2 ** 32, 2 ** 40, "08"])


def random_range_number(rng):
    return rng.choice([0, 1, 2, -1, -2, -3, rng.randint(-60, 60), rng.randint(-9, 9), 2 ** 62, -(2 ** 62), "z"])


def random_field_type(rng):
    roll = rng.random()
    if roll < 0.47:
        return rng.choice(SIGNED_TYPES)
    if roll < 0.94:
        return rng.choice(UNSIGNED_TYPES)
    return rng.choice(BAD_TYPES)


def random_field_offset(rng):
    if rng.random() < 0.25:
        return rng.choice(["#0", "#1", "#2", f"#{rng.randint(0, 20)}", "##1", "#-1", "#x"])
    return random_offset(rng)


def random_field_value(rng):
    return rng.choice([0, 1, -1, 2, 100, -100, 127, 128, -129, 255, 256, rng.randint(-10 ** 6, 10 ** 6),
                       2 ** 62, 2 ** 63 - 1, -(2 ** 63), rng.getrandbits(63), "v"])


def random_bitfield_operations(rng):
    """A list of operations for the builder: ("get", t, o), ("set", t, o, v),
    ("incrby", t, o, v), ("overflow", mode)."""
    operations = []
    for _ in range(rng.choice([0, 1, 1, 2, 3, 5])):
        kind = rng.random()
        if kind < 0.15:
            operations.append(("overflow", rng.choice(["WRAP", "SAT", "FAIL", "sat", "fail"])))
        elif kind < 0.45:
            operations.append(("get", random_field_type(rng), random_field_offset(rng)))
        elif kind < 0.7:
            operations.append(("set", random_field_type(rng), random_field_offset(rng), random_field_value(rng)))
        else:
            operations.append(("incrby", random_field_type(rng), random_field_offset(rng), random_field_value(rng)))
    return operations


def run_bitfield(client, key, operations):
    """BITFIELD through the client's builder (redis-py's BitFieldOperation shape)."""
    builder = client.bitfield(key)
    for operation in operations:
        getattr(builder, operation[0])(*operation[1:])
    return builder.execute()


def random_malformed(rng, key):
    """Argument lists the typed methods would not send: wrong counts, bad words."""
    return rng.choice([
        ("BITCOUNT", key, random_range_number(rng)),
        ("BITCOUNT", key, random_range_number(rng), random_range_number(rng), rng.choice(["BIT", "byte", "bits", ""])),
        ("BITCOUNT", key, 0, -1, "BIT", "x"),
        ("BITPOS", key, rng.choice([0, 1, 2, -1, "x"]), random_range_number(rng), random_range_number(rng),
         rng.choice(["BIT", "BYTE", "nope"])),
        ("BITPOS", key, 1, 0, -1, "BIT", "extra"),
        ("SETBIT", key, random_offset(rng), rng.choice([0, 1, 2, -1, "x", "01", ""])),
        ("GETBIT", key, random_offset(rng)),
        ("BITOP", rng.choice(["AND", "or", "Xor", "NOT", "NAND", "DIFF"]), key, *rng.sample(KEYS + ["nokey"], rng.randint(1, 3))),
        ("BITFIELD", key, *rng.choice([["GET"], ["GET", "u8"], ["SET", "u8", 0], ["OVERFLOW"], ["OVERFLOW", "MAYBE"],
                                       ["FOO"], ["INCRBY", "i8", 0, "1.5"], ["GET", "u8", 0, "OVERFLOW", "SAT"]])),
        ("BITFIELD_RO", key, *rng.choice([["SET", "u8", 0, 1], ["INCRBY", "u8", 0, 1], ["GET", "i64", "#3"], ["GET"]])),
        ("LCS", key, rng.choice(KEYS), *rng.choice([["LEN", "IDX"], ["MINMATCHLEN"], ["MINMATCHLEN", "x"],
                                                    ["BOGUS"], ["IDX", "MINMATCHLEN", -3, "WITHMATCHLEN"]])),
        ("GETSET", key),
    ])


def random_text(rng):
    """Short strings with shared letters, so LCS finds something, and bytes of every value."""
    if rng.random() < 0.5:
        return "".join(rng.choice("abcde") for _ in range(rng.randint(0, 24)))
    return random_value(rng)


def random_command(rng):
    key = rng.choice(KEYS)
    other = rng.choice(KEYS)
    kind = rng.random()
    if kind < 0.08:   # values to work on, of every type the keys hold
        return rng.choice([("set", (key, random_text(rng)), {}), ("set", (key, random_text(rng)), {"px": 900_000}),
                           ("rpush", (key, random_value(rng)), {}), ("delete", (key,), {}),
                           ("append", (key, random_text(rng)), {}), ("setrange", (key, rng.randint(0, 40), b"\xff\x00"), {})])
    if kind < 0.14:
        return "execute_command", random_malformed(rng, key), {}
    start, end = random_range_number(rng), random_range_number(rng)
    mode = rng.choice([{}, {}, {"mode": "BYTE"}, {"mode": "BIT"}, {"mode": "bit"}])
    table = [
        ("setbit", (key, random_offset(rng), rng.choice([0, 1])), {}),
        ("setbit", (key, rng.randint(0, 200), rng.choice([0, 1])), {}),
        ("getbit", (key, random_offset(rng)), {}),
        ("bitcount", (key,), {}),
        ("bitcount", (key, start, end), mode),
        ("bitpos", (key, rng.choice([0, 1])), {}),
        ("bitpos", (key, rng.choice([0, 1]), start), {}),
        ("bitpos", (key, rng.choice([0, 1]), start, end), mode),
        ("bitop", (rng.choice(["AND", "OR", "XOR"]), other, *rng.sample(KEYS + ["nokey"], rng.randint(1, 4))), {}),
        ("bitop", ("NOT", other, rng.choice(KEYS + ["nokey"])), {}),
        ("bitfield", (key, random_bitfield_operations(rng)), {}),
        ("bitfield_ro", (key, rng.choice(SIGNED_TYPES + UNSIGNED_TYPES), random_field_offset(rng)),
         rng.choice([{}, {"items": [(rng.choice(UNSIGNED_TYPES), random_field_offset(rng))]}])),
        ("getset", (key, random_text(rng)), {}),
        ("lcs", (key, other), rng.choice([{}, {"len": True}, {"idx": True}, {"idx": True, "withmatchlen": True},
                                          {"idx": True, "minmatchlen": rng.randint(0, 4)},
                                          {"idx": True, "minmatchlen": 2, "withmatchlen": True}])),
        ("get", (key,), {}), ("strlen", (key,), {}), ("type", (key,), {}), ("ttl", (key,), {}),
    ]
    return rng.choice(table)


def run(client, name, args, kwargs):
    if name == "bitfield":
        try:
            return ("ok", run_bitfield(client, *args))
        except ResponseError as error:
            return ("error", str(error))
    return outcome(client, name, args, kwargs)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_bitmap_and_string_commands_reply_exactly_like_redis(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        for step in range(OPS):
            name, args, kwargs = random_command(rng)
            expected = run(reference, name, args, kwargs)
            client = ring if step % 2 == 0 else resp     # both transports, one keyspace
            got = run(client, name, args, kwargs)
            assert got == expected, f"step {step}: {name}{args}{kwargs}"
        for key in KEYS:
            kind = reference.type(key)
            assert ring.type(key) == resp.type(key) == kind
            if kind == b"string":
                assert ring.get(key) == resp.get(key) == reference.get(key)
    finally:
        reference.close()


def dirty(client):
    return client.info("persistence")["rdb_changes_since_last_save"]


@pytest.mark.parametrize("seed", [31, 32])
def test_every_random_bitmap_commands_change_count_is_redis_servers(seed, redis_server, ring, resp):
    with RespClient(port=redis_server.port, socket_timeout=10) as reference:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        theirs_before, ours_before = dirty(reference), dirty(resp)
        for step in range(OPS // 4):
            name, args, kwargs = random_command(rng)
            expected = run(reference, name, args, kwargs)
            client = ring if step % 2 == 0 else resp
            assert run(client, name, args, kwargs) == expected, f"step {step}: {name}{args}{kwargs}"
            theirs, ours = dirty(reference), dirty(resp)
            assert ours - ours_before == theirs - theirs_before, f"step {step}: {name}{args}{kwargs} -> {expected}"
            theirs_before, ours_before = theirs, ours


def transaction_outcome(client, commands):
    """MULTI/EXEC of commands through client's transactional pipeline: each reply (errors as
    their text, TTLs by kind) or the EXECABORT text when one was refused at queue time."""
    pipe = client.pipeline(transaction=True)
    try:
        for name, args, kwargs in commands:
            if name == "bitfield":
                key, operations = args
                builder = pipe.bitfield(key)
                for operation in operations:
                    getattr(builder, operation[0])(*operation[1:])
                builder.execute()
            else:
                getattr(pipe, name)(*args, **kwargs)
        try:
            replies = pipe.execute(raise_on_error=False)
        except ResponseError as error:
            return ("error", str(error).split(" (")[0])   # EXECABORT (goblin's client adds the cause)
    finally:
        pipe.__exit__(None, None, None)
    normalised = []
    for (name, _args, _kwargs), reply in zip(commands, replies):
        if isinstance(reply, ResponseError):
            reply = ("error", str(reply))
        elif name == "ttl" and reply >= 0:
            reply = "remaining"
        normalised.append(reply)
    return ("exec", normalised)


@pytest.mark.parametrize("seed", [41, 42])
def test_random_bitmap_transactions_reply_exactly_like_redis(seed, redis_server, ring, resp):
    """MULTI/EXEC batches of the same commands: an EXEC reply holding BITFIELD's arrays, LCS's
    nested ranges and errors travels over the ring as one ArrayReply tree."""
    with RespClient(port=redis_server.port, socket_timeout=10) as reference:
        for client in (reference, ring, resp):
            client.flushall()
        rng = random.Random(seed)
        for step in range(max(OPS // 20, 50)):
            commands = [random_command(rng) for _ in range(rng.randint(1, 6))]
            expected = transaction_outcome(reference, commands)
            got = transaction_outcome(ring if step % 2 == 0 else resp, commands)
            assert got == expected, f"step {step}: {[(name, args) for name, args, _ in commands]}"
