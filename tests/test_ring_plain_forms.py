"""RingClient's typed plain forms and its replies built by one marshal.loads.

The hot list commands (LRANGE, LTRIM, LMOVE, RPOPLPUSH, BLMOVE, BRPOPLPUSH, BLPOP, BRPOP,
LMPOP, BLMPOP, and the older LPOP, LLEN, ...) skip argv: C types the request from the
method's arguments. Each must answer, count and fail exactly as the same command sent as argv
(the shared method, which C builds with the RESP path's own builder) and as RESP. Every reply
of a plain call reaches Python as marshal bytes written by C (native/client/plain_reply.c):
shapes, integer edges, errors inside arrays and replies too large for the buffer are checked
against RESP and against the Python tree builder.
"""

from __future__ import annotations

import marshal

import pytest

from goblin_ring import ConnectionError, DataError, ResponseError, RingClient, WrongTypeError, _native
from goblin_ring.client.commands import ListCommands
from goblin_ring._native import PLAIN_CAPACITY, _reply_tree

lib, ffi = _native.lib, _native.ffi


def fill(*clients_and_keys):
    """Fresh lists: the first client deletes and refills each key with a..f."""
    client, *keys = clients_and_keys
    client.delete(*keys)
    for key in keys:
        client.rpush(key, *[f"{key}-{c}" for c in "abcdef"])


def command_calls(info: dict, name: str) -> int:
    return info.get(f"cmdstat_{name}", {}).get("calls", 0)


# (method, args, kwargs): shapes the typed forms take, and the ones they leave to argv
TYPED_CALLS = [
    ("lrange", ("p1", 0, -1), {}), ("lrange", ("p1", 2, 3), {}), ("lrange", ("p1", -100, 100), {}),
    ("lrange", ("absent", 0, -1), {}), ("lrange", ("p1", 2 ** 63, 1), {}), ("lrange", ("p1", "0", "1"), {}),
    ("ltrim", ("p1", 1, -2), {}), ("ltrim", ("p1", 0, 2 ** 64), {}),
    ("lmove", ("p1", "p2"), {}), ("lmove", ("p1", "p2", "RIGHT", "LEFT"), {}),
    ("lmove", ("p1", b"p1", "left", "right"), {}), ("lmove", ("p1", "p2", "Left", "RIGHT"), {}),
    ("lmove", ("p1", "p2", "UP", "LEFT"), {}), ("lmove", ("absent", "p2"), {}),
    ("rpoplpush", ("p1", "p2"), {}), ("rpoplpush", ("absent", "p2"), {}),
    ("blmove", ("p1", "p2", 0), {}), ("blmove", ("p1", "p2", 0.5, "RIGHT", "RIGHT"), {}),
    ("blmove", ("p1", "p2", -1), {}), ("blmove", ("p1", "p2", "0"), {}),
    ("brpoplpush", ("p1", "p2", 0), {}), ("brpoplpush", ("p1", "p2", None), {}),
    ("blpop", (["absent", "p1"], 0), {}), ("blpop", ("p1", 0), {}), ("blpop", (["p1"], 0.25), {}),
    ("blpop", (("absent", b"p2"), 1), {}), ("blpop", (["absent", "p1", "p2"], 0), {}),
    ("blpop", (["p1"], -1), {}), ("blpop", (["p1"], float("inf")), {}), ("blpop", (["p1"], 10 ** 400), {}),
    ("blpop", ([], 0), {}), ("blpop", ([b"p1", 7], None), {}),
    ("blpop", ([bytearray(b"absent"), memoryview(b"p1")], 0), {}), ("blpop", ([1, "p2"], 0), {}),
    ("blpop", (bytearray(b"p2"), 0), {}),
    ("brpop", (["absent", "p1"], 0), {}), ("brpop", ("p2", 0), {}),
    ("blpop", (["p1"], 2 ** 70), {}), ("brpop", (("absent", "p2"), 2.5), {}), ("blpop", (["absent", "p1"], None), {}),
    ("lmpop", (2, "p1"), {"direction": "LEFT"}), ("lmpop", (1, "absent", "p1"), {"direction": "LEFT", "count": 2}),
    ("lmpop", (0,), {"direction": "LEFT"}), ("lmpop", (2, "absent", "p1"), {"direction": b"RIGHT", "count": 2 ** 32}),
    ("lmpop", (2, "absent", "p1"), {"direction": "LEFT", "count": 2 ** 32 - 1}),
    ("lmpop", (1, "p1"), {"direction": "LEFT", "count": True}),
    ("lmpop", (2, "absent", "p1"), {"direction": "LEFT", "count": 3}),
    ("lmpop", (1, "p1"), {"direction": "RIGHT"}), ("lmpop", (1, "p1"), {"direction": "left", "count": None}),
    ("lmpop", (2, "p1", "p2"), {"direction": "LEFT", "count": 100}),
    ("lmpop", (2, "p1", "p2"), {"direction": "LEFT", "count": 2 ** 40}),
    ("lmpop", (1, "p1"), {"direction": "LEFT", "count": 0}), ("lmpop", (1, "p1"), {"direction": "SIDEWAYS"}),
    ("lmpop", (3, "p1", "p2"), {"direction": "LEFT"}), ("lmpop", (3, "absent", "p1", "p2"), {"direction": "LEFT"}),
    ("lmpop", (2, "absent", "other"), {"direction": "LEFT"}),
    ("lmpop", (2, bytearray(b"absent"), memoryview(b"p2")), {"direction": "RIGHT", "count": 2}),
    ("lmpop", (1, 5), {"direction": "LEFT"}), ("lmpop", (2, 5, "p1"), {"direction": "LEFT", "count": None}),
    ("blmpop", (0, 2, "absent", "p2"), {"direction": "RIGHT", "count": 2}),
    ("blmpop", (0.5, 1, "p1"), {"direction": "LEFT"}), ("blmpop", (-1, 1, "p1"), {"direction": "LEFT"}),
]


@pytest.mark.parametrize("method,args,kwargs", TYPED_CALLS, ids=lambda v: repr(v))
def test_a_typed_form_answers_as_the_same_command_sent_as_argv_and_over_resp(ring, resp, method, args, kwargs):
    outcomes = []
    for run in (getattr(ring, method), getattr(ListCommands, method).__get__(ring), getattr(resp, method)):
        fill(resp, "p1", "p2")
        try:
            value = ("value", run(*args, **kwargs))
        except ResponseError as error:
            value = ("error", type(error), str(error))
        outcomes.append((value, resp.lrange("p1", 0, -1), resp.lrange("p2", 0, -1)))
    typed, argv, over_resp = outcomes
    assert typed == argv == over_resp
    resp.delete("p1", "p2")


def test_a_key_redis_py_refuses_is_refused_by_the_typed_forms_before_anything_is_sent(ring, resp):
    fill(resp, "p1")
    for call in (lambda: ring.blpop([True, "p1"], 0), lambda: ring.brpop(["p1", 1.5j], 0),
                 lambda: ring.brpop([b"p1", None], 0),
                 lambda: ring.lmpop(2, "p1", 1.5j, direction="LEFT"), lambda: ring.lmpop(1, False, direction="LEFT"),
                 # cffi alone takes a list or tuple of small ints for a key's pointer (here b"p1")
                 lambda: ring.blpop([[112, 49], "p1"], 0), lambda: ring.brpop(("p1", (112, 49)), 0),
                 lambda: ring.blpop([[112, 49]], 0), lambda: ring.lmpop(2, [112, 49], "p1", direction="LEFT"),
                 lambda: ring.lmpop(2, "p1", (112, 49), direction="LEFT"),
                 lambda: ring.lmpop(1, [112, 49], direction="LEFT", count=2),
                 lambda: ring.lmpop(2, b"p1", [112, 49], direction="LEFT", count=None),
                 lambda: ring.blmpop(0, 2, [112, 49], "p1", direction="LEFT")):
        with pytest.raises(DataError):
            call()
    assert resp.lrange("p1", 0, -1) == [f"p1-{c}".encode() for c in "abcdef"]


COUNTED_CALLS = [("lrange", ("c1", 0, 1)), ("ltrim", ("c1", 0, -1)), ("lmove", ("c1", "c2", "LEFT", "RIGHT")),
                 ("rpoplpush", ("c1", "c2")), ("blmove", ("c1", "c2", 0, "LEFT", "LEFT")),
                 ("brpoplpush", ("c1", "c2", 0)), ("blpop", (["c1", "c2"], 0)), ("brpop", ("c2", 0))]


@pytest.mark.parametrize("method,args", COUNTED_CALLS, ids=[m for m, _ in COUNTED_CALLS])
def test_a_typed_form_is_counted_as_the_same_command_sent_as_argv(ring, resp, method, args):
    """Over the ring a command is known by its typed request: RPOPLPUSH is LMOVE RIGHT LEFT
    (and BRPOPLPUSH BLMOVE's), counted as lmove/blmove whichever way it is sent."""
    counted = []
    for run in (getattr(ring, method), getattr(ListCommands, method).__get__(ring)):
        fill(resp, "c1", "c2")
        resp.execute_command("CONFIG", "RESETSTAT")
        run(*args)
        counted.append({name: fields["calls"] for name, fields in resp.info("commandstats").items()
                        if name != "cmdstat_config|resetstat" and name != "cmdstat_info"})
    typed, argv = counted
    assert typed == argv and sum(typed.values()) == 1
    expected = {"rpoplpush": "lmove", "brpoplpush": "blmove"}.get(method, method)
    assert typed == {f"cmdstat_{expected}": 1}
    resp.delete("c1", "c2")


def test_lmpop_and_blmpop_typed_are_counted_as_themselves(ring, resp):
    fill(resp, "c1")
    resp.execute_command("CONFIG", "RESETSTAT")
    ring.lmpop(2, "none", "c1", direction="LEFT", count=2)
    ring.blmpop(0, 1, "c1", direction="RIGHT")
    stats = resp.info("commandstats")
    assert command_calls(stats, "lmpop") == 1 and command_calls(stats, "blmpop") == 1
    resp.delete("c1")


def test_a_typed_form_on_another_type_is_wrongtype_as_over_resp(ring, resp):
    resp.set("str", "x")
    for call in (lambda c: c.lrange("str", 0, -1), lambda c: c.lmove("str", "p"), lambda c: c.blpop("str", 0),
                 lambda c: c.lmpop(1, "str", direction="LEFT"), lambda c: c.blmpop(0, 1, "str", direction="LEFT")):
        with pytest.raises(WrongTypeError) as over_ring:
            call(ring)
        with pytest.raises(WrongTypeError) as over_resp:
            call(resp)
        assert str(over_ring.value) == str(over_resp.value)
    resp.delete("str")


def test_blpop_and_lmpop_keep_their_shapes(ring, resp):
    fill(resp, "s1")
    assert ring.blpop(["none", "s1"], 0) == (b"s1", b"s1-a")
    assert ring.brpop("s1", 0) == (b"s1", b"s1-f")
    assert ring.lmpop(2, "none", "s1", direction="LEFT", count=2) == [b"s1", [b"s1-b", b"s1-c"]]
    assert ring.blpop(["none"], 0.01) is None
    assert ring.lmpop(1, "none", direction="LEFT") is None
    resp.delete("s1")


# ---- every reply shape through the plain output ----

def test_replies_of_every_shape_reach_python_as_over_resp(ring, resp):
    resp.delete("n", "m1", "m2", "h")
    resp.set("n", 0)
    for delta in (2 ** 31 - 1, 1, 2 ** 40, -(2 ** 41), 2 ** 62, -(2 ** 62) - 2 ** 40):
        assert ring.incrby("n", delta) == int(resp.get("n"))
    resp.set("n", -(2 ** 63))
    assert ring.incrby("n", 0) == -(2 ** 63)
    resp.set("n", 2 ** 63 - 1)
    assert ring.incrby("n", 0) == 2 ** 63 - 1
    resp.set("m1", "one")
    assert ring.mget("m1", "none", "m1") == resp.mget("m1", "none", "m1") == [b"one", None, b"one"]
    assert ring.execute_command("COMMAND", "INFO", "get", "lmpop") == resp.execute_command("COMMAND", "INFO", "get",
                                                                                            "lmpop")
    assert ring.execute_command("COMMAND", "DOCS", "lmpop") == resp.execute_command("COMMAND", "DOCS", "lmpop")
    assert ring.get("none") is None and ring.lrange("none", 0, -1) == []
    resp.delete("n", "m1")


def test_an_error_inside_an_array_is_a_responseerror_in_the_list(ring, resp):
    """As redis-py's parser gives it: the error in place, the other replies around it."""
    resp.set("str", "x")
    assert ring.execute_command("MULTI") == b"OK"
    ring.execute_command("SET", "k", "v")
    ring.execute_command("LPUSH", "str", "y")
    ring.execute_command("GET", "k")
    replies = ring.execute_command("EXEC")
    assert replies[0] == b"OK" and replies[2] == b"v"
    assert isinstance(replies[1], WrongTypeError)
    assert str(replies[1]) == "WRONGTYPE Operation against a key holding the wrong kind of value"
    resp.delete("str", "k")


def test_a_reply_larger_than_the_plain_buffer_arrives_whole(ring, resp):
    values = [b"%020d" % i for i in range(PLAIN_CAPACITY // 20)]      # about 1.25x the buffer
    ring.delete("big")
    ring.rpush_many("big", values)
    assert ring.lrange("big", 0, -1) == values
    assert ring.lmpop(1, "big", direction="LEFT", count=len(values)) == [b"big", values]
    assert ring.lrange("big", 0, -1) == []
    huge = b"x" * (2 * PLAIN_CAPACITY)
    ring.set("big", huge)
    assert ring.get("big") == huge
    ring.delete("big")


def test_an_error_reply_after_a_value_does_not_return_the_stale_value(ring, resp):
    resp.set("str", "x")
    assert ring.get("str") == b"x"
    with pytest.raises(WrongTypeError):
        ring.lrange("str", 0, -1)
    with pytest.raises(WrongTypeError):
        ring.lpop("str")
    assert ring.llen("none") == 0
    resp.delete("str")


def test_a_closed_client_raises_connectionerror_from_every_form(goblin):
    client = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10)
    assert client.ping() is True
    client.close()
    for call in (lambda: client.ping(), lambda: client.lpop("k"), lambda: client.llen("k"),
                 lambda: client.lrange("k", 0, 1), lambda: client.blpop(["a", "b"], 0),
                 lambda: client.lmove("a", "b"), lambda: client.lmpop(1, "a", direction="LEFT"),
                 lambda: client.get("k"), lambda: client.execute_command("PING")):
        with pytest.raises(ConnectionError, match="closed"):
            call()


# ---- the marshal writer itself, on replies built here ----

def result_of(elements: list[tuple[int, int, bytes]]):
    keep = []
    result = ffi.new("gr_result_t *")
    result.template_id = lib.GR_T_ARRAY_REPLY
    storage = ffi.new("gr_element_t[]", len(elements))
    for i, (kind, integer, payload) in enumerate(elements):
        storage[i].kind = kind
        storage[i].integer = integer
        buffer = ffi.new("uint8_t[]", payload or b"\0")
        keep.append(buffer)
        storage[i].bytes.data = buffer
        storage[i].bytes.length = len(payload)
    result.elements = storage
    result.count = len(elements)
    return result, (storage, keep)


def write(result, tuple_root: int = 0) -> tuple[int, bytearray]:
    out = bytearray(4096)
    return lib.gr_plain_reply_write(result, tuple_root, ffi.from_buffer("uint8_t[]", out), len(out)), out


def tree(elements):
    kinds, integers, payloads = zip(*elements)
    arena = b"".join(payloads)
    offsets, at = [], 0
    for payload in payloads:
        offsets.append(at)
        at += len(payload)
    return _reply_tree(list(kinds), list(integers), offsets, [len(p) for p in payloads], arena)


K = lib
NESTED = [(K.GR_ELEMENT_KIND_ARRAY, 6, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"key"),
          (K.GR_ELEMENT_KIND_MAP, 2, b""), (K.GR_ELEMENT_KIND_STATUS, 0, b"a"), (K.GR_ELEMENT_KIND_INTEGER, -1, b""),
          (K.GR_ELEMENT_KIND_BULK, 0, b""), (K.GR_ELEMENT_KIND_ARRAY, 0, b""),
          (K.GR_ELEMENT_KIND_NIL, 0, b""), (K.GR_ELEMENT_KIND_NIL_ARRAY, 0, b""),
          (K.GR_ELEMENT_KIND_INTEGER, -(2 ** 63), b""), (K.GR_ELEMENT_KIND_ARRAY, 2, b""),
          (K.GR_ELEMENT_KIND_INTEGER, 2 ** 63 - 1, b""), (K.GR_ELEMENT_KIND_INTEGER, 2 ** 31, b"")]


def test_the_writer_builds_what_the_tree_builder_builds():
    result, _keep = result_of(NESTED)
    length, out = write(result)
    assert 0 < length <= len(out)
    assert marshal.loads(out) == tree(NESTED) == [b"key", [b"a", -1, b"", []], None, None, -(2 ** 63),
                                                   [2 ** 63 - 1, 2 ** 31]]


def test_the_writer_says_how_large_a_buffer_a_reply_needs():
    result, _keep = result_of(NESTED)
    length, _out = write(result)
    assert lib.gr_plain_reply_write(result, 0, ffi.NULL, 0) == length
    small = bytearray(length - 1)
    assert lib.gr_plain_reply_write(result, 0, ffi.from_buffer("uint8_t[]", small), len(small)) == length


def test_a_small_root_array_can_be_a_tuple():
    elements = [(K.GR_ELEMENT_KIND_ARRAY, 2, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"k"), (K.GR_ELEMENT_KIND_BULK, 0, b"v")]
    result, _keep = result_of(elements)
    assert marshal.loads(write(result, 1)[1]) == (b"k", b"v")
    assert marshal.loads(write(result, 0)[1]) == [b"k", b"v"]


@pytest.mark.parametrize("elements", [
    [(K.GR_ELEMENT_KIND_ARRAY, 1, b""), (K.GR_ELEMENT_KIND_ERROR, 0, b"ERR no")],          # an error element
    [(K.GR_ELEMENT_KIND_ARRAY, 1, b"")] * 40 + [(K.GR_ELEMENT_KIND_ARRAY, 0, b"")],       # deeper than 32
    [(K.GR_ELEMENT_KIND_ARRAY, 3, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"short")],           # the tree ends early
    [(K.GR_ELEMENT_KIND_ARRAY, 0, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"extra")],           # past the root's end
], ids=["error element", "too deep", "ends early", "past the root"])
def test_the_writer_leaves_what_it_cannot_write_to_the_caller(elements):
    result, _keep = result_of(elements)
    assert write(result)[0] == -1


def test_a_flat_array_of_bulks_and_one_that_only_starts_flat_are_both_written_whole():
    bulk = K.GR_ELEMENT_KIND_BULK
    flat = [(K.GR_ELEMENT_KIND_ARRAY, 3, b""), (bulk, 0, b"a"), (bulk, 0, b""), (bulk, 0, b"c" * 300)]
    almost = flat[:3] + [(K.GR_ELEMENT_KIND_NIL, 0, b"")]               # the last element is not a bulk
    for elements, expected in ((flat, [b"a", b"", b"c" * 300]), (almost, [b"a", b"", None])):
        result, _keep = result_of(elements)
        length, out = write(result)
        assert marshal.loads(out) == tree(elements) == expected
        assert marshal.loads(write(result, 1)[1]) == tuple(expected)
        assert lib.gr_plain_reply_write(result, 0, ffi.NULL, 0) == length


def test_replies_that_only_start_as_a_key_and_its_values_are_written_whole_or_left_alone():
    """[bulk, [bulks]] (LMPOP) has a loop of its own; a reply that begins so and turns out to be
    another shape is written by the general walk (or left to the caller where that one leaves it)."""
    A, B, N = K.GR_ELEMENT_KIND_ARRAY, K.GR_ELEMENT_KIND_BULK, K.GR_ELEMENT_KIND_NIL
    head = [(A, 2, b""), (B, 0, b"queue")]
    writable = [
        head + [(A, 2, b""), (B, 0, b"a"), (B, 0, b"")],                    # the shape itself
        head + [(A, 0, b"")],                                               # no values
        head + [(A, 2, b""), (B, 0, b"a"), (N, 0, b"")],                    # a value that is nil
        head + [(A, 2, b""), (A, 1, b""), (B, 0, b"x"), (B, 0, b"y")],      # nested inside the values
        [(A, 2, b""), (N, 0, b""), (A, 1, b""), (B, 0, b"v")],              # no key
        [(A, 2, b""), (B, 0, b"k"), (K.GR_ELEMENT_KIND_INTEGER, 7, b"")],   # a key and a number
        head + [(K.GR_ELEMENT_KIND_MAP, 1, b""), (B, 0, b"f"), (B, 0, b"v")],
    ]
    for elements in writable:
        result, _keep = result_of(elements)
        length, out = write(result)
        assert length > 0 and marshal.loads(out) == tree(elements)
        assert marshal.loads(write(result, 1)[1]) == tuple(tree(elements))
    left_alone = [
        head + [(A, 3, b""), (B, 0, b"a"), (B, 0, b"b")],                    # the values end early
        head + [(A, 1, b""), (B, 0, b"a"), (B, 0, b"b")],                    # past the root's end
        head + [(A, 1, b""), (K.GR_ELEMENT_KIND_ERROR, 2, b"WRONGTYPE no")],
    ]
    for elements in left_alone:
        result, _keep = result_of(elements)
        assert write(result)[0] == -1


# ---- the same writer straight from the ring message (gr_plain_reply_write_message) ----

def write_message(message: bytes, tuple_root: int = 0, capacity: int = 4096) -> tuple[int, bytearray, int]:
    out = bytearray(capacity)
    request_id = ffi.new("uint64_t *")
    length = lib.gr_plain_reply_write_message(ffi.from_buffer(message), len(message), tuple_root,
                                              ffi.from_buffer("uint8_t[]", out), len(out), request_id)
    return length, out, request_id[0]


FLAT = [(K.GR_ELEMENT_KIND_ARRAY, 16, b"")] + [(K.GR_ELEMENT_KIND_BULK, 0, b"v%015d" % i) for i in range(16)]
PAIR = [(K.GR_ELEMENT_KIND_ARRAY, 2, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"k"), (K.GR_ELEMENT_KIND_BULK, 0, b"v")]
KEYED = [(K.GR_ELEMENT_KIND_ARRAY, 2, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"queue"), (K.GR_ELEMENT_KIND_ARRAY, 8, b"")] + [
    (K.GR_ELEMENT_KIND_BULK, 0, b"value-%d" % i) for i in range(8)]
REPLY_SHAPES = {
    "nested arrays, a map, nils, integers": NESTED,
    "a flat array of bulks (LRANGE)": FLAT,
    "a pair (BLPOP)": PAIR,
    "a key and its values (LMPOP)": KEYED,
    "a key and no values": KEYED[:2] + [(K.GR_ELEMENT_KIND_ARRAY, 0, b"")],
    "a key and values that are not all bulks": KEYED[:5] + [(K.GR_ELEMENT_KIND_INTEGER, 5, b"")] + KEYED[6:],
    "a null array": [(K.GR_ELEMENT_KIND_NIL_ARRAY, 0, b"")],
    "an empty array": [(K.GR_ELEMENT_KIND_ARRAY, 0, b"")],
    "a map of a status and a double (a double travels as a bulk)": [
        (K.GR_ELEMENT_KIND_MAP, 1, b""), (K.GR_ELEMENT_KIND_STATUS, 0, b"score"), (K.GR_ELEMENT_KIND_BULK, 0, b"1.5")],
    "integers at the int32 and int64 edges": [(K.GR_ELEMENT_KIND_ARRAY, 4, b"")] + [
        (K.GR_ELEMENT_KIND_INTEGER, v, b"") for v in (2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 63))],
    "an error inside an array": [(K.GR_ELEMENT_KIND_ARRAY, 2, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"ok"),
                                 (K.GR_ELEMENT_KIND_ERROR, 2, b"WRONGTYPE no")],
    "deeper than the writer goes": [(K.GR_ELEMENT_KIND_ARRAY, 1, b"")] * 40 + [(K.GR_ELEMENT_KIND_ARRAY, 0, b"")],
    "a tree that ends early": [(K.GR_ELEMENT_KIND_ARRAY, 3, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"short")],
    "elements past the root": [(K.GR_ELEMENT_KIND_ARRAY, 0, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"extra")],
    "a null array with elements past it": [(K.GR_ELEMENT_KIND_NIL_ARRAY, 0, b""), (K.GR_ELEMENT_KIND_BULK, 0, b"x")],
    "larger than the buffer": [(K.GR_ELEMENT_KIND_ARRAY, 300, b"")] + [(K.GR_ELEMENT_KIND_BULK, 0, b"x" * 20)] * 300,
}


@pytest.mark.parametrize("elements", list(REPLY_SHAPES.values()), ids=list(REPLY_SHAPES))
@pytest.mark.parametrize("tuple_root", [0, 1])
def test_the_message_writer_writes_what_the_decoded_path_writes(elements, tuple_root):
    """Straight from the message, every shape comes out as the decoded gr_result_t's writer
    writes it (or, where that one leaves it to the caller, is left to the decoding path)."""
    message = _native.encode_reply(lib.GR_T_ARRAY_REPLY, request_id=41, elements=elements)
    result, _keep = result_of(elements)
    if elements[0][0] == K.GR_ELEMENT_KIND_NIL_ARRAY:
        result.is_nil = 1                   # as take_reply marks a null array root
    decoded_length, decoded = write(result, tuple_root)
    length, out, request_id = write_message(message, tuple_root)
    if decoded_length == -1 or elements is REPLY_SHAPES["a null array with elements past it"]:
        assert length == -1                 # the decoding path then writes or raises it
        return
    assert (length, request_id) == (decoded_length, 41)
    if length <= len(out):
        assert out[:length] == decoded[:length]
        assert marshal.loads(out) == marshal.loads(decoded)
    else:                                   # it says how large a buffer it needs, as the decoded path does
        assert write_message(message, tuple_root, capacity=length)[0] == length


@pytest.mark.parametrize("elements", [NESTED, KEYED], ids=["nested", "keyed"])
def test_the_message_writer_leaves_a_message_that_does_not_decode_to_the_decoding_path(elements):
    message = _native.encode_reply(lib.GR_T_ARRAY_REPLY, request_id=3, elements=elements)
    for cut in range(len(message)):
        assert write_message(message[:cut])[0] == -1
    bad_kind = bytearray(message)
    bad_kind[8 + 8 + 6] = 99                # the first element's kind: no such ElementKind
    assert write_message(bytes(bad_kind))[0] == -1
    assert write_message(_native.encode_reply(lib.GR_T_BULK_REPLY, text=b"x"))[0] == -1
    assert write_message(_native.encode_reply(lib.GR_T_ARRAY_REPLY, elements=[]))[0] == -1   # no root


def test_a_reply_in_fragments_that_fits_the_plain_buffer_arrives_whole(goblin, resp):
    """A reply larger than one ring message is reassembled and decoded (not streamed) and still
    comes back as RESP gives it."""
    client = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, ring_size=1 << 16, timeout=10)
    try:
        values = [b"%030d" % i for i in range(client.max_message // 20)]
        assert client.max_message < len(values) * 35 < PLAIN_CAPACITY
        resp.delete("frag")
        resp.rpush("frag", *values)
        assert client.lrange("frag", 0, -1) == resp.lrange("frag", 0, -1) == values
        assert client.lmpop(1, "frag", direction="LEFT", count=len(values) - 1) == [b"frag", values[:-1]]
        assert client.blpop(["none", "frag"], 0) == (b"frag", values[-1])
    finally:
        client.close()
        resp.delete("frag")


def test_values_of_every_short_length_are_written_whole():
    """The writer copies up to 16 bytes without memcpy (overlapping loads): every length across
    that edge, in both writers, comes back byte for byte."""
    values = [bytes(range(1, n + 1)) for n in range(41)]
    elements = [(K.GR_ELEMENT_KIND_ARRAY, len(values), b"")] + [(K.GR_ELEMENT_KIND_BULK, 0, v) for v in values]
    result, _keep = result_of(elements)
    assert marshal.loads(write(result)[1]) == values
    message = _native.encode_reply(lib.GR_T_ARRAY_REPLY, elements=elements)
    assert marshal.loads(write_message(message)[1]) == values
