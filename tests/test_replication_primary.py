"""test_replication_primary.py — goblin as a primary (issue 35; native/server/primary.c).

Real redis-server 7.0 processes started here (own ports and directories) replicate from a goblin:
under a write load (strings, lists, hashes, sets, sorted sets, streams, expiries, MULTI, EVAL,
SELECT) the replica ends with the same DEBUG DIGEST and offset; writes made while the RDB is
produced and sent arrive; CLIENT KILL TYPE replica on goblin is followed by +CONTINUE
(sync_partial_ok); a goblin replica of a goblin primary; WAIT; min-replicas-to-write; a replica
that sends garbage or dies mid-sync leaves the primary serving; `redis-cli --rdb` against goblin
writes a file redis-check-rdb accepts.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time

import pytest

from goblin_ring import RespClient
from goblin_ring.errors import ResponseError
from servers import GoblinServer
from test_rdb_redis import Redis
from resp_wire import encode_command, raw_connection
import test_replication as replication
from test_replication import in_step, info, wait_until


def sync_form(c, form: str = "diskless") -> None:
    """The full sync's form on a goblin primary, without repl-diskless-sync-delay's 5 s wait."""
    c.execute_command("CONFIG", "SET", "repl-diskless-sync", "yes" if form == "diskless" else "no",
                      "repl-diskless-sync-delay", "0")


def write_load(c, round_: int, n: int = 200) -> None:
    """test_replication's load with every type (sets, a stream, INCRBYFLOAT, an expiring key)."""
    replication.write_load(c, round_, n, every_type=True)


@pytest.mark.parametrize("form", ["diskless", "disk"])
def test_redis_replica_of_goblin_under_load_then_partial_resync(tmp_path, form):
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port, socket_timeout=20)
        sync_form(g, form)
        write_load(g, 0)
        replica = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(goblin.port))
        try:
            r = replica.client
            write_load(g, 1)                                   # during or after the full sync
            wait_until(lambda: in_step(g, r), what="the first sync")
            target = "replicas sockets" if form == "diskless" else "disk"
            assert f"Starting BGSAVE for SYNC with target: {target}" in "".join(goblin.log + goblin.wait_for_log(
                "Synchronization with replica"))
            assert r.execute_command("GET", "s5") == b"v1-5"
            assert r.execute_command("GET", "short") is None   # the primary's DEL (expired)
            fields = info(g)
            assert fields["role"] == "master" and fields["connected_slaves"] == "1"
            assert fields["slave0"].startswith(f"ip=127.0.0.1,port={replica.port},state=online,offset=")
            assert fields["repl_backlog_active"] == "1" and fields["repl_backlog_size"] == "1048576"
            assert info(r)["master_replid"] == fields["master_replid"]
            role = g.execute_command("ROLE")
            assert role[0] == b"master" and role[2][0][:2] == [b"127.0.0.1", str(replica.port).encode()]
            listing = g.execute_command("CLIENT", "LIST", "TYPE", "replica")
            listing = listing.decode() if isinstance(listing, bytes) else listing
            assert listing.count("\n") == 1 and "flags=S" in listing
            stats = info(g, "stats")
            assert stats["sync_full"] == "1" and stats["sync_partial_ok"] == "0"

            # the link killed on goblin's side: the replica comes back with +CONTINUE
            assert g.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
            write_load(g, 2)
            wait_until(lambda: in_step(g, r), what="the partial resync")
            stats = info(g, "stats")
            assert stats["sync_partial_ok"] == "1" and stats["sync_full"] == "1"

            # WAIT: the replica acknowledges the offset of the writes so far
            g.execute_command("SET", "waited", 1)
            assert g.execute_command("WAIT", 1, 5000) == 1
            assert g.execute_command("WAIT", 2, 100) == 1      # only one replica: the timeout answers
            reader = RespClient(port=goblin.port)
            assert reader.execute_command("WAIT", 1, 0) == 1   # no write of its own: nothing to wait for
            reader.close()

            # active expiry on goblin (no command touches the key): its DEL reaches the replica,
            # which keeps an expired key until then (DBSIZE counts it)
            before = r.execute_command("DBSIZE")
            g.execute_command("SET", "soon", 1, "PX", 100)
            wait_until(lambda: r.execute_command("DBSIZE") == before + 1, what="the key on the replica")
            wait_until(lambda: r.execute_command("DBSIZE") == before, what="the expiry's DEL on the replica")
            g.close()
        finally:
            replica.stop()


def test_writes_during_the_transfer_are_not_lost(tmp_path):
    """A big keyspace makes the RDB take a while; a writer keeps writing through the sync."""
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port, socket_timeout=20)
        sync_form(g)
        for start in range(0, 200_000, 10_000):
            g.execute_command("MSET", *[x for i in range(start, start + 10_000) for x in (f"k{i}", "v" * 20)])
        stop = threading.Event()
        written = []

        def writer():
            w = RespClient(port=goblin.port, socket_timeout=20)
            i = 0
            while not stop.is_set():
                w.execute_command("INCR", "during")
                w.execute_command("RPUSH", "during-list", i)
                i += 1
            written.append(i)
            w.close()

        thread = threading.Thread(target=writer)
        thread.start()
        replica = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(goblin.port))
        try:
            r = replica.client
            wait_until(lambda: info(r).get("master_link_status") == "up", what="the sync")
            synced_at = int(r.execute_command("GET", "during") or 0)
            wait_until(lambda: int(r.execute_command("GET", "during") or 0) > synced_at + 100,
                       what="writes after the sync to reach the replica")
            stop.set()
            thread.join()
            wait_until(lambda: in_step(g, r), what="the replica to catch up")
            assert int(r.execute_command("GET", "during")) == written[0]
            assert r.execute_command("LLEN", "during-list") == written[0]
            assert r.execute_command("DBSIZE") == g.execute_command("DBSIZE")
        finally:
            replica.stop()
            g.close()


def test_goblin_replica_of_goblin_primary_and_promotion(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        sync_form(p)
        write_load(p, 0, n=50)
        with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port)).start() as goblin:
            g = RespClient(port=goblin.port, socket_timeout=20)
            write_load(p, 1, n=50)
            wait_until(lambda: in_step(p, g), what="the goblin replica's sync")
            assert p.execute_command("WAIT", 1, 5000) == 1
            # the replica's link killed on its side: PSYNC continues
            g.execute_command("CLIENT", "KILL", "TYPE", "master")
            write_load(p, 2, n=50)
            wait_until(lambda: in_step(p, g), what="the partial resync")
            assert info(p, "stats")["sync_partial_ok"] == "1"
            g.close()
        p.close()


def test_published_messages_reach_the_replicas_subscribers_but_not_the_aof(tmp_path):
    """PUBLISH and SPUBLISH on a goblin primary reach subscribers on its replicas (redis-server and
    goblin), in order, from a plain call, a MULTI and a script, as Redis propagates them to
    replicas; the append-only file does not record them (Redis: replication only)."""
    data = tmp_path / "data"
    data.mkdir()
    with GoblinServer(tmp_path / "p", "--appendonly", "yes", "--dir", str(data)).start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        sync_form(p)
        replica = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(primary.port))
        try:
            with GoblinServer(tmp_path / "g", "--replicaof", "127.0.0.1", str(primary.port)).start() as goblin:
                g = RespClient(port=goblin.port, socket_timeout=20)
                wait_until(lambda: in_step(p, replica.client) and in_step(p, g), what="both replicas' syncs")
                subscribers = [raw_connection(port) for port in (replica.port, goblin.port)]
                for sub in subscribers:
                    assert sub.request("SUBSCRIBE", "news") == b"*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n"
                    assert sub.request("SSUBSCRIBE", "shard") == b"*3\r\n$10\r\nssubscribe\r\n$5\r\nshard\r\n:1\r\n"
                assert p.execute_command("PUBLISH", "news", "plain") == 0       # no subscriber on the primary
                p.execute_command("MULTI")
                p.execute_command("SET", "k", "v")
                p.execute_command("PUBLISH", "news", "in-multi")
                p.execute_command("EXEC")
                p.execute_command("EVAL", "return redis.call('PUBLISH', 'news', ARGV[1])", 0, "scripted")
                p.execute_command("SPUBLISH", "shard", "sharded")
                for sub in subscribers:
                    got = [sub.read_reply() for _ in range(4)]
                    # (a message is an array of three bulk strings: the bytes of a command of three words)
                    assert got == [encode_command("message", "news", "plain"),
                                   encode_command("message", "news", "in-multi"),
                                   encode_command("message", "news", "scripted"),
                                   encode_command("smessage", "shard", "sharded")]
                    sub.close()
                wait_until(lambda: in_step(p, replica.client) and in_step(p, g), what="the replicas in step")
                assert replica.client.execute_command("GET", "k") == b"v"
                g.close()
        finally:
            replica.stop()
        p.execute_command("SET", "last", "1")
        aof = b"".join(path.read_bytes() for path in data.rglob("*.aof*") if path.is_file())
        assert b"last" in aof and b"PUBLISH" not in aof.upper()
        p.close()


def test_replconf_ip_address_takes_a_host_name_as_redis(tmp_path):
    """A replica announces up to 255 bytes (replica-announce-ip may be a host name); longer is
    refused with Redis's text. Same replies from redis-server 7.0, side by side."""
    name = "replica-" + "h" * 239 + ".example"         # 255 bytes
    replies = []
    with GoblinServer(tmp_path / "g").start() as goblin:
        redis = Redis(tmp_path / "r")
        try:
            for port in (goblin.port, redis.port):
                with raw_connection(port) as conn:
                    replies.append((conn.request("REPLCONF", "ip-address", name),
                                    conn.request("REPLCONF", "ip-address", name + "x")))
        finally:
            redis.stop()
    assert replies[0] == replies[1] == (
        b"+OK\r\n", b"-ERR REPLCONF ip-address provided by replica instance is too long: 256 bytes\r\n")


def test_a_promoted_goblin_replica_continues_the_old_primarys_replicas(tmp_path):
    """REPLICAOF NO ONE keeps the old history as replid2: a redis-server replica that stood at the
    same offset moves to the promoted goblin with +CONTINUE, no full sync."""
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        sync_form(p)
        write_load(p, 0, n=30)
        with GoblinServer(tmp_path / "a", "--replicaof", "127.0.0.1", str(primary.port)).start() as promoted:
            a = RespClient(port=promoted.port, socket_timeout=20)
            other = Redis(tmp_path / "b", "--replicaof", "127.0.0.1", str(primary.port))
            try:
                b = other.client
                write_load(p, 1, n=30)
                wait_until(lambda: in_step(p, a) and in_step(p, b), what="both replicas in step")
                a.execute_command("REPLICAOF", "NO", "ONE")
                fields = info(a)
                assert fields["master_replid2"] == info(p)["master_replid"]
                b.execute_command("REPLICAOF", "127.0.0.1", promoted.port)
                write_load(a, 2, n=30)
                wait_until(lambda: in_step(a, b), what="the old primary's replica to follow the promoted one")
                stats = info(a, "stats")
                assert stats["sync_partial_ok"] == "1" and stats["sync_full"] == "0"
            finally:
                other.stop()
            a.close()
        p.close()


def test_min_replicas_to_write_and_wait_without_replicas(tmp_path):
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port)
        assert g.execute_command("WAIT", 0, 0) == 0
        assert g.execute_command("WAIT", 1, 50) == 0          # nobody to acknowledge: the timeout
        g.execute_command("CONFIG", "SET", "min-replicas-to-write", "1")
        with pytest.raises(ResponseError, match="^NOREPLICAS Not enough good replicas to write.$"):
            g.execute_command("SET", "k", "v")
        assert g.execute_command("GET", "k") is None            # reads still served
        assert info(g)["min_slaves_good_slaves"] == "0"
        g.execute_command("CONFIG", "SET", "min-replicas-to-write", "0")
        g.execute_command("SET", "k", "v")
        with pytest.raises(ResponseError, match="timeout is negative"):
            g.execute_command("WAIT", 1, -1)
        g.close()


def test_bad_replicas_do_not_hurt_the_primary(tmp_path):
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port)
        sync_form(g)
        g.execute_command("MSET", *[x for i in range(50_000) for x in (f"k{i}", "v" * 50)])
        digest = g.execute_command("DEBUG", "DIGEST")
        # a replica that asks for a sync and dies before reading the payload
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", goblin.port))
            s.sendall(b"PSYNC ? -1\r\n")
            assert s.recv(64).startswith(b"+FULLRESYNC ")
            s.close()
        # a replica that sends garbage after its sync request: closed, nothing else harmed
        s = socket.create_connection(("127.0.0.1", goblin.port))
        s.sendall(b"SYNC\r\n")
        s.sendall(b"SET k1 garbage\r\n*zz\r\n")
        s.settimeout(20)
        while s.recv(65536):
            pass                                               # until goblin closes it
        s.close()
        assert g.execute_command("DEBUG", "DIGEST") == digest
        assert g.execute_command("GET", "k1") == b"v" * 50
        wait_until(lambda: info(g)["connected_slaves"] == "0", what="the bad replicas to be gone")
        # a well-behaved replica still syncs afterwards
        replica = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(goblin.port))
        try:
            wait_until(lambda: in_step(g, replica.client), what="a good replica after the bad ones")
        finally:
            replica.stop()
        g.close()


def test_a_replica_that_does_not_read_is_dropped_at_its_output_limit(tmp_path):
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port, socket_timeout=20)
        g.execute_command("CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 0 0")
        g.execute_command("MSET", *[x for i in range(20_000) for x in (f"k{i}", "v" * 50)])
        s = socket.create_connection(("127.0.0.1", goblin.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(b"PSYNC ? -1\r\n")                        # and never reads
        wait_until(lambda: info(g)["connected_slaves"] == "1", what="the replica")
        value = "x" * 10_000
        deadline = time.monotonic() + 20
        while info(g)["connected_slaves"] != "0":              # the writes pile up for it
            assert time.monotonic() < deadline, "the replica was never dropped"
            g.execute_command("MSET", *[x for i in range(20) for x in (f"big{i}", value)])
        assert g.execute_command("GET", "k7") == b"v" * 50     # the primary serves on
        s.close()
        g.close()


def test_redis_cli_rdb_against_goblin(tmp_path):
    cli, check = shutil.which("redis-cli"), shutil.which("redis-check-rdb")
    if not cli or not check:
        pytest.fail("redis-tools is not installed (redis-cli, redis-check-rdb)")
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port)
        sync_form(g)
        write_load(g, 0, n=50)
        out = tmp_path / "dump.rdb"
        done = subprocess.run([cli, "-p", str(goblin.port), "--rdb", str(out)], capture_output=True, timeout=30)
        assert done.returncode == 0, done.stderr
        checked = subprocess.run([check, str(out)], capture_output=True, timeout=30)
        assert checked.returncode == 0 and b"RDB looks OK" in checked.stdout, checked.stdout
        # and redis-server loads it to the same data
        (tmp_path / "r").mkdir()
        shutil.copy(out, tmp_path / "r" / "dump.rdb")
        r = Redis(tmp_path / "r", "--dbfilename", "dump.rdb")
        try:
            assert r.client.execute_command("DEBUG", "DIGEST") == g.execute_command("DEBUG", "DIGEST")
        finally:
            r.stop()
        assert info(g)["connected_slaves"] == "0"
        g.close()


def test_every_write_scenario_reaches_a_redis_replica(tmp_path):
    """The stream a redis-server replica applies is the one the AOF gets: every write command's
    scenario (write_scenarios.py, those redis-server 7.0 runs) on goblin ends with the replica's
    DEBUG DIGEST equal to goblin's."""
    from write_scenarios import SCENARIOS, DumpOf, bulk_payload, with_prefix
    from resp_wire import raw_connection
    with GoblinServer(tmp_path / "g").start() as goblin:
        g = RespClient(port=goblin.port, socket_timeout=20)
        sync_form(g)
        replica = Redis(tmp_path / "r", "--replicaof", "127.0.0.1", str(goblin.port))
        try:
            r = replica.client
            wait_until(lambda: info(r).get("master_link_status") == "up", what="the sync")
            conn = raw_connection(goblin.port)
            for command, scenario in sorted(SCENARIOS.items()):
                if scenario.reference != "redis" or scenario.isolated:
                    continue
                for step in scenario.steps:
                    # RESTORE's payload is goblin's DUMP, Redis's format: the replica takes it
                    argv = [bulk_payload(conn.request("DUMP", a.key)) if isinstance(a, DumpOf) else a
                            for a in with_prefix(step, f"{command}:")]
                    conn.request(*argv)
            conn.close()
            wait_until(lambda: in_step(g, r), timeout=30, what="the replica to apply every scenario")
        finally:
            replica.stop()
            g.close()
