"""test_command_table.py — argv -> typed request (gr_request_from_argv), called as the ring client
and the bench call it: no server, no reply writer, Redis's error texts.
"""

from __future__ import annotations

import pytest

from goblin_ring._native import command_table, ffi, lib


_kept: list = []   # argv buffers the last requests' items point into


def build(*argv: bytes, capacity: int | None = None):
    """(index, request, error) for argv, as gr_request_from_argv fills them."""
    buffers = [ffi.from_buffer(arg) for arg in argv]
    pointers = ffi.new("const uint8_t *[]", [ffi.cast("const uint8_t *", b) for b in buffers] or [ffi.NULL])
    lengths = ffi.new("size_t[]", [len(arg) for arg in argv] or [0])
    capacity = len(argv) if capacity is None else capacity
    items = ffi.new("gr_bytes_t[]", max(capacity, 1))
    request = ffi.new("gr_request_t *")
    error = ffi.new("gr_build_error_t *")
    index = lib.gr_request_from_argv(len(argv), pointers, lengths, request, items, capacity, error)
    _kept[:] = [buffers, pointers, lengths, items]
    return index, request, error


def bytes_of(slot) -> bytes:
    return bytes(ffi.buffer(slot.data, slot.length)) if slot.length else b""


def error_of(*argv: bytes) -> tuple[int, str]:
    index, _, error = build(*argv)
    assert index == -1
    return error.code, ffi.string(error.text).decode()


def test_a_typed_command_fills_its_template_key_and_items_pointing_into_argv():
    index, request, error = build(b"rpush", b"jobs", b"a", b"bb")
    assert index >= 0
    assert request.template_id == lib.GR_T_PUSH
    assert request.end == 1 and request.flag == 0
    assert bytes_of(request.key) == b"jobs"
    assert [bytes_of(request.items[i]) for i in range(request.item_count)] == [b"a", b"bb"]


def test_names_are_case_insensitive_and_variants_set_their_fields():
    _, lpushx, _ = build(b"LpUsHx", b"k", b"v")
    assert (lpushx.template_id, lpushx.end, lpushx.flag) == (lib.GR_T_PUSH, 0, 1)
    _, pexpireat, _ = build(b"PEXPIREAT", b"k", b"1700000000000", b"NX")
    assert (pexpireat.template_id, pexpireat.to_end, pexpireat.flag, pexpireat.end) == (lib.GR_T_EXPIRE, 1, 1, 1)
    _, pma, _ = build(b"goblin.pma.lpop", b"k", b"3")
    assert (pma.template_id, pma.engine, pma.flag, pma.count) == (lib.GR_T_POP, 2, 1, 3)


def test_a_command_without_a_typed_form_comes_back_as_a_command_request_carrying_argv():
    index, request, _ = build(b"config", b"get", b"maxmemory")
    assert index >= 0
    assert request.template_id == lib.GR_T_COMMAND
    assert [bytes_of(request.items[i]) for i in range(request.item_count)] == [b"config", b"get", b"maxmemory"]


@pytest.mark.parametrize("argv, code, text", [
    ((b"nosuch", b"a", b"b"), "GR_ERR_UNKNOWN_COMMAND",
     "ERR unknown command 'nosuch', with args beginning with: 'a' 'b' "),
    ((b"get",), "GR_ERR_WRONG_ARITY", "ERR wrong number of arguments for 'get' command"),
    ((b"mset", b"a", b"1", b"b"), "GR_ERR_WRONG_ARITY", "ERR wrong number of arguments for 'mset' command"),
    ((b"lindex", b"k", b"x"), "GR_ERR_NOT_INTEGER", "ERR value is not an integer or out of range"),
    ((b"set", b"k", b"v", b"NX", b"XX"), "GR_ERR_SYNTAX", "ERR syntax error"),
    ((b"lpop", b"k", b"-1"), "GR_ERR_OUT_OF_RANGE", "ERR value is out of range, must be positive"),
    ((b"blpop", b"k", b"-1"), "GR_ERR_GENERIC", "ERR timeout is negative"),
    ((b"expire", b"k", b"10", b"NX", b"GT"), "GR_ERR_SYNTAX",
     "ERR NX and XX, GT or LT options at the same time are not compatible"),
    ((b"scan", b"abc"), "GR_ERR_GENERIC", "ERR invalid cursor"),
])
def test_refusals_carry_redis_error_texts_and_codes(argv, code, text):
    assert error_of(*argv) == (getattr(lib, code), text)


def test_items_beyond_the_callers_capacity_are_refused_not_overrun():
    index, _, error = build(b"rpush", b"k", b"a", b"b", b"c", capacity=2)
    assert index == -1
    assert error.code == lib.GR_ERR_TOO_LARGE


def test_the_unknown_command_text_is_bounded_as_redis_bounds_it():
    code, text = error_of(b"x" * 300, b"y" * 300)
    assert code == lib.GR_ERR_UNKNOWN_COMMAND
    assert text == "ERR unknown command '" + "x" * 128 + "', with args beginning with: '" + "y" * 128 + "' "


def test_the_table_read_from_python_agrees_with_what_argv_builds():
    table = {row["name"]: row for row in command_table()}
    assert len(table) == lib.gr_command_count()
    assert table["lpush"]["template_id"] == lib.GR_T_PUSH and table["lpush"]["typed_from_argv"]
    assert table["lpush"]["flags"] == {"write", "denyoom", "fast"}
    assert table["goblin.pma.lpush"]["engine"] == 2
    assert table["mset"]["keys"] == (1, -1, 2)
    assert table["copy"]["template_id"] == 0 and "denyoom" in table["copy"]["flags"]
    for name, row in table.items():
        argv = [name.encode()] + [b"1"] * (abs(row["arity"]) - 1)
        if name in ("evalsha", "evalsha_ro", "fcall", "fcall_ro"):
            argv[2] = b"0"   # a key count beyond the arguments stays argv (its handler answers Redis's error)
        index, request, error = build(*argv)
        if index < 0:   # arguments that do not parse; never the arity or the name
            assert error.code not in (lib.GR_ERR_UNKNOWN_COMMAND, lib.GR_ERR_WRONG_ARITY), name
            continue
        assert lib.gr_command_index(name.encode(), len(name)) == index
        expected = row["template_id"] if row["typed_from_argv"] else lib.GR_T_COMMAND
        assert request.template_id == expected, name


def test_a_typed_request_is_named_by_its_template_and_match_fields():
    for argv, name in [((b"rpushx", b"k", b"v"), b"rpushx"), ((b"unlink", b"k"), b"unlink"),
                       ((b"pexpireat", b"k", b"1"), b"pexpireat"), ((b"setex", b"k", b"1", b"v"), b"setex"),
                       ((b"goblin.seg.brpop", b"k", b"0"), b"goblin.seg.brpop"), ((b"decrby", b"k", b"1"), b"decrby")]:
        index, request, _ = build(*argv)
        assert lib.gr_command_index_of_request(request) == index
        assert ffi.string(lib.gr_command_name(index, ffi.NULL)) == name
