"""The ring near-cache: RingClient(cache_config=...) over CLIENT TRACKING's InvalidateMessages.

A second process writes (over RESP or the ring) and tells the reader each acknowledged write
through a pipe; the reader's next read through its cache must return it. Rounds:
GOBLIN_NEAR_CACHE_ROUNDS (default 3000; the issue's stress run is 100000). Also: a session that
dies with tracking on, a reply ring too full for invalidations (the epoch path), threads
sharing one cached client, and a fork after the client was made.
"""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from goblin_ring import CacheConfig, RespClient, RingClient
from goblin_ring.errors import ConnectionError as GoblinConnectionError

ROUNDS = int(os.environ.get("GOBLIN_NEAR_CACHE_ROUNDS", "3000"))
KEYS = 50


def cached(server, **options):
    return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0,
                      cache_config=CacheConfig(max_size=1000), **options)


def plain(server):
    return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)


def info(server) -> dict:
    with RespClient(port=server.port) as c:
        return c.info()


def test_cache_config_forms_and_the_allow_list(goblin):
    from redis.cache import CacheConfig as RedisPyCacheConfig
    r = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, cache_config=RedisPyCacheConfig(max_size=3))
    w = plain(goblin)
    try:
        w.flushall()
        assert r.cache.max_size == 3
        assert r.execute_command("CLIENT", "TRACKINGINFO")[1] == [b"on"]
        for i in range(5):
            w.set(f"k{i}", i)
            assert r.get(f"k{i}") == str(i).encode()
        assert len(r.cache) == 3                             # LRU bound
        assert r.get("k4") == b"4" and r.cache.stats.hits == 1
        w.hset("h", mapping={"a": "1", "b": "2"})
        assert r.hgetall("h") == {b"a": b"1", b"b": b"2"}
        assert r.hgetall("h") == {b"a": b"1", b"b": b"2"} and r.cache.stats.hits == 2
        w.hset("h", "a", "9")
        assert r.hget("h", "a") == b"9" and r.hgetall("h") == {b"a": b"9", b"b": b"2"}
        w.rpush("l", "x", "y")
        first = r.lrange("l", 0, -1)
        first.append(b"mutated by the caller")
        assert r.lrange("l", 0, -1) == [b"x", b"y"]          # a cached list is not shared with callers
        assert r.llen("l") == 2 and r.lindex("l", 1) == b"y"
        w.rpush("l", "z")
        assert r.lrange("l", 0, -1) == [b"x", b"y", b"z"] and r.llen("l") == 3 and r.lindex("l", -1) == b"z"
        assert r.get("missing") is None
        w.set("missing", "now")
        assert r.get("missing") == b"now"
        r.set("own", "1")
        assert r.get("own") == b"1"
        r.set("own", "2")                                    # its own write: read-your-writes
        assert r.get("own") == b"2"
        w.flushall()                                         # flushAll: everything goes
        assert r.get("own") is None and r.cache.stats.flushes >= 1
        r.cache.clear()
        assert len(r.cache) == 0
        with pytest.raises(ValueError):
            CacheConfig(max_size=0)
    finally:
        r.close()
        w.close()


def _writer(server_name, runtime_dir, port, transport, rounds, ready, acks):
    client = (RingClient(name=server_name, runtime_dir=runtime_dir, timeout=30.0) if transport == "ring"
              else RespClient(port=port, socket_timeout=30.0))
    for i in range(rounds):
        ready.recv()                                         # lockstep: the reader has read round i - 1
        client.set(f"key{i % KEYS}", i)                      # acknowledged when set() returns
        acks.send(i)
    ready.recv()
    acks.send(-1)
    client.close()


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_every_acknowledged_write_is_read_at_once_through_the_cache(goblin, transport):
    reader = cached(goblin)
    setup = plain(goblin)
    setup.flushall()
    for k in range(KEYS):
        setup.set(f"key{k}", -1)
    setup.close()
    context = multiprocessing.get_context("spawn")
    ready_parent, ready_child = context.Pipe()
    acks_child, acks_parent = context.Pipe()
    process = context.Process(target=_writer, args=(goblin.name, str(goblin.runtime_dir), goblin.port,
                                                     transport, ROUNDS, ready_child, acks_child))
    process.start()
    stale = 0
    try:
        for k in range(KEYS):                                # every key cached before the writes start
            assert reader.get(f"key{k}") == b"-1"
        while True:
            ready_parent.send(1)
            i = acks_parent.recv()
            if i < 0:
                break
            if reader.get(f"key{i % KEYS}") != str(i).encode():   # was cached: must be invalidated
                stale += 1
            if reader.get(f"key{i % KEYS}") != str(i).encode():   # and again: a hit now
                stale += 1
            reader.get(f"key{(i + 7) % KEYS}")                # another key, usually a hit
        process.join(30)
        assert process.exitcode == 0
        stats = reader.cache.stats
        assert stale == 0, f"{stale} stale reads in {ROUNDS} rounds"
        assert stats.hits >= ROUNDS and stats.invalidations + stats.flushes * KEYS >= ROUNDS, stats
    finally:
        if process.is_alive():
            process.kill()
        reader.close()


def test_a_session_that_dies_drops_its_cache(goblin):
    reader = cached(goblin)
    writer = plain(goblin)
    try:
        writer.set("d", "1")
        assert reader.get("d") == b"1" and reader.get("d") == b"1"
        assert len(reader.cache) == 1
        writer.execute_command("CLIENT", "KILL", "ID", str(reader.execute_command("CLIENT", "ID")))
        writer.set("d", "2")                                 # the dead session hears nothing of this
        with pytest.raises(GoblinConnectionError):
            reader.get("d")                                  # never the cached b"1"
        assert len(reader.cache) == 0
    finally:
        reader.close()
        writer.close()


def test_a_full_reply_ring_moves_the_epoch_and_the_cache_forgets_everything(goblin):
    reader = cached(goblin, ring_size=4096)                  # the smallest ring: a few hundred records
    writer = RespClient(port=goblin.port)
    try:
        epochs_before = int(info(goblin)["goblin_ring_invalidation_epochs"])
        keys = [f"full{i:04d}" for i in range(600)]
        for key in keys:
            writer.set(key, "old")
        for key in keys:
            assert reader.get(key) == b"old"
        with writer.pipeline(transaction=False) as pipe:
            for key in keys:                                 # 600 invalidations: more than the ring holds
                pipe.set(key, "new")
            pipe.execute()
        assert int(info(goblin)["goblin_ring_invalidation_epochs"]) > epochs_before
        assert [reader.get(key) for key in keys] == [b"new"] * len(keys)
        assert reader.cache.stats.flushes >= 1
        writer.set(keys[0], "newer")                         # and tracking goes on afterwards
        assert reader.get(keys[0]) == b"newer"
    finally:
        reader.close()
        writer.close()


def test_threads_sharing_one_cached_client(goblin):
    client = cached(goblin)
    client.set("shared", -1)
    threads_count, rounds = 4, 200
    barrier = threading.Barrier(threads_count)
    failures: list[str] = []

    def work(t: int) -> None:
        try:
            for i in range(rounds):
                if t == i % threads_count:
                    client.set("shared", i)                  # one thread writes ...
                barrier.wait(10)
                for _ in range(3):                           # ... every thread reads it, through its own cache
                    got = client.get("shared")
                    if got != str(i).encode():
                        failures.append(f"thread {t} round {i}: {got!r}")
                client.set(f"own{t}", i)
                if client.get(f"own{t}") != str(i).encode():
                    failures.append(f"thread {t} round {i}: own key")
                barrier.wait(10)
        except Exception as error:  # noqa: BLE001
            failures.append(f"thread {t}: {error!r}")
            barrier.abort()

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads_count)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    client.close()
    assert failures == []


def test_fork_after_making_the_cached_client(goblin):
    client = cached(goblin)
    client.set("forked", "parent")
    assert client.get("forked") == b"parent" and client.get("forked") == b"parent"   # cached in the parent
    to_child_read, to_child_write = os.pipe()
    from_child_read, from_child_write = os.pipe()
    pid = os.fork()
    if pid == 0:                                             # the child
        code = 1
        try:
            os.read(to_child_read, 1)                        # the parent has changed the key
            value = client.get("forked")                     # a fresh session, never the parent's cache
            again = client.get("forked")
            client.set("forked", "child")
            code = 0 if value == again == b"changed" and client.cache.stats.hits == 1 else 2
        finally:
            os.write(from_child_write, bytes([code]))
            os._exit(code)
    try:
        with RespClient(port=goblin.port) as other:
            other.set("forked", "changed")
        os.write(to_child_write, b"1")
        assert os.read(from_child_read, 1) == b"\x00"
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert client.get("forked") == b"child"              # the parent's cache heard the child's write
        assert client.cache.stats.invalidations >= 1
    finally:
        client.close()
        for fd in (to_child_read, to_child_write, from_child_read, from_child_write):
            os.close(fd)


def test_a_server_that_dies_is_noticed_before_a_cached_answer(tmp_path):
    # SIGKILL leaves no invalidation and no epoch bump: the control socket's close is the only
    # sign. A cached answer is given only while that socket was seen open within 1 ms, so after
    # the death the cache soon answers ConnectionError (and is dropped), never indefinitely.
    import time
    from servers import GoblinServer
    server = GoblinServer(tmp_path).start()
    reader = cached(server)
    try:
        RespClient(port=server.port).set("k", "v")
        assert reader.get("k") == b"v" and reader.get("k") == b"v"
        assert reader.cache.stats.hits == 1
        server.kill()
        deadline = time.monotonic() + 5
        with pytest.raises(GoblinConnectionError):
            while time.monotonic() < deadline:
                assert reader.get("k") == b"v"            # the old session's value, until noticed
        assert len(reader.cache) == 0
    finally:
        reader.close()
        server.stop()


def test_a_multi_typed_by_hand_queues_reads_instead_of_answering_them_from_the_cache(goblin):
    reader = cached(goblin)
    try:
        reader.set("m", "1")
        assert reader.get("m") == b"1" and reader.get("m") == b"1"       # now cached
        assert reader.execute_command("MULTI") in (b"OK", "OK", True)
        assert reader.get("m") in (b"QUEUED", "QUEUED")
        assert reader.execute_command("GET", "m") in (b"QUEUED", "QUEUED")
        assert reader.execute_command("EXEC") == [b"1", b"1"]
        hits = reader.cache.stats.hits
        assert reader.get("m") == b"1" and reader.cache.stats.hits == hits + 1   # cached again after EXEC
    finally:
        reader.close()
