"""The stream work queue's typed ring messages (schema templates 700-703: XAddRequest,
XRangeRequest, XAckRequest, XReadGroupRequest): RingClient's xadd / xrange / xrevrange / xack /
xreadgroup go out as them (one C call builds and encodes), the server runs them as the typed
commands, and bad typed input — a malformed message, a key of another type, an oversize value,
fields no argv could carry — gets Redis's error texts, with the session going on.
"""

from __future__ import annotations

import math
import struct

import pytest
import redis

from goblin_ring import ResponseError, RingClient, _native
from goblin_ring._native import ffi, lib

STREAM_TEMPLATES = {"xadd": "GR_T_XADD", "xrange": "GR_T_XRANGE", "xrevrange": "GR_T_XRANGE",
                    "xack": "GR_T_XACK", "xreadgroup": "GR_T_XREADGROUP"}


def built(argv: tuple[bytes, ...]):
    """gr_request_from_argv for argv, as the ring client's one C call runs it: (template, error text)."""
    keep = [ffi.from_buffer(a) for a in argv]
    pointers = ffi.new("const uint8_t *[]", [ffi.cast("const uint8_t *", k) for k in keep])
    lengths = ffi.new("size_t[]", [len(a) for a in argv])
    request = ffi.new("gr_request_t *")
    items = ffi.new("gr_bytes_t[]", len(argv))
    error = ffi.new("gr_build_error_t *")
    index = lib.gr_request_from_argv(len(argv), pointers, lengths, request, items, len(argv), error)
    return (request.template_id if index >= 0 else None), ffi.string(error.text).decode()


def send_raw(client: RingClient, template: int, message: bytes):
    core = client._core
    core.check(lib.gr_client_send_raw(core.pointer, template, message, len(message)))
    return core.receive()


def test_the_ring_client_sends_the_work_queue_commands_as_their_typed_templates(ring, resp, monkeypatch):
    ring.flushall()
    sent: list[tuple[bytes, ...]] = []
    execute = ring._execute

    def recording(argv, *rest, **kw):
        sent.append(tuple(argv))
        return execute(argv, *rest, **kw)

    monkeypatch.setattr(ring, "_execute", recording)
    assert ring.xadd("q", {"f": "v"}, id="1-1") == b"1-1"
    assert ring.xadd("q", {"f": "w"}, maxlen=10, approximate=True, nomkstream=True).count(b"-") == 1
    assert ring.xrange("q", count=1) == [(b"1-1", {b"f": b"v"})]
    assert ring.xrevrange("q", "+", "(1-1")[0][1] == {b"f": b"w"}
    resp.xgroup_create("q", "g", "0")
    delivered = ring.xreadgroup("g", "c", {"q": ">"}, count=10)
    assert [entry_id for entry_id, _ in delivered[0][1]][0] == b"1-1"
    assert ring.xack("q", "g", "1-1") == 1
    monkeypatch.undo()
    names = [argv[0].decode().lower() for argv in sent]
    assert names == ["xadd", "xadd", "xrange", "xrevrange", "xreadgroup", "xack"]
    for name, argv in zip(names, sent):
        template, error = built(argv)
        assert template == getattr(lib, STREAM_TEMPLATES[name]), (argv, error)
        assert 700 <= template <= 709
    # the server ran them as the typed commands: a typed request is logged by its row's name in
    # lower case with the strings it carries, the empty MAXLEN threshold too (argv: as sent, "XADD")
    assert resp.config_set("slowlog-log-slower-than", 0)
    try:
        resp.execute_command("SLOWLOG", "RESET")
        ring.xadd("q2", {"f": "x"}, id="9-1")
        ring.xrange("q2", "9", "+")
        logged = [entry[3] for entry in resp.execute_command("SLOWLOG", "GET", "10")]
    finally:
        resp.config_set("slowlog-log-slower-than", 10000)
    assert [b"xadd", b"q2", b"9-1", b"", b"f", b"x"] in logged and [b"xrange", b"q2", b"9", b"+"] in logged, logged


@pytest.mark.parametrize("argv", [
    ("XADD", "s", "MAXLEN", "x", "*", "f", "v"), ("XADD", "s", "MAXLEN", "-1", "*", "f", "v"),
    ("XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v"), ("XADD", "s", "LIMIT", "5", "*", "f", "v"),
    ("XADD", "s", "MAXLEN", "1", "LIMIT", "5", "*", "f", "v"), ("XADD", "s", "LIMIT", "-1", "*", "f", "v"),
    ("XADD", "s", "1-x", "f", "v"), ("XADD", "s", "0-0", "f", "v"), ("XADD", "s", "*", "f"),
    ("XADD", "s", "*", "f", "v", "g"), ("XADD", "s", "MINID", "~", "bad", "*", "f", "v"),
    ("XRANGE", "s", "x", "+"), ("XRANGE", "s", "-", "y"), ("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+"),
    ("XRANGE", "s", "-", "(0-0"), ("XRANGE", "s", "-", "+", "COUNT", "z"), ("XRANGE", "s", "-", "+", "LIMIT", "1"),
    ("XREVRANGE", "s", "+", "(18446744073709551615-18446744073709551615"),
    ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "x", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">", "t"),
    ("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", "s", ">"),
    ("XREADGROUP", "COUNT", "1", "NOACK", "BLOCK", "1", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "1-x"),
    ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"), ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
    ("XACK", "s", "g", "bad"), ("XACK", "str", "g", "1-1"), ("XACK", "s", "nog", "bad"),
    ("XADD", "str", "*", "f", "v"), ("XRANGE", "str", "-", "+"),
])
def test_refused_forms_get_redis_texts_over_the_ring_and_resp(ring, resp, redis_server, argv):
    reference = redis.Redis(port=redis_server.port)
    outcomes = []
    for client in (reference, ring, resp):
        client.flushall()
        client.execute_command("XADD", "s", "1-1", "f", "v")
        client.execute_command("XGROUP", "CREATE", "s", "g", "0")
        client.execute_command("SET", "str", "x")
        try:
            outcomes.append(("ok", client.execute_command(*argv)))
        except Exception as error:   # redis-py's and goblin's ResponseError
            text = str(error)   # redis-py drops the "ERR " prefix
            outcomes.append(("error", text[4:] if text.startswith("ERR ") else text))
    assert outcomes[1] == outcomes[0] and outcomes[2] == outcomes[0], (argv, outcomes)
    assert ring.ping()


def test_bad_typed_messages_get_redis_errors_and_the_session_goes_on(ring, resp):
    ring.flushall()
    resp.xadd("s", {"f": "v"}, id="1-1")
    resp.xgroup_create("s", "g", "0")
    resp.set("str", "x")

    def typed(template: str, **fields):
        if template in ("GR_T_XADD", "GR_T_XRANGE"):
            fields.setdefault("index", -1)   # XADD: no LIMIT; XRANGE: no COUNT
        return send_raw(ring, getattr(lib, template), _native.encode_request(getattr(lib, template), request_id=0,
                                                                           **fields))

    def error_text(value) -> str:
        assert isinstance(value, Exception), value
        return str(value)

    wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value"
    invalid_id = "Invalid stream ID specified as stream command argument"
    # a key of another type
    assert wrongtype in error_text(typed("GR_T_XADD", key=b"str", arg1=b"*", items=[b"f", b"v"]))
    assert wrongtype in error_text(typed("GR_T_XRANGE", key=b"str", arg1=b"-", arg2=b"+", index=-1))
    assert wrongtype in error_text(typed("GR_T_XACK", key=b"str", arg1=b"g", items=[b"1-1"]))
    assert wrongtype in error_text(typed("GR_T_XREADGROUP", arg1=b"g", arg2=b"c", items=[b"str", b">"], timeout=-1.0))
    # fields no argv could carry: each refused with the text of the argv form that comes closest
    assert "wrong number of arguments for 'xadd'" in error_text(typed("GR_T_XADD", key=b"s", arg1=b"*", items=[b"f"]))
    assert "wrong number of arguments for 'xadd'" in error_text(typed("GR_T_XADD", key=b"s", arg1=b"*"))
    assert invalid_id in error_text(typed("GR_T_XADD", key=b"s", arg1=b"", items=[b"f", b"v"]))
    assert invalid_id in error_text(typed("GR_T_XADD", key=b"s", arg1=b"9-x", items=[b"f", b"v"]))
    assert "greater than 0-0" in error_text(typed("GR_T_XADD", key=b"s", arg1=b"0-0", items=[b"f", b"v"]))
    assert "not an integer" in error_text(typed("GR_T_XADD", key=b"s", arg1=b"*", items=[b"f", b"v"], end=1,
                                                 arg2=b"ten"))
    assert invalid_id in error_text(typed("GR_T_XADD", key=b"s", arg1=b"*", items=[b"f", b"v"], end=2, arg2=b"x"))
    assert "LIMIT cannot be used without the special ~ option" in error_text(
        typed("GR_T_XADD", key=b"s", arg1=b"*", items=[b"f", b"v"], end=1, arg2=b"5", index=3))
    assert "without specifying a trimming strategy" in error_text(
        typed("GR_T_XADD", key=b"s", arg1=b"*", items=[b"f", b"v"], index=3))
    assert invalid_id in error_text(typed("GR_T_XRANGE", key=b"s", arg1=b"(", arg2=b"+", index=-1))
    assert "invalid end ID for the interval" in error_text(typed("GR_T_XRANGE", key=b"s", arg1=b"-", arg2=b"(0-0"))
    assert invalid_id in error_text(typed("GR_T_XACK", key=b"s", arg1=b"g", items=[b"nope"]))
    assert "wrong number of arguments for 'xack'" in error_text(typed("GR_T_XACK", key=b"s", arg1=b"g"))
    assert "syntax error" in error_text(typed("GR_T_XREADGROUP", arg1=b"g", arg2=b"c", timeout=-1.0))
    assert "Unbalanced XREAD list of streams" in error_text(
        typed("GR_T_XREADGROUP", arg1=b"g", arg2=b"c", items=[b"s"], timeout=-1.0))
    assert "timeout is not an integer or out of range" in error_text(
        typed("GR_T_XREADGROUP", arg1=b"g", arg2=b"c", items=[b"s", b">"], timeout=math.nan))
    assert "NOGROUP No such key 's' or consumer group 'nog'" in error_text(
        typed("GR_T_XREADGROUP", arg1=b"nog", arg2=b"c", items=[b"s", b">"], timeout=-1.0))
    # a malformed message: the trim strategy out of its enum, a var-data length past the end
    message = bytearray(_native.encode_request(lib.GR_T_XADD, request_id=0, key=b"s", arg1=b"*", items=[b"f", b"v"]))
    bad_enum = bytearray(message)
    bad_enum[8 + 8 + 1] = 9          # header, requestId, noMkStream, then trim
    assert "malformed" in error_text(send_raw(ring, lib.GR_T_XADD, bytes(bad_enum)))
    cut = bytearray(message)
    struct.pack_into("<I", cut, len(cut) - 4, 1_000_000)   # the last var-data's length
    assert "malformed" in error_text(send_raw(ring, lib.GR_T_XADD, bytes(cut)))
    # the session goes on, and nothing was added by any of the above
    assert ring.xlen("s") == 1 and ring.ping()
    # a well-formed typed message does what its argv does
    assert typed("GR_T_XADD", key=b"s", arg1=b"5-*", items=[b"f", b"v"], end=1, to_end=1, arg2=b"1") == b"5-0"
    assert ring.xrange("s", "5", "+") == [(b"5-0", {b"f": b"v"})] and ring.xlen("s") == 2


def test_an_xadd_value_over_proto_max_bulk_len_gets_redis_text(ring, resp):
    assert resp.execute_command("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"OK"
    try:
        with pytest.raises(ResponseError, match="Protocol error: invalid bulk length"):
            ring.xadd("big", {"f": b"z" * (2 * 1024 * 1024)})
        assert ring.exists("big") == 0
        assert ring.xadd("big", {"f": b"z" * 1000}, id="1-1") == b"1-1"   # the session goes on
    finally:
        resp.execute_command("CONFIG", "SET", "proto-max-bulk-len", str(512 * 1024 * 1024))
    ring.delete("big")
