"""WAITAOF numlocal numreplicas timeout: its replies and errors equal valkey-server 9.1's (Redis
7.0 lacks it) over RESP and over the ring, with the append-only file off and on; with it on,
the writes before WAITAOF 1 are in the file when it answers; what cannot come (a replica, an
fsync under appendfsync no) is waited out to the timeout, as Redis does, without stalling
other clients; inside MULTI it answers at once; CLIENT UNBLOCK answers a waiting one.
Replicas: a goblin replica with appendonly yes (always, everysec) counts in numreplicas over
both transports, one without an AOF does not (the timeout answers); a valkey 9.1 replica of a
goblin primary counts; a goblin replica makes a valkey primary's WAITAOF 0 1 succeed (its
REPLCONF ACK .. FACK is understood), and on a replica WAITAOF answers as a valkey replica's."""

from __future__ import annotations

import os
import threading
import time

import pytest

from goblin_ring import RespClient, RingClient
from goblin_ring.errors import ResponseError
from resp_wire import raw_connection
from servers import GoblinServer, RedisServer
from test_replication import wait_until

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


# ---- replicas: a replica with appendonly yes acknowledges with REPLCONF ACK <offset> FACK <offset> ----

def replica_up(client) -> bool:
    return b"master_link_status:up" in client.execute_command("INFO", "replication")


def goblin_primary(tmp_path, name):
    server = GoblinServer(tmp_path / name).start()
    client = RespClient(port=server.port, socket_timeout=20)
    client.execute_command("CONFIG", "SET", "repl-diskless-sync-delay", "0")
    return server, client


def valkey_or_fail():
    from goblin_ring.bench.servers import valkey_executable
    path, where = valkey_executable()
    if not path:
        pytest.fail(f"valkey-server is not available ({where})")
    return path


@pytest.mark.parametrize("appendfsync", ["always", "everysec"])
def test_a_goblin_replica_with_an_aof_counts_and_one_without_does_not(tmp_path, appendfsync):
    primary, p = goblin_primary(tmp_path, "p")
    try:
        with GoblinServer(tmp_path / "aof", "--appendonly", "yes",
                          "--appendfsync", appendfsync, "--replicaof", "127.0.0.1", str(primary.port)).start() as r, \
                GoblinServer(tmp_path / "plain",
                             "--replicaof", "127.0.0.1", str(primary.port)).start() as plain:
            with RespClient(port=r.port) as rc, RespClient(port=plain.port) as pc:
                wait_until(lambda: replica_up(rc) and replica_up(pc), what="the replicas' syncs")
                wait_until(lambda: b"aof_rewrite_in_progress:0" in rc.execute_command("INFO", "persistence"),
                           what="the replica's rewrite after its full sync")
                with RingClient(name=primary.name, runtime_dir=primary.runtime_dir) as ring:
                    p.execute_command("SET", "k", "over resp")
                    assert p.execute_command("WAITAOF", 0, 1, 5000) == [0, 1]
                    ring.set("k", "over the ring")
                    assert ring.waitaof(0, 1, 5000) == [0, 1]
                    # the replica has it in its file when WAITAOF answers
                    assert b"over the ring" in (r.runtime_dir / "appendonly.aof").read_bytes()
                    # two asked, one AOF: the timeout answers with the one (everysec: the replica's
                    # FACK moves at its next fsync, within a second, so the one is waited for first)
                    ring.set("k", "again")
                    assert ring.waitaof(0, 1, 5000) == [0, 1]
                    started = time.monotonic()
                    assert ring.waitaof(0, 2, 300) == [0, 1]
                    assert time.monotonic() - started >= 0.29
                    # numlocal and numreplicas together
                    p.execute_command("CONFIG", "SET", "appendonly", "yes")
                    wait_until(lambda: b"aof_rewrite_in_progress:0" in p.execute_command("INFO", "persistence"))
                    p.execute_command("SET", "k", "both")
                    assert p.execute_command("WAITAOF", 1, 1, 5000) == [1, 1]
                    ring.set("k", "both over the ring")
                    assert ring.waitaof(1, 1, 5000) == [1, 1]
                    # WAIT counts both replicas all along
                    assert p.execute_command("WAIT", 2, 5000) == 2
                # a replica refuses it, as valkey
                with pytest.raises(ResponseError, match="WAITAOF cannot be used with replica instances"):
                    rc.execute_command("WAITAOF", 0, 0, 0)
        # without an AOF on the replica: no FACK, the timeout answers [0, 0]
    finally:
        p.close()
        primary.stop()


def test_a_replica_without_an_aof_is_waited_out(tmp_path):
    primary, p = goblin_primary(tmp_path, "p")
    try:
        with GoblinServer(tmp_path / "plain",
                          "--replicaof", "127.0.0.1", str(primary.port)).start() as plain:
            with RespClient(port=plain.port) as pc:
                wait_until(lambda: replica_up(pc), what="the replica's sync")
                p.execute_command("SET", "k", "v")
                assert p.execute_command("WAIT", 1, 5000) == 1
                started = time.monotonic()
                assert p.execute_command("WAITAOF", 0, 1, 300) == [0, 0]
                assert time.monotonic() - started >= 0.29
    finally:
        p.close()
        primary.stop()


def test_a_valkey_replica_of_a_goblin_primary_counts(tmp_path):
    primary, p = goblin_primary(tmp_path, "p")
    replica = RedisServer(valkey_or_fail(), "--dir", str(tmp_path), "--appendonly", "yes",
                          "--replicaof", "127.0.0.1", str(primary.port)).start()
    try:
        with RespClient(port=replica.port) as v:
            wait_until(lambda: replica_up(v), what="valkey's sync from goblin")
            wait_until(lambda: b"aof_rewrite_in_progress:0" in v.execute_command("INFO", "persistence"))
            p.execute_command("SET", "k", "for valkey")
            assert p.execute_command("WAITAOF", 0, 1, 5000) == [0, 1]
            assert v.execute_command("GET", "k") == b"for valkey"
    finally:
        replica.stop()
        p.close()
        primary.stop()


def test_a_goblin_replica_answers_a_valkey_primarys_waitaof(tmp_path):
    valkey = RedisServer(valkey_or_fail(), "--dir", str(tmp_path), "--repl-diskless-sync-delay", "0").start()
    valkey_replica = RedisServer(valkey_or_fail(), "--dir", str(tmp_path), "--replicaof", "127.0.0.1",
                                 str(valkey.port)).start()
    try:
        with GoblinServer(tmp_path / "g", "--appendonly", "yes",
                          "--replicaof", "127.0.0.1", str(valkey.port)).start() as goblin, \
                RespClient(port=valkey.port) as v, RespClient(port=goblin.port) as g:
            wait_until(lambda: replica_up(g), what="goblin's sync from valkey")
            v.execute_command("SET", "k", "for goblin")
            assert v.execute_command("WAITAOF", 0, 1, 5000) == [0, 1]
            assert g.execute_command("GET", "k") == b"for goblin"
            # on a replica: the same replies and errors as a valkey replica's, in the same order
            reference, resp = raw_connection(valkey_replica.port), raw_connection(goblin.port)
            try:
                for argv in CASES:
                    assert resp.request("WAITAOF", *argv) == reference.request("WAITAOF", *argv), argv
            finally:
                reference.close()
                resp.close()
    finally:
        valkey_replica.stop()
        valkey.stop()
