"""The stream methods of RingClient and RespClient (goblin_ring/client/commands/streams.py) give
what redis-py gives against redis-server 7.0 for the same calls: the same names, arguments and
reply shapes ((id, {field: value}) entries, XREAD's [[stream, entries]], XPENDING's dicts,
XINFO's dicts with str keys, XAUTOCLAIM's [cursor, entries, deleted]). Times are masked."""

from __future__ import annotations

import pytest
import redis

from goblin_ring import DataError

TIME_KEYS = {"idle", "seen-time", "time_since_delivered", "radix-tree-keys", "radix-tree-nodes"}


def _masked_pending(items):
    """XINFO STREAM FULL's pending lists: [id, consumer, delivery time, count] / [id, time, count]."""
    return [[*p[:len(p) - 2], None, p[-1]] for p in items]


def masked(value):
    if isinstance(value, dict):
        return {k: (None if k in TIME_KEYS else _masked_pending(v) if k == "pending" and isinstance(v, list)
                    else masked(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(masked(v) for v in value)
    return value


def calls():
    return [
        ("xadd", ("s", {"a": "1"}), {"id": "1-1"}), ("xadd", ("s", {"b": "2", "c": "3"}), {"id": "2-1"}),
        ("xadd", ("s", {"d": "4"}), {"id": "3-1", "maxlen": 10, "approximate": False}),
        ("xadd", ("none", {"d": "4"}), {"id": "3-1", "nomkstream": True}),
        ("xlen", ("s",), {}), ("xrange", ("s",), {}), ("xrange", ("s", "2", "+"), {"count": 1}),
        ("xrevrange", ("s",), {}), ("xread", ({"s": "0", "none": "0"},), {"count": 2}),
        ("xread", ({"none": "$"},), {}),
        ("xgroup_create", ("s", "g", "0"), {}), ("xgroup_create", ("m", "g", "$"), {"mkstream": True}),
        ("xgroup_createconsumer", ("s", "g", "c0"), {}),
        ("xreadgroup", ("g", "c1", {"s": ">"}), {"count": 2}), ("xreadgroup", ("g", "c1", {"s": "0"}), {}),
        ("xreadgroup", ("g", "c2", {"s": ">"}), {"noack": True}),
        ("xpending", ("s", "g"), {}), ("xpending_range", ("s", "g", "-", "+", 10), {}),
        ("xpending_range", ("s", "g", "-", "+", 10), {"consumername": "c1"}),
        ("xclaim", ("s", "g", "c3", 0, ["1-1"]), {}), ("xclaim", ("s", "g", "c3", 0, ["2-1"]), {"justid": True}),
        ("xautoclaim", ("s", "g", "c4", 0), {}), ("xautoclaim", ("s", "g", "c4", 0), {"justid": True, "count": 1}),
        ("xack", ("s", "g", "1-1", "9-9"), {}), ("xinfo_groups", ("s",), {}), ("xinfo_consumers", ("s", "g"), {}),
        ("xinfo_stream", ("s",), {}), ("xinfo_stream", ("s",), {"full": True}),
        ("xgroup_setid", ("s", "g", "0"), {}), ("xgroup_delconsumer", ("s", "g", "c4"), {}),
        ("xdel", ("s", "1-1"), {}), ("xtrim", ("s",), {"maxlen": 1, "approximate": False}),
        ("xgroup_destroy", ("s", "g"), {}), ("xgroup_destroy", ("s", "g"), {}), ("xrange", ("s",), {}),
    ]


def test_stream_methods_return_what_redis_py_returns_against_redis(redis_server, client):
    reference = redis.Redis(port=redis_server.port)
    reference.flushall()
    client.flushall()
    try:
        for name, args, kwargs in calls():
            expected = masked(getattr(reference, name)(*args, **kwargs))
            got = masked(getattr(client, name)(*args, **kwargs))
            assert got == expected, f"{name}{args}{kwargs}"
    finally:
        reference.close()


def test_a_blocking_xreadgroup_method_returns_when_an_entry_arrives(client):
    client.flushall()
    client.xgroup_create("q", "g", "$", mkstream=True)
    assert client.xreadgroup("g", "w", {"q": ">"}, block=20) == []
    client.xadd("q", {"job": "1"}, id="5-0")
    assert client.xreadgroup("g", "w", {"q": ">"}, count=10, block=0) == [[b"q", [(b"5-0", {b"job": b"1"})]]]


def test_client_side_checks_are_redis_py_s(client):
    with pytest.raises(DataError):
        client.xadd("s", {})
    with pytest.raises(DataError):
        client.xadd("s", {"a": 1}, maxlen=1, minid="1")
    with pytest.raises(DataError):
        client.xclaim("s", "g", "c", -1, ["1-1"])


def test_the_asyncio_ring_client_serves_a_work_queue_while_a_reader_blocks(goblin):
    import asyncio

    from goblin_ring.asyncio import RingClient as AsyncRingClient

    async def main():
        async with AsyncRingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0) as client:
            await client.flushall()
            await client.xgroup_create("aq", "g", "$", mkstream=True)
            reader = asyncio.ensure_future(client.xreadgroup("g", "w", {"aq": ">"}, count=10, block=0))
            await asyncio.sleep(0.05)   # the blocked read holds its own session: others go on
            assert not reader.done()
            assert await client.xadd("aq", {"job": "1"}, id="7-0") == b"7-0"
            assert await reader == [[b"aq", [(b"7-0", {b"job": b"1"})]]]
            assert await client.xack("aq", "g", "7-0") == 1
            assert (await client.xpending("aq", "g"))["pending"] == 0

    asyncio.run(main())


def test_xadd_many_and_xack_many_are_one_call_each_and_agree_with_the_plain_commands(ring, resp):
    ring.flushall()
    ids = ring.xadd_many("b", [{"f": "v0"}, {b"f": b"v1", "g": 2}, [(b"h", b"x" * 300)]], ids=["1-1", "1-2", "5-0"])
    assert ids == [b"1-1", b"1-2", b"5-0"]
    generated = ring.xadd_many("b", [{"n": str(i)} for i in range(1000)])
    parsed = [tuple(map(int, i.split(b"-"))) for i in generated]
    assert len(parsed) == 1000 and parsed == sorted(set(parsed)) and parsed[0] > (5, 0)
    assert resp.xrange("b", "-", "5-0") == [(b"1-1", {b"f": b"v0"}), (b"1-2", {b"f": b"v1", b"g": b"2"}),
                                          (b"5-0", {b"h": b"x" * 300})]
    assert resp.xlen("b") == 1003
    resp.xgroup_create("b", "g", "0")
    delivered = resp.xreadgroup("g", "c", {"b": ">"})[0][1]
    assert ring.xack_many("b", "g", [entry_id for entry_id, _ in delivered] + [b"9-9"], per_message=100) == 1003
    assert resp.xpending("b", "g")["pending"] == 0
    assert ring.xadd_many("b", []) == []
    resp.set("s", "x")
    from goblin_ring import ResponseError
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        ring.xadd_many("s", [{"f": "v"}])
    with pytest.raises(ResponseError, match="equal or smaller"):
        ring.xadd_many("b", [{"f": "v"}], ids=["1-1"])
    assert ring.ping()
