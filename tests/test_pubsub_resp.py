"""Pub/Sub over RESP: the subscribed-mode rules, RESP2 and RESP3 shapes, patterns, shard
channels, PUBSUB introspection (byte for byte against redis-server), delivery order to many
subscribers, the pubsub output-buffer limit, a ring publisher reaching a RESP subscriber, and
both PubSub objects (goblin's RespClient.pubsub() and redis-py's) against goblin."""

from __future__ import annotations

import threading

import pytest
import redis

from goblin_ring import RespClient
from goblin_ring.errors import PubSubError
from resp_wire import encode_command, raw_connection
from servers import GoblinServer


def run_script(port: int, script: list) -> list:
    """Run (connection, command, frames) steps on raw connections; return every frame read.
    frames: how many frames that connection reads after sending (0 for a publish read later)."""
    connections: dict[int, object] = {}
    seen = []
    try:
        for index, command, frames in script:
            conn = connections.get(index)
            if conn is None:
                conn = connections[index] = raw_connection(port)
            if command:
                conn.sendall(encode_command(*command))
            seen.append((index, command, [conn.read_reply() for _ in range(frames)]))
    finally:
        for conn in connections.values():
            conn.close()
    return seen


SUBSCRIBED_MODE = [
    (0, ("SUBSCRIBE", "a", "b"), 2),
    (0, ("SSUBSCRIBE", "x"), 1),
    (0, ("PSUBSCRIBE", "p*"), 1),
    (0, ("PING",), 1),
    (0, ("PING", "hi"), 1),
    (0, ("GET", "k"), 1),
    (0, ("CLIENT", "LIST"), 1),
    (0, ("PUBSUB", "NUMSUB", "a"), 1),
    (0, ("PUBSUB", "NOSUCH"), 1),
    (0, ("MULTI",), 1),
    (0, ("SUBSCRIBE",), 1),
    (1, ("PUBLISH", "a", "one"), 1),
    (0, None, 1),
    (1, ("PUBLISH", "pq", "two"), 1),
    (0, None, 1),
    (1, ("SPUBLISH", "x", "three"), 1),
    (0, None, 1),
    (1, ("PUBLISH", "x", "not shard"), 1),
    (1, ("PUBSUB", "NUMSUB", "a", "b", "c"), 1),
    (1, ("PUBSUB", "SHARDNUMSUB", "x", "y"), 1),
    (1, ("PUBSUB", "NUMPAT"), 1),
    (1, ("PUBSUB", "SHARDCHANNELS"), 1),
    (1, ("PUBSUB", "CHANNELS", "b"), 1),
    (1, ("PUBSUB", "CHANNELS", "a", "b"), 1),
    (1, ("PUBSUB", "NUMPAT", "x"), 1),
    (1, ("PUBSUB",), 1),
    (0, ("SUNSUBSCRIBE",), 1),
    (0, ("GET", "k"), 1),
    (0, ("UNSUBSCRIBE", "a", "nope"), 2),
    (0, ("UNSUBSCRIBE",), 1),
    (0, ("PUNSUBSCRIBE", "zz"), 1),
    (0, ("PUNSUBSCRIBE",), 1),
    (0, ("GET", "k"), 1),
    (0, ("UNSUBSCRIBE",), 1),
    (0, ("SUNSUBSCRIBE",), 1),
    (0, ("PING",), 1),
    # RESP3: pushes, ordinary commands allowed while subscribed, the publisher's own message first
    (2, ("HELLO", "3"), 1),
    (2, ("SUBSCRIBE", "c"), 1),
    (2, ("GET", "k"), 1),
    (2, ("PING",), 1),
    (2, ("PUBLISH", "c", "to myself"), 2),
    (2, ("SSUBSCRIBE", "s"), 1),
    (1, ("SPUBLISH", "s", "sharded"), 1),
    (2, None, 1),
    (2, ("PUBSUB", "NUMSUB", "c"), 1),
    (2, ("UNSUBSCRIBE",), 1),
    (2, ("UNSUBSCRIBE",), 1),
    (2, ("RESET",), 1),
    (1, ("PUBSUB", "SHARDNUMSUB", "s"), 1),
]


def without_volatile(frames: list) -> list:
    """CLIENT LIST and HELLO name ids, ports, ages and versions: keep only their first bytes."""
    out = []
    for index, command, replies in frames:
        if command and command[0] in ("CLIENT", "HELLO"):
            replies = [r[:1] for r in replies]
        out.append((index, command, replies))
    return out


def test_subscribed_mode_resp2_and_resp3_shapes_reply_byte_for_byte_like_redis(goblin, redis_server):
    ours = without_volatile(run_script(goblin.port, SUBSCRIBED_MODE))
    theirs = without_volatile(run_script(redis_server.port, SUBSCRIBED_MODE))
    for mine, reference in zip(ours, theirs):
        assert mine == reference


PATTERNS = ["h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "h\\*llo", "*", "news.*", "[", "a[\\]]b"]
CHANNELS = ["hello", "hallo", "hxllo", "hllo", "heeeello", "hbllo", "h*llo", "news.sport", "news", "[", "a]b", ""]


def pattern_deliveries(port: int) -> tuple[list, list]:
    with raw_connection(port) as subscriber, raw_connection(port) as publisher:
        subscriber.sendall(encode_command("PSUBSCRIBE", *PATTERNS))
        confirmations = [subscriber.read_reply() for _ in PATTERNS]
        counts = [publisher.request("PUBLISH", channel, "m") for channel in CHANNELS]
        total = sum(int(count[1:-2]) for count in counts)
        messages = sorted(subscriber.read_reply() for _ in range(total))
        return confirmations + counts, messages


def test_patterns_match_channels_as_redis_glob_matches_them(goblin, redis_server):
    assert pattern_deliveries(goblin.port) == pattern_deliveries(redis_server.port)


def test_every_one_of_eight_subscribers_gets_every_message_in_publish_order(goblin):
    count = 3000
    subscribers = [raw_connection(goblin.port) for _ in range(8)]
    try:
        for index, conn in enumerate(subscribers):
            conn.sendall(encode_command("SUBSCRIBE", "feed", f"own{index}"))
            conn.read_reply(), conn.read_reply()
        with raw_connection(goblin.port) as publisher:
            publisher.sendall(b"".join(encode_command("PUBLISH", "feed", f"m{i}") for i in range(count)))
            assert [publisher.read_reply() for _ in range(count)] == [b":8\r\n"] * count
        for conn in subscribers:
            expected = [encode_command("message", "feed", f"m{i}") for i in range(count)]
            assert [conn.read_reply() for _ in range(count)] == expected
    finally:
        for conn in subscribers:
            conn.close()


def test_closing_or_resetting_a_subscriber_drops_its_subscriptions(goblin, resp):
    with raw_connection(goblin.port) as gone:
        gone.sendall(encode_command("SUBSCRIBE", "left"))
        gone.read_reply()
        gone.sendall(encode_command("PSUBSCRIBE", "left.*"))
        gone.read_reply()
        assert resp.pubsub_numsub("left") == [(b"left", 1)]
        assert resp.pubsub_numpat() == 1
        listing = resp.execute_command("CLIENT", "LIST").decode().splitlines()
        assert [line for line in listing if " sub=1 psub=1 ssub=0 " in line and " flags=P " in line]
    deadline_checks = 0
    while resp.pubsub_numsub("left") != [(b"left", 0)]:   # the server reads the EOF in its own time
        deadline_checks += 1
        assert deadline_checks < 100000, "the closed subscriber was never forgotten"
    assert resp.pubsub_numpat() == 0
    with raw_connection(goblin.port) as reset:
        reset.sendall(encode_command("SUBSCRIBE", "r1", "r2"))
        reset.read_reply(), reset.read_reply()
        assert reset.request("RESET") == b"+RESET\r\n"
        assert resp.pubsub_channels("r*") == []
        assert reset.request("GET", "k") == b"$-1\r\n"          # out of subscribed mode
        assert resp.publish("r1", "x") == 0
    info = resp.info("stats")
    assert info["pubsub_channels"] == 0 and info["pubsub_patterns"] == 0


def test_a_subscriber_past_the_pubsub_output_limit_is_closed_and_the_publisher_is_not_held(tmp_path):
    with GoblinServer(tmp_path).start() as server:
        admin = RespClient(port=server.port, socket_timeout=10.0)
        admin.execute_command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 0 0")
        slow = raw_connection(server.port)
        slow.sendall(encode_command("SUBSCRIBE", "flood"))
        assert slow.read_reply().startswith(b"*3")
        payload = b"x" * 65536
        with raw_connection(server.port) as publisher:
            for _ in range(400):                                 # 26 MB: far past socket buffers and the limit
                assert publisher.request("PUBLISH", "flood", payload) in (b":1\r\n", b":0\r\n")
            assert publisher.request("PING") == b"+PONG\r\n"
        server.wait_for_log("overcoming of output buffer limits")
        slow.read_until_closed()                              # what was sent, then EOF: it was closed
        slow.close()
        assert admin.pubsub_numsub("flood") == [(b"flood", 0)]
        admin.close()


def test_a_ring_publisher_reaches_a_resp_subscriber(goblin, ring):
    with raw_connection(goblin.port) as subscriber:
        subscriber.sendall(encode_command("SUBSCRIBE", "cross"))
        subscriber.read_reply()
        subscriber.sendall(encode_command("PSUBSCRIBE", "cro*"))
        subscriber.read_reply()
        assert ring.publish("cross", b"from the ring") == 2
        assert ring.pubsub_numsub("cross") == [(b"cross", 1)]
        assert subscriber.read_reply() == encode_command("message", "cross", "from the ring")
        assert subscriber.read_reply() == encode_command("pmessage", "cro*", "cross", "from the ring")


@pytest.mark.parametrize("server_kind", ["goblin", "redis"])
def test_goblin_pubsub_object_has_redis_py_shape(server_kind, goblin, redis_server):
    port = goblin.port if server_kind == "goblin" else redis_server.port
    client = RespClient(port=port, socket_timeout=10.0)
    with client.pubsub() as p:
        handled = []
        p.subscribe("plain", handled=handled.append)
        p.psubscribe("pat.*")
        assert p.subscribed
        assert p.get_message(timeout=5) == {"type": "subscribe", "pattern": None, "channel": b"plain", "data": 1}
        assert p.get_message(timeout=5)["channel"] == b"handled"
        assert p.get_message(timeout=5) == {"type": "psubscribe", "pattern": None, "channel": b"pat.*", "data": 3}
        assert p.get_message(timeout=0) is None
        assert client.publish("plain", "p1") == 1 and client.publish("pat.x", "p2") == 1
        assert client.publish("handled", "h1") == 1
        assert p.get_message(timeout=5) == {"type": "message", "pattern": None, "channel": b"plain", "data": b"p1"}
        assert p.get_message(timeout=5) == {"type": "pmessage", "pattern": b"pat.*", "channel": b"pat.x", "data": b"p2"}
        assert p.get_message(timeout=5) is None and handled[0]["data"] == b"h1"
        p.ping("hey")
        assert p.get_message(timeout=5) == {"type": "pong", "pattern": None, "channel": None, "data": b"hey"}
        with pytest.raises(PubSubError):
            p.run_in_thread()                                  # "plain" has no handler
        p.unsubscribe()
        p.punsubscribe()
        kinds = [p.get_message(timeout=5)["type"] for _ in range(3)]
        assert sorted(kinds) == ["punsubscribe", "unsubscribe", "unsubscribe"] and not p.subscribed
    with client.pubsub(ignore_subscribe_messages=True) as p:
        received = []
        arrived = threading.Event()
        p.subscribe(work=lambda message: (received.append(message["data"]), len(received) == 50 and arrived.set()))
        while client.pubsub_numsub("work") != [(b"work", 1)]:
            p.get_message(timeout=0.01)
        worker = p.run_in_thread(sleep_time=0.01)
        for i in range(50):
            client.publish("work", i)
        assert arrived.wait(10)
        worker.stop()
        worker.join(10)
        assert received == [str(i).encode() for i in range(50)]
    client.close()


def test_redis_py_pubsub_works_against_goblin(goblin):
    r = redis.Redis(port=goblin.port, socket_timeout=10)
    p = r.pubsub()
    p.subscribe("rp")
    p.psubscribe("rp.*")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    assert p.get_message(timeout=5)["type"] == "psubscribe"
    assert r.publish("rp", "a") == 1 and r.publish("rp.b", "b") == 1
    assert r.pubsub_numsub("rp") == [(b"rp", 1)] and r.pubsub_numpat() == 1
    listened = p.listen()
    assert next(listened) == {"type": "message", "pattern": None, "channel": b"rp", "data": b"a"}
    assert next(listened) == {"type": "pmessage", "pattern": b"rp.*", "channel": b"rp.b", "data": b"b"}
    p.unsubscribe("rp")
    p.punsubscribe("rp.*")
    assert p.get_message(timeout=5)["type"] == "unsubscribe"
    assert p.get_message(timeout=5)["type"] == "punsubscribe"
    p.close()
    r3 = redis.Redis(port=goblin.port, protocol=3, socket_timeout=10)
    p3 = r3.pubsub()
    p3.subscribe("r3")
    assert p3.get_message(timeout=5)["type"] == "subscribe"
    assert r3.publish("r3", "pushed") == 1
    assert p3.get_message(timeout=5) == {"type": "message", "pattern": None, "channel": b"r3", "data": b"pushed"}
    p3.close()
    r.close()
    r3.close()


def test_client_list_and_kill_by_type_pubsub_name_the_subscribed_connections(goblin, resp):
    with raw_connection(goblin.port) as subscriber:
        subscriber.sendall(encode_command("SUBSCRIBE", "typed"))
        subscriber.read_reply()
        pubsub_clients = resp.execute_command("CLIENT", "LIST", "TYPE", "pubsub").decode().splitlines()
        normal_clients = resp.execute_command("CLIENT", "LIST", "TYPE", "normal").decode().splitlines()
        assert len(pubsub_clients) == 1 and " sub=1 " in pubsub_clients[0] and " flags=P " in pubsub_clients[0]
        assert normal_clients and all(" sub=0 psub=0 ssub=0 " in line for line in normal_clients)
        assert resp.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 1
        assert subscriber.read_until_closed() == b""
    assert resp.pubsub_numsub("typed") == [(b"typed", 0)]
