"""SLOWLOG against redis-server 7.0: the same commands on both (goblin over RESP and over the
ring), then SLOWLOG GET compared entry by entry — ids relative to the first, argv with Redis's
truncation ("... (N more bytes)", "... (N more arguments)") and redaction, client address shape
and name, and the errors of SLOWLOG and its two CONFIG settings. Durations and timestamps
differ by nature: they are checked for range, not equality."""

from __future__ import annotations

import os
import time

import pytest

from goblin_ring import ResponseError, RespClient
from conftest import make_client


@pytest.fixture(scope="module")
def redis(redis_server):
    c = RespClient(port=redis_server.port, socket_timeout=10.0)
    yield c
    c.close()


def run(client, *args):
    try:
        return client.execute_command(*args)
    except ResponseError as error:
        return ("error", str(error))


# Commands whose entries both servers must log the same way. The argv path keeps what the
# client sent (case included); the long ones exercise the truncation limits.
SCRIPT = [
    ("SET", "k", "v"),
    ("set", "long", "x" * 200),
    ("RPUSH", "l", *[str(i) for i in range(40)]),
    ("RPUSH", "l2", *[str(i) for i in range(32)]),
    ("RPUSH", "l3", *[str(i) for i in range(31)]),
    ("SET", "exact", "y" * 128),
    ("SET", "over", "y" * 129),
    ("ZADD", "z", "1", "a", "2", "b"),
    ("HSET", "h", "f", "v"),
    ("GET", "missing"),
    ("AUTH", "secret"),                       # an error reply, its argument redacted
    ("AUTH", "user", "secret"),
    ("CLIENT", "SETNAME", "slowpoke"),
    ("MULTI",),
    ("INCR", "counter"),
    ("EXEC",),                                # skip_slowlog: only the INCR inside is logged
    ("ZRANGE", "z", "0", "-1", "WITHSCORES"),
]


def slowlog_of(client, script):
    client.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    client.execute_command("SLOWLOG", "RESET")
    for command in script:
        run(client, *command)
    entries = client.execute_command("SLOWLOG", "GET", "-1")
    client.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    client.execute_command("CLIENT", "SETNAME", "")
    return entries


def comparable(entries):
    """Entries newest first -> (relative id, argv, address shape, name), oldest first."""
    entries = list(reversed(entries))
    first = entries[0][0]
    shaped = []
    for entry in entries:
        assert len(entry) == 6
        entry_id, when, duration, argv, addr, name = entry
        assert isinstance(duration, int) and 0 <= duration < 5_000_000
        assert abs(when - time.time()) < 60
        host, _, port = addr.decode().rpartition(":")
        assert host == "127.0.0.1" and port.isdigit()
        shaped.append((entry_id - first, argv, name))
    return shaped


def test_slowlog_entries_match_redis_server_over_resp(goblin, redis):
    resp = make_client(goblin, "resp")
    try:
        resp.flushall()
        redis.flushall()
        ours = comparable(slowlog_of(resp, SCRIPT))
        theirs = comparable(slowlog_of(redis, SCRIPT))
    finally:
        resp.close()
    assert ours == theirs
    argvs = [argv for _, argv, _ in ours]
    assert [b"set", b"long", b"x" * 128 + b"... (72 more bytes)"] in argvs
    assert [b"SET", b"over", b"y" * 128 + b"... (1 more bytes)"] in argvs
    assert any(argv[:2] == [b"RPUSH", b"l"] and len(argv) == 32 and argv[-1] == b"... (11 more arguments)"
               for argv in argvs)
    assert [b"AUTH", b"(redacted)"] in argvs and [b"AUTH", b"(redacted)", b"(redacted)"] in argvs
    assert [b"INCR", b"counter"] in argvs and [b"EXEC"] not in argvs


ERRORS = [
    ("SLOWLOG",),
    ("SLOWLOG", "nosuch"),
    ("SLOWLOG", "LEN", "x"),
    ("SLOWLOG", "RESET", "x"),
    ("SLOWLOG", "HELP", "x"),
    ("SLOWLOG", "GET", "1", "2"),
    ("SLOWLOG", "get", "x"),
    ("SLOWLOG", "GET", "-2"),
    ("SLOWLOG", "GET", "1.5"),
    ("SLOWLOG", "HELP"),
    ("CONFIG", "SET", "slowlog-log-slower-than", "-2"),
    ("CONFIG", "SET", "slowlog-log-slower-than", "abc"),
    ("CONFIG", "SET", "slowlog-max-len", "-1"),
    ("CONFIG", "GET", "slowlog-max-len"),
    ("CONFIG", "GET", "slowlog-log-slower-than"),
]


@pytest.mark.parametrize("command", ERRORS, ids=" ".join)
def test_slowlog_errors_and_settings_match_redis_server(goblin, redis, command):
    resp = make_client(goblin, "resp")
    try:
        assert run(resp, *command) == run(redis, *command)
    finally:
        resp.close()


def test_max_len_keeps_the_newest_entries_and_a_negative_threshold_logs_nothing(goblin, redis):
    resp = make_client(goblin, "resp")
    try:
        for client in (resp, redis):
            client.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
            client.execute_command("CONFIG", "SET", "slowlog-max-len", "3")
            client.execute_command("SLOWLOG", "RESET")
            for i in range(10):
                client.execute_command("SET", f"k{i}", "v")
            entries = client.execute_command("SLOWLOG", "GET", "-1")
            assert [e[3] for e in entries][:2] == [[b"SET", b"k9", b"v"], [b"SET", b"k8", b"v"]]
            assert client.execute_command("SLOWLOG", "LEN") == 3
            assert len(client.execute_command("SLOWLOG", "GET")) == 3
            assert client.execute_command("SLOWLOG", "GET", "0") == []
            client.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
            client.execute_command("SLOWLOG", "RESET")
            client.execute_command("SET", "quiet", "v")
            assert client.execute_command("SLOWLOG", "LEN") == 0
            client.execute_command("CONFIG", "SET", "slowlog-max-len", "128")
            client.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    finally:
        resp.close()


def test_the_default_threshold_logs_no_fast_command(goblin):
    resp = make_client(goblin, "resp")
    try:
        resp.execute_command("SLOWLOG", "RESET")
        for i in range(100):
            resp.execute_command("SET", f"fast{i}", "v")
        assert resp.execute_command("SLOWLOG", "LEN") == 0
    finally:
        resp.close()


def test_ring_sessions_are_logged_with_their_ring_address_and_name(goblin):
    ring = make_client(goblin, "ring")
    resp = make_client(goblin, "resp")
    try:
        resp.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
        resp.execute_command("SLOWLOG", "RESET")
        ring.execute_command("CLIENT", "SETNAME", "ringer")
        ring.execute_command("ZADD", "rz", "1", "m")        # travels as argv
        ring.lpush("rl", "a", "b")                          # a typed request
        ring.get("rk")
        entries = resp.execute_command("SLOWLOG", "GET", "-1")
        resp.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        ring_entries = [e for e in entries if e[4] == f"ring:pid={os.getpid()}".encode()]
        argvs = [e[3] for e in ring_entries]
        assert [b"ZADD", b"rz", b"1", b"m"] in argvs
        assert [b"lpush", b"rl", b"a", b"b"] in argvs
        assert [b"get", b"rk"] in argvs
        assert all(e[5] == b"ringer" for e in ring_entries if e[3][0].lower() != b"client")
        # the ring's own SLOWLOG works too, and says the same
        assert ring.execute_command("SLOWLOG", "LEN") >= len(ring_entries)
    finally:
        ring.close()
        resp.close()


def blocked_then_served(port: int, ring_server=None) -> list:
    """BLPOP q 5 blocks (INFO blocked_clients says so), RPUSH serves it; then a BLPOP that times
    out. SLOWLOG after, at threshold 0. ring_server: the blocked client is a ring session."""
    import threading
    from goblin_ring import RingClient
    admin = RespClient(port=port, socket_timeout=10.0)
    admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    admin.execute_command("SLOWLOG", "RESET")
    if ring_server:
        blocked = RingClient(name=ring_server.name, runtime_dir=ring_server.runtime_dir, timeout=10)
    else:
        blocked = RespClient(port=port, socket_timeout=10.0)
    result = []
    thread = threading.Thread(target=lambda: result.append(blocked.execute_command("BLPOP", "q", "5")))
    thread.start()
    deadline = time.monotonic() + 10
    while admin.execute_command("INFO", "clients").count(b"blocked_clients:1") == 0:
        assert time.monotonic() < deadline, "the BLPOP never blocked"
    admin.execute_command("RPUSH", "q", "x")
    thread.join(10)
    assert result and result[0] == [b"q", b"x"]
    blocked.execute_command("BLPOP", "none", "0.01")    # times out: Redis 7.0 does not log it
    entries = admin.execute_command("SLOWLOG", "GET", "-1")
    admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    blocked.close()
    admin.close()
    return [entry[3] for entry in reversed(entries) if entry[3][0] != b"INFO"]   # INFO: the polls


def test_a_blocked_command_is_logged_when_served_as_redis_does(goblin, redis_server):
    ours, theirs = blocked_then_served(goblin.port), blocked_then_served(redis_server.port)
    assert ours == theirs
    assert [b"BLPOP", b"q", b"5"] in ours
    # over the ring too: its CommandRequest's argv is what the entry shows
    on_ring = blocked_then_served(goblin.port, ring_server=goblin)
    assert [b"BLPOP", b"q", b"5"] in on_ring and ours.index([b"BLPOP", b"q", b"5"]) == ours.index([b"RPUSH", b"q", b"x"]) + 1
