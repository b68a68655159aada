"""Every SBE message round-trips C-encode -> C-decode, and bad input is refused safely.

The decoder must answer every malformed buffer with a status, never a crash and never a
read past the end; native/tests/test_codec.c repeats the bad-input cases under
AddressSanitizer, where an out-of-bounds read would abort.
"""

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from goblin_ring import CodecError, _native
from goblin_ring._native import lib

T = {name: getattr(lib, name) for name in dir(lib) if name.startswith("GR_T_")}

# Which gr_request_t fields each request template carries: the generated slot masks
# (schema/glue.py's one table, compiled into codec_generated.c), over the generated list.
_SLOT_NAMES = ("end", "to_end", "flag", "engine", "count", "max_len", "index", "index2", "cursor",
               "timeout", "key", "arg1", "arg2", "items")
_NAME_OF = {number: name for name, number in T.items()}
REQUEST_FIELDS = {
    _NAME_OF[template]: {slot for slot in _SLOT_NAMES
                         if lib.gr_request_slots(template) & getattr(lib, f"GR_SLOT_{slot.upper()}")}
    for template in (lib.gr_request_templates[i] for i in range(lib.GR_REQUEST_TEMPLATE_COUNT))
}

# Enum-typed fields hold the largest value their template's enum lists (SetVariant,
# SetCondition, ExpireMode, ExpireCondition, TtlKind, ListEngine), so the edges round-trip too.
ENUM_SAMPLES = {
    **{name: {"engine": 2} for name in ("GR_T_PUSH", "GR_T_LINDEX", "GR_T_LMPOP", "GR_T_BLMPOP")},
    "GR_T_SET": {"count": 3, "end": 2, "to_end": 6},
    "GR_T_GETEX": {"to_end": 6},
    "GR_T_EXPIRE": {"end": 5},
    "GR_T_TTL": {"end": 3},
}

SAMPLE_VALUES = {
    "end": 1, "to_end": 1, "flag": 1, "engine": 1, "count": 4_000_000_000, "max_len": 77,
    "index": -(2 ** 63), "index2": 2 ** 63 - 1, "cursor": 2 ** 64 - 1, "timeout": 0.25,
    "key": b"key\x00with\r\nbytes", "arg1": b"", "arg2": b"x" * 1000,
    "items": [b"", b"a", b"\xff" * 300],
}


def sample_request(name):
    fields = {field: SAMPLE_VALUES[field] for field in REQUEST_FIELDS[name]}
    fields.update(ENUM_SAMPLES.get(name, {}))
    return fields


def test_every_request_template_in_the_table_is_a_schema_template():
    replies = {lib.gr_reply_templates[i] for i in range(lib.GR_REPLY_TEMPLATE_COUNT)}   # InvalidateMessage: 900
    request_templates = {name for name, number in T.items() if (number == 4 or number >= 20) and number not in replies}
    assert request_templates == set(REQUEST_FIELDS)
    assert len(REQUEST_FIELDS) == lib.GR_REQUEST_TEMPLATE_COUNT


def test_the_committed_codec_glue_is_what_the_schema_generates():
    root = Path(__file__).resolve().parent.parent
    completed = subprocess.run([sys.executable, str(root / "schema" / "generate.py"), "--check", "--glue"],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_the_generated_codec_agrees_with_sbe_tools_offsets():
    assert lib.gr_codec_self_check() == 0


def test_the_schema_says_which_template_is_which_message():
    assert _native.ffi.string(lib.gr_template_name(lib.GR_T_PUSH)) == b"PushRequest"
    assert lib.gr_template_name(9999) == _native.ffi.NULL


@pytest.mark.parametrize("name", sorted(REQUEST_FIELDS))
def test_request_round_trips_with_its_fields_intact(name):
    fields = sample_request(name)
    encoded = _native.encode_request(T[name], request_id=2 ** 64 - 2, **fields)
    decoded = _native.decode_request(encoded)
    assert decoded["template_id"] == T[name]
    assert decoded["request_id"] == 2 ** 64 - 2
    for field, value in fields.items():
        assert decoded[field] == value, field
    # fields the template does not carry decode as zero/empty
    for field in set(SAMPLE_VALUES) - REQUEST_FIELDS[name]:
        assert not decoded[field], field


@settings(max_examples=200, deadline=None)
@given(key=st.binary(max_size=200), values=st.lists(st.binary(max_size=64), max_size=40),
       end=st.integers(0, 1), only_if_exists=st.integers(0, 1))
def test_push_request_round_trips_any_binary_key_and_values(key, values, end, only_if_exists):
    encoded = _native.encode_request(T["GR_T_PUSH"], request_id=9, key=key, items=values,
                                     end=end, flag=only_if_exists)
    decoded = _native.decode_request(encoded)
    assert (decoded["key"], decoded["items"], decoded["end"], decoded["flag"]) == (
        key, values, end, only_if_exists)


def test_reply_messages_round_trip():
    cases = [
        dict(template_id=lib.GR_T_INTEGER_REPLY, request_id=1, integer=-42),
        dict(template_id=lib.GR_T_BULK_REPLY, request_id=2, text=b"value\x00"),
        dict(template_id=lib.GR_T_BULK_REPLY, request_id=3, is_nil=1),
        dict(template_id=lib.GR_T_STATUS_REPLY, request_id=4, text=b"OK"),
        dict(template_id=lib.GR_T_ERROR_REPLY, request_id=5, error_code=2,
             text=b"WRONGTYPE Operation against a key holding the wrong kind of value"),
        dict(template_id=lib.GR_T_ARRAY_REPLY, request_id=6,
             elements=[(lib.GR_ELEMENT_KIND_ARRAY, 2, b""), (lib.GR_ELEMENT_KIND_BULK, 0, b"mylist"),
                       (lib.GR_ELEMENT_KIND_MAP, 1, b""), (lib.GR_ELEMENT_KIND_STATUS, 0, b"OK"),
                       (lib.GR_ELEMENT_KIND_ERROR, 2, b"WRONGTYPE x")]),
    ]
    for case in cases:
        decoded = _native.decode_reply(_native.encode_reply(**case))
        for field, value in case.items():
            assert decoded[field] == value, (case["template_id"], field)


def test_attach_messages_round_trip():
    request = _native.decode_attach(_native.encode_attach(
        lib.GR_T_ATTACH, protocol_version=1, ring_capacity=2 ** 21, pid=1234,
        client_name=b"worker-1", username=b"alice", password=b"s3cret"))
    assert (request["protocol_version"], request["ring_capacity"], request["pid"], request["client_name"],
            request["username"], request["password"]) == (1, 2 ** 21, 1234, b"worker-1", b"alice", b"s3cret")
    reply = _native.decode_attach(_native.encode_attach(
        lib.GR_T_ATTACH_REPLY, protocol_version=1, session_id=99, ring_capacity=4096,
        pid=55, request_ring_name=b"/goblin-a-req", reply_ring_name=b"/goblin-a-rep",
        error_message=b""))
    assert (reply["session_id"], reply["request_ring_name"], reply["reply_ring_name"]) == (
        99, b"/goblin-a-req", b"/goblin-a-rep")
    confirm = _native.decode_attach(_native.encode_attach(lib.GR_T_ATTACH_CONFIRM, session_id=99))
    assert confirm["session_id"] == 99


# ---- bad input --------------------------------------------------------------------------

def status_of(decode, data):
    try:
        decode(data)
    except CodecError as error:
        return error.status
    return lib.GR_CODEC_OK


def test_every_truncation_of_a_message_is_refused():
    encoded = _native.encode_request(T["GR_T_PUSH"], request_id=1, key=b"mylist",
                                     items=[b"one", b"two", b"three"])
    for cut in range(len(encoded)):
        status = status_of(_native.decode_request, encoded[:cut])
        assert status in (lib.GR_CODEC_TRUNCATED, lib.GR_CODEC_VAR_DATA_OVERRUN), cut


def test_an_unknown_template_id_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_LLEN"], key=b"k"))
    struct.pack_into("<H", encoded, 2, 299)
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_UNKNOWN_TEMPLATE
    assert status_of(_native.decode_reply, bytes(encoded)) == lib.GR_CODEC_UNKNOWN_TEMPLATE


def test_a_wrong_schema_id_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_LLEN"], key=b"k"))
    struct.pack_into("<H", encoded, 4, 4712)
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_BAD_SCHEMA


def test_schema_version_zero_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_LLEN"], key=b"k"))
    struct.pack_into("<H", encoded, 6, 0)
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_BAD_SCHEMA


def test_a_block_length_shorter_than_the_schemas_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_LINDEX"], index=5, key=b"k"))
    (block_length,) = struct.unpack_from("<H", encoded, 0)
    struct.pack_into("<H", encoded, 0, block_length - 1)
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_SHORT_BLOCK


def test_a_longer_block_from_a_newer_writer_is_skipped_over():
    encoded = bytearray(_native.encode_request(T["GR_T_LINDEX"], index=5, key=b"k"))
    (block_length,) = struct.unpack_from("<H", encoded, 0)
    struct.pack_into("<H", encoded, 0, block_length + 8)
    grown = bytes(encoded[:8 + block_length]) + b"\0" * 8 + bytes(encoded[8 + block_length:])
    decoded = _native.decode_request(grown)
    assert (decoded["index"], decoded["key"]) == (5, b"k")


def test_a_var_data_length_past_the_end_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_LLEN"], key=b"abc"))
    length_offset = len(encoded) - 3 - 4
    for announced in (4, 1000, 2 ** 32 - 1):
        struct.pack_into("<I", encoded, length_offset, announced)
        assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_VAR_DATA_OVERRUN


def test_a_var_data_length_inside_a_group_past_the_end_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_EXISTS"], items=[b"a", b"bb"]))
    # header 8 + block 8 + group header 6 (u16 block length, u32 count): the first entry's length word
    struct.pack_into("<I", encoded, 22, 10_000)
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_VAR_DATA_OVERRUN


def test_a_group_count_past_the_end_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_EXISTS"], items=[b"a"]))
    struct.pack_into("<I", encoded, 18, 60_000)
    assert status_of(_native.decode_request, bytes(encoded)) in (
        lib.GR_CODEC_TRUNCATED, lib.GR_CODEC_VAR_DATA_OVERRUN)


def test_an_enum_value_the_schema_does_not_list_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_POP"], key=b"k", end=1))
    end_offset = 8 + 8  # header, then requestId
    encoded[end_offset] = 7
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_BAD_ENUM


def test_a_list_engine_past_pma_is_refused():
    encoded = bytearray(_native.encode_request(T["GR_T_LLEN"], key=b"k", engine=2))
    engine_offset = 8 + 8  # header, then requestId
    assert encoded[engine_offset] == 2
    encoded[engine_offset] = 3
    assert status_of(_native.decode_request, bytes(encoded)) == lib.GR_CODEC_BAD_ENUM


def test_every_list_request_carries_its_engine():
    for name, fields in REQUEST_FIELDS.items():
        assert ("engine" in fields) == (200 <= T[name] < 300), name


def test_encoding_into_a_too_small_buffer_says_no_space():
    request = _native.ffi.new("gr_request_t *")
    request.template_id = T["GR_T_LLEN"]
    out = _native.ffi.new("uint8_t[]", 12)
    length = _native.ffi.new("size_t *")
    assert lib.gr_encode_request(request, out, 12, length) == lib.GR_CODEC_NO_SPACE
