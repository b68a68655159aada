"""Every AR* command (Redis 8.8's sparse arrays) over both transports (the `client` fixture is
parametrised over the ring and RESP) and every array engine the server has (ENGINES: each runs
this module on a server started with --array-implementation <engine>), checked against
redis.io's documented replies and error texts (Redis 7.0 and valkey have no arrays, so the
documentation is the reference): unsigned indexes up to 2^64-2, ARLEN vs ARCOUNT, holes,
reversed ranges, the append cursor (ARINSERT, ARRING, ARSEEK, ARNEXT, ARLASTITEMS), ARGREP's
predicates, AROP's aggregates, ARINFO, slices turning dense and back, the key commands that
must cover arrays (TYPE, OBJECT ENCODING, MEMORY USAGE, COPY, RENAME, expiry, DUMP/RESTORE,
SCAN TYPE, WRONGTYPE), the batch calls with numpy indexes, and a random model test against a
Python dict."""

from __future__ import annotations

import random

import numpy
import pytest

from goblin_ring import ResponseError, RingClient
from goblin_ring.client.commands.arrays import as_unsigned
from resp_wire import raw_connection
from servers import GoblinServer

TOP = 2**64 - 2          # the highest index
ENGINES = ["classic"]    # the rt engine's commands are test_array_rt.py's


@pytest.fixture(scope="module", params=ENGINES, ids=lambda name: f"array-{name}")
def goblin(request, tmp_path_factory):
    runtime_dir = tmp_path_factory.mktemp("runtime")
    extra = () if request.param == "classic" else ("--array-implementation", request.param)
    with GoblinServer(runtime_dir, *extra).start() as server:
        server.array_implementation = request.param
        yield server


def error_of(call, *args, **kwargs) -> str:
    """The error a call raises, without Redis's "ERR " prefix (other prefixes kept: WRONGTYPE)."""
    with pytest.raises(ResponseError) as caught:
        call(*args, **kwargs)
    text = str(caught.value)
    return text[4:] if text.startswith("ERR ") else text


def unsigned(client, goblin, *argv) -> int | None:
    """An unsigned integer reply that may pass 2^63-1. The ring client converts it (the ring
    carries it as digits); over RESP it is read off the wire, because hiredis refuses integers
    past 2^63-1 (from Redis 8.8 too, which writes them the same way)."""
    if isinstance(client, RingClient):
        return as_unsigned(client.execute_command(*argv))
    with raw_connection(goblin.port) as conn:
        frame = conn.request(*argv)
    if frame == b"$-1\r\n":
        return None
    assert frame[:1] == b":" and frame.endswith(b"\r\n"), frame
    return int(frame[1:-2])


# ---- ARSET / ARGET / ARMSET / ARMGET ----

def test_arset_writes_consecutive_values_and_counts_only_new_slots(client):
    assert client.arset("a", 0, "hello") == 1
    assert client.arget("a", 0) == b"hello"
    assert client.arset("a", 2, "a", "b", "c") == 3
    assert [client.arget("a", i) for i in range(5)] == [b"hello", None, b"a", b"b", b"c"]
    assert client.arset("a", 1, "x", "y") == 1          # 1 was a hole, 2 is overwritten
    assert client.arget("a", 2) == b"y"
    assert client.arget("a", 999) is None
    assert client.arget("missing", 0) is None
    assert client.arset("a", 7, "") == 1                  # an empty string is a value
    assert client.arget("a", 7) == b""


def test_armset_and_armget_take_scattered_indexes(client):
    assert client.armset("m", {0: "10", 5: "20", 100: "30"}) == 3
    assert client.armget("m", 0, 5, 100, 999) == [b"10", b"20", b"30", None]
    assert client.armset("m", {5: "21", 6: "22"}) == 1
    assert client.armget("m", 5, 6) == [b"21", b"22"]
    assert client.armget("missing", 1, 2) == [None, None]
    assert error_of(client.execute_command, "ARMSET", "m", 1, "a", 2) == \
        "wrong number of arguments for 'armset' command"
    # every index is checked before anything is written
    assert error_of(client.execute_command, "ARMSET", "m", 1, "a", -2, "b") == "invalid array index"
    assert client.arget("m", 1) is None
    assert error_of(client.execute_command, "ARMGET", "m", 1, "x") == "invalid array index"


def test_large_values_and_many_sizes_read_back_exactly(client):
    values = {i * 7: bytes([65 + i % 26]) * n for i, n in enumerate([0, 1, 15, 16, 62, 63, 64, 200, 5000, 100000])}
    client.armset("big", values)
    assert client.armget("big", *values) == list(values.values())
    client.arset("big", 7, "short")                       # a big value replaced by a small one
    assert client.arget("big", 7) == b"short"


# ---- indexes ----

def test_indexes_are_unsigned_64_bit_up_to_2_64_minus_2(client, goblin):
    assert client.arset("top", TOP, "last") == 1
    assert client.arget("top", TOP) == b"last"
    assert unsigned(client, goblin, "ARLEN", "top") == 2**64 - 1
    assert client.arcount("top") == 1
    assert client.arset("top", 2**63, "mid") == 1
    if isinstance(client, RingClient):
        assert client.arscan("top", 0, TOP) == [[2**63, b"mid"], [TOP, b"last"]]
    else:   # Redis's unsigned integers, on the wire
        with raw_connection(goblin.port) as conn:
            assert conn.request("ARSCAN", "top", 0, TOP) == (b"*2\r\n*2\r\n:9223372036854775808\r\n$3\r\nmid\r\n"
                                                          b"*2\r\n:18446744073709551614\r\n$4\r\nlast\r\n")
    assert error_of(client.execute_command, "ARGET", "top", "-1") == "invalid array index"
    with pytest.raises(ResponseError, match="^ERR invalid array index$"):
        client.execute_command("ARGET", "top", "abc")
    for bad in ("-1", "abc", str(2**64 - 1), str(2**64), "1.5", ""):
        assert error_of(client.execute_command, "ARGET", "top", bad) == "invalid array index", bad
        assert error_of(client.execute_command, "ARSET", "top", bad, "v") == "invalid array index", bad
    assert error_of(client.arset, "top", TOP, "a", "b") == "array index overflow"
    assert error_of(client.arset, "top", TOP - 1, "a", "b", "c") == "array index overflow"
    assert client.arset("top", TOP - 1, "a", "b") == 1
    assert client.ardel("top", TOP) == 1
    assert unsigned(client, goblin, "ARLEN", "top") == TOP   # TOP - 1 + 1


def test_arlen_is_highest_index_plus_one_and_arcount_the_set_slots(client):
    client.arset("sparse", 0, "a")
    client.arset("sparse", 1000000, "b")
    assert client.arlen("sparse") == 1000001
    assert client.arcount("sparse") == 2
    assert client.arlen("missing") == 0 and client.arcount("missing") == 0
    client.ardel("sparse", 1000000)
    assert client.arlen("sparse") == 1


# ---- ranges ----

def test_argetrange_walks_positions_with_holes_in_either_direction(client):
    client.armset("seq", {0: "a", 1: "b", 3: "d"})
    assert client.argetrange("seq", 0, 3) == [b"a", b"b", None, b"d"]
    assert client.argetrange("seq", 3, 0) == [b"d", None, b"b", b"a"]
    assert client.argetrange("seq", 2, 6) == [None, b"d", None, None, None]
    assert client.argetrange("seq", 5, 5) == [None]
    assert client.argetrange("missing", 0, 2) == [None, None, None]
    assert client.argetrange("seq", TOP, TOP) == [None]
    assert error_of(client.argetrange, "seq", 0, 1000000) == "range exceeds maximum of 1000000 items"
    assert len(client.argetrange("seq", 10, 1000009)) == 1000000


def test_arscan_returns_only_set_slots_as_pairs(client):
    client.armset("s", {0: "a", 5: "b", 9: "c"})
    assert client.arscan("s", 0, 10) == [[0, b"a"], [5, b"b"], [9, b"c"]]
    assert client.arscan("s", 0, 10, limit=2) == [[0, b"a"], [5, b"b"]]
    assert client.arscan("s", 10, 0) == [[9, b"c"], [5, b"b"], [0, b"a"]]
    assert client.arscan("s", 10, 0, limit=1) == [[9, b"c"]]
    assert client.arscan("s", 1, 4) == []
    assert client.arscan("missing", 0, 10) == []
    assert client.execute_command("ARSCAN", "s", 0, 5) == [[0, b"a"], [5, b"b"]]
    assert error_of(client.arscan, "s", 0, 10, limit=0) == "LIMIT must be positive"
    assert error_of(client.execute_command, "ARSCAN", "s", 0, 10, "LIMITS", 1) == "syntax error"
    assert error_of(client.execute_command, "ARSCAN", "s", 0, 10, "LIMIT", "x") == \
        "value is not an integer or out of range"
    assert error_of(client.execute_command, "ARSCAN", "s", 0, 10, "LIMIT") == \
        "wrong number of arguments for 'arscan' command"


def test_ardel_and_ardelrange_delete_and_the_last_slot_takes_the_key(client):
    client.arset("d", 0, *"abcdefghij")
    assert client.ardel("d", 1, 1, 3, 500) == 2
    assert client.ardelrange("d", (8, 5)) == 4               # a reversed pair is the same range
    assert client.arscan("d", 0, 100) == [[0, b"a"], [2, b"c"], [4, b"e"], [9, b"j"]]
    assert client.ardelrange("d", (0, 0), (9, 20)) == 2
    assert client.ardel("missing", 1) == 0 and client.ardelrange("missing", (0, 5)) == 0
    assert error_of(client.execute_command, "ARDEL", "d", "x") == "invalid array index"
    assert error_of(client.execute_command, "ARDELRANGE", "d", 0) == \
        "wrong number of arguments for 'ardelrange' command"
    assert error_of(client.execute_command, "ARDELRANGE", "d", 0, 1, 2) == \
        "wrong number of arguments for 'ardelrange' command"
    assert client.ardelrange("d", (0, TOP)) == 2
    assert client.exists("d") == 0 and client.type("d") == b"none"
    client.arset("e", 3, "x")
    assert client.ardel("e", 3) == 1 and client.exists("e") == 0


def test_huge_sparse_ranges_cost_the_set_slots_not_the_span(client):
    for i in range(50):
        client.arset("wide", i * 10**15, str(i))
    assert len(client.arscan("wide", 0, TOP)) == 50
    assert client.arop("wide", 0, TOP, "USED") == 50
    assert client.ardelrange("wide", (10**15, TOP)) == 49
    assert client.arscan("wide", 0, TOP) == [[0, b"0"]]


# ---- ARGREP ----

def test_argrep_matches_with_every_predicate_kind(client):
    client.arset("g", 0, "apple", "banana", "cherry", "Apricot", "grape")
    assert client.argrep("g", "-", "+", [("EXACT", "apple")]) == [0]
    assert client.argrep("g", "-", "+", [("MATCH", "an")]) == [1]
    assert client.argrep("g", "-", "+", [("GLOB", "*e")]) == [0, 4]
    assert client.argrep("g", "-", "+", [("RE", "^(a|b)")]) == [0, 1]
    assert client.argrep("g", "-", "+", [("RE", "^a")], nocase=True) == [0, 3]
    assert client.argrep("g", "-", "+", [("MATCH", "ap"), ("MATCH", "p")], combinator="AND") == [0, 4]
    assert client.argrep("g", "-", "+", [("MATCH", "an"), ("EXACT", "grape")]) == [1, 4]
    assert client.argrep("g", "+", "-", [("MATCH", "a")], limit=2) == [4, 1]
    assert client.argrep("g", 1, 2, [("MATCH", "r")], withvalues=True) == [[2, b"cherry"]]
    assert client.argrep("missing", "-", "+", [("MATCH", "a")]) == []
    assert error_of(client.execute_command, "ARGREP", "g", "-", "+", "LIMIT", 2) == "syntax error"
    assert error_of(client.execute_command, "ARGREP", "g", "-", "+", "MATCH", "a", "BOGUS") == "syntax error"
    assert error_of(client.execute_command, "ARGREP", "g", "-", "+", "RE", "") == "regular expression is empty"
    assert error_of(client.execute_command, "ARGREP", "g", "-", "+", "RE", r"(a)\1") == \
        "regular expression backreferences are not supported"
    assert error_of(client.execute_command, "ARGREP", "g", "-", "+", "RE", "(").startswith("invalid regular expression")
    assert error_of(client.execute_command, "ARGREP", "g", "x", "+", "MATCH", "a") == "invalid array index"
    assert error_of(client.execute_command, "ARGREP", "g", 0, "+", "MATCH", "a", "LIMIT", 0) == "LIMIT must be positive"


# ---- AROP ----

def test_arop_aggregates_the_set_slots_of_a_range(client):
    client.arset("n", 0, "1", "2", "3.5", "x", "-4")
    assert client.arop("n", 0, 10, "SUM") == b"2.5"
    assert client.arop("n", 0, 10, "MIN") == b"-4"
    assert client.arop("n", 10, 0, "MAX") == b"3.5"
    assert client.arop("n", 0, 2, "SUM") == b"6.5"
    assert client.arop("n", 0, 10, "AND") == 1 & 2 & 3 & -4
    assert client.arop("n", 0, 10, "OR") == 1 | 2 | 3 | -4
    assert client.arop("n", 0, 10, "XOR") == 1 ^ 2 ^ 3 ^ -4
    assert client.arop("n", 0, 10, "MATCH", "x") == 1
    assert client.arop("n", 0, 10, "USED") == 5
    assert client.arop("n", 3, 3, "SUM") is None           # no number in range
    assert client.arop("missing", 0, 10, "SUM") is None
    assert client.arop("missing", 0, 10, "USED") == 0
    assert error_of(client.arop, "n", 0, 10, "AVG") == "unknown operation"
    assert error_of(client.arop, "n", 0, 10, "MATCH") == "MATCH requires a value argument"
    assert error_of(client.execute_command, "AROP", "n", 0, 10, "SUM", "extra") == \
        "wrong number of arguments for 'arop' command"


# ---- the append cursor ----

def test_arinsert_appends_after_the_cursor_which_arset_never_moves(client):
    assert client.arnext("c") == 0
    assert client.arinsert("c", "a", "b") == 1
    assert client.arnext("c") == 2
    client.arset("c", 10, "far")                          # positional: the cursor stays
    assert client.arnext("c") == 2
    assert client.arinsert("c", "c") == 2
    client.ardel("c", 2)                                   # deleting never moves it either
    assert client.arinsert("c", "d") == 3
    assert client.arseek("c", 100) == 1
    assert client.arinsert("c", "e") == 100
    assert client.arseek("c", 0) == 1
    assert client.arnext("c") == 0
    assert client.arseek("missing", 5) == 0 and client.exists("missing") == 0
    assert client.argetrange("c", 0, 3) == [b"a", b"b", None, b"d"]


def test_the_cursor_at_the_top_of_the_index_space(client, goblin):
    client.arset("t", 0, "x")
    assert client.arseek("t", 2**64 - 1) == 1              # ARSEEK alone takes 2^64-1
    assert client.arnext("t") is None
    assert client.arinfo("t")["next-insert-index"] == 0
    assert error_of(client.arinsert, "t", "y") == "insert index overflow"
    assert client.arseek("t", TOP - 1) == 1
    assert unsigned(client, goblin, "ARNEXT", "t") == TOP - 1
    assert unsigned(client, goblin, "ARINSERT", "t", "y") == TOP - 1
    assert unsigned(client, goblin, "ARNEXT", "t") == TOP
    assert error_of(client.arinsert, "t", "1", "2") == "insert index overflow"
    assert client.arget("t", TOP) is None                  # failed whole
    assert unsigned(client, goblin, "ARINSERT", "t", "z") == TOP
    assert client.arnext("t") is None
    assert error_of(client.execute_command, "ARSEEK", "t", 2**64) == "invalid array index"


def test_arring_wraps_within_its_size_and_repacks_when_resized(client):
    assert client.arring("r", 3, "a", "b", "c", "d") == 0   # d overwrote slot 0
    assert client.argetrange("r", 0, 2) == [b"d", b"b", b"c"]
    assert client.arlastitems("r", 3) == [b"b", b"c", b"d"]
    assert client.arlastitems("r", 3, rev=True) == [b"d", b"c", b"b"]
    assert client.arring("r", 2, "e") == 0                  # shrink: keeps the newest (c, d) then appends
    assert client.arlastitems("r", 2) == [b"d", b"e"]
    assert client.arcount("r") == 2
    assert client.arring("r", 4, "f", "g") == 3             # grow after a wrap: repack, then append
    assert client.arlastitems("r", 4) == [b"d", b"e", b"f", b"g"]
    assert error_of(client.execute_command, "ARRING", "r", 0, "x") == "size must be positive"
    assert error_of(client.execute_command, "ARRING", "r", "abc", "x") == "invalid size"


def test_arlastitems_walks_positions_back_from_the_cursor(client):
    client.arinsert("l", "a", "b", "c", "d")
    assert client.arlastitems("l", 2) == [b"c", b"d"]
    assert client.arlastitems("l", 10) == [b"a", b"b", b"c", b"d"]
    assert client.arlastitems("l", 0) == [] and client.arlastitems("l", -3) == []
    assert client.arlastitems("missing", 3) == []
    client.arseek("l", 2)                                   # the anchor is index 1 now
    assert client.arlastitems("l", 3) == [b"d", b"a", b"b"]
    assert error_of(client.execute_command, "ARLASTITEMS", "l", "x") == "invalid COUNT"
    assert error_of(client.execute_command, "ARLASTITEMS", "l", 2, "FWD") == "syntax error"
    # COUNT is clamped to the number of set slots, as Redis's t_array.c does: holes may be
    # walked, never more positions than values (so a huge COUNT is no huge reply)
    client.arset("l2", 5000000, "x")
    assert client.arlastitems("l2", 2000000) == [b"x"]
    client.arset("h", 0, "x")
    client.arset("h", 10, "y")
    assert client.arlastitems("h", 5) == [None, b"y"]


# ---- ARINFO, slices ----

def test_arinfo_reports_counts_cursor_and_slices(client):
    client.arinsert("i", "a", "b")
    client.arset("i", 5000, "far")
    info = client.arinfo("i")
    assert info["count"] == 3 and info["len"] == 5001 and info["next-insert-index"] == 2
    assert set(info) >= {"count", "len", "next-insert-index"}
    if client.object("encoding", "i") == b"sliced-array":
        assert info["slices"] == 2 and info["slice-size"] == 1024
        full = client.arinfo("i", full=True)
        assert full["sparse-slices"] == 2 and full["dense-slices"] == 0
    assert error_of(client.arinfo, "missing") == "no such key"
    assert error_of(client.execute_command, "ARINFO", "i", "FULLER") == "syntax error"


def test_classic_slices_turn_dense_as_they_fill_and_sparse_as_they_empty(client):
    if client.arset("probe", 0, "x") and client.object("encoding", "probe") != b"sliced-array":
        pytest.skip("the classic engine's slices")
    client.armset("f", {i: b"v%04d" % i for i in range(0, 4096, 16)})
    full = client.arinfo("f", full=True)
    assert (full["sparse-slices"], full["dense-slices"]) == (4, 0)
    client.arset("f", 0, *[b"w%04d" % i for i in range(1024)])
    full = client.arinfo("f", full=True)
    assert (full["sparse-slices"], full["dense-slices"]) == (3, 1)
    assert client.arget("f", 517) == b"w0517"
    client.ardelrange("f", (0, 999))
    full = client.arinfo("f", full=True)
    assert (full["sparse-slices"], full["dense-slices"]) == (4, 0)
    assert client.arscan("f", 990, 1030) == [[1000, b"w1000"], [1001, b"w1001"]] + \
        [[i, b"w%04d" % i] for i in range(1002, 1024)] + [[1024, b"v1024"]]


# ---- the key commands, types ----

def test_wrongtype_both_ways(client):
    client.set("str", "v")
    for argv in (("ARSET", "str", 0, "x"), ("ARGET", "str", 0), ("ARLEN", "str"), ("ARINSERT", "str", "x"),
                 ("ARSCAN", "str", 0, 5), ("ARINFO", "str"), ("ARDEL", "str", 0), ("ARSEEK", "str", 1)):
        assert error_of(client.execute_command, *argv).startswith("WRONGTYPE"), argv
    client.arset("arr", 0, "x")
    assert error_of(client.get, "arr").startswith("WRONGTYPE")
    assert error_of(client.lpush, "arr", "x").startswith("WRONGTYPE")


def test_type_encoding_memory_copy_rename_and_scan_cover_arrays(client, goblin):
    client.arset("src", 0, "a", "b")
    client.arset("src", 100000, "far")
    client.arseek("src", 2)
    assert client.arinsert("src", "c") == 2
    assert client.type("src") == b"array"
    assert client.object("encoding", "src") == (b"sliced-array" if goblin.array_implementation == "classic"
                                                  else client.object("encoding", "src"))
    assert client.memory_usage("src") > 0
    assert client.copy("src", "dst") is True
    client.arset("dst", 0, "changed")
    assert client.arget("src", 0) == b"a"
    assert client.arnext("dst") == 3
    assert client.rename("dst", "moved") is True
    assert client.arscan("moved", 0, TOP) == [[0, b"changed"], [1, b"b"], [2, b"c"], [100000, b"far"]]
    assert sorted(client.scan_iter(_type="array")) == [b"moved", b"src"]


def test_dump_restore_keeps_slots_and_cursor(client, goblin):
    client.arset("d", 0, *[str(i) for i in range(2000)])
    client.arset("d", TOP, "top")
    client.arseek("d", 77)
    dumped = client.dump("d")
    client.restore("r", 0, dumped)
    assert client.arcount("r") == 2001 and unsigned(client, goblin, "ARLEN", "r") == 2**64 - 1
    assert client.arnext("r") == 77
    assert client.argetrange("r", 1995, 1999) == [b"1995", b"1996", b"1997", b"1998", b"1999"]
    assert client.arget("r", TOP) == b"top"


def test_expiry_covers_arrays(client):
    client.arset("e", 0, "x")
    assert client.expire("e", 100) is True
    assert 0 < client.ttl("e") <= 100
    client.arset("e", 1, "y")                              # writing keeps the TTL
    assert client.ttl("e") > 0
    assert client.execute_command("PEXPIREAT", "e", 1) == 1   # in the past: gone
    assert client.exists("e") == 0 and client.arget("e", 0) is None


def test_a_write_counts_in_the_dirty_counter_and_wakes_no_one_wrongly(client):
    before = int(client.info("persistence").get("rdb_changes_since_last_save", 0))
    client.arset("w", 0, "a", "b", "c")
    after = int(client.info("persistence").get("rdb_changes_since_last_save", 0))
    assert after - before == 3


# ---- batches ----

def test_armset_many_and_armget_many_take_numpy_indexes(ring):
    client = ring   # RingClient's batch calls, one C call each (as hset_many)
    indexes = numpy.arange(0, 16 * 3000, 16, dtype=numpy.uint64)
    values = numpy.array([b"%016d" % i for i in range(3000)], dtype="S16")
    assert client.armset_many("batch", indexes, values) == 3000
    assert client.armset_many("batch", indexes[:10], values[:10]) == 0
    got = client.armget_many("batch", numpy.concatenate([indexes, numpy.array([1, TOP], dtype=numpy.uint64)]))
    assert got[:3000] == [bytes(v) for v in values] and got[3000:] == [None, None]
    assert client.arcount("batch") == 3000 and client.arlen("batch") == 16 * 2999 + 1
    with pytest.raises(ValueError):
        client.armset_many("batch", indexes[:3], values[:2])


# ---- a model test ----

def test_random_operations_agree_with_a_dict(client):
    rng = random.Random(19)
    model: dict[int, bytes] = {}
    regions = [0, 5000, 2**40, 2**63 - 3000]
    if isinstance(client, RingClient):    # RESP's replies past 2^63-1 are checked on the wire above
        regions.append(TOP - 3000)
    for step in range(1500):
        base = rng.choice(regions)
        index = base + rng.randrange(3000)
        action = rng.random()
        if action < 0.45:
            values = [b"%d-%d" % (step, k) * rng.randrange(1, 6) for k in range(rng.randrange(1, 4))]
            if index + len(values) - 1 > TOP:
                continue
            new = sum(1 for k in range(len(values)) if index + k not in model)
            assert client.arset("model", index, *values) == new
            model.update({index + k: v for k, v in enumerate(values)})
        elif action < 0.65:
            indexes = [base + rng.randrange(3000) for _ in range(3)]
            expect = len({i for i in indexes if i in model})
            assert client.ardel("model", *indexes) == expect
            for i in indexes:
                model.pop(i, None)
        elif action < 0.7:
            lo, hi = sorted((index, base + rng.randrange(3000)))
            doomed = [i for i in model if lo <= i <= hi]
            assert client.ardelrange("model", (hi, lo)) == len(doomed)
            for i in doomed:
                del model[i]
        elif action < 0.85:
            lo = index
            hi = min(TOP, lo + rng.randrange(200))
            assert client.arscan("model", lo, hi) == sorted([i, v] for i, v in model.items() if lo <= i <= hi)
        else:
            assert client.arget("model", index) == model.get(index)
        if step % 100 == 0:
            assert client.arcount("model") == len(model)
            assert client.arlen("model") == (max(model) + 1 if model else 0)
    assert client.arcount("model") == len(model)


# ---- redis-py's own array methods against goblin ----

def test_redis_py_8_array_methods_work_against_goblin(goblin):
    import redis
    from redis.commands.core import ArrayAggregateOperations, ArrayPredicateCombinator, ArrayPredicateType

    r = redis.Redis(port=goblin.port, socket_timeout=10)
    try:
        r.delete("py")
        assert r.arset("py", 0, "login", "click", "purchase") == 3
        assert r.armset("py", {10: "x", 20: "y"}) == 2
        assert r.armget("py", 0, 10, 11) == [b"login", b"x", None]
        assert r.arlen("py") == 21 and r.arcount("py") == 5
        assert r.arscan("py", 0, 10, limit=2) == [[0, b"login"], [1, b"click"]]
        assert r.argrep("py", 0, 30, [(ArrayPredicateType.MATCH, "c"), (ArrayPredicateType.GLOB, "*k")],
                        combinator=ArrayPredicateCombinator.AND) == [1]
        assert r.arop("py", 0, 30, ArrayAggregateOperations.USED) == 5
        assert r.arinsert("py", "next") == 0                 # the cursor starts before 0
        assert r.arnext("py") == 1
        assert r.arlastitems("py", 2, rev=True) == [b"next", b"y"]   # back from the cursor, wrapping
        info = r.arinfo("py")
        info = {k.decode() if isinstance(k, bytes) else k: v for k, v in
                (info.items() if isinstance(info, dict) else zip(info[::2], info[1::2]))}
        assert info["count"] == 5 and info["len"] == 21 and info["next-insert-index"] == 1
        assert r.ardelrange("py", (0, 2), (20, 10)) == 5
        assert r.exists("py") == 0
    finally:
        r.close()
