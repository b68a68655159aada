"""test_replication_chained.py — chained replication (issue 35): a goblin replica serves SYNC/PSYNC
to replicas of its own (server/primary.c on a replica, fed by server/replica.c's proxy of the
stream it applies).

A goblin primary P, a goblin replica A of P, and a redis-server 7.0 replica B and a goblin replica
C of A: B and C end with P's data, P's replication id and P's offset (the stream is proxied byte
for byte, MULTI/EXEC, scripts and SELECT included); a link drop below A is a +CONTINUE from A's
backlog; a link drop above A leaves B and C connected; a full resync of A (P restarted: a new
history) makes B and C resync from A.
"""

from __future__ import annotations

from goblin_ring import RespClient
from servers import GoblinServer
from test_rdb_redis import Redis
from test_replication import info, wait_until
from test_replication_primary import in_step, sync_form, write_load


def same_history(*clients) -> bool:
    fields = [info(c) for c in clients]
    return len({(f["master_replid"], f["master_repl_offset"]) for f in fields}) == 1


def test_replicas_of_a_goblin_replica_follow_the_primary(tmp_path):
    with GoblinServer(tmp_path / "p").start() as primary:
        port = primary.port
        p = RespClient(port=port, socket_timeout=20)
        sync_form(p)
        write_load(p, 0, n=100)
        with GoblinServer(tmp_path / "a", "--replicaof", "127.0.0.1", str(port)).start() as middle:
            a = RespClient(port=middle.port, socket_timeout=20)
            sync_form(a)
            wait_until(lambda: in_step(p, a), what="A's sync")
            redis = Redis(tmp_path / "b", "--replicaof", "127.0.0.1", str(middle.port))
            try:
                with GoblinServer(tmp_path / "c", "--replicaof", "127.0.0.1", str(middle.port)).start() as leaf:
                    b, c = redis.client, RespClient(port=leaf.port, socket_timeout=20)
                    write_load(p, 1, n=100)
                    wait_until(lambda: in_step(p, b) and in_step(p, c), what="B and C through A")
                    assert same_history(p, a, b, c)
                    fields = info(a)
                    assert fields["role"] == "slave" and fields["connected_slaves"] == "2"
                    assert info(a, "stats")["sync_full"] == "2"             # what A served
                    assert b.execute_command("GET", "in-db-3") is None      # SELECT 3 went through as well
                    b.execute_command("SELECT", 3)
                    assert b.execute_command("GET", "in-db-3") == b"1"
                    b.execute_command("SELECT", 0)

                    # below A: the links dropped on A's side -> +CONTINUE from A's backlog
                    assert a.execute_command("CLIENT", "KILL", "TYPE", "replica") == 2
                    write_load(p, 2, n=100)
                    wait_until(lambda: in_step(p, b) and in_step(p, c), what="B and C after the drop")
                    stats = info(a, "stats")
                    assert stats["sync_partial_ok"] == "2" and stats["sync_full"] == "2"

                    # above A: A's link to P dropped; A continues, B and C stay connected
                    a.execute_command("CLIENT", "KILL", "TYPE", "master")
                    write_load(p, 3, n=100)
                    wait_until(lambda: in_step(p, a) and in_step(p, b) and in_step(p, c),
                               what="everyone after A's link drop")
                    assert info(p, "stats")["sync_partial_ok"] == "1"
                    assert info(a, "stats")["sync_full"] == "2"              # B and C were not resynced
                    assert same_history(p, a, b, c)

                    # P restarted (no persistence: a new, empty history): A resyncs in full, and so
                    # do B and C from A
                    p.close()
                    primary.stop()
                    restarted = GoblinServer(tmp_path / "p2", port=port).start()
                    try:
                        p = RespClient(port=port, socket_timeout=20)
                        sync_form(p)
                        p.execute_command("SET", "after-restart", "1")
                        wait_until(lambda: in_step(p, a) and in_step(p, b) and in_step(p, c), timeout=30,
                                   what="the new history down the chain")
                        assert b.execute_command("DBSIZE") == 1 and c.execute_command("GET", "after-restart") == b"1"
                        assert same_history(p, a, b, c)
                        assert info(a, "stats")["sync_full"] == "4"
                        p.close()
                    finally:
                        restarted.stop()
                    c.close()
            finally:
                redis.stop()
            a.close()


def test_promoting_the_middle_replica_keeps_its_replicas(tmp_path):
    """REPLICAOF NO ONE on A: its replicas keep following A with no full sync, and P's other
    replicas that move to A continue from A's backlog (replid2)."""
    with GoblinServer(tmp_path / "p").start() as primary:
        p = RespClient(port=primary.port, socket_timeout=20)
        sync_form(p)
        write_load(p, 0, n=50)
        with GoblinServer(tmp_path / "a", "--replicaof", "127.0.0.1", str(primary.port)).start() as middle:
            a = RespClient(port=middle.port, socket_timeout=20)
            sync_form(a)
            wait_until(lambda: in_step(p, a), what="A's sync")
            below = Redis(tmp_path / "b", "--replicaof", "127.0.0.1", str(middle.port))
            beside = Redis(tmp_path / "d", "--replicaof", "127.0.0.1", str(primary.port))
            try:
                b, d = below.client, beside.client
                write_load(p, 1, n=50)
                wait_until(lambda: in_step(p, b) and in_step(p, d), what="B below A and D beside it")
                a.execute_command("REPLICAOF", "NO", "ONE")
                d.execute_command("REPLICAOF", "127.0.0.1", middle.port)
                write_load(a, 2, n=50)
                wait_until(lambda: in_step(a, b) and in_step(a, d), what="B and D following the promoted A")
                stats = info(a, "stats")
                assert stats["sync_full"] == "1" and stats["sync_partial_ok"] == "1"   # B's sync; D continued
                assert info(a)["connected_slaves"] == "2"
            finally:
                below.stop()
                beside.stop()
            a.close()
        p.close()
