"""Pub/Sub over the ring: RingClient.pubsub() (redis-py's PubSub shape) fed by typed PushMessages
in its session's reply ring. Publishers on either transport reach ring subscribers, in order;
patterns and shard channels; messages larger than a ring record; handlers, listen and
run_in_thread; get_messages draining a batch; pushes interleaved with a session's own replies;
a slow ring subscriber closed at the pubsub output-buffer limit while the publisher and other
sessions go on; and the same message dicts as redis-py's PubSub against redis-server."""

from __future__ import annotations

import threading
import time

import pytest
import redis

from goblin_ring import RespClient, RingClient
from goblin_ring.errors import ConnectionError as GoblinConnectionError
from servers import GoblinServer


def ring_client(server, **options) -> RingClient:
    return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0, **options)


def message(kind: str, channel: bytes, data, pattern: bytes | None = None) -> dict:
    return {"type": kind, "pattern": pattern, "channel": channel, "data": data}


@pytest.fixture
def publishers(goblin):
    """One publisher per transport."""
    ring, resp = ring_client(goblin), RespClient(port=goblin.port, socket_timeout=10.0)
    yield {"ring": ring, "resp": resp}
    ring.close()
    resp.close()


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_a_publisher_on_either_transport_reaches_a_ring_subscriber_in_order(goblin, publishers, transport):
    publisher = publishers[transport]
    with ring_client(goblin) as owner, owner.pubsub() as p:
        p.subscribe("news")
        assert p.get_message(timeout=5) == message("subscribe", b"news", 1)
        for i in range(500):
            assert publisher.publish("news", b"m%d" % i) == 1
        got = []
        while len(got) < 500:
            batch = p.get_messages(128, timeout=5)
            assert batch, f"only {len(got)} of 500 messages came"
            got += batch
        assert got == [message("message", b"news", b"m%d" % i) for i in range(500)]
        assert p.get_message(timeout=0) is None


def test_patterns_and_shard_channels_arrive_as_redis_py_dicts(goblin, publishers):
    publisher = publishers["ring"]
    with ring_client(goblin) as owner, owner.pubsub() as p:
        p.psubscribe("news.*")
        p.ssubscribe("orders")
        assert p.get_message(timeout=5) == message("psubscribe", b"news.*", 1)
        assert p.get_message(timeout=5) == message("ssubscribe", b"orders", 1)
        assert publisher.publish("news.today", "a") == 1
        assert publisher.publish("sports", "b") == 0
        assert publisher.spublish("orders", "c") == 1
        assert publisher.publish("orders", "not a shard message") == 0
        assert p.get_message(timeout=5) == message("pmessage", b"news.today", b"a", pattern=b"news.*")
        assert p.get_message(timeout=5) == message("smessage", b"orders", b"c")
        assert p.get_message(timeout=0.05) is None


def test_a_message_larger_than_a_ring_record_arrives_whole(goblin, publishers):
    with ring_client(goblin, ring_size=1 << 16) as owner, owner.pubsub() as p:
        p.subscribe("big")
        p.get_message(timeout=5)
        payloads = [bytes([65 + i]) * (100_000 + i) for i in range(3)]    # a record holds 8 KiB here
        for data in payloads:
            assert publishers["resp"].publish("big", data) == 1
        assert [p.get_message(timeout=5)["data"] for _ in payloads] == payloads


def test_handlers_listen_ping_and_unsubscribing_everything(goblin, publishers):
    seen = []
    with ring_client(goblin) as owner, owner.pubsub() as p:
        p.subscribe("plain", handled=seen.append)
        assert [p.get_message(timeout=5)["channel"] for _ in range(2)] == [b"plain", b"handled"]
        publishers["ring"].publish("handled", "to the handler")
        publishers["ring"].publish("plain", "to the caller")
        assert p.get_message(timeout=5) is None                       # the handler took it
        assert p.get_message(timeout=5) == message("message", b"plain", b"to the caller")
        assert seen == [message("message", b"handled", b"to the handler")]
        p.subscribe("third")
        assert p.get_message(ignore_subscribe_messages=True, timeout=5) is None
        p.ping()
        assert p.get_message(timeout=5) == {"type": "pong", "pattern": None, "channel": None, "data": b""}
        p.unsubscribe()
        assert [m["type"] for m in p.listen()] == ["unsubscribe"] * 3   # listen ends when nothing is left
        assert not p.subscribed


def test_run_in_thread_hands_every_message_to_its_handler(goblin, publishers):
    got, done = [], threading.Event()

    def handler(m):
        got.append(m["data"])
        if len(got) == 100:
            done.set()

    with ring_client(goblin) as owner:
        p = owner.pubsub()
        p.subscribe(work=handler)
        assert p.get_message(timeout=5)["type"] == "subscribe"       # subscribed before anything is published
        worker = p.run_in_thread(sleep_time=0.01, daemon=True)
        for i in range(100):
            publishers["resp"].publish("work", b"%d" % i)
        assert done.wait(10)
        worker.stop()
        worker.join(5)
        assert not worker.is_alive()
        assert got == [b"%d" % i for i in range(100)]


def test_a_sessions_own_messages_interleave_with_its_replies(goblin):
    """A plain ring client that subscribes itself: PushMessages land between its replies and
    every reply still reaches the call that asked for it."""
    with ring_client(goblin) as r:
        assert r.execute_command("SUBSCRIBE", "self") == [b"subscribe", b"self", 1]
        r.set("k", "v")
        for i in range(50):
            assert r.publish("self", b"%d" % i) == 1
            assert r.get("k") == b"v"
        assert r.ping() is True


def test_a_slow_ring_subscriber_is_closed_at_the_pubsub_limit_and_nobody_waits(goblin):
    admin = RespClient(port=goblin.port, socket_timeout=10.0)
    admin.execute_command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 128kb 60")
    try:
        with ring_client(goblin, ring_size=1 << 16) as owner, ring_client(goblin) as publisher, \
                ring_client(goblin) as bystander:
            p = owner.pubsub()
            p.subscribe("firehose")
            assert p.get_message(timeout=5)["type"] == "subscribe"
            data = b"x" * 1024
            answered = [publisher.publish("firehose", data) for _ in range(2000)]   # never read by p
            assert answered[0] == 1 and len(answered) == 2000
            assert bystander.ping() is True
            with pytest.raises(GoblinConnectionError):                        # its session was closed
                for _ in range(10_000):
                    p.get_messages(1000, timeout=1)
            p.close()
            clients = admin.execute_command("CLIENT", "LIST").decode()
            assert clients.count("transport=ring") == 3, clients    # owner, publisher, bystander
            assert publisher.publish("firehose", data) == 0
    finally:
        admin.execute_command("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
        admin.close()


def test_the_message_dicts_equal_redis_pys_against_redis_server(goblin, redis_server):
    """One script on both: goblin's ring PubSub and redis-py's PubSub on redis-server."""
    def script(pubsub, publish):
        out = []

        def read(count):           # each step's messages before the next (the sessions race)
            for _ in range(count):
                out.append(pubsub.get_message(timeout=5))

        pubsub.subscribe("a", "b")
        pubsub.psubscribe("a*")
        read(3)
        publish("a", "1")
        publish("ab", "2")
        read(3)
        pubsub.unsubscribe("b")
        read(1)
        publish("b", "3")
        pubsub.punsubscribe()
        pubsub.unsubscribe()
        read(2)
        assert pubsub.get_message(timeout=0.2) is None
        return out

    theirs_client = redis.Redis(port=redis_server.port)
    theirs_pubsub = theirs_client.pubsub()
    theirs = script(theirs_pubsub, theirs_client.publish)
    theirs_pubsub.close()
    theirs_client.close()
    with ring_client(goblin) as r, r.pubsub() as p:
        ours = script(p, r.publish)
    assert ours == theirs
    assert [m["type"] for m in ours].count("message") == 1 and ours[-1]["data"] == 0 and None not in ours


def test_a_subscriber_session_going_away_drops_its_subscriptions(tmp_path):
    with GoblinServer(tmp_path).start() as server:
        with ring_client(server) as publisher:
            owner = ring_client(server)
            p = owner.pubsub()
            p.subscribe("gone")
            assert p.get_message(timeout=5)["type"] == "subscribe"
            assert publisher.pubsub_numsub("gone") == [(b"gone", 1)]
            p.close()
            owner.close()
            deadline = time.monotonic() + 5        # the server learns of the close from the control socket
            while publisher.publish("gone", "x") and time.monotonic() < deadline:
                pass
            assert publisher.pubsub_numsub("gone") == [(b"gone", 0)]


def test_a_tracking_subscriber_skips_invalidations_between_its_messages(goblin, publishers):
    # A session that turned CLIENT TRACKING on (by hand: a cached client's Pub/Sub sessions never
    # track) and read a key before subscribing gets InvalidateMessages (template 900) in its reply
    # ring between its Pub/Sub messages: the reader passes over them, as every ordinary call does.
    with ring_client(goblin) as owner, owner.pubsub() as p:
        session = p._connect()
        assert session.execute_command("CLIENT", "TRACKING", "ON") in (b"OK", "OK", True)
        publishers["ring"].set("tracked", "1")
        assert session.get("tracked") == b"1"                # now tracked for this session
        p.subscribe("news")
        assert p.get_message(timeout=5) == message("subscribe", b"news", 1)
        publishers["resp"].set("tracked", "2")               # an invalidation into the subscriber's ring
        publishers["ring"].publish("news", "after one invalidation")
        publishers["resp"].flushall()                         # a flushAll invalidation
        publishers["ring"].publish("news", "after a flush")
        got = []
        while len(got) < 2:
            item = p.get_message(timeout=5)
            assert item is not None, f"only {got} came"
            got.append(item)
        assert got == [message("message", b"news", b"after one invalidation"),
                       message("message", b"news", b"after a flush")]
        p.ping("still in step")                              # replies still pair with their requests
        assert p.get_message(timeout=5) == {"type": "pong", "pattern": None, "channel": None,
                                            "data": b"still in step"}
