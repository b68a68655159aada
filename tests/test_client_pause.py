"""CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, against redis-server 7.0 and over the ring.

A held command is checked as unanswered with a short poll on its socket (or a thread's join with
a short timeout for a ring call), never by sleeping; the answer after UNPAUSE, or after the
pause's deadline, is waited on by reading the reply itself.
"""
from __future__ import annotations

import os
import select
import socket
import threading
import time

import pytest
import redis

from goblin_ring import RingClient
from resp_wire import encode_command
from servers import GoblinServer

NOT_YET = 0.2   # how long a held command is watched for an answer that must not come


class Raw:
    """A RESP2 socket: send now, look for the reply later."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def send(self, *args) -> None:
        self.sock.sendall(encode_command(*args))

    def answered_within(self, seconds: float) -> bool:
        return bool(self.buffer) or bool(select.select([self.sock], [], [], seconds)[0])

    def reply(self) -> bytes:
        """One simple reply line (+, -, :) or a bulk string (its payload), read whole."""
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            assert chunk, "connection closed"
            self.buffer += chunk
        line, _, rest = self.buffer.partition(b"\r\n")
        if line.startswith(b"$") and line != b"$-1":
            size = int(line[1:])
            while len(rest) < size + 2:
                rest += self.sock.recv(4096)
            self.buffer = rest[size + 2:]
            return rest[:size]
        self.buffer = rest
        return line

    def call(self, *args) -> bytes:
        self.send(*args)
        return self.reply()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def goblin(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime")).start() as server:
        yield server


@pytest.fixture(params=["goblin", "redis"])
def port(request, goblin, redis_server):
    return goblin.port if request.param == "goblin" else redis_server.port


ERRORS = [("CLIENT", "PAUSE", "x"), ("CLIENT", "PAUSE", "-1"), ("CLIENT", "PAUSE", "10", "foo"), ("CLIENT", "PAUSE"),
          ("CLIENT", "PAUSE", "1", "write", "x"), ("CLIENT", "UNPAUSE", "x"), ("CLIENT", "UNPAUSE"),
          ("CLIENT", "PAUSE", "0"), ("CLIENT", "PAUSE", "0", "all"), ("CLIENT", "UNPAUSE")]


def test_arguments_and_errors_as_redis(goblin, redis_server):
    answers = []
    for p in (goblin.port, redis_server.port):
        raw = Raw(p)
        answers.append([raw.call(*call) for call in ERRORS])
        raw.close()
    assert answers[0] == answers[1]


def test_write_pause_holds_writes_until_unpause(port):
    admin, writer, reader = Raw(port), Raw(port), Raw(port)
    assert reader.call("DEL", "k", "q") in (b":0", b":1", b":2")
    assert admin.call("CLIENT", "PAUSE", "100000", "WRITE") == b"+OK"
    writer.send("SET", "k", "v")
    writer.send("GET", "k")                                    # behind the held write: waits too
    assert not writer.answered_within(NOT_YET)
    assert reader.call("GET", "k") == b"$-1"                   # reads go on
    assert reader.call("EVAL_RO", "return 1", "0") == b":1"
    assert reader.call("EVAL", "#!lua flags=no-writes\nreturn 2", "0") == b":2"
    assert reader.call("MULTI") == b"+OK"
    reader.send("RPUSH", "q", "x")                             # queueing a write is held too
    assert not reader.answered_within(NOT_YET)
    other = Raw(port)
    other.send("EVAL", "return 3", "0")                        # EVAL without flags: held
    assert not other.answered_within(NOT_YET)
    publisher = Raw(port)
    publisher.send("PUBLISH", "ch", "m")                       # may_replicate: held
    assert not publisher.answered_within(NOT_YET)
    assert admin.call("CLIENT", "UNPAUSE") == b"+OK"
    assert writer.reply() == b"+OK" and writer.reply() == b"v"
    assert reader.reply() == b"+QUEUED" and reader.call("EXEC").startswith(b"*1")
    assert other.reply() == b":3"
    assert publisher.reply() == b":0"
    for c in (admin, writer, reader, other, publisher):
        c.close()


def test_all_pause_holds_everything_until_its_deadline(port):
    admin, other = Raw(port), Raw(port)
    assert admin.call("CLIENT", "PAUSE", "300", "WRITE") == b"+OK"
    assert admin.call("CLIENT", "PAUSE", "10", "ALL") == b"+OK"   # the stronger mode, the later deadline
    start = time.monotonic()
    other.send("PING")
    assert not other.answered_within(0.05)
    other.send("CLIENT", "UNPAUSE")                                # under ALL, UNPAUSE waits too (7.0)
    assert other.reply() == b"+PONG"                               # the deadline ends it
    assert other.reply() == b"+OK"
    assert time.monotonic() - start >= 0.25
    for c in (admin, other):
        c.close()


def test_keys_do_not_expire_while_paused(port):
    admin = Raw(port)
    assert admin.call("FLUSHALL") == b"+OK"
    before = redis.Redis(port=port).info("stats")["expired_keys"]
    assert admin.call("SET", "gone", "v", "PX", "1") == b"+OK"
    assert admin.call("CLIENT", "PAUSE", "100000", "WRITE") == b"+OK"
    deadline = time.monotonic() + 0.01
    while time.monotonic() < deadline:      # let the key's millisecond pass (the clock, not a sync)
        pass
    assert admin.call("GET", "gone") == b"$-1"       # reads as expired ...
    assert admin.call("DBSIZE") == b":1"             # ... but is kept, as 7.0
    assert redis.Redis(port=port).info("stats")["expired_keys"] == before
    assert admin.call("CLIENT", "UNPAUSE") == b"+OK"
    assert admin.call("GET", "gone") == b"$-1"
    assert admin.call("DBSIZE") == b":0"
    admin.close()


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_paused_ring_session_waits_unread_without_spinning(goblin):
    admin = Raw(goblin.port)
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as ring:
        ring.delete("rk")
        assert admin.call("CLIENT", "PAUSE", "100000", "WRITE") == b"+OK"
        assert ring.get("rk") is None                               # a read: answered
        results = []
        worker = threading.Thread(target=lambda: results.append((ring.set("rk", "v"), ring.get("rk"))))
        worker.start()
        worker.join(NOT_YET)
        assert worker.is_alive() and not results                   # held in its ring
        cpu, wall = cpu_seconds(goblin.pid), time.monotonic()
        worker.join(0.5)                                            # still held: the server sleeps meanwhile
        assert worker.is_alive()
        assert cpu_seconds(goblin.pid) - cpu < 0.6 * (time.monotonic() - wall)
        assert admin.call("GET", "rk") == b"$-1"
        assert admin.call("CLIENT", "UNPAUSE") == b"+OK"
        worker.join(10)
        assert results == [(True, b"v")]
        # the deadline: a typed write and the command form wait for it, then run
        assert admin.call("CLIENT", "PAUSE", "300", "ALL") == b"+OK"
        start = time.monotonic()
        assert ring.set("rk", "w") is True
        assert ring.execute_command("GET", "rk") == b"w"
        assert time.monotonic() - start >= 0.25
    admin.close()
