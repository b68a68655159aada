"""The typed RespClient pointed at a real redis-server (Debian's 7.0, started here) runs a
fixed script of list, key, string, expiry and database commands; goblin, through the same
typed API, must give exactly the same results, errors included (same exception class, same
text). This checks the client as much as the server: a typed method that builds the wrong
argv, or converts a reply differently, shows up as a difference on the Redis side too.

Where goblin is compared over the ring as well, the script is unchanged: the reference is
always RespClient against Redis. Remaining times (PTTL) are compared in whole seconds,
because the two servers start the clock a few microseconds apart; absolute expiry times
are compared exactly. The module is skipped when redis-server is not installed."""

from __future__ import annotations

import shutil
from typing import Any, Callable

import pytest

from goblin_ring import GoblinError, RespClient

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")

FAR_FUTURE = 4_102_444_800   # 2100-01-01, in seconds


class Recorder:
    """Calls the typed client's methods by name and keeps (step, outcome) for each call."""

    def __init__(self, client):
        self.client = client
        self.results: list[tuple[str, Any]] = []

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            value = getattr(self.client, method)(*args, **kwargs)
        except GoblinError as error:
            value = ("raised", type(error).__name__, str(error))
        if method in ("pttl",) and isinstance(value, int) and value >= 0:
            value = ("about-seconds", (value + 500) // 1000)
        if method in ("keys",) and isinstance(value, list):
            value = sorted(value)
        self.results.append((f"{method}{args}{kwargs or ''}", value))
        return value


def list_script(c: Recorder) -> None:
    c("rpush", "l", "a", "b", "c")
    c("lpush", "l", "z", "y")
    c("rpushx", "l", "d")
    c("lpushx", "nolist", "x")
    c("lrange", "l", 0, -1)
    c("lrange", "l", -3, 100)
    c("lindex", "l", 1)
    c("lindex", "l", -100)
    c("llen", "l")
    c("lset", "l", 0, "Y")
    c("lset", "l", 99, "x")
    c("lset", "nolist", 0, "x")
    c("linsert", "l", "BEFORE", "b", "b0")
    c("linsert", "l", "AFTER", "nothing", "x")
    c("linsert", "l", "SIDEWAYS", "b", "x")
    c("rpush", "l", "a", "a", "a")
    c("lrem", "l", 2, "a")
    c("lrem", "l", -1, "a")
    c("lpos", "l", "a")
    c("lpos", "l", "c", rank=-1)
    c("lpos", "l", "b", count=0, maxlen=10)
    c("lpos", "l", "b", rank=0)
    c("lpop", "l")
    c("rpop", "l", 2)
    c("lpop", "l", 0)
    c("lpop", "l", -1)
    c("lmove", "l", "l2", "LEFT", "RIGHT")
    c("rpoplpush", "l", "l2")
    c("lmpop", 2, "nolist", "l2", direction="RIGHT", count=5)
    c("lmpop", 1, "nolist", direction="LEFT")
    c("ltrim", "l", 1, -2)
    c("lrange", "l", 0, -1)
    c("ltrim", "l", 5, 1)
    c("exists", "l")
    c("rpush", "big", *[f"item-{i}" for i in range(300)])
    c("lrange", "big", 140, 150)
    c("lindex", "big", 200)
    c("lrem", "big", 0, "item-7")
    c("llen", "big")


def key_script(c: Recorder) -> None:
    c("set", "s1", "v")
    c("rpush", "k1", "x")
    c("exists", "s1", "k1", "s1", "nokey")
    c("type", "s1")
    c("type", "k1")
    c("type", "nokey")
    c("keys", "*1")
    c("rename", "s1", "s2")
    c("rename", "nokey", "x")
    c("rename", "k1", "s2")
    c("type", "s2")
    c("delete", "s2", "nokey")
    c("unlink", "big")
    c("dbsize")
    c("ping")
    c("echo", b"\x00\r\n")
    c("execute_command", "LINDEX", "l")
    c("execute_command", "NOPE", "x")
    c("execute_command", "GET", "a", "b")


def string_script(c: Recorder) -> None:
    c("rpush", "wl", "x")                  # a list, for the WRONGTYPE paths
    c("set", "s", "hello")
    c("set", "s", "world", get=True)
    c("set", "s", "x", nx=True)
    c("set", "s", "x", nx=True, get=True)
    c("set", "new", "x", xx=True)
    c("set", "new", "x", xx=True, get=True)
    c("set", "s", "v", ex=0)
    c("set", "s", "v", px=-1)
    c("set", "s", "v", nx=True, xx=True)
    c("execute_command", "SET", "s", "v", "NX", "XX")
    c("execute_command", "SET", "s", "v", "EX", "1.5")
    c("set", "wl", "v", get=True)
    c("get", "s")
    c("getdel", "s")
    c("getdel", "s")
    c("get", "wl")
    c("setnx", "n", "10")
    c("setnx", "n", "11")
    c("setex", "sx", 100, "v")
    c("setex", "sx", 0, "v")
    c("psetex", "px", -5, "v")
    c("mset", {"a": "1", "b": b"\x00\r\n", "c": "3"})
    c("mget", ["a", "b", "c", "nokey", "wl"])
    c("msetnx", {"c": "x", "d": "4"})
    c("msetnx", {"d": "4", "e": "5"})
    c("execute_command", "MSET", "a")
    c("incr", "n")
    c("incrby", "n", 100)
    c("decr", "n")
    c("decrby", "n", -9)
    c("incrby", "n", 1.5)
    c("incrby", "n", 2 ** 63)
    c("decrby", "n", -(2 ** 63))
    c("set", "max", str(2 ** 63 - 1))
    c("incr", "max")
    c("incr", "b")
    c("incr", "wl")
    c("set", "f", "10.50")
    c("incrbyfloat", "f", 0.1)
    c("get", "f")
    c("execute_command", "INCRBYFLOAT", "f", "5.0e3")
    c("execute_command", "INCRBYFLOAT", "f", "-5010.6")
    c("execute_command", "INCRBYFLOAT", "f", "1e-5")
    c("incrbyfloat", "f", float("inf"))
    c("incrbyfloat", "f", float("nan"))
    c("incrbyfloat", "b", 1)
    c("incrbyfloat", "wl", 1)
    c("append", "ap", "Hello")
    c("append", "ap", " World")
    c("append", "wl", "x")
    c("strlen", "ap")
    c("strlen", "nokey")
    c("strlen", "wl")
    for start, end in ((0, 3), (-3, -1), (0, -1), (10, 100), (-100, 2), (5, 3), (-1, -5), (0, -100)):
        c("getrange", "ap", start, end)
    c("substr", "ap", 1, 3)
    c("getrange", "nokey", 0, -1)
    c("setrange", "ap", 6, "Redis")
    c("setrange", "pad", 4, "x")
    c("get", "pad")
    c("setrange", "nokey2", 3, "")
    c("exists", "nokey2")
    c("setrange", "ap", -1, "x")
    c("setrange", "ap", 512 * 1024 * 1024, "x")
    c("setrange", "wl", 0, "x")
    c("getdel", "wl")
    c("decrby", "wl", 1)
    c("getrange", "wl", 0, 1)
    c("lpush", "ap", "x")
    c("llen", "ap")
    c("lrange", "ap", 0, -1)
    c("lmove", "wl", "ap", "LEFT", "RIGHT")
    c("rpoplpush", "ap", "wl")
    c("lmpop", 2, "nokey", "ap", direction="LEFT")
    c("set", "wl", "overwritten")
    c("type", "wl")
    c("rpush", "wl", "x")                  # WRONGTYPE: it is a string now
    c("delete", "wl")
    c("rpush", "wl", "x")


def expiry_script(c: Recorder) -> None:
    c("set", "t", "v")
    c("ttl", "t")
    c("pttl", "t")
    c("ttl", "nokey")
    c("pttl", "nokey")
    c("expire", "t", 100, xx=True)
    c("expire", "t", 100, nx=True)
    c("ttl", "t")
    c("pttl", "t")
    c("expire", "t", 50, gt=True)
    c("expire", "t", 200, gt=True)
    c("expire", "t", 300, lt=True)
    c("expire", "t", 10, xx=True, lt=True)
    c("ttl", "t")
    c("expire", "t", 10, nx=True, xx=True)
    c("expire", "t", 10, gt=True, lt=True)
    c("expire", "nokey", 10)
    c("expireat", "t", FAR_FUTURE)
    c("expiretime", "t")
    c("pexpiretime", "t")
    c("pexpireat", "t", FAR_FUTURE * 1000 + 999)
    c("expiretime", "t")
    c("pexpiretime", "t")
    c("expiretime", "nokey")
    c("persist", "t")
    c("persist", "t")
    c("expiretime", "t")
    c("set", "t", "v", ex=100)
    c("set", "t", "w", keepttl=True)
    c("ttl", "t")
    c("set", "t", "x")
    c("ttl", "t")
    c("set", "t", "v", exat=FAR_FUTURE + 5)
    c("expiretime", "t")
    c("set", "t", "v", pxat=FAR_FUTURE * 1000 + 5)
    c("pexpiretime", "t")
    c("rename", "t", "t2")
    c("pexpiretime", "t2")
    c("getex", "t2")
    c("getex", "t2", persist=True)
    c("ttl", "t2")
    c("getex", "t2", ex=100)
    c("ttl", "t2")
    c("getex", "t2", px=100_000)
    c("pttl", "t2")
    c("getex", "t2", exat=FAR_FUTURE)
    c("expiretime", "t2")
    c("getex", "t2", ex=0)
    c("getex", "wl", ex=10)
    c("getex", "t2", pxat=1)
    c("exists", "t2")
    c("set", "gone", "v", exat=1)
    c("get", "gone")
    c("set", "gone", "v")
    c("pexpire", "gone", -1)
    c("exists", "gone")
    c("incr", "counter")
    c("expire", "counter", 100)
    c("incr", "counter")
    c("ttl", "counter")
    c("expire", "counter", 2 ** 63 - 1)
    c("execute_command", "EXPIRE", "counter", "10", "BOGUS")


def database_script(c: Recorder) -> None:
    c("set", "d", "in-0")
    c("select", 3)
    c("get", "d")
    c("set", "d", "in-3", ex=100)
    c("dbsize")
    c("move", "d", 0)
    c("move", "d", 3)
    c("move", "d", 16)
    c("move", "nokey", 5)
    c("move", "d", 5)
    c("exists", "d")
    c("select", 5)
    c("get", "d")
    c("ttl", "d")
    c("swapdb", 5, 0)
    c("get", "d")
    c("swapdb", 0, 16)
    c("execute_command", "SWAPDB", "a", "1")
    c("select", 16)
    c("execute_command", "SELECT", "x")
    c("flushdb")
    c("dbsize")
    c("select", 0)
    c("get", "d")
    c("dbsize")
    c("flushall")
    c("dbsize")


SCRIPTS = {"lists": list_script, "keys": key_script, "strings": string_script, "expiry": expiry_script,
           "databases": database_script}


def run(client, script: Callable[[Recorder], None]) -> list:
    """Runs every script up to and including the named one, so later ones see earlier state."""
    client.flushall()
    client.select(0)
    recorder = Recorder(client)
    for name, step in SCRIPTS.items():
        step(recorder)
        if step is script:
            break
    return recorder.results


@pytest.fixture
def reference(redis_server):
    c = RespClient(port=redis_server.port, socket_timeout=10.0)
    yield c
    c.close()


@pytest.mark.parametrize("script", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_goblin_answers_the_script_exactly_like_redis(reference, client, script):
    expected = run(reference, script)
    got = run(client, script)
    assert len(got) == len(expected)
    for (step, want), (_, have) in zip(expected, got):
        assert have == want, step


def test_the_reference_really_is_redis(reference):
    info = reference.info("server")
    assert "goblin_version" not in info
    assert str(info["redis_version"]).startswith("7.")


KNOWN_DIFFERENCES = [
    ("getex", ("nokey",), {"ex": 0}),
    ("execute_command", ("INCRBYFLOAT", "l2", "not-a-float"), {}),
]


def test_the_known_differences_from_redis_are_gone(reference, client):
    outcomes = []
    for c in (reference, client):
        c.flushall()
        c.rpush("l2", "x")
        recorder = Recorder(c)
        for method, args, kwargs in KNOWN_DIFFERENCES:
            recorder(method, *args, **kwargs)
        outcomes.append(recorder.results)
    assert outcomes[1] == outcomes[0]


def transaction_outcome(c) -> list:
    c.flushall()
    outcome = []
    with c.pipeline(transaction=True) as tx:
        tx.rpush("q", "a", "b").lpop("q").set("s", "1").incr("s").get("s")
        outcome.append(tx.execute())
    with c.pipeline(transaction=True) as tx:      # a runtime error fails only its command
        tx.set("str", "x").lpush("str", "y").get("str")
        outcome.append([type(v).__name__ if isinstance(v, Exception) else v for v in tx.execute(raise_on_error=False)])
    with c.pipeline(transaction=True) as tx:      # a queue-time error aborts the whole transaction
        tx.set("never", 1).execute_command("NOSUCHCOMMAND")
        try:
            tx.execute()
        except Exception as error:                # noqa: BLE001 - the class is what is compared
            outcome.append(type(error).__name__)
    outcome.append(c.exists("never"))
    return outcome


def test_typed_transactions_behave_like_redis(reference, resp):
    assert transaction_outcome(resp) == transaction_outcome(reference)
