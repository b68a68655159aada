"""DUMP and RESTORE (and the small key commands beside them: RENAMENX, TOUCH, RANDOMKEY, OBJECT
FREQ, MOVE's replies) over both transports: a dumped value restores equal, with its TTL, ABSTTL,
IDLETIME and FREQ options; every damaged payload is refused with Redis's error texts; a
restored list wakes its waiter; and goblin's payloads and Redis's restore on each other's server
(the payload is Redis's; test_dump_redis_format.py covers every type and encoding)."""

from __future__ import annotations

import random
import struct
import time

import pytest

from goblin_ring import ResponseError, RespClient, WatchError
from test_blocking_commands import Background, admin, other_client, wait_for_blocked  # noqa: F401 (fixture)

CHECKSUM_ERROR = "ERR DUMP payload version or checksum are wrong"


def crc64_jones(data: bytes, crc: int = 0) -> int:
    """Redis's CRC-64 (Jones, reflected), the checksum DUMP payloads end with."""
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x95AC9329AC4BC9B5 if crc & 1 else crc >> 1
    return crc


def sealed(body: bytes, version: int = 0x4701) -> bytes:
    """A payload with a valid version and checksum around any body."""
    framed = body + struct.pack("<H", version)
    return framed + struct.pack("<Q", crc64_jones(framed))


def test_the_checksum_helper_is_redis_crc64():
    assert crc64_jones(b"123456789") == 0xE9C6D914C4B8D9CA


def test_strings_of_every_encoding_round_trip(client):
    values = {"int": b"12345", "neg": b"-9223372036854775808", "embstr": b"hello", "empty": b"",
              "raw": bytes(range(256)) * 3}
    for name, value in values.items():
        client.set(name, value)
        payload = client.dump(name)
        assert isinstance(payload, bytes)
        assert client.restore(name + ":copy", 0, payload) is True
        assert client.get(name + ":copy") == value
        assert client.object("encoding", name + ":copy") == client.object("encoding", name)
        assert client.ttl(name + ":copy") == -1


@pytest.mark.parametrize("length", [1, 5, 200, 5000])
def test_lists_round_trip_in_order_with_their_encoding(client, length):
    rng = random.Random(length)
    items = [bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 8, 70]))) for _ in range(length)]
    client.rpush("l", *items)
    assert client.restore("l2", 0, client.dump("l")) is True
    assert client.lrange("l2", 0, -1) == items
    assert client.object("encoding", "l2") == client.object("encoding", "l")


def test_dump_of_a_missing_key_is_nil(client):
    assert client.dump("nothing") is None


def test_a_relative_ttl_an_absolute_one_and_one_in_the_past(client):
    client.rpush("l", "a", "b")
    payload = client.dump("l")
    assert client.restore("rel", 5000, payload) is True
    assert 4000 < client.pttl("rel") <= 5000
    at = int(time.time() * 1000) + 60_000
    assert client.restore("abs", at, payload, absttl=True) is True
    assert client.pexpiretime("abs") == at
    # an absolute time already past stores nothing, and REPLACE still deletes the old key
    client.set("old", "v")
    assert client.restore("old", 1, payload, replace=True, absttl=True) is True
    assert client.exists("old") == 0


def test_replace_overwrites_and_busykey_refuses_without_it(client):
    client.set("s", "new")
    payload = client.dump("s")
    client.rpush("target", "x")
    with pytest.raises(ResponseError) as raised:
        client.restore("target", 0, payload)
    assert str(raised.value) == "BUSYKEY Target key name already exists."
    assert client.lrange("target", 0, -1) == [b"x"]
    assert client.restore("target", 0, payload, replace=True) is True
    assert client.get("target") == b"new"


def test_an_expired_key_is_not_busy(client):
    client.set("s", "v")
    payload = client.dump("s")
    client.set("gone", "x", pxat=1)        # stored, already expired (until a lookup or the cron)
    assert client.restore("gone", 0, payload) is True


def test_idletime_sets_object_idletime_and_freq_is_accepted(client):
    client.set("s", "v")
    payload = client.dump("s")
    assert client.restore("idle", 0, payload, idletime=1000) is True
    assert 1000 <= client.object("idletime", "idle") <= 1001
    assert client.restore("freq", 0, payload, frequency=5) is True
    with pytest.raises(ResponseError) as raised:          # no LFU policy: as Redis without one
        client.object("freq", "freq")
    assert str(raised.value).startswith("ERR An LFU maxmemory policy is not selected")


@pytest.mark.parametrize("options, message", [
    ((b"IDLETIME", b"-1"), "ERR Invalid IDLETIME value, must be >= 0"),
    ((b"FREQ", b"256"), "ERR Invalid FREQ value, must be >= 0 and <= 255"),
    ((b"FREQ", b"-1"), "ERR Invalid FREQ value, must be >= 0 and <= 255"),
    ((b"IDLETIME", b"x"), "ERR value is not an integer or out of range"),
    ((b"IDLETIME", b"1", b"FREQ", b"1"), "ERR syntax error"),
    ((b"FREQ", b"1", b"IDLETIME", b"1"), "ERR syntax error"),
    ((b"IDLETIME",), "ERR syntax error"),
    ((b"REPLACE", b"NOPE"), "ERR syntax error"),
])
def test_option_errors_are_redis_texts(client, options, message):
    client.set("s", "v")
    payload = client.dump("s")
    with pytest.raises(ResponseError) as raised:
        client.execute_command("RESTORE", "t", "0", payload, *options)
    assert str(raised.value) == message


@pytest.mark.parametrize("ttl, message", [(b"-1", "ERR Invalid TTL value, must be >= 0"),
                                          (b"1.5", "ERR value is not an integer or out of range")])
def test_ttl_errors_are_redis_texts(client, ttl, message):
    client.set("s", "v")
    with pytest.raises(ResponseError) as raised:
        client.execute_command("RESTORE", "t", ttl, client.dump("s"))
    assert str(raised.value) == message


def test_every_truncation_and_sampled_bit_flips_are_refused(client):
    client.rpush("l", *[b"item%d" % i for i in range(50)])
    payload = client.dump("l")
    rng = random.Random(5)
    damaged = [payload[:cut] for cut in range(len(payload))]
    for _ in range(200):
        at = rng.randrange(len(payload))
        damaged.append(payload[:at] + bytes([payload[at] ^ (1 << rng.randrange(8))]) + payload[at + 1:])
    damaged.append(payload + b"\x00")
    for bad in damaged:
        with pytest.raises(ResponseError) as raised:
            client.restore("t", 0, bad)
        assert str(raised.value) == CHECKSUM_ERROR
    assert client.exists("t") == 0


@pytest.mark.parametrize("body", [
    b"",                          # no type
    b"\x1f\x00",                  # a type id with no row
    b"\x01\x05ab",                # a string shorter than its length
    b"\x01\x02abEXTRA",           # bytes after the value
    b"\x02\x00",                  # an empty list
    b"\x02\x03\x01a\x01b",        # a list with fewer elements than its count
    b"\x02\xff\xff\xff\xff\x0f",  # a count larger than the payload
    b"\x01\x80\x00",              # an overlong varint
])
def test_a_well_sealed_payload_that_is_no_value_is_bad_data_format(client, body):
    with pytest.raises(ResponseError) as raised:
        client.restore("t", 0, sealed(body))
    assert str(raised.value) == "ERR Bad data format"
    assert client.exists("t") == 0


def test_a_newer_payload_format_or_a_foreign_version_is_refused(client):
    with pytest.raises(ResponseError) as raised:
        client.restore("t", 0, sealed(b"\x01\x01a", version=0x4702))
    assert str(raised.value) == CHECKSUM_ERROR
    with pytest.raises(ResponseError) as raised:
        client.restore("t", 0, sealed(b"\x01\x01a", version=13))    # past Redis 7.4's RDB version
    assert str(raised.value) == CHECKSUM_ERROR
    assert client.restore("t", 0, sealed(b"\x01\x01a")) is True       # the current format, forged
    assert client.get("t") == b"a"


def test_goblin_and_redis_each_restore_the_others_payload(client, redis_server):
    """DUMP payloads are Redis's (test_dump_redis_format.py covers every type and encoding)."""
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        reference.delete("s", "t")
        reference.set("s", "v")
        client.set("s", "v")
        assert client.dump("s") == reference.dump("s")
        assert client.restore("t", 0, reference.dump("s")) is True
        assert reference.restore("t", 0, client.dump("s")) is True
        assert client.get("t") == reference.get("t") == b"v"
    finally:
        reference.delete("s", "t")
        reference.close()


@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
def test_a_restored_list_wakes_its_waiter(goblin, admin, waiter_transport):  # noqa: F811
    admin.rpush("jobs", "j1", "j2")
    payload = admin.dump("jobs")
    admin.delete("jobs")
    with other_client(goblin, waiter_transport) as waiter:
        blocked = Background(lambda: waiter.blpop(["queue"], 0))
        wait_for_blocked(admin, 1)
        assert admin.restore("queue", 0, payload) is True
        assert blocked.result() == (b"queue", b"j1")
        assert admin.lrange("queue", 0, -1) == [b"j2"]


def test_restore_touches_a_watched_key(client):
    client.set("s", "v")
    payload = client.dump("s")
    client.watch("w")
    client.restore("w", 0, payload)
    with pytest.raises(WatchError):
        with client.pipeline(transaction=True) as pipe:
            pipe.get("w")
            pipe.execute()


# ---- RENAMENX, TOUCH, RANDOMKEY, MOVE ----

def test_renamenx_renames_only_onto_a_free_name(client):
    client.set("a", "1", ex=100)
    client.set("b", "2")
    assert client.renamenx("a", "b") is False
    assert client.get("b") == b"2"
    assert client.renamenx("a", "c") is True
    assert client.get("c") == b"1" and client.exists("a") == 0
    assert 0 < client.ttl("c") <= 100
    assert client.renamenx("c", "c") is False
    with pytest.raises(ResponseError) as raised:
        client.renamenx("missing", "missing")
    assert str(raised.value) == "ERR no such key"


def test_renamenx_onto_a_waited_key_wakes_the_waiter(goblin, admin):  # noqa: F811
    admin.rpush("jobs", "j1")
    with other_client(goblin, "ring") as waiter:
        blocked = Background(lambda: waiter.blpop(["queue"], 0))
        wait_for_blocked(admin, 1)
        assert admin.renamenx("jobs", "queue") is True
        assert blocked.result() == (b"queue", b"j1")


def test_touch_counts_existing_keys_and_resets_their_idle_time(client):
    client.set("a", "v")
    payload = client.dump("a")
    client.restore("idle", 0, payload, idletime=500)
    assert client.touch("a", "idle", "missing", "a") == 3
    assert client.object("idletime", "idle") < 500


def test_randomkey_answers_a_live_key_or_nil(client):
    assert client.randomkey() is None
    client.set("a", "1")
    client.set("b", "2")
    seen = {client.randomkey() for _ in range(200)}
    assert seen == {b"a", b"b"}
    client.delete("a", "b")
    client.set("short", "v", pxat=1)       # stored, already expired: RANDOMKEY deletes it
    assert client.randomkey() is None


@pytest.mark.parametrize("argv", [
    (b"MOVE", b"k", b"1"), (b"MOVE", b"k", b"1"), (b"MOVE", b"k", b"0"), (b"MOVE", b"k", b"x"),
    (b"MOVE", b"k", b"16"), (b"MOVE", b"k", b"-1"), (b"MOVE", b"missing", b"2"), (b"MOVE", b"k", b"01"),
    (b"RENAMENX", b"k", b"k"), (b"TOUCH", b"k", b"missing"), (b"OBJECT", b"FREQ", b"k"),
    (b"OBJECT", b"FREQ", b"missing"), (b"RESTORE", b"k", b"0", b"junk"),
])
def test_key_command_replies_are_redis_replies(client, redis_server, argv):
    reference = RespClient(port=redis_server.port, socket_timeout=10)

    def reply(target):
        try:
            return ("ok", target.execute_command(*argv))
        except ResponseError as error:
            return ("error", str(error))
    try:
        for target in (reference, client):
            target.flushall()
            target.set("k", "v")
        assert reply(client) == reply(reference)
        assert reply(client) == reply(reference)    # and again, on the state the first left
    finally:
        reference.flushall()
        reference.close()
