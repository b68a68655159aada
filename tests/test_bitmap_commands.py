"""The bitmap commands and GETSET/LCS over both transports (the `client` fixture is
parametrised over the ring and RESP), checked against the replies Redis 7.0 documents and
gives: SETBIT/GETBIT, BITCOUNT and BITPOS with BYTE and BIT ranges, BITOP, BITFIELD through
redis-py's builder (overflow modes, #offsets, signed and unsigned widths) and BITFIELD_RO,
GETSET, LCS in its four shapes (RESP2 and RESP3), the offset bound that follows
proto-max-bulk-len, WATCH, and what a key's expiry does. test_differential_bitmaps.py
compares thousands of random commands with redis-server; these are the cases a user reads
in the documentation."""

from __future__ import annotations

import pytest
import redis

from goblin_ring import DataError, ResponseError, WatchError, WrongTypeError

BAD_OFFSET = "bit offset is not an integer or out of range"


# ---- SETBIT, GETBIT ----

def test_setbit_returns_the_old_bit_and_grows_the_string_with_zero_bytes(client):
    assert client.setbit("b", 7, 1) == 0
    assert client.get("b") == b"\x01"
    assert client.setbit("b", 7, 0) == 1
    assert client.setbit("b", 17, True) == 0
    assert client.get("b") == b"\x00\x00\x40"
    assert client.getbit("b", 17) == 1
    assert client.getbit("b", 16) == 0
    assert client.getbit("b", 1000) == 0          # past the end: zero
    assert client.getbit("missing", 3) == 0
    assert client.exists("missing") == 0


def test_setbit_on_an_existing_string_keeps_its_bytes_and_its_expiry(client):
    client.set("s", "foo", ex=100)
    assert client.setbit("s", 6, 1) == 1          # 'f' is 0b01100110
    assert client.get("s") == b"foo"
    assert client.setbit("s", 7, 1) == 0
    assert client.get("s") == b"goo"
    assert client.ttl("s") == 100


def test_setbit_and_getbit_refuse_bad_offsets_and_bits_with_redis_errors(client):
    client.rpush("l", "x")
    for offset in (-1, "x", 2 ** 32):
        with pytest.raises(ResponseError, match=BAD_OFFSET):
            client.setbit("b", offset, 1)
        with pytest.raises(ResponseError, match=BAD_OFFSET):
            client.getbit("b", offset)
    with pytest.raises(ResponseError, match="bit is not an integer or out of range"):
        client.execute_command("SETBIT", "l", 0, 2)        # the bit is checked before the type
    with pytest.raises(WrongTypeError):
        client.setbit("l", 0, 1)
    with pytest.raises(WrongTypeError):
        client.getbit("l", 0)
    assert client.exists("b") == 0


def test_the_bit_offset_bound_follows_proto_max_bulk_len(client):
    """Redis refuses an offset whose byte is at or past proto-max-bulk-len (512 MB by default)."""
    client.execute_command("CONFIG", "SET", "proto-max-bulk-len", 1024 * 1024)
    try:
        with pytest.raises(ResponseError, match=BAD_OFFSET):
            client.setbit("b", 8 * 1024 * 1024, 1)
        with pytest.raises(ResponseError, match=BAD_OFFSET):
            client.bitfield("b").set("u8", "#1048576", 1).execute()
        assert client.setbit("b", 8 * 1024 * 1024 - 1, 1) == 0
        assert client.strlen("b") == 1024 * 1024
        assert client.bitcount("b") == 1
    finally:
        client.execute_command("CONFIG", "SET", "proto-max-bulk-len", 512 * 1024 * 1024)


# ---- BITCOUNT, BITPOS ----

def test_bitcount_counts_the_whole_string_or_a_byte_or_bit_range(client):
    client.set("k", "foobar")
    assert client.bitcount("k") == 26
    assert client.bitcount("k", 0, 0) == 4
    assert client.bitcount("k", 1, 1) == 6
    assert client.bitcount("k", 1, 1, mode="BYTE") == 6
    assert client.bitcount("k", 5, 30, mode="BIT") == 17
    assert client.bitcount("k", -2, -1) == 7
    assert client.bitcount("k", -1, -2) == 0
    assert client.bitcount("missing", 0, 10) == 0
    with pytest.raises(DataError):
        client.bitcount("k", 1)
    with pytest.raises(ResponseError, match="syntax error"):
        client.execute_command("BITCOUNT", "k", 1)
    with pytest.raises(ResponseError, match="syntax error"):
        client.bitcount("k", 0, 1, mode="BITS")
    assert client.execute_command("BITCOUNT", "missing", "not", "numbers") == 0   # Redis 7.0: the key first


def test_bitpos_finds_the_first_set_or_clear_bit_as_documented(client):
    client.set("k", b"\xff\xf0\x00")
    assert client.bitpos("k", 0) == 12
    client.set("k", b"\x00\xff\xf0")
    assert client.bitpos("k", 1, 0) == 8
    assert client.bitpos("k", 1, 2) == 16
    assert client.bitpos("k", 1, 2, -1, mode="BYTE") == 16
    assert client.bitpos("k", 1, 7, 15, mode="BIT") == 8
    assert client.bitpos("k", 1, 7, -3, mode="BIT") == 8
    client.set("z", b"\x00\x00\x00")
    assert client.bitpos("z", 1) == -1
    client.set("f", b"\xff\xff")
    assert client.bitpos("f", 0) == 16             # no end given: the right is zero padded
    assert client.bitpos("f", 0, 0, -1) == -1      # an explicit range holds no 0
    assert client.bitpos("missing", 0) == 0
    assert client.bitpos("missing", 1) == -1
    with pytest.raises(ResponseError, match="The bit argument must be 1 or 0."):
        client.execute_command("BITPOS", "k", 2)
    with pytest.raises(DataError):
        client.bitpos("k", 2)


# ---- BITOP ----

def test_bitop_and_or_xor_not_store_a_string_as_long_as_the_longest_source(client):
    client.set("a", b"\xf0\x0f\xff")
    client.set("b", b"\xcc")
    assert client.bitop("AND", "d", "a", "b") == 3
    assert client.get("d") == b"\xc0\x00\x00"
    assert client.bitop("OR", "d", "a", "b", "missing") == 3
    assert client.get("d") == b"\xfc\x0f\xff"
    assert client.bitop("xor", "d", "a", "b") == 3
    assert client.get("d") == b"\x3c\x0f\xff"
    assert client.bitop("NOT", "d", "b") == 1
    assert client.get("d") == b"\x33"
    assert client.bitop("AND", "a", "a", "b") == 3  # the destination may be a source
    assert client.get("a") == b"\xc0\x00\x00"


def test_bitop_replaces_any_value_drops_its_expiry_and_deletes_it_when_every_source_is_empty(client):
    client.rpush("d", "x")
    client.set("s", "v")
    assert client.bitop("OR", "d", "s") == 1
    assert client.type("d") == b"string"
    client.expire("d", 100)
    assert client.bitop("OR", "d", "s") == 1
    assert client.ttl("d") == -1
    assert client.bitop("AND", "d", "missing", "also-missing") == 0
    assert client.exists("d") == 0


def test_bitop_errors_are_redis_errors(client):
    client.rpush("l", "x")
    client.set("s", "v")
    with pytest.raises(ResponseError, match="BITOP NOT must be called with a single source key."):
        client.bitop("NOT", "d", "s", "s")
    with pytest.raises(ResponseError, match="syntax error"):
        client.bitop("NAND", "d", "s")
    with pytest.raises(WrongTypeError):
        client.bitop("AND", "d", "s", "l")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'bitop' command"):
        client.execute_command("BITOP", "AND", "d")
    assert client.exists("d") == 0


# ---- BITFIELD, BITFIELD_RO ----

def test_bitfield_builder_runs_the_documented_examples(client):
    assert client.bitfield("mykey").incrby("i5", 100, 1).get("u4", 0).execute() == [1, 0]
    assert client.bitfield("mykey2").incrby("u2", 100, 1, overflow="SAT").incrby("u2", 102, 1, overflow="SAT").execute() == [1, 1]
    ops = client.bitfield("mykey2").incrby("u2", 100, 1, overflow="SAT").incrby("u2", 102, 1, overflow="SAT")
    assert ops.execute() == [2, 2]
    assert client.bitfield("mykey2").incrby("u2", 100, 1, overflow="SAT").execute() == [3]
    assert client.bitfield("mykey2").incrby("u2", 100, 1, overflow="SAT").execute() == [3]
    assert client.bitfield("mykey3", default_overflow="FAIL").incrby("u2", 102, 4).execute() == [None]


def test_bitfield_set_returns_the_old_value_and_get_reads_signed_and_unsigned_at_hash_offsets(client):
    assert client.bitfield("k").set("u8", "#0", 255).set("u8", "#1", 128).execute() == [0, 0]
    assert client.get("k") == b"\xff\x80"
    assert client.bitfield("k").get("i8", 0).get("u8", 0).get("i8", "#1").get("u4", 4).get("i64", 0).execute() == \
        [-1, 255, -128, 15, -(2 ** 55)]
    assert client.bitfield("k").set("i64", 0, -1).get("u63", 1).execute() == [-(2 ** 55), 2 ** 63 - 1]


def test_bitfield_overflow_wraps_saturates_or_fails(client):
    ops = client.bitfield("k")
    ops.set("i8", 0, 120).incrby("i8", 0, 10).overflow("SAT").incrby("i8", 0, 300).incrby("i8", 0, -300)
    ops.overflow("FAIL").incrby("i8", 0, -1).get("i8", 0)
    assert ops.execute() == [0, -126, 127, -128, None, -128]
    assert client.bitfield("k").overflow("WRAP").set("u8", 0, 300).get("u8", 0).execute() == [128, 44]


def test_bitfield_errors_are_redis_errors_and_change_nothing(client):
    client.rpush("l", "x")
    with pytest.raises(ResponseError, match="Invalid bitfield type. Use something like i16 u8. "
                                            "Note that u64 is not supported but i64 is."):
        client.bitfield("k").get("u64", 0).execute()
    with pytest.raises(ResponseError, match="Invalid OVERFLOW type specified"):
        client.execute_command("BITFIELD", "k", "OVERFLOW", "MAYBE", "GET", "u8", 0)
    with pytest.raises(ResponseError, match="syntax error"):
        client.execute_command("BITFIELD", "k", "SET", "u8", 0)
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("BITFIELD", "l", "GET", "u8", 0, "SET", "u8", 0, "x")   # parsed before the type
    with pytest.raises(WrongTypeError):
        client.bitfield("l").get("u8", 0).execute()
    assert client.exists("k") == 0
    assert client.bitfield("k").execute() == []      # no operation: no key made


def test_bitfield_ro_reads_and_refuses_writes(client):
    client.set("k", b"\x80\x01")
    assert client.bitfield_ro("k", "u1", 0) == [1]
    assert client.bitfield_ro("k", "u8", 0, items=[("i8", 8), ("u16", 0), ("u8", 99)]) == [128, 1, 32769, 0]
    assert client.bitfield_ro("missing", "i8", 0) == [0]
    with pytest.raises(ResponseError, match="BITFIELD_RO only supports the GET subcommand"):
        client.execute_command("BITFIELD_RO", "k", "SET", "u8", 0, 1)
    assert client.get("k") == b"\x80\x01"


# ---- GETSET, LCS ----

def test_getset_returns_the_old_value_and_drops_the_expiry(client):
    assert client.getset("k", "one") is None
    client.expire("k", 100)
    assert client.getset("k", "two") == b"one"
    assert client.get("k") == b"two"
    assert client.ttl("k") == -1
    client.rpush("l", "x")
    with pytest.raises(WrongTypeError):
        client.getset("l", "v")
    assert client.type("l") == b"list"


def test_lcs_replies_the_subsequence_its_length_or_the_matching_ranges(client):
    client.mset({"key1": "ohmytext", "key2": "mynewtext"})
    assert client.lcs("key1", "key2") == b"mytext"
    assert client.lcs("key1", "key2", len=True) == 6
    assert client.lcs("key1", "key2", idx=True) == [b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert client.lcs("key1", "key2", idx=True, minmatchlen=4, withmatchlen=True) == \
        [b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert client.lcs("key1", "missing") == b""
    assert client.lcs("missing", "missing", idx=True) == [b"matches", [], b"len", 0]
    with pytest.raises(ResponseError, match="If you want both the length and indexes, please just use IDX."):
        client.lcs("key1", "key2", len=True, idx=True)
    client.rpush("l", "x")
    with pytest.raises(ResponseError, match="The specified keys must contain string values"):
        client.lcs("key1", "l")


def test_lcs_idx_is_a_map_over_resp3(goblin):
    r = redis.Redis(port=goblin.port, protocol=3)
    try:
        r.mset({"key1": "ohmytext", "key2": "mynewtext"})
        assert r.lcs("key1", "key2", idx=True, withmatchlen=True) == \
            {b"matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len": 6}
    finally:
        r.close()


def test_lcs_refuses_a_table_larger_than_proto_max_bulk_len(client):
    client.set("a", b"a" * 12000)
    client.set("b", b"b" * 12000)
    with pytest.raises(ResponseError, match="Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"):
        client.lcs("a", "b", len=True)


# ---- WATCH and pipelines ----

def test_a_bit_write_that_changes_a_watched_key_aborts_exec_and_one_that_changes_nothing_does_not(goblin, client):
    from conftest import make_client
    other = make_client(goblin, "resp")
    try:
        client.setbit("w", 3, 1)
        for change, aborted in [(lambda: other.setbit("w", 3, 1), False), (lambda: other.setbit("w", 3, 0), True),
                                (lambda: other.bitfield("w").set("u4", 0, 0).execute(), False),
                                (lambda: other.bitop("NOT", "w", "w"), True)]:
            client.watch("w")
            change()
            pipe = client.pipeline(transaction=True)
            pipe.getbit("w", 3)
            if aborted:
                with pytest.raises(WatchError):
                    pipe.execute()
            else:
                assert len(pipe.execute()) == 1
            pipe.__exit__(None, None, None)
    finally:
        other.close()


def test_bitmap_commands_pipeline_with_their_reply_shapes(client):
    with client.pipeline() as pipe:
        pipe.setbit("p", 0, 1)
        client_builder = pipe.bitfield("p").get("u8", 0).incrby("u8", 0, 1)
        client_builder.execute()
        pipe.bitcount("p")
        pipe.getset("p", "x")
        replies = pipe.execute()
    assert replies == [0, [128, 129], 2, b"\x81"]


# ---- the dirty counter ----

def changes(client, *argv):
    """How much one command moved INFO persistence's rdb_changes_since_last_save."""
    before = client.info("persistence")["rdb_changes_since_last_save"]
    client.execute_command(*argv)
    return client.info("persistence")["rdb_changes_since_last_save"] - before


def test_bit_writes_count_one_change_per_changed_field_and_nothing_when_nothing_changed(client):
    assert changes(client, "SETBIT", "b", 3, 1) == 1
    assert changes(client, "SETBIT", "b", 3, 1) == 0
    assert changes(client, "BITFIELD", "b", "SET", "u4", 0, 1, "SET", "u4", 4, 15, "GET", "u8", 0) == 1
    assert changes(client, "BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u4", 0, 100) == 0
    assert changes(client, "BITOP", "NOT", "n", "b") == 1
    assert changes(client, "BITOP", "AND", "n", "missing") == 1     # the destination is deleted
    assert changes(client, "BITOP", "AND", "n", "missing") == 0
    assert changes(client, "GETSET", "b", "x") == 1
    assert changes(client, "GETBIT", "b", 0) == 0


def test_over_maxmemory_bit_writes_are_refused_and_bit_reads_still_answer(client):
    """SETBIT, BITOP, BITFIELD and GETSET may grow memory (Redis's denyoom flag); the reads may not."""
    client.set("s", "foobar")
    client.execute_command("CONFIG", "SET", "maxmemory", 1)
    try:
        for argv in (("SETBIT", "s", 1, 1), ("BITOP", "NOT", "d", "s"), ("BITFIELD", "s", "SET", "u8", 0, 1),
                     ("GETSET", "s", "x")):
            with pytest.raises(ResponseError, match="command not allowed when used memory > 'maxmemory'"):
                client.execute_command(*argv)
        assert client.getbit("s", 1) == 1
        assert client.bitcount("s") == 26
        assert client.bitpos("s", 0) == 0
        assert client.bitfield_ro("s", "u8", 0) == [102]
        assert client.lcs("s", "s", len=True) == 6
    finally:
        client.execute_command("CONFIG", "SET", "maxmemory", 0)
    assert client.get("s") == b"foobar"
