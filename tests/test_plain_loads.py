"""test_plain_loads.py — goblin_ring._plain_loads.loads answers as marshal.loads does, for every input.

loads (native/python/plain_loads.c) reads the marshal codes the ring client's plain writers use
and hands anything else to marshal.loads. Here: trees of those codes written as the client
writes them (no reference flags), every truncation of them, random byte mutations, buffers of
other codes and types; each answer (value with its exact types, or exception type and text)
must be marshal.loads's own.
"""

from __future__ import annotations

import marshal
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goblin_ring._native import plain_loads


def encode(value) -> bytes:
    """value in the byte format the client writes (native/client/plain_reply.h), no references."""
    return b"".join(chunk for chunk, _ in pieces(value))


def pieces(value):
    """encode's bytes as (chunk, may_mutate) pairs: a count's or a length's upper three bytes
    may not be mutated, so that a mutated buffer never asks marshal for a list of 2**31 slots."""
    def counted(code: bytes, count: int, signed: bool = False):
        field = struct.pack("<i" if signed else "<I", count)
        return [(code + field[:1], True), (field[1:], False)]
    if value is None:
        return [(b"N", True)]
    if value is ...:
        return [(b".", True)]
    if value is True:
        return [(b"T", True)]
    if value is False:
        return [(b"F", True)]
    if isinstance(value, int):
        if -2 ** 31 <= value < 2 ** 31:
            return [(b"i" + struct.pack("<i", value), True)]
        digits, magnitude = [], abs(value)
        while magnitude:
            digits.append(magnitude & 0x7FFF)
            magnitude >>= 15
        return counted(b"l", -len(digits) if value < 0 else len(digits), signed=True) + [
            (b"".join(struct.pack("<H", d) for d in digits), True)]
    if isinstance(value, bytes):
        return counted(b"s", len(value)) + [(value, True)]
    if isinstance(value, str):
        data = value.encode("ascii")
        return [(b"z" + bytes([len(data)]) + data, True)]
    if isinstance(value, list):
        return counted(b"[", len(value)) + [p for v in value for p in pieces(v)]
    if isinstance(value, tuple):
        return [(b")" + bytes([len(value)]), True)] + [p for v in value for p in pieces(v)]
    if isinstance(value, dict):
        return [(b"{", True)] + [p for k, v in value.items() for p in pieces(k) + pieces(v)] + [(b"0", True)]
    raise TypeError(type(value))


def outcome(load, data):
    """What load(data) does: ("value", a tree of (type, value)) or ("error", type, text)."""
    try:
        value = load(data)
    except Exception as error:  # noqa: BLE001 - the exception itself is what is compared
        return ("error", type(error), str(error))
    return ("value", typed(value))


def typed(value):
    """value with every node's exact type beside it (so True is not 1, a tuple not a list)."""
    if isinstance(value, (list, tuple)):
        return type(value), [typed(v) for v in value]
    if isinstance(value, dict):
        return dict, [(typed(k), typed(v)) for k, v in value.items()]
    return type(value), value


def same_as_marshal(data) -> None:
    assert outcome(plain_loads, data) == outcome(marshal.loads, data)


leaves = (st.none() | st.just(...) | st.booleans() | st.binary(max_size=40)
          | st.integers(min_value=-2 ** 31, max_value=2 ** 31 - 1)
          | st.integers(min_value=-2 ** 70, max_value=2 ** 70)
          | st.text(alphabet=st.characters(max_codepoint=127), max_size=20))
keys = st.binary(max_size=8) | st.text(alphabet=st.characters(max_codepoint=127), max_size=8) | st.integers()
trees = st.recursive(leaves, lambda inner: st.lists(inner, max_size=6)
                     | st.lists(inner, max_size=6).map(tuple)
                     | st.dictionaries(keys, inner, max_size=4), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(trees)
def test_every_tree_the_client_writes_loads_as_marshal_does(tree):
    data = encode(tree)
    assert plain_loads(data) == tree
    same_as_marshal(data)
    same_as_marshal(bytearray(data) + bytearray(64))    # the plain buffer: trailing bytes ignored
    same_as_marshal(memoryview(data))


@settings(max_examples=150, deadline=None)
@given(trees)
def test_every_truncation_answers_as_marshal(tree):
    data = encode(tree)
    for end in range(len(data)):
        same_as_marshal(data[:end])


def test_random_mutations_answer_as_marshal():
    rng = random.Random(13)
    samples = []
    for tree in ([b"bench:queue", [b"%016d" % i for i in range(8)]],
                 {"type": "message", "channel": b"news", "data": b"x" * 20, "pattern": None},
                 (b"k", -2 ** 45, [1, (None, ...)], True, 2 ** 40)):
        data, mutable = bytearray(), []
        for chunk, may_mutate in pieces(tree):
            mutable.extend(range(len(data), len(data) + len(chunk)) if may_mutate else ())
            data += chunk
        samples.append((bytes(data), mutable))
    # No byte becomes a code marshal reads an int32 count after (a list, tuple, set, frozenset,
    # with or without the reference flag): the bytes after it would ask for up to 2**31 slots.
    replacements = [b for b in range(256) if b & 0x7F not in b"[(<>"]
    for _ in range(20000):
        original, mutable = rng.choice(samples)
        data = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            data[rng.choice(mutable)] = rng.choice(replacements)
        same_as_marshal(bytes(data))


@pytest.mark.parametrize("value", [
    2 ** 100, -2 ** 80, 0.5, 1j, frozenset({1}), {1, 2}, "é", "x" * 300, (1,) * 300,
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
])
def test_other_codes_are_marshals_to_read(value):
    for version in range(marshal.version + 1):
        same_as_marshal(marshal.dumps(value, version))


def test_odd_inputs_answer_as_marshal():
    for data in (b"", b"[\x00\x00\x01\x00", b"[\xff\xff\xff\xff", b"s\xff\xff\xff\xff", b"l\x00\x00\x00\x00",
                 b"l\x01\x00\x00\x00\x00\x00", b"l\x01\x00\x00\x00\x00\x80", b"z\x02\xc3\xa9", b"{[\x00\x00\x00\x00N0",
                 b"Q"):
        same_as_marshal(data)
    for data in (123, "text", None):
        assert outcome(plain_loads, data) == outcome(marshal.loads, data)
