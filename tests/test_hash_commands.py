"""Every hash command over both transports (the `client` fixture is parametrised over the ring
and RESP), with hashes on both sides of the compact/table threshold (128 fields; one 65-byte
value also converts), checked against Redis's documented replies and error texts; field
expiry (lazy, active, HPERSIST, a hash emptied by expiry) and the key commands that must
cover hashes (TYPE, OBJECT ENCODING, SCAN TYPE, COPY, RENAME, MOVE, MEMORY USAGE, WRONGTYPE)."""

import time

import pytest

from goblin_ring import ResponseError

SIZES = [5, 300]   # compact ("listpack"), and the table after conversion ("hashtable")


@pytest.fixture(params=SIZES, ids=lambda n: f"{n}fields")
def size(request):
    return request.param


def fields(n, prefix="f"):
    return {f"{prefix}{i}".encode(): f"v{i}".encode() for i in range(n)}


def filled(client, size, key="h"):
    mapping = fields(size)
    assert client.hset(key, mapping=mapping) == size
    return mapping


def encoding(client, key):
    return client.execute_command("OBJECT", "ENCODING", key)


def wait_until(condition, timeout=5.0):
    """Poll a server-side condition (active expiry runs on the server's cron) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def encoding_for(size):
    return "listpack" if size <= 128 else "hashtable"


def test_hset_counts_new_fields_and_hget_reads_them_back(client, size):
    mapping = filled(client, size)
    assert client.hset("h", "f0", "changed") == 0
    assert client.hset("h", mapping={"f0": "again", "new": "x"}) == 1
    assert client.hget("h", "f0") == b"again"
    assert client.hget("h", "new") == b"x"
    assert client.hget("h", "missing") is None
    assert client.hget("nokey", "f0") is None
    assert client.hlen("h") == len(mapping) + 1
    assert encoding(client, "h") == encoding_for(size + 1).encode()


def test_hgetall_hkeys_hvals_agree_and_cover_every_field(client, size):
    mapping = filled(client, size)
    assert client.hgetall("h") == mapping
    assert sorted(client.hkeys("h")) == sorted(mapping)
    assert sorted(client.hvals("h")) == sorted(mapping.values())
    assert client.hgetall("nokey") == {}
    assert client.hkeys("nokey") == [] and client.hvals("nokey") == []


def test_a_small_hash_keeps_insertion_order_as_a_listpack_does(client):
    client.hset("h", items=["b", "1", "a", "2", "c", "3"])
    assert client.hkeys("h") == [b"b", b"a", b"c"]
    client.hset("h", "a", "changed")
    assert client.hkeys("h") == [b"b", b"a", b"c"]


def test_hmget_hexists_hstrlen_hsetnx(client, size):
    filled(client, size)
    assert client.hmget("h", ["f1", "zz", "f2"]) == [b"v1", None, b"v2"]
    assert client.hmget("nokey", "a", "b") == [None, None]
    assert client.hexists("h", "f1") is True and client.hexists("h", "zz") is False
    assert client.hstrlen("h", "f3") == 2 and client.hstrlen("h", "zz") == 0
    assert client.hsetnx("h", "f1", "x") == 0 and client.hget("h", "f1") == b"v1"
    assert client.hsetnx("h", "fresh", "x") == 1 and client.hget("h", "fresh") == b"x"
    assert client.hmset("h", {"m1": "1", "m2": "2"}) is True
    assert client.hmget("h", "m1", "m2") == [b"1", b"2"]


def test_hdel_counts_removed_fields_and_an_emptied_hash_is_deleted(client, size):
    mapping = filled(client, size)
    assert client.hdel("h", "f0", "f0", "zz") == 1
    assert client.hdel("nokey", "a") == 0
    assert client.hdel("h", *mapping) == size - 1
    assert client.exists("h") == 0


def test_conversion_happens_past_the_entry_and_value_limits(client):
    client.hset("h", mapping=fields(128))
    assert encoding(client, "h") == b"listpack"
    client.hset("h", "one-more", "x")
    assert encoding(client, "h") == b"hashtable"
    client.hset("long", "f", "x" * 64)
    assert encoding(client, "long") == b"listpack"
    client.hset("long", "g", "x" * 65)
    assert encoding(client, "long") == b"hashtable"
    client.hset("longfield", "f" * 65, "x")
    assert encoding(client, "longfield") == b"hashtable"
    assert client.hget("long", "g") == b"x" * 65 and client.hlen("h") == 129


def test_hincrby_and_hincrbyfloat_with_redis_errors(client, size):
    filled(client, size)
    assert client.hincrby("h", "n", 5) == 5
    assert client.hincrby("h", "n", -7) == -2
    assert client.hincrbyfloat("h", "x", 1.5) == 1.5
    assert client.hincrbyfloat("h", "x", "2.25") == 3.75
    assert client.hget("h", "x") == b"3.75"
    with pytest.raises(ResponseError, match="^ERR hash value is not an integer$"):
        client.hincrby("h", "f1", 1)
    with pytest.raises(ResponseError, match="^ERR hash value is not a float$"):
        client.hincrbyfloat("h", "f1", 1)
    with pytest.raises(ResponseError, match="^ERR value is not an integer or out of range$"):
        client.execute_command("HINCRBY", "h", "n", "abc")
    with pytest.raises(ResponseError, match="^ERR value is not a valid float$"):
        client.execute_command("HINCRBYFLOAT", "h", "x", "abc")
    client.hset("h", "big", 9223372036854775807)
    with pytest.raises(ResponseError, match="^ERR increment or decrement would overflow$"):
        client.hincrby("h", "big", 1)
    client.hset("h", "huge", "1e4932")
    with pytest.raises(ResponseError, match="^ERR increment would produce NaN or Infinity$"):
        client.execute_command("HINCRBYFLOAT", "h", "huge", "1e4932")


def test_hscan_visits_every_field_once_with_match_count_and_novalues(client, size):
    mapping = filled(client, size)
    seen = dict(client.hscan_iter("h", count=7))
    assert seen == mapping
    assert sorted(client.hscan_iter("h", no_values=True)) == sorted(mapping)
    matched = dict(client.hscan_iter("h", match="f1*"))
    assert matched == {k: v for k, v in mapping.items() if k.startswith(b"f1")}
    assert client.hscan("nokey") == (0, {})
    with pytest.raises(ResponseError, match="^ERR invalid cursor$"):
        client.execute_command("HSCAN", "h", "x")
    with pytest.raises(ResponseError, match="^ERR syntax error$"):
        client.execute_command("HSCAN", "h", "0", "COUNT", "0")


def test_a_compact_hash_is_scanned_in_one_call(client):
    filled(client, 5)
    cursor, data = client.hscan("h", 0, count=1)
    assert cursor == 0 and len(data) == 5


def test_hrandfield_with_and_without_count_and_values(client, size):
    mapping = filled(client, size)
    assert client.hrandfield("h") in mapping
    assert client.hrandfield("nokey") is None
    assert client.hrandfield("nokey", 3) == []
    assert client.hrandfield("h", 0) == []
    picked = client.hrandfield("h", 4)
    assert len(picked) == 4 == len(set(picked)) and set(picked) <= set(mapping)
    assert sorted(client.hrandfield("h", size + 10)) == sorted(mapping)
    repeated = client.hrandfield("h", -(size + 3))
    assert len(repeated) == size + 3 and set(repeated) <= set(mapping)
    flat = client.hrandfield("h", 3, withvalues=True)
    assert len(flat) == 6 and all(mapping[flat[i]] == flat[i + 1] for i in range(0, 6, 2))
    with pytest.raises(ResponseError, match="^ERR syntax error$"):
        client.execute_command("HRANDFIELD", "h", "1", "WITHVALUES", "x")
    with pytest.raises(ResponseError, match="^ERR value is out of range$"):
        client.execute_command("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES")


def test_wrong_arity_wrongtype_both_ways_and_bad_input(client):
    client.set("s", "x")
    client.hset("h", "f", "v")
    for call in (lambda: client.hget("s", "f"), lambda: client.hset("s", "f", "v"), lambda: client.hgetall("s"),
                 lambda: client.hincrby("s", "f"), lambda: client.hscan("s"), lambda: client.httl("s", "f"),
                 lambda: client.hexpire("s", 10, "f")):
        with pytest.raises(ResponseError, match="^WRONGTYPE"):
            call()
    with pytest.raises(ResponseError, match="^WRONGTYPE"):
        client.get("h")
    with pytest.raises(ResponseError, match="^WRONGTYPE"):
        client.rpush("h", "x")
    with pytest.raises(ResponseError, match="^ERR wrong number of arguments for 'hset' command$"):
        client.execute_command("HSET", "h", "f")
    with pytest.raises(ResponseError, match="^ERR wrong number of arguments for 'hset' command$"):
        client.execute_command("HSET", "h", "a", "1", "b")
    with pytest.raises(ResponseError, match="^ERR wrong number of arguments for 'hget' command$"):
        client.execute_command("HGET", "h")


def test_type_object_encoding_scan_type_and_memory_usage_cover_hashes(client, size):
    filled(client, size)
    client.set("s", "x")
    assert client.type("h") == b"hash"
    assert encoding(client, "h") == encoding_for(size).encode()
    assert list(client.scan_iter(_type="hash")) == [b"h"]
    assert client.memory_usage("h") > size * 4


def test_copy_rename_move_and_key_expiry_carry_the_hash(client, size):
    mapping = filled(client, size)
    client.hexpire("h", 1000, "f1")
    assert client.copy("h", "c") is True
    client.hset("c", "f2", "only-in-copy")
    assert client.hget("h", "f2") == b"v2"
    assert client.httl("c", "f1") == [1000] and client.httl("c", "f2") == [-1]
    assert client.rename("h", "r") is True
    assert client.hgetall("r") == mapping
    assert client.move("r", 3) is True
    client.select(3)
    assert client.hlen("r") == size
    client.pexpire("r", 1)
    assert wait_until(lambda: client.exists("r") == 0)
    client.select(0)


# ---- field expiry ----


def test_hexpire_family_replies_per_field_and_conditions(client, size):
    filled(client, size)
    assert client.hexpire("h", 100, "f1", "zz") == [1, -2]
    assert client.hexpire("h", 200, "f1", nx=True) == [0]
    assert client.hexpire("h", 200, "f2", xx=True) == [0]
    assert client.hexpire("h", 50, "f1", gt=True) == [0]
    assert client.hexpire("h", 50, "f2", gt=True) == [0]    # no TTL counts as forever
    assert client.hexpire("h", 50, "f1", lt=True) == [1]
    assert client.hexpire("h", 50, "f2", lt=True) == [1]
    assert client.httl("h", "f1", "f2", "f3", "zz") == [50, 50, -1, -2]
    ms = client.hpttl("h", "f1")[0]
    assert 49_000 < ms <= 50_000
    now = int(time.time())
    assert abs(client.hexpiretime("h", "f1")[0] - (now + 50)) <= 2
    assert client.hpexpireat("h", (now + 500) * 1000, "f3") == [1]
    assert client.hpexpiretime("h", "f3") == [(now + 500) * 1000]
    assert client.hpersist("h", "f1", "f4", "zz") == [1, -1, -2]
    assert client.httl("h", "f1") == [-1]
    assert client.hexpire("nokey", 10, "a", "b") == [-2, -2]
    assert client.httl("nokey", "a") == [-2]


def test_a_past_or_zero_expiry_deletes_the_field_and_may_delete_the_hash(client):
    client.hset("h", mapping={"a": "1", "b": "2"})
    assert client.hexpire("h", 0, "a") == [2]
    assert client.hexists("h", "a") is False
    assert client.hexpireat("h", 1, "b") == [2]
    assert client.exists("h") == 0


def test_lazy_expiry_hides_a_field_as_soon_as_its_time_passes(client, size):
    filled(client, size)
    assert client.hpexpire("h", 30, "f1", "f2") == [1, 1]
    time.sleep(0.06)   # the expiry itself is what is waited for
    assert client.hget("h", "f1") is None
    assert client.hlen("h") == size - 2
    assert b"f2" not in client.hgetall("h")


def test_active_expiry_removes_fields_and_a_hash_emptied_by_expiry_disappears(client, size):
    filled(client, size)
    client.hset("other", "keep", "1")
    client.hpexpire("h", 20, *fields(size))
    assert wait_until(lambda: client.dbsize() == 1)   # DBSIZE never touches the hash: the cron did it
    assert client.exists("h") == 0 and client.hget("other", "keep") == b"1"


def test_setting_a_value_drops_its_ttl_but_hincrby_keeps_it(client):
    client.hset("h", mapping={"a": "1", "b": "2"})
    client.hexpire("h", 100, "a", "b")
    client.hincrby("h", "a", 1)
    assert client.httl("h", "a") == [100]
    client.hset("h", "a", "5")
    assert client.httl("h", "a") == [-1]
    assert encoding(client, "h") == b"listpackex"
    client.hpersist("h", "b")
    assert encoding(client, "h") == b"listpack"


def test_hgetdel_returns_values_deletes_them_and_the_emptied_hash(client, size):
    filled(client, size)
    assert client.hgetdel("h", "f1", "zz", "f1") == [b"v1", None, None]
    assert client.hexists("h", "f1") is False
    assert client.hgetdel("nokey", "a") == [None]
    client.hset("small", "a", "1")
    assert client.hgetdel("small", "a") == [b"1"]
    assert client.exists("small") == 0


def test_hgetex_reads_and_sets_or_removes_expiry(client, size):
    filled(client, size)
    assert client.hgetex("h", "f1", "zz", ex=100) == [b"v1", None]
    assert client.httl("h", "f1") == [100]
    assert client.hgetex("h", "f1", persist=True) == [b"v1"]
    assert client.httl("h", "f1") == [-1]
    assert client.hgetex("h", "f1", px=0) == [b"v1"]
    assert client.hexists("h", "f1") is False
    assert client.hgetex("h", "f2") == [b"v2"]
    assert client.hgetex("nokey", "a", ex=10) == [None]


def test_hsetex_conditions_and_expiry(client):
    assert client.hsetex("h", "a", "1", ex=100) == 1
    assert client.httl("h", "a") == [100]
    assert client.hsetex("h", mapping={"a": "2"}, keepttl=True) == 1
    assert client.hget("h", "a") == b"2" and client.httl("h", "a") == [100]
    assert client.hsetex("h", "a", "3") == 1 and client.httl("h", "a") == [-1]
    assert client.execute_command("HSETEX", "h", "FNX", "FIELDS", "1", "a", "4") == 0
    assert client.execute_command("HSETEX", "h", "FXX", "FIELDS", "2", "a", "4", "zz", "5") == 0
    assert client.execute_command("HSETEX", "h", "FXX", "FIELDS", "1", "a", "4") == 1
    assert client.hsetex("h", "gone", "x", px=0) == 1 and client.hexists("h", "gone") is False


@pytest.mark.parametrize("argv, error", [
    (("HEXPIRE", "h", "10", "FIELDS", "0", "a"), "^ERR numfields should be greater than 0 and match the provided number of fields$"),
    (("HEXPIRE", "h", "10", "FIELDS", "2", "a"), "^ERR numfields should be greater than 0"),
    (("HEXPIRE", "h", "10", "NOPE", "1", "a"), "^ERR numfields should be greater than 0"),
    (("HEXPIRE", "h", "-1", "FIELDS", "1", "a"), "^ERR invalid expire time in 'hexpire' command$"),
    (("HEXPIRE", "h", "abc", "FIELDS", "1", "a"), "^ERR value is not an integer or out of range$"),
    (("HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1", "a"), "^ERR NX and XX, GT or LT options at the same time are not compatible$"),
    (("HEXPIRE", "h", "10", "GT", "LT", "FIELDS", "1", "a"), "^ERR GT and LT options at the same time are not compatible$"),
    (("HTTL", "h", "FIELDS", "0", "a"), "^ERR syntax error$"),
    (("HTTL", "h", "FIELDS", "abc", "a"), "^ERR value is not an integer or out of range$"),
    (("HGETDEL", "h", "NOPE", "1", "a"), "^ERR syntax error$"),
    (("HGETDEL", "h", "FIELDS", "2", "a"), "^ERR numfields should be greater than 0"),
    (("HGETEX", "h", "EX", "10", "PX", "10", "FIELDS", "1", "a"), "^ERR syntax error$"),
    (("HGETEX", "h", "EX", "-1", "FIELDS", "1", "a"), "^ERR invalid expire time in 'hgetex' command$"),
    (("HSETEX", "h", "FNX", "FXX", "FIELDS", "1", "a", "1"), "^ERR syntax error$"),
    (("HSETEX", "h", "FIELDS", "2", "a", "1"), "^ERR numfields should be greater than 0"),
    (("HSETEX", "h", "FIELDS", "1", "a"), "^ERR wrong number of arguments for 'hsetex' command$"),
])
def test_field_expiry_commands_refuse_bad_input_with_valkeys_texts(client, argv, error):
    client.hset("h", "a", "1")
    with pytest.raises(ResponseError, match=error):
        client.execute_command(*argv)
    assert client.hget("h", "a") == b"1"


def test_config_set_hash_max_listpack_limits_move_hashes_to_the_table(client):
    try:
        assert client.execute_command("CONFIG", "SET", "hash-max-listpack-entries", 4) == b"OK"
        client.hset("h", mapping=fields(4))
        assert encoding(client, "h") == b"listpack"
        client.hset("h", "fifth", "x")
        assert encoding(client, "h") == b"hashtable"
        assert client.execute_command("CONFIG", "SET", "hash-max-ziplist-value", 3) == b"OK"
        client.hset("v", "f", "abcd")
        assert encoding(client, "v") == b"hashtable"
    finally:
        client.execute_command("CONFIG", "SET", "hash-max-listpack-entries", 128)
        client.execute_command("CONFIG", "SET", "hash-max-listpack-value", 64)


def test_every_hash_write_counts_in_the_dirty_counter_as_redis_counts_it(client):
    def changes():
        return client.info("persistence")["rdb_changes_since_last_save"]
    before = changes()
    client.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert changes() == before + 3
    client.hget("h", "a")
    client.hdel("h", "a", "zz")
    assert changes() == before + 4
    client.hincrby("h", "b", 1)
    client.hexpire("h", 100, "b", "zz")
    assert changes() == before + 6


def test_hset_many_and_hmget_many_take_sequences_or_numpy_arrays_in_one_call(ring, resp):
    import numpy
    ring.flushall()
    fields = numpy.array([b"%016d" % i for i in range(1000)], dtype="S16")
    assert ring.hset_many("h", fields, fields[::-1]) == 1000
    assert ring.hset_many("h", [b"extra", "text"], [b"1", b"2"], per_message=1) == 2
    assert resp.hlen("h") == 1002 and resp.hget("h", fields[3]) == fields[996]
    assert ring.hmget_many("h", [b"extra", b"missing", "text"]) == [b"1", None, b"2"]
    assert ring.hmget_many("h", fields) == list(fields[::-1])
    assert ring.hmget_many("nokey", [b"a"]) == [None]
    resp.set("s", "x")
    with pytest.raises(ResponseError, match="^WRONGTYPE"):
        ring.hset_many("s", [b"a"], [b"b"])
    with pytest.raises(ResponseError, match="^WRONGTYPE"):
        ring.hmget_many("s", [b"a"])
    with pytest.raises(ValueError):
        ring.hset_many("h", [b"a", b"b"], [b"1"])


def test_resp3_shapes_match_redis_hgetall_a_map_and_hrandfield_withvalues_pairs(goblin, redis_server):
    from resp_wire import raw_connection

    def replies(port):
        with raw_connection(port) as conn:
            conn.request("HELLO", "3")
            conn.request("FLUSHALL")
            conn.request("HSET", "h", "a", "1")
            return [conn.request("HGETALL", "h"), conn.request("HGETALL", "missing"),
                    conn.request("HRANDFIELD", "h", "1", "WITHVALUES"), conn.request("HRANDFIELD", "h", "-2"),
                    conn.request("HSCAN", "h", "0"), conn.request("HMGET", "h", "a", "b"),
                    conn.request("HTTL", "h", "FIELDS", "1", "a")]

    ours, theirs = replies(goblin.port), replies(redis_server.port)
    assert ours[:6] == theirs[:6]
    assert ours[0] == b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert ours[2] == b"*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert ours[6] == b"*1\r\n:-1\r\n"   # redis 7.0 has no HTTL


def test_hrandfield_withvalues_pairs_reach_a_ring_client_as_redis_py_sees_them_over_resp2(ring, resp):
    ring.flushall()
    ring.hset("h", mapping={"a": "1", "b": "2"})
    assert sorted(ring.hrandfield("h", 5, withvalues=True)) == sorted(resp.hrandfield("h", 5, withvalues=True))


def test_sort_by_and_get_hash_fields_agree_with_redis(client, redis_server):
    from goblin_ring import RespClient
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for target in (client, reference):
            target.flushall()
            target.rpush("ids", "1", "2", "3")
            for i, (weight, name) in enumerate([("30", "c"), ("10", "a"), ("20", "b")], start=1):
                target.hset(f"obj:{i}", mapping={"weight": weight, "name": name})
        for kwargs in ({"by": "obj:*->weight", "get": ["#", "obj:*->name"]}, {"by": "obj:*->missing"},
                       {"by": "obj:*->name", "alpha": True, "desc": True, "get": "obj:*->weight"}):
            assert client.sort("ids", **kwargs) == reference.sort("ids", **kwargs), kwargs
    finally:
        reference.close()


def test_dump_and_restore_carry_fields_values_and_field_ttls(client, size):
    mapping = filled(client, size)
    client.hexpire("h", 1000, "f1")
    payload = client.dump("h")
    assert client.restore("copy", 0, payload) is True
    assert client.hgetall("copy") == mapping
    assert client.httl("copy", "f1", "f2") == [1000, -1]
    assert encoding(client, "copy") == encoding(client, "h")
