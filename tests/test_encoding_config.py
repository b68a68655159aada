"""CONFIG GET/SET of Redis's encoding-tuning parameters: list-max-listpack-size
(old name list-max-ziplist-size), list-compress-depth, set-max-intset-entries,
set-max-listpack-entries/-value, hash-max-listpack-entries/-value and zset-max-listpack-entries/
-value (old names *-ziplist-*), over both transports; their errors and pattern replies
compared with a real redis-server; and the list size observed in what OBJECT ENCODING and
GOBLIN.LIST.INTERNALS report for lists created after it is set."""

import pytest

from goblin_ring import ResponseError, RespClient

# name -> (old name or None, goblin's default). hash-max-listpack-entries is 128, redis.conf's
# value (redis-server without a config file says 512).
PARAMETERS = {
    "list-max-listpack-size": ("list-max-ziplist-size", b"-2"),
    "list-compress-depth": (None, b"0"),
    "set-max-intset-entries": (None, b"512"),
    "set-max-listpack-entries": (None, b"128"),
    "set-max-listpack-value": (None, b"64"),
    "hash-max-listpack-entries": ("hash-max-ziplist-entries", b"128"),
    "hash-max-listpack-value": ("hash-max-ziplist-value", b"64"),
    "zset-max-listpack-entries": ("zset-max-ziplist-entries", b"128"),
    "zset-max-listpack-value": ("zset-max-ziplist-value", b"64"),
}


def config_get(client, *patterns):
    flat = client.execute_command("CONFIG", "GET", *patterns)
    if isinstance(flat, dict):
        return {bytes(k): bytes(v) for k, v in flat.items()}
    return dict(zip(flat[::2], flat[1::2]))


def config_set_outcome(client, *pairs):
    try:
        return ("ok", client.execute_command("CONFIG", "SET", *pairs))
    except ResponseError as error:
        return ("error", str(error))


@pytest.fixture
def restore_defaults(goblin):
    yield
    with RespClient(port=goblin.port, socket_timeout=10) as admin:
        for name, (_, default) in PARAMETERS.items():
            admin.execute_command("CONFIG", "SET", name, default)


def test_every_encoding_parameter_reads_back_its_default_under_both_names(client):
    for name, (old_name, default) in PARAMETERS.items():
        assert config_get(client, name) == {name.encode(): default}
        if old_name:
            assert config_get(client, old_name) == {old_name.encode(): default}


def test_setting_a_parameter_by_either_name_changes_both(client, restore_defaults):
    for position, (name, (old_name, _)) in enumerate(PARAMETERS.items()):
        value = str(7 + position).encode()
        assert client.execute_command("CONFIG", "SET", old_name or name, value) == b"OK"
        assert config_get(client, name) == {name.encode(): value}
        if old_name:
            assert config_get(client, old_name) == {old_name.encode(): value}
    assert client.execute_command("CONFIG", "SET", "list-max-listpack-size", "-5", "set-max-intset-entries", "0") == b"OK"
    # a name and its old name in one CONFIG SET both apply, the last winning; the same name twice is refused
    assert client.execute_command("CONFIG", "SET", "hash-max-listpack-entries", "10", "hash-max-ziplist-entries", "11") == b"OK"
    assert config_get(client, "hash-max-listpack-entries") == {b"hash-max-listpack-entries": b"11"}
    with pytest.raises(ResponseError, match=r"argument 'list-max-listpack-size'\) - duplicate parameter"):
        client.execute_command("CONFIG", "SET", "LIST-MAX-LISTPACK-SIZE", "4", "list-max-listpack-size", "5")
    assert config_get(client, "list-max-ziplist-size", "set-max-intset-entries") == {
        b"list-max-ziplist-size": b"-5", b"set-max-intset-entries": b"0"}


# Values and errors that redis-server 7.0 answers; the set-max-listpack-* pair is Redis 7.2's
# and checked against its texts below instead.
CASES = [
    ("list-max-listpack-size", "4"), ("list-max-ziplist-size", "-3"), ("list-max-listpack-size", "0"),
    ("list-max-listpack-size", "-100"), ("list-max-listpack-size", "-2147483648"),
    ("list-max-listpack-size", "2147483648"), ("list-max-ziplist-size", "x"), ("list-max-listpack-size", "1k"),
    ("list-compress-depth", "3"), ("list-compress-depth", "-1"), ("list-compress-depth", "1k"),
    ("set-max-intset-entries", "1000"), ("set-max-intset-entries", "-1"), ("set-max-intset-entries", "1kb"),
    ("set-max-intset-entries", "99999999999999999999"), ("set-max-intset-entries", "9223372036854775807"),
    ("hash-max-listpack-entries", "10"), ("hash-max-ziplist-entries", "1k"), ("hash-max-listpack-value", "1kb"),
    ("hash-max-ziplist-value", "2mb"), ("hash-max-listpack-value", "-1"), ("hash-max-listpack-value", "1.5"),
    ("zset-max-listpack-entries", "0"), ("zset-max-ziplist-entries", "abc"), ("zset-max-ziplist-value", "1k"),
    ("zset-max-listpack-value", "x"),
]


def test_set_errors_values_and_pattern_replies_are_redis_servers(redis_server, client, restore_defaults):
    with RespClient(port=redis_server.port, socket_timeout=10) as reference:
        reference.execute_command("CONFIG", "SET", "hash-max-listpack-entries", "128")   # goblin's default
        try:
            for name, value in CASES:
                assert config_set_outcome(client, name, value) == config_set_outcome(reference, name, value), (name, value)
                assert config_get(client, name) == config_get(reference, name), (name, value)
            # the same settings on both, then the patterns a harness uses: names, old names, values
            settings = ["list-max-listpack-size", "-3", "list-compress-depth", "2", "set-max-intset-entries", "64",
                        "hash-max-listpack-entries", "32", "hash-max-listpack-value", "100",
                        "zset-max-listpack-entries", "16", "zset-max-listpack-value", "20"]
            assert client.execute_command("CONFIG", "SET", *settings) == reference.execute_command("CONFIG", "SET", *settings)
            for pattern in ("*ziplist*", "list-*", "hash-max-*", "zset-max-*", "*-max-*-value",
                            "set-max-intset-entries", "LIST-MAX-LISTPACK-SIZE"):
                ours, theirs = config_get(client, pattern), config_get(reference, pattern)
                if pattern == "list-*":
                    del ours[b"list-implementation"]        # goblin's own --list-implementation
                if pattern == "*-max-*-value":
                    del ours[b"set-max-listpack-value"]     # Redis 7.2's, which 7.0 lacks
                assert len(ours) >= 1
                assert {k.lower(): v for k, v in ours.items()} == {k.lower(): v for k, v in theirs.items()}, pattern
        finally:
            reference.execute_command("CONFIG", "SET", "hash-max-listpack-entries", "512", "list-max-listpack-size", "-2",
                                      "list-compress-depth", "0", "set-max-intset-entries", "512",
                                      "hash-max-listpack-value", "64", "zset-max-listpack-entries", "128",
                                      "zset-max-listpack-value", "64")


def test_set_listpack_parameters_take_integers_within_redis_7_2s_bounds(client, restore_defaults):
    for name in ("set-max-listpack-entries", "set-max-listpack-value"):
        assert client.execute_command("CONFIG", "SET", name, "3") == b"OK"
        assert config_get(client, name) == {name.encode(): b"3"}
        with pytest.raises(ResponseError, match=rf"argument '{name}'\) - argument couldn't be parsed into an integer"):
            client.execute_command("CONFIG", "SET", name, "1kb")
        with pytest.raises(ResponseError, match="argument must be between 0 and 9223372036854775807 inclusive"):
            client.execute_command("CONFIG", "SET", name, "-1")
        assert config_get(client, name) == {name.encode(): b"3"}


def encoding(client, key):
    return client.execute_command("OBJECT", "ENCODING", key)


def test_a_positive_list_size_is_how_many_values_a_list_keeps_compact(client, restore_defaults):
    assert client.execute_command("CONFIG", "SET", "list-max-listpack-size", "4") == b"OK"
    client.rpush("small", "a", "b", "c", "d")
    assert encoding(client, "small") == b"listpack"
    client.rpush("small", "e")
    assert encoding(client, "small") == b"quicklist"
    assert client.lrange("small", 0, -1) == [b"a", b"b", b"c", b"d", b"e"]
    # 0 counts as 1, as in Redis
    client.execute_command("CONFIG", "SET", "list-max-ziplist-size", "0")
    client.rpush("one", "a")
    assert encoding(client, "one") == b"listpack"
    client.rpush("one", "b")
    assert encoding(client, "one") == b"quicklist"
    # a count above the default 128 keeps more values compact
    client.execute_command("CONFIG", "SET", "list-max-listpack-size", "300")
    client.rpush("long", *[b"v"] * 250)
    assert encoding(client, "long") == b"listpack"
    client.execute_command("CONFIG", "SET", "list-max-listpack-size", "-2")
    client.rpush("default", *[b"v"] * 250)
    assert encoding(client, "default") == b"quicklist"


def leaves(client, key):
    flat = client.execute_command("GOBLIN.LIST.INTERNALS", key)
    table = flat if isinstance(flat, dict) else dict(zip(flat[::2], flat[1::2]))
    return table[b"leaves"]


def test_a_negative_list_size_sets_the_compact_byte_limit_and_the_leaf_size(client, restore_defaults):
    forty_values_of_50_bytes = [b"%03d" % i + b"v" * 47 for i in range(40)]     # ~2 KB
    hundred_values_of_50_bytes = [b"%03d" % i + b"w" * 47 for i in range(100)]   # ~5 KB
    client.rpush("default", *hundred_values_of_50_bytes)
    assert encoding(client, "default") == b"listpack"          # -2: 8 KB
    client.execute_command("CONFIG", "SET", "list-max-listpack-size", "-1")   # 4 KB
    client.rpush("four", *hundred_values_of_50_bytes)
    assert encoding(client, "four") == b"quicklist"
    client.rpush("four-small", *forty_values_of_50_bytes)
    assert encoding(client, "four-small") == b"listpack"
    assert encoding(client, "default") == b"listpack"          # lists made before keep theirs
    many = [b"%016d" % i for i in range(20000)]
    client.rpush("leaves-4k", *many)
    client.execute_command("CONFIG", "SET", "list-max-ziplist-size", "-4")    # 32 KB leaves
    client.rpush("leaves-32k", *many)
    assert client.lrange("leaves-4k", 0, -1) == client.lrange("leaves-32k", 0, -1) == many
    if encoding(client, "leaves-4k") == b"quicklist":           # the segmented engine has leaves
        assert leaves(client, "leaves-4k") >= 4 * leaves(client, "leaves-32k")


def test_list_compress_depth_is_kept_and_lists_work_the_same(client, restore_defaults):
    assert client.execute_command("CONFIG", "SET", "list-compress-depth", "2") == b"OK"
    assert config_get(client, "list-compress-depth") == {b"list-compress-depth": b"2"}
    client.rpush("l", *[b"%d" % i for i in range(1000)])
    assert client.lindex("l", 500) == b"500"
    assert client.lrange("l", -2, -1) == [b"998", b"999"]
