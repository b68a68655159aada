"""COPY source destination [DB destination-db] [REPLACE] over both transports: the value, its
type, list engine and expiry are copied, the options and errors are Redis's, a list copied under
a key wakes a waiter, and COMMAND, INFO commandstats and redis-py see it as Redis has it."""

import pytest

from goblin_ring import ResponseError, RespClient
from test_blocking_commands import Background, admin, other_client, wait_for_blocked  # noqa: F401 (fixture)


def test_copy_duplicates_a_string_and_a_list_leaving_the_source(client):
    client.set("s", "hello")
    client.rpush("l", "a", "b", "c")
    assert client.copy("s", "s2") is True
    assert client.copy("l", "l2") is True
    assert client.get("s2") == b"hello"
    assert client.lrange("l2", 0, -1) == [b"a", b"b", b"c"]
    client.rpush("l2", "d")                   # the copy is its own value
    assert client.lrange("l", 0, -1) == [b"a", b"b", b"c"]
    assert client.get("s") == b"hello"


def test_copy_of_a_big_list_keeps_order_and_engine(client):
    values = [f"v{i}".encode() for i in range(5000)]
    client.execute_command("GOBLIN.PMA.RPUSH", "big", *values)
    assert client.copy("big", "big2") is True
    assert client.lrange("big2", 0, -1) == values
    internals = client.execute_command("GOBLIN.LIST.INTERNALS", "big2")
    assert internals[internals.index(b"representation") + 1] == b"pma"


def test_copy_without_replace_leaves_an_existing_destination(client):
    client.set("a", "new")
    client.set("b", "old")
    assert client.copy("a", "b") is False
    assert client.get("b") == b"old"
    assert client.copy("a", "b", replace=True) is True
    assert client.get("b") == b"new"
    client.rpush("l", "x")
    assert client.copy("l", "b", replace=True) is True   # REPLACE changes the type too
    assert client.type("b") == b"list"


def test_copy_of_a_missing_key_is_zero(client):
    assert client.copy("missing", "b") is False
    assert client.exists("b") == 0


def test_copy_keeps_the_expiry(client):
    client.set("a", "v", ex=1000)
    client.set("p", "v")
    assert client.copy("a", "b") is True
    assert 990 <= client.ttl("b") <= 1000
    assert client.copy("p", "q") is True
    assert client.ttl("q") == -1


def test_copy_into_another_database(client):
    client.set("a", "v")
    assert client.copy("a", "a", destination_db=3) is True   # same name, other database: allowed
    assert client.copy("a", "a", destination_db=3) is False
    client.execute_command("SELECT", 3)
    try:
        assert client.get("a") == b"v"
        client.flushdb()
    finally:
        client.execute_command("SELECT", 0)


@pytest.mark.parametrize("argv, message", [
    (("COPY", "a", "a"), "ERR source and destination objects are the same"),
    (("COPY", "a", "b", "DB", "16"), "ERR DB index is out of range"),
    (("COPY", "a", "b", "DB", "-1"), "ERR DB index is out of range"),
    (("COPY", "a", "b", "DB", "x"), "ERR value is not an integer or out of range"),
    (("COPY", "a", "b", "DB"), "ERR syntax error"),
    (("COPY", "a", "b", "NOW"), "ERR syntax error"),
    (("COPY", "a"), "ERR wrong number of arguments for 'copy' command"),
])
def test_copy_errors_are_redis_texts(client, argv, message):
    client.set("a", "v")
    with pytest.raises(ResponseError) as raised:
        client.execute_command(*argv)
    assert str(raised.value) == message


@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
def test_a_list_copied_under_a_key_wakes_its_waiter(goblin, admin, waiter_transport):  # noqa: F811
    with other_client(goblin, waiter_transport) as waiter:
        admin.rpush("jobs", "j1", "j2")
        blocked = Background(lambda: waiter.blpop(["queue"], 0))
        wait_for_blocked(admin, 1)
        assert admin.copy("jobs", "queue") is True
        assert blocked.result() == (b"queue", b"j1")
        assert admin.lrange("queue", 0, -1) == [b"j2"]


def test_copy_is_counted_under_its_name(client):
    client.set("a", "v")
    client.copy("a", "b")
    stats = client.execute_command("INFO", "commandstats")
    stats = stats.decode() if isinstance(stats, bytes) else str(stats)
    assert "cmdstat_copy:calls=" in stats


def test_command_info_and_getkeys_describe_copy_as_redis_does(client, redis_server):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        [expected] = reference.execute_command("COMMAND", "INFO", "copy")
    finally:
        reference.close()
    [info] = client.execute_command("COMMAND", "INFO", "copy")
    assert info[:7] == expected[:7] == [b"copy", -3, [b"write", b"denyoom"], 1, 2, 1,
                                       [b"@keyspace", b"@write", b"@slow"]]
    assert client.execute_command("COMMAND", "GETKEYS", "COPY", "a", "b", "DB", "2", "REPLACE") == [b"a", b"b"]


def test_over_maxmemory_copy_is_refused_as_its_row_says_denyoom(client):
    client.set("a", "v")
    client.execute_command("CONFIG", "SET", "maxmemory", "1")
    try:
        with pytest.raises(ResponseError) as raised:
            client.copy("a", "b")
        assert str(raised.value) == "OOM command not allowed when used memory > 'maxmemory'."
        assert client.get("a") == b"v"           # readonly: served
        assert client.exists("b") == 0
    finally:
        client.execute_command("CONFIG", "SET", "maxmemory", "0")
    assert client.copy("a", "b") is True
