"""Key misses, compared with redis-server 7.0: the "keymiss" keyspace event (class m) and INFO's
keyspace_hits / keyspace_misses after each command of a list that reaches every lookup kind.

Redis counts a hit or a miss, and publishes "keymiss" for a miss, where a command reads a key
(lookupKeyRead); a write's lookup (lookupKeyWrite) counts nothing; OBJECT counts but publishes
nothing; MEMORY USAGE does neither. Each command runs on a missing key and, where it reads one,
on a key of its type; the events published while it ran (up to a PUBLISH marker, so nothing is
waited for by time) and the two counters must equal redis-server's, with the command sent over
RESP and over the ring.
"""

from __future__ import annotations

import pytest

from goblin_ring import RingClient
from goblin_ring.errors import GoblinError
from resp_wire import encode_command, raw_connection

MARKER = "__keyspace@0__:zz-marker"
PATTERN = "__key*@*__:*"

# (setup commands, the command): k and k2 are missing unless the setup makes them
CASES = [
    ([], ("GET", "k")), ([], ("MGET", "k", "k2")), ([], ("EXISTS", "k", "k2")), ([], ("TYPE", "k")),
    ([], ("TTL", "k")), ([], ("PEXPIRETIME", "k")), ([], ("STRLEN", "k")), ([], ("GETRANGE", "k", "0", "1")),
    ([], ("GETBIT", "k", "1")), ([], ("BITCOUNT", "k")), ([], ("BITFIELD_RO", "k", "GET", "u8", "0")),
    ([], ("HGET", "k", "f")), ([], ("HGETALL", "k")), ([], ("HSCAN", "k", "0")),
    ([], ("LRANGE", "k", "0", "-1")), ([], ("LLEN", "k")), ([], ("LINDEX", "k", "0")), ([], ("LPOS", "k", "x")),
    ([], ("SMEMBERS", "k")), ([], ("SINTER", "k", "k2")), ([], ("SINTERCARD", "2", "k", "k2")),
    ([], ("ZSCORE", "k", "m")), ([], ("ZRANGE", "k", "0", "-1")), ([], ("ZUNION", "2", "k", "k2")),
    ([], ("XRANGE", "k", "-", "+")), ([], ("XREAD", "STREAMS", "k", "0")), ([], ("XINFO", "STREAM", "k")),
    ([], ("PFCOUNT", "k")), ([], ("GEOPOS", "k", "m")), ([], ("DUMP", "k")), ([], ("SORT_RO", "k")),
    ([], ("LCS", "k", "k2")), ([], ("TOUCH", "k")),
    ([], ("OBJECT", "ENCODING", "k")), ([], ("MEMORY", "USAGE", "k")),
    # writes whose lookups Redis makes as reads, and writes that count nothing
    ([], ("COPY", "k", "d")), ([], ("GETDEL", "k")), ([], ("GETEX", "k")), ([], ("SINTERSTORE", "d", "k")),
    ([], ("ZUNIONSTORE", "d", "1", "k")), ([], ("PFMERGE", "d", "k")), ([], ("BITOP", "AND", "d", "k")),
    ([], ("LPUSHX", "k", "x")), ([], ("LMOVE", "k", "d", "LEFT", "LEFT")), ([], ("LPOP", "k")), ([], ("RPUSH", "k", "x")),
    ([], ("LSET", "k", "0", "x")), ([], ("LTRIM", "k", "0", "1")), ([], ("INCR", "k")), ([], ("HINCRBY", "k", "f", "1")),
    ([], ("SMOVE", "k", "d", "m")), ([], ("RENAME", "k", "d")), ([], ("DEL", "k")), ([], ("EXPIRE", "k", "10")),
    # hits: reads count one, writes none
    ([("RPUSH", "k", "a", "b")], ("LLEN", "k")), ([("RPUSH", "k", "a", "b")], ("LRANGE", "k", "0", "-1")),
    ([("RPUSH", "k", "a", "b")], ("LPUSH", "k", "x")), ([("RPUSH", "k", "a", "b")], ("LPOP", "k")),
    ([("RPUSH", "k", "a", "b")], ("LMOVE", "k", "k", "LEFT", "RIGHT")), ([("RPUSH", "k", "a", "b")], ("LREM", "k", "0", "a")),
    ([("RPUSH", "k", "a", "b")], ("OBJECT", "ENCODING", "k")), ([("RPUSH", "k", "a", "b")], ("MEMORY", "USAGE", "k")),
    ([("PFADD", "k", "a")], ("PFCOUNT", "k")), ([("ZADD", "k", "1", "a")], ("ZUNIONSTORE", "d", "1", "k")),
    ([("SET", "k", "1")], ("GET", "k")), ([("SET", "k", "1")], ("TYPE", "k")), ([("SET", "k", "1")], ("INCR", "k")),
]


def pmessage(frame: bytes) -> str:
    parts = frame.split(b"\r\n")
    return f"{parts[6].decode()} -> {parts[8].decode()}" if len(parts) >= 9 and parts[2] == b"pmessage" else repr(frame)


def stat(info: bytes, name: str) -> int:
    for line in info.decode().splitlines():
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(f"{name} not in INFO stats")


def observe(port: int, run) -> list[tuple]:
    """For each case: (events published while its command ran, keyspace_hits, keyspace_misses)."""
    listener, writer = raw_connection(port), raw_connection(port)
    try:
        assert writer.request("CONFIG", "SET", "notify-keyspace-events", "KEm") == b"+OK\r\n"
        listener.sendall(encode_command("PSUBSCRIBE", PATTERN))
        listener.read_reply()
        seen = []
        for setup, command in CASES:
            writer.request("FLUSHALL")
            for step in setup:
                writer.request(*step)
            writer.request("CONFIG", "RESETSTAT")
            run(writer, command)
            writer.request("PUBLISH", MARKER, "end")
            events = []
            while (frame := listener.read_reply()) != encode_command("pmessage", PATTERN, MARKER, "end"):
                events.append(pmessage(frame))
            info = parse_bulk(writer.request("INFO", "stats"))
            seen.append((" ".join(command), sorted(events), stat(info, "keyspace_hits"), stat(info, "keyspace_misses")))
        writer.request("CONFIG", "SET", "notify-keyspace-events", "")
        return seen
    finally:
        listener.close()
        writer.close()


def parse_bulk(frame: bytes) -> bytes:
    assert frame.startswith(b"$"), frame
    return frame.split(b"\r\n", 1)[1]


def over_resp(writer, command) -> None:
    writer.request(*command)   # an error reply is a reply like any other here


@pytest.fixture(scope="module")
def reference(redis_server) -> list[tuple]:
    return observe(redis_server.port, over_resp)


def differences(ours: list[tuple], theirs: list[tuple]) -> list[str]:
    return [f"{a[0]}:\n    goblin {a[1:]}\n    redis  {b[1:]}" for a, b in zip(ours, theirs) if a != b]


def test_keymiss_and_hit_counts_over_resp_match_redis(goblin, reference):
    diff = differences(observe(goblin.port, over_resp), reference)
    assert not diff, f"{len(diff)} of {len(CASES)} commands differ:\n" + "\n".join(diff)


def test_keymiss_and_hit_counts_over_the_ring_match_redis(goblin, reference):
    ring = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0)

    def over_ring(writer, command) -> None:
        try:
            ring.execute_command(*command)
        except GoblinError:
            pass

    try:
        diff = differences(observe(goblin.port, over_ring), reference)
    finally:
        ring.close()
    assert not diff, f"{len(diff)} of {len(CASES)} commands differ:\n" + "\n".join(diff)


def test_a_miss_that_redis_reports_is_a_difference():
    """The comparison can fail: a missing keymiss event is reported."""
    theirs = [("GET k", ["__keyevent@0__:keymiss -> k"], 0, 1)]
    ours = [("GET k", [], 0, 1)]
    assert differences(ours, theirs) and not differences(theirs, theirs)
