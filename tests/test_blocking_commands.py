"""BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP: ready and blocked paths over both
transports, waking across transports, FIFO among waiters, the server's timeouts, clients
that die while blocked, and a many-consumer work queue checked by count and sum.

Synchronisation is the server's own signal: a test waits until INFO blocked_clients says
its clients are parked before it pushes. Nothing sleeps to synchronise.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from goblin_ring import ResponseError, RespClient, RingClient, WrongTypeError
from resp_wire import raw_connection

WAIT = 10.0
# The work-queue test moves this many items (a full run: GOBLIN_QUEUE_ITEMS=1000000).
QUEUE_ITEMS = int(os.environ.get("GOBLIN_QUEUE_ITEMS", "20000"))


def wait_for_blocked(admin, count: int) -> None:
    deadline = time.monotonic() + WAIT
    while admin.info("clients")["blocked_clients"] != count:
        assert time.monotonic() < deadline, f"blocked_clients never reached {count}"


class Background:
    """Run one blocking call on its own client in a thread; .result() joins and returns it."""

    def __init__(self, call):
        self.value = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call):
        try:
            self.value = call()
        except BaseException as error:  # noqa: BLE001 - re-raised in result()
            self.error = error

    def result(self):
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the blocked call never returned"
        if self.error:
            raise self.error
        return self.value


def other_client(goblin, transport: str):
    if transport == "ring":
        return RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=WAIT)
    return RespClient(port=goblin.port, socket_timeout=WAIT)


@pytest.fixture
def admin(goblin):
    with RespClient(port=goblin.port, socket_timeout=WAIT) as c:
        c.flushall()
        yield c


# ---- ready paths ---------------------------------------------------------------------


def test_ready_paths_reply_like_their_non_blocking_twins(client):
    client.rpush("b", "1", "2", "3")
    assert client.blpop(["a", "b"], 1) == (b"b", b"1")          # the first non-empty key wins
    assert client.brpop(["b", "a"], 1) == (b"b", b"3")
    client.rpush("src", "x", "y")
    assert client.blmove("src", "dst", 1, "LEFT", "RIGHT") == b"x"
    assert client.brpoplpush("src", "dst", 1) == b"y"
    assert client.lrange("dst", 0, -1) == [b"y", b"x"] and client.exists("src") == 0
    client.rpush("m", "i", "j")
    assert client.blmpop(1, 1, "m", direction="RIGHT", count=8) == [b"m", [b"j", b"i"]]
    assert client.exists("m") == 0


def test_blmpop_takes_up_to_count_values_from_the_first_non_empty_key(client):
    client.rpush("m", *[str(i) for i in range(10)])
    assert client.blmpop(1, 2, "none", "m", direction="LEFT", count=8) == [b"m", [str(i).encode() for i in range(8)]]


def test_errors_match_redis(client):
    client.set("s", "string")
    with pytest.raises(WrongTypeError):
        client.blpop(["empty", "s"], 1)      # a wrong-type key met before a ready one
    with pytest.raises(ResponseError, match="timeout is negative"):
        client.blpop("k", -1)
    with pytest.raises(ResponseError, match="timeout is not a float or out of range"):
        client.execute_command("BLPOP", "k", "soon")
    with pytest.raises(ResponseError, match="numkeys should be greater than 0"):
        client.execute_command("BLMPOP", "1", "0", "k", "LEFT")
    with pytest.raises(ResponseError, match="count should be greater than 0"):
        client.execute_command("BLMPOP", "1", "1", "k", "LEFT", "COUNT", "0")
    with pytest.raises(ResponseError, match="syntax error"):
        client.execute_command("BLMOVE", "a", "b", "UP", "LEFT", "0")


# ---- blocked paths and waking ----------------------------------------------------------


@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
@pytest.mark.parametrize("pusher_transport", ["ring", "resp"])
def test_a_push_from_either_transport_wakes_a_waiter_on_either(goblin, admin, waiter_transport, pusher_transport):
    with other_client(goblin, waiter_transport) as waiter, other_client(goblin, pusher_transport) as pusher:
        blocked = Background(lambda: waiter.blpop(["q1", "q2"], 0))
        wait_for_blocked(admin, 1)
        assert pusher.rpush("q2", "job") == 1      # the length right after the push, as Redis
        assert blocked.result() == (b"q2", b"job")
        assert admin.exists("q2") == 0             # the waiter had it before anyone else
        assert admin.info("clients")["blocked_clients"] == 0


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_each_blocking_command_blocks_then_is_served(goblin, admin, transport):
    with other_client(goblin, transport) as waiter:
        cases = [
            (lambda: waiter.brpop("k", 0), lambda: admin.rpush("k", "a", "b"), (b"k", b"b")),
            (lambda: waiter.blmove("src", "dst", 0, "RIGHT", "LEFT"), lambda: admin.rpush("src", "v"), b"v"),
            (lambda: waiter.brpoplpush("src2", "dst2", 0), lambda: admin.lpush("src2", "w"), b"w"),
            (lambda: waiter.blmpop(0, 2, "x", "y", direction="RIGHT", count=3),
             lambda: admin.rpush("y", "1", "2", "3", "4"), [b"y", [b"4", b"3", b"2"]]),
        ]
        for call, push, expected in cases:
            admin.flushall()
            blocked = Background(call)
            wait_for_blocked(admin, 1)
            push()
            assert blocked.result() == expected


def test_waiters_are_served_first_come_first_served(goblin, admin):
    sockets = [raw_connection(goblin.port, timeout=WAIT) for _ in range(4)]
    try:
        for i, sock in enumerate(sockets):
            sock.sendall(b"BLPOP fifo 0\r\n")
            wait_for_blocked(admin, i + 1)
        admin.rpush("fifo", "first", "second", "third", "fourth")
        for sock, value in zip(sockets, [b"first", b"second", b"third", b"fourth"]):
            expected = b"*2\r\n$4\r\nfifo\r\n$%d\r\n%s\r\n" % (len(value), value)
            assert sock.read_exactly(len(expected)) == expected
    finally:
        for sock in sockets:
            sock.close()


def test_a_blocked_connection_parks_its_later_commands(goblin, admin):
    with raw_connection(goblin.port, timeout=WAIT) as sock:
        sock.sendall(b"BLPOP parked 0\r\nPING\r\nLLEN parked\r\n")
        wait_for_blocked(admin, 1)
        assert admin.ping()                       # the server itself is not parked
        admin.rpush("parked", "v")
        expected = b"*2\r\n$6\r\nparked\r\n$1\r\nv\r\n+PONG\r\n:0\r\n"
        assert sock.read_exactly(len(expected)) == expected


def test_lmove_into_a_watched_list_wakes_in_turn(goblin, admin):
    with other_client(goblin, "resp") as mover, other_client(goblin, "ring") as final:
        first = Background(lambda: mover.blmove("stage1", "stage2", 0, "LEFT", "RIGHT"))
        wait_for_blocked(admin, 1)
        second = Background(lambda: final.blpop("stage2", 0))
        wait_for_blocked(admin, 2)
        admin.rpush("stage1", "item")
        assert first.result() == b"item"
        assert second.result() == (b"stage2", b"item")
        assert admin.exists("stage1", "stage2") == 0


def test_exec_serves_waiters_after_the_transaction(goblin, admin):
    with raw_connection(goblin.port, timeout=WAIT) as waiter, raw_connection(goblin.port, timeout=WAIT) as tx:
        waiter.sendall(b"BLPOP txq 0\r\n")
        wait_for_blocked(admin, 1)
        tx.sendall(b"MULTI\r\nRPUSH txq a\r\nLLEN txq\r\nEXEC\r\n")
        expected = b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:1\r\n"   # LLEN inside EXEC still sees it
        assert tx.read_exactly(len(expected)) == expected
        served = b"*2\r\n$3\r\ntxq\r\n$1\r\na\r\n"
        assert waiter.read_exactly(len(served)) == served
        # and inside MULTI a blocking command on an empty list answers nil at once
        tx.sendall(b"MULTI\r\nBLPOP nothing 0\r\nEXEC\r\n")
        expected = b"+OK\r\n+QUEUED\r\n*1\r\n*-1\r\n"
        assert tx.read_exactly(len(expected)) == expected


def test_info_and_client_list_show_blocked_clients(goblin, admin):
    with other_client(goblin, "ring") as waiter:
        blocked = Background(lambda: waiter.blpop("shown", 0))
        try:
            wait_for_blocked(admin, 1)
            listing = admin.execute_command("CLIENT", "LIST").decode().splitlines()
            fields = [dict(part.split("=", 1) for part in line.split()) for line in listing]
            assert [f["flags"] for f in fields if f["cmd"] == "blpop"] == ["b"]
        finally:
            admin.rpush("shown", "x")             # never close a client a thread is blocked in
        assert blocked.result() == (b"shown", b"x")


# ---- timeouts --------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_the_server_times_out_a_wait_with_the_nil_reply(goblin, admin, transport):
    with other_client(goblin, transport) as waiter:
        started = time.monotonic()
        assert waiter.blpop(["never1", "never2"], 0.2) is None
        elapsed = time.monotonic() - started
        assert 0.19 <= elapsed < 5
        assert waiter.blmove("never1", "x", 0.05) is None
        assert waiter.blmpop(0.05, 1, "never1", direction="LEFT") is None
        assert waiter.ping()                      # the session works normally afterwards
        assert admin.info("clients")["blocked_clients"] == 0


def test_a_ring_wait_longer_than_the_client_timeout_still_gets_its_value(goblin, admin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=0.05) as waiter:
        blocked = Background(lambda: waiter.blpop("late", 0))
        wait_for_blocked(admin, 1)
        time.sleep(0.2)   # not synchronisation: a delay longer than the client's own timeout
        admin.rpush("late", "still-delivered")
        assert blocked.result() == (b"late", b"still-delivered")


# ---- clients that die while blocked -------------------------------------------------------


def test_a_blocked_resp_client_that_disconnects_gets_nothing(goblin, admin):
    sock = raw_connection(goblin.port, timeout=WAIT)
    sock.sendall(b"BLPOP orphan 0\r\n")
    wait_for_blocked(admin, 1)
    sock.close()
    admin.rpush("orphan", "kept")                 # may race the server noticing the EOF
    assert admin.lrange("orphan", 0, -1) == [b"kept"]
    wait_for_blocked(admin, 0)


def test_a_ring_client_killed_while_blocked_loses_nothing(goblin, admin):
    script = (
        "import sys; from goblin_ring import RingClient\n"
        f"c = RingClient(name={goblin.name!r}, runtime_dir={str(goblin.runtime_dir)!r})\n"
        "print('attached', flush=True)\n"
        "c.blpop('doomed', 0)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "attached"
        wait_for_blocked(admin, 1)
        child.send_signal(signal.SIGKILL)
        child.wait(WAIT)
        admin.rpush("doomed", "precious")
        assert admin.lrange("doomed", 0, -1) == [b"precious"]
        wait_for_blocked(admin, 0)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()


# ---- a work queue: many consumers and producers, nothing lost or duplicated ----------------


def test_64_consumers_and_producers_move_every_item_exactly_once(goblin, admin):
    consumers, producers = 48, 16
    per_producer = QUEUE_ITEMS // producers
    total = per_producer * producers
    expected_sum = total * (total - 1) // 2
    results: list[list[int]] = [[] for _ in range(consumers)]
    errors: list[BaseException] = []

    def consume(index: int) -> None:
        transport = "ring" if index % 2 else "resp"
        try:
            with other_client(goblin, transport) as c:
                got = results[index]
                while True:
                    key, value = c.blpop(["urgent", "jobs"], 0)   # stops go last, into "jobs"
                    if value == b"stop":
                        return
                    got.append(int(value))
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    def produce(index: int) -> None:
        transport = "resp" if index % 2 else "ring"
        try:
            with other_client(goblin, transport) as c:
                first = index * per_producer
                batch = 100
                for start in range(first, first + per_producer, batch):
                    values = [str(v) for v in range(start, min(start + batch, first + per_producer))]
                    c.rpush("urgent" if index == 0 else "jobs", *values)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    consumer_threads = [threading.Thread(target=consume, args=(i,), daemon=True) for i in range(consumers)]
    for thread in consumer_threads:
        thread.start()
    wait_for_blocked(admin, consumers)
    producer_threads = [threading.Thread(target=produce, args=(i,), daemon=True) for i in range(producers)]
    for thread in producer_threads:
        thread.start()
    for thread in producer_threads:
        thread.join(120)
    admin.rpush("jobs", *["stop"] * consumers)
    for thread in consumer_threads:
        thread.join(120)
    assert not errors, errors
    assert not any(t.is_alive() for t in consumer_threads + producer_threads)
    moved = [v for got in results for v in got]
    assert len(moved) == total
    assert sum(moved) == expected_sum
    assert len(set(moved)) == total
    assert admin.exists("jobs", "urgent") == 0


def test_config_timeout_does_not_close_a_blocked_client(goblin, admin):
    admin.execute_command("CONFIG", "SET", "timeout", "1")
    try:
        with raw_connection(goblin.port, timeout=WAIT) as sock:
            sock.sendall(b"BLPOP patient 0\r\n")
            wait_for_blocked(admin, 1)
            idle = raw_connection(goblin.port, timeout=WAIT)                    # an idle, unblocked client is closed meanwhile
            idle.settimeout(WAIT)
            assert idle.recv(100) == b""
            idle.close()
            with RespClient(port=goblin.port, socket_timeout=WAIT) as pusher:   # admin idled out too
                pusher.rpush("patient", "finally")
            expected = b"*2\r\n$7\r\npatient\r\n$7\r\nfinally\r\n"
            assert sock.read_exactly(len(expected)) == expected
    finally:
        with RespClient(port=goblin.port, socket_timeout=WAIT) as cleanup:
            cleanup.execute_command("CONFIG", "SET", "timeout", "0")
