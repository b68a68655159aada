"""The ring's wire format end to end: replies of any shape, and messages of any size.

Over the shared-memory ring, nested arrays and maps arrive as the same Python values RESP gives
(COMMAND INFO, COMMAND DOCS, HELLO, CONFIG GET); a request or reply larger than one ring record
(capacity / 8) travels in fragments and is reassembled, so RPUSH of 100,000 values and a 100 MB
SET and GET work; Redis's proto-max-bulk-len holds with its text; a fragment that does not
continue a message is refused and the session goes on.
"""

import struct
import threading

import pytest
from hypothesis import given, settings, strategies as st

from goblin_ring import ResponseError, RingClient, _native
from goblin_ring._native import lib


def depth(value) -> int:
    return 1 + max((depth(part) for part in value), default=0) if isinstance(value, list) else 0


@pytest.mark.parametrize("argv", [
    ("COMMAND", "INFO", "get", "lpush", "blmpop"),
    ("COMMAND", "DOCS", "lmpop"),
    ("COMMAND", "INFO", "no-such-command"),
    ("HELLO",),
    ("CONFIG", "GET", "maxmemory*"),
])
def test_nested_replies_arrive_over_the_ring_as_over_resp(ring, resp, argv):
    over_resp = resp.execute_command(*argv)
    over_ring = ring.execute_command(*argv)
    if argv[0] == "HELLO":      # the connection's own id differs
        over_resp[over_resp.index(b"id") + 1] = over_ring[over_ring.index(b"id") + 1] = 0
    assert over_ring == over_resp
    if argv[0] == "COMMAND" and argv[2] != "no-such-command":
        assert depth(over_ring) >= 3           # arrays in arrays in arrays


def test_keyed_and_paired_replies_keep_their_shape(ring):
    ring.rpush("shapes", b"a", b"b", b"c")
    assert ring.execute_command("LMPOP", "1", "shapes", "LEFT", "COUNT", "2") == [b"shapes", [b"a", b"b"]]
    assert ring.execute_command("BLPOP", "shapes", "0") == [b"shapes", b"c"]
    assert ring.execute_command("LMPOP", "1", "shapes", "LEFT") is None       # a null array
    assert ring.execute_command("SCAN", "0", "MATCH", "no-such-*")[1] == []


def test_rpush_of_a_hundred_thousand_values_goes_over_the_ring(ring, resp):
    values = [b"v%d" % i for i in range(100_000)]         # > 65535 group entries, ~1 MB
    assert ring.rpush("many", *values) == 100_000
    assert resp.llen("many") == 100_000
    assert ring.lrange("many", 0, -1) == values           # the reply: > 65535 elements, in fragments
    assert ring.execute_command("DEL", "many") == 1


def test_a_hundred_megabyte_set_and_get_over_the_ring(ring, resp):
    value = bytes(range(256)) * (100 * 1024 * 1024 // 256)
    assert ring.set("huge", value) is True
    assert resp.strlen("huge") == len(value)
    assert ring.get("huge") == value
    assert ring.delete("huge") == 1


def test_an_argument_longer_than_proto_max_bulk_len_gets_redis_text(ring, resp):
    assert resp.execute_command("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"OK"
    try:
        with pytest.raises(Exception, match="Protocol error: invalid bulk length"):
            ring.set("long", b"z" * (2 * 1024 * 1024))
        assert ring.exists("long") == 0
        assert ring.set("long", b"z" * 1000) is True        # the session goes on
    finally:
        resp.execute_command("CONFIG", "SET", "proto-max-bulk-len", str(512 * 1024 * 1024))
    ring.delete("long")


def test_a_fragment_that_continues_no_message_is_refused_and_the_session_goes_on(ring):
    core = ring._core
    stray = struct.pack("<IIQ", lib.GR_T_PING, lib.GR_FRAGMENT_END, 100) + b"x" * 100
    payload = _native.ffi.from_buffer(stray)
    assert lib.gr_client_send_raw(core.pointer, lib.GR_FRAGMENT_TYPE, payload, len(stray)) == 0
    result = _native.ffi.new("gr_result_t *")
    assert lib.gr_client_receive(core.pointer, result) == 0
    assert result.template_id == lib.GR_T_ERROR_REPLY
    assert b"malformed request" in _native.ffi.buffer(result.data, result.length)[:]
    assert ring.ping() is True


def test_a_large_request_behind_a_parked_blpop_is_taken_in_and_runs_after_it(goblin, resp):
    resp.delete("parked", "after")
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, ring_size=65536, timeout=10.0) as client:
        pipe = client.pipeline()
        pipe.blpop("parked", 0)
        pipe.rpush("after", b"y" * 200_000)                # 25 fragments while the session is parked
        pipe.llen("after")
        pusher = threading.Timer(0.2, lambda: resp.rpush("parked", b"go"))
        pusher.start()
        try:
            replies = pipe.execute()
        finally:
            pusher.join()
        assert replies == [(b"parked", b"go"), 1, 1]
    assert resp.lindex("after", 0) == b"y" * 200_000
    resp.delete("after")


def test_a_request_over_client_query_buffer_limit_is_refused_whole_and_the_session_goes_on(ring, resp):
    assert resp.execute_command("CONFIG", "SET", "client-query-buffer-limit", "1mb") == b"OK"
    try:
        with pytest.raises(Exception, match="client-query-buffer-limit"):
            ring.rpush("over", *([b"w" * 1000] * 1500))      # 1.5 MB of request, in fragments
        assert ring.exists("over") == 0
        assert ring.rpush("over", *([b"w" * 1000] * 500)) == 500
    finally:
        resp.execute_command("CONFIG", "SET", "client-query-buffer-limit", str(1024 ** 3))
    ring.delete("over")


# ---- the tree an ArrayReply carries, built back into Python values ----------------------------

_leaf = st.one_of(st.binary(max_size=20), st.integers(-2 ** 63, 2 ** 63 - 1), st.none())
_trees = st.recursive(_leaf, lambda children: st.lists(children, max_size=5), max_leaves=40)


def _pre_order(value, out):
    if isinstance(value, list):
        out.append((lib.GR_ELEMENT_KIND_ARRAY, len(value), b""))
        for child in value:
            _pre_order(child, out)
    elif isinstance(value, bytes):
        out.append((lib.GR_ELEMENT_KIND_BULK, 0, value))
    elif isinstance(value, int):
        out.append((lib.GR_ELEMENT_KIND_INTEGER, value, b""))
    else:
        out.append((lib.GR_ELEMENT_KIND_NIL, 0, b""))
    return out


@settings(max_examples=300, deadline=None)
@given(tree=st.lists(_trees, max_size=6))
def test_any_nested_array_survives_the_codec_and_the_python_builder(tree):
    elements = _pre_order(tree, [])
    decoded = _native.decode_reply(_native.encode_reply(lib.GR_T_ARRAY_REPLY, request_id=1, elements=elements))
    assert decoded["elements"] == elements
    kinds = [kind for kind, _, _ in elements]
    integers = [integer for _, integer, _ in elements]
    arena = b"".join(payload for _, _, payload in elements)
    offsets, lengths, at = [], [], 0
    for _, _, payload in elements:
        offsets.append(at)
        lengths.append(len(payload))
        at += len(payload)
    assert _native._reply_tree(kinds, integers, offsets, lengths, arena) == tree


def test_a_map_is_a_flat_list_and_an_error_inside_an_array_is_a_response_error():
    elements = [(lib.GR_ELEMENT_KIND_ARRAY, 2, b""), (lib.GR_ELEMENT_KIND_MAP, 1, b""),
                (lib.GR_ELEMENT_KIND_STATUS, 0, b"k"), (lib.GR_ELEMENT_KIND_NIL_ARRAY, 0, b""),
                (lib.GR_ELEMENT_KIND_ERROR, lib.GR_ERR_WRONGTYPE, b"WRONGTYPE Operation against a key")]
    arena = b"kWRONGTYPE Operation against a key"
    value = _native._reply_tree([e[0] for e in elements], [e[1] for e in elements],
                                [0, 0, 0, 1, 1], [0, 0, 1, 0, len(arena) - 1], arena)
    assert value[0] == [b"k", None]
    assert isinstance(value[1], ResponseError) and "WRONGTYPE" in str(value[1])
