"""The typed client's shape: each command method written once for both transports, RespClient
usable without the compiled extension, and the ring path's argv built and validated in C
with the server's own error texts (counted by the server as over RESP)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from goblin_ring import ResponseError, RespClient, RingClient, WrongTypeError
from goblin_ring.client.commands import (Commands, KeyCommands, ListCommands, ServerCommands,
                                         StringCommands)
from goblin_ring.client.resp import RespPipeline
from goblin_ring.client.ring import RingPipeline


def command_methods() -> list[str]:
    return [name for name, member in inspect.getmembers(Commands, inspect.isfunction) if not name.startswith("_")]


# RingClient's hand-tuned plain forms (typed in C without argv, or zincrby/zscore: argv packed inline;
# every other form is the shared method)
RING_HOT = {"ping", "llen", "lindex", "get", "set", "lset", "lpop", "rpop", "lpush", "rpush", "lrange", "ltrim",
            "lmove", "rpoplpush", "blmove", "brpoplpush", "blpop", "brpop", "lmpop", "blmpop", "zincrby", "zscore"}


def test_every_command_method_is_defined_once_in_its_group_and_shared_by_both_clients():
    groups = (ServerCommands, KeyCommands, StringCommands, ListCommands)
    for name in command_methods():
        owners = [group.__name__ for group in groups if name in vars(group)]
        assert len(owners) <= 1, (name, owners)
        method = getattr(Commands, name)
        assert getattr(RespClient, name) is method, name
        assert getattr(RespPipeline, name) is method, name
        if name not in RING_HOT:
            assert getattr(RingClient, name) is method, f"RingClient overrides {name}"
    for name in ("lpush", "rpush", "lpop", "rpop", "llen", "lindex", "lrange", "blpop", "lmpop", "lmove"):
        assert name in vars(ListCommands)
    for name in ("set", "get", "getex", "mset", "incrby", "getrange"):
        assert name in vars(StringCommands)
    for name in ("delete", "exists", "scan", "expire", "ttl", "rename"):
        assert name in vars(KeyCommands)
    # the ring pipeline packs only the hot scalar commands itself; the rest are the shared methods
    own = {name for name in vars(RingPipeline) if not name.startswith("_") and name in command_methods()}
    assert own == {"lindex", "llen", "lset", "lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop"}


WITHOUT_EXTENSION = r"""
import sys

class NoExtension:
    def find_spec(self, name, path=None, target=None):
        if name == "goblin_ring._goblin_native":
            raise ImportError("the compiled extension is hidden for this test")
        return None

sys.meta_path.insert(0, NoExtension())
import goblin_ring
from goblin_ring import RespClient, ResponseError, connect
assert "goblin_ring._goblin_native" not in sys.modules
client = connect("redis://127.0.0.1:" + sys.argv[1])
client.delete("no-extension")
print(client.rpush("no-extension", "a", "b"), client.lrange("no-extension", 0, -1), client.set("s", 1), client.ping())
try:
    client.lindex("no-extension", "x")
except ResponseError as error:
    print("error:", error)
client.delete("no-extension", "s")
try:
    goblin_ring.RingClient
except ImportError as error:
    print("RingClient:", type(error).__name__)
"""


def test_resp_client_imports_and_runs_without_the_compiled_extension(goblin):
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTENSION, str(goblin.port)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "2 [b'a', b'b'] True True",
        "error: ERR value is not an integer or out of range",
        "RingClient: StaleBuildError",
    ]


def error_of(call) -> str:
    with pytest.raises(ResponseError) as caught:
        call()
    return str(caught.value)


def test_a_ring_command_that_does_not_validate_gets_the_server_error_text_that_resp_gets(ring, resp):
    resp.delete("l", "s")
    resp.rpush("l", "a", "b", "c")
    resp.set("s", "v")
    cases = [
        lambda c: c.lindex("l", "x"),
        lambda c: c.lrange("l", "0", "1.5"),
        lambda c: c.lpop("l", -1),
        lambda c: c.lmove("l", "l", "UP", "LEFT"),
        lambda c: c.linsert("l", "MIDDLE", "a", "z"),
        lambda c: c.lpos("l", "a", rank=0),
        lambda c: c.lmpop(3, "l", "l2", direction="LEFT"),
        lambda c: c.blpop(["l"], -1),
        lambda c: c.expire("s", 10, nx=True, xx=True),
        lambda c: c.set("s", "v", ex=0),
        lambda c: c.execute_command("LLEN"),
        lambda c: c.execute_command("NOSUCHCOMMAND", "a"),
        lambda c: c.incrby("s", 1),
    ]
    for case in cases:
        assert error_of(lambda: case(ring)) == error_of(lambda: case(resp))
    with pytest.raises(WrongTypeError):
        ring.llen("s")
    assert resp.lrange("l", 0, -1) == [b"a", b"b", b"c"]     # nothing ran
    resp.delete("l", "s")


def test_ring_commands_refused_by_validation_are_counted_by_the_server_like_resp_ones(ring, resp):
    resp.execute_command("CONFIG", "RESETSTAT")
    for client in (ring, resp):
        with pytest.raises(ResponseError):
            client.lindex("k", "not-a-number")
        with pytest.raises(ResponseError, match="wrong number of arguments"):
            client.execute_command("LINDEX", "k")
    stats = resp.info("commandstats")["cmdstat_lindex"]
    assert stats["failed_calls"] + stats["rejected_calls"] == 4, stats


def test_a_long_argv_and_binary_values_cross_the_ring_intact(ring, resp):
    values = [bytes([i % 256]) * (i % 7) for i in range(3000)]      # empty values and NULs included
    ring.delete("long")
    assert ring.rpush("long", *values) == 3000
    assert resp.lrange("long", 0, -1) == values
    assert ring.delete("long") == 1


def test_the_hot_plain_forms_and_their_other_forms_agree_with_resp(ring, resp):
    resp.delete("h", "hs")
    assert ring.rpush("h", "a") == 1 and ring.lpush(b"h", 0) == 2 and ring.rpush("h", "b", "c") == 4
    assert ring.lindex("h", 0) == b"0" and ring.lindex("h", -1) == b"c" and ring.lindex("h", 9) is None
    assert error_of(lambda: ring.lindex("h", 2 ** 64)) == error_of(lambda: resp.lindex("h", 2 ** 64))
    assert ring.lset("h", 0, "z") is True and ring.llen("h") == 4
    assert error_of(lambda: ring.lset("h", 2 ** 63, "z")) == error_of(lambda: resp.lset("h", 2 ** 63, "z"))
    assert ring.lpop("h") == b"z" and ring.rpop("h") == b"c" and ring.lpop("h", 2) == [b"a", b"b"]
    assert ring.lpop("h") is None and ring.llen("h") == 0
    assert ring.set("hs", 1) is True and ring.get("hs") == b"1" and ring.set("hs", 2, nx=True) is None
    assert ring.ping() is True and ring.ping("x") == b"x"
    assert resp.get("hs") == b"1"
    resp.delete("hs")


def test_mixed_argument_types_are_converted_as_redis_py_converts_them(ring, resp):
    ring.delete("mixed")
    assert ring.rpush("mixed", "text", b"bytes", 7, 2.5, bytearray(b"ba"), memoryview(b"mv"), "é") == 7
    assert resp.lrange("mixed", 0, -1) == [b"text", b"bytes", b"7", b"2.5", b"ba", b"mv", "é".encode()]
    # bytes-like values pass through as they are: a memoryview of wider items is sent as its bytes
    wide = memoryview(bytes(range(8))).cast("I")
    for client in (ring, resp):
        assert client.rpush("mixed", bytearray(b"x"), wide) in (9, 11)
    assert resp.lrange("mixed", 7, -1) == [b"x", bytes(range(8))] * 2
    ring.delete("mixed")


def test_array_replies_of_every_shape_decode_alike_on_both_transports(ring, resp):
    resp.delete("arr", "big", "str")
    values = [b"", b"\x00\r\n", b"x" * 300, "é".encode(), b"last"]
    resp.rpush("arr", *values)
    resp.rpush("big", *[b"%d" % i for i in range(2000)])     # longer than the one-unpack fast path takes
    resp.set("str", "v")
    reads = [
        lambda c: c.lrange("arr", 0, -1), lambda c: c.lrange("nothing", 0, -1), lambda c: c.lrange("big", 0, -1),
        lambda c: c.mget("str", "nothing", "str"), lambda c: c.lmpop(1, "nothing", direction="LEFT"),
        lambda c: c.lpos("arr", "last", count=0), lambda c: c.keys("ar*"), lambda c: c.lrange("arr", 1, 1),
    ]
    for read in reads:
        got, expected = read(ring), read(resp)
        assert got == expected and type(got) is type(expected)
    assert ring.lrange("arr", 0, -1) == values
    assert ring.lmpop(2, "nothing", "arr", direction="RIGHT", count=2) == [b"arr", [b"last", "é".encode()]]
    assert ring.blpop(["nothing", "arr"], 0) == (b"arr", b"")
    assert ring.lpop("arr", 5) == [b"\x00\r\n", b"x" * 300]
    resp.delete("big", "str")
