"""CLIENT TRACKING over RESP (exec/tracking.c): each mode's invalidation stream byte for byte
against redis-server 7.0 (default, OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, BCAST with
prefixes, RESP2 redirection through __redis__:invalidate, flushes, expiry, the table's bound),
the option errors, CLIENT TRACKINGINFO / GETREDIR, the INFO fields, and redis-py's own
client-side cache (cache_config) against goblin."""

from __future__ import annotations

import re

import pytest
import redis

from resp_wire import raw_connection
from servers import GoblinServer


class Session:
    """Raw connections by index; every frame read is recorded with the step that read it.
    A client id in a command is written "{id:N}" (connection N's id on this server) and every
    integer in a frame that is one of those ids is replaced by "{id:N}" the same way, so two
    servers' streams compare."""

    def __init__(self, port: int):
        self.port = port
        self.conns: dict[int, object] = {}
        self.ids: dict[int, int] = {}
        self.seen: list = []

    def conn(self, index: int):
        if index not in self.conns:
            c = self.conns[index] = raw_connection(self.port)
            self.ids[index] = int(c.request("CLIENT", "ID")[1:-2])
        return self.conns[index]

    def run(self, index: int, *command, frames: int = 1):
        args = [self.ids_in(str(a)) if isinstance(a, str) else a for a in command]
        conn = self.conn(index)
        if command:
            from resp_wire import encode_command
            conn.sendall(encode_command(*args))
        got = [self.normalise(conn.read_reply()) for _ in range(frames)]
        self.seen.append((index, command, got))
        return got

    def ids_in(self, text: str) -> str:
        for n in re.findall(r"\{id:(\d+)\}", text):
            self.conn(int(n))
        return re.sub(r"\{id:(\d+)\}", lambda m: str(self.ids[int(m.group(1))]), text)

    def normalise(self, frame: bytes) -> bytes:
        # only integer frames (a line that starts with ":"), not a bulk's text such as "user:1"
        for index, cid in self.ids.items():
            frame = re.sub(rb"(^|\r\n):%d\r\n" % cid, rb"\1:{id:%d}\r\n" % index, frame)
        return frame

    def close(self):
        for c in self.conns.values():
            c.close()


def play(port: int, steps) -> list:
    s = Session(port)
    try:
        s.run(9, "FLUSHALL")
        for step in steps:
            index, command, frames = step[0], step[1], step[2] if len(step) > 2 else 1
            s.run(index, *command, frames=frames)
        return s.seen
    finally:
        s.close()


HELLO3 = ("HELLO", "3")
# each step: (connection, command, frames read after it). A push is one frame.
SCENARIOS = {
    "default": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")), (1, ("SET", "a", "1")),
        (0, ("GET", "a")), (0, ("MGET", "a", "b")), (1, ("SET", "a", "2")), (0, (), 1),
        (1, ("SET", "a", "3")), (1, ("DEL", "b")), (1, ("SET", "b", "1")), (0, (), 1), (0, ("GET", "a")),
        (1, ("MSET", "a", "x", "b", "y")), (0, (), 1), (0, ("PING",)),
        (0, ("HGETALL", "h")), (1, ("HSET", "h", "f", "v")), (0, (), 1),
        (0, ("CLIENT", "TRACKINGINFO")), (0, ("CLIENT", "GETREDIR")),
    ],
    "own_write_comes_after_its_reply": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")), (0, ("GET", "k")), (0, ("SET", "k", "v"), 2),
        (0, ("GET", "k")), (0, ("MULTI",)), (0, ("SET", "k", "w")), (0, ("EXEC",), 2),
    ],
    "noloop": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON", "NOLOOP")), (0, ("GET", "k")), (0, ("SET", "k", "v")),
        (0, ("GET", "k")), (1, ("SET", "k", "w")), (0, (), 1), (0, ("CLIENT", "TRACKINGINFO")),
    ],
    "optin": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON", "OPTIN")), (0, ("GET", "a")), (0, ("CLIENT", "CACHING", "YES")),
        (0, ("CLIENT", "TRACKINGINFO")), (0, ("GET", "b")), (0, ("GET", "c")), (1, ("MSET", "a", "1", "b", "1", "c", "1")),
        (0, (), 1), (0, ("PING",)), (0, ("CLIENT", "CACHING", "NO")),
    ],
    "optout": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON", "OPTOUT")), (0, ("CLIENT", "CACHING", "NO")), (0, ("GET", "a")),
        (0, ("GET", "b")), (1, ("SET", "a", "1")), (1, ("SET", "b", "1")), (0, (), 1), (0, ("PING",)),
        (0, ("CLIENT", "CACHING", "YES")), (0, ("CLIENT", "TRACKINGINFO")),
    ],
    "bcast_prefixes": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "obj:")),
        (1, ("SET", "user:1", "a")), (0, (), 1), (1, ("SET", "other", "a")), (1, ("SET", "obj:9", "b")), (0, (), 1),
        (1, ("MSET", "user:2", "x", "user:1", "y", "obj:1", "z")), (0, (), 2),
        (0, ("CLIENT", "TRACKINGINFO")), (0, ("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:x")),
        (0, ("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "zz", "PREFIX", "zzz")),
        (0, ("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "new:")), (0, ("CLIENT", "TRACKINGINFO")),
    ],
    "bcast_everything_noloop": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON", "BCAST", "NOLOOP")), (0, ("SET", "mine", "1")),
        (1, ("SET", "theirs", "1")), (0, (), 1), (0, ("PING",)),
    ],
    "resp2_redirect_through_pubsub": [
        (1, ("SUBSCRIBE", "__redis__:invalidate")), (0, ("CLIENT", "TRACKING", "ON", "REDIRECT", "{id:1}")),
        (0, ("GET", "k")), (2, ("SET", "k", "v")), (1, (), 1), (0, ("CLIENT", "GETREDIR")),
        (0, ("GET", "k")), (2, ("FLUSHALL",)), (1, (), 1),
    ],
    "resp3_redirect_and_broken_redirect": [
        (1, HELLO3), (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON", "REDIRECT", "{id:1}")), (0, ("GET", "k")),
        (2, ("SET", "k", "v")), (1, (), 1), (0, ("GET", "k")), (1, ("QUIT",)), (2, ("SET", "k", "w")), (0, (), 1),
        (0, ("CLIENT", "TRACKINGINFO")),
    ],
    "flush_is_a_null_invalidation": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")), (0, ("GET", "k")), (1, ("FLUSHDB",)), (0, (), 1),
        (0, ("FLUSHALL",), 2), (0, ("GET", "k")), (1, ("SET", "k", "1")), (0, (), 1),
    ],
    "errors": [
        (0, ("CLIENT", "TRACKING", "MAYBE")), (0, ("CLIENT", "TRACKING", "ON", "BOGUS")),
        (0, ("CLIENT", "TRACKING", "ON", "PREFIX", "a")), (0, ("CLIENT", "TRACKING", "ON", "BCAST", "OPTIN")),
        (0, ("CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT")), (0, ("CLIENT", "TRACKING", "ON", "REDIRECT", "999999")),
        (0, ("CLIENT", "TRACKING", "ON", "REDIRECT", "x")),
        (0, ("CLIENT", "TRACKING", "ON", "REDIRECT", "{id:1}", "REDIRECT", "{id:1}")),
        (0, ("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a")),
        (0, ("CLIENT", "CACHING", "YES")), (0, ("CLIENT", "TRACKING", "ON")), (0, ("CLIENT", "CACHING", "YES")),
        (0, ("CLIENT", "CACHING", "NO")), (0, ("CLIENT", "TRACKING", "ON", "BCAST")),
        (0, ("CLIENT", "TRACKING", "ON", "OPTIN")), (0, ("CLIENT", "TRACKING", "OFF")),
        (0, ("CLIENT", "TRACKING", "ON", "OPTOUT")), (0, ("CLIENT", "TRACKING", "ON", "OPTIN")),
        (0, ("CLIENT", "CACHING", "MAYBE")), (0, ("CLIENT", "TRACKING")), (0, ("CLIENT", "GETREDIR", "x")),
        (0, ("CLIENT", "TRACKINGINFO")), (0, ("CLIENT", "TRACKING", "OFF")), (0, ("CLIENT", "TRACKINGINFO")),
        (0, ("CLIENT", "GETREDIR")),
    ],
    "scripts_track_the_keys_their_commands_read": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")),
        (0, ("EVAL", "return redis.call('get', KEYS[1])", "1", "s1")),
        (0, ("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "s2")),
        (1, ("SET", "s1", "v")), (0, (), 1), (1, ("SET", "s2", "v")), (0, (), 1),
        (0, ("EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "s3")), (0, ("GET", "s3")),
        (1, ("EVAL", "return redis.call('del', KEYS[1])", "1", "s3")), (0, (), 1),
    ],
    "type_changes_and_renames": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")), (0, ("GET", "l")), (1, ("RPUSH", "l", "a")), (0, (), 1),
        (0, ("LRANGE", "l", "0", "-1")), (1, ("RENAME", "l", "m")), (0, (), 1), (0, ("GET", "m")), (0, ("ZSCORE", "z", "a")),
        (1, ("ZADD", "z", "1", "a")), (0, (), 1),
    ],
    "an_evicted_key_is_invalidated": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")), (1, ("SET", "k", "v")), (0, ("GET", "k")),
        (1, ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")), (1, ("CONFIG", "SET", "maxmemory", "1")),
        (1, ("SET", "other", "v")), (0, (), 1),
        (1, ("CONFIG", "SET", "maxmemory", "0")), (1, ("CONFIG", "SET", "maxmemory-policy", "noeviction")),
    ],
    "reset_turns_tracking_off": [
        (0, HELLO3), (0, ("CLIENT", "TRACKING", "ON")), (0, ("GET", "k")), (0, ("RESET",)), (0, HELLO3),
        (1, ("SET", "k", "v")), (0, ("CLIENT", "TRACKINGINFO")),
    ],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_invalidation_stream_matches_redis(name, goblin, redis_server):
    ours = play(goblin.port, SCENARIOS[name])
    theirs = play(redis_server.port, SCENARIOS[name])
    # HELLO's map names the server: only its shape is compared
    strip = lambda seen: [(i, c, ["HELLO" if c[:1] == ("HELLO",) else f for f in frames]) for i, c, frames in seen]
    assert strip(ours) == strip(theirs)


def info_fields(conn) -> dict:
    text = conn.request("INFO", "everything").decode(errors="replace")
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line and not line.startswith("$"))


def test_info_counts_tracking_clients_keys_items_and_prefixes(goblin):
    with raw_connection(goblin.port) as a, raw_connection(goblin.port) as b, raw_connection(goblin.port) as c:
        a.request("FLUSHALL")
        a.request("HELLO", "3")
        a.request("CLIENT", "TRACKING", "ON")
        b.request("CLIENT", "TRACKING", "ON")
        c.request("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "p:", "PREFIX", "q:")
        a.request("MGET", "x", "y", "z")
        b.request("GET", "x")
        fields = info_fields(c)
        assert (fields["tracking_clients"], fields["tracking_total_keys"], fields["tracking_total_items"],
                fields["tracking_total_prefixes"]) == ("3", "3", "4", "2")
        c.request("SET", "x", "1")
        assert a.read_reply() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nx\r\n"
        fields = info_fields(c)
        assert (fields["tracking_total_keys"], fields["tracking_total_items"]) == ("2", "2")
        c.request("CLIENT", "TRACKING", "OFF")
        assert info_fields(a)["tracking_total_prefixes"] == "0"
        assert info_fields(a)["tracking_clients"] == "2"


def test_table_past_tracking_table_max_keys_invalidates_entries_to_fit(tmp_path):
    with GoblinServer(tmp_path / "rt").start() as server, raw_connection(server.port) as a:
        a.request("HELLO", "3")
        a.request("CLIENT", "TRACKING", "ON")
        for i in range(30):
            assert a.request("GET", f"k{i}") == b"_\r\n"
        assert a.request("CONFIG", "SET", "tracking-table-max-keys", "10") == b"+OK\r\n"
        # the next command evicts the table down to 10 keys; each evicted key is invalidated
        a.sendall(b"PING\r\n")
        frames = []
        while True:
            frame = a.read_reply()
            if frame == b"+PONG\r\n":
                break
            frames.append(frame)
        assert len(frames) == 20
        assert all(f.startswith(b">2\r\n$10\r\ninvalidate\r\n*1\r\n") for f in frames)
        assert info_fields(a)["tracking_total_keys"] == "10"
        assert a.request("CONFIG", "GET", "tracking-table-max-keys") == \
            b"%1\r\n$23\r\ntracking-table-max-keys\r\n$2\r\n10\r\n"


def test_expired_keys_are_invalidated_by_the_active_cycle(goblin):
    with raw_connection(goblin.port) as a, raw_connection(goblin.port) as b:
        a.request("HELLO", "3")
        a.request("CLIENT", "TRACKING", "ON")
        b.request("SET", "soon", "v", "PX", "20")
        a.request("GET", "soon")
        # no command from anyone: the server's own expiry cycle must tell the reader
        assert a.read_reply() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$4\r\nsoon\r\n"


def test_a_closed_tracking_client_leaves_nothing_to_send(goblin):
    with raw_connection(goblin.port) as w:
        keys_before = int(info_fields(w)["tracking_total_keys"])
        for _ in range(20):
            with raw_connection(goblin.port) as r:
                r.request("HELLO", "3")
                r.request("CLIENT", "TRACKING", "ON")
                r.request("GET", "gone")
        assert w.request("SET", "gone", "1") == b"+OK\r\n"
        fields = info_fields(w)
        assert fields["tracking_clients"] == "0"
        assert int(fields["tracking_total_keys"]) == keys_before   # the key's entry went with the write


def test_client_tracking_over_the_ring_is_accepted_and_reported(ring):
    """A ring session tracks like a RESP3 client (its invalidations are InvalidateMessages in
    its reply ring: tests/test_ring_near_cache.py)."""
    assert ring.execute_command("CLIENT", "TRACKING", "ON") in (b"OK", "OK", True)
    assert ring.execute_command("CLIENT", "TRACKINGINFO") in (
        {b"flags": {b"on"}, b"redirect": 0, b"prefixes": []},
        [b"flags", [b"on"], b"redirect", 0, b"prefixes", []])
    assert ring.execute_command("CLIENT", "TRACKING", "OFF") in (b"OK", "OK", True)


@pytest.mark.parametrize("server_kind", ["goblin", "redis"])
def test_redis_py_client_side_cache_sees_every_write(server_kind, goblin, redis_server, monkeypatch):
    """redis-py's cache over CLIENT TRACKING (RESP3 pushes), unchanged against goblin (which
    reports 7.4.0). redis-py 6+ refuses to cache for a server whose HELLO says a version below
    7.4, a policy check, not a protocol one: for redis-server 7.0, the reference, the test lowers
    that floor."""
    from redis.cache import CacheConfig
    from redis.connection import CacheProxyConnection
    if server_kind == "redis":
        monkeypatch.setattr(CacheProxyConnection, "MIN_ALLOWED_VERSION", "7.0.0")
    port = goblin.port if server_kind == "goblin" else redis_server.port
    cached = redis.Redis(port=port, protocol=3, cache_config=CacheConfig(max_size=1000))
    writer = redis.Redis(port=port)
    try:
        writer.flushall()
        for round_ in range(200):
            writer.set("k", round_)
            writer.hset("h", "f", round_)
            assert cached.get("k") == str(round_).encode()
            assert cached.get("k") == str(round_).encode()      # served from the cache
            assert cached.hget("h", "f") == str(round_).encode()
        cache = cached.get_cache()
        assert cache is not None and cache.size >= 1
    finally:
        cached.close()
        writer.close()


def test_every_one_of_thousands_of_tracked_keys_is_invalidated_once_in_any_write_order(goblin):
    """The table's open addressing under growth and removal: each key read is invalidated
    exactly once, whatever order the writes come in, and the table ends empty."""
    import random
    keys = [f"many:{i}" for i in range(3000)]
    with raw_connection(goblin.port) as reader, raw_connection(goblin.port) as writer:
        keys_before = int(info_fields(writer)["tracking_total_keys"])
        reader.request("HELLO", "3")
        reader.request("CLIENT", "TRACKING", "ON")
        reader.sendall(b"".join(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k.encode()) for k in keys))
        for _ in keys:
            assert reader.read_reply() == b"_\r\n"
        assert int(info_fields(writer)["tracking_total_keys"]) == keys_before + len(keys)
        order = keys[:]
        random.Random(34).shuffle(order)
        for key in order + order[:100]:        # the second writes find nothing tracked
            writer.request("SET", key, "v")
        told = []
        for _ in order:
            frame = reader.read_reply()
            assert frame.startswith(b">2\r\n$10\r\ninvalidate\r\n*1\r\n")
            told.append(frame.split(b"\r\n")[-2].decode())
        assert told == order
        assert reader.request("PING") == b"+PONG\r\n"    # nothing more was sent before it
        assert int(info_fields(writer)["tracking_total_keys"]) == keys_before
