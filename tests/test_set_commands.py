"""The SET commands over both transports: replies, error texts and encodings as Redis 7's
(OBJECT ENCODING follows Redis 7.2's intset -> listpack -> hashtable conversions), the key
commands over sets (TYPE, SCAN TYPE, COPY, RENAME, MOVE, expiry, WRONGTYPE, WATCH), the
STORE forms' overwrite rules, SSCAN's guarantee across a growing table, and redis-py's own
client seeing Python sets."""

import pytest

from goblin_ring import ResponseError, RespClient, WatchError


@pytest.fixture(autouse=True)
def empty(client):
    client.flushall()


def encoding(client, key):
    return client.execute_command("OBJECT", "ENCODING", key)


def error_of(call, *args):
    with pytest.raises(ResponseError) as raised:
        call(*args)
    return str(raised.value)


def test_sadd_counts_new_members_and_smembers_returns_them_as_a_set(client):
    assert client.sadd("s", "a", "b", "a") == 2
    assert client.sadd("s", "b", "c") == 1
    assert client.smembers("s") == {b"a", b"b", b"c"}
    assert client.scard("s") == 3
    assert client.smembers("missing") == set()
    assert client.scard("missing") == 0


def test_srem_removes_and_deletes_the_emptied_set(client):
    client.sadd("s", 1, 2, 3)
    assert client.srem("s", 1, 4) == 1
    assert client.srem("missing", 1) == 0
    assert client.srem("s", 2, 3) == 2
    assert client.exists("s") == 0


def test_membership_replies_are_integers(client):
    client.sadd("s", "a", 5)
    assert client.sismember("s", "a") == 1
    assert client.sismember("s", "5") == 1
    assert client.sismember("s", "05") == 0
    assert client.sismember("missing", "a") == 0
    assert client.smismember("s", ["a", "x", 5]) == [1, 0, 1]
    assert client.smismember("missing", "a", "b") == [0, 0]


def test_integers_stay_an_intset_until_set_max_intset_entries(client):
    client.sadd("s", *range(512))
    assert encoding(client, "s") == b"intset"
    assert client.smembers("s") == {str(i).encode() for i in range(512)}
    client.sadd("s", 512)
    assert encoding(client, "s") == b"hashtable"
    assert client.scard("s") == 513


def test_a_string_turns_a_small_intset_into_a_listpack_then_a_hashtable_past_128(client):
    client.sadd("s", 1, 2, 3)
    assert encoding(client, "s") == b"intset"
    client.sadd("s", "a")
    assert encoding(client, "s") == b"listpack"
    client.sadd("s", *[f"m{i}" for i in range(124)])
    assert client.scard("s") == 128 and encoding(client, "s") == b"listpack"
    client.sadd("s", "one more")
    assert encoding(client, "s") == b"hashtable"
    client.srem("s", *[f"m{i}" for i in range(124)])
    assert encoding(client, "s") == b"hashtable"   # never converted back, as Redis


def test_a_member_over_64_bytes_or_a_big_first_batch_starts_a_hashtable(client):
    client.sadd("s", "a")
    client.sadd("s", "x" * 64)
    assert encoding(client, "s") == b"listpack"
    client.sadd("s", "x" * 65)
    assert encoding(client, "s") == b"hashtable"
    client.sadd("big", *[f"m{i}" for i in range(129)])
    assert encoding(client, "big") == b"hashtable"
    client.sadd("ints", *range(129))
    assert encoding(client, "ints") == b"intset"


def test_an_intset_with_more_than_128_members_takes_a_string_into_a_hashtable(client):
    client.sadd("s", *range(200))
    client.sadd("s", "a")
    assert encoding(client, "s") == b"hashtable"
    assert client.scard("s") == 201


def test_spop_removes_what_it_returns(client):
    client.sadd("s", *range(10))
    popped = client.spop("s")
    assert client.sismember("s", popped) == 0 and client.scard("s") == 9
    several = client.spop("s", 4)
    assert len(set(several)) == 4 and client.scard("s") == 5
    assert not set(several) & client.smembers("s")
    rest = client.spop("s", 100)
    assert len(rest) == 5 and client.exists("s") == 0
    assert client.spop("s") is None
    assert client.spop("s", 3) == []
    client.sadd("s", "a")
    assert client.spop("s", 0) == []


def test_spop_of_most_of_a_hashtable_leaves_the_rest_as_a_listpack_as_redis_7_2(client):
    client.sadd("s", *[f"m{i}" for i in range(300)])
    client.spop("s", 250)
    assert client.scard("s") == 50
    assert encoding(client, "s") == b"listpack"
    client.sadd("t", *[f"m{i}" for i in range(300)])
    client.spop("t", 10)
    assert encoding(client, "t") == b"hashtable"


def test_srandmember_counts(client):
    members = {str(i).encode() for i in range(20)}
    client.sadd("s", *members)
    assert client.srandmember("s") in members
    distinct = client.srandmember("s", 5)
    assert len(distinct) == 5 and len(set(distinct)) == 5 and set(distinct) <= members
    assert set(client.srandmember("s", 15)) <= members and len(set(client.srandmember("s", 15))) == 15
    assert set(client.srandmember("s", 100)) == members
    repeated = client.srandmember("s", -50)
    assert len(repeated) == 50 and set(repeated) <= members
    assert client.srandmember("s", 0) == []
    assert client.srandmember("missing") is None
    assert client.srandmember("missing", 5) == []
    assert client.scard("s") == 20


def test_srandmember_of_a_big_set_picks_distinct_members(client):
    client.sadd("s", *[f"m{i}" for i in range(2000)])
    picked = client.srandmember("s", 10)
    assert len(set(picked)) == 10
    seen = set()
    for _ in range(50):
        seen.update(client.srandmember("s", -20))
    assert len(seen) > 500   # spread over the set, not stuck on a few


def test_smove(client):
    client.sadd("a", "x", "y")
    assert client.smove("a", "b", "x") is True
    assert client.smembers("b") == {b"x"} and client.smembers("a") == {b"y"}
    assert client.smove("a", "b", "nope") is False
    assert client.smove("missing", "b", "x") is False
    assert client.smove("a", "a", "y") is True
    assert client.smove("a", "a", "z") is False
    assert client.smove("a", "b", "y") is True
    assert client.exists("a") == 0
    client.set("str", "v")
    assert client.smove("missing", "str", "x") is False   # no source: 0 before any type check
    client.sadd("a", "q")
    assert error_of(client.smove, "a", "str", "q").startswith("WRONGTYPE")
    assert client.sismember("a", "q") == 1


def test_set_algebra(client):
    client.sadd("a", 1, 2, 3, "x")
    client.sadd("b", 2, 3, 4)
    client.sadd("c", 3, "x")
    assert client.sinter("a", "b") == {b"2", b"3"}
    assert client.sinter(["a", "b", "c"]) == {b"3"}
    assert client.sinter("a", "missing") == set()
    assert client.sunion("a", "b", "missing") == {b"1", b"2", b"3", b"4", b"x"}
    assert client.sdiff("a", "b") == {b"1", b"x"}
    assert client.sdiff("a", "a") == set()
    assert client.sdiff("missing", "a") == set()
    assert client.sintercard(2, ["a", "b"]) == 2
    assert client.sintercard(3, ["a", "b", "c"], limit=0) == 1
    assert client.sintercard(2, ["a", "a"], limit=3) == 3
    assert client.sintercard(2, ["a", "missing"]) == 0


def test_store_forms_replace_the_destination_and_its_ttl(client):
    client.sadd("a", 1, 2, 3)
    client.sadd("b", 2, 3, 4)
    client.set("d", "string", ex=100)
    assert client.sinterstore("d", ["a", "b"]) == 2
    assert client.type("d") == b"set" and client.ttl("d") == -1
    assert client.smembers("d") == {b"2", b"3"}
    assert encoding(client, "d") == b"intset"
    assert client.sunionstore("d", "a", "b") == 4
    assert client.sdiffstore("d", ["a", "b"]) == 1 and client.smembers("d") == {b"1"}
    assert client.sdiffstore("a", ["a", "b"]) == 1 and client.smembers("a") == {b"1"}   # a source as destination
    assert client.sinterstore("d", ["a", "missing"]) == 0
    assert client.exists("d") == 0   # an empty result deletes the destination
    client.sadd("e", *[f"m{i}" for i in range(10)])
    assert client.sunionstore("u", ["e", "b"]) == 13 and encoding(client, "u") == b"listpack"


@pytest.mark.parametrize("argv, message", [
    (("SADD", "k"), "ERR wrong number of arguments for 'sadd' command"),
    (("SREM", "k"), "ERR wrong number of arguments for 'srem' command"),
    (("SMEMBERS",), "ERR wrong number of arguments for 'smembers' command"),
    (("SISMEMBER", "k"), "ERR wrong number of arguments for 'sismember' command"),
    (("SMOVE", "a", "b"), "ERR wrong number of arguments for 'smove' command"),
    (("SINTERSTORE", "d"), "ERR wrong number of arguments for 'sinterstore' command"),
    (("SPOP", "k", "-1"), "ERR value is out of range, must be positive"),
    (("SPOP", "k", "x"), "ERR value is out of range, must be positive"),
    (("SPOP", "k", "1", "2"), "ERR syntax error"),
    (("SRANDMEMBER", "k", "x"), "ERR value is not an integer or out of range"),
    (("SRANDMEMBER", "k", "-9223372036854775808"),
     "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"),
    (("SRANDMEMBER", "k", "1", "2"), "ERR syntax error"),
    (("SINTERCARD", "0", "k"), "ERR numkeys should be greater than 0"),
    (("SINTERCARD", "x", "k"), "ERR numkeys should be greater than 0"),
    (("SINTERCARD", "3", "k", "j"), "ERR Number of keys can't be greater than number of args"),
    (("SINTERCARD", "1", "k", "LIMIT", "-1"), "ERR LIMIT can't be negative"),
    (("SINTERCARD", "1", "k", "LIMIT"), "ERR syntax error"),
    (("SSCAN", "k", "x"), "ERR invalid cursor"),
    (("SSCAN", "k", "18446744073709551616"), "ERR invalid cursor"),
])
def test_errors_are_redis_texts(client, redis_server, argv, message):
    client.sadd("k", "a")
    assert error_of(client.execute_command, *argv) == message
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        reference.flushall()
        reference.sadd("k", "a")
        assert error_of(reference.execute_command, *argv) == message
    finally:
        reference.close()


def test_sscan_options_are_checked_only_on_an_existing_set(client):
    assert client.execute_command("SSCAN", "missing", "0", "COUNT", "0") == [b"0", []]
    client.sadd("k", "a")
    assert error_of(client.execute_command, "SSCAN", "k", "0", "COUNT", "0") == "ERR syntax error"
    assert error_of(client.execute_command, "SSCAN", "k", "0", "COUNT", "x") == "ERR value is not an integer or out of range"
    assert error_of(client.execute_command, "SSCAN", "k", "0", "BOGUS", "x") == "ERR syntax error"
    # strtoul's reading, as Redis: a sign, and the empty string is cursor 0
    assert client.execute_command("SSCAN", "k", "") == [b"0", [b"a"]]
    assert client.execute_command("SSCAN", "k", "-1") == [b"0", [b"a"]]


def test_sscan_of_small_sets_is_one_call_and_match_filters(client):
    client.sadd("ints", 3, 1, 2)
    assert client.sscan("ints", 0, count=1) == (0, [b"1", b"2", b"3"])   # an intset is sorted
    client.sadd("small", "apple", "avocado", "banana")
    cursor, members = client.sscan("small", 0, match="a*")
    assert cursor == 0 and set(members) == {b"apple", b"avocado"}


def test_sscan_visits_every_member_present_throughout_while_the_table_grows(client):
    client.sadd("s", *[f"old{i}" for i in range(1000)])
    seen, cursor, added = set(), 0, 0
    while True:
        cursor, members = client.sscan("s", cursor, count=20)
        seen.update(members)
        client.sadd("s", *[f"new{added + i}" for i in range(40)])   # grows the table under the scan
        added += 40
        if cursor == 0:
            break
    assert {f"old{i}".encode() for i in range(1000)} <= seen
    assert seen <= client.smembers("s")


def test_wrong_type_for_every_set_command(client):
    client.set("str", "v")
    for argv in (("SADD", "str", "a"), ("SREM", "str", "a"), ("SMEMBERS", "str"), ("SISMEMBER", "str", "a"),
                 ("SMISMEMBER", "str", "a"), ("SCARD", "str"), ("SPOP", "str"), ("SPOP", "str", "2"),
                 ("SRANDMEMBER", "str"), ("SRANDMEMBER", "str", "2"), ("SMOVE", "str", "x", "a"),
                 ("SINTER", "missing", "str"), ("SUNION", "str"), ("SDIFF", "missing", "str"),
                 ("SINTERSTORE", "d", "str"), ("SUNIONSTORE", "d", "str"), ("SDIFFSTORE", "d", "str"),
                 ("SINTERCARD", "2", "missing", "str"), ("SSCAN", "str", "0")):
        assert error_of(client.execute_command, *argv).startswith("WRONGTYPE"), argv
    client.sadd("set", "a")
    assert error_of(client.lpush, "set", "x").startswith("WRONGTYPE")
    assert error_of(client.get, "set").startswith("WRONGTYPE")


def test_key_commands_cover_sets(client):
    client.sadd("s", *[f"m{i}" for i in range(200)])
    assert client.type("s") == b"set"
    client.set("str", "v")
    assert client.scan(0, _type="set", count=1000) == (0, [b"s"])
    assert client.copy("s", "c") is True
    assert encoding(client, "c") == b"hashtable" and client.smembers("c") == client.smembers("s")
    client.sadd("c", "extra")
    assert client.scard("s") == 200   # the copy is its own value
    assert client.rename("c", "r") is True and client.scard("r") == 201
    assert client.move("r", 1) is True and client.exists("r") == 0
    client.execute_command("SELECT", 1)
    try:
        assert client.scard("r") == 201
    finally:
        client.execute_command("SELECT", 0)
    assert client.memory_usage("s") > 200 * 10
    assert client.delete("s") == 1 and client.exists("s") == 0


def test_an_expired_set_is_gone(client):
    client.sadd("s", "a")
    client.execute_command("PEXPIREAT", "s", 1)   # long past: expired at once
    assert client.scard("s") == 0
    assert client.sismember("s", "a") == 0
    assert client.exists("s") == 0


def test_goblin_memory_counts_sets_under_their_own_row(client):
    client.sadd("s", *[f"member-{i:012d}" for i in range(5000)])
    report = client.execute_command("GOBLIN.MEMORY")
    flat = report if isinstance(report, list) else list(report)
    assert b"set" in flat
    client.delete("s")


def test_a_set_write_touches_a_watched_key_and_a_no_op_does_not(client, resp):
    client.sadd("w", "a")
    with client.pipeline(transaction=True) as pipe:
        assert pipe.watch("w") is True
        resp.sadd("w", "b")
        pipe.scard("w")
        with pytest.raises(WatchError):
            pipe.execute()
    with client.pipeline(transaction=True) as pipe:
        assert pipe.watch("w") is True
        resp.sadd("w", "b")      # already there: no change, no touch (as Redis)
        resp.srem("w", "zzz")
        pipe.scard("w")
        assert pipe.execute() == [2]


def test_command_info_of_the_set_commands_is_redis_s(client, redis_server):
    names = ["sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop", "srandmember", "smove",
             "sinter", "sintercard", "sinterstore", "sunion", "sunionstore", "sdiff", "sdiffstore", "sscan"]
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        expected = reference.execute_command("COMMAND", "INFO", *names)
    finally:
        reference.close()
    got = client.execute_command("COMMAND", "INFO", *names)
    for mine, theirs in zip(got, expected):
        assert mine[:7] == theirs[:7]
    assert client.execute_command("COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1") == [b"a", b"b"]
    assert client.execute_command("COMMAND", "GETKEYS", "SMOVE", "a", "b", "m") == [b"a", b"b"]


def test_redis_py_sees_python_sets(goblin):
    redis = pytest.importorskip("redis")
    r = redis.Redis(port=goblin.port)
    try:
        r.flushall()
        assert r.sadd("s", "a", "b") == 2
        assert r.smembers("s") == {b"a", b"b"}
        assert r.smove("s", "t", "a") is True
        assert r.sinter("s", "t") == set()
        assert r.sscan("s") == (0, [b"b"])
        assert sorted(r.sscan_iter("s")) == [b"b"]
        assert r.smismember("s", ["a", "b"]) == [0, 1]
    finally:
        r.close()


def dirty(client):
    return client.info("persistence")["rdb_changes_since_last_save"]


def test_every_set_change_counts_as_redis_s_dirty_counter(client, redis_server):
    """Each step's change of rdb_changes_since_last_save equals redis-server's for the same step."""
    steps = [("SADD", "s", "a", "b", "c"), ("SADD", "s", "a"), ("SREM", "s", "a", "zz"), ("SREM", "s", "zz"),
             ("SMOVE", "s", "t", "b"), ("SMOVE", "s", "t", "nope"), ("SADD", "t", "b"), ("SMOVE", "t", "s", "b"),
             ("SADD", "u", "1", "2", "3"), ("SINTERSTORE", "d", "s", "u"), ("SUNIONSTORE", "d", "s", "u"),
             ("SDIFFSTORE", "d", "missing"), ("SDIFFSTORE", "d", "missing"), ("SPOP", "u"), ("SPOP", "u", "0"),
             ("SPOP", "u", "5"), ("SPOP", "missing"), ("SISMEMBER", "s", "b"), ("SADD", "v", "x", "y", "z"),
             ("SPOP", "v", "2")]
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        reference.flushall()
        for step in steps:
            before, reference_before = dirty(client), dirty(reference)
            client.execute_command(*step)
            reference.execute_command(*step)
            assert dirty(client) - before == dirty(reference) - reference_before, step
    finally:
        reference.close()


def test_config_set_thresholds_are_honoured_by_new_conversions(client):
    try:
        client.execute_command("CONFIG", "SET", "set-max-intset-entries", "4")
        client.execute_command("CONFIG", "SET", "set-max-listpack-entries", "3")
        client.execute_command("CONFIG", "SET", "set-max-listpack-value", "5")
        client.sadd("i", 1, 2, 3, 4)
        assert encoding(client, "i") == b"intset"
        client.sadd("i", 5)
        assert encoding(client, "i") == b"hashtable"
        client.sadd("l", "a", "b")
        assert encoding(client, "l") == b"listpack"
        client.sadd("l", "c")
        assert encoding(client, "l") == b"listpack"
        client.sadd("l", "d")
        assert encoding(client, "l") == b"hashtable"
        client.sadd("v", "short")
        client.sadd("v", "longer")
        assert encoding(client, "v") == b"hashtable"
    finally:
        client.execute_command("CONFIG", "SET", "set-max-intset-entries", "512")
        client.execute_command("CONFIG", "SET", "set-max-listpack-entries", "128")
        client.execute_command("CONFIG", "SET", "set-max-listpack-value", "64")


def test_sort_reads_sets_as_redis_does(client, redis_server):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for c in (client, reference):
            c.flushall()
            c.sadd("n", 3, 10, -1, 7)
            c.sadd("w", "b", "a", "c")
            c.sadd("big", *[f"m{i}" for i in range(300)])
            c.set("weight_a", 3), c.set("weight_b", 1), c.set("weight_c", 2)
        for argv in (("SORT", "n"), ("SORT", "n", "DESC", "LIMIT", "1", "2"), ("SORT", "w", "ALPHA"),
                     ("SORT", "w", "BY", "weight_*"), ("SORT", "w", "BY", "weight_*", "GET", "#", "GET", "weight_*"),
                     ("SORT", "big", "ALPHA", "LIMIT", "0", "5"), ("SORT_RO", "n"), ("SORT", "w"),
                     ("SORT", "w", "BY", "nosort", "STORE", "dst"), ("LRANGE", "dst", "0", "-1")):
            got, expected = (error_or_reply(c, argv) for c in (client, reference))
            assert got == expected, argv
    finally:
        reference.close()


def error_or_reply(client, argv):
    try:
        return client.execute_command(*argv)
    except ResponseError as error:
        return str(error)


def test_resp3_replies_sets_where_redis_does_and_arrays_where_it_does_not(goblin, redis_server):
    from resp_wire import raw_connection

    commands = [("SMEMBERS", "s"), ("SMEMBERS", "missing"), ("SINTER", "s", "missing"), ("SUNION", "one"),
                ("SDIFF", "one", "missing"), ("SPOP", "missing", "2"), ("SPOP", "s", "0"), ("SPOP", "one", "5"),
                ("SRANDMEMBER", "two", "5"), ("SRANDMEMBER", "two", "-1"), ("SRANDMEMBER", "missing", "3"),
                ("SRANDMEMBER", "two", "0"), ("SMISMEMBER", "s", "a"), ("SSCAN", "missing", "0")]
    shapes = {}
    for name, port in (("goblin", goblin.port), ("redis", redis_server.port)):
        with raw_connection(port) as conn:
            conn.request("HELLO", "3")
            conn.request("FLUSHALL")
            conn.request("SADD", "s", "a", "b")
            conn.request("SADD", "one", "x")
            conn.request("SADD", "two", "y")
            # the type byte and count of each reply (members come in each server's own order)
            shapes[name] = [conn.request(*command).split(b"\r\n", 1)[0] for command in commands]
    assert shapes["goblin"] == shapes["redis"]
    assert shapes["goblin"][0] == b"~2" and shapes["goblin"][8] == b"*1"
