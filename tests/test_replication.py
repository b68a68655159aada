"""test_replication.py — goblin as a replica of redis-server 7.0 (issue 35; native/server/replica.c).

Real redis-server processes started here (own ports and directories): a goblin replica under a
write load of strings, lists, hashes, sorted sets, expiries, MULTI and EVAL ends with the same
DEBUG DIGEST and offset as its primary; ROLE, INFO replication, READONLY; CLIENT KILL TYPE master
on the replica is followed by a partial resync (the primary's sync_partial_ok); a restarted
primary (new history) gives a full resync. A fake primary that sends a bad RDB payload, then
garbage in the stream, is logged and reconnected to, and the replica keeps serving. A full sync
is loaded aside: a ring client on the replica is answered (old data, or MASTERDOWN) while it
loads, the stream written meanwhile is applied after the swap, functions are replaced, and
used_memory comes back after repeated full syncs.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from goblin_ring import RespClient
from goblin_ring.errors import ResponseError
from servers import GoblinServer
from test_rdb_redis import Redis


def info(client, section: str = "replication") -> dict[str, str]:
    text = client.execute_command("INFO", section)
    text = text.decode() if isinstance(text, bytes) else text
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def wait_until(predicate, timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def in_step(primary, replica) -> bool:
    """The replica applied everything the primary sent, and holds the same data."""
    return (info(replica).get("master_link_status") == "up" and
            info(primary)["master_repl_offset"] == info(replica)["master_repl_offset"] and
            primary.execute_command("DEBUG", "DIGEST") == replica.execute_command("DEBUG", "DIGEST"))


def write_load(c, round_: int, n: int = 200, every_type: bool = False) -> None:
    """Strings, lists, hashes, sorted sets, expiries, a MULTI, a script, another database; with
    every_type also sets, a stream, INCRBYFLOAT (propagated as SET ... KEEPTTL) and a key that
    expires at once (a DEL reaches the replica)."""
    for i in range(n):
        c.execute_command("SET", f"s{i}", f"v{round_}-{i}")
        c.execute_command("RPUSH", f"l{i % 10}", i)
        c.execute_command("HSET", f"h{i % 7}", f"f{i}", round_)
        if every_type:
            c.execute_command("SADD", f"set{i % 6}", i, f"m{round_}")
        c.execute_command("ZADD", f"z{i % 5}", i * 1.5, f"m{i}")
        c.execute_command("SET", f"e{i}", i, "EX", 100 + i)
    if every_type:
        c.execute_command("XADD", "stream", "*", "round", round_, "n", n)
        c.execute_command("INCRBYFLOAT", "float", "1.5")
        c.execute_command("SET", "short", round_, "PX", 1)
    c.execute_command("MULTI")
    c.execute_command("INCR", "counter")
    c.execute_command("LPOP", "l0")
    c.execute_command("HDEL", "h0", "f0")
    c.execute_command("EXEC")
    c.execute_command("EVAL", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])", 2,
                      "scripted", round_, "script-counter")
    c.execute_command("SELECT", 3)
    c.execute_command("SET", "in-db-3", round_)
    c.execute_command("SELECT", 0)


def test_replica_of_redis_under_load_partial_and_full_resync(tmp_path):
    primary = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    try:
        p = primary.client
        write_load(p, 0)
        with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port)).start() as goblin:
            g = RespClient(port=goblin.port)
            write_load(p, 1)                       # during or after the full sync
            wait_until(lambda: in_step(p, g), what="the first sync")
            role = g.execute_command("ROLE")
            assert role[:4] == [b"slave", b"127.0.0.1", primary.port, b"connected"]
            fields = info(g)
            assert fields["role"] == "slave" and fields["master_sync_in_progress"] == "0"
            assert fields["master_replid"] == info(p)["master_replid"]
            assert int(fields["master_last_io_seconds_ago"]) <= 2
            with pytest.raises(ResponseError, match="READONLY You can't write against a read only replica."):
                g.execute_command("SET", "x", "1")
            assert g.execute_command("GET", "s5") == b"v1-5"
            assert info(p, "stats")["sync_full"] == "1"

            # link kill on the replica: a partial resync, no second full one
            assert g.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
            write_load(p, 2)
            wait_until(lambda: in_step(p, g), what="the partial resync")
            stats = info(p, "stats")
            assert stats["sync_partial_ok"] == "1" and stats["sync_full"] == "1"

            # the primary restarts with a new history: a full resync
            port = primary.port
            primary.stop()
            primary = Redis(tmp_path / "r2", "--repl-diskless-sync-delay", "0", port=port)
            p = primary.client
            write_load(p, 3)
            wait_until(lambda: in_step(p, g), what="the full resync after the restart")
            assert info(p, "stats")["sync_full"] == "1"
            g.execute_command("REPLICAOF", "NO", "ONE")
            assert g.execute_command("ROLE")[0] == b"master"
            g.execute_command("SET", "x", "1")     # a primary again: writes are allowed
            g.close()
    finally:
        primary.stop()


def test_serve_stale_data_no_answers_masterdown(tmp_path):
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port)
        g.execute_command("CONFIG", "SET", "replica-serve-stale-data", "no")
        g.execute_command("REPLICAOF", "127.0.0.1", "1")      # nobody there: the link stays down
        with pytest.raises(ResponseError, match="MASTERDOWN Link with MASTER is down and replica-serve-stale-data "
                                                "is set to 'no'."):
            g.execute_command("GET", "k")
        assert g.execute_command("ROLE")[0] == b"slave"   # a stale command
        assert info(g)["master_link_status"] == "down"
        g.execute_command("REPLICAOF", "NO", "ONE")
        assert g.execute_command("GET", "k") is None
        g.close()


def valid_rdb(tmp_path: Path) -> bytes:
    server = Redis(tmp_path / "rdb")
    try:
        server.client.execute_command("SET", "from-rdb", "yes")
        server.client.execute_command("SAVE")
        return (tmp_path / "rdb" / "dump.rdb").read_bytes()
    finally:
        server.stop()


def test_fake_primary_corrupt_payload_and_garbage(tmp_path):
    rdb = valid_rdb(tmp_path)
    corrupt = bytearray(rdb)
    corrupt[len(corrupt) // 2] ^= 0xFF
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    sessions: list[str] = []
    replid = "a" * 40

    def handshake(conn) -> None:
        buffer = b""
        while buffer.count(b"PSYNC") == 0 or not buffer.endswith(b"\r\n"):
            chunk = conn.recv(4096)
            if not chunk:
                raise ConnectionError
            buffer += chunk
            if buffer.endswith(b"\r\n") and b"PSYNC" not in buffer:
                conn.sendall(b"+OK\r\n" if b"PING" not in buffer.split(b"*")[-1] else b"+PONG\r\n")

    def serve() -> None:
        payloads = [bytes(corrupt), rdb]
        for attempt in range(2):
            conn, _ = listener.accept()
            try:
                handshake(conn)
                payload = payloads[attempt]
                conn.sendall(f"+FULLRESYNC {replid} 0\r\n$".encode() + str(len(payload)).encode() + b"\r\n" + payload)
                if attempt == 1:
                    conn.sendall(b"*3\r\n$3\r\nSET\r\n$6\r\nstream\r\n$2\r\nok\r\n")
                    conn.sendall(b"*zz\r\n")       # garbage mid-stream
                    conn.recv(1024)              # until the replica closes
                sessions.append("done")
            except OSError:
                sessions.append("error")
            finally:
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(port)).start() as goblin:
            goblin.wait_for_log("Failed trying to load the MASTER synchronization DB", timeout=20)
            goblin.wait_for_log("Protocol error from MASTER", timeout=20)
            g = RespClient(port=goblin.port)
            assert g.execute_command("PING") == b"PONG"
            assert g.execute_command("GET", "from-rdb") == b"yes"
            assert g.execute_command("GET", "stream") == b"ok"
            g.execute_command("REPLICAOF", "NO", "ONE")
            g.close()
        thread.join(10)
        assert sessions == ["done", "done"]
    finally:
        listener.close()


def test_replica_ring_reads_writes_refused_expiry_waits_for_primary_and_masterauth(tmp_path):
    from conftest import make_client
    primary = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0", "--requirepass", "s3cret")
    try:
        p = primary.client
        p.execute_command("AUTH", "s3cret")
        p.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")    # the primary expires only when a key is read
        p.execute_command("SET", "k", "v")
        with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port),
                          "--masterauth", "s3cret").start() as goblin:
            g = RespClient(port=goblin.port)
            wait_until(lambda: in_step(p, g), what="the sync with AUTH")
            ring = make_client(goblin, "ring")
            try:
                assert ring.get("k") == b"v"
                with pytest.raises(ResponseError, match="READONLY You can't write against a read only replica."):
                    ring.set("k", "w")
                # a key past its time: the replica answers nil but keeps it until the primary's DEL
                p.execute_command("SET", "short", "1", "PX", 50)
                wait_until(lambda: g.execute_command("DBSIZE") == 2, what="the key with a TTL")
                time.sleep(0.1)   # let its 50 ms pass (the behaviour under test is time itself)
                assert g.execute_command("GET", "short") is None
                assert ring.get("short") is None
                assert g.execute_command("DBSIZE") == 2
                assert p.execute_command("GET", "short") is None   # the primary expires it and sends DEL
                wait_until(lambda: g.execute_command("DBSIZE") == 1, what="the primary's DEL")
                # replica-read-only no: local writes are allowed
                g.execute_command("CONFIG", "SET", "replica-read-only", "no")
                assert ring.set("local", "1") in (True, b"OK", "OK")
            finally:
                ring.close()
            g.execute_command("REPLICAOF", "NO", "ONE")
            g.close()
    finally:
        primary.stop()


def test_replica_stream_reaches_its_append_only_file(tmp_path):
    primary = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    data = tmp_path / "data"
    data.mkdir()
    try:
        p = primary.client
        write_load(p, 0)
        with GoblinServer(tmp_path / "g", "--dir", str(data), "--appendonly", "yes",
                          "--replicaof", "127.0.0.1", str(primary.port)).start() as goblin:
            g = RespClient(port=goblin.port)
            wait_until(lambda: in_step(p, g), what="the first sync")
            wait_until(lambda: info(g, "persistence")["aof_rewrite_in_progress"] == "0", what="the AOF rewrite")
            write_load(p, 1)
            wait_until(lambda: in_step(p, g), what="the stream")
            digest = g.execute_command("DEBUG", "DIGEST")
            g.close()
        # the same directory without a primary: the log alone gives the data back
        with GoblinServer(tmp_path / "g2", "--dir", str(data), "--appendonly", "yes").start() as again:
            c = RespClient(port=again.port)
            assert c.execute_command("DEBUG", "DIGEST") == digest
            c.close()
    finally:
        primary.stop()


def test_a_replica_over_maxmemory_keeps_everything_its_primary_sends(tmp_path):
    # Redis's replica-ignore-maxmemory (default yes): a replica that evicted would differ from its
    # primary; only the primary's DELs remove keys
    primary = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    try:
        p = primary.client
        with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port),
                          "--maxmemory-policy", "allkeys-lru").start() as goblin:
            g = RespClient(port=goblin.port)
            wait_until(lambda: info(g)["master_link_status"] == "up", what="the link")
            g.execute_command("CONFIG", "SET", "maxmemory", "1")       # far below what it holds
            for i in range(200):
                p.set(f"e{i}", "x" * 100)
            wait_until(lambda: in_step(p, g), what="the stream")
            assert g.dbsize() == 200 and info(g, "stats")["evicted_keys"] == "0"
            assert g.get("e0") == b"x" * 100                              # reads still served
            g.close()
    finally:
        primary.stop()


PRIMARY_LIB = "#!lua name=both\nredis.register_function('which', function() return 'primary' end)"
REPLICA_LIB = "#!lua name=both\nredis.register_function('which', function() return 'replica' end)"
REPLICA_ONLY_LIB = "#!lua name=onlyhere\nredis.register_function('mine', function() return 1 end)"


class RingProbe:
    """A ring client on the replica asking GET old-key, then INFO persistence, in a loop: a GET
    whose INFO before and after both said async_loading:1 was answered during the load aside."""

    def __init__(self, goblin):
        from conftest import make_client
        self.ring = make_client(goblin, "ring")
        self.stop = threading.Event()
        self.during: list = []        # GET answers sandwiched between two async_loading:1
        self.max_gap = 0.0
        self.calls = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def loading(self) -> bool:
        return str(self.ring.info("persistence").get("async_loading")) == "1"

    def run(self) -> None:
        before = self.loading()
        last = time.perf_counter()
        while not self.stop.is_set():
            try:
                answer = self.ring.get("old-key")
            except ResponseError as error:
                answer = str(error)
            after = self.loading()
            now = time.perf_counter()
            self.max_gap = max(self.max_gap, now - last)   # one GET + one INFO
            last = now
            self.calls += 1
            if before and after:
                self.during.append(answer)
            before = after

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(30)
        self.ring.close()


def linked(primary, replica) -> bool:
    fields = info(replica)
    return fields.get("master_link_status") == "up" and fields["master_repl_offset"] == info(primary)["master_repl_offset"]


def write_while_loading(primary, replica, tag: str) -> bool:
    """Once the replica loads aside, writes to the primary (the stream the replica keeps and
    applies after the swap); True when they were all sent while it was still loading."""
    wait_until(lambda: info(replica, "persistence")["async_loading"] == "1" or linked(primary, replica),
               what="the load aside to begin")
    for i in range(100):
        primary.execute_command("SET", f"during-{tag}-{i}", i)
    return info(replica, "persistence")["async_loading"] == "1"


def used_memory(client) -> int:
    return int(info(client, "memory")["used_memory"])


def test_full_sync_loads_aside_serving_the_old_data_then_swaps(tmp_path):
    """The payload (300k keys) is loaded by a thread while ring clients keep being answered with
    the old data (or MASTERDOWN with replica-serve-stale-data no), and the stream written
    meanwhile is kept and applied after it; after the swap the data and
    the function libraries are the primary's; repeated full syncs leave used_memory where it was;
    the primary named "localhost" (looked up off the loop) works too."""
    primary = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    try:
        p = primary.client
        p.execute_command("DEBUG", "POPULATE", 300000, "key", 16)
        p.execute_command("FUNCTION", "LOAD", PRIMARY_LIB)
        with GoblinServer(tmp_path / "g").start() as goblin:
            g = RespClient(port=goblin.port, socket_timeout=20)
            g.execute_command("SET", "old-key", "old")
            g.execute_command("FUNCTION", "LOAD", REPLICA_LIB)
            g.execute_command("FUNCTION", "LOAD", REPLICA_ONLY_LIB)
            baseline = used_memory(g)
            probe = RingProbe(goblin)
            try:
                g.execute_command("REPLICAOF", "127.0.0.1", primary.port)
                during = [write_while_loading(p, g, "first")]
                wait_until(lambda: linked(p, g), what="the first full sync")   # no DIGEST while probing
            finally:
                probe.finish()
            wait_until(lambda: in_step(p, g), what="the same data")
            assert probe.during and all(a == b"old" for a in probe.during), probe.during[:5]
            assert g.execute_command("GET", "old-key") is None
            assert g.execute_command("DBSIZE") == 300000 + 100
            assert g.execute_command("FCALL", "which", 0) == b"primary"
            names = sorted(lib[1] for lib in g.execute_command("FUNCTION", "LIST"))
            assert names == [b"both"]
            synced = used_memory(g)
            assert synced > baseline + 300000 * 40
            print(f"longest ring GET+INFO during the sync: {probe.max_gap * 1000:.1f} ms, "
                  f"{len(probe.during)} answered while loading")

            # again, twice, the second with serve-stale-data no and the primary as "localhost"
            for round_, (host, stale) in enumerate([("127.0.0.1", "yes"), ("localhost", "no")]):
                g.execute_command("REPLICAOF", "NO", "ONE")          # a new history: the next sync is full
                g.execute_command("CONFIG", "SET", "replica-read-only", "no")
                g.execute_command("SET", "old-key", "old")
                g.execute_command("CONFIG", "SET", "replica-serve-stale-data", stale)
                full_before = int(info(p, "stats")["sync_full"])
                probe = RingProbe(goblin)
                try:
                    g.execute_command("REPLICAOF", host, primary.port)
                    during.append(write_while_loading(p, g, str(round_)))
                    wait_until(lambda: linked(p, g), what=f"full sync {round_ + 2}")
                finally:
                    probe.finish()
                wait_until(lambda: in_step(p, g), what="the same data")
                assert int(info(p, "stats")["sync_full"]) == full_before + 1
                expected = b"old" if stale == "yes" else "MASTERDOWN Link with MASTER is down and " \
                                                       "replica-serve-stale-data is set to 'no'."
                assert probe.during and all(a == expected for a in probe.during), probe.during[:5]
                assert g.execute_command("GET", "old-key") is None
                # the old data is freed on a thread: used_memory comes back to the first sync's
                wait_until(lambda: abs(used_memory(g) - synced) < synced * 0.02,
                           what=f"used_memory back near {synced} (is {used_memory(g)})")
            assert info(g)["master_host"] == "localhost"
            assert any(during), "no write reached the primary while the replica loaded aside"
            g.execute_command("REPLICAOF", "NO", "ONE")
            g.execute_command("FLUSHALL")
            g.execute_command("FUNCTION", "FLUSH")
            wait_until(lambda: used_memory(g) < baseline + 200000, what=f"used_memory back near {baseline}")
            g.close()
    finally:
        primary.stop()
