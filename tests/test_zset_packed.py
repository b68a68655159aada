"""The packed sorted-set encoding (int32 decimal members, float32 scores, numeric tie
order; native/engines/zset/zset.h) over both transports: picked by CONFIG SET / --zset-implementation
packed for sets leaving the compact size and by GOBLIN.ZSET.CONVERT per key; converted to
standard at once by a member or score that does not fit or by a lex-range command, nothing lost;
every sorted-set command on a packed set replies as redis-server 7.0 does where the orders agree
(integer members with distinct scores); DUMP/RESTORE, DEBUG RELOAD, COPY, DEBUG DIGEST-VALUE,
MEMORY USAGE, GOBLIN.ZSET.INTERNALS and GOBLIN.OPTIMIZE cover it (test_snapshot.py compares a
packed set's DEBUG DIGEST with redis-server's)."""

import random

import pytest

from goblin_ring import ResponseError, RespClient
from servers import GoblinServer


@pytest.fixture
def packed(client):
    """The client with zset-implementation packed (set back to standard afterwards)."""
    client.config_set("zset-implementation", "packed")
    yield client
    client.config_set("zset-implementation", "standard")


def encoding(client, key):
    return client.execute_command("OBJECT", "ENCODING", key)


def int_members(n, start=-100):
    """n int32 members from start, each with a distinct float32-exact score (member * 0.5 + 3)."""
    return {str(m).encode(): m * 0.5 + 3 for m in range(start, start + n)}


def test_config_picks_packed_for_sets_leaving_the_compact_size(packed):
    assert packed.config_get("zset-implementation") == {"zset-implementation": "packed"}
    packed.zadd("z", int_members(100))
    assert encoding(packed, "z") == b"listpack"
    packed.zadd("z", int_members(100, start=0))
    assert encoding(packed, "z") == b"packed" and packed.zcard("z") == 200
    assert packed.zscore("z", "-100") == -47.0 and packed.zscore("z", "99") == 52.5
    assert packed.zrank("z", "-100") == 0 and packed.zrevrank("z", "99") == 0
    # a set whose members do not all fit stays standard
    packed.zadd("s", {f"m{i}": i for i in range(200)})
    assert encoding(packed, "s") == b"skiplist"
    with pytest.raises(ResponseError, match="standard, packed"):
        packed.config_set("zset-implementation", "tiny")


@pytest.mark.parametrize("member, score", [
    (b"01", 1), (b"-0", 1), (b"+1", 1), (b" 1", 1), (b"2147483648", 1), (b"-2147483649", 1), (b"x", 1),
    (b"5", 0.1), (b"5", 1e300), (b"5", 16777217),
])
def test_a_member_or_score_that_does_not_fit_converts_to_standard_losing_nothing(packed, member, score):
    mapping = int_members(300)
    packed.zadd("z", mapping)
    assert encoding(packed, "z") == b"packed"
    packed.zadd("z", {member: score})
    assert encoding(packed, "z") == b"skiplist"
    mapping[member] = score
    assert packed.zcard("z") == len(mapping)
    assert dict(packed.zrange("z", 0, -1, withscores=True)) == {m: float(s) for m, s in mapping.items()}


def test_int32_limits_and_infinities_fit_packed(packed):
    mapping = int_members(200)
    mapping.update({b"2147483647": float("inf"), b"-2147483648": float("-inf"), b"0": -0.0, b"7": 16777216})
    packed.zadd("z", mapping)
    assert encoding(packed, "z") == b"packed"
    assert packed.zrange("z", 0, 0) == [b"-2147483648"] and packed.zrange("z", -1, -1) == [b"2147483647"]
    assert packed.execute_command("ZSCORE", "z", "2147483647") == b"inf"
    assert packed.zscore("z", "7") == 16777216.0
    assert packed.zincrby("z", 1, "7") == 16777217.0   # past float32's integers: standard now
    assert encoding(packed, "z") == b"skiplist"


def test_zincrby_keeps_packed_while_the_score_fits(packed):
    packed.zadd("z", int_members(200))
    for _ in range(50):
        packed.zincrby("z", 1, "5")
    assert packed.zscore("z", "5") == 55.5 and encoding(packed, "z") == b"packed"


def test_tied_scores_are_in_numeric_member_order_in_packed_and_byte_order_in_standard(client):
    client.zadd("z", {m: 0 for m in (b"10", b"9", b"-1", b"100", b"-20", b"0")})
    assert client.execute_command("GOBLIN.ZSET.CONVERT", "z", "packed") == b"OK"
    assert encoding(client, "z") == b"packed"
    assert client.zrange("z", 0, -1) == [b"-20", b"-1", b"0", b"9", b"10", b"100"]
    assert client.zrank("z", "9") == 3 and client.zpopmin("z") == [(b"-20", 0.0)]
    assert client.execute_command("GOBLIN.ZSET.CONVERT", "z", "standard") == b"OK"
    assert encoding(client, "z") == b"skiplist"
    assert client.zrange("z", 0, -1) == [b"-1", b"0", b"10", b"100", b"9"]


@pytest.mark.parametrize("command", [
    ("ZRANGEBYLEX", "z", "-", "+"), ("ZREVRANGEBYLEX", "z", "+", "-"), ("ZLEXCOUNT", "z", "[1", "[5"),
    ("ZRANGE", "z", "[1", "(9", "BYLEX"), ("ZREMRANGEBYLEX", "z", "[1", "[10"),
    ("ZRANGESTORE", "d", "z", "-", "+", "BYLEX"),
])
def test_a_lex_range_command_converts_a_packed_set_to_standard_first(client, command):
    client.zadd("z", {str(m): 0 for m in range(200)})
    client.execute_command("GOBLIN.ZSET.CONVERT", "z", "packed")
    reference = {str(m).encode() for m in range(200)}
    reply = client.execute_command(*command)
    assert encoding(client, "z") == b"skiplist"
    if command[0] == "ZRANGEBYLEX":
        assert reply == sorted(reference)   # byte order, as Redis
    if command[0] == "ZLEXCOUNT":
        assert reply == len([m for m in reference if b"1" <= m <= b"5"])


def test_goblin_zset_convert_errors_and_per_key_choice(client):
    client.zadd("z", {"1": 1, "2": 2})
    assert client.execute_command("GOBLIN.ZSET.CONVERT", "z", "PACKED") == b"OK"
    assert encoding(client, "z") == b"packed"   # small sets too: the choice is per key
    client.zadd("z", {"3": 3})
    assert encoding(client, "z") == b"packed" and client.zrange("z", 0, -1) == [b"1", b"2", b"3"]
    with pytest.raises(ResponseError, match="no such key"):
        client.execute_command("GOBLIN.ZSET.CONVERT", "missing", "packed")
    with pytest.raises(ResponseError, match="syntax error"):
        client.execute_command("GOBLIN.ZSET.CONVERT", "z", "compact")
    client.zadd("y", {"a": 1})
    with pytest.raises(ResponseError, match="does not fit the packed encoding"):
        client.execute_command("GOBLIN.ZSET.CONVERT", "y", "packed")
    assert encoding(client, "y") == b"listpack"
    client.zadd("f", {"1": 0.1})
    with pytest.raises(ResponseError, match="does not fit the packed encoding"):
        client.execute_command("GOBLIN.ZSET.CONVERT", "f", "packed")
    client.set("s", "x")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        client.execute_command("GOBLIN.ZSET.CONVERT", "s", "packed")
    with pytest.raises(ResponseError, match="wrong number of arguments"):
        client.execute_command("GOBLIN.ZSET.CONVERT", "z")


def test_internals_optimize_memory_copy_dump_restore_and_digest_cover_packed(client):
    mapping = int_members(5000, start=-2000)
    client.zadd("std", mapping)
    client.zadd("p", mapping)
    client.execute_command("GOBLIN.ZSET.CONVERT", "p", "packed")
    internals = client.execute_command("GOBLIN.ZSET.INTERNALS", "p")
    internals = dict(zip(internals[::2], internals[1::2])) if isinstance(internals, list) else internals
    text = {k.decode() if isinstance(k, bytes) else k: v for k, v in internals.items()}
    assert text["representation"] in (b"packed-btree+leaf-index", "packed-btree+leaf-index")
    assert text["members"] == 5000
    assert client.memory_usage("p") < client.memory_usage("std")
    assert client.execute_command("DEBUG", "DIGEST-VALUE", "p") == client.execute_command("DEBUG", "DIGEST-VALUE", "std")
    assert client.execute_command("GOBLIN.OPTIMIZE", "p") >= 0 and encoding(client, "p") == b"packed"
    client.execute_command("GOBLIN.OPTIMIZE", "std")
    assert client.memory_usage("p") < client.memory_usage("std") * 0.85   # 8-byte entries against 13
    assert client.copy("p", "c") and encoding(client, "c") == b"packed"
    assert client.zrange("c", 0, -1, withscores=True) == client.zrange("std", 0, -1, withscores=True)
    payload = client.dump("p")
    client.restore("r", 0, payload)
    assert encoding(client, "r") == b"skiplist"   # zset-implementation standard decides a load
    assert client.zrange("r", 0, -1, withscores=True) == client.zrange("std", 0, -1, withscores=True)
    client.config_set("zset-implementation", "packed")
    try:
        client.restore("r2", 0, payload)
        assert encoding(client, "r2") == b"packed"
        client.execute_command("DEBUG", "RELOAD")
        assert encoding(client, "p") == b"packed" and encoding(client, "std") == b"packed"
        assert client.zrange("p", 0, -1, withscores=True) == list(
            sorted(((m, float(s)) for m, s in mapping.items()), key=lambda pair: pair[1]))
    finally:
        client.config_set("zset-implementation", "standard")


def test_packed_ties_survive_dump_restore_and_reload_in_either_encoding(client):
    """A packed set saves its tied members in numeric order; a load accepts that order."""
    client.zadd("t", {str(m): m % 3 for m in range(-150, 150)})
    client.execute_command("GOBLIN.ZSET.CONVERT", "t", "packed")
    expected = sorted(((str(m).encode(), float(m % 3)) for m in range(-150, 150)), key=lambda p: (p[1], p[0]))
    client.restore("back", 0, client.dump("t"))
    assert encoding(client, "back") == b"skiplist" and client.zrange("back", 0, -1, withscores=True) == expected
    client.execute_command("DEBUG", "RELOAD")
    assert client.zrange("t", 0, -1, withscores=True) == expected


# ---- every command on a packed set against redis-server (distinct scores: the orders agree) ----

KEYS = ["p1", "p2", "p3"]


def random_member(rng):
    return str(rng.choice([rng.randint(-40, 160), rng.randint(-2**31, 2**31 - 1)])).encode()


def score_of(member):
    """Exact in float32 and distinct per member (the wide members' top 23 bits, the narrow ones'
    quarters), so the tie order, where packed and Redis differ, does not come in."""
    value = int(member)
    return float(value >> 8) if abs(value) > 1000 else value * 0.25


def random_command(rng):
    key, other = rng.choice(KEYS), rng.choice(KEYS)
    member = random_member(rng)
    lo, hi = rng.choice(["-inf", "0", "(5", "10", "+inf", "(-3"]), rng.choice(["+inf", "20", "(40", "-inf", "1"])
    limit = rng.choice([[], ["LIMIT", rng.choice([0, 2]), rng.choice([3, -1])]])
    rank = lambda: rng.choice([0, 1, -1, 5, -10, 100])
    numkeys = rng.sample(KEYS, rng.randint(1, 3))
    return rng.choice([
        ("ZADD", key, *[x for m in (random_member(rng) for _ in range(rng.choice([1, 5, 150])))
                        for x in (repr(score_of(m)), m)]),
        ("ZADD", key, rng.choice(["NX", "XX", "GT", "LT", "CH"]), repr(score_of(member)), member),
        ("ZSCORE", key, member), ("ZMSCORE", key, member, random_member(rng)), ("ZCARD", key),
        ("ZCOUNT", key, lo, hi), ("ZRANK", key, member), ("ZREVRANK", key, member),
        ("ZRANGE", key, rank(), rank(), *rng.choice([[], ["REV"], ["WITHSCORES"]])),
        ("ZRANGE", key, lo, hi, "BYSCORE", *limit, *rng.choice([[], ["WITHSCORES"]])),
        ("ZRANGEBYSCORE", key, lo, hi, *rng.choice([[], ["WITHSCORES"]]), *limit),
        ("ZREVRANGEBYSCORE", key, hi, lo, *limit), ("ZREVRANGE", key, rank(), rank(), "WITHSCORES"),
        ("ZRANGESTORE", other, key, rank(), rank()), ("ZRANGESTORE", other, key, lo, hi, "BYSCORE"),
        ("ZREM", key, member, random_member(rng)), ("ZREMRANGEBYRANK", key, rank(), rank()),
        ("ZREMRANGEBYSCORE", key, lo, hi), ("ZPOPMIN", key, rng.choice(["1", "3"])), ("ZPOPMAX", key),
        ("ZMPOP", len(numkeys), *numkeys, rng.choice(["MIN", "MAX"]), "COUNT", "2"),
        ("ZUNION", len(numkeys), *numkeys, "WITHSCORES"), ("ZINTER", len(numkeys), *numkeys),
        ("ZDIFF", len(numkeys), *numkeys, "WITHSCORES"), ("ZUNIONSTORE", "sums", len(numkeys), *numkeys),   # sums tie: kept out of KEYS
        ("ZRANGE", "sums", 0, -1, "WITHSCORES"),
        ("ZINTERCARD", len(numkeys), *numkeys), ("ZRANDMEMBER", key, "-3"),
        ("COPY", key, other, "REPLACE"), ("EXISTS", key), ("TYPE", key),
        ("BZPOPMIN", key, "0.01"), ("BZPOPMAX", key, other, "0.01"),
        ("BZMPOP", "0.01", len(numkeys), *numkeys, "MIN", "COUNT", "3"),
        ("ZINTERSTORE", "sums", len(numkeys), *numkeys), ("ZDIFFSTORE", "sums", len(numkeys), *numkeys),
        ("SORT", key, "BY", "nosort", "LIMIT", 0, 10), ("SORT", key, "DESC", "LIMIT", 0, 5),
        ("ZSCORE", key, rng.choice(["-0", "01", "+5", " 7", "4294967296"])), ("ZREM", key, "007"),
    ])


def normalised(command, reply):
    if command[0] == "ZRANDMEMBER":
        return len(reply)
    if command[:2] == ("ZRANGE", "sums"):   # tied sums: numeric order in packed, bytes in Redis
        return sorted(zip(reply[::2], reply[1::2]))
    if command[0] in ("ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE") and isinstance(reply, list):
        # unions of distinct per-member scores can tie (a member in two keys sums): compare as pairs
        return sorted(zip(reply[::2], reply[1::2])) if "WITHSCORES" in command else sorted(reply)
    return reply


def outcome(client, command):
    try:
        return ("ok", normalised(command, client.execute_command(*command)))
    except ResponseError as error:
        return ("error", str(error))


@pytest.mark.parametrize("seed", [1, 2])
def test_every_command_on_a_packed_set_replies_as_redis_with_distinct_scores(seed, redis_server, ring, resp):
    reference = RespClient(port=redis_server.port, socket_timeout=10)
    try:
        for c in (reference, ring, resp):
            c.flushall()
        ring.config_set("zset-implementation", "packed")
        rng = random.Random(seed)
        packed_steps = 0
        for step in range(1500):
            command = random_command(rng)
            expected = outcome(reference, command)
            client = ring if step % 2 == 0 else resp
            got = outcome(client, command)
            assert got == expected, f"step {step}: {command}"
            packed_steps += any(client.type(k) == b"zset" and encoding(client, k) == b"packed" for k in KEYS)
        assert packed_steps > 200   # the comparison ran on packed sets (seed 1: 372 of 1500 steps)
        for key in KEYS:
            assert resp.zrange(key, 0, -1, withscores=True) == reference.zrange(key, 0, -1, withscores=True)
    finally:
        ring.config_set("zset-implementation", "standard")
        reference.close()


def test_zscan_of_a_packed_set_visits_every_member_once_with_its_score(client):
    mapping = int_members(3000, start=-1500)
    client.zadd("z", mapping)
    client.execute_command("GOBLIN.ZSET.CONVERT", "z", "packed")
    seen = list(client.zscan_iter("z", count=50))
    assert len(seen) == 3000 and dict(seen) == {m: float(s) for m, s in mapping.items()}
    assert set(dict(client.zscan_iter("z", match="-1*"))) == {m for m in mapping if m.startswith(b"-1")}


def test_the_server_flag_starts_with_packed_sets(tmp_path):
    with GoblinServer(tmp_path, "--zset-implementation", "packed").start() as server:
        with RespClient(port=server.port, socket_timeout=10) as c:
            assert c.config_get("zset-implementation") == {"zset-implementation": "packed"}
            c.zadd("z", {str(i): i for i in range(300)})
            assert encoding(c, "z") == b"packed"


def test_an_aof_rewrite_keeps_a_packed_set_and_a_restart_loads_it_packed(tmp_path):
    """The rewrite writes RESTOREs (the save form, ties in numeric order); replaying them under
    --zset-implementation packed rebuilds the set packed, equal member for member."""
    import time
    runtime, data = tmp_path / "runtime", tmp_path / "data"
    runtime.mkdir()
    data.mkdir()
    flags = ("--appendonly", "yes", "--dir", str(data), "--zset-implementation", "packed")
    server = GoblinServer(runtime, *flags).start()
    with RespClient(port=server.port, socket_timeout=10) as c:
        c.zadd("z", {str(i): i % 5 for i in range(-300, 300)})
        assert encoding(c, "z") == b"packed"
        before = c.zrange("z", 0, -1, withscores=True)
        assert c.bgrewriteaof()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:   # polls the rewrite's state, no fixed wait
            info = c.info("persistence")
            if info["aof_rewrites"] == 1 and not info["aof_rewrite_in_progress"]:
                break
        assert info["aof_rewrites"] == 1 and info["aof_last_bgrewrite_status"] == "ok"
    server.stop_cleanly()
    with GoblinServer(runtime, *flags, name=server.name).start() as again:
        with RespClient(port=again.port, socket_timeout=10) as c:
            assert encoding(c, "z") == b"packed"
            assert c.zrange("z", 0, -1, withscores=True) == before


def test_zset_convert_method_switches_the_encoding_both_ways_and_raises_what_the_command_refuses(client):
    client.zadd("z", {"1": 1.5, "-7": 2, "300": -4})
    assert client.zset_convert("z", "packed") is True
    assert encoding(client, "z") == b"packed"
    assert client.zrange("z", 0, -1, withscores=True) == [(b"300", -4.0), (b"1", 1.5), (b"-7", 2.0)]
    assert client.zset_convert(b"z", b"STANDARD") is True
    assert encoding(client, "z") == b"skiplist"
    assert client.zrange("z", 0, -1, withscores=True) == [(b"300", -4.0), (b"1", 1.5), (b"-7", 2.0)]
    with pytest.raises(ResponseError, match="no such key"):
        client.zset_convert("missing", "packed")
    with pytest.raises(ResponseError, match="syntax error"):
        client.zset_convert("z", "listpack")
    client.zadd("y", {"a": 1})
    with pytest.raises(ResponseError, match="does not fit the packed encoding"):
        client.zset_convert("y", "packed")
    assert encoding(client, "y") == b"listpack"
