"""test_replication_diskless.py — goblin as a primary, the diskless full sync (issue 35;
native/server/primary.c) and what surrounds it: repl-diskless-sync*, a second replica joining a
disk-form child already under way, repl-backlog-ttl.

Real redis-server 7.0 and goblin replicas started here (own ports and directories), and raw
sockets where the test must see the bytes: a replica that said REPLCONF capa eof gets
"$EOF:<40 hex>" + RDB + the mark, one that did not gets "$<len>"; after the mark nothing comes
until the replica's REPLCONF ACK (Redis's repl_put_online_on_ack); one child's pipe feeds every
replica waiting for it; a replica dying mid-transfer harms neither the other nor the primary.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from goblin_ring import RespClient
from servers import GoblinServer
from test_rdb_redis import Redis
from test_replication import info, wait_until
from test_replication_primary import in_step, write_load


def configure(client, *pairs: str) -> None:
    for name, value in zip(pairs[::2], pairs[1::2]):
        assert client.execute_command("CONFIG", "SET", name, value) == b"OK"


def fill(client, keys: int, size: int = 20, prefix: str = "k") -> None:
    for start in range(0, keys, 10_000):
        client.execute_command("MSET", *[x for i in range(start, min(keys, start + 10_000))
                                         for x in (f"{prefix}{i}", "v" * size)])


class Writer:
    """INCR + RPUSH + SET EX on the primary until stopped: what the replicas must end up with."""

    def __init__(self, port: int):
        self.port, self.count = port, 0
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self) -> None:
        w = RespClient(port=self.port, socket_timeout=20)
        while not self.stop_event.is_set():
            w.execute_command("INCR", "during")
            w.execute_command("RPUSH", "during-list", self.count)
            w.execute_command("SET", f"ex{self.count % 50}", self.count, "EX", 1000)
            self.count += 1
        w.close()

    def stop(self) -> int:
        self.stop_event.set()
        self.thread.join()
        return self.count


def read_line(s: socket.socket, buffer: bytearray) -> bytes:
    while b"\r\n" not in buffer and not buffer.startswith(b"\n"):
        chunk = s.recv(65536)
        assert chunk, "the primary closed the connection"
        buffer += chunk
    if buffer.startswith(b"\n"):                       # a keepalive before the payload
        del buffer[:1]
        return b""
    line, _, rest = bytes(buffer).partition(b"\r\n")
    buffer[:] = rest
    return line


def raw_sync(port: int, capa_eof: bool) -> tuple[socket.socket, bytearray, bytes]:
    """A replica by hand: REPLCONF, PSYNC ? -1; returns the socket, what was read past the
    payload header, and that header."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    buffer = bytearray()
    capa = b"REPLCONF capa eof capa psync2\r\n" if capa_eof else b"REPLCONF capa psync2\r\n"
    s.sendall(b"REPLCONF listening-port 1\r\n" + capa + b"PSYNC ? -1\r\n")
    assert read_line(s, buffer) == b"+OK" and read_line(s, buffer) == b"+OK"
    line = b""
    while not line:
        line = read_line(s, buffer)
    assert line.startswith(b"+FULLRESYNC "), line
    header = b""
    while not header:
        header = read_line(s, buffer)
    return s, buffer, header


def check_rdb(tmp_path, payload: bytes) -> None:
    check = shutil.which("redis-check-rdb")
    if not check:
        pytest.fail("redis-tools is not installed (redis-check-rdb)")
    path = tmp_path / "payload.rdb"
    path.write_bytes(payload)
    checked = subprocess.run([check, str(path)], capture_output=True, timeout=30)
    assert checked.returncode == 0 and b"RDB looks OK" in checked.stdout, checked.stdout


def test_defaults_are_redis_7s(tmp_path):
    redis = Redis(tmp_path / "r")
    try:
        with GoblinServer(tmp_path / "g").start() as goblin:
            g = RespClient(port=goblin.port)
            for name in ("repl-diskless-sync", "repl-diskless-sync-delay", "repl-diskless-sync-max-replicas",
                         "repl-backlog-ttl"):
                assert g.execute_command("CONFIG", "GET", name) == redis.client.execute_command("CONFIG", "GET", name)
            assert g.execute_command("CONFIG", "GET", "repl-diskless-sync") == [b"repl-diskless-sync", b"yes"]
            configure(g, "repl-diskless-sync", "no", "repl-diskless-sync-delay", "0", "repl-backlog-ttl", "7")
            got = g.execute_command("CONFIG", "GET", "repl-diskless-sync*")
            assert dict(zip(got[::2], got[1::2])) == {b"repl-diskless-sync": b"no", b"repl-diskless-sync-delay": b"0",
                                                      b"repl-diskless-sync-max-replicas": b"0"}
            assert g.execute_command("CONFIG", "GET", "repl-backlog-ttl") == [b"repl-backlog-ttl", b"7"]
            for bad in (("repl-diskless-sync", "maybe"), ("repl-diskless-sync-delay", "-1"),
                        ("repl-backlog-ttl", "x")):
                with pytest.raises(Exception, match="ERR CONFIG SET failed"):
                    g.execute_command("CONFIG", "SET", *bad)
            g.close()
    finally:
        redis.stop()


def test_one_diskless_transfer_feeds_a_redis_and_a_goblin_replica_under_load(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        # the fork waits for both replicas (max-replicas), not for the delay
        configure(p, "repl-diskless-sync-delay", "60", "repl-diskless-sync-max-replicas", "2")
        write_load(p, 0, n=300)
        fill(p, 60_000)
        writer = Writer(primary.port)
        redis = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(primary.port))
        try:
            with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port)).start() as goblin:
                g = RespClient(port=goblin.port, socket_timeout=20)
                lines = "\n".join(primary.wait_for_log("Background RDB transfer terminated with success", timeout=30))
                assert lines.count("Starting BGSAVE for SYNC with target: replicas sockets") == 1
                assert "Diskless rdb transfer, done reading from pipe, 2 replicas still up." in lines
                assert "Starting BGSAVE for SYNC with target: disk" not in lines
                assert "receiving streamed RDB from master with EOF" in "\n".join(
                    goblin.wait_for_log("MASTER <-> REPLICA sync: Finished with success", timeout=30))
                r = redis.client
                wait_until(lambda: info(r).get("master_link_status") == "up" and
                           info(g).get("master_link_status") == "up", what="both syncs")
                at_sync = int(r.execute_command("GET", "during") or 0)
                wait_until(lambda: int(r.execute_command("GET", "during") or 0) > at_sync + 50 and
                           int(g.execute_command("GET", "during") or 0) > at_sync + 50,
                           what="writes after the sync on both replicas")
                written = writer.stop()
                wait_until(lambda: in_step(p, r) and in_step(p, g), what="both replicas in step")
                for replica in (r, g):
                    assert int(replica.execute_command("GET", "during")) == written
                    assert replica.execute_command("LLEN", "during-list") == written
                    assert replica.execute_command("DBSIZE") == p.execute_command("DBSIZE")
                assert info(p, "stats")["sync_full"] == "2"
                fields = info(p)
                assert fields["connected_slaves"] == "2"
                assert "state=online" in fields["slave0"] and "state=online" in fields["slave1"]
                g.close()
        finally:
            if not writer.stop_event.is_set():
                writer.stop()
            redis.stop()
        p.close()


def test_eof_and_plain_replicas_get_their_forms_and_the_stream_waits_for_the_ack(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        configure(p, "repl-diskless-sync-delay", "0")
        write_load(p, 0, n=100)
        # no capa eof: the disk form, "$<length>", though repl-diskless-sync is yes
        s, buffer, header = raw_sync(primary.port, capa_eof=False)
        assert re.fullmatch(rb"\$\d+", header), header
        length = int(header[1:])
        while len(buffer) < length:
            buffer += s.recv(65536)
        assert bytes(buffer[:9]) == b"REDIS0010"
        check_rdb(tmp_path, bytes(buffer[:length]))
        s.close()
        primary.wait_for_log("Starting BGSAVE for SYNC with target: disk")

        # capa eof: "$EOF:<mark>", the RDB, the mark
        s, buffer, header = raw_sync(primary.port, capa_eof=True)
        assert re.fullmatch(rb"\$EOF:[0-9a-f]{40}", header), header
        mark = header[5:]
        while not buffer.endswith(mark):
            chunk = s.recv(65536)
            assert chunk, "closed before the mark"
            buffer += chunk
        payload = bytes(buffer[:-40])
        assert payload[:9] == b"REDIS0010" and mark not in payload
        check_rdb(tmp_path, payload)
        primary.wait_for_log("Starting BGSAVE for SYNC with target: replicas sockets")
        wait_until(lambda: "state=online" in info(p).get("slave0", ""), what="the transfer's end on the primary")
        # nothing is glued after the mark until the replica's ACK
        p.execute_command("SET", "after-the-payload", "1")
        s.settimeout(0.3)
        with pytest.raises(socket.timeout):
            s.recv(1)
        s.settimeout(20)
        s.sendall(b"REPLCONF ACK 0\r\n")
        stream = bytearray()
        while b"after-the-payload" not in stream:
            chunk = s.recv(65536)
            assert chunk, "closed before the stream"
            stream += chunk
        assert stream.startswith(b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")
        primary.wait_for_log("Synchronization with replica 127.0.0.1:1 succeeded")
        s.close()
        p.close()


def test_a_replica_that_dies_mid_transfer_harms_neither_the_other_nor_the_primary(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        fill(p, 200_000, size=100)                         # ~20 MB: more than the sockets hold
        digest = p.execute_command("DEBUG", "DIGEST")

        # the only receiver dies: the child is killed, the primary serves on
        configure(p, "repl-diskless-sync-delay", "0")
        s, buffer, header = raw_sync(primary.port, capa_eof=True)
        assert header.startswith(b"$EOF:")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()                                          # reset, with most of the payload unsent
        primary.wait_for_log("Diskless rdb transfer, last replica dropped, killing fork child.", timeout=20)
        assert p.execute_command("DEBUG", "DIGEST") == digest
        wait_until(lambda: info(p)["connected_slaves"] == "0", what="the dead replica to be gone")

        # two receivers, one dies after a few bytes: the other completes
        configure(p, "repl-diskless-sync-delay", "60", "repl-diskless-sync-max-replicas", "2")
        pending = RawSyncInThread(primary.port)
        redis = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(primary.port))
        try:
            s, buffer, header = pending.result()
            assert header.startswith(b"$EOF:")
            while len(buffer) < 100_000:
                buffer += s.recv(65536)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
            lines = "\n".join(primary.wait_for_log("Diskless rdb transfer, done reading from pipe", timeout=30))
            assert "killing fork child" not in lines
            wait_until(lambda: in_step(p, redis.client), timeout=30, what="the surviving replica")
            assert info(p)["connected_slaves"] == "1"
            p.execute_command("SET", "after", "1")
            wait_until(lambda: redis.client.execute_command("GET", "after") == b"1", what="the stream")
        finally:
            redis.stop()

        # becoming a replica mid-transfer: the child, blocked on a pipe nobody reads, is killed
        configure(p, "repl-diskless-sync-delay", "0", "repl-diskless-sync-max-replicas", "0")
        wait_until(lambda: info(p)["connected_slaves"] == "0", what="the replica to be gone")
        s, buffer, header = raw_sync(primary.port, capa_eof=True)    # and never reads
        assert header.startswith(b"$EOF:")
        p.execute_command("REPLICAOF", "127.0.0.1", "1")
        primary.wait_for_log("Background RDB transfer error", timeout=20)
        p.execute_command("REPLICAOF", "NO", "ONE")
        assert p.execute_command("BGSAVE") == b"Background saving started"   # no child left behind
        s.close()
        p.close()


class RawSyncInThread:
    """raw_sync in a thread: its PSYNC is answered only once the second replica asked too."""

    def __init__(self, port: int):
        self.outcome: list = []
        self.thread = threading.Thread(target=lambda: self.outcome.append(raw_sync(port, capa_eof=True)))
        self.thread.start()

    def result(self):
        self.thread.join(30)
        assert self.outcome, "the raw replica's sync did not start"
        return self.outcome[0]


def test_a_second_replica_joins_the_disk_child_under_way(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        write_load(p, 0, n=100)
        fill(p, 2_000)
        # the disk form, slowed to ~1 ms a key so the second replica asks while the child runs
        configure(p, "repl-diskless-sync", "no", "rdb-key-save-delay", "1000")
        writer = Writer(primary.port)
        first = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(primary.port))
        try:
            primary.wait_for_log("Starting BGSAVE for SYNC with target: disk", timeout=20)
            with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port)).start() as goblin:
                g = RespClient(port=goblin.port, socket_timeout=20)
                lines = "\n".join(primary.wait_for_log("Waiting for end of BGSAVE for SYNC", timeout=20))
                assert "Can't attach" not in lines
                persistence = info(p, "persistence")   # the sync's child counts as an RDB save, as Redis's
                assert persistence["rdb_bgsave_in_progress"] == "1"
                assert int(persistence["rdb_current_bgsave_time_sec"]) >= 0
                lines = "\n".join(primary.wait_for_log("Background saving terminated with success", timeout=30))
                assert "Starting BGSAVE" not in lines              # no second fork
                r = first.client
                wait_until(lambda: info(r).get("master_link_status") == "up" and
                           info(g).get("master_link_status") == "up", timeout=30, what="both syncs")
                written = writer.stop()
                wait_until(lambda: in_step(p, r) and in_step(p, g), what="both replicas in step")
                assert int(g.execute_command("GET", "during")) == written == int(r.execute_command("GET", "during"))
                assert info(p, "stats")["sync_full"] == "2"
                g.close()
        finally:
            if not writer.stop_event.is_set():
                writer.stop()
            first.stop()
        p.close()


def test_backlog_is_freed_after_repl_backlog_ttl_without_replicas(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        configure(p, "repl-diskless-sync-delay", "0", "repl-backlog-ttl", "1")
        write_load(p, 0, n=20)
        replica = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(primary.port))
        try:
            wait_until(lambda: in_step(p, replica.client), what="the sync")
            old_id = info(p)["master_replid"]
            # kept while a replica is connected, past the ttl
            until = time.monotonic() + 1.5
            while time.monotonic() < until:
                p.execute_command("INCR", "counter")
                assert p.execute_command("WAIT", 1, 5000) == 1
                assert info(p)["repl_backlog_active"] == "1"
            assert info(p)["master_replid"] == old_id
        finally:
            replica.stop()
        wait_until(lambda: info(p)["repl_backlog_active"] == "0", timeout=10, what="the backlog to be freed")
        primary.wait_for_log("Replication backlog freed after 1 seconds without connected replicas.")
        fields = info(p)
        assert fields["master_replid"] != old_id                  # nobody continues the old history
        assert fields["repl_backlog_histlen"] == "0"
        # a new replica: full sync, and the backlog is back
        again = Redis(tmp_path / "r2", "--replicaof", "127.0.0.1", str(primary.port))
        try:
            wait_until(lambda: in_step(p, again.client), what="the second sync")
            assert info(p)["repl_backlog_active"] == "1"
            assert info(p, "stats")["sync_full"] == "2"
        finally:
            again.stop()
        p.close()
