"""Keyspace notifications (notify-keyspace-events): CONFIG's flag text as Redis prints it, and
the events a scripted run of commands publishes, compared byte for byte with redis-server's
(__keyspace@<db>__:<key> and __keyevent@<db>__:<event>), expiry included."""

from __future__ import annotations

import pytest

from resp_wire import encode_command, raw_connection

FLAG_TEXTS = ["", "KEA", "AKE", "Eg$lshzxetdnm", "x", "Kl", "KEg$", "Ez", "AKEnm", "KEA" + "n"]


def config_texts(port: int) -> list:
    out = []
    with raw_connection(port) as conn:
        for text in FLAG_TEXTS + ["Q", "KE?"]:
            out.append(conn.request("CONFIG", "SET", "notify-keyspace-events", text))
            out.append(conn.request("CONFIG", "GET", "notify-keyspace-events"))
        conn.request("CONFIG", "SET", "notify-keyspace-events", "")
    return out


def test_config_reads_and_writes_the_event_classes_as_redis_does(goblin, redis_server):
    assert config_texts(goblin.port) == config_texts(redis_server.port)


SCRIPT = [
    ("SET", "s", "1"), ("INCR", "s"), ("INCRBY", "s", "5"), ("DECR", "s"), ("INCRBYFLOAT", "s", "1.5"),
    ("APPEND", "s", "x"), ("SETRANGE", "s", "0", "ab"), ("MSET", "a", "1", "b", "2"), ("SETNX", "a", "9"),
    ("GETSET", "a", "3"), ("GETDEL", "b"), ("EXPIRE", "a", "100"), ("PERSIST", "a"), ("RENAME", "a", "c"),
    ("DEL", "c", "s", "missing"),
    ("RPUSH", "l", "1", "2", "3"), ("LPUSH", "l", "0"), ("LPOP", "l"), ("RPOP", "l"), ("LSET", "l", "0", "x"),
    ("LINSERT", "l", "BEFORE", "x", "w"), ("LREM", "l", "0", "w"), ("LTRIM", "l", "0", "0"),
    ("RPUSH", "l2", "a", "b"), ("LMOVE", "l2", "l3", "LEFT", "RIGHT"), ("RPOPLPUSH", "l2", "l3"), ("LPOP", "l"),
    ("SADD", "st", "a", "b", "c"), ("SREM", "st", "a"), ("SMOVE", "st", "st2", "b"), ("SPOP", "st"),
    ("SADD", "st3", "x"), ("SINTERSTORE", "st4", "st2", "st3"), ("SUNIONSTORE", "st5", "st2", "st3"),
    ("HSET", "h", "f", "1", "g", "2"), ("HINCRBY", "h", "f", "2"), ("HINCRBYFLOAT", "h", "f", "0.5"),
    ("HDEL", "h", "f"), ("HDEL", "h", "g"),
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"), ("ZINCRBY", "z", "5", "a"), ("ZREM", "z", "a"),
    ("ZPOPMIN", "z"), ("ZREMRANGEBYSCORE", "z", "-inf", "+inf"),
    ("SET", "gone", "v"), ("EXPIRE", "gone", "-1"),
    ("SET", "t", "v", "EX", "100"), ("SET", "t", "w", "KEEPTTL"), ("SETEX", "t2", "100", "v"), ("GETEX", "t2", "PERSIST"),
    ("GETEX", "t2", "EX", "50"), ("PSETEX", "t3", "100000", "v"), ("GETEX", "t3"), ("SET", "t3", "plain"), ("GETEX", "t3"),
    ("SELECT", "3"), ("SET", "in3", "v"), ("DEL", "in3"), ("SELECT", "0"),
    ("MSET", *[part for i in range(100) for part in (f"many{i}", "v")]), ("DEL", *[f"many{i}" for i in range(100)]),
    # last: "old" may expire any time after its millisecond (the active cycle or a read), and
    # its "expired" must come after every other event on both servers
    ("SET", "old", "v"), ("PEXPIRE", "old", "1"),
]


def events(port: int, flags: str) -> list:
    with raw_connection(port) as listener, raw_connection(port) as writer:
        assert writer.request("CONFIG", "SET", "notify-keyspace-events", flags) == b"+OK\r\n"
        writer.request("FLUSHALL")
        listener.sendall(encode_command("PSUBSCRIBE", "__key*__:*"))
        listener.read_reply()
        for command in SCRIPT:
            writer.request(*command)
        # "old" expires: a read after its millisecond finds it expired (lazy expiry) ...
        while writer.request("PTTL", "old") != b":-2\r\n":
            pass
        marker = encode_command("pmessage", "__key*__:*", "__keyspace@0__:zz-end", "marker")
        writer.request("PUBLISH", "__keyspace@0__:zz-end", "marker")   # every event before it has arrived
        seen = []
        while (frame := listener.read_reply()) != marker:
            seen.append(frame)
        writer.request("CONFIG", "SET", "notify-keyspace-events", "")
        return seen


@pytest.mark.parametrize("flags", ["KEA", "Kg", "El", "KE$shz", "Ex", "KEAn", "En"])
def test_commands_publish_the_events_redis_publishes(goblin, redis_server, flags):
    assert events(goblin.port, flags) == events(redis_server.port, flags)


def test_a_ring_clients_writes_reach_resp_subscribers_as_events(goblin, ring):
    with raw_connection(goblin.port) as listener:
        assert listener.request("CONFIG", "SET", "notify-keyspace-events", "KEA") == b"+OK\r\n"
        try:
            listener.sendall(encode_command("SUBSCRIBE", "__keyevent@0__:rpush", "__keyspace@0__:ringlist"))
            listener.read_reply(), listener.read_reply()
            ring.delete("ringlist")
            ring.rpush("ringlist", b"a", b"b")
            ring.lpop("ringlist", 2)
            assert listener.read_reply() == encode_command("message", "__keyspace@0__:ringlist", "rpush")
            assert listener.read_reply() == encode_command("message", "__keyevent@0__:rpush", "ringlist")
            assert listener.read_reply() == encode_command("message", "__keyspace@0__:ringlist", "lpop")
            assert listener.read_reply() == encode_command("message", "__keyspace@0__:ringlist", "del")
        finally:
            ring.execute_command("CONFIG", "SET", "notify-keyspace-events", "")


def blocked_pop_events(port: int) -> list:
    with raw_connection(port) as listener, raw_connection(port) as waiter, raw_connection(port) as pusher:
        assert pusher.request("CONFIG", "SET", "notify-keyspace-events", "KEA") == b"+OK\r\n"
        pusher.request("DEL", "queue")
        listener.sendall(encode_command("PSUBSCRIBE", "__keyspace@0__:queue"))
        listener.read_reply()
        waiter.sendall(encode_command("BLPOP", "queue", "0"))
        while b"cmd=blpop" not in pusher.request("CLIENT", "LIST"):   # parked
            pass
        pusher.request("RPUSH", "queue", "job")
        assert waiter.read_reply() == encode_command("queue", "job")
        pusher.request("PUBLISH", "__keyspace@0__:queue", "end")
        seen = []
        while (frame := listener.read_reply()) != encode_command("pmessage", "__keyspace@0__:queue",
                                                                  "__keyspace@0__:queue", "end"):
            seen.append(frame)
        pusher.request("CONFIG", "SET", "notify-keyspace-events", "")
        return seen


def test_a_pop_served_to_a_blocked_client_is_notified_as_redis_notifies_it(goblin, redis_server):
    assert blocked_pop_events(goblin.port) == blocked_pop_events(redis_server.port)
