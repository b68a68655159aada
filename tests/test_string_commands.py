"""String commands, key expiry and the 16 databases over both transports (the `client`
fixture is parametrised over the ring and RESP), checked against Redis 7.0's replies and
error texts: SET and its options, GET/GETDEL/GETEX, SETNX/SETEX/PSETEX, MSET/MSETNX/MGET,
the counters, APPEND/STRLEN/GETRANGE/SETRANGE, WRONGTYPE both ways, EXPIRE's NX/XX/GT/LT,
lazy and active expiry, SELECT/MOVE/SWAPDB/FLUSHDB, and values crossing transports.

Nothing here sleeps to synchronise: where time has to pass (a 1 ms expiry), the test polls
with a deadline."""

from __future__ import annotations

import time

import pytest

from goblin_ring import DataError, ResponseError, RespClient, RingClient, WrongTypeError

INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1
MAX_STRING = 512 * 1024 * 1024          # proto-max-bulk-len
FAR_FUTURE = 4_102_444_800              # 2100-01-01, in seconds
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def another(goblin, client):
    """A second connection of the same transport as client (its own selected db)."""
    if isinstance(client, RingClient):
        return RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0)
    return RespClient(port=goblin.port, socket_timeout=10.0)


def poll_until(predicate, timeout: float = 5.0, what: str = "condition"):
    """Poll predicate until it holds; fail after timeout seconds. Returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"{what} did not hold within {timeout}s")
        time.sleep(0.002)   # the polling interval, not a synchronisation


# ---- SET and its options ----

def test_set_and_get_round_trip_and_set_overwrites_any_type(client):
    assert client.set("k", "v") is True
    assert client.get("k") == b"v"
    assert client.get("missing") is None
    client.rpush("l", "a")
    assert client.set("l", "now-a-string") is True
    assert client.type("l") == b"string"
    assert client.get("l") == b"now-a-string"


def test_set_ex_px_exat_pxat_set_the_expiry(client):
    assert client.set("ex", "v", ex=100) is True
    assert client.ttl("ex") == 100
    assert client.set("px", "v", px=100_000) is True
    assert 99_000 < client.pttl("px") <= 100_000
    assert client.set("exat", "v", exat=FAR_FUTURE) is True
    assert client.expiretime("exat") == FAR_FUTURE
    assert client.pexpiretime("exat") == FAR_FUTURE * 1000
    assert client.set("pxat", "v", pxat=FAR_FUTURE * 1000 + 123) is True
    assert client.pexpiretime("pxat") == FAR_FUTURE * 1000 + 123
    assert client.get("pxat") == b"v"


def test_set_with_an_absolute_expiry_in_the_past_leaves_no_readable_key(client):
    assert client.set("k", "v", exat=1) is True
    assert client.get("k") is None
    assert client.exists("k") == 0
    assert client.set("k", "v", pxat=1) is True
    assert client.ttl("k") == -2


def test_set_nx_only_creates_and_xx_only_replaces(client):
    assert client.set("k", "first", nx=True) is True
    assert client.set("k", "second", nx=True) is None
    assert client.get("k") == b"first"
    assert client.set("missing", "v", xx=True) is None
    assert client.exists("missing") == 0
    assert client.set("k", "third", xx=True) is True
    assert client.get("k") == b"third"


def test_set_keepttl_keeps_the_expiry_and_a_plain_set_clears_it(client):
    client.set("k", "v", ex=100)
    assert client.set("k", "w", keepttl=True) is True
    assert client.ttl("k") == 100
    assert client.get("k") == b"w"
    assert client.set("k", "x") is True
    assert client.ttl("k") == -1
    assert client.set("fresh", "v", keepttl=True) is True     # KEEPTTL on a new key: no expiry
    assert client.ttl("fresh") == -1


def test_set_get_returns_the_old_value_even_when_nx_or_xx_stops_the_write(client):
    assert client.set("k", "v1", get=True) is None
    assert client.set("k", "v2", get=True) == b"v1"
    assert client.set("k", "v3", nx=True, get=True) == b"v2"     # not written
    assert client.get("k") == b"v2"
    assert client.set("missing", "v", xx=True, get=True) is None
    assert client.exists("missing") == 0
    assert client.set("k", "v4", xx=True, get=True) == b"v2"
    assert client.get("k") == b"v4"


@pytest.mark.parametrize("option", [{"ex": 0}, {"ex": -5}, {"px": 0}, {"px": -1}, {"exat": 0}, {"pxat": -1},
                                    {"ex": INT64_MAX}, {"px": INT64_MAX}],
                         ids=lambda o: "-".join(f"{k}{v}" for k, v in o.items()))
def test_set_refuses_an_invalid_expire_time(client, option):
    with pytest.raises(ResponseError, match=r"^ERR invalid expire time in 'set' command$"):
        client.set("k", "v", **option)
    assert client.exists("k") == 0


def test_set_errors_for_non_integer_expiry_and_conflicting_options(client):
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("SET", "k", "v", "EX", "1.5")
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("SET", "k", "v", "PX", "soon")
    for argv in (("NX", "XX"), ("EX", "5", "PX", "5000"), ("KEEPTTL", "EX", "5"), ("EX",), ("BOGUS",)):
        with pytest.raises(ResponseError, match="^ERR syntax error$"):
            client.execute_command("SET", "k", "v", *argv)
    with pytest.raises(DataError):          # refused by the client, as redis-py does
        client.set("k", "v", nx=True, xx=True)
    with pytest.raises(DataError):
        client.set("k", "v", ex=1, px=1000)
    with pytest.raises(DataError):
        client.set("k", "v", ex=1, keepttl=True)
    assert client.exists("k") == 0


def test_set_get_on_a_list_is_wrongtype_and_leaves_the_list(client):
    client.rpush("l", "a")
    with pytest.raises(WrongTypeError, match=WRONGTYPE):
        client.set("l", "v", get=True)
    with pytest.raises(WrongTypeError):
        client.set("l", "v", nx=True, get=True)
    assert client.lrange("l", 0, -1) == [b"a"]


# ---- GET, GETDEL, GETEX ----

def test_getdel_returns_the_value_and_deletes_the_key(client):
    client.set("k", "v", ex=100)
    assert client.getdel("k") == b"v"
    assert client.exists("k") == 0
    assert client.getdel("k") is None


def test_getex_without_options_leaves_the_ttl(client):
    client.set("k", "v", ex=100)
    assert client.getex("k") == b"v"
    assert client.ttl("k") == 100
    assert client.getex("missing") is None


def test_getex_sets_each_kind_of_expiry_and_persist_removes_it(client):
    client.set("k", "v")
    assert client.getex("k", ex=100) == b"v"
    assert client.ttl("k") == 100
    assert client.getex("k", px=50_000) == b"v"
    assert 49_000 < client.pttl("k") <= 50_000
    assert client.getex("k", exat=FAR_FUTURE) == b"v"
    assert client.expiretime("k") == FAR_FUTURE
    assert client.getex("k", pxat=FAR_FUTURE * 1000 + 7) == b"v"
    assert client.pexpiretime("k") == FAR_FUTURE * 1000 + 7
    assert client.getex("k", persist=True) == b"v"
    assert client.ttl("k") == -1
    assert client.getex("k", exat=1) == b"v"                # in the past: deleted after the read
    assert client.exists("k") == 0


def test_getex_errors(client):
    client.set("k", "v")
    with pytest.raises(ResponseError, match=r"^ERR invalid expire time in 'getex' command$"):
        client.getex("k", ex=0)
    with pytest.raises(ResponseError, match=r"invalid expire time in 'getex' command"):
        client.getex("k", px=-1)
    with pytest.raises(ResponseError, match="^ERR syntax error$"):
        client.execute_command("GETEX", "k", "PERSIST", "EX", "5")
    with pytest.raises(ResponseError, match="^ERR syntax error$"):
        client.execute_command("GETEX", "k", "KEEPTTL")
    with pytest.raises(DataError):
        client.getex("k", ex=5, persist=True)
    client.rpush("l", "a")
    with pytest.raises(WrongTypeError):
        client.getex("l", ex=5)
    assert client.ttl("k") == -1


def test_getex_looks_the_key_up_before_validating_the_expiry(client):
    assert client.getex("missing", ex=0) is None
    client.rpush("l", "a")
    with pytest.raises(WrongTypeError):
        client.getex("l", ex=0)


# ---- SETNX, SETEX, PSETEX ----

def test_setnx_sets_only_a_missing_key_and_keeps_the_ttl_of_an_existing_one(client):
    assert client.setnx("k", "v") is True
    assert client.setnx("k", "w") is False
    assert client.get("k") == b"v"
    client.expire("k", 100)
    assert client.setnx("k", "w") is False
    assert client.ttl("k") == 100


def test_setex_and_psetex_set_value_and_expiry(client):
    assert client.setex("k", 100, "v") is True
    assert client.get("k") == b"v"
    assert client.ttl("k") == 100
    assert client.psetex("p", 100_000, "v") is True
    assert 99_000 < client.pttl("p") <= 100_000
    client.rpush("l", "a")
    assert client.setex("l", 100, "s") is True                # overwrites another type
    assert client.get("l") == b"s"


def test_setex_and_psetex_refuse_invalid_times(client):
    for time_value in (0, -1):
        with pytest.raises(ResponseError, match=r"^ERR invalid expire time in 'setex' command$"):
            client.setex("k", time_value, "v")
        with pytest.raises(ResponseError, match=r"^ERR invalid expire time in 'psetex' command$"):
            client.psetex("k", time_value, "v")
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("SETEX", "k", "soon", "v")
    assert client.exists("k") == 0


# ---- MSET, MSETNX, MGET ----

def test_mset_sets_all_and_clears_their_ttls(client):
    client.set("a", "old", ex=100)
    assert client.mset({"a": "1", "b": "2", "c": b"\x00"}) is True
    assert client.mget(["a", "b", "c", "missing"]) == [b"1", b"2", b"\x00", None]
    assert client.mget("a", "b") == [b"1", b"2"]
    assert client.ttl("a") == -1


def test_msetnx_sets_all_or_nothing(client):
    assert client.msetnx({"a": "1", "b": "2"}) is True
    assert client.msetnx({"b": "x", "c": "3"}) is False
    assert client.mget(["a", "b", "c"]) == [b"1", b"2", None]
    client.rpush("l", "a")
    assert client.msetnx({"l": "x", "d": "4"}) is False       # any existing key, of any type
    assert client.exists("d") == 0


def test_mget_gives_none_for_a_list_key(client):
    client.rpush("l", "a")
    client.set("s", "v")
    assert client.mget(["l", "s", "missing"]) == [None, b"v", None]


def test_mset_and_msetnx_arity(client):
    for word in ("MSET", "MSETNX"):
        with pytest.raises(ResponseError, match=f"wrong number of arguments for '{word.lower()}' command"):
            client.execute_command(word, "a", "1", "b")
        with pytest.raises(ResponseError, match=f"wrong number of arguments for '{word.lower()}' command"):
            client.execute_command(word)


# ---- counters ----

def test_incr_decr_incrby_decrby(client):
    assert client.incr("n") == 1
    assert client.incr("n", 10) == 11
    assert client.incrby("n", -20) == -9
    assert client.decr("n") == -10
    assert client.decrby("n", 5) == -15
    assert client.get("n") == b"-15"
    assert client.decr("fresh") == -1


def test_counters_keep_the_ttl(client):
    client.set("n", "5", ex=100)
    assert client.incr("n") == 6
    assert client.incrbyfloat("n", 0.5) == 6.5
    assert client.ttl("n") == 100


def test_incr_and_decr_overflow_is_an_error_and_keeps_the_value(client):
    client.set("n", str(INT64_MAX))
    with pytest.raises(ResponseError, match="^ERR increment or decrement would overflow$"):
        client.incr("n")
    client.set("n", str(INT64_MIN))
    with pytest.raises(ResponseError, match="^ERR increment or decrement would overflow$"):
        client.decr("n")
    with pytest.raises(ResponseError, match="^ERR increment or decrement would overflow$"):
        client.incrby("n", -1)
    assert client.get("n") == str(INT64_MIN).encode()
    client.set("m", "1")
    with pytest.raises(ResponseError, match="^ERR decrement would overflow$"):
        client.decrby("m", INT64_MIN)
    assert client.incrby("m", INT64_MAX - 1) == INT64_MAX


@pytest.mark.parametrize("text", [b"abc", b" 1", b"1 ", b"1.5", b"01", b"", b"9223372036854775808", b"1e3"])
def test_incr_on_a_value_that_is_not_an_int64_is_an_error(client, text):
    client.set("n", text)
    with pytest.raises(ResponseError, match="^ERR value is not an integer or out of range$"):
        client.incr("n")
    assert client.get("n") == text


@pytest.mark.parametrize("amount", [2 ** 63, -(2 ** 63) - 1, 1.5, "abc", ""])
def test_incrby_with_an_amount_that_is_not_an_int64_is_an_error(client, amount):
    with pytest.raises(ResponseError, match="^ERR value is not an integer or out of range$"):
        client.incrby("n", amount)
    with pytest.raises(ResponseError, match="^ERR value is not an integer or out of range$"):
        client.decrby("n", amount)
    assert client.exists("n") == 0


def test_incrbyfloat_stores_text_without_trailing_zeros(client):
    client.set("f", "10.50")
    assert client.incrbyfloat("f", 0.1) == pytest.approx(10.6)
    assert client.get("f") == b"10.6"
    assert client.execute_command("INCRBYFLOAT", "f", "-5.6") == b"5"        # the reply is text
    assert client.execute_command("INCRBYFLOAT", "f", "5.0e3") == b"5005"
    assert client.incrbyfloat("new", 3) == 3.0
    assert client.get("new") == b"3"
    client.set("i", "7")
    assert client.incrbyfloat("i", -0.25) == 6.75


def test_incrbyfloat_refuses_nan_infinity_and_non_floats(client):
    with pytest.raises(ResponseError, match="^ERR increment would produce NaN or Infinity$"):
        client.incrbyfloat("f", float("inf"))
    with pytest.raises(ResponseError, match="^ERR value is not a valid float$"):
        client.incrbyfloat("f", float("nan"))
    assert client.exists("f") == 0
    client.set("f", "1e4932")                  # near the long double's maximum, as in Redis
    with pytest.raises(ResponseError, match="^ERR increment would produce NaN or Infinity$"):
        client.execute_command("INCRBYFLOAT", "f", "1e4932")
    assert client.get("f") == b"1e4932"
    client.set("s", "abc")
    with pytest.raises(ResponseError, match="^ERR value is not a valid float$"):
        client.incrbyfloat("s", 1)
    with pytest.raises(ResponseError, match="^ERR value is not a valid float$"):
        client.execute_command("INCRBYFLOAT", "f", "one")


def test_incrbyfloat_checks_the_type_before_the_increment(client):
    client.rpush("l", "a")
    with pytest.raises(WrongTypeError):
        client.execute_command("INCRBYFLOAT", "l", "not-a-number")


# ---- APPEND, STRLEN, GETRANGE, SETRANGE ----

def test_append_and_strlen(client):
    assert client.append("k", "Hello") == 5
    assert client.append("k", b" World\x00") == 12
    assert client.get("k") == b"Hello World\x00"
    assert client.strlen("k") == 12
    assert client.strlen("missing") == 0
    assert client.append("k", "") == 12


def test_append_and_setrange_keep_the_ttl(client):
    client.set("k", "abc", ex=100)
    client.append("k", "d")
    client.setrange("k", 0, "z")
    assert client.get("k") == b"zbcd"
    assert client.ttl("k") == 100


@pytest.mark.parametrize("start,end,expected", [
    (0, 3, b"This"), (-3, -1, b"ing"), (0, -1, b"This is a string"), (10, 100, b"string"),
    (-100, 3, b"This"), (5, 3, b""), (-1, -5, b""), (16, 20, b""), (15, 15, b"g"),
    (0, -100, b"T"),      # Redis 7.0: a negative end before the start clamps to 0
    (INT64_MIN, INT64_MAX, b"This is a string"),
])
def test_getrange_clamps_like_redis(client, start, end, expected):
    client.set("k", "This is a string")
    assert client.getrange("k", start, end) == expected
    assert client.substr("k", start, end) == expected


def test_getrange_of_a_missing_or_empty_key_is_empty(client):
    assert client.getrange("missing", 0, -1) == b""
    client.set("empty", "")
    assert client.getrange("empty", 0, -1) == b""
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("GETRANGE", "empty", "a", "1")


def test_setrange_overwrites_and_pads_with_zero_bytes(client):
    client.set("k", "Hello World")
    assert client.setrange("k", 6, "Redis") == 11
    assert client.get("k") == b"Hello Redis"
    assert client.setrange("k", 13, "!") == 14
    assert client.get("k") == b"Hello Redis\x00\x00!"
    assert client.setrange("new", 5, "x") == 6
    assert client.get("new") == b"\x00" * 5 + b"x"


def test_setrange_with_an_empty_value_changes_nothing(client):
    assert client.setrange("missing", 5, "") == 0
    assert client.exists("missing") == 0
    client.set("k", "abc")
    assert client.setrange("k", 100, "") == 3
    assert client.get("k") == b"abc"


def test_setrange_offset_limits(client):
    client.set("k", "abc")
    with pytest.raises(ResponseError, match=r"^ERR string exceeds maximum allowed size \(proto-max-bulk-len\)$"):
        client.setrange("k", MAX_STRING, "x")
    with pytest.raises(ResponseError, match="maximum allowed size"):
        client.setrange("k", MAX_STRING - 1, "xy")
    with pytest.raises(ResponseError, match="maximum allowed size"):
        client.setrange("missing", MAX_STRING, "x")
    with pytest.raises(ResponseError, match="^ERR offset is out of range$"):
        client.setrange("k", -1, "x")
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.setrange("k", 2 ** 63, "x")
    assert client.get("k") == b"abc"
    assert client.exists("missing") == 0


# ---- WRONGTYPE both ways ----

STRING_COMMANDS_ON_A_LIST = {
    "get": lambda c: c.get("l"),
    "getdel": lambda c: c.getdel("l"),
    "getex": lambda c: c.getex("l"),
    "getex-persist": lambda c: c.getex("l", persist=True),
    "set-get": lambda c: c.set("l", "v", get=True),
    "incr": lambda c: c.incr("l"),
    "incrby": lambda c: c.incrby("l", 5),
    "decr": lambda c: c.decr("l"),
    "decrby": lambda c: c.decrby("l", 5),
    "incrbyfloat": lambda c: c.incrbyfloat("l", 1.5),
    "append": lambda c: c.append("l", "x"),
    "strlen": lambda c: c.strlen("l"),
    "getrange": lambda c: c.getrange("l", 0, -1),
    "substr": lambda c: c.substr("l", 0, -1),
    "setrange": lambda c: c.setrange("l", 0, "x"),
    "setrange-empty": lambda c: c.setrange("l", 0, ""),
}


@pytest.mark.parametrize("command", STRING_COMMANDS_ON_A_LIST)
def test_string_commands_on_a_list_are_wrongtype(client, command):
    client.rpush("l", "a", "b")
    with pytest.raises(WrongTypeError, match=WRONGTYPE):
        STRING_COMMANDS_ON_A_LIST[command](client)
    assert client.lrange("l", 0, -1) == [b"a", b"b"]


LIST_COMMANDS_ON_A_STRING = {
    "lpush": lambda c: c.lpush("s", "x"),
    "rpush": lambda c: c.rpush("s", "x"),
    "lpushx": lambda c: c.lpushx("s", "x"),
    "rpushx": lambda c: c.rpushx("s", "x"),
    "lpop": lambda c: c.lpop("s"),
    "rpop-count": lambda c: c.rpop("s", 2),
    "llen": lambda c: c.llen("s"),
    "lindex": lambda c: c.lindex("s", 0),
    "lrange": lambda c: c.lrange("s", 0, -1),
    "lset": lambda c: c.lset("s", 0, "x"),
    "linsert": lambda c: c.linsert("s", "BEFORE", "a", "x"),
    "lrem": lambda c: c.lrem("s", 0, "x"),
    "ltrim": lambda c: c.ltrim("s", 0, 1),
    "lpos": lambda c: c.lpos("s", "x"),
    "lmove-source": lambda c: c.lmove("s", "l", "LEFT", "RIGHT"),
    "lmove-destination": lambda c: c.lmove("l", "s", "LEFT", "RIGHT"),
    "rpoplpush-destination": lambda c: c.rpoplpush("l", "s"),
    "lmpop": lambda c: c.lmpop(2, "missing", "s", direction="LEFT"),
}


@pytest.mark.parametrize("command", LIST_COMMANDS_ON_A_STRING)
def test_list_commands_on_a_string_are_wrongtype(client, command):
    client.set("s", "value")
    client.rpush("l", "a")
    with pytest.raises(WrongTypeError, match=WRONGTYPE):
        LIST_COMMANDS_ON_A_STRING[command](client)
    assert client.get("s") == b"value"
    assert client.lrange("l", 0, -1) == [b"a"]


# ---- expiry ----

# (options, expected reply with no TTL, with TTL 100 s and new 50 s, with TTL 100 s and new 200 s)
EXPIRE_TRUTH_TABLE = [
    ({}, 1, 1, 1),
    ({"nx": True}, 1, 0, 0),
    ({"xx": True}, 0, 1, 1),
    ({"gt": True}, 0, 0, 1),                 # no TTL counts as infinite: nothing is greater
    ({"lt": True}, 1, 1, 0),                 # ... and anything is less
    ({"xx": True, "gt": True}, 0, 0, 1),
    ({"xx": True, "lt": True}, 0, 1, 0),
]


@pytest.mark.parametrize("options,no_ttl,shorter,longer", EXPIRE_TRUTH_TABLE,
                         ids=lambda v: ("+".join(v) or "plain") if isinstance(v, dict) else str(v))
def test_expire_nx_xx_gt_lt_truth_table(client, options, no_ttl, shorter, longer):
    client.set("persistent", "v")
    assert client.expire("persistent", 50, **options) is bool(no_ttl)
    assert client.ttl("persistent") == (50 if no_ttl else -1)
    for new, expected in ((50, shorter), (200, longer)):
        client.set("volatile", "v", ex=100)
        assert client.expire("volatile", new, **options) is bool(expected), new
        assert client.ttl("volatile") == (new if expected else 100)
    assert client.expire("missing", 50, **options) is False


def test_pexpire_expireat_pexpireat_take_the_same_conditions(client):
    client.set("k", "v")
    assert client.pexpire("k", 100_000, xx=True) is False
    assert client.pexpire("k", 100_000, nx=True) is True
    assert client.pexpireat("k", FAR_FUTURE * 1000, lt=True) is False
    assert client.expireat("k", FAR_FUTURE, gt=True) is True
    assert client.expiretime("k") == FAR_FUTURE
    assert client.pexpireat("k", FAR_FUTURE * 1000 - 1, lt=True) is True
    assert client.pexpiretime("k") == FAR_FUTURE * 1000 - 1


@pytest.mark.parametrize("options", [{"nx": True, "xx": True}, {"nx": True, "gt": True}, {"nx": True, "lt": True}])
def test_expire_nx_with_another_condition_is_an_error(client, options):
    client.set("k", "v")
    with pytest.raises(ResponseError, match="^ERR NX and XX, GT or LT options at the same time are not compatible$"):
        client.expire("k", 10, **options)
    assert client.ttl("k") == -1


def test_expire_gt_with_lt_and_bad_times_are_errors(client):
    client.set("k", "v")
    with pytest.raises(ResponseError, match="^ERR GT and LT options at the same time are not compatible$"):
        client.expire("k", 10, gt=True, lt=True)
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("EXPIRE", "k", "ten")
    with pytest.raises(ResponseError, match="^ERR invalid expire time in 'expire' command$"):
        client.expire("k", INT64_MAX)
    with pytest.raises(ResponseError, match="^ERR invalid expire time in 'pexpire' command$"):
        client.pexpire("k", INT64_MAX)
    with pytest.raises(ResponseError, match="^ERR Unsupported option BOGUS$"):
        client.execute_command("EXPIRE", "k", "10", "BOGUS")
    assert client.ttl("k") == -1


def test_an_expiry_in_the_past_deletes_the_key_at_once(client):
    for name, call in (("expire", lambda: client.expire("k", -1)), ("pexpire", lambda: client.pexpire("k", 0)),
                       ("expireat", lambda: client.expireat("k", 1)),
                       ("pexpireat", lambda: client.pexpireat("k", 1000))):
        client.set("k", "v")
        assert call() is True, name
        assert client.exists("k") == 0, name
        assert client.dbsize() == 0, name


def test_ttl_pttl_expiretime_for_missing_persistent_and_volatile_keys(client):
    assert client.ttl("missing") == client.pttl("missing") == -2
    assert client.expiretime("missing") == client.pexpiretime("missing") == -2
    client.rpush("l", "a")                   # any type
    assert client.ttl("l") == client.pttl("l") == -1
    assert client.expiretime("l") == client.pexpiretime("l") == -1
    client.expire("l", 100)
    assert client.ttl("l") == 100
    assert 99_000 < client.pttl("l") <= 100_000
    now = time.time()
    assert now + 98 <= client.expiretime("l") <= now + 102
    assert client.pexpiretime("l") // 1000 in range(int(now) + 98, int(now) + 102)


def test_persist_removes_the_expiry_once(client):
    client.set("k", "v", ex=100)
    assert client.persist("k") is True
    assert client.ttl("k") == -1
    assert client.persist("k") is False
    assert client.persist("missing") is False


def test_rename_keeps_the_ttl_of_the_source(client):
    client.set("src", "v", ex=100)
    client.set("dst", "old", ex=5000)
    assert client.rename("src", "dst") is True
    assert client.get("dst") == b"v"
    assert client.ttl("dst") == 100
    client.set("plain", "p")
    assert client.rename("plain", "dst") is True           # a persistent source: no TTL after
    assert client.ttl("dst") == -1


def test_lazy_expiry_a_read_after_the_deadline_finds_nothing(client):
    client.set("k", "v")
    client.rpush("l", "a")
    assert client.pexpire("k", 1) is True
    assert client.pexpire("l", 1) is True
    poll_until(lambda: client.get("k") is None, timeout=2.0, what="GET of an expired key returning None")
    poll_until(lambda: client.llen("l") == 0, timeout=2.0, what="LLEN of an expired list returning 0")
    assert client.exists("k", "l") == 0
    assert client.ttl("k") == -2
    assert client.set("k", "new", xx=True) is None      # an expired key does not count as existing
    assert client.setnx("k", "again") is True


ACTIVE_KEYS = 300


def fill_volatile(client, count=ACTIVE_KEYS, ms=1):
    with client.pipeline() as pipe:
        for i in range(count):
            pipe.set(f"vol:{i}", i, px=ms)
        assert pipe.execute() == [True] * count


def test_active_expiry_removes_expired_keys_nobody_reads(client):
    client.set("stays", "v")
    fill_volatile(client)
    poll_until(lambda: client.dbsize() == 1, timeout=5.0, what="the cron reclaiming every expired key")
    assert client.keys("*") == [b"stays"]


def test_info_stats_counts_expired_keys(client):
    before = client.info("stats")["expired_keys"]
    fill_volatile(client)
    poll_until(lambda: client.dbsize() == 0, timeout=5.0, what="the cron reclaiming every expired key")
    assert client.info("stats")["expired_keys"] >= before + ACTIVE_KEYS


# ---- SELECT, MOVE, SWAPDB, FLUSHDB, FLUSHALL ----

def test_each_connection_has_its_own_selected_db(goblin, client):
    other = another(goblin, client)
    try:
        assert client.select(3) is True
        client.set("k", "in-3")
        client.set("only-3", "x")
        assert other.get("k") is None
        other.set("k", "in-0")
        assert client.get("k") == b"in-3"
        assert client.dbsize() == 2
        assert other.dbsize() == 1
        assert other.select(3) is True
        assert other.get("k") == b"in-3"
        assert client.select(0) is True
        assert client.get("k") == b"in-0"
    finally:
        other.close()


def test_a_new_connection_starts_in_db_0(goblin, client):
    client.select(5)
    client.set("k", "in-5")
    fresh = another(goblin, client)
    try:
        assert fresh.get("k") is None
        assert fresh.dbsize() == 0
    finally:
        fresh.close()


def test_select_refuses_indexes_out_of_range(client):
    for index in (16, -1):
        with pytest.raises(ResponseError, match="^ERR DB index is out of range$"):
            client.select(index)
    # past an int, Redis's getIntFromObjectOrReply answers first (redis-server 7.0's text)
    with pytest.raises(ResponseError, match="^ERR value is out of range, value must between -2147483648 and 2147483647$"):
        client.select(2 ** 40)
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("SELECT", "one")
    client.set("k", "still-db-0")
    assert client.select(15) is True
    assert client.get("k") is None


def test_move_moves_a_key_with_its_ttl_unless_the_target_has_it(goblin, client):
    other = another(goblin, client)
    try:
        other.select(3)
        client.set("k", "v", ex=100)
        assert client.move("k", 3) is True
        assert client.exists("k") == 0
        assert other.get("k") == b"v"
        assert other.ttl("k") == 100
        client.set("k", "new")
        assert client.move("k", 3) is False              # db 3 already has it: nothing moves
        assert client.get("k") == b"new"
        assert other.get("k") == b"v"
        assert client.move("missing", 3) is False
        client.rpush("l", "a", "b")
        assert client.move("l", 3) is True
        assert other.lrange("l", 0, -1) == [b"a", b"b"]
    finally:
        other.close()


def test_move_errors(client):
    client.set("k", "v")
    with pytest.raises(ResponseError, match="^ERR source and destination objects are the same$"):
        client.move("k", 0)
    with pytest.raises(ResponseError, match="^ERR DB index is out of range$"):
        client.move("k", 16)
    with pytest.raises(ResponseError, match="value is not an integer or out of range"):
        client.execute_command("MOVE", "k", "three")
    assert client.get("k") == b"v"


def test_swapdb_is_seen_by_another_connection_on_db_0(goblin, client):
    other = another(goblin, client)
    try:
        client.set("k", "from-0")
        client.select(1)
        client.set("k", "from-1")
        client.set("extra", "x")
        assert other.get("k") == b"from-0"
        assert client.swapdb(0, 1) is True
        assert other.get("k") == b"from-1"               # other still has db 0 selected
        assert other.dbsize() == 2
        assert client.get("k") == b"from-0"              # and so does this connection's db 1
        assert client.swapdb(1, 1) is True
        assert client.get("k") == b"from-0"
    finally:
        other.close()


def test_swapdb_errors(client):
    with pytest.raises(ResponseError, match="^ERR DB index is out of range$"):
        client.swapdb(0, 16)
    with pytest.raises(ResponseError, match="^ERR invalid first DB index$"):
        client.execute_command("SWAPDB", "a", "1")
    with pytest.raises(ResponseError, match="^ERR invalid second DB index$"):
        client.execute_command("SWAPDB", "0", "b")


def test_flushdb_clears_only_the_selected_db_and_flushall_clears_every_db(goblin, client):
    other = another(goblin, client)
    try:
        other.select(7)
        client.set("k0", "v")
        other.set("k7", "v")
        assert other.flushdb() is True
        assert other.dbsize() == 0
        assert client.get("k0") == b"v"
        other.set("k7", "v")
        assert client.flushall() is True
        assert other.dbsize() == 0
        assert client.dbsize() == 0
    finally:
        other.close()


def test_info_keyspace_lists_every_non_empty_db(client):
    client.set("a", "v", ex=100)
    client.select(3)
    client.set("b", "v")
    client.set("c", "v")
    info = client.info("keyspace")
    assert info["db0"]["keys"] == 1 and info["db0"]["expires"] == 1
    assert info["db3"]["keys"] == 2 and info["db3"]["expires"] == 0


# ---- across transports ----

BINARY_VALUES = [b"\x00", b"a\r\nb", b"\r\n", b"\x00\r\n\x00" * 100, bytes(range(256)), b"", b"$5\r\nhello\r\n"]


def test_a_string_set_over_the_ring_is_read_over_resp_and_back(ring, resp):
    try:
        for i, value in enumerate(BINARY_VALUES):
            key = b"xs:\x00\r\n:%d" % i
            assert ring.set(key, value) is True
            assert resp.get(key) == value
            assert resp.strlen(key) == len(value)
            assert resp.set(key, value + b"\x00tail", get=True) == value
            assert ring.get(key) == value + b"\x00tail"
        keys = [b"xs:\x00\r\n:%d" % i for i in range(len(BINARY_VALUES))]
        assert ring.mget(keys) == resp.mget(keys) == [v + b"\x00tail" for v in BINARY_VALUES]
        resp.mset({b"xs:m\x00": b"\r\n\x00", b"xs:m\r\n": b"\x00"})
        assert ring.mget([b"xs:m\x00", b"xs:m\r\n"]) == [b"\r\n\x00", b"\x00"]
        ring.append(b"xs:m\x00", b"\r\n")
        assert resp.getrange(b"xs:m\x00", -3, -1) == b"\x00\r\n"
    finally:
        ring.flushall()


def test_ttl_and_counters_are_shared_between_transports(ring, resp):
    try:
        ring.set("xs:n", "41", ex=100)
        assert resp.incr("xs:n") == 42
        assert ring.ttl("xs:n") == 100
        assert resp.persist("xs:n") is True
        assert ring.ttl("xs:n") == -1
        assert ring.getdel("xs:n") == b"42"
        assert resp.exists("xs:n") == 0
    finally:
        ring.flushall()


def test_select_on_the_ring_does_not_move_a_resp_connection(ring, resp):
    try:
        ring.select(4)
        ring.set("xs:where", "db4")
        assert resp.get("xs:where") is None
        resp.select(4)
        assert resp.get("xs:where") == b"db4"
    finally:
        ring.flushall()
