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


# ---- the C near-cache (native/python/near_cache.c) on its own: its check and take are
# ctypes stand-ins for gr_client_cache_check / gr_client_cache_take, so each status is exact ----

class _FakeClient:
    """A stand-in C client: check() answers `status`, take() hands over `pending` keys as
    gr_client_cache_take does ({u32 length, bytes} each; too small a buffer: the size needed)."""

    def __init__(self):
        import ctypes
        import struct
        self.status, self.pending, self.checks = 0, b"", 0
        self._struct = struct

        def check(_client):
            self.checks += 1
            return self.status

        def take(_client, buffer, capacity):
            length = len(self.pending)
            if length > capacity:
                return length
            if length:
                ctypes.memmove(buffer, self.pending, length)
            self.pending = b""
            self.status = 0
            return length

        self._check = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(check)
        self._take = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)(take)
        self.check_address = ctypes.cast(self._check, ctypes.c_void_p).value
        self.take_address = ctypes.cast(self._take, ctypes.c_void_p).value

    def keys(self, *keys: bytes) -> None:
        from goblin_ring._native import lib
        self.pending += b"".join(self._struct.pack("=I", len(k)) + k for k in keys)
        self.status = lib.GR_CLIENT_CACHE_KEYS


class _Owner:
    """The client side of the fallback: records (name, status) and answers from `server`."""

    def __init__(self):
        self.calls, self.server, self.cache = [], {}, None

    def slow(self, name, status):
        self.calls.append((name, status))
        if status == 0:
            key = name if type(name) is bytes else name.encode()
            value = self.server.get(key)
            self.cache.store(name, key, value)
            return value
        return ("elsewhere", status)


def _c_cache(max_size=3):
    import weakref
    from goblin_ring._native import lib, near_cache
    fake, owner = _FakeClient(), _Owner()
    owner.cache = near_cache.NearCache(1, fake.check_address, fake.take_address, lib.GR_CLIENT_CACHE_KEYS,
                                       lib.GR_CLIENT_CACHE_FLUSH, lib.GR_CLIENT_OTHER_THREAD, max_size,
                                       weakref.ref(owner), lambda ref, name, status: ref().slow(name, status))
    return fake, owner, owner.cache


def test_c_cache_lru_bound_order_and_live_stats():
    fake, owner, cache = _c_cache(max_size=3)
    owner.server = {b"k%d" % i: b"v%d" % i for i in range(10)}
    stats = cache.stats                                      # a live view
    for i in range(3):
        assert cache.get(b"k%d" % i) == b"v%d" % i
    assert len(cache) == 3 and stats.misses == 3 and stats.hits == 0
    assert cache.get(b"k0") == b"v0" and stats.hits == 1    # k0 is now the most recently used
    assert cache.get(b"k3") == b"v3"                         # evicts k1, the least recently used
    assert len(cache) == 3 and b"k1" not in cache and b"k0" in cache and b"k2" in cache
    calls = len(owner.calls)
    assert cache.get(b"k1") == b"v1" and len(owner.calls) == calls + 1   # a miss again
    assert cache.max_size == 3 and fake.checks == stats.hits + stats.misses
    assert repr(stats) == f"CacheStats(hits=1, misses=5, invalidations=0, flushes=0)"
    cache.store(b"k1", b"k1", b"replaced")                   # a store over an entry replaces it
    assert cache.get(b"k1") == b"replaced" and len(cache) == 3


def test_c_cache_invalidations_flushes_and_statuses():
    from goblin_ring._native import lib, near_cache
    fake, owner, cache = _c_cache(max_size=100)
    owner.server = {b"a": b"1", b"b": b"2", b"long" * 100: b"3"}
    assert cache.get(b"a") == b"1" and cache.get("a") == b"1"          # bytes and str names: two entries
    cache.store((b"STRLEN", b"a"), b"a", 1)
    cache.store((b"LRANGE", b"b", b"0", b"-1"), b"b", [b"x"])
    assert cache.get(b"b") == b"2" and cache.get(b"long" * 100) == b"3"
    assert len(cache) == 6
    got = cache.lookup((b"LRANGE", b"b", b"0", b"-1"))
    got.append(b"caller's")                                  # a cached list is not shared with callers
    assert cache.lookup((b"LRANGE", b"b", b"0", b"-1")) == [b"x"]
    fake.keys(b"a", b"nothing cached", b"long" * 100)        # 3 keys, more than 256 bytes: the buffer grows
    assert cache.lookup((b"LRANGE", b"b", b"0", b"-1")) == [b"x"]   # applied in the check, before the lookup
    assert len(cache) == 2 and b"a" not in cache and "a" not in cache and (b"STRLEN", b"a") not in cache
    assert cache.stats.invalidations == 3 and fake.pending == b""
    fake.status = lib.GR_CLIENT_CACHE_FLUSH                  # a flushAll, or the epoch moved
    assert cache.lookup(b"b") is near_cache.MISS and len(cache) == 0 and cache.stats.flushes == 1
    assert cache.get(b"b") == b"2" and len(cache) == 1
    fake.status = lib.GR_CLIENT_OTHER_THREAD                 # another thread's call: this cache stays
    assert cache.get(b"b") == ("elsewhere", lib.GR_CLIENT_OTHER_THREAD) and len(cache) == 1
    assert cache.lookup(b"b") is near_cache.ELSEWHERE and cache.status == lib.GR_CLIENT_OTHER_THREAD
    for status in (lib.GR_CLIENT_FORKED, lib.GR_CLIENT_PEER_GONE):   # anything else: everything goes
        cache.store(b"b", b"b", b"2")
        fake.status = status
        assert cache.get(b"b") == ("elsewhere", status) and len(cache) == 0
    fake.status = 0
    assert cache.get(5) == ("elsewhere", near_cache.NAME)    # not bytes or str: Python encodes it
    cache.bypass = True
    assert cache.get(b"b") == ("elsewhere", near_cache.BYPASS)
    cache.bypass = False
    cache.store(b"b", b"b", b"2")
    cache.clear()
    assert len(cache) == 0 and cache.stats.flushes == 3      # clear() is the user's: not a flush
    cache.store(b"b", b"b", b"2")
    checks = fake.checks
    cache.detach()                                           # the C client goes: never checked again
    assert not cache.attached and len(cache) == 0
    assert cache.get(b"b") == ("elsewhere", near_cache.DETACHED) and fake.checks == checks
    with pytest.raises(TypeError):
        cache.store(b"x", "not bytes", 1)


# ---- the C near-cache through the client ----

def test_lru_stats_and_clear_through_the_client(goblin):
    r = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, cache_config=CacheConfig(max_size=3))
    w = plain(goblin)
    try:
        for i in range(5):
            w.set(f"lru{i}", i)
        stats = r.cache.stats
        for i in range(3):
            assert r.get(f"lru{i}") == str(i).encode()
        assert r.get("lru0") == b"0" and stats.hits == 1 and stats.misses == 3   # lru0: most recently used
        assert r.get("lru3") == b"3"                                             # lru1 goes
        assert r.get("lru0") == b"0" and r.get("lru2") == b"2" and stats.hits == 3
        assert r.get("lru1") == b"1" and stats.misses == 5 and len(r.cache) == 3
        w.set("lru1", "new")
        assert r.get("lru1") == b"new" and stats.invalidations >= 1
        r.cache.clear()
        assert len(r.cache) == 0
        assert r.get("lru1") == b"new" and stats.misses == 7 and r.get("lru1") == b"new" and stats.hits == 4
        w.set("lru1", "after clear")                         # tracking goes on after clear()
        assert r.get("lru1") == b"after clear"
    finally:
        r.close()
        w.close()


def test_every_name_type_and_spelling_is_invalidated(goblin):
    r = cached(goblin)
    w = plain(goblin)
    try:
        w.set("7", "seven")
        names = ["7", b"7", 7, memoryview(b"7"), bytearray(b"7")]
        for name in names:
            assert r.get(name) == b"seven" and r.get(name) == b"seven"
        assert r.execute_command("GET", b"7") == b"seven" and r.strlen("7") == 5
        hits = r.cache.stats.hits
        assert r.execute_command("GET", "7") == b"seven" and r.cache.stats.hits == hits + 1   # get()'s entry
        w.set("7", "SEVEN!")
        for name in names:
            assert r.get(name) == b"SEVEN!"
        assert r.execute_command("GET", "7") == b"SEVEN!" and r.strlen("7") == 6
        r.set(b"\xff\xfe", "binary")
        assert r.get(b"\xff\xfe") == b"binary" and r.get("é") is None
        w.set("é", "accent")                                 # a str name's key is its UTF-8
        assert r.get("é") == b"accent"
    finally:
        r.close()
        w.close()


def test_a_get_method_held_by_another_thread_goes_to_that_threads_session(goblin):
    client = cached(goblin)
    get = client.get                                         # held, as a loop does
    try:
        client.set("held", "1")
        assert get("held") == b"1" and get("held") == b"1"
        owner_entries = len(client.cache)
        results: list = []

        def other() -> None:
            try:
                results.append(get("held"))                  # that thread's own session and cache
                results.append(get("held"))
                client.set("held", "2")
                results.append(get("held"))
                results.append(client._threads.session.cache.stats.hits)
            except Exception as error:  # noqa: BLE001
                results.append(error)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(30)
        assert results == [b"1", b"1", b"2", 1]
        assert len(client.cache) == owner_entries
        assert get("held") == b"2"                           # the owner's cache heard the thread's write
    finally:
        client.close()
    with pytest.raises(GoblinConnectionError):
        get("held")                                          # closed: the held method says so too
    with pytest.raises(GoblinConnectionError):
        client.get("held")
    assert not client.cache.attached and len(client.cache) == 0


def test_a_get_method_held_past_its_client(goblin):
    import gc
    get = cached(goblin).get                                 # the client itself is dropped: closed
    gc.collect()
    with pytest.raises(GoblinConnectionError):
        get("anything")


def test_fork_with_a_held_get_method(goblin):
    client = cached(goblin)
    get = client.get
    client.set("fork-held", "parent")
    assert get("fork-held") == b"parent" and get("fork-held") == b"parent"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                             # the child: the parent's cache is never answered from
        code = 1
        try:
            parent_cache = client.cache
            with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as writer:
                writer.set("fork-held", "child saw")
            first = get("fork-held")                         # the held method: a fresh session of the child's
            code = 0 if (first == b"child saw" and client.cache is not parent_cache and not parent_cache.attached
                         and get("fork-held") == b"child saw" and client.cache.stats.hits == 1) else 2
        finally:
            os.write(write_end, bytes([code]))
            os._exit(code)
    try:
        assert os.read(read_end, 1) == b"\x00"
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert get("fork-held") == b"child saw"              # the parent heard the child's write too
    finally:
        client.close()
        os.close(read_end)
        os.close(write_end)
