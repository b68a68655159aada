"""SORT and SORT_RO over both transports: numeric and ALPHA order, DESC, LIMIT, BY weights
(and BY a constant: no sorting), GET patterns with '#', STORE (replacing any key, deleting it
for an empty result, waking a waiter, counting its changes), and Redis's error texts. The
random comparison with redis-server is test_differential_sort.py."""

from __future__ import annotations

import pytest

from goblin_ring import DataError, ResponseError, RespClient, WrongTypeError
from test_blocking_commands import Background, admin, other_client, wait_for_blocked  # noqa: F401 (fixture)


@pytest.fixture
def numbers(client):
    client.rpush("n", 3, 1, 2, 10, -5, "2.5", "1e2")
    return client


def test_numbers_sort_numerically_and_alpha_sorts_bytes(numbers):
    assert numbers.sort("n") == [b"-5", b"1", b"2", b"2.5", b"3", b"10", b"1e2"]
    assert numbers.sort("n", desc=True) == [b"1e2", b"10", b"3", b"2.5", b"2", b"1", b"-5"]
    assert numbers.sort("n", alpha=True) == [b"-5", b"1", b"10", b"1e2", b"2", b"2.5", b"3"]
    assert numbers.sort_ro("n", alpha=True, desc=True) == [b"3", b"2.5", b"2", b"1e2", b"10", b"1", b"-5"]


def test_equal_numbers_fall_back_to_their_bytes(client):
    client.rpush("n", "1.0", "1", "01", "1e0")
    assert client.sort("n") == [b"01", b"1", b"1.0", b"1e0"]


def test_limit_pages_and_is_clamped(numbers):
    assert numbers.sort("n", start=1, num=3) == [b"1", b"2", b"2.5"]
    assert numbers.sort("n", start=-1, num=2) == [b"-5", b"1"]
    assert numbers.sort("n", start=5, num=100) == [b"10", b"1e2"]
    assert numbers.sort("n", start=7, num=1) == []
    assert numbers.sort("n", start=0, num=0) == []
    assert numbers.execute_command("SORT", "n", "LIMIT", "1", "9223372036854775807") == \
        [b"1", b"2", b"2.5", b"3", b"10", b"1e2"]


def test_by_a_constant_keeps_list_order_and_desc_reverses_it(numbers):
    assert numbers.sort("n", by="nosort") == [b"3", b"1", b"2", b"10", b"-5", b"2.5", b"1e2"]
    assert numbers.sort("n", by="nosort", desc=True) == [b"1e2", b"2.5", b"-5", b"10", b"2", b"1", b"3"]
    assert numbers.sort("n", by="nosort", desc=True, start=1, num=2) == [b"2.5", b"-5"]


def test_by_weights_and_get_patterns(client):
    client.rpush("ids", "a", "b", "c", "d")
    client.mset({"w_a": 3, "w_b": 1, "w_c": 2, "name_a": "Ann", "name_c": "Cid"})
    assert client.sort("ids", by="w_*") == [b"d", b"b", b"c", b"a"]           # a missing weight is 0
    assert client.sort("ids", by="w_*", get=["#", "name_*"]) == [b"d", None, b"b", None, b"c", b"Cid", b"a", b"Ann"]
    assert client.sort("ids", by="w_*", get=["name_*", "#"], groups=True) == [
        (None, b"d"), (None, b"b"), (b"Cid", b"c"), (b"Ann", b"a")]
    assert client.sort("ids", by="name_*", alpha=True, get="#") == [b"b", b"d", b"a", b"c"]
    assert client.sort("ids", by="nosort", get="constant") == [None] * 4      # no '*': nothing to look up


def test_a_weight_of_another_type_counts_as_missing(client):
    client.rpush("ids", "a", "b")
    client.set("w_a", 5)
    client.rpush("w_b", "not a string")
    assert client.sort("ids", by="w_*") == [b"b", b"a"]
    assert client.sort("ids", by="nosort", get="w_*") == [b"5", None]


def test_hash_field_patterns_weigh_and_fetch_by_a_hash_field(client):
    client.rpush("ids", "1", "2", "3", "4")
    client.hset("h_1", mapping={"rank": 30, "name": "one"})
    client.hset("h_2", mapping={"rank": 10, "name": "two"})
    client.hset("h_3", mapping={"rank": 20})
    client.set("h_4", "a string, not a hash")
    # a missing field (h_3's name), a key that is no hash (h_4) and an empty field name all read nothing
    assert client.sort("ids", by="h_*->rank", get=["#", "h_*->name"]) == [
        b"4", None, b"2", b"two", b"3", None, b"1", b"one"]
    assert client.sort("ids", by="h_*->name", alpha=True, desc=True) == [b"2", b"1", b"3", b"4"]   # ties keep list order
    assert client.sort("ids", by="nosort", get="h_*->") == [None] * 4
    assert client.sort("ids", by="h_*->rank", get="h_*->rank", store="ranks") == 4
    assert client.lrange("ranks", 0, -1) == [b"", b"10", b"20", b"30"]


def test_weights_that_are_not_numbers_refuse_the_sort(client):
    client.rpush("l", "1", "x")
    with pytest.raises(ResponseError) as raised:
        client.sort("l")
    assert str(raised.value) == "ERR One or more scores can't be converted into double"
    client.rpush("ids", "a")
    client.set("w_a", "1e400")
    with pytest.raises(ResponseError):
        client.sort("ids", by="w_*")


def test_store_replaces_any_key_and_drops_its_ttl(numbers):
    numbers.set("dst", "old", ex=100)
    assert numbers.sort("n", store="dst", start=0, num=3) == 3
    assert numbers.lrange("dst", 0, -1) == [b"-5", b"1", b"2"]
    assert numbers.ttl("dst") == -1
    assert numbers.sort("n", get=["#", "missing_*"], store="dst", start=0, num=2) == 4
    assert numbers.lrange("dst", 0, -1) == [b"-5", b"", b"1", b""]     # a missing GET stores ""


def test_store_onto_the_sorted_key_itself(numbers):
    assert numbers.sort("n", store="n", desc=True) == 7
    assert numbers.lrange("n", 0, -1) == [b"1e2", b"10", b"3", b"2.5", b"2", b"1", b"-5"]


def test_an_empty_result_deletes_the_store_key(numbers):
    numbers.set("dst", "x")
    assert numbers.sort("missing", store="dst") == 0
    assert numbers.exists("dst") == 0
    numbers.set("dst", "x")
    assert numbers.sort("n", start=0, num=0, store="dst") == 0
    assert numbers.exists("dst") == 0


def test_store_counts_each_stored_value_as_a_change(numbers):
    def dirty():
        return numbers.info("persistence")["rdb_changes_since_last_save"]
    before = dirty()
    numbers.sort("n", store="dst")
    assert dirty() - before == 7
    before = dirty()
    numbers.sort("missing", store="dst")           # deletes dst: one change
    assert dirty() - before == 1
    before = dirty()
    numbers.sort("missing", store="dst")           # nothing to delete: none
    numbers.sort("n")
    assert dirty() == before


@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
def test_a_stored_result_wakes_a_waiter(goblin, admin, waiter_transport):  # noqa: F811
    admin.rpush("src", "3", "1", "2")
    with other_client(goblin, waiter_transport) as waiter:
        blocked = Background(lambda: waiter.blpop(["sorted"], 0))
        wait_for_blocked(admin, 1)
        assert admin.sort("src", store="sorted") == 3
        assert blocked.result() == (b"sorted", b"1")
        assert admin.lrange("sorted", 0, -1) == [b"2", b"3"]


def test_a_missing_key_sorts_as_empty_and_a_string_is_the_wrong_type(client):
    assert client.sort("missing") == []
    client.set("s", "x")
    with pytest.raises(WrongTypeError):
        client.sort("s")
    with pytest.raises(WrongTypeError):
        client.sort_ro("s")


@pytest.mark.parametrize("argv, message", [
    ((b"SORT", b"l", b"LIMIT", b"1"), "ERR syntax error"),
    ((b"SORT", b"l", b"NOPE"), "ERR syntax error"),
    ((b"SORT", b"l", b"BY"), "ERR syntax error"),
    ((b"SORT", b"l", b"GET"), "ERR syntax error"),
    ((b"SORT", b"l", b"STORE"), "ERR syntax error"),
    ((b"SORT", b"l", b"LIMIT", b"x", b"1"), "ERR value is not an integer or out of range"),
    ((b"SORT", b"l", b"LIMIT", b"0", b"1.5"), "ERR value is not an integer or out of range"),
    ((b"SORT_RO", b"l", b"STORE", b"d"), "ERR syntax error"),
    ((b"SORT", b"s", b"NOPE"), "ERR syntax error"),           # options are read before the key
    ((b"SORT",), "ERR wrong number of arguments for 'sort' command"),
])
def test_errors_are_redis_texts(client, argv, message):
    client.rpush("l", "1")
    client.set("s", "x")
    with pytest.raises(ResponseError) as raised:
        client.execute_command(*argv)
    assert str(raised.value) == message


def test_the_client_checks_start_and_num_together(client):
    with pytest.raises(DataError):
        client.sort("l", start=1)
    with pytest.raises(DataError):
        client.sort("l", get="a", groups=True)


def test_command_info_and_getkeys_describe_sort_as_redis_does(client, redis_server):
    lines = [("SORT", "k", "STORE", "d"), ("SORT", "k", "STORE", "d", "STORE", "e"),
             ("SORT", "k", "GET", "store", "BY", "store", "LIMIT", "store", "1", "STORE", "x"),
             ("SORT_RO", "k", "GET", "x"), ("SORT", "k", "STORE")]
    with RespClient(port=redis_server.port, socket_timeout=10) as reference:
        for name in ("sort", "sort_ro"):
            [expected] = reference.execute_command("COMMAND", "INFO", name)
            [info] = client.execute_command("COMMAND", "INFO", name)
            assert info[:8] == expected[:8]              # name, arity, flags (movablekeys), range, categories, tips
        for line in lines:
            assert client.execute_command("COMMAND", "GETKEYS", *line) == \
                reference.execute_command("COMMAND", "GETKEYS", *line)
        assert client.execute_command("COMMAND", "GETKEYSANDFLAGS", "SORT", "k", "STORE", "d") == \
            reference.execute_command("COMMAND", "GETKEYSANDFLAGS", "SORT", "k", "STORE", "d")


def test_sort_reads_a_sorted_sets_members_in_score_order_with_by_nosort_and_sorts_them_otherwise(client):
    client.zadd("z", {"10": 1, "2": 2, "3": 0, "b": 5, "a": 5})
    assert client.sort("z", by="nosort") == [b"3", b"10", b"2", b"a", b"b"]
    assert client.sort("z", by="nosort", desc=True) == [b"b", b"a", b"2", b"10", b"3"]
    assert client.sort("z", by="nosort", start=1, num=2) == [b"10", b"2"]
    assert client.sort("z", by="nosort", desc=True, start=1, num=2) == [b"a", b"2"]
    assert client.sort("z", alpha=True) == [b"10", b"2", b"3", b"a", b"b"]
    with pytest.raises(ResponseError, match="One or more scores can't be converted into double"):
        client.sort("z")
    client.zrem("z", "a", "b")
    assert client.sort("z") == [b"2", b"3", b"10"]
    assert client.sort("z", by="nosort", store="dst") == 3
    assert client.lrange("dst", 0, -1) == [b"3", b"10", b"2"]
    client.mset({"w_10": 1, "w_2": 3, "w_3": 2})
    assert client.sort("z", by="w_*", get=["#", "w_*"]) == [b"10", b"1", b"3", b"2", b"2", b"3"]
