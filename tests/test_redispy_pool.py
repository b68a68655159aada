"""redis-py over the ring (goblin_ring.redispy): the same redis-py calls through two redis-py
pools — RingConnectionPool to goblin, and redis-py's own Unix-socket pool to redis-server —
give equal results; then what libraries lean on: Lock, pipeline(transaction=True) with WATCH,
PubSub, threads and fork."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading

import pytest
import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError, WatchError

from goblin_ring.redispy import RingConnection, RingConnectionPool, from_url
from servers import wait_for_line


@pytest.fixture(scope="module")
def redis_socket(tmp_path_factory):
    """A redis-server on a Unix socket only: the baseline every ring result is compared with."""
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is not installed; .ci/run installs it (apt-get install redis-server)")
    directory = tmp_path_factory.mktemp("redis-uds")
    path = directory / "redis.sock"
    process = subprocess.Popen(
        ["redis-server", "--port", "0", "--unixsocket", str(path), "--unixsocketperm", "700", "--save", "",
         "--appendonly", "no", "--dir", str(directory)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_line(process, process.stdout, "ready to accept connections at")
        yield str(path)
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()


def _ring_pool(goblin, **options) -> RingConnectionPool:
    return RingConnectionPool(name=goblin.name, runtime_dir=str(goblin.runtime_dir), socket_timeout=10.0, **options)


@pytest.fixture(params=[False, True], ids=["bytes", "decoded"])
def both(request, goblin, redis_socket):
    """(ring, socket): redis.Redis over each pool, both flushed; RESP2 on both sides."""
    decode = request.param
    ring = redis.Redis(connection_pool=_ring_pool(goblin, decode_responses=decode))
    uds = redis.Redis(unix_socket_path=redis_socket, protocol=2, decode_responses=decode, socket_timeout=10.0)
    ring.flushall()
    uds.flushall()
    yield ring, uds
    ring.close()
    ring.connection_pool.disconnect()
    uds.close()


def _strings(r):
    return [r.set("s", "v"), r.get("s"), r.set("s", "w", nx=True), r.set("n", 10, ex=100), r.incr("n"),
            r.incrby("n", 5), r.decr("n"), r.append("s", "xyz"), r.strlen("s"), r.getrange("s", 1, 2),
            r.mset({"a": 1, "b": 2}), r.mget("a", "b", "missing"), r.setnx("a", 3), r.getset("a", 9),
            r.incrbyfloat("f", 1.5), r.get("missing"), r.exists("a", "b", "missing"), r.ttl("n") > 0,
            r.ttl("s"), r.getdel("b"), r.type("a")]


def _lists(r):
    return [r.rpush("l", *"abcde"), r.lpush("l", "z"), r.lrange("l", 0, -1), r.lindex("l", 2), r.llen("l"),
            r.lset("l", 0, "y"), r.lrem("l", 1, "c"), r.ltrim("l", 0, 3), r.lpop("l"), r.rpop("l", 2),
            r.lrange("l", 0, -1), r.linsert("l", "before", "b", "q"), r.lpos("l", "b"),
            r.lmove("l", "l2", "LEFT", "RIGHT"), r.rpoplpush("l2", "l"), r.lrange("l", 0, -1),
            r.blpop(["empty", "l"], 1), r.brpop("empty", 1)]


def _hashes(r):
    return [r.hset("h", mapping={"a": 1, "b": "two"}), r.hset("h", "c", 3), r.hget("h", "a"),
            sorted(r.hgetall("h").items()), r.hmget("h", ["a", "x"]), r.hincrby("h", "a", 5),
            r.hincrbyfloat("h", "c", 0.5), r.hexists("h", "b"), r.hdel("h", "b", "x"), r.hlen("h"),
            sorted(r.hkeys("h")), sorted(r.hvals("h")), r.hsetnx("h", "a", 0), r.hstrlen("h", "c")]


def _sets(r):
    return [r.sadd("s1", "a", "b", "c"), r.sadd("s2", "b", "c", "d"), sorted(r.smembers("s1")),
            r.sismember("s1", "a"), r.smismember("s1", ["a", "z"]), r.scard("s1"), sorted(r.sinter("s1", "s2")),
            sorted(r.sunion("s1", "s2")), sorted(r.sdiff("s1", "s2")), r.srem("s1", "a", "z"),
            r.smove("s1", "s2", "b"), sorted(r.smembers("s2")), r.sinterstore("s3", ["s1", "s2"])]


def _zsets(r):
    return [r.zadd("z", {"a": 1, "b": 2.5, "c": 3}), r.zadd("z", {"a": 5}, xx=True, ch=True),
            r.zrange("z", 0, -1), r.zrange("z", 0, -1, withscores=True), r.zrevrange("z", 0, 1, withscores=True),
            r.zscore("z", "b"), r.zincrby("z", 2, "b"), r.zrank("z", "c"), r.zrevrank("z", "c"), r.zcard("z"),
            r.zcount("z", 2, 10), r.zrangebyscore("z", 3, "+inf", withscores=True), r.zrem("z", "c"),
            r.zpopmin("z"), r.zpopmax("z"), r.zadd("z2", {"x": 1}), r.bzpopmin(["z", "z2"], 1),
            r.zmscore("z", ["a", "q"])]


def _keys(r):
    r.mset({"k1": 1, "k2": 2, "other": 3})
    return [sorted(r.keys("k*")), sorted(r.scan_iter("k*")), r.delete("k1", "nope"), r.expire("k2", 100),
            r.ttl("k2"), r.persist("k2"), r.ttl("k2"), r.rename("k2", "k3"), r.exists("k3"),
            r.type("k3"), r.dbsize(), r.copy("k3", "k4"), r.get("k4"), r.unlink("k4"), r.echo("hi"), r.ping()]


def _pipelines(r):
    with r.pipeline(transaction=False) as pipe:
        pipe.set("p", 1).incr("p").get("p").rpush("pl", "a", "b").lrange("pl", 0, -1).hset("ph", "f", "v")
        plain = pipe.execute()
    with r.pipeline() as pipe:
        pipe.incr("p").get("p").lpush("p", "x").incr("p")
        errors = [type(v).__name__ if isinstance(v, Exception) else v for v in pipe.execute(raise_on_error=False)]
    with r.pipeline() as pipe:
        for i in range(3000):                   # more than a small ring holds in flight at once
            pipe.rpush("big", i)
        big = pipe.execute()
    return [plain, errors, big[-1], r.llen("big")]


def _errors(r):
    out = []
    r.set("str", "x")
    for call in (lambda: r.lpush("str", 1), lambda: r.incr("str"), lambda: r.execute_command("NOSUCHCOMMAND"),
                 lambda: r.hget("str", "f"), lambda: r.zadd("str", {"a": 1})):
        with pytest.raises(ResponseError) as caught:
            call()
        out.append((type(caught.value).__name__, str(caught.value).split()[0]))
    return out


@pytest.mark.parametrize("surface", [_strings, _lists, _hashes, _sets, _zsets, _keys, _pipelines, _errors],
                         ids=lambda f: f.__name__.strip("_"))
def test_the_same_redis_py_calls_give_the_same_results_over_the_ring_and_a_unix_socket(both, surface):
    ring, uds = both
    assert surface(ring) == surface(uds)


def test_a_watched_transaction_runs_and_a_touched_watch_raises_watch_error(both):
    results = []
    for r in both:
        r.set("balance", 10)
        with r.pipeline() as pipe:
            pipe.watch("balance")
            current = int(pipe.get("balance"))
            pipe.multi()
            pipe.set("balance", current - 3).get("balance")
            results.append(pipe.execute())
        with r.pipeline() as pipe:
            pipe.watch("balance")
            r.set("balance", 100)                # another connection touches the watched key
            pipe.multi()
            pipe.set("balance", 0)
            with pytest.raises(WatchError):
                pipe.execute()
        results.append(r.get("balance"))
        # redis-py's retrying helper: the function runs again until its watch holds
        results.append(r.transaction(lambda pipe: pipe.multi() or pipe.incr("balance"), "balance"))
    assert results[:3] == results[3:]


def test_a_lock_is_held_by_one_holder_at_a_time(both):
    for r in both:
        first = r.lock("resource", timeout=10)
        assert first.acquire(blocking=False) is True
        assert first.locked() and first.owned()
        second = r.lock("resource", timeout=10, blocking_timeout=0.05)
        assert second.acquire() is False
        assert r.pttl("resource") > 0


def test_a_lock_is_released_by_its_holder(goblin):
    r = redis.Redis(connection_pool=_ring_pool(goblin))
    try:
        lock = r.lock("released", timeout=10)
        assert lock.acquire(blocking=False)
        assert lock.extend(5) and r.pttl("released") > 10000
        assert lock.reacquire() and r.pttl("released") <= 10000
        lock.release()
        assert not lock.owned()
        assert r.lock("released").acquire(blocking=False)
    finally:
        r.delete("released")
        r.connection_pool.disconnect()


def _pubsub_session(r, publisher):
    p = r.pubsub()
    p.subscribe("news")
    p.psubscribe("n*")
    seen = [p.get_message(timeout=5), p.get_message(timeout=5)]
    publisher.publish("news", "first")
    publisher.publish("nope", "second")
    seen += [p.get_message(timeout=5) for _ in range(3)]
    seen.append(p.get_message(timeout=0.01))   # nothing more: None after the timeout
    p.unsubscribe("news")
    p.punsubscribe()
    seen += [p.get_message(timeout=5), p.get_message(timeout=5)]
    handled = []
    p.subscribe(**{"alerts": handled.append})
    p.get_message(timeout=5)
    publisher.publish("alerts", "handled")
    while not handled:
        p.get_message(timeout=5)
    p.close()
    return seen, handled


def test_pubsub_messages_and_confirmations_are_the_same_through_both_pools(both):
    ring, uds = both
    assert _pubsub_session(ring, ring) == _pubsub_session(uds, uds)


def test_pubsub_run_in_thread_gets_what_another_connection_publishes(goblin):
    r = redis.Redis(connection_pool=_ring_pool(goblin))
    p = r.pubsub(ignore_subscribe_messages=True)
    got: list = []
    all_in = threading.Event()

    def handler(message: dict) -> None:
        got.append(message["data"])
        if len(got) == 100:
            all_in.set()

    p.subscribe(feed=handler)
    worker = p.run_in_thread(sleep_time=0.5)
    try:
        while r.publish("feed", "first") == 0:    # until the subscription is in place
            pass
        for i in range(99):
            r.publish("feed", i)
        assert all_in.wait(10)
    finally:
        worker.stop()
        worker.join(5)
        p.close()
        r.connection_pool.disconnect()
    assert got[-99:] == [b"%d" % i for i in range(99)]


def test_blocking_pops_wait_for_another_connections_push(goblin):
    r = redis.Redis(connection_pool=_ring_pool(goblin))
    try:
        r.delete("jobs")
        got: list = []
        waiter = threading.Thread(target=lambda: got.append(r.blpop("jobs", 10)))
        waiter.start()
        while r.info("clients")["blocked_clients"] == 0:
            pass
        r.rpush("jobs", "work")
        waiter.join(10)
        assert got == [(b"jobs", b"work")]
        assert r.blpop("jobs", 0.05) is None
    finally:
        r.connection_pool.disconnect()


def test_threads_share_one_redis_over_the_ring_pool(goblin):
    r = redis.Redis(connection_pool=_ring_pool(goblin, max_connections=8))
    errors: list = []

    def work(worker: int) -> None:
        try:
            for i in range(2000):
                assert r.set(f"t{worker}", i) is True
                assert r.get(f"t{worker}") == b"%d" % i
                if i % 100 == 0:
                    with r.pipeline() as pipe:
                        assert pipe.incr("threads-counter").get(f"t{worker}").execute()[1] == b"%d" % i
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    r.delete("threads-counter")
    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert r.get("threads-counter") == b"160"
        assert len(r.connection_pool._available_connections) <= 8
    finally:
        r.connection_pool.disconnect()


def test_a_forked_child_gets_connections_of_its_own_and_the_parent_keeps_its(goblin):
    r = redis.Redis(connection_pool=_ring_pool(goblin))
    try:
        r.set("who", "parent")
        parent_id = r.client_id()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                ok = r.get("who") == b"parent" and r.client_id() != parent_id and r.incr("forks") >= 1
                status = 0 if ok else 2
            finally:
                os._exit(status)
        for i in range(200):
            assert r.set("parent-busy", i) and r.get("parent-busy") == b"%d" % i
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert r.client_id() == parent_id
        assert int(r.get("forks")) >= 1
    finally:
        r.delete("forks")
        r.connection_pool.disconnect()


def test_a_url_names_the_ring_and_the_connection_arguments(goblin):
    r = from_url(f"goblin+ring://{goblin.name}?runtime_dir={goblin.runtime_dir}&db=2&decode_responses=true"
                 "&client_name=web")
    try:
        r.set("in-db-2", "yes")
        assert r.get("in-db-2") == "yes"
        assert r.client_getname() == "web"
        assert r.connection_pool.connection_kwargs["db"] == 2
        assert isinstance(r.connection_pool.get_connection(), RingConnection)
    finally:
        r.flushdb()
        r.connection_pool.disconnect()
    with pytest.raises(ValueError):
        RingConnectionPool.from_url("redis://localhost")


def test_no_server_by_that_name_is_redis_pys_connection_error(goblin):
    r = redis.Redis(connection_pool=RingConnectionPool(name="no-such-server", runtime_dir=str(goblin.runtime_dir)))
    with pytest.raises(RedisConnectionError):
        r.ping()


def test_resp3_is_refused():
    with pytest.raises(RedisConnectionError):
        RingConnectionPool(name="x", protocol=3)


# ---- the asyncio twin: redis.asyncio.Redis over AsyncRingConnectionPool ----

async def _async_surface(r) -> list:
    await r.flushdb()
    out = [await r.set("s", "v"), await r.get("s"), await r.incr("n"), await r.rpush("l", "a", "b"),
           await r.lrange("l", 0, -1), await r.hset("h", mapping={"f": 1}), await r.hgetall("h"),
           await r.zadd("z", {"m": 2}), await r.zrange("z", 0, -1, withscores=True), await r.get("missing"),
           await r.blpop("empty", 0.05)]
    with pytest.raises(ResponseError):
        await r.lpush("s", 1)
    async with r.pipeline(transaction=False) as pipe:
        pipe.incr("n").get("n").lpush("s", 1)
        out.append([type(v).__name__ if isinstance(v, Exception) else v
                    for v in await pipe.execute(raise_on_error=False)])
    async with r.pipeline(transaction=True) as pipe:
        await pipe.watch("n")
        current = int(await pipe.get("n"))
        pipe.multi()
        pipe.set("n", current * 10)
        out.append(await pipe.execute())
    async with r.pipeline(transaction=True) as pipe:
        await pipe.watch("n")
        await r.set("n", 0)                      # another connection touches the watched key
        pipe.multi()
        pipe.set("n", 1)
        with pytest.raises(WatchError):
            await pipe.execute()
    out.append(sorted(await asyncio.gather(*(r.incr("many") for _ in range(100)))))
    p = r.pubsub()
    await p.subscribe("news")
    out.append(await p.get_message(timeout=5))
    await r.publish("news", "hello")
    out.append(await p.get_message(timeout=5))
    out.append(await p.get_message(timeout=0.01))
    await p.aclose()
    return out


def test_redis_asyncio_gives_the_same_results_over_the_ring_and_a_unix_socket(goblin, redis_socket):
    import redis.asyncio

    from goblin_ring.redispy_asyncio import AsyncRingConnectionPool

    async def both() -> tuple:
        ring = redis.asyncio.Redis(connection_pool=AsyncRingConnectionPool(
            name=goblin.name, runtime_dir=str(goblin.runtime_dir), socket_timeout=10.0))
        uds = redis.asyncio.Redis(unix_socket_path=redis_socket, protocol=2, socket_timeout=10.0)
        try:
            return await _async_surface(ring), await _async_surface(uds)
        finally:
            await ring.aclose()
            await uds.aclose()

    over_ring, over_socket = asyncio.run(both())
    assert over_ring == over_socket


def test_redis_asyncio_over_the_ring_does_not_block_the_loop_during_blpop(goblin):
    import redis.asyncio

    from goblin_ring.redispy_asyncio import AsyncRingConnectionPool

    async def run() -> tuple:
        r = redis.asyncio.Redis(connection_pool=AsyncRingConnectionPool(
            name=goblin.name, runtime_dir=str(goblin.runtime_dir), socket_timeout=10.0))
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.005)
                ticks += 1

        task = asyncio.create_task(ticker())
        try:
            await r.delete("async-jobs")
            waiter = asyncio.create_task(r.blpop("async-jobs", 10))
            while ticks < 20:                   # the loop runs while BLPOP is parked on the server
                await asyncio.sleep(0.005)
            await r.rpush("async-jobs", "job")
            return await waiter, ticks
        finally:
            task.cancel()
            await r.aclose()

    popped, ticks = asyncio.run(run())
    assert popped == (b"async-jobs", b"job") and ticks >= 20
