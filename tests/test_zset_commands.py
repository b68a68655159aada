"""Every sorted-set command over both transports (the `client` fixture is parametrised over the
ring and RESP), with sets on both sides of the compact/standard threshold (128 members; one
65-byte member also converts), checked against Redis's documented replies and error texts:
score formatting (17 significant digits, inf), infinite and exclusive ranges, NaN refused,
ZADD's flags, every range form, pops, set operations, ZSCAN, ZRANDMEMBER, and the key commands
that must cover sorted sets (TYPE, OBJECT ENCODING, SCAN TYPE, COPY, RENAME, MOVE, DUMP/RESTORE,
MEMORY USAGE, WRONGTYPE, CONFIG SET zset-max-listpack-*, the dirty counter)."""

import math

import pytest

from goblin_ring import ResponseError

SIZES = [5, 300]   # compact ("listpack"), and standard after conversion ("skiplist")


@pytest.fixture(params=SIZES, ids=lambda n: f"{n}members")
def size(request):
    return request.param


def members(n):
    """Members m0.. with scores 0, 1, 2, ... (member i has score i)."""
    return {f"m{i:04d}".encode(): float(i) for i in range(n)}


def filled(client, size, key="z"):
    mapping = members(size)
    assert client.zadd(key, mapping) == size
    return mapping


def encoding(client, key):
    return client.execute_command("OBJECT", "ENCODING", key)


def encoding_for(size):
    return b"listpack" if size <= 128 else b"skiplist"


def test_zadd_counts_new_members_and_zscore_reads_them_back(client, size):
    filled(client, size)
    assert client.zadd("z", {"m0000": 0.5, "new": -1}) == 1
    assert client.zadd("z", {"m0001": 7, "new2": 1}, ch=True) == 2
    assert client.zscore("z", "m0000") == 0.5
    assert client.zscore("z", "missing") is None
    assert client.zscore("nokey", "a") is None
    assert client.zcard("z") == size + 2
    assert client.zmscore("z", ["m0000", "nope", "new"]) == [0.5, None, -1.0]
    assert encoding(client, "z") == encoding_for(size + 2)


def test_scores_are_formatted_as_redis_formats_them(client):
    client.zadd("z", {"a": 1.1, "b": float("inf"), "c": float("-inf"), "d": 3, "e": 1e20, "f": -0.0})
    raw = client.execute_command("ZRANGE", "z", 0, -1, "WITHSCORES")
    assert raw == [b"c", b"-inf", b"f", b"0", b"a", b"1.1000000000000001", b"d", b"3", b"e", b"1e+20", b"b", b"inf"]
    assert client.execute_command("ZSCORE", "z", "a") == b"1.1000000000000001"
    assert client.execute_command("ZINCRBY", "z", "0.1", "d") == b"3.1000000000000001"


def test_zadd_flags_nx_xx_gt_lt_ch_incr(client, size):
    filled(client, size)
    assert client.zadd("z", {"m0002": 100, "fresh": 1}, nx=True) == 1
    assert client.zscore("z", "m0002") == 2
    assert client.zadd("z", {"m0002": 100, "absent": 1}, xx=True) == 0
    assert client.zscore("z", "m0002") == 100 and client.zscore("z", "absent") is None
    assert client.zadd("z", {"m0002": 50}, gt=True, ch=True) == 0
    assert client.zadd("z", {"m0002": 150}, gt=True, ch=True) == 1
    assert client.zadd("z", {"m0002": 10}, lt=True, ch=True) == 1
    assert client.zadd("z", {"m0002": 5}, incr=True) == 15.0
    assert client.zadd("z", {"m0002": 5}, incr=True, nx=True) is None
    assert client.zadd("z", {"other": 5}, incr=True, xx=True) is None
    assert client.zadd("nokey", {"a": 1}, xx=True) == 0 and client.exists("nokey") == 0
    assert client.zincrby("z", 2.5, "m0002") == 17.5
    assert client.zincrby("z", 3, "brand-new") == 3.0


def test_zadd_and_zincrby_refuse_bad_input_with_redis_texts(client):
    client.zadd("z", {"a": float("inf")})
    cases = [
        (("ZADD", "z", "NX", "XX", 1, "a"), "^ERR XX and NX options at the same time are not compatible$"),
        (("ZADD", "z", "GT", "LT", 1, "a"), "^ERR GT, LT, and/or NX options at the same time are not compatible$"),
        (("ZADD", "z", "NX", "GT", 1, "a"), "^ERR GT, LT, and/or NX options at the same time are not compatible$"),
        (("ZADD", "z", "INCR", 1, "a", 2, "b"), "^ERR INCR option supports a single increment-element pair$"),
        (("ZADD", "z", "nan", "a"), "^ERR value is not a valid float$"),
        (("ZADD", "z", "abc", "a"), "^ERR value is not a valid float$"),
        (("ZADD", "z", 1, "a", 2), "^ERR syntax error$"),
        (("ZADD", "z", "INCR", "-inf", "a"), r"^ERR resulting score is not a number \(NaN\)$"),
        (("ZINCRBY", "z", "x", "a"), "^ERR value is not a valid float$"),
        (("ZADD", "z"), "^ERR wrong number of arguments for 'zadd' command$"),
        (("ZSCORE", "z"), "^ERR wrong number of arguments for 'zscore' command$"),
        (("ZCOUNT", "z", "x", 1), "^ERR min or max is not a float$"),
        (("ZCOUNT", "z", "(nan", 1), "^ERR min or max is not a float$"),
        (("ZLEXCOUNT", "z", "a", "+"), "^ERR min or max not valid string range item$"),
        (("ZRANGE", "z", "x", 1), "^ERR value is not an integer or out of range$"),
        (("ZRANGE", "z", 0, 1, "LIMIT", 0, 1), "^ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX$"),
        (("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"), "^ERR syntax error, WITHSCORES not supported in combination with BYLEX$"),
        (("ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"), "^ERR syntax error$"),
        (("ZPOPMIN", "z", -1), "^ERR value is out of range, must be positive$"),
        (("ZMPOP", 0, "z", "MIN"), "^ERR numkeys should be greater than 0$"),
        (("ZMPOP", 1, "z", "MIDDLE"), "^ERR syntax error$"),
        (("ZMPOP", 1, "z", "MIN", "COUNT", 0), "^ERR count should be greater than 0$"),
        (("ZUNIONSTORE", "d", 0, "z"), "^ERR at least 1 input key is needed for 'zunionstore' command$"),
        (("ZUNION", 2, "z"), "^ERR syntax error$"),
        (("ZINTER", 1, "z", "WEIGHTS", "x"), "^ERR weight value is not a float$"),
        (("ZUNION", 1, "z", "AGGREGATE", "avg"), "^ERR syntax error$"),
        (("ZDIFF", 1, "z", "WEIGHTS", 1), "^ERR syntax error$"),
        (("ZINTERCARD", 1, "z", "LIMIT", -1), "^ERR LIMIT can't be negative$"),
        (("ZSCAN", "z", "x"), "^ERR invalid cursor$"),
        (("ZRANK", "z", "a", "extra"), "^ERR syntax error$"),
    ]
    for argv, error in cases:
        with pytest.raises(ResponseError, match=error):
            client.execute_command(*argv)


def test_a_score_written_out_in_full_is_read_as_redis_reads_it(client):
    """DBL_MAX's 309 digits are a valid score (Redis's strtod has no length limit); 400 digits
    overflow to infinity, which Redis refuses as "not a valid float"."""
    client.delete("z")
    full = "%.0f" % 1.7976931348623157e308
    assert len(full) == 309
    assert client.execute_command("ZADD", "z", full, "max", "1", "one") == 2
    assert client.zscore("z", "max") == 1.7976931348623157e308
    assert client.execute_command("ZRANGEBYSCORE", "z", full, "+inf") == [b"max"]
    assert client.execute_command("ZCOUNT", "z", "(" + full, "+inf") == 0
    with pytest.raises(ResponseError, match="not a valid float"):
        client.execute_command("ZADD", "z", "1" * 400, "overflow")


def test_zrank_zrevrank_with_and_without_scores(client, size):
    filled(client, size)
    assert client.zrank("z", "m0003") == 3
    assert client.zrevrank("z", "m0003") == size - 4
    assert client.zrank("z", "nope") is None and client.zrank("nokey", "a") is None
    assert client.zrank("z", "m0003", withscore=True) == [3, 3.0]
    assert client.zrevrank("z", "m0000", withscore=True) == [size - 1, 0.0]
    assert client.zrank("z", "nope", withscore=True) is None


def test_zrange_by_rank_score_and_lex_with_rev_limit_and_scores(client, size):
    filled(client, size)
    assert client.zrange("z", 0, 2) == [b"m0000", b"m0001", b"m0002"]
    assert client.zrange("z", -2, -1, withscores=True) == [(b"m%04d" % (size - 2), size - 2.0), (b"m%04d" % (size - 1), size - 1.0)]
    assert client.zrange("z", 0, 1, desc=True) == [b"m%04d" % (size - 1), b"m%04d" % (size - 2)]
    assert client.zrange("z", 5, 1) == [] and client.zrange("z", size, size + 5) == []
    assert client.zrange("z", "(1", 3, byscore=True) == [b"m0002", b"m0003"]
    assert client.zrange("z", "+inf", "-inf", byscore=True, desc=True, offset=1, num=2) == [b"m%04d" % (size - 2), b"m%04d" % (size - 3)]
    assert client.zrangebyscore("z", "-inf", "(2", withscores=True) == [(b"m0000", 0.0), (b"m0001", 1.0)]
    assert client.zrangebyscore("z", 1, 4, start=1, num=2) == [b"m0002", b"m0003"]
    assert client.zrangebyscore("z", 1, 4, start=-1, num=2) == []
    assert client.zrangebyscore("z", 1, 4, start=1, num=-1) == [b"m0002", b"m0003", b"m0004"]
    assert client.zrevrangebyscore("z", 3, "(1") == [b"m0003", b"m0002"]
    assert client.zrevrange("z", 0, 0, withscores=True) == [(b"m%04d" % (size - 1), size - 1.0)]
    assert client.zrange("z", "[m0001", "(m0003", bylex=True) == [b"m0001", b"m0002"]
    assert client.zrange("nokey", 0, -1) == []
    assert client.zcount("z", "(0", "+inf") == size - 1
    assert client.zcount("z", 3, 2) == 0 and client.zcount("z", "(2", 2) == 0


def test_lex_ranges_over_equal_scores(client):
    client.zadd("l", {m: 0 for m in ["a", "b", "c", "d", "e"]})
    assert client.zrangebylex("l", "-", "+") == [b"a", b"b", b"c", b"d", b"e"]
    assert client.zrangebylex("l", "(b", "[d") == [b"c", b"d"]
    assert client.zrangebylex("l", "-", "+", start=1, num=2) == [b"b", b"c"]
    assert client.zrevrangebylex("l", "+", "(c") == [b"e", b"d"]
    assert client.zlexcount("l", "[b", "+") == 4
    assert client.zlexcount("l", "+", "-") == 0
    assert client.zremrangebylex("l", "[a", "(c") == 2
    assert client.zrange("l", 0, -1) == [b"c", b"d", b"e"]


def test_zrangestore_stores_a_range_and_an_empty_range_deletes_the_destination(client, size):
    filled(client, size)
    assert client.zrangestore("d", "z", 1, 3) == 3
    assert client.zrange("d", 0, -1, withscores=True) == [(b"m0001", 1.0), (b"m0002", 2.0), (b"m0003", 3.0)]
    assert encoding(client, "d") == b"listpack"
    assert client.zrangestore("d", "z", "(2", "+inf", byscore=True, desc=False, offset=0, num=1) == 1
    assert client.zrangestore("d", "z", 10_000, 20_000) == 0
    assert client.exists("d") == 0


def test_zrem_and_zremrangeby_delete_and_an_emptied_set_disappears(client, size):
    filled(client, size)
    assert client.zrem("z", "m0000", "m0001", "nope") == 2
    assert client.zremrangebyrank("z", 0, 1) == 2
    assert client.zrange("z", 0, 0) == [b"m0004"]
    assert client.zremrangebyscore("z", "(3", 4) == 1
    assert client.zcard("z") == size - 5
    assert client.zremrangebyrank("z", 0, -1) == size - 5
    assert client.exists("z") == 0
    assert client.zrem("z", "a") == 0


def test_zpopmin_zpopmax_and_zmpop(client, size):
    filled(client, size)
    assert client.zpopmin("z") == [(b"m0000", 0.0)]
    assert client.zpopmax("z", 2) == [(b"m%04d" % (size - 1), size - 1.0), (b"m%04d" % (size - 2), size - 2.0)]
    assert client.zpopmin("z", 0) == []
    assert client.zpopmin("nokey") == []
    assert client.zmpop(2, ["nokey", "z"], min=True, count=2) == [b"z", [[b"m0001", 1.0], [b"m0002", 2.0]]]
    assert client.zmpop(1, ["nokey"], max=True) is None
    rest = client.zpopmin("z", 10_000)
    assert len(rest) == size - 5 and (not rest or rest[-1][0] == b"m%04d" % (size - 3))
    assert client.exists("z") == 0


def test_zrandmember_distinct_repeated_and_with_scores(client, size):
    mapping = filled(client, size)
    assert client.zrandmember("z") in mapping
    assert client.zrandmember("nokey") is None and client.zrandmember("nokey", 3) == []
    picked = client.zrandmember("z", 4)
    assert len(picked) == 4 == len(set(picked)) and set(picked) <= set(mapping)
    assert len(client.zrandmember("z", -10)) == 10
    assert sorted(client.zrandmember("z", size + 10)) == sorted(mapping)
    for member, score in client.zrandmember("z", 3, withscores=True):
        assert mapping[member] == score


def test_zscan_visits_every_member_with_its_score_and_match(client, size):
    mapping = filled(client, size)
    assert dict(client.zscan_iter("z")) == mapping
    assert dict(client.zscan_iter("z", match="m000*", count=3)) == {m: s for m, s in mapping.items() if m.startswith(b"m000")}
    assert client.zscan("nokey") == (0, [])


def test_zunion_zinter_zdiff_with_weights_and_aggregate_and_their_store_forms(client, size):
    filled(client, size, "a")
    client.zadd("b", {"m0001": 10, "m0002": 20, "x": 5})
    assert client.zunion(["a", "b"], withscores=True)[:3] == [(b"m0000", 0.0), (b"m0003", 3.0), (b"m0004", 4.0)]
    assert client.zinter(["a", "b"], withscores=True) == [(b"m0001", 11.0), (b"m0002", 22.0)]
    assert client.zinter({"a": 2, "b": 0.5}, aggregate="MAX", withscores=True) == [(b"m0001", 5.0), (b"m0002", 10.0)]
    assert client.zinter(["a", "b"], aggregate="MIN") == [b"m0001", b"m0002"]
    assert client.zdiff(["b", "a"], withscores=True) == [(b"x", 5.0)]
    assert client.zunionstore("u", ["a", "b", "nokey"]) == size + 1
    assert client.zscore("u", "m0002") == 22.0
    assert encoding(client, "u") == encoding_for(size + 1)
    assert client.zinterstore("i", ["a", "b"]) == 2 and encoding(client, "i") == b"listpack"
    assert client.zdiffstore("dd", ["a", "b"]) == size - 2
    assert client.zinterstore("i", ["a", "nokey"]) == 0 and client.exists("i") == 0
    assert client.zintercard(2, ["a", "b"]) == 2
    assert client.zintercard(2, ["a", "b"], limit=1) == 1


def test_wrongtype_both_ways_and_arity(client):
    client.set("s", "x")
    client.zadd("z", {"a": 1})
    for call in (lambda: client.zadd("s", {"a": 1}), lambda: client.zscore("s", "a"), lambda: client.zrange("s", 0, -1),
                 lambda: client.zrank("s", "a"), lambda: client.zpopmin("s"), lambda: client.zunion(["z", "s"]),
                 lambda: client.zscan("s"), lambda: client.zrem("s", "a"), lambda: client.zcard("s")):
        with pytest.raises(ResponseError, match="^WRONGTYPE"):
            call()
    with pytest.raises(ResponseError, match="^WRONGTYPE"):
        client.get("z")
    with pytest.raises(ResponseError, match="^ERR wrong number of arguments for 'zrange' command$"):
        client.execute_command("ZRANGE", "z", 0)


def test_type_encoding_scan_type_memory_copy_rename_move_and_dump_restore_cover_sorted_sets(client, size):
    mapping = filled(client, size)
    client.set("s", "x")
    assert client.type("z") == b"zset"
    assert encoding(client, "z") == encoding_for(size)
    assert list(client.scan_iter(_type="zset")) == [b"z"]
    assert client.memory_usage("z") > size * 8
    assert client.copy("z", "c") is True
    client.zadd("c", {"only-in-copy": 1})
    assert client.zcard("z") == size and client.zcard("c") == size + 1
    assert encoding(client, "c") == encoding_for(size + 1)
    payload = client.dump("z")
    assert client.restore("r", 0, payload) is True
    assert client.zrange("r", 0, -1, withscores=True) == sorted(mapping.items(), key=lambda p: p[1])
    assert encoding(client, "r") == encoding_for(size)
    assert client.rename("r", "r2") is True
    assert client.move("r2", 3) is True
    client.select(3)
    assert client.zcard("r2") == size
    client.flushdb()
    client.select(0)


def test_conversion_past_the_entry_and_value_limits_and_config_set(client):
    client.zadd("z", {f"m{i}": i for i in range(128)})
    assert encoding(client, "z") == b"listpack"
    client.zadd("z", {"one-more": 1})
    assert encoding(client, "z") == b"skiplist"
    client.zadd("v", {"x" * 64: 1})
    assert encoding(client, "v") == b"listpack"
    client.zadd("v", {"y" * 65: 1})
    assert encoding(client, "v") == b"skiplist"
    try:
        assert client.execute_command("CONFIG", "SET", "zset-max-listpack-entries", 2) == b"OK"
        client.zadd("c", {"a": 1, "b": 2})
        assert encoding(client, "c") == b"listpack"
        client.zadd("c", {"c": 3})
        assert encoding(client, "c") == b"skiplist"
        assert client.execute_command("CONFIG", "SET", "zset-max-ziplist-value", 3) == b"OK"
        client.zadd("w", {"abcd": 1})
        assert encoding(client, "w") == b"skiplist"
    finally:
        client.execute_command("CONFIG", "SET", "zset-max-listpack-entries", 128)
        client.execute_command("CONFIG", "SET", "zset-max-listpack-value", 64)


def test_every_sorted_set_write_counts_in_the_dirty_counter_as_redis_counts_it(client):
    def changes():
        return client.info("persistence")["rdb_changes_since_last_save"]
    before = changes()
    client.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert changes() == before + 3
    client.zadd("z", {"a": 1})          # no change
    client.zscore("z", "a")
    assert changes() == before + 3
    client.zadd("z", {"a": 5, "d": 1})  # one update, one add
    client.zrem("z", "a", "zz")
    assert changes() == before + 6
    client.zpopmin("z", 2)
    assert changes() == before + 8


def test_infinite_scores_and_ranges(client):
    client.zadd("z", {"lo": float("-inf"), "mid": 0, "hi": float("inf")})
    assert client.zrangebyscore("z", "-inf", "+inf") == [b"lo", b"mid", b"hi"]
    assert client.zrangebyscore("z", "(-inf", "(+inf") == [b"mid"]
    assert client.zcount("z", "-inf", "-inf") == 1
    assert client.zscore("z", "hi") == math.inf
    with pytest.raises(ResponseError, match=r"^ERR resulting score is not a number \(NaN\)$"):
        client.zincrby("z", float("-inf"), "hi")


def test_resp3_shapes_match_redis_pairs_for_scores_and_doubles(goblin, redis_server):
    from resp_wire import raw_connection

    def replies(port):
        with raw_connection(port) as conn:
            conn.request("HELLO", "3")
            conn.request("FLUSHALL")
            conn.request("ZADD", "z", "1", "a", "2.5", "b", "3", "c")
            return [conn.request("ZRANGE", "z", "0", "-1", "WITHSCORES"), conn.request("ZSCORE", "z", "a"),
                    conn.request("ZPOPMIN", "z"), conn.request("ZPOPMIN", "z", "1"),
                    conn.request("ZRANDMEMBER", "z", "1", "WITHSCORES"), conn.request("ZMSCORE", "z", "c", "x"),
                    conn.request("ZMPOP", "1", "z", "MAX"), conn.request("ZRANGE", "z", "0", "-1")]

    ours, theirs = replies(goblin.port), replies(redis_server.port)
    assert ours == theirs
    assert ours[0] == b"*3\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\nc\r\n,3\r\n"
    assert ours[2] == b"*2\r\n$1\r\na\r\n,1\r\n" and ours[3] == b"*1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"


def test_resp3_doubles_are_written_with_17_significant_digits_as_redis_7_0_writes_them(goblin, redis_server):
    from resp_wire import raw_connection

    def replies(port):
        with raw_connection(port) as conn:
            conn.request("HELLO", "3")
            conn.request("FLUSHALL")
            conn.request("ZADD", "z", "1.1", "a", "1e300", "b", "0.30000000000000004", "c", "inf", "d", "1e-320", "e")
            return [conn.request("ZSCORE", "z", member) for member in "abcde"] + [
                conn.request("ZINCRBY", "z", "0.1", "a"), conn.request("ZADD", "z", "INCR", "1", "a"),
                conn.request("ZRANGE", "z", "0", "1", "WITHSCORES"), conn.request("ZMSCORE", "z", "a", "b")]

    ours, theirs = replies(goblin.port), replies(redis_server.port)
    assert ours == theirs
    assert ours[:5] == [b",1.1000000000000001\r\n", b",1.0000000000000001e+300\r\n", b",0.30000000000000004\r\n",
                        b",inf\r\n", b",9.9998886718268301e-321\r\n"]
    assert ours[5] == b",1.2000000000000002\r\n"


@pytest.mark.parametrize("arguments, error", [
    (["0", "s"], "ERR at least 1 input key is needed for 'zintercard' command"),
    (["3", "s"], "ERR syntax error"),
    (["x", "s"], "ERR value is not an integer or out of range"),
    (["1", "nokey", "LIMIT", "-1"], "ERR LIMIT can't be negative"),
    (["1", "nokey", "LIMIT", "x"], "ERR LIMIT can't be negative"),
    (["1", "nokey", "WEIGHTS", "1"], "ERR syntax error"),
    (["1", "str", "LIMIT", "-1"], "WRONGTYPE Operation against a key holding the wrong kind of value"),
    (["2", "nokey", "str", "BAD"], "WRONGTYPE Operation against a key holding the wrong kind of value"),
])
def test_zintercard_checks_numkeys_then_the_key_types_then_its_options_as_redis(client, arguments, error):
    client.set("str", "x")
    with pytest.raises(ResponseError) as raised:
        client.execute_command("ZINTERCARD", *arguments)
    assert str(raised.value) == error
    client.zadd("z1", {"a": 1, "b": 2, "c": 3})
    client.zadd("z2", {"b": 1, "c": 1, "d": 1})
    assert client.execute_command("ZINTERCARD", "2", "z1", "z2") == 2
    assert client.execute_command("ZINTERCARD", "2", "z1", "z2", "LIMIT", "1") == 1
    assert client.execute_command("ZINTERCARD", "2", "z1", "z2", "limit", "0") == 2


def test_goblin_zset_internals_reports_the_layout_and_optimize_compacts_without_changing_the_set(client):
    client.zadd("small", {"a": 1, "b": 2})
    small = client.zset_internals("small")
    assert small["representation"] == "compact" and small["encoding"] == "listpack"
    assert small["members"] == 2 and small["leaves"] == 1 and small["index_slots"] == 0
    assert client.zset_internals("nokey") is None
    mapping = {f"member:{i:09d}".encode(): float((i * 7919) % 1000) for i in range(5000)}
    for start in range(0, 5000, 500):
        client.zadd("big", dict(list(mapping.items())[start:start + 500]))
    client.zrem("big", *list(mapping)[:1000:3])
    before = client.zset_internals("big")
    assert before["representation"] == "btree+leaf-index" and before["encoding"] == "skiplist"
    assert before["members"] == 5000 - 334 and before["depth"] >= 2 and before["index_tombstones"] > 0
    assert before["leaf_bytes_used"] <= before["leaf_bytes_allocated"]
    assert before["total_allocated_bytes"] >= before["leaf_bytes_allocated"] + before["index_bytes"]
    contents = client.zrange("big", 0, -1, withscores=True)
    released = client.zset_optimize("big")
    after = client.zset_internals("big")
    assert released == before["total_allocated_bytes"] - after["total_allocated_bytes"] > 0
    assert after["index_tombstones"] == 0 and after["index_resizing"] == 0
    assert after["leaves"] < before["leaves"] and after["leaf_bytes_used"] == before["leaf_bytes_used"]
    assert client.zrange("big", 0, -1, withscores=True) == contents
    assert client.zscore("big", "member:000004999") == mapping[b"member:000004999"]
    assert client.zrank("big", contents[100][0]) == 100
    assert client.zset_optimize("small") == 0 and client.zset_optimize("nokey") == 0
    client.set("str", "x")
    for call in (lambda: client.zset_internals("str"), lambda: client.zset_optimize("str")):
        with pytest.raises(ResponseError, match="^WRONGTYPE"):
            call()
