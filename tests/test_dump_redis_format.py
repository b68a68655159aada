"""DUMP and RESTORE in Redis's payload format (issue 35): goblin's DUMP of every type Redis has is
the RDB type byte, the value as RDB 10 encodes it, the RDB version and a CRC-64, so payloads move
both ways between goblin and a real redis-server 7.0 started here; goblin's RESTORE reads Redis's
payloads of every encoding (Redis-made, and Valkey 9's), still reads goblin's own sealed payloads
(arrays, old AOFs), and refuses damaged ones with Redis's errors while staying up.

Values are compared with commands (and DEBUG DIGEST-VALUE, which goblin computes as Redis does);
streams also by their groups, PELs and consumers (XINFO STREAM FULL)."""

from __future__ import annotations

import struct

import pytest

from conftest import make_client
from goblin_ring import ResponseError, RespClient
from servers import GoblinServer
from test_dump_restore import crc64_jones
from test_rdb_redis import Redis, stream_state

CHECKSUM_ERROR = "ERR DUMP payload version or checksum are wrong"
BAD_FORMAT = "ERR Bad data format"


def sealed(body: bytes, version: int) -> bytes:
    framed = body + struct.pack("<H", version)
    return framed + struct.pack("<Q", crc64_jones(framed))


@pytest.fixture(scope="module")
def redis(tmp_path_factory):
    server = Redis(tmp_path_factory.mktemp("redis"))
    yield server.client
    server.stop()


@pytest.fixture(scope="module")
def goblin_server(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("goblin")).start() as server:
        yield server


@pytest.fixture
def goblin(goblin_server):
    c = RespClient(port=goblin_server.port, socket_timeout=20)
    c.flushall()
    yield c
    c.close()


@pytest.fixture(autouse=True)
def empty_redis(redis):
    redis.flushall()


def populate(c) -> list[str]:
    """Every type, small and large, so that redis-server 7.0 uses each of its encodings."""
    c.set("s:raw", "hello")
    c.set("s:int8", "-7")
    c.set("s:int16", "12345")
    c.set("s:int32", "-2000000000")
    c.set("s:int64", "9223372036854775807")
    c.set("s:notint", "0012")
    c.set("s:empty", "")
    c.set("s:lzf", "abcdefgh" * 500)                        # Redis LZF-compresses it
    c.set("s:binary", bytes(range(256)) * 40)
    c.set("s:ttl", "v", px=600_000)
    c.rpush("l:small", "a", "12", "-5", "b" * 70, "x" * 5000)
    c.rpush("l:big", *[f"element-{i}" if i % 3 else str(i * 1000) for i in range(2000)])
    c.sadd("set:intset", 1, 2, 300, -70000, 5_000_000_000)
    c.sadd("set:bigints", *range(600))                      # past set-max-intset-entries: hashtable
    c.sadd("set:strings", "a", "b", "c")
    c.sadd("set:big", *[f"m{i}" for i in range(1000)])
    c.hset("h:small", mapping={"a": "1", "b": "x", "n": "-300"})
    c.hset("h:longvalue", mapping={"a": "v" * 100})         # past hash-max-listpack-value
    c.hset("h:big", mapping={f"f{i}": f"v{i}" for i in range(1000)})
    c.zadd("z:small", {"a": 1, "b": 0.1, "c": -2.5, "d": float("inf"), "e": float("-inf")})
    c.zadd("z:big", {f"m{i}": i / 7 for i in range(1000)})
    c.zadd("z:longmember", {"m" * 100: 3})
    c.xadd("x:small", {"f": "v", "n": "1"}, id="1-1")
    c.xadd("x:small", {"f": "w", "n": "2"}, id="1-2")
    c.xadd("x:small", {"other": "shape"}, id="2-0")
    c.xgroup_create("x:small", "g", id="0")
    c.xreadgroup("g", "alice", {"x:small": ">"}, count=2)
    for i in range(1, 1001):
        c.xadd("x:big", {"field": str(i), "text": f"entry {i}"} if i % 5 else {"odd": "one"}, id=f"{1000 + i}-0")
    c.xdel("x:big", "1500-0", "1501-0")
    c.xgroup_create("x:big", "g1", id="0")
    c.xgroup_create("x:big", "g2", id="1900-0")
    c.xreadgroup("g1", "bob", {"x:big": ">"}, count=30)
    c.xreadgroup("g1", "carol", {"x:big": ">"}, count=5)
    c.xack("x:big", "g1", "1003-0", "1004-0")
    c.xreadgroup("g2", "dave", {"x:big": ">"}, count=3)
    return sorted(k.decode() for k in c.keys("*"))


def contents(c, keys: list[str]):
    out = {}
    for key in keys:
        kind = c.type(key)
        if kind == b"string":
            value = c.get(key)
        elif kind == b"list":
            value = c.lrange(key, 0, -1)
        elif kind == b"set":
            value = sorted(c.smembers(key))
        elif kind == b"zset":
            value = c.zrange(key, 0, -1, withscores=True)
        elif kind == b"hash":
            value = sorted(c.hgetall(key).items())
        else:
            value = (c.xrange(key), stream_state(c, key))
        out[key] = (kind, value, c.debug_digest_value(key))
    return out


def copy_keys(source, target, keys: list[str]) -> None:
    """DUMP every key from source and RESTORE it into target with its remaining TTL."""
    for key in keys:
        ttl = max(source.pttl(key), 0)
        assert target.restore(key, ttl, source.dump(key)) is True, key


def test_goblin_dump_restores_in_redis_server_equal(goblin, redis):
    keys = populate(goblin)
    copy_keys(goblin, redis, keys)
    assert contents(redis, keys) == contents(goblin, keys)
    assert 590_000 < redis.pttl("s:ttl") <= 600_000


def test_a_list_of_either_goblin_engine_dumps_to_redis_equal(goblin, redis):
    goblin.execute_command("GOBLIN.PMA.RPUSH", "pma", *[f"p{i}" for i in range(300)])
    goblin.execute_command("GOBLIN.SEG.RPUSH", "seg", *[f"s{i}" for i in range(300)])
    copy_keys(goblin, redis, ["pma", "seg"])
    assert contents(redis, ["pma", "seg"]) == contents(goblin, ["pma", "seg"])


def test_redis_server_dump_restores_in_goblin_equal(goblin, redis):
    keys = populate(redis)
    encodings = {redis.object("encoding", k) for k in keys}
    assert {b"embstr", b"int", b"raw", b"listpack", b"quicklist", b"intset", b"hashtable", b"skiplist",
            b"stream"} <= encodings
    copy_keys(redis, goblin, keys)
    assert contents(goblin, keys) == contents(redis, keys)


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_goblin_dump_restores_in_goblin_over_each_transport(goblin_server, goblin, transport):
    keys = populate(goblin)
    expected = contents(goblin, keys)
    c = make_client(goblin_server, transport)
    try:
        payloads = {key: c.dump(key) for key in keys}
        assert c.delete(*keys) == len(keys)
        for key, payload in payloads.items():
            assert payload[-10:-8] == b"\x0a\x00", key     # RDB version 10: Redis's form for every type
            assert c.restore(key, 0, payload) is True
    finally:
        c.close()
    expected["s:ttl"] = contents(goblin, ["s:ttl"])["s:ttl"]
    assert contents(goblin, keys) == expected


def test_small_values_dump_to_the_same_bytes_as_redis_server(goblin, redis):
    """Where goblin's encoding is Redis's and Redis leaves the bytes uncompressed, the payloads
    are byte-equal (Redis LZF-compresses strings and packed containers longer than 20 bytes,
    which goblin writes raw: both read either)."""
    def build(c):
        c.set("str", "hello")
        c.set("int", "12345")
        c.set("neg", "-2000000000")
        c.rpush("list", "a", "12", "b")
        c.sadd("intset", 1, 2, 300)
        c.hset("hash", mapping={"a": "1", "b": "x"})
        c.zadd("zset", {"a": 1, "b": 2})
    build(goblin)
    build(redis)
    for key in ["str", "int", "neg", "list", "intset", "hash", "zset"]:
        assert goblin.dump(key) == redis.dump(key), key


def test_valkey_9_payloads_restore_in_goblin(goblin, tmp_path):
    from goblin_ring.bench.servers import valkey_executable
    executable, why = valkey_executable()
    if not executable:
        pytest.skip(f"no valkey-server here: {why}")
    valkey = Redis(tmp_path / "valkey", executable=executable)
    try:
        v = valkey.client
        v.set("s", "x" * 100)
        v.rpush("l", "a", "b", "c")
        v.sadd("set", "a", "b")
        v.hset("h", mapping={f"f{i}": i for i in range(200)})
        v.zadd("z", {"a": 1.5})
        v.xadd("x", {"a": "1"}, id="1-1")
        keys = ["h", "l", "s", "set", "x", "z"]
        copy_keys(v, goblin, keys)
        assert contents(goblin, keys) == contents(v, keys)
    finally:
        valkey.stop()


def test_damaged_payloads_get_redis_errors_and_the_server_stays_up(goblin, redis):
    goblin.hset("h", mapping={f"f{i}": f"v{i}" for i in range(50)})
    payload = goblin.dump("h")
    body, version = payload[:-10], payload[-10:-8]
    bad_crc = payload[:-1] + bytes([payload[-1] ^ 1])
    cases = {
        "bad crc": (bad_crc, CHECKSUM_ERROR),
        "crc 0": (body + version + b"\x00" * 8, CHECKSUM_ERROR),
        "newer version": (sealed(body, 13), CHECKSUM_ERROR),
        "goblin's next format": (sealed(body, 0x4702), CHECKSUM_ERROR),
        "appended byte": (payload + b"\x00", CHECKSUM_ERROR),
        "too short": (b"\x00\x01", CHECKSUM_ERROR),
        "empty set": (sealed(b"\x02\x00", 10), BAD_FORMAT),
        "unknown type": (sealed(b"\x1f\x00", 10), BAD_FORMAT),
        "cut value": (sealed(body[:-5], 10), BAD_FORMAT),
        "listpack size": (sealed(b"\x10\x07" + b"\x20\x00\x00\x00\x00\x00\xff", 10), BAD_FORMAT),
    }
    for name, (bad, message) in cases.items():
        for target in ("goblin", "redis"):
            with pytest.raises(ResponseError) as raised:
                {"goblin": goblin, "redis": redis}[target].restore("t", 0, bad)
                pytest.fail(f"{name}: {target} accepted it")
            assert str(raised.value) == message, (name, target)
    for cut in range(len(payload)):
        with pytest.raises(ResponseError) as raised:
            goblin.restore("t", 0, payload[:cut])
        assert str(raised.value) == CHECKSUM_ERROR
    # bytes after the value under a good CRC: Redis ignores them, goblin refuses (no DUMP writes them)
    with pytest.raises(ResponseError) as raised:
        goblin.restore("t", 0, sealed(body + b"X", 10))
    assert str(raised.value) == BAD_FORMAT
    # a module's value: goblin has none
    with pytest.raises(ResponseError) as raised:
        goblin.restore("t", 0, sealed(b"\x07\x00", 10))
    assert str(raised.value).startswith(BAD_FORMAT) and "module" in str(raised.value)
    assert goblin.exists("t") == 0
    assert goblin.ping() is True
    assert goblin.restore("t", 0, payload) is True
    assert goblin.hgetall("t") == goblin.hgetall("h")


def test_goblin_sealed_payloads_still_restore(goblin, redis):
    old = sealed(b"\x01\x01a", 0x4701)           # a string payload as goblin's DUMP wrote it before
    assert goblin.restore("old", 0, old) is True
    assert goblin.get("old") == b"a"
    goblin.execute_command("ARSET", "arr", "0", "1", "2.5")
    payload = goblin.dump("arr")                  # arrays have no Redis form: goblin's payload
    assert payload[-9:-8] == b"\x47"
    assert goblin.restore("arr2", 0, payload) is True
    assert goblin.execute_command("ARGET", "arr2", "1") == goblin.execute_command("ARGET", "arr", "1")
    with pytest.raises(ResponseError) as raised:
        redis.restore("arr", 0, payload)
    assert str(raised.value) == CHECKSUM_ERROR


def test_a_hash_with_field_ttls_keeps_goblins_payload_and_its_ttls(goblin):
    goblin.hset("h", mapping={"a": "1", "b": "2"})
    goblin.execute_command("HPEXPIRE", "h", "600000", "FIELDS", "1", "a")
    payload = goblin.dump("h")
    assert payload[-9:-8] == b"\x47"              # RDB 10 has no form for field TTLs
    assert goblin.restore("h2", 0, payload) is True
    assert goblin.hgetall("h2") == {b"a": b"1", b"b": b"2"}
    assert goblin.execute_command("HPEXPIRETIME", "h2", "FIELDS", "2", "a", "b") == \
        goblin.execute_command("HPEXPIRETIME", "h", "FIELDS", "2", "a", "b")


def test_restore_of_a_goblin_payload_reaches_a_redis_replica_in_redis_form(goblin_server, goblin, tmp_path):
    """An old goblin payload (an AOF's, a stored one) restored on a goblin primary is propagated
    as Redis's payload of the value, which a redis-server replica takes."""
    from test_replication import info, wait_until
    replica = Redis(tmp_path / "replica", "--replicaof", "127.0.0.1", str(goblin_server.port))
    try:
        r = replica.client
        wait_until(lambda: info(r).get("master_link_status") == "up", what="the sync")
        assert goblin.restore("old", 0, sealed(b"\x01\x05hello", 0x4701)) is True
        goblin.rpush("l", "a", "b")
        assert goblin.restore("l2", 0, goblin.dump("l")) is True
        wait_until(lambda: r.exists("old", "l2") == 2, what="the replica to take both restores")
        assert r.get("old") == b"hello"
        assert r.lrange("l2", 0, -1) == [b"a", b"b"]
    finally:
        replica.stop()
