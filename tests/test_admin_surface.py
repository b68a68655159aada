"""Admin and introspection commands tools send: MEMORY STATS/DOCTOR/MALLOC-STATS/PURGE, DEBUG
POPULATE/OBJECT/SLEEP/SET-ACTIVE-EXPIRE/QUICKLIST-PACKED-THRESHOLD/CHANGE-REPL-ID/LOG, LOLWUT —
compared with redis-server 7.0 where the reply is deterministic (field names and order, values
written, error texts), and checked for what a user sees where it is not (addresses, sizes, art)."""

from __future__ import annotations

import time

import pytest

from goblin_ring import ResponseError, RespClient
from servers import RedisServer


@pytest.fixture(scope="module")
def redis_debug():
    """redis-server 7.0 refuses DEBUG unless enable-debug-command allows it."""
    server = RedisServer("redis-server", "--enable-debug-command", "yes").start()
    yield server
    server.stop()


def raw(client, *argv):
    try:
        return ("ok", client.execute_command(*argv))
    except ResponseError as error:
        return ("error", str(error))


def test_memory_stats_has_redis_fields_in_redis_order(redis_debug, resp):
    reference = RespClient(port=redis_debug.port, socket_timeout=10)
    try:
        for client in (reference, resp):
            client.flushall()
            client.set("a", "1")
        ours = resp.execute_command("MEMORY", "STATS")
        theirs = reference.execute_command("MEMORY", "STATS")
        ours_names = ours[::2] if isinstance(ours, list) else list(ours)
        theirs_names = theirs[::2] if isinstance(theirs, list) else list(theirs)
        assert ours_names == theirs_names
        stats = dict(zip(ours[::2], ours[1::2])) if isinstance(ours, list) else ours
        assert stats[b"keys.count"] == 1
        assert stats[b"total.allocated"] > 0 and stats[b"dataset.bytes"] > 0
        for argv in (("MEMORY", "STATS", "x"), ("MEMORY", "DOCTOR", "x"), ("MEMORY", "PURGE", "x"),
                     ("MEMORY", "NOPE")):
            assert raw(resp, *argv) == raw(reference, *argv), argv
        assert resp.execute_command("MEMORY", "PURGE") in (b"OK", "OK", True)
        assert resp.execute_command("MEMORY", "DOCTOR").startswith(b"Hi Sam")
        assert resp.execute_command("MEMORY", "MALLOC-STATS")
    finally:
        reference.close()


def test_debug_populate_and_friends_answer_as_redis(redis_debug, client):
    reference = RespClient(port=redis_debug.port, socket_timeout=10)
    try:
        for server in (reference, client):
            server.flushall()
            server.set("key:1", "kept")
        steps = [("DEBUG", "POPULATE", "3"), ("DEBUG", "POPULATE", "3", "k", "10"), ("DEBUG", "POPULATE", "2", "s", "3"),
                 ("DEBUG", "POPULATE", "-1"), ("DEBUG", "POPULATE", "x"), ("DEBUG", "POPULATE", "1", "p", "-2"),
                 ("DEBUG", "POPULATE", "2", "x", "3", "4"), ("DEBUG", "SLEEP", "0"), ("DEBUG", "SLEEP", "x"),
                 ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"), ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1kb"),
                 ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "x"), ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"),
                 ("DEBUG", "CHANGE-REPL-ID"), ("DEBUG", "LOG", "hello from a test"), ("DEBUG", "JMAP"),
                 ("DEBUG", "OBJECT", "missing"), ("DBSIZE",)]
        for argv in steps:
            assert raw(client, *argv) == raw(reference, *argv), argv
        for key in ("key:0", "key:1", "key:2", "k:0", "k:2", "s:1"):
            assert client.get(key) == reference.get(key), key
        assert client.execute_command("DEBUG", "OBJECT", "k:1").startswith(b"Value at:") or \
            client.execute_command("DEBUG", "OBJECT", "k:1").startswith("Value at:")
    finally:
        reference.close()


def test_debug_sleep_stops_the_server_for_that_long(resp, goblin):
    other = RespClient(port=goblin.port, socket_timeout=10)
    try:
        started = time.monotonic()
        assert resp.execute_command("DEBUG", "SLEEP", "0.2") in (b"OK", "OK", True)
        assert time.monotonic() - started >= 0.2
        assert other.ping()
    finally:
        other.close()


def expired_keys(client) -> int:
    return int(client.info("stats")["expired_keys"])


def test_debug_set_active_expire_0_leaves_expired_keys_to_lazy_expiry(resp):
    resp.flushall()
    resp.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        before = expired_keys(resp)
        for i in range(20):
            resp.set(f"e{i}", "v", px=1)
        # the cron runs ten times a second: over half a second with it off, nothing is reclaimed
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            assert expired_keys(resp) == before
        assert resp.dbsize() == 20                      # counted until touched
        resp.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        deadline = time.monotonic() + 5
        while expired_keys(resp) < before + 20:
            assert time.monotonic() < deadline, "active expiry did not resume"
        assert resp.dbsize() == 0
    finally:
        resp.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_lolwut_prints_the_version_line_and_schotter_for_version_5(redis_debug, resp):
    reference = RespClient(port=redis_debug.port, socket_timeout=10)
    try:
        version = resp.info("server")["redis_version"]
        assert resp.execute_command("LOLWUT") == f"Redis ver. {version}\n".encode()
        art = resp.execute_command("LOLWUT", "VERSION", "5", "20", "3", "4").decode()
        lines = art.rstrip("\n").split("\n")
        assert lines[-1] == f"Georg Nees - schotter, plotter on paper, 1968. Redis ver. {version}"
        assert all(0x2800 <= ord(ch) <= 0x28FF for line in lines[:-1] for ch in line)
        assert len(lines[0]) == 20                       # 20 columns of 2x4-pixel Braille cells
        theirs = reference.execute_command("LOLWUT", "VERSION", "5", "20", "3", "4").decode().rstrip("\n").split("\n")
        assert len(theirs) == len(lines) and len(theirs[0]) == len(lines[0])
        for argv in (("LOLWUT", "VERSION", "x"), ("LOLWUT", "VERSION", "5", "y")):
            assert raw(resp, *argv) == raw(reference, *argv)
    finally:
        reference.close()


def exchange(port: int, payload: bytes, end: bytes) -> bytes:
    """Send raw RESP and read until the bytes end with `end` (the last command's reply)."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        received = b""
        while not received.endswith(end):
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
        return received


def test_client_reply_off_and_skip_drop_replies_as_redis(redis_debug, goblin, ring):
    script = (b"CLIENT REPLY SKIP\r\nSET a 1\r\nGET a\r\nCLIENT REPLY OFF\r\nINCR a\r\nGET a\r\n"
              b"CLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\nGET a\r\nCLIENT REPLY BAD\r\nCLIENT REPLY\r\nPING\r\n")
    expected = exchange(redis_debug.port, script, b"+PONG\r\n")
    assert exchange(goblin.port, script, b"+PONG\r\n") == expected
    assert expected.startswith(b"$1\r\n1\r\n+OK\r\n$1\r\n2\r\n")
    with pytest.raises(ResponseError, match="not available over the ring"):
        ring.execute_command("CLIENT", "REPLY", "OFF")


def test_subcommands_are_counted_and_shown_by_their_full_names(redis_debug, resp):
    reference = RespClient(port=redis_debug.port, socket_timeout=10)
    try:
        for client in (reference, resp):
            client.execute_command("CONFIG", "RESETSTAT")
            client.set("k", "v")
            for argv in (("CLIENT", "LIST"), ("CONFIG", "GET", "maxmemory"), ("MEMORY", "USAGE", "k"),
                         ("OBJECT", "ENCODING", "k"), ("CLIENT", "GETNAME"), ("SLOWLOG", "LEN")):
                client.execute_command(*argv)
        names = [set(client.info("commandstats")) for client in (reference, resp)]
        assert names[1] == names[0], names[1] ^ names[0]
        assert "cmdstat_client|list" in names[1]
        assert b"cmd=client|info" in resp.execute_command("CLIENT", "INFO")
    finally:
        reference.close()


def monitor_lines(port: int, run) -> list[str]:
    """MONITOR's lines while run() sends commands, up to ECHO "done"; times and peers masked."""
    import re
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"MONITOR\r\n")
        received = b""
        while not received.endswith(b"+OK\r\n"):
            received += sock.recv(4096)
        run()
        received = b""
        while not received.endswith(b'"ECHO" "done"\r\n'):
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
    text = received.decode()
    text = re.sub(r"\+\d+\.\d{6} \[(\d+) [^\]]+\]", r"+T [\1 peer]", text)
    return text.split("\r\n")[:-1]


def test_monitor_shows_every_call_as_redis_formats_it(redis_debug, goblin, ring):
    def session(port):
        def run():
            client = RespClient(port=port, socket_timeout=10)
            try:
                client.set("a", 'x y\n"z"\x01')
                client.get("a")
                client.execute_command("SELECT", "2")
                client.ping()
                for argv in (("AUTH", "secret"), ("NOSUCHCOMMAND",), ("GET",), ("CONFIG", "GET", "maxmemory"),
                             ("CLIENT", "LIST"), ("DEBUG", "SLEEP", "0")):
                    try:
                        client.execute_command(*argv)
                    except ResponseError:
                        pass
                pipe = client.pipeline(transaction=True)
                pipe.set("b", 1)
                pipe.incrby("b", 2)
                pipe.execute()
                client.execute_command("ECHO", "done")
            finally:
                client.close()
        return run
    expected = monitor_lines(redis_debug.port, session(redis_debug.port))
    assert monitor_lines(goblin.port, session(goblin.port)) == expected
    assert '+T [0 peer] "SET" "a" "x y\\n\\"z\\"\\x01"' in expected and '+T [2 peer] "AUTH" "(redacted)"' in expected

    def from_the_ring():
        ring.set("ringkey", "v")
        marker = RespClient(port=goblin.port, socket_timeout=10)
        marker.execute_command("ECHO", "done")
        marker.close()
    lines = monitor_lines(goblin.port, from_the_ring)
    assert '+T [0 peer] "SET" "ringkey" "v"' in lines
    with pytest.raises(ResponseError, match="not available over the ring"):
        ring.execute_command("MONITOR")
