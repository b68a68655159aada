"""WAITAOF numlocal numreplicas timeout: its replies and errors equal valkey-server 9.1's (Redis
7.0 lacks it) over RESP and over the ring, with the append-only file off and on; with it on,
the writes before WAITAOF 1 are in the file when it answers; what cannot come (a replica, an
fsync under appendfsync no) is waited out to the timeout, as Redis does, without stalling
other clients; inside MULTI it answers at once; CLIENT UNBLOCK answers a waiting one."""

from __future__ import annotations

import os
import threading
import time

import pytest

from goblin_ring import RingClient
from goblin_ring.errors import ResponseError
from resp_wire import raw_connection
from servers import GoblinServer, RedisServer

CASES = [
    ("0", "0", "0"), ("1", "0", "0"), ("-1", "0", "0"), ("x", "0", "0"), ("2", "0", "0"),
    ("0", "-1", "0"), ("0", "x", "0"), ("0", "9223372036854775808", "0"), ("0", "0", "1.5"),
    ("0", "0", "-1"), ("0", "0", "x"), ("1", "0", "10"),
]


@pytest.fixture(scope="module")
def valkey(tmp_path_factory):
    from goblin_ring.bench.servers import valkey_executable
    path, where = valkey_executable()
    if not path:
        pytest.fail(f"valkey-server is not available ({where})")
    server = RedisServer(path, "--dir", str(tmp_path_factory.mktemp("valkey"))).start()
    yield server
    server.stop()


@pytest.fixture
def goblin(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with GoblinServer(tmp_path / "runtime", "--dir", str(data)).start() as server:
        server.data_dir = data
        yield server


def ring_outcome(client: RingClient, argv) -> bytes:
    """The ring's reply in RESP's bytes, to compare with the references' wire replies."""
    try:
        reply = client.execute_command(*argv)
    except ResponseError as error:
        return b"-" + str(error).encode() + b"\r\n"
    assert isinstance(reply, list)
    return b"*%d\r\n" % len(reply) + b"".join(b":%d\r\n" % n for n in reply)


@pytest.mark.parametrize("appendonly", ["no", "yes"])
def test_replies_and_errors_equal_valkeys_on_both_transports(goblin, valkey, appendonly):
    reference = raw_connection(valkey.port)
    resp = raw_connection(goblin.port)
    try:
        for conn in (reference, resp):   # always: what is on disk does not depend on a clock
            assert conn.request("CONFIG", "SET", "appendfsync", "always") == b"+OK\r\n"
            assert conn.request("CONFIG", "SET", "appendonly", appendonly) == b"+OK\r\n"
            while b"aof_rewrite_in_progress:1" in conn.request("INFO", "persistence"):
                pass   # valkey writes the dataset first; it acknowledges nothing meanwhile
            assert conn.request("SET", "written", "before") == b"+OK\r\n"
        with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as ring:
            ring.set("written", "over the ring")
            for argv in CASES:
                expected = reference.request("WAITAOF", *argv)
                assert resp.request("WAITAOF", *argv) == expected, argv
                assert ring_outcome(ring, ("WAITAOF", *argv)) == expected, argv
    finally:
        for conn in (reference, resp):
            conn.request("CONFIG", "SET", "appendonly", "no")
            conn.close()


def test_the_writes_are_in_the_file_when_waitaof_answers(goblin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as ring:
        ring.config_set("appendfsync", "everysec")
        ring.config_set("appendonly", "yes")
        for i in range(20):
            ring.set(f"key:{i}", f"value:{i}")
            assert ring.waitaof(1, 0, 0) == [1, 0]
            assert f"value:{i}".encode() in (goblin.data_dir / "appendonly.aof").read_bytes()


def test_what_cannot_come_is_waited_out_without_stalling_others(goblin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as waiter, \
            RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as other:
        waiter.config_set("appendonly", "yes")
        waiter.config_set("appendfsync", "no")
        answers = {}

        def wait(name, *argv):
            started = time.monotonic()
            answers[name] = (waiter.waitaof(*argv), time.monotonic() - started)

        thread = threading.Thread(target=wait, args=("no fsync", 1, 0, 300))
        thread.start()
        served = [other.incr("counter") for _ in range(100)]   # the other client runs meanwhile
        thread.join()
        assert served == list(range(1, 101))
        assert answers["no fsync"][0] == [0, 0] and answers["no fsync"][1] >= 0.29
        wait("a replica", 0, 1, 200)
        assert answers["a replica"][0] == [0, 0] and answers["a replica"][1] >= 0.19


def test_inside_multi_it_answers_at_once(goblin):
    conn = raw_connection(goblin.port)
    try:
        assert conn.request("MULTI") == b"+OK\r\n"
        assert conn.request("WAITAOF", "0", "1", "0") == b"+QUEUED\r\n"
        assert conn.request("EXEC") == b"*1\r\n*2\r\n:0\r\n:0\r\n"
    finally:
        conn.close()


def test_client_unblock_answers_a_waiting_waitaof(goblin):
    waiting, admin = raw_connection(goblin.port), raw_connection(goblin.port)
    try:
        client_id = int(waiting.request("CLIENT", "ID")[1:-2])
        waiting.sock.sendall(b"*4\r\n$7\r\nWAITAOF\r\n$1\r\n0\r\n$1\r\n1\r\n$1\r\n0\r\n")   # forever
        while b"cmd=waitaof" not in admin.request("CLIENT", "LIST", "ID", str(client_id)):
            pass   # until the server has parked it
        assert admin.request("CLIENT", "UNBLOCK", str(client_id)) == b":1\r\n"
        assert waiting.read_reply() == b"*2\r\n:0\r\n:0\r\n"
    finally:
        waiting.close()
        admin.close()


def test_a_forked_child_waits_for_its_own_writes(goblin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as ring:
        ring.config_set("appendonly", "yes")
        ring.config_set("appendfsync", "everysec")
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child: its own session on first use
            try:
                with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as child:
                    child.set("from the child", "x")
                    ok = child.waitaof(1, 0, 0) == [1, 0]
                os.write(write, b"1" if ok else b"0")
            finally:
                os._exit(0)
        os.close(write)
        assert os.read(read, 1) == b"1"
        os.waitpid(pid, 0)
        os.close(read)
        assert ring.waitaof(1, 0, 0) == [1, 0]
        assert b"from the child" in (goblin.data_dir / "appendonly.aof").read_bytes()


def test_threads_sharing_one_client_each_wait_for_their_writes(goblin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as ring:
        ring.config_set("appendonly", "yes")
        ring.config_set("appendfsync", "everysec")
        answers = []

        def work(n):
            for i in range(25):
                ring.set(f"thread:{n}:{i}", "v")
                answers.append(ring.waitaof(1, 0, 0))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert answers == [[1, 0]] * 100
        assert all(f"thread:{n}:24".encode() in (goblin.data_dir / "appendonly.aof").read_bytes() for n in range(4))
