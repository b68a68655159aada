"""The ring's low-level objects from Python (native/ring/ring.h through cffi): the header check
on attach, records, padding at the wrap, FULL and TOO_LARGE. The exhaustive single- and
two-process cases are native/tests/test_ring.c (run by test_native_programs.py; its size is
GOBLIN_RING_STRESS_MESSAGES)."""

import struct

import pytest

from goblin_ring._native import ffi, lib

CAPACITY = 4096
SCHEMA_ID, SCHEMA_VERSION = 4711, 1


@pytest.fixture
def memory():
    size = lib.gr_ring_segment_size(CAPACITY)
    buffer = ffi.new("uint8_t[]", size)
    return buffer, size


def init(memory):
    buffer, size = memory
    ring = ffi.new("gr_ring_t *")
    error = ffi.new("char[]", 256)
    assert lib.gr_ring_init(ring, buffer, size, CAPACITY, SCHEMA_ID, SCHEMA_VERSION, error, 256) == 0
    return ring


def attach(memory, schema_id=SCHEMA_ID, version=SCHEMA_VERSION):
    buffer, size = memory
    ring = ffi.new("gr_ring_t *")
    error = ffi.new("char[]", 256)
    status = lib.gr_ring_attach(ring, buffer, size, schema_id, version, error, 256)
    return status, ffi.string(error).decode(), ring


def read_all(ring):
    got = []

    @ffi.callback("int(void *, int32_t, const uint8_t *, size_t)")
    def handler(_context, record_type, payload, length):
        got.append((record_type, bytes(ffi.buffer(payload, length))))
        return 0

    lib.gr_ring_read(ring, handler, ffi.NULL, 0)
    return got


def test_a_ring_header_with_the_wrong_magic_version_or_schema_is_refused(memory):
    init(memory)
    assert attach(memory)[0] == 0
    status, message, _ = attach(memory, schema_id=1)
    assert status != 0 and "schema" in message
    status, message, _ = attach(memory, version=2)
    assert status != 0 and "version" in message
    buffer, _ = memory
    buffer[8] = 99                      # layout version
    status, message, _ = attach(memory)
    assert status != 0 and "layout" in message
    buffer[0] ^= 0xFF                   # magic
    status, message, _ = attach(memory)
    assert status != 0 and "magic" in message


def test_records_come_back_in_order_with_their_types(memory):
    ring = init(memory)
    for i in range(10):
        assert lib.gr_ring_write(ring, 200 + i, b"x" * i, i) == lib.GR_RING_OK
    assert read_all(ring) == [(200 + i, b"x" * i) for i in range(10)]
    assert lib.gr_ring_is_empty(ring)


def test_padding_record_is_written_when_a_message_would_wrap(memory):
    ring = init(memory)
    # fill to 40 bytes before the end, consume, then write a record that cannot fit there
    for _ in range(7):                               # 7 x (8 + 504) = 3584 bytes
        assert lib.gr_ring_write(ring, 1, b"a" * 504, 504) == lib.GR_RING_OK
    assert lib.gr_ring_write(ring, 1, b"a" * 464, 464) == lib.GR_RING_OK   # to 4056: 40 left
    assert len(read_all(ring)) == 8
    assert lib.gr_ring_write(ring, 2, b"b" * 100, 100) == lib.GR_RING_OK
    buffer, _ = memory
    data = lib.GR_RING_DATA_OFFSET
    length, record_type = struct.unpack_from("<ii", bytes(ffi.buffer(buffer, data + CAPACITY)), data + CAPACITY - 40)
    assert (length, record_type) == (40, lib.GR_RING_PADDING_TYPE)
    assert read_all(ring) == [(2, b"b" * 100)]


def test_full_and_too_large_are_refused_without_truncation(memory):
    ring = init(memory)
    largest = CAPACITY // 8
    assert lib.gr_ring_write(ring, 1, b"z" * (largest + 1), largest + 1) == lib.GR_RING_TOO_LARGE
    assert lib.gr_ring_write(ring, 1, b"z" * largest, largest) == lib.GR_RING_OK
    written = 1
    while lib.gr_ring_write(ring, 1, b"z" * largest, largest) == lib.GR_RING_OK:
        written += 1
    assert lib.gr_ring_write(ring, 1, b"z" * largest, largest) == lib.GR_RING_FULL
    records = read_all(ring)
    assert len(records) == written and all(payload == b"z" * largest for _, payload in records)
