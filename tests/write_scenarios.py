"""write_scenarios.py — one scenario per write command of the command table, shared by the
keyspace-event differential (test_keyspace_events_differential.py) and the propagation
differential (test_propagation_differential.py).

A scenario is a short list of commands: setup, then the command under test in its
interesting forms (creating a key, changing it, emptying a container so "del" follows, a
no-op, an error, relative expiry in the past, a STORE with an empty result, its options).
Keys are written "~name": a run replaces "~" with its own prefix, so many runs can share one
keyspace (SORT's BY/GET patterns take the prefix the same way). DumpOf(key) stands for the
payload DUMP gives for that key on the server the scenario runs on (goblin and Redis refuse
each other's payloads).

Every write command in the table must be a key of SCENARIOS or a variant of one:
GOBLIN.PMA.X / GOBLIN.SEG.X (lists on a forced engine) and GOBLIN.RT.X (arrays on the RT
engine) run their base command's scenario with every command of that family in it renamed to
the variant (a list held by one engine is WRONGTYPE to the other's commands), and must publish
what the base command publishes.

Where the events are compared with:
- "redis": redis-server 7.0 runs the same scenario.
- "valkey": valkey-server 9.1 runs it (hash field expiry, HGETDEL/HGETEX/HSETEX: Redis 7.4+).
- "documented": no server we can run has the command (Redis 8.8's AR* arrays; goblin's own
  commands); `expected` lists the (event, key) pairs the scenario publishes, key as written
  (with "~"), db 0 unless a third item says otherwise, and `expected_dirty` each step's change
  count (what INFO's rdb_changes_since_last_save grows by; Redis propagates a command to the
  append-only file exactly when it is not 0).
- "twin": a goblin-only command whose Redis twin is given by `twin` (argv -> argv, or None
  for a command that changes only a value's representation and so publishes nothing);
  redis-server 7.0 runs the scenario with each such step replaced by its twin.
`isolated` marks scenarios that act on whole databases (FLUSHALL, FLUSHDB, SWAPDB): they
cannot share a keyspace with other runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

# An absolute time far in the future (2100-01-01), in seconds and milliseconds, and one in
# the past: absolute expiries a scenario can give without racing the clock.
FAR_SECONDS = "4102444800"
FAR_MS = "4102444800000"
PAST_SECONDS = "1"
PAST_MS = "1"

VARIANT_PREFIXES = ("goblin.pma.", "goblin.seg.", "goblin.rt.")


@dataclass(frozen=True)
class DumpOf:
    """The DUMP payload of `key` on the server the scenario runs on, taken just before the step."""
    key: str


@dataclass
class Scenario:
    steps: list
    reference: str = "redis"        # redis | valkey | documented | twin
    expected: list | None = None     # documented: [(event, "~key"[, db]), ...]
    expected_dirty: list | None = None   # documented: each step's change count (Redis's server.dirty)
    twin: Callable | None = None     # twin: argv -> argv or None
    isolated: bool = False
    relative_time: bool = False      # a step gives a relative expiry (propagation compares within a tolerance)
    notes: str = ""


def _list_scenarios() -> dict:
    s = {}
    for push in ("lpush", "rpush"):
        s[push] = Scenario([(push.upper(), "~l", "a"), (push.upper(), "~l", "b", "c"),
                            ("SET", "~s", "v"), (push.upper(), "~s", "x")])
    for push in ("lpushx", "rpushx"):
        s[push] = Scenario([(push.upper(), "~l", "a"), ("RPUSH", "~l", "x"), (push.upper(), "~l", "a", "b"),
                            ("SET", "~s", "v"), (push.upper(), "~s", "x")])
    for pop in ("lpop", "rpop"):
        s[pop] = Scenario([("RPUSH", "~l", "a", "b", "c", "d"), (pop.upper(), "~l"), (pop.upper(), "~l", "1"),
                           (pop.upper(), "~l", "0"), (pop.upper(), "~l", "5"), (pop.upper(), "~l"),
                           (pop.upper(), "~l", "0"), ("SET", "~s", "v"), (pop.upper(), "~s"),
                           ("RPUSH", "~m", "a"), (pop.upper(), "~m", "-1")])
    s["linsert"] = Scenario([("RPUSH", "~l", "a", "c"), ("LINSERT", "~l", "BEFORE", "c", "b"),
                             ("LINSERT", "~l", "AFTER", "c", "d"), ("LINSERT", "~l", "BEFORE", "zz", "x"),
                             ("LINSERT", "~missing", "BEFORE", "a", "b"), ("LINSERT", "~l", "NEAR", "a", "b")])
    s["lrem"] = Scenario([("RPUSH", "~l", "a", "b", "a", "c", "a"), ("LREM", "~l", "1", "a"),
                          ("LREM", "~l", "-1", "a"), ("LREM", "~l", "0", "zz"), ("LREM", "~l", "0", "b"),
                          ("LREM", "~missing", "0", "a"), ("LREM", "~l", "x", "a"), ("LREM", "~l", "0", "a"),
                          ("LREM", "~l", "0", "c")])
    s["lset"] = Scenario([("RPUSH", "~l", "a", "b"), ("LSET", "~l", "0", "x"), ("LSET", "~l", "-1", "y"),
                          ("LSET", "~l", "5", "x"), ("LSET", "~missing", "0", "x")])
    s["ltrim"] = Scenario([("RPUSH", "~l", "a", "b", "c", "d", "e"), ("LTRIM", "~l", "1", "3"),
                           ("LTRIM", "~l", "0", "-1"), ("LTRIM", "~missing", "0", "1"),
                           ("LTRIM", "~l", "x", "1"), ("LTRIM", "~l", "5", "10")])
    moves = [("LEFT", "RIGHT"), ("RIGHT", "LEFT"), ("LEFT", "LEFT"), ("RIGHT", "RIGHT")]
    s["lmove"] = Scenario([("RPUSH", "~a", "1", "2", "3", "4", "5"),
                           *[("LMOVE", "~a", "~b", *m) for m in moves],
                           ("LMOVE", "~a", "~a", "LEFT", "RIGHT"), ("LMOVE", "~a", "~b", "LEFT", "LEFT"),
                           ("LMOVE", "~missing", "~b", "LEFT", "LEFT"), ("SET", "~s", "v"),
                           ("LMOVE", "~b", "~s", "LEFT", "LEFT"), ("LMOVE", "~b", "~c", "UP", "LEFT")])
    s["blmove"] = Scenario([("RPUSH", "~a", "1", "2", "3", "4"),
                            *[("BLMOVE", "~a", "~b", *m, "0.01") for m in moves],
                            ("BLMOVE", "~missing", "~b", "LEFT", "LEFT", "0.01"),
                            ("BLMOVE", "~b", "~b", "RIGHT", "LEFT", "0.01")])
    s["rpoplpush"] = Scenario([("RPUSH", "~a", "1", "2"), ("RPOPLPUSH", "~a", "~b"), ("RPOPLPUSH", "~b", "~b"),
                               ("RPOPLPUSH", "~a", "~b"), ("RPOPLPUSH", "~missing", "~b"),
                               ("SET", "~s", "v"), ("RPOPLPUSH", "~b", "~s")])
    s["brpoplpush"] = Scenario([("RPUSH", "~a", "1", "2"), ("BRPOPLPUSH", "~a", "~b", "0.01"),
                                ("BRPOPLPUSH", "~a", "~b", "0.01"), ("BRPOPLPUSH", "~a", "~b", "0.01")])
    s["lmpop"] = Scenario([("RPUSH", "~a", "1", "2", "3", "4"), ("LMPOP", "2", "~missing", "~a", "LEFT"),
                           ("LMPOP", "1", "~a", "RIGHT", "COUNT", "2"), ("LMPOP", "1", "~a", "LEFT", "COUNT", "5"),
                           ("LMPOP", "1", "~a", "LEFT"), ("LMPOP", "1", "~a", "UP")])
    s["blmpop"] = Scenario([("RPUSH", "~a", "1", "2", "3"), ("BLMPOP", "0.01", "2", "~missing", "~a", "LEFT"),
                            ("BLMPOP", "0.01", "1", "~a", "RIGHT", "COUNT", "5"),
                            ("BLMPOP", "0.01", "1", "~a", "LEFT")])
    for pop in ("blpop", "brpop"):
        s[pop] = Scenario([("RPUSH", "~a", "1", "2"), (pop.upper(), "~missing", "~a", "0.01"),
                           (pop.upper(), "~a", "0.01"), (pop.upper(), "~a", "0.01")])
    return s


def _string_scenarios() -> dict:
    s = {}
    s["append"] = Scenario([("APPEND", "~s", "ab"), ("APPEND", "~s", "cd"), ("APPEND", "~s", ""),
                            ("APPEND", "~e", ""), ("RPUSH", "~l", "x"), ("APPEND", "~l", "x")])
    for name, args, bad in (("incr", (), None), ("decr", (), None), ("incrby", ("3",), "x"),
                            ("decrby", ("3",), "x"), ("incrbyfloat", ("1.5",), "x")):
        steps = [("SET", "~n", "5"), (name.upper(), "~n", *args), (name.upper(), "~new", *args),
                 ("SET", "~t", "abc"), (name.upper(), "~t", *args), ("SET", "~x", "7", "EX", "100000"),
                 (name.upper(), "~x", *args), ("RPUSH", "~l", "x"), (name.upper(), "~l", *args)]
        if bad:
            steps.append((name.upper(), "~n", bad))
        s[name] = Scenario(steps, relative_time=True)
    s["getdel"] = Scenario([("SET", "~s", "v"), ("GETDEL", "~s"), ("GETDEL", "~missing"),
                            ("RPUSH", "~l", "x"), ("GETDEL", "~l")])
    s["getex"] = Scenario([("SET", "~s", "v"), ("GETEX", "~s", "EX", "100000"), ("GETEX", "~s", "PX", "200000000"),
                           ("GETEX", "~s", "EXAT", FAR_SECONDS), ("GETEX", "~s", "PXAT", FAR_MS),
                           ("GETEX", "~s", "PERSIST"), ("GETEX", "~s"), ("GETEX", "~s", "EX", "0"),
                           ("GETEX", "~s", "EX", "x"), ("GETEX", "~missing", "EX", "10"),
                           ("GETEX", "~s", "PXAT", PAST_MS), ("SET", "~t", "v"), ("GETEX", "~t", "EXAT", PAST_SECONDS)],
                          relative_time=True)
    s["getset"] = Scenario([("GETSET", "~s", "a"), ("GETSET", "~s", "b"), ("SET", "~t", "v", "EX", "100000"),
                            ("GETSET", "~t", "w"), ("RPUSH", "~l", "x"), ("GETSET", "~l", "y")], relative_time=True)
    s["mset"] = Scenario([("MSET", "~a", "1", "~b", "2"), ("MSET", "~a", "3"), ("SET", "~t", "v", "EX", "100000"),
                          ("MSET", "~t", "w")], relative_time=True)
    s["msetnx"] = Scenario([("MSETNX", "~a", "1", "~b", "2"), ("MSETNX", "~a", "1", "~c", "3"),
                            ("MSETNX", "~c", "3")])
    s["psetex"] = Scenario([("PSETEX", "~s", "100000000", "v"), ("PSETEX", "~s", "0", "v"),
                            ("PSETEX", "~s", "-5", "v"), ("PSETEX", "~t", "200000000", "w")], relative_time=True)
    s["setex"] = Scenario([("SETEX", "~s", "100000", "v"), ("SETEX", "~s", "-1", "v"),
                           ("SETEX", "~s", "x", "v"), ("SETEX", "~t", "200000", "w")], relative_time=True)
    s["set"] = Scenario([("SET", "~s", "v"), ("SET", "~s", "w", "EX", "100000"), ("SET", "~s", "x", "KEEPTTL"),
                         ("SET", "~s", "y", "NX"), ("SET", "~s", "z", "XX"), ("SET", "~new", "z", "XX"),
                         ("SET", "~s", "g", "GET"), ("SET", "~s", "h", "PX", "200000000"),
                         ("SET", "~s", "i", "EXAT", FAR_SECONDS), ("SET", "~s", "j", "PXAT", FAR_MS),
                         ("SET", "~s", "k", "EX", "0"), ("SET", "~s", "k", "EX", "x"),
                         ("SET", "~s", "k", "NX", "XX"), ("SET", "~n", "v", "NX", "GET"),
                         ("SET", "~p", "v", "PXAT", PAST_MS), ("SET", "~s", "l", "EXAT", PAST_SECONDS),
                         ("RPUSH", "~l", "x"), ("SET", "~l", "v", "GET"), ("SET", "~l", "v")], relative_time=True)
    s["setnx"] = Scenario([("SETNX", "~s", "v"), ("SETNX", "~s", "w")])
    s["setrange"] = Scenario([("SETRANGE", "~s", "0", "ab"), ("SETRANGE", "~s", "5", "cd"),
                              ("SETRANGE", "~s", "0", ""), ("SETRANGE", "~missing", "0", ""),
                              ("SETRANGE", "~missing", "3", ""), ("SETRANGE", "~s", "-1", "x"),
                              ("RPUSH", "~l", "x"), ("SETRANGE", "~l", "0", "y")])
    s["setbit"] = Scenario([("SETBIT", "~b", "7", "1"), ("SETBIT", "~b", "7", "1"), ("SETBIT", "~b", "7", "0"),
                            ("SETBIT", "~b", "100", "1"), ("SETBIT", "~b", "x", "1"), ("SETBIT", "~b", "1", "2")])
    s["bitfield"] = Scenario([("BITFIELD", "~b", "SET", "u8", "0", "255"), ("BITFIELD", "~b", "INCRBY", "u8", "0", "1"),
                              ("BITFIELD", "~b", "GET", "u8", "0"), ("BITFIELD", "~new", "GET", "u8", "0"),
                              ("BITFIELD", "~b", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"),
                              ("BITFIELD", "~b", "SET", "x8", "0", "1")])
    s["bitop"] = Scenario([("SET", "~a", "abc"), ("SET", "~b", "abd"), ("BITOP", "AND", "~d", "~a", "~b"),
                           ("BITOP", "OR", "~d", "~a", "~missing"), ("BITOP", "XOR", "~d", "~missing", "~missing2"),
                           ("BITOP", "XOR", "~e", "~missing"), ("BITOP", "NOT", "~d", "~a"),
                           ("BITOP", "NOT", "~d", "~a", "~b")])
    return s


# A key in database 1, written without COPY or MOVE (whose own events are under test).
IN_DB1 = [("SELECT", "1"), ("SET", "~a", "1"), ("SELECT", "0")]


def _generic_scenarios() -> dict:
    s = {}
    s["copy"] = Scenario([("SET", "~s", "v", "EX", "100000"), ("COPY", "~s", "~d"), ("COPY", "~s", "~d"),
                          ("COPY", "~s", "~d", "REPLACE"), ("COPY", "~s", "~d", "DB", "1"),
                          ("COPY", "~missing", "~e"), ("RPUSH", "~l", "a", "b"), ("COPY", "~l", "~l2"),
                          ("COPY", "~l", "~l"), ("COPY", "~l", "~d", "DB", "x")], relative_time=True)
    for name in ("del", "unlink"):
        s[name] = Scenario([("SET", "~a", "1"), ("RPUSH", "~b", "2"), (name.upper(), "~a", "~b", "~missing"),
                            (name.upper(), "~missing")])
    s["expire"] = Scenario([("SET", "~s", "v"), ("EXPIRE", "~s", "100000"), ("EXPIRE", "~s", "200000", "NX"),
                            ("EXPIRE", "~s", "300000", "XX"), ("EXPIRE", "~s", "10000", "GT"),
                            ("EXPIRE", "~s", "500000", "LT"), ("EXPIRE", "~s", "1000", "LT"),
                            ("EXPIRE", "~missing", "10"), ("EXPIRE", "~s", "x"), ("EXPIRE", "~s", "10", "NX", "XX"),
                            ("EXPIRE", "~s", "-1"), ("SET", "~t", "v"), ("EXPIRE", "~t", "0")], relative_time=True)
    s["pexpire"] = Scenario([("SET", "~s", "v"), ("PEXPIRE", "~s", "100000000"), ("PEXPIRE", "~s", "200000000", "NX"),
                             ("PEXPIRE", "~s", "300000000", "XX"), ("PEXPIRE", "~s", "1000000", "GT"),
                             ("PEXPIRE", "~s", "10000000", "LT"), ("PEXPIRE", "~missing", "10"),
                             ("PEXPIRE", "~s", "x"), ("PEXPIRE", "~s", "-1"), ("SET", "~t", "v"),
                             ("PEXPIRE", "~t", "0")], relative_time=True)
    s["expireat"] = Scenario([("SET", "~s", "v"), ("EXPIREAT", "~s", FAR_SECONDS), ("EXPIREAT", "~s", "4102444900", "NX"),
                              ("EXPIREAT", "~s", "4102444700", "GT"), ("EXPIREAT", "~s", "4102444700", "LT"),
                              ("EXPIREAT", "~missing", FAR_SECONDS), ("EXPIREAT", "~s", "x"),
                              ("EXPIREAT", "~s", PAST_SECONDS)])
    s["pexpireat"] = Scenario([("SET", "~s", "v"), ("PEXPIREAT", "~s", FAR_MS), ("PEXPIREAT", "~s", "4102444800001", "XX"),
                               ("PEXPIREAT", "~s", "4102444700000", "GT"), ("PEXPIREAT", "~missing", FAR_MS),
                               ("PEXPIREAT", "~s", PAST_MS)])
    s["persist"] = Scenario([("SET", "~s", "v", "EX", "100000"), ("PERSIST", "~s"), ("PERSIST", "~s"),
                             ("PERSIST", "~missing")])
    s["move"] = Scenario([("SET", "~s", "v", "EX", "100000"), ("MOVE", "~s", "1"), ("SET", "~s", "v2"),
                          ("MOVE", "~s", "1"), ("MOVE", "~missing", "1"), ("MOVE", "~s", "0"),
                          ("MOVE", "~s", "x"), ("RPUSH", "~l", "a"), ("MOVE", "~l", "2")], relative_time=True)
    s["rename"] = Scenario([("SET", "~a", "v"), ("RENAME", "~a", "~b"), ("RENAME", "~b", "~b"),
                            ("RENAME", "~missing", "~c"), ("SET", "~c", "x", "EX", "100000"), ("RENAME", "~c", "~b"),
                            ("RPUSH", "~l", "a"), ("RENAME", "~l", "~b")], relative_time=True)
    s["renamenx"] = Scenario([("SET", "~a", "v"), ("SET", "~b", "w"), ("RENAMENX", "~a", "~b"),
                              ("RENAMENX", "~a", "~c"), ("RENAMENX", "~missing", "~d"), ("RENAMENX", "~c", "~c")])
    s["restore"] = Scenario([("SET", "~src", "v"), ("RPUSH", "~lsrc", "a", "b"),
                             ("RESTORE", "~d", "0", DumpOf("~src")), ("RESTORE", "~d", "0", DumpOf("~src")),
                             ("RESTORE", "~d", "0", DumpOf("~lsrc"), "REPLACE"),
                             ("RESTORE", "~e", "100000000", DumpOf("~src")),
                             ("RESTORE", "~f", FAR_MS, DumpOf("~src"), "ABSTTL"),
                             ("RESTORE", "~g", PAST_MS, DumpOf("~src"), "ABSTTL"),
                             ("RESTORE", "~h", "0", "not a payload"), ("RESTORE", "~i", "-1", DumpOf("~src"))],
                            relative_time=True)
    s["sort"] = Scenario([("RPUSH", "~l", "3", "1", "2"), ("SORT", "~l", "STORE", "~d"), ("SORT", "~l"),
                          ("MSET", "~w_1", "30", "~w_2", "20", "~w_3", "10"),
                          ("SORT", "~l", "BY", "~w_*", "STORE", "~d"), ("SORT", "~l", "LIMIT", "0", "1", "DESC", "STORE", "~e"),
                          ("SORT", "~missing", "STORE", "~d"), ("SORT", "~missing", "STORE", "~never"),
                          ("RPUSH", "~a", "x"), ("SORT", "~a", "STORE", "~d")])
    s["flushall"] = Scenario([("SET", "~a", "1"), *IN_DB1, ("FLUSHALL",), ("SET", "~b", "2"),
                              ("FLUSHALL", "ASYNC"), ("SET", "~c", "3"), ("FLUSHALL", "SYNC"), ("FLUSHALL",),
                              ("SET", "~d", "4")], isolated=True)
    s["flushdb"] = Scenario([("SET", "~a", "1"), *IN_DB1, ("FLUSHDB",), ("SET", "~b", "2"),
                             ("FLUSHDB", "ASYNC"), ("FLUSHDB",), ("SET", "~c", "3")], isolated=True)
    s["swapdb"] = Scenario([("SET", "~a", "1"), ("RPUSH", "~l", "x"), *IN_DB1,
                            ("SWAPDB", "0", "1"), ("SWAPDB", "0", "0"), ("SWAPDB", "1", "2"), ("SWAPDB", "0", "99"),
                            ("SET", "~c", "3")], isolated=True)
    return s


def _hash_scenarios() -> dict:
    s = {}
    for name in ("hset", "hmset"):
        s[name] = Scenario([(name.upper(), "~h", "f", "1"), (name.upper(), "~h", "f", "2", "g", "3"),
                            (name.upper(), "~h", "f", "2"), ("SET", "~s", "v"), (name.upper(), "~s", "f", "1")])
    s["hsetnx"] = Scenario([("HSETNX", "~h", "f", "1"), ("HSETNX", "~h", "f", "2"), ("HSETNX", "~h", "g", "2")])
    s["hdel"] = Scenario([("HSET", "~h", "f", "1", "g", "2", "k", "3"), ("HDEL", "~h", "f", "zz"), ("HDEL", "~h", "zz"),
                          ("HDEL", "~missing", "f"), ("HDEL", "~h", "g", "k")])
    s["hincrby"] = Scenario([("HINCRBY", "~h", "f", "5"), ("HINCRBY", "~h", "f", "-2"), ("HSET", "~h", "t", "x"),
                             ("HINCRBY", "~h", "t", "1"), ("HINCRBY", "~h", "f", "x")])
    s["hincrbyfloat"] = Scenario([("HINCRBYFLOAT", "~h", "f", "1.5"), ("HINCRBYFLOAT", "~h", "f", "-0.25"),
                                  ("HSET", "~h", "t", "x"), ("HINCRBYFLOAT", "~h", "t", "1"),
                                  ("HINCRBYFLOAT", "~h", "f", "x")])
    # Field expiry (Redis 7.4+ / Valkey 9): compared with valkey-server 9.1.
    for name, far, past in (("hexpire", "100000", "0"), ("hpexpire", "100000000", "0"),
                            ("hexpireat", FAR_SECONDS, PAST_SECONDS), ("hpexpireat", FAR_MS, PAST_MS)):
        s[name] = Scenario([("HSET", "~h", "f", "1", "g", "2", "k", "3"),
                            (name.upper(), "~h", far, "FIELDS", "1", "f"),
                            (name.upper(), "~h", far, "NX", "FIELDS", "1", "f"),
                            (name.upper(), "~h", far, "XX", "FIELDS", "2", "f", "g"),
                            (name.upper(), "~h", far, "FIELDS", "1", "zz"),
                            (name.upper(), "~missing", far, "FIELDS", "1", "f"),
                            (name.upper(), "~h", past, "FIELDS", "1", "g"),
                            (name.upper(), "~h", far, "FIELDS", "2", "f"),
                            (name.upper(), "~h", past, "FIELDS", "2", "f", "k")],
                           reference="valkey", relative_time=name in ("hexpire", "hpexpire"))
    s["hpersist"] = Scenario([("HSET", "~h", "f", "1", "g", "2"), ("HEXPIRE", "~h", "100000", "FIELDS", "1", "f"),
                              ("HPERSIST", "~h", "FIELDS", "1", "f"), ("HPERSIST", "~h", "FIELDS", "2", "f", "g"),
                              ("HPERSIST", "~h", "FIELDS", "1", "zz"), ("HPERSIST", "~missing", "FIELDS", "1", "f")],
                             reference="valkey")
    s["hgetdel"] = Scenario([("HSET", "~h", "f", "1", "g", "2", "k", "3"), ("HGETDEL", "~h", "FIELDS", "1", "f"),
                             ("HGETDEL", "~h", "FIELDS", "1", "zz"), ("HGETDEL", "~missing", "FIELDS", "1", "f"),
                             ("HGETDEL", "~h", "FIELDS", "2", "g", "k")], reference="valkey")
    s["hgetex"] = Scenario([("HSET", "~h", "f", "1", "g", "2", "k", "3"),
                            ("HGETEX", "~h", "EX", "100000", "FIELDS", "1", "f"),
                            ("HGETEX", "~h", "PERSIST", "FIELDS", "1", "f"), ("HGETEX", "~h", "FIELDS", "1", "g"),
                            ("HGETEX", "~h", "PXAT", FAR_MS, "FIELDS", "2", "f", "zz"),
                            ("HGETEX", "~missing", "EX", "10", "FIELDS", "1", "f"),
                            ("HGETEX", "~h", "EX", "x", "FIELDS", "1", "f"),
                            ("HGETEX", "~h", "EXAT", PAST_SECONDS, "FIELDS", "1", "g"),
                            ("HGETEX", "~h", "PX", "0", "FIELDS", "2", "f", "k")],
                           reference="valkey", relative_time=True)
    s["hsetex"] = Scenario([("HSETEX", "~h", "EX", "100000", "FIELDS", "1", "f", "1"),
                            ("HSETEX", "~h", "FNX", "EX", "100000", "FIELDS", "1", "f", "2"),
                            ("HSETEX", "~h", "FXX", "KEEPTTL", "FIELDS", "1", "f", "3"),
                            ("HSETEX", "~h", "FIELDS", "1", "g", "4"),
                            ("HSETEX", "~h", "PXAT", FAR_MS, "FIELDS", "1", "g", "5"),
                            ("HSETEX", "~h", "EXAT", PAST_SECONDS, "FIELDS", "1", "k", "6"),
                            ("HSETEX", "~new", "EXAT", PAST_SECONDS, "FIELDS", "1", "k", "6"),
                            ("HSETEX", "~h", "EX", "x", "FIELDS", "1", "f", "1")],
                           reference="valkey", relative_time=True)
    return s


def _set_scenarios() -> dict:
    s = {}
    s["sadd"] = Scenario([("SADD", "~s", "a", "b"), ("SADD", "~s", "a"), ("SADD", "~s", "c", "a"),
                          ("SET", "~t", "v"), ("SADD", "~t", "a")])
    s["srem"] = Scenario([("SADD", "~s", "a", "b", "c"), ("SREM", "~s", "a", "zz"), ("SREM", "~s", "zz"),
                          ("SREM", "~missing", "a"), ("SREM", "~s", "b", "c")])
    s["smove"] = Scenario([("SADD", "~a", "1", "2", "3"), ("SADD", "~b", "2"), ("SMOVE", "~a", "~b", "1"),
                           ("SMOVE", "~a", "~b", "2"), ("SMOVE", "~a", "~b", "9"), ("SMOVE", "~a", "~a", "3"),
                           ("SMOVE", "~a", "~c", "3"), ("SMOVE", "~missing", "~b", "1"),
                           ("SET", "~s", "v"), ("SMOVE", "~b", "~s", "1")])
    s["spop"] = Scenario([("SADD", "~s", "a", "b", "c", "d", "e"), ("SPOP", "~s"), ("SPOP", "~s", "2"),
                          ("SPOP", "~s", "0"), ("SPOP", "~s", "-1"), ("SPOP", "~s", "5"), ("SPOP", "~missing"),
                          ("SADD", "~t", "a"), ("SPOP", "~t")])
    for name in ("sinterstore", "sunionstore", "sdiffstore"):
        s[name] = Scenario([("SADD", "~a", "1", "2", "3"), ("SADD", "~b", "2", "3", "4"),
                            (name.upper(), "~d", "~a", "~b"), (name.upper(), "~d", "~a"),
                            (name.upper(), "~d", "~missing"), (name.upper(), "~never", "~missing"),
                            ("SET", "~s", "v"), (name.upper(), "~d", "~s")])
    return s


def _zset_scenarios() -> dict:
    s = {}
    s["zadd"] = Scenario([("ZADD", "~z", "1", "a", "2", "b"), ("ZADD", "~z", "1", "a"), ("ZADD", "~z", "XX", "5", "a"),
                          ("ZADD", "~z", "NX", "9", "a"), ("ZADD", "~z", "INCR", "2", "b"),
                          ("ZADD", "~z", "GT", "1", "a"), ("ZADD", "~z", "CH", "7", "a", "8", "c"),
                          ("ZADD", "~z", "x", "a"), ("ZADD", "~z", "NX", "INCR", "1", "a"),
                          ("ZADD", "~new", "XX", "1", "a"), ("SET", "~s", "v"), ("ZADD", "~s", "1", "a")])
    s["zincrby"] = Scenario([("ZINCRBY", "~z", "1", "a"), ("ZINCRBY", "~z", "2.5", "a"), ("ZINCRBY", "~z", "x", "a")])
    s["zrem"] = Scenario([("ZADD", "~z", "1", "a", "2", "b"), ("ZREM", "~z", "a", "zz"), ("ZREM", "~z", "zz"),
                          ("ZREM", "~missing", "a"), ("ZREM", "~z", "b")])
    for name, first, empty in (("zremrangebyrank", ("0", "0"), ("0", "-1")),
                               ("zremrangebyscore", ("-inf", "1"), ("-inf", "+inf")),
                               ("zremrangebylex", ("-", "[a"), ("-", "+"))):
        s[name] = Scenario([("ZADD", "~z", "1", "a", "1", "b", "1", "c"), (name.upper(), "~z", *first),
                            (name.upper(), "~z", "5", "4") if name != "zremrangebylex" else (name.upper(), "~z", "[x", "[y"),
                            (name.upper(), "~missing", *empty), (name.upper(), "~z", *empty)])
    for name in ("zpopmin", "zpopmax"):
        s[name] = Scenario([("ZADD", "~z", "1", "a", "2", "b", "3", "c", "4", "d"), (name.upper(), "~z"),
                            (name.upper(), "~z", "2"), (name.upper(), "~z", "0"), (name.upper(), "~z", "5"),
                            (name.upper(), "~missing")])
    for name in ("bzpopmin", "bzpopmax"):
        s[name] = Scenario([("ZADD", "~z", "1", "a", "2", "b"), (name.upper(), "~missing", "~z", "0.01"),
                            (name.upper(), "~z", "0.01"), (name.upper(), "~z", "0.01")])
    s["zmpop"] = Scenario([("ZADD", "~z", "1", "a", "2", "b", "3", "c"), ("ZMPOP", "2", "~missing", "~z", "MIN"),
                           ("ZMPOP", "1", "~z", "MAX", "COUNT", "1"), ("ZMPOP", "1", "~z", "MIN", "COUNT", "5"),
                           ("ZMPOP", "1", "~z", "MIN")])
    s["bzmpop"] = Scenario([("ZADD", "~z", "1", "a", "2", "b", "3", "c"), ("BZMPOP", "0.01", "2", "~missing", "~z", "MIN"),
                            ("BZMPOP", "0.01", "1", "~z", "MAX", "COUNT", "5"), ("BZMPOP", "0.01", "1", "~z", "MIN")])
    for name in ("zunionstore", "zinterstore", "zdiffstore"):
        extra = () if name == "zdiffstore" else ("WEIGHTS", "2", "3", "AGGREGATE", "MAX")
        s[name] = Scenario([("ZADD", "~a", "1", "x", "2", "y"), ("ZADD", "~b", "3", "y", "4", "w"),
                            (name.upper(), "~d", "2", "~a", "~b"), (name.upper(), "~d", "2", "~a", "~b", *extra),
                            (name.upper(), "~d", "1", "~missing"), (name.upper(), "~never", "1", "~missing"),
                            ("SET", "~s", "v"), (name.upper(), "~d", "1", "~s")])
    s["zrangestore"] = Scenario([("ZADD", "~a", "1", "x", "2", "y", "3", "z"), ("ZRANGESTORE", "~d", "~a", "0", "1"),
                                 ("ZRANGESTORE", "~d", "~a", "(1", "+inf", "BYSCORE"),
                                 ("ZRANGESTORE", "~d", "~a", "[x", "[y", "BYLEX"),
                                 ("ZRANGESTORE", "~d", "~a", "5", "10"), ("ZRANGESTORE", "~never", "~missing", "0", "1"),
                                 ("ZRANGESTORE", "~d", "~a", "x", "1")])
    # goblin-only: change a sorted set's representation, not its contents; the twin is no command.
    s["goblin.zset.convert"] = Scenario([("ZADD", "~z", "1", "1", "2", "2"), ("GOBLIN.ZSET.CONVERT", "~z", "PACKED"),
                                         ("GOBLIN.ZSET.CONVERT", "~z", "STANDARD"),
                                         ("GOBLIN.ZSET.CONVERT", "~missing", "PACKED"),
                                         ("GOBLIN.ZSET.CONVERT", "~z", "ROUND")],
                                        reference="twin", twin=lambda argv: None)
    s["goblin.optimize"] = Scenario([("ZADD", "~z", "1", "a", "2", "b"), ("ZREM", "~z", "a"), ("GOBLIN.OPTIMIZE", "~z"),
                                     ("RPUSH", "~l", "a", "b"), ("GOBLIN.OPTIMIZE", "~l"), ("GOBLIN.OPTIMIZE", "~missing")],
                                    reference="twin", twin=lambda argv: None)
    return s


def _stream_scenarios() -> dict:
    """Streams, against redis-server 7.0. IDs are explicit where the key's contents must agree
    between servers; "*" steps check that the generated ID is what propagates. XCLAIM gives
    TIME so its effect does not depend on when it ran."""
    s = {}
    s["xadd"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "1-*", "b", "2"),
                          ("XADD", "~x", "*", "c", "3"), ("XADD", "~x", "MAXLEN", "2", "*", "d", "4"),
                          ("XADD", "~x", "MAXLEN", "~", "1", "LIMIT", "10", "*", "e", "5"),
                          ("XADD", "~x", "MINID", "=", "0-5", "*", "f", "6"),
                          ("XADD", "~missing", "NOMKSTREAM", "1-1", "a", "b"), ("XADD", "~x", "0-0", "a", "b"),
                          ("XADD", "~x", "5-1", "a"), ("SET", "~s", "v"), ("XADD", "~s", "1-1", "a", "b")])
    s["xdel"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "2-1", "a", "2"), ("XDEL", "~x", "1-1", "9-9"),
                          ("XDEL", "~x", "9-9"), ("XDEL", "~x", "bad"), ("XDEL", "~missing", "1-1"), ("XDEL", "~x", "2-1"),
                          ("EXISTS", "~x")])
    s["xtrim"] = Scenario([*[("XADD", "~x", f"{i}-1", "f", "v") for i in range(1, 8)], ("XTRIM", "~x", "MAXLEN", "5"),
                           ("XTRIM", "~x", "MAXLEN", "~", "1"), ("XTRIM", "~x", "MINID", "4"), ("XTRIM", "~x", "MINID", "1"),
                           ("XTRIM", "~x", "MAXLEN", "~", "0", "LIMIT", "100"), ("XTRIM", "~missing", "MAXLEN", "0"),
                           ("XTRIM", "~x", "LIMIT", "1"), ("XTRIM", "~x", "MAXLEN", "0")])
    s["xsetid"] = Scenario([("XADD", "~x", "5-1", "a", "1"), ("XSETID", "~x", "6-0"), ("XSETID", "~x", "1-0"),
                            ("XSETID", "~x", "7-0", "ENTRIESADDED", "9", "MAXDELETEDID", "3-0"),
                            ("XSETID", "~missing", "1-0"), ("XSETID", "~x", "x")])
    s["xgroup"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XGROUP", "CREATE", "~x", "g", "0"),
                            ("XGROUP", "CREATE", "~x", "g", "$"), ("XGROUP", "CREATE", "~new", "g", "$", "MKSTREAM"),
                            ("XGROUP", "CREATE", "~none", "g", "$"), ("XGROUP", "SETID", "~x", "g", "1-1", "ENTRIESREAD", "1"),
                            ("XGROUP", "CREATECONSUMER", "~x", "g", "c"), ("XGROUP", "CREATECONSUMER", "~x", "g", "c"),
                            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "~x", "0"),
                            ("XGROUP", "DELCONSUMER", "~x", "g", "c"), ("XGROUP", "DELCONSUMER", "~x", "g", "zz"),
                            ("XGROUP", "DESTROY", "~x", "g"), ("XGROUP", "DESTROY", "~x", "g")])
    s["xreadgroup"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "2-1", "b", "2"),
                                ("XGROUP", "CREATE", "~x", "g", "0"),
                                ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "~x", ">"),
                                ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "~x", "0"),
                                ("XREADGROUP", "GROUP", "g", "c2", "NOACK", "STREAMS", "~x", ">"),
                                ("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "~x", ">"),
                                ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "~x", ">"),
                                ("XREADGROUP", "GROUP", "zz", "c", "STREAMS", "~x", ">")])
    s["xack"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "2-1", "b", "2"), ("XGROUP", "CREATE", "~x", "g", "0"),
                          ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "~x", ">"), ("XACK", "~x", "g", "1-1", "9-9"),
                          ("XACK", "~x", "g", "1-1"), ("XACK", "~x", "zz", "2-1"), ("XACK", "~x", "g", "bad")])
    s["xclaim"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "2-1", "b", "2"), ("XGROUP", "CREATE", "~x", "g", "0"),
                            ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "~x", ">"),
                            ("XCLAIM", "~x", "g", "d", "0", "1-1", "TIME", "1700000000000"),
                            ("XCLAIM", "~x", "g", "d", "0", "2-1", "RETRYCOUNT", "7", "TIME", "1700000000000", "JUSTID"),
                            ("XCLAIM", "~x", "g", "d", "3600000", "1-1"), ("XCLAIM", "~x", "g", "d", "0", "5-5"),
                            ("XCLAIM", "~x", "g", "d", "0", "9-9", "LASTID", "9-9"), ("XDEL", "~x", "2-1"),
                            ("XCLAIM", "~x", "g", "e", "0", "2-1", "TIME", "1700000000000"),
                            ("XCLAIM", "~x", "zz", "d", "0", "1-1"), ("XCLAIM", "~x", "g", "d", "0", "1-1", "BOGUS")])
    s["xautoclaim"] = Scenario([("XADD", "~x", "1-1", "a", "1"), ("XADD", "~x", "2-1", "b", "2"),
                                ("XGROUP", "CREATE", "~x", "g", "0"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "~x", ">"),
                                ("XDEL", "~x", "1-1"), ("XAUTOCLAIM", "~x", "g", "d", "0", "0", "COUNT", "1", "JUSTID"),
                                ("XAUTOCLAIM", "~x", "g", "d", "3600000", "0"), ("XAUTOCLAIM", "~x", "g", "d", "0", "0"),
                                ("XAUTOCLAIM", "~x", "zz", "d", "0", "0"), ("XAUTOCLAIM", "~x", "g", "d", "0", "0", "COUNT", "0")])
    return s


def _array_scenarios() -> dict:
    """Redis 8.8's AR* commands. The expected events are read from Redis's own array command
    layer, src/t_array.c of redis/redis (each handler's notifyKeyspaceEvent calls): every
    successful write publishes its command's name (class array); ARDEL/ARDELRANGE publish
    only when they deleted something and then "del" when the array became empty; ARSEEK on
    a missing key, errors and WRONGTYPE publish nothing; a write creating the key publishes
    "new" first (dbAdd). The change counts are the handlers' server.dirty increments: the
    number of values written (ARSET, ARINSERT, ARRING), of pairs (ARMSET), of slots deleted
    (ARDEL, ARDELRANGE), 1 for ARSEEK on an existing key, 0 for errors and no-ops.
    ARRESERVE (goblin's RT family) has no Redis twin: by the same convention it publishes
    "new" and "arreserve" and counts 1."""
    s = {}
    s["arset"] = Scenario([("ARSET", "~a", "0", "x", "y"), ("ARSET", "~a", "5", "z"), ("ARSET", "~a", "x", "v"),
                           ("SET", "~s", "v"), ("ARSET", "~s", "0", "x")],
                          reference="documented",
                          expected=[("new", "~a"), ("arset", "~a"), ("arset", "~a"), ("new", "~s"), ("set", "~s")],
                          expected_dirty=[2, 1, 0, 1, 0])
    s["armset"] = Scenario([("ARMSET", "~a", "0", "x", "9", "y"), ("ARMSET", "~a", "0", "z"),
                            ("ARMSET", "~a", "x", "v")], reference="documented",
                           expected=[("new", "~a"), ("armset", "~a"), ("armset", "~a")], expected_dirty=[2, 1, 0])
    s["ardel"] = Scenario([("ARSET", "~a", "0", "x", "y"), ("ARDEL", "~a", "5"), ("ARDEL", "~a", "0"),
                           ("ARDEL", "~missing", "0"), ("ARDEL", "~a", "x"), ("ARDEL", "~a", "1", "3")],
                          reference="documented",
                          expected=[("new", "~a"), ("arset", "~a"), ("ardel", "~a"), ("ardel", "~a"), ("del", "~a")],
                          expected_dirty=[2, 0, 1, 0, 0, 1])
    s["ardelrange"] = Scenario([("ARSET", "~a", "0", "a", "b", "c", "d"), ("ARDELRANGE", "~a", "10", "20"),
                                ("ARDELRANGE", "~a", "2", "0"), ("ARDELRANGE", "~missing", "0", "1"),
                                ("ARDELRANGE", "~a", "0", "x"), ("ARDELRANGE", "~a", "0", "100")],
                               reference="documented",
                               expected=[("new", "~a"), ("arset", "~a"), ("ardelrange", "~a"),
                                         ("ardelrange", "~a"), ("del", "~a")],
                               expected_dirty=[4, 0, 3, 0, 0, 1])
    s["arinsert"] = Scenario([("ARINSERT", "~a", "x"), ("ARINSERT", "~a", "y", "z"), ("SET", "~s", "v"),
                              ("ARINSERT", "~s", "x")], reference="documented",
                             expected=[("new", "~a"), ("arinsert", "~a"), ("arinsert", "~a"), ("new", "~s"), ("set", "~s")],
                             expected_dirty=[1, 2, 1, 0])
    s["arring"] = Scenario([("ARRING", "~a", "3", "x", "y"), ("ARRING", "~a", "3", "z", "w"), ("ARRING", "~a", "0", "x"),
                            ("ARRING", "~a", "2", "v")], reference="documented",
                           expected=[("new", "~a"), ("arring", "~a"), ("arring", "~a"), ("arring", "~a")],
                           expected_dirty=[2, 2, 0, 1])
    s["arseek"] = Scenario([("ARINSERT", "~a", "x"), ("ARSEEK", "~a", "5"), ("ARSEEK", "~missing", "3"),
                            ("ARSEEK", "~a", "x"), ("ARSEEK", "~a", "0")], reference="documented",
                           expected=[("new", "~a"), ("arinsert", "~a"), ("arseek", "~a"), ("arseek", "~a")],
                           expected_dirty=[1, 1, 0, 0, 1])
    s["goblin.rt.arreserve"] = Scenario([("GOBLIN.RT.ARRESERVE", "~a", "1000", "4096"), ("GOBLIN.RT.ARSET", "~a", "0", "x"),
                                         ("GOBLIN.RT.ARRESERVE", "~b", "x", "4096")], reference="documented",
                                        expected=[("new", "~a"), ("arreserve", "~a"), ("arset", "~a")],
                                        expected_dirty=[1, 1, 0])
    return s


# Blocking commands served while parked: the waiter blocks on an empty key, then the push
# arrives and the server pops for it (its events, change count and propagated effect come
# from the unblocking path, not from the command's own call). Compared with valkey-server 9.1,
# which counts the served pop as Redis 7.2+ does (redis-server 7.0 leaves it uncounted).
BLOCKED_SERVED: dict[str, tuple[tuple, tuple]] = {
    "blpop": (("BLPOP", "~q", "0"), ("RPUSH", "~q", "a")),
    "brpop": (("BRPOP", "~other", "~q", "0"), ("RPUSH", "~q", "a", "b")),
    "blmove": (("BLMOVE", "~q", "~d", "LEFT", "RIGHT", "0"), ("RPUSH", "~q", "a")),
    "brpoplpush": (("BRPOPLPUSH", "~q", "~d", "0"), ("RPUSH", "~q", "a", "b")),
    "blmpop": (("BLMPOP", "0", "2", "~other", "~q", "RIGHT", "COUNT", "5"), ("RPUSH", "~q", "a", "b")),
    "bzpopmin": (("BZPOPMIN", "~q", "0"), ("ZADD", "~q", "1", "a")),
    "bzpopmax": (("BZPOPMAX", "~q", "0"), ("ZADD", "~q", "1", "a", "2", "b")),
    "bzmpop": (("BZMPOP", "0", "1", "~q", "MIN", "COUNT", "5"), ("ZADD", "~q", "1", "a", "2", "b")),
    "xread": (("XREAD", "BLOCK", "0", "STREAMS", "~q", "$"), ("XADD", "~q", "*", "a", "1")),
    "xreadgroup": (("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "~q", ">"), ("XADD", "~q", "*", "a", "1")),
}
# What a served scenario needs before its waiter parks (run on the same server, before it).
BLOCKED_SETUP: dict[str, list[tuple]] = {
    "xreadgroup": [("XGROUP", "CREATE", "~q", "g", "$", "MKSTREAM")],
}


def blocked_setup_for(command: str) -> list[tuple]:
    return list(BLOCKED_SETUP.get(base_of(command), []))


def blocking_commands() -> list[str]:
    """Every command of the table with the blocking flag that waits on keys (a write to one of
    them serves it), lowercase. WAITAOF blocks too, on no key: tests/test_waitaof.py."""
    from goblin_ring import _native
    return sorted(row["name"] for row in _native.command_table() if "blocking" in row["flags"]
                  and (row["keys"][0] > 0 or "movablekeys" in row["flags"]))


def blocked_served_for(command: str) -> tuple[tuple, tuple]:
    """The waiter's and the pusher's argv for a blocking command, renamed for a variant."""
    waiter, push = BLOCKED_SERVED[base_of(command)]
    return rename_for(command, [waiter])[0], rename_for(command, [push])[0]


def _hyperloglog_scenarios() -> dict:
    s = {}
    s["pfadd"] = Scenario([("PFADD", "~h"), ("PFADD", "~h", "a", "b", "c"), ("PFADD", "~h", "a"), ("PFADD", "~h"),
                           ("PFCOUNT", "~h"), ("PFCOUNT", "~h"), ("SET", "~s", "plain"), ("PFADD", "~s", "x"),
                           ("PFADD", "~h", *[f"e{i}" for i in range(40)])])
    s["pfmerge"] = Scenario([("PFADD", "~a", "1", "2"), ("PFADD", "~b", "2", "3"), ("PFMERGE", "~d", "~a", "~b"),
                             ("PFMERGE", "~d"), ("PFMERGE", "~e", "~missing"), ("PFMERGE", "~a", "~b"),
                             ("SET", "~s", "plain"), ("PFMERGE", "~d", "~s"), ("PFMERGE", "~s", "~a")])
    s["pfdebug"] = Scenario([("PFADD", "~h", "a"), ("PFDEBUG", "ENCODING", "~h"), ("PFDEBUG", "DECODE", "~h"),
                             ("PFDEBUG", "TODENSE", "~h"), ("PFDEBUG", "TODENSE", "~h"), ("PFADD", "~g", "b"),
                             ("PFDEBUG", "GETREG", "~g"), ("PFDEBUG", "GETREG", "~missing"),
                             ("PFDEBUG", "NOPE", "~h")])
    return s


def _geo_scenarios() -> dict:
    s = {}
    points = ("13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    s["geoadd"] = Scenario([("GEOADD", "~g", *points), ("GEOADD", "~g", *points), ("GEOADD", "~g", "CH", "13.4", "38.1", "Palermo"),
                            ("GEOADD", "~g", "NX", "1", "2", "Palermo"), ("GEOADD", "~g", "XX", "1", "2", "new"),
                            ("GEOADD", "~h", "XX", "1", "2", "x"), ("GEOADD", "~g", "200", "2", "bad"),
                            ("SET", "~s", "x"), ("GEOADD", "~s", "1", "2", "m")])
    s["geosearchstore"] = Scenario([("GEOADD", "~g", *points),
                                    ("GEOSEARCHSTORE", "~d", "~g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"),
                                    ("GEOSEARCHSTORE", "~d", "~g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"),
                                    ("GEOSEARCHSTORE", "~d", "~g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
                                    ("GEOSEARCHSTORE", "~d", "~missing", "FROMMEMBER", "x", "BYBOX", "1", "1", "km"),
                                    ("GEOSEARCHSTORE", "~e", "~g", "FROMMEMBER", "Palermo", "BYBOX", "400", "400", "km", "COUNT", "1")])
    s["georadius"] = Scenario([("GEOADD", "~g", *points), ("GEORADIUS", "~g", "15", "37", "200", "km"),
                               ("GEORADIUS", "~g", "15", "37", "200", "km", "STORE", "~d"),
                               ("GEORADIUS", "~g", "15", "37", "200", "km", "STOREDIST", "~d"),
                               ("GEORADIUS", "~g", "0", "0", "1", "km", "STORE", "~d"),
                               ("GEORADIUS", "~missing", "0", "0", "1", "km", "STORE", "~g")])
    s["georadiusbymember"] = Scenario([("GEOADD", "~g", *points), ("GEORADIUSBYMEMBER", "~g", "Palermo", "300", "km", "STORE", "~d"),
                                       ("GEORADIUSBYMEMBER", "~g", "Palermo", "1", "m", "STOREDIST", "~d"),
                                       ("GEORADIUSBYMEMBER", "~g", "nope", "1", "km", "STORE", "~d")])
    return s


SCENARIOS: dict[str, Scenario] = {**_list_scenarios(), **_string_scenarios(), **_generic_scenarios(),
                                  **_hash_scenarios(), **_set_scenarios(), **_zset_scenarios(), **_stream_scenarios(),
                                  **_array_scenarios(), **_hyperloglog_scenarios(), **_geo_scenarios()}


def write_commands() -> list[str]:
    """Every command of the table whose row has the write flag, lowercase."""
    from goblin_ring import _native
    return sorted(row["name"] for row in _native.command_table() if "write" in row["flags"])


def table_names() -> set[str]:
    from goblin_ring import _native
    return {row["name"] for row in _native.command_table()}


def base_of(command: str) -> str:
    """The base command a variant runs the scenario of (goblin.pma.lpush -> lpush)."""
    for prefix in VARIANT_PREFIXES:
        if command.startswith(prefix) and command[len(prefix):] in SCENARIOS:
            return command[len(prefix):]
    return command


def steps_for(command: str) -> list:
    """The scenario's steps as `command` runs them: a variant renames every command of its
    family that has a variant of the same prefix (RPUSH -> GOBLIN.PMA.RPUSH in an LPOP run)."""
    return rename_for(command, SCENARIOS[base_of(command)].steps)


def rename_for(command: str, steps) -> list:
    base = base_of(command)
    if base == command:
        return list(steps)
    prefix = command[: len(command) - len(base)]
    names = table_names()
    renamed = []
    for step in steps:
        name = step[0].lower()
        renamed.append(((prefix + name).upper(), *step[1:]) if prefix + name in names else step)
    return renamed


def with_prefix(argv: tuple, prefix: str) -> tuple:
    """The step's arguments with every "~" key written as prefix + name."""
    return tuple(DumpOf(a.key.replace("~", prefix)) if isinstance(a, DumpOf)
                 else a.replace("~", prefix) if isinstance(a, str) else a for a in argv)


def bulk_payload(frame: bytes) -> bytes:
    """The data of a RESP bulk-string frame ($N\\r\\n...\\r\\n)."""
    assert frame.startswith(b"$") and not frame.startswith(b"$-1"), frame
    header_end = frame.index(b"\r\n")
    return frame[header_end + 2: header_end + 2 + int(frame[1:header_end])]
