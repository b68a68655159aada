"""goblin_ring.asyncio.RingClient: many tasks on one session with replies matched in order, a
cancelled task leaving the session usable, the loop kept free during a blocking pop, pipelines
and transactions, Pub/Sub."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from goblin_ring import ConnectionError, ResponseError, WatchError
from goblin_ring.asyncio import RingClient


def _run(goblin, body):
    async def main():
        async with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0) as client:
            await client.flushall()
            return await body(client)
    return asyncio.run(main())


def test_a_thousand_concurrent_tasks_each_get_their_own_replies(goblin):
    async def body(client):
        async def task(n):
            assert await client.set(f"k{n}", n) is True
            assert await client.get(f"k{n}") == b"%d" % n
            assert await client.rpush("shared", n) >= 1
            assert await client.incr("counter") >= 1
            return n
        results = await asyncio.gather(*(task(n) for n in range(1000)))
        assert results == list(range(1000))
        assert await client.get("counter") == b"1000"
        assert sorted(int(v) for v in await client.lrange("shared", 0, -1)) == list(range(1000))
    _run(goblin, body)


def test_errors_are_raised_in_the_task_that_sent_the_command(goblin):
    async def body(client):
        await client.rpush("a-list", "x")
        results = await asyncio.gather(client.get("a-list"), client.llen("a-list"), return_exceptions=True)
        assert isinstance(results[0], ResponseError) and "WRONGTYPE" in str(results[0])
        assert results[1] == 1
    _run(goblin, body)


def test_a_task_cancelled_mid_request_leaves_the_session_usable(goblin):
    async def body(client):
        await client.set("v", "1")
        os.kill(goblin.pid, signal.SIGSTOP)    # no reply can come: every request stays in flight
        try:
            tasks = [asyncio.ensure_future(client.get("v")) for _ in range(50)]
            await asyncio.sleep(0)             # every request sent
            assert not any(task.done() for task in tasks)
            for task in tasks[::2]:
                task.cancel()
        finally:
            os.kill(goblin.pid, signal.SIGCONT)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results[::2])
        assert results[1::2] == [b"1"] * 25
        for i in range(20):
            assert await client.set("v", i) is True
            assert await client.get("v") == b"%d" % i
        popper = asyncio.ensure_future(client.blpop("never", 0))
        await asyncio.sleep(0.05)
        popper.cancel()
        with pytest.raises(asyncio.CancelledError):
            await popper
        assert await client.rpush("never", "x") == 1      # the cancelled BLPOP may take it, or not
        assert await client.ping() is True
    _run(goblin, body)


def test_the_loop_keeps_running_during_a_blocking_pop(goblin):
    async def body(client):
        ticks = 0

        async def timer():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.ensure_future(timer())
        popper = asyncio.ensure_future(client.blpop("queue", 0))
        while ticks < 10:                       # the timer fires while BLPOP waits ...
            await asyncio.sleep(0.01)
        assert not popper.done()
        assert await client.set("meanwhile", "ok") is True     # ... and other commands are answered
        assert await client.rpush("queue", "job") == 1
        assert await asyncio.wait_for(popper, 10) == (b"queue", b"job")
        ticker.cancel()
    _run(goblin, body)


def test_pipelines_and_watched_transactions(goblin):
    async def body(client):
        async with client.pipeline(transaction=False) as pipe:
            for i in range(300):
                pipe.rpush("p", i).llen("p")
            results = await pipe.execute()
        assert results[1::2] == list(range(1, 301))
        async with client.pipeline() as pipe:
            pipe.set("t", 1).incr("t").get("t")
            assert await pipe.execute() == [True, 2, b"2"]
        async with client.pipeline() as pipe:
            await pipe.watch("t")
            await client.set("t", "changed")   # another session's write
            pipe.set("t", "mine")
            with pytest.raises(WatchError):
                await pipe.execute()
        assert await client.get("t") == b"changed"
    _run(goblin, body)


def test_pubsub_messages_arrive_without_spinning_the_loop(goblin):
    async def body(client):
        pubsub = client.pubsub()
        await pubsub.subscribe("news")
        assert (await pubsub.get_message(timeout=5))["type"] == "subscribe"
        assert await pubsub.get_message(timeout=0.05) is None

        async def publish_later():
            await asyncio.sleep(0.05)
            await client.publish("news", "hello")

        publisher = asyncio.ensure_future(publish_later())
        message = await pubsub.get_message(timeout=5)
        assert message["type"] == "message" and message["data"] == b"hello"
        await publisher
        await pubsub.aclose()
    _run(goblin, body)


def test_a_closed_client_raises_connection_error(goblin):
    async def main():
        client = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir)
        assert await client.ping() is True
        await client.aclose()
        with pytest.raises(ConnectionError):
            await client.get("k")
    asyncio.run(main())
