"""Every list command over both transports (the `client` fixture is parametrised over the
ring and RESP), with lists on both sides of the compact/segmented threshold (128 entries),
checked against Redis 7's documented replies. The whole module runs twice: on a server
with --list-implementation segmented and on one with pma."""

import pytest

from goblin_ring import ResponseError


@pytest.fixture(scope="module")
def goblin(goblin_each_list_implementation):
    return goblin_each_list_implementation


SIZES = [5, 300]   # compact, and segmented after conversion


def values(n, prefix="v"):
    return [f"{prefix}{i}".encode() for i in range(n)]


@pytest.fixture(params=SIZES, ids=lambda n: f"{n}items")
def size(request):
    return request.param


def filled(client, size, key="l"):
    items = values(size)
    assert client.rpush(key, *items) == size
    return items


def test_rpush_and_lpush_return_the_length_and_keep_order(client):
    assert client.rpush("l", "a", "b") == 2
    assert client.lpush("l", "x", "y") == 4
    assert client.lrange("l", 0, -1) == [b"y", b"x", b"a", b"b"]


def test_pushx_only_pushes_onto_an_existing_list(client):
    assert client.lpushx("missing", "a") == 0
    assert client.rpushx("missing", "a") == 0
    assert client.exists("missing") == 0
    client.rpush("l", "a")
    assert client.rpushx("l", "b", "c") == 3
    assert client.lpushx("l", "z") == 4
    assert client.lrange("l", 0, -1) == [b"z", b"a", b"b", b"c"]


def test_llen_counts_and_is_zero_for_a_missing_key(client, size):
    filled(client, size)
    assert client.llen("l") == size
    assert client.llen("missing") == 0


def test_lindex_reads_positive_and_negative_indexes(client, size):
    items = filled(client, size)
    for index in (0, 1, size // 2, size - 1, -1, -size, size, -size - 1, 10**12):
        expected = items[index] if -size <= index < size else None
        assert client.lindex("l", index) == expected, index
    assert client.lindex("missing", 0) is None


def test_lrange_clamps_like_redis(client, size):
    items = filled(client, size)
    assert client.lrange("l", 0, -1) == items
    assert client.lrange("l", 2, 4) == items[2:5]
    assert client.lrange("l", -3, -1) == items[-3:]
    assert client.lrange("l", -100000, 1) == items[:2]
    assert client.lrange("l", 3, 1) == []
    assert client.lrange("l", size, size + 5) == []
    assert client.lrange("l", 1, 10**9) == items[1:]
    assert client.lrange("missing", 0, -1) == []


def test_lset_replaces_in_place_and_reports_errors(client, size):
    items = filled(client, size)
    assert client.lset("l", 1, "a-longer-replacement-value") is True
    assert client.lset("l", -1, "z") is True
    items[1], items[-1] = b"a-longer-replacement-value", b"z"
    assert client.lrange("l", 0, -1) == items
    with pytest.raises(ResponseError, match="ERR index out of range"):
        client.lset("l", size, "x")
    with pytest.raises(ResponseError, match="ERR no such key"):
        client.lset("missing", 0, "x")


def test_lpop_and_rpop_with_and_without_count(client, size):
    model = filled(client, size)
    assert client.lpop("l") == model.pop(0)
    assert client.rpop("l") == model.pop()
    assert client.lpop("l", 2) == [model.pop(0), model.pop(0)]
    assert client.rpop("l", 2) == [model.pop() for _ in range(min(2, len(model)))]
    assert client.lpop("l", 0) == ([] if model else None)
    assert client.lpop("missing") is None
    assert client.lpop("missing", 3) is None
    if model:
        assert client.rpop("l", 10**6) == list(reversed(model))
    assert client.exists("l") == 0          # an emptied list is deleted


def test_pop_count_must_be_positive(client):
    client.rpush("l", "a")
    with pytest.raises(ResponseError, match="value is out of range, must be positive"):
        client.lpop("l", -1)


def test_linsert_before_and_after_a_pivot(client, size):
    items = filled(client, size)
    pivot = items[size // 2]
    assert client.linsert("l", "BEFORE", pivot, "new-before") == size + 1
    assert client.linsert("l", "after", pivot, "new-after") == size + 2
    expected = items[:size // 2] + [b"new-before", pivot, b"new-after"] + items[size // 2 + 1:]
    assert client.lrange("l", 0, -1) == expected
    assert client.linsert("l", "BEFORE", "no-such-pivot", "x") == -1
    assert client.linsert("missing", "BEFORE", "a", "x") == 0
    with pytest.raises(ResponseError, match="syntax error"):
        client.linsert("l", "SIDEWAYS", pivot, "x")


def test_lrem_from_head_tail_and_all(client, size):
    client.rpush("l", *(["x", "y"] * size))
    assert client.lrem("l", 2, "x") == 2
    assert client.lrem("l", -1, "x") == 1
    assert client.lrange("l", 0, 3) == [b"y", b"y", b"x", b"y"]
    assert client.lrem("l", 0, "x") == size - 3
    assert client.lrange("l", 0, -1) == [b"y"] * size
    assert client.lrem("l", 0, "y") == size
    assert client.exists("l") == 0
    assert client.lrem("missing", 0, "x") == 0


def test_ltrim_keeps_a_range_and_deletes_an_emptied_list(client, size):
    items = filled(client, size)
    assert client.ltrim("l", 1, -2) is True
    assert client.lrange("l", 0, -1) == items[1:-1]
    assert client.ltrim("l", 5, 2) is True
    assert client.exists("l") == 0
    assert client.ltrim("missing", 0, 1) is True


def test_lpos_rank_count_and_maxlen(client, size):
    client.rpush("l", *(["a", "b", "c"] * (size // 3 + 1)))
    assert client.lpos("l", "c") == 2
    assert client.lpos("l", "c", rank=2) == 5
    assert client.lpos("l", "c", rank=-1) == client.llen("l") - 1
    assert client.lpos("l", "a", count=2) == [0, 3]
    n = client.llen("l")
    from_tail = [i for i in range(n - 1, -1, -1) if i % 3 == 0]     # where the "a"s are, tail first
    assert client.lpos("l", "a", rank=-2, count=2) == from_tail[1:3]
    assert client.lpos("l", "b", count=0, maxlen=6) == [1, 4]
    assert client.lpos("l", "z") is None
    assert client.lpos("l", "z", count=3) == []
    assert client.lpos("missing", "a") is None
    assert client.lpos("missing", "a", count=1) == []
    with pytest.raises(ResponseError, match="RANK can't be zero"):
        client.lpos("l", "a", rank=0)
    with pytest.raises(ResponseError, match="COUNT can't be negative"):
        client.lpos("l", "a", count=-1)
    with pytest.raises(ResponseError, match="MAXLEN can't be negative"):
        client.lpos("l", "a", maxlen=-1)


def test_lmove_between_lists_and_rotating_one(client, size):
    items = filled(client, size)
    assert client.lmove("l", "other", "LEFT", "RIGHT") == items[0]
    assert client.lmove("l", "other", "RIGHT", "LEFT") == items[-1]
    assert client.lrange("other", 0, -1) == [items[-1], items[0]]
    assert client.lmove("l", "l", "LEFT", "RIGHT") == items[1]      # rotation
    assert client.lindex("l", -1) == items[1]
    assert client.llen("l") == size - 2
    assert client.lmove("missing", "other") is None


def test_rpoplpush_moves_the_tail_to_the_head(client, size):
    items = filled(client, size)
    assert client.rpoplpush("l", "dst") == items[-1]
    assert client.lindex("dst", 0) == items[-1]
    assert client.rpoplpush("missing", "dst") is None


def test_lmpop_takes_from_the_first_non_empty_list(client, size):
    items = filled(client, size, key="second")
    assert client.lmpop(2, "first", "second", direction="LEFT") == [b"second", items[:1]]
    assert client.lmpop(2, "first", "second", direction="RIGHT", count=3) == [b"second", items[-1:-4:-1]]
    assert client.lmpop(1, "nothing", direction="LEFT") is None
    with pytest.raises(ResponseError, match="count should be greater than 0"):
        client.execute_command("LMPOP", 1, "second", "LEFT", "COUNT", 0)
    with pytest.raises(ResponseError, match="numkeys should be greater than 0"):
        client.execute_command("LMPOP", 0, "second", "LEFT")


def test_pop_with_an_argument_after_the_count_is_a_wrong_arity_error_and_pops_nothing(client, size):
    items = filled(client, size)
    for name in ("LPOP", "RPOP"):
        with pytest.raises(ResponseError, match=f"^ERR wrong number of arguments for '{name.lower()}' command$"):
            client.execute_command(name, "l", 1, 1)
    with pytest.raises(ResponseError, match="^ERR value is out of range, must be positive$"):
        client.execute_command("LPOP", "l", "one")   # a non-number count: Redis's range text, too
    assert client.lrange("l", 0, -1) == items


def test_a_numkeys_that_is_not_a_number_gets_redis_numkeys_error(client):
    client.rpush("mylist", "a")
    for argv in (("LMPOP", "a", "mylist", "LEFT"), ("BLMPOP", 0, "a", "mylist", "LEFT"),
                 ("LMPOP", "99999999999999999999", "mylist", "LEFT"), ("LMPOP", -1, "mylist", "LEFT")):
        with pytest.raises(ResponseError, match="^ERR numkeys should be greater than 0$"):
            client.execute_command(*argv)
    with pytest.raises(ResponseError, match="^ERR count should be greater than 0$"):
        client.execute_command("LMPOP", 1, "mylist", "LEFT", "COUNT", "many")
    assert client.lrange("mylist", 0, -1) == [b"a"]


def test_wrong_arity_and_non_integer_arguments_get_redis_errors_and_the_connection_stays(client):
    client.rpush("l", "a")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'lindex' command"):
        client.execute_command("LINDEX", "l")
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("LINDEX", "l", "one")
    with pytest.raises(ResponseError, match="unknown command 'NOPE', with args beginning with: 'x' "):
        client.execute_command("NOPE", "x")
    assert client.lindex("l", 0) == b"a"


def test_binary_values_survive_both_transports(client):
    blob = bytes(range(256)) * 4
    client.rpush("bin", blob, b"", b"\r\n\x00")
    assert client.lrange("bin", 0, -1) == [blob, b"", b"\r\n\x00"]


def test_pipeline_returns_replies_in_order(client):
    with client.pipeline() as pipe:
        for i in range(1000):
            pipe.rpush("p", i)
        pipe.llen("p")
        pipe.lindex("p", 999)
        pipe.lindex("p", 1000)
        results = pipe.execute()
    assert results[:1000] == list(range(1, 1001))
    assert results[1000:] == [1000, b"999", None]
