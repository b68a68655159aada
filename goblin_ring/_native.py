"""_native.py — the only module that touches the compiled extension's `lib`.

It checks at import that the extension was built from this source tree (package version,
SBE schema id, version and digest) and says how to rebuild when not, then wraps the C
entry points in plain Python: codec status codes become CodecError, ring status codes
become the transport exceptions of goblin_ring.errors. Everything above this module is
plain Python.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable

from . import _version
from .errors import CodecError, StaleBuildError

try:
    from ._goblin_native import ffi, lib
except ImportError as error:  # pragma: no cover - only on a broken install
    raise StaleBuildError(
        "goblin_ring's C extension is not built; run: pip install -e . "
        f"(from the repository root) — {error}") from error

SCHEMA_ID = 4711
SCHEMA_VERSION = 1
_REBUILD = "rebuild it with: pip install -e . (from the repository root)"


def _check_build_stamp() -> None:
    built_version = ffi.string(lib.gr_build_package_version()).decode()
    if built_version != _version.__version__:
        raise StaleBuildError(
            f"goblin_ring's C extension was built for version {built_version}, "
            f"the package is {_version.__version__}; {_REBUILD}")
    if (lib.gr_build_schema_id(), lib.gr_build_schema_version()) != (SCHEMA_ID, SCHEMA_VERSION):
        raise StaleBuildError(
            f"goblin_ring's C extension speaks SBE schema {lib.gr_build_schema_id()} "
            f"v{lib.gr_build_schema_version()}, the package expects {SCHEMA_ID} v{SCHEMA_VERSION}; {_REBUILD}")
    schema = Path(__file__).resolve().parent.parent / "schema" / "goblin.xml"
    if schema.is_file():  # a source checkout (editable install): compare with the schema on disk
        digest = hashlib.sha256(schema.read_bytes()).hexdigest()
        built_digest = ffi.string(lib.gr_build_schema_digest()).decode()
        if digest != built_digest:
            raise StaleBuildError(
                f"schema/goblin.xml changed since goblin_ring's C extension was built; {_REBUILD}")


_check_build_stamp()

# ---- codec helpers (tests and tools drive these; the hot paths stay in C) ------------

MAX_ITEMS = 65535
_REQUEST_INT_FIELDS = ("request_id", "end", "to_end", "flag", "count", "max_len",
                       "index", "index2", "cursor")
_REQUEST_BYTES_FIELDS = ("key", "arg1", "arg2")


def codec_status_text(status: int) -> str:
    return ffi.string(lib.gr_codec_status_text(status)).decode()


def _raise_for(status: int, what: str) -> None:
    if status != lib.GR_CODEC_OK:
        raise CodecError(f"{what}: {codec_status_text(status)}", status)


def _bytes_of(view: Any) -> bytes:
    return bytes(ffi.buffer(view.data, view.length)) if view.length else b""


def _set_bytes(target: Any, value: bytes, keep: list) -> None:
    buffer = ffi.from_buffer(value)
    keep.append(buffer)
    target.data = ffi.cast("const uint8_t *", buffer)
    target.length = len(value)


def encode_request(template_id: int, *, items: Iterable[bytes] = (), timeout: float = 0.0,
                   **fields: Any) -> bytes:
    """Encode one request message; fields are those of gr_request_t (see native/codec.h)."""
    keep: list = []
    request = ffi.new("gr_request_t *")
    request.template_id = template_id
    request.timeout = timeout
    for name, value in fields.items():
        if name in _REQUEST_BYTES_FIELDS:
            _set_bytes(getattr(request, name), value, keep)
        elif name in _REQUEST_INT_FIELDS:
            setattr(request, name, value)
        else:
            raise TypeError(f"unknown request field {name!r}")
    item_list = list(items)
    storage = ffi.new("gr_bytes_t[]", max(1, len(item_list)))
    for i, item in enumerate(item_list):
        _set_bytes(storage[i], item, keep)
    request.items = storage
    request.item_count = len(item_list)
    capacity = lib.gr_request_encoded_size(request)
    out = ffi.new("uint8_t[]", capacity)
    length = ffi.new("size_t *")
    _raise_for(lib.gr_encode_request(request, out, capacity, length), "encode request")
    return bytes(ffi.buffer(out, length[0]))


def decode_request(data: bytes) -> dict:
    """Decode one request message into a dict of gr_request_t's fields."""
    source = ffi.from_buffer(data)
    request = ffi.new("gr_request_t *")
    items = ffi.new("gr_bytes_t[]", MAX_ITEMS)
    request.items = items
    request.item_capacity = MAX_ITEMS
    _raise_for(lib.gr_decode_request(ffi.cast("const uint8_t *", source), len(data), request),
               "decode request")
    decoded = {name: getattr(request, name) for name in _REQUEST_INT_FIELDS}
    decoded["template_id"] = request.template_id
    decoded["timeout"] = request.timeout
    for name in _REQUEST_BYTES_FIELDS:
        decoded[name] = _bytes_of(getattr(request, name))
    decoded["items"] = [_bytes_of(items[i]) for i in range(request.item_count)]
    return decoded


def encode_reply(template_id: int, *, request_id: int = 0, integer: int = 0, is_nil: int = 0,
                 error_code: int = 0, text: bytes = b"", shape: int = 0, total_count: int = 0,
                 first_index: int = 0, elements: Iterable[tuple[int, int, bytes]] = ()) -> bytes:
    """Encode one reply message; elements are (kind, integer, bytes) triples."""
    keep: list = []
    reply = ffi.new("gr_reply_message_t *")
    reply.template_id = template_id
    reply.request_id = request_id
    reply.integer = integer
    reply.is_nil = is_nil
    reply.error_code = error_code
    _set_bytes(reply.text, text, keep)
    reply.shape = shape
    reply.total_count = total_count
    reply.first_index = first_index
    element_list = list(elements)
    storage = ffi.new("gr_element_t[]", max(1, len(element_list)))
    for i, (kind, value, payload) in enumerate(element_list):
        storage[i].kind = kind
        storage[i].integer = value
        _set_bytes(storage[i].bytes, payload, keep)
    reply.elements = storage
    reply.element_count = len(element_list)
    capacity = 64 + len(text) + sum(32 + len(p) for _, _, p in element_list)
    out = ffi.new("uint8_t[]", capacity)
    length = ffi.new("size_t *")
    _raise_for(lib.gr_encode_reply(reply, out, capacity, length), "encode reply")
    return bytes(ffi.buffer(out, length[0]))


def decode_reply(data: bytes) -> dict:
    source = ffi.from_buffer(data)
    reply = ffi.new("gr_reply_message_t *")
    elements = ffi.new("gr_element_t[]", MAX_ITEMS)
    reply.elements = elements
    reply.element_capacity = MAX_ITEMS
    _raise_for(lib.gr_decode_reply(ffi.cast("const uint8_t *", source), len(data), reply),
               "decode reply")
    return {
        "template_id": reply.template_id, "request_id": reply.request_id,
        "integer": reply.integer, "is_nil": reply.is_nil, "error_code": reply.error_code,
        "text": _bytes_of(reply.text), "shape": reply.shape, "total_count": reply.total_count,
        "first_index": reply.first_index,
        "elements": [(elements[i].kind, elements[i].integer, _bytes_of(elements[i].bytes))
                     for i in range(reply.element_count)],
    }


_ATTACH_INT_FIELDS = ("protocol_version", "error_code", "ring_capacity", "pid", "session_id")
_ATTACH_BYTES_FIELDS = ("client_name", "request_ring_name", "reply_ring_name", "error_message")


def encode_attach(template_id: int, **fields: Any) -> bytes:
    keep: list = []
    attach = ffi.new("gr_attach_t *")
    attach.template_id = template_id
    for name, value in fields.items():
        if name in _ATTACH_BYTES_FIELDS:
            _set_bytes(getattr(attach, name), value, keep)
        elif name in _ATTACH_INT_FIELDS:
            setattr(attach, name, value)
        else:
            raise TypeError(f"unknown attach field {name!r}")
    capacity = 64 + sum(len(fields.get(name, b"")) + 4 for name in _ATTACH_BYTES_FIELDS)
    out = ffi.new("uint8_t[]", capacity)
    length = ffi.new("size_t *")
    _raise_for(lib.gr_encode_attach(attach, out, capacity, length), "encode attach")
    return bytes(ffi.buffer(out, length[0]))


def decode_attach(data: bytes) -> dict:
    source = ffi.from_buffer(data)
    attach = ffi.new("gr_attach_t *")
    _raise_for(lib.gr_decode_attach(ffi.cast("const uint8_t *", source), len(data), attach),
               "decode attach")
    decoded = {name: getattr(attach, name) for name in _ATTACH_INT_FIELDS}
    decoded["template_id"] = attach.template_id
    for name in _ATTACH_BYTES_FIELDS:
        decoded[name] = _bytes_of(getattr(attach, name))
    return decoded
