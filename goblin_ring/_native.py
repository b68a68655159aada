"""_native.py — the only module that imports the compiled extension; it wraps its `lib`.

It checks at import that the extension was built from this source tree (package version,
SBE schema id, version and digest) and says how to rebuild when not, then wraps the C
entry points in plain Python: codec status codes become CodecError, ring and client status
codes become the transport exceptions of goblin_ring.errors (ClientCore.check and .settle).

Other modules reach `lib` and `ffi` only through this module's names, and only these
(tests/test_layers.py holds the package to this list):
  client/ring.py            binds the ring client's per-command entry points (gr_client_call_argv
                            and the plain forms) and template ids once, and calls them with no
                            Python frame between; each status is settled by ClientCore.settle
  client/ring_pubsub.py     gr_client_pubsub_read the same way; its status by ClientCore.check
  server/loop.py            the attach template ids (GR_T_ATTACH*) only
  selfcheck.py              the template ids only
  asyncio.py                the asyncio RingClient: the reply doorbell (eventfd) and the call entry points
  redispy.py                redis-py's Connection over a ring session: the reply readers and the
                            any-thread switch of the session it borrows
  redispy_asyncio.py        its redis.asyncio twin: the reply readers and the reply doorbell
  bench/drivers.py          the bench's C load generator (gr_request_from_argv, gr_load_run)
  bench/scenarios.py        gr_client_ping_loop
  bench/scenario_pubsub.py  the Pub/Sub C loops (gr_client_pubsub_latency_loop, _publish_many,
                            _take_sequenced)
"""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path
from typing import Any, Iterable

from . import _version
from .errors import CodecError, StaleBuildError

try:
    from ._goblin_native import ffi, lib
    from ._plain_loads import loads as plain_loads   # marshal.loads for the plain replies (native/python/)
    from . import _near_cache as near_cache          # RingClient's near-cache (native/python/near_cache.c)
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

_REQUEST_INT_FIELDS = ("request_id", "end", "to_end", "flag", "engine", "count", "max_len",
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
    buffer = ffi.from_buffer("uint8_t[]", value)
    keep.append(buffer)
    target.data = ffi.cast("const uint8_t *", buffer)
    target.length = len(value)


def encode_request(template_id: int, *, items: Iterable[bytes] = (), timeout: float = 0.0,
                   **fields: Any) -> bytes:
    """Encode one request message; fields are those of gr_request_t (see native/ring/codec.h)."""
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
    capacity = len(data) // 4 + 1      # every group entry takes at least its length word
    items = ffi.new("gr_bytes_t[]", capacity)
    request.items = items
    request.item_capacity = capacity
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
                 error_code: int = 0, text: bytes = b"",
                 elements: Iterable[tuple[int, int, bytes]] = ()) -> bytes:
    """Encode one reply message; an ArrayReply's elements are (kind, integer, bytes) triples,
    its tree in pre-order (GR_ELEMENT_KIND_*)."""
    keep: list = []
    reply = ffi.new("gr_reply_message_t *")
    reply.template_id = template_id
    reply.request_id = request_id
    reply.integer = integer
    reply.is_nil = is_nil
    reply.error_code = error_code
    _set_bytes(reply.text, text, keep)
    element_list = list(elements)
    storage = ffi.new("gr_element_t[]", max(1, len(element_list)))
    for i, (kind, value, payload) in enumerate(element_list):
        storage[i].kind = kind
        storage[i].integer = value
        _set_bytes(storage[i].bytes, payload, keep)
    reply.elements = storage
    reply.element_count = len(element_list)
    capacity = lib.gr_reply_encoded_size(reply)
    out = ffi.new("uint8_t[]", max(1, capacity))
    length = ffi.new("size_t *")
    _raise_for(lib.gr_encode_reply(reply, out, capacity, length), "encode reply")
    return bytes(ffi.buffer(out, length[0]))


def decode_reply(data: bytes) -> dict:
    source = ffi.from_buffer(data)
    reply = ffi.new("gr_reply_message_t *")
    capacity = len(data) // 13 + 1     # every element takes at least its 13 fixed bytes
    elements = ffi.new("gr_element_t[]", capacity)
    reply.elements = elements
    reply.element_capacity = capacity
    _raise_for(lib.gr_decode_reply(ffi.cast("const uint8_t *", source), len(data), reply),
               "decode reply")
    return {
        "template_id": reply.template_id, "request_id": reply.request_id,
        "integer": reply.integer, "is_nil": reply.is_nil, "error_code": reply.error_code,
        "text": _bytes_of(reply.text),
        "elements": [(elements[i].kind, elements[i].integer, _bytes_of(elements[i].bytes))
                     for i in range(reply.element_count)],
    }


_ATTACH_INT_FIELDS = ("protocol_version", "error_code", "ring_capacity", "pid", "session_id")
_ATTACH_BYTES_FIELDS = ("client_name", "username", "password", "request_ring_name", "reply_ring_name", "error_message")


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


# ---- the command table (native/exec/command.h; rows in native/commands/<family>.def) --------

_COMMAND_FLAGS = {name[len("GR_CMD_FLAG_"):].lower(): getattr(lib, name)
                  for name in dir(lib) if name.startswith("GR_CMD_FLAG_")}


def command_table() -> list[dict]:
    """Every command of the server's table, in COMMAND's order: name, arity, template_id (0:
    travels as a CommandRequest), engine, whether argv builds a typed request, Redis's flags,
    and the legacy key range."""
    facts = ffi.new("gr_command_facts_t *")
    table = []
    for index in range(lib.gr_command_count()):
        lib.gr_command_facts(index, facts)
        table.append({
            "name": ffi.string(facts.name).decode(), "arity": facts.arity, "template_id": facts.template_id,
            "engine": facts.engine, "typed_from_argv": bool(facts.has_builder),
            "flags": {name for name, bit in _COMMAND_FLAGS.items() if facts.flags & bit},
            "keys": (facts.first_key, facts.last_key, facts.key_step),
        })
    return table


# ---- shared-memory segments -------------------------------------------------------------

class Segment:
    """One POSIX shared-memory segment (posix_ipc), mapped, with a C pointer to it.

    The server creates segments (mode 0600, O_CREX) and reserves every page with
    posix_fallocate before mapping, so a full /dev/shm is an OSError here (ENOSPC), never a
    SIGBUS on first touch; a creation that fails at any step unlinks what it made. The client
    opens them by name. Either side unlinks the name once both have mapped it, so nothing is
    left in /dev/shm.
    """

    def __init__(self, name: str, size: int = 0, create: bool = False):
        import mmap
        import os

        import posix_ipc

        self.name = name
        self.map = None
        if create:
            shm = posix_ipc.SharedMemory(name, posix_ipc.O_CREX, mode=0o600)
            try:
                os.fchmod(shm.fd, 0o600)
                os.posix_fallocate(shm.fd, 0, size)     # every page now, or ENOSPC now
                self.map = mmap.mmap(shm.fd, size)
            except BaseException:
                shm.close_fd()
                self.unlink()
                raise
            shm.close_fd()
        else:
            shm = posix_ipc.SharedMemory(name)
            size = shm.size
            try:
                self.map = mmap.mmap(shm.fd, size)
            finally:
                shm.close_fd()
        self.size = size
        self.pointer = ffi.from_buffer(self.map)

    def unlink(self) -> None:
        import posix_ipc

        try:
            posix_ipc.unlink_shared_memory(self.name)
        except posix_ipc.ExistentialError:
            pass

    def close(self) -> None:
        if self.map is not None:
            ffi.release(self.pointer)
            self.map.close()
            self.map = None


def ring_segment_bytes(capacity: int) -> int:
    return lib.gr_ring_segment_bytes(capacity)


# ---- server side ------------------------------------------------------------------------

def configure_allocator_for_server() -> None:
    """A fixed malloc mmap threshold, so that freed large blocks go back to the OS (alloc.h)."""
    if lib.gr_mem_configure_for_server() != 0:
        raise OSError("mallopt(M_MMAP_THRESHOLD) failed")


class Database:
    """The one keyspace and its counters (native/exec/db.h)."""

    def __init__(self, seed: int):
        self.pointer = ffi.gc(lib.gr_db_new(seed), lib.gr_db_free)
        if self.pointer == ffi.NULL:
            raise MemoryError("gr_db_new failed")

    def set_list_implementation(self, name: str) -> None:
        if lib.gr_db_set_list_implementation(self.pointer, name.encode()) != 0:
            raise ValueError(f"unknown list implementation {name!r}")

    def set_array_implementation(self, name: str) -> None:
        if lib.gr_db_set_array_implementation(self.pointer, name.encode()) != 0:
            raise ValueError(f"unknown array implementation {name!r}")

    def set_info(self, field: str, value: "str | int") -> None:
        if isinstance(value, int):
            lib.gr_db_set_info_number(self.pointer, field.encode(), value)
        else:
            lib.gr_db_set_info_text(self.pointer, field.encode(), value.encode())

    def key_count(self) -> int:
        return lib.gr_db_key_count(self.pointer)

    def cron(self, budget_us: int) -> int:
        """Active expiry and idle rehashing, reaping a BGSAVE child and the save rules, the
        append-only log's fsync and rewrite; returns the keys expired."""
        expired = lib.gr_db_cron(self.pointer, budget_us)
        lib.gr_persist_cron(self.pointer)
        lib.gr_aof_cron(self.pointer)
        return expired

    # the append-only log (native/persist/aof.h)
    def aof_load(self, path: str, allow_truncated: bool) -> "tuple[int, str] | None":
        """Replay an AOF: (commands run, warning or ""), None when there is no file; ValueError says why not."""
        commands, message = ffi.new("int64_t *"), ffi.new("char[]", 1024)
        status = lib.gr_aof_load(self.pointer, os.fsencode(path), int(allow_truncated), commands, message, 1024)
        if status < 0:
            raise ValueError(ffi.string(message).decode(errors="replace"))
        return None if status == 1 else (commands[0], ffi.string(message).decode(errors="replace"))

    def aof_start(self, write_dataset: bool) -> None:
        message = ffi.new("char[]", 512)
        if lib.gr_aof_start(self.pointer, int(write_dataset), message, 512) != 0:
            raise OSError(ffi.string(message).decode(errors="replace"))

    def aof_stop(self) -> None:
        lib.gr_aof_stop(self.pointer)

    # Snapshots (native/persist/persistence.h)
    def load_snapshot(self) -> tuple[bool, float]:
        """Load dir/dbfilename: (loaded, seconds); no file is (False, 0). ValueError names the
        file, what is wrong and the offset when the file is refused (nothing is loaded)."""
        error = ffi.new("char[]", 1024)
        result = lib.gr_persist_load_at_start(self.pointer, error, 1024)
        if result < 0:
            raise ValueError(ffi.string(error).decode(errors="replace"))
        return result == 1, lib.gr_persist_last_load_seconds(self.pointer)

    def import_rdb(self, path: str) -> tuple[bool, float]:
        """Load a Redis RDB file: (loaded, seconds); no file is (False, 0). ValueError names the
        file, what is wrong and the byte offset (nothing is loaded)."""
        error = ffi.new("char[]", 1024)
        result = lib.gr_persist_import_rdb(self.pointer, os.fsencode(path), error, 1024)
        if result < 0:
            raise ValueError(ffi.string(error).decode(errors="replace"))
        return result == 1, lib.gr_persist_last_load_seconds(self.pointer)

    def export_rdb(self, path: str) -> tuple[int, int]:
        """Write every database as a Redis RDB file (version 10): (keys written, keys skipped)."""
        error = ffi.new("char[]", 1024)
        keys = ffi.new("int64_t *")
        skipped = ffi.new("int64_t *")
        if lib.gr_persist_export_rdb(self.pointer, os.fsencode(path), keys, skipped, error, 1024) != 0:
            raise ValueError(ffi.string(error).decode(errors="replace"))
        return keys[0], skipped[0]

    def prepare_shutdown(self, mode: int = -1) -> None:
        """Kill a BGSAVE child, then save if mode is 1, or -1 and save rules are set; ValueError on failure."""
        error = ffi.new("char[]", 1024)
        if lib.gr_persist_prepare_shutdown(self.pointer, mode, error, 1024) != 0:
            raise ValueError(ffi.string(error).decode(errors="replace"))

    def shutdown_for_signal(self, is_sigint: bool) -> "tuple[int, str]":
        """SIGTERM/SIGINT's shutdown as shutdown-on-sigterm/-sigint say: (0, "") stop; (-1, why)
        it failed, keep serving; (1, why) it failed and the flags say force: stop anyway."""
        error = ffi.new("char[]", 1024)
        status = lib.gr_persist_shutdown_for_signal(self.pointer, int(is_sigint), error, 1024)
        return status, ffi.string(error).decode(errors="replace") if status else ""

    def shutdown_requested(self) -> bool:
        """SHUTDOWN ran (and saved, if it had to): stop serving."""
        return bool(lib.gr_persist_shutdown_requested(self.pointer))

    def configure(self, name: str, value: "str | int | bool") -> None:
        """Set a CONFIG parameter at startup (immutable ones too); ValueError says why not."""
        if isinstance(value, bool):
            value = "yes" if value else "no"
        error = ffi.new("char[]", 256)
        if lib.gr_db_config_set(self.pointer, name.encode(), str(value).encode(), error, 256) != 0:
            raise ValueError(f"{name}: {ffi.string(error).decode()}")

    def use_config_file(self, path: str) -> None:
        """The file CONFIG REWRITE writes back; every parameter's value now counts as its default."""
        if lib.gr_db_config_use_file(self.pointer, path.encode()) != 0:
            raise MemoryError("gr_db_config_use_file failed")

    def credentials_valid(self, username: bytes, password: bytes) -> bool:
        """Whether username (empty: default) and password log in, as AUTH would."""
        return bool(lib.gr_db_credentials_valid(self.pointer, username, len(username), password, len(password)))

    def acl_setuser(self, name: str, rules: list[str]) -> str:
        """ACL SETUSER name rules... (a config file's `user` line): "" or Redis's error text."""
        encoded = [rule.encode() for rule in rules]
        keep = [ffi.new("uint8_t[]", rule) for rule in encoded]
        pointers = ffi.new("const uint8_t *[]", keep or [ffi.NULL])
        lengths = ffi.new("size_t[]", [len(rule) for rule in encoded] or [0])
        error = ffi.new("char[]", 1024)
        raw = name.encode()
        if lib.gr_db_acl_setuser(self.pointer, raw, len(raw), len(encoded), pointers, lengths, error, 1024) != 0:
            return ffi.string(error).decode(errors="replace")
        return ""

    def acl_load(self) -> str:
        """Load the aclfile (ACL LOAD): "" or Redis's error text (every error of the file)."""
        error = ffi.new("char[]", 65536)
        if lib.gr_db_acl_load(self.pointer, error, 65536) != 0:
            text = ffi.string(error).decode(errors="replace")
            return text[4:] if text.startswith("ERR ") else text
        return ""

    def count_connection(self, rejected: bool) -> None:
        lib.gr_db_count_connection(self.pointer, int(rejected))

    def config_number(self, name: str) -> int:
        return lib.gr_db_config_number(self.pointer, name.encode())


class RingSessions:
    """Every ring session's rings, drained in C (native/ring/session.h)."""

    def __init__(self, database: Database):
        self._database = database  # keeps the db alive as long as the sessions
        self.pointer = ffi.gc(lib.gr_rings_new(database.pointer), lib.gr_rings_free)

    def add(self, session_id: int, requests: Segment, replies: Segment, capacity: int) -> None:
        error = ffi.new("char[]", 256)
        if lib.gr_rings_add_session(self.pointer, session_id, requests.pointer, requests.size,
                                    replies.pointer, replies.size, capacity, error, 256) != 0:
            raise RuntimeError(ffi.string(error).decode())

    def remove(self, session_id: int) -> None:
        lib.gr_rings_remove_session(self.pointer, session_id)

    def authenticate(self, session_id: int, username: bytes, password: bytes) -> bool:
        """The session logs in as username (empty: default) with password, as AUTH: True if right."""
        return lib.gr_rings_authenticate_session(self.pointer, session_id, username, len(username),
                                                 password, len(password)) == 0

    def set_peer(self, session_id: int, control_fd: int, pid: int, address: str, name: str) -> None:
        lib.gr_rings_set_session_peer(self.pointer, session_id, control_fd, pid, address.encode(),
                                      name.encode(errors="replace"))

    def set_reply_doorbell(self, session_id: int, fd: int) -> None:
        lib.gr_rings_set_reply_doorbell(self.pointer, session_id, fd)

    def count(self) -> int:
        return lib.gr_rings_session_count(self.pointer)

    def corrupt_session(self) -> int:
        return lib.gr_rings_corrupt_session(self.pointer)


class ServingLoop:
    """The C serving loop (native/server/server.h): RESP clients and the ring drain on one
    epoll set; Python's selector (control sockets) is nested in it."""

    DEADLINE, PYTHON, SIGNAL, SESSIONS, LOG = (lib.GR_SERVE_DEADLINE, lib.GR_SERVE_PYTHON, lib.GR_SERVE_SIGNAL,
                                               lib.GR_SERVE_SESSIONS, lib.GR_SERVE_LOG)

    def __init__(self, database: Database, rings: RingSessions, python_fd: int):
        self._keep = (database, rings)
        pointer = lib.gr_server_new(database.pointer, rings.pointer, python_fd)
        if pointer == ffi.NULL:
            raise OSError("could not create the serving loop's epoll set")
        self.pointer = pointer          # freed by close(), which shutdown always calls
        self._log = ffi.new("char[]", 1 << 16)

    def add_listener(self, sock) -> None:
        status = lib.gr_server_add_listener(self.pointer, sock.fileno(), int(sock.family == socket.AF_UNIX))
        if status:
            raise OSError(-status, os.strerror(-status))

    def watch_doorbell(self, fd: int) -> None:
        status = lib.gr_server_watch_doorbell(self.pointer, fd)
        if status:
            raise OSError(-status, os.strerror(-status))

    def unwatch_doorbell(self, fd: int) -> None:
        lib.gr_server_unwatch_doorbell(self.pointer, fd)

    def next_client_id(self) -> int:
        return lib.gr_server_next_client_id(self.pointer)

    def run(self, max_ns: int, spin_ns: int, busy: bool) -> int:
        """Serve until Python has work; returns the GR_SERVE_* reasons."""
        return lib.gr_server_run(self.pointer, max_ns, spin_ns, int(busy))

    def take_killed_session(self) -> "tuple[int, str]":
        """A ring session the server must close and why, or (0, "")."""
        why = ffi.new("char[]", 160)
        session = lib.gr_server_take_killed_session(self.pointer, why, 160)
        return session, ffi.string(why).decode(errors="replace")

    def take_log(self) -> list[str]:
        lines: list[str] = []
        while n := lib.gr_server_take_log(self.pointer, self._log, len(self._log)):
            lines.extend(ffi.string(self._log, n).decode(errors="replace").splitlines())
        return lines

    def resp_clients(self) -> int:
        return lib.gr_server_resp_clients(self.pointer)

    def close(self) -> None:
        """Close every RESP connection now (shutdown)."""
        if self.pointer is not None:
            lib.gr_server_free(self.pointer)
            self.pointer = None

    def __del__(self) -> None:
        self.close()


# ---- client side ------------------------------------------------------------------------

from .errors import (  # noqa: E402 - grouped with the client code that uses them
    ConnectionError as _ConnectionError, MessageTooLargeError, ProtocolError, RingFullError,
    TimeoutError as _TimeoutError, error_from_reply,
)

_T_INTEGER, _T_BULK, _T_ARRAY = lib.GR_T_INTEGER_REPLY, lib.GR_T_BULK_REPLY, lib.GR_T_ARRAY_REPLY
_T_STATUS, _T_ERROR = lib.GR_T_STATUS_REPLY, lib.GR_T_ERROR_REPLY
_CLIENT_ERRORS = {
    lib.GR_CLIENT_RING_FULL: (RingFullError, "the request ring stayed full"),
    lib.GR_CLIENT_TOO_LARGE: (MessageTooLargeError, "the request is larger than the ring's largest message"),
    lib.GR_CLIENT_PEER_GONE: (_ConnectionError, "the server closed the session"),
    lib.GR_CLIENT_TIMEOUT: (_TimeoutError, "no reply within the timeout"),
    lib.GR_CLIENT_PROTOCOL: (ProtocolError, "a reply did not decode or did not match its request"),
    lib.GR_CLIENT_ENCODE: (ProtocolError, "the request could not be encoded"),
    lib.GR_CLIENT_NO_MEMORY: (MemoryError, "out of memory"),
}


_KIND_ARRAY, _KIND_MAP, _KIND_INTEGER = lib.GR_ELEMENT_KIND_ARRAY, lib.GR_ELEMENT_KIND_MAP, lib.GR_ELEMENT_KIND_INTEGER
_KIND_ERROR, _KIND_NIL, _KIND_NIL_ARRAY = lib.GR_ELEMENT_KIND_ERROR, lib.GR_ELEMENT_KIND_NIL, lib.GR_ELEMENT_KIND_NIL_ARRAY


def _reply_tree(kinds: list, integers: list, offsets: list, lengths: list, arena: bytes) -> Any:
    """Python objects for an ArrayReply's tree, laid out by C in pre-order: an ARRAY element is
    followed by its children, a MAP by its pairs (a flat list, as RESP2 gives it and redis-py's
    callbacks expect), an error inside an array is a ResponseError in the list (as redis-py)."""
    root: list = []
    stack: list = []
    current, remaining = root, 1
    for kind, integer, offset, length in zip(kinds, integers, offsets, lengths):
        children = 0
        if kind == _KIND_ARRAY or kind == _KIND_MAP:
            value: Any = []
            children = integer * 2 if kind == _KIND_MAP else integer
        elif kind == _KIND_INTEGER:
            value = integer
        elif kind == _KIND_NIL or kind == _KIND_NIL_ARRAY:
            value = None
        elif kind == _KIND_ERROR:
            value = error_from_reply(arena[offset:offset + length].decode(errors="replace"), integer)
        else:                                   # BULK, STATUS
            value = arena[offset:offset + length]
        current.append(value)
        remaining -= 1
        if children:
            stack.append((current, remaining))
            current, remaining = value, children
        while remaining == 0 and stack:
            current, remaining = stack.pop()
    return root[0]


PLAIN_CAPACITY = 1 << 17   # a plain call's reply up to this many marshal bytes is built by one plain_loads


class ClientCore:
    """gr_client_t: one cffi call per command (native/client/client.h).

    `plain` is the buffer the plain calls write their reply into as the Python object it
    stands for (native/client/plain_reply.h): plain_loads(core.plain) is the reply, or
    Ellipsis when it is in `result` instead (an error, or too large): see plain_fallback."""

    def __init__(self, requests: Segment, replies: Segment, doorbell_fd: int, control_fd: int):
        error = ffi.new("char[]", 256)
        pointer = lib.gr_client_new(requests.pointer, requests.size, replies.pointer, replies.size,
                                    doorbell_fd, control_fd, error, 256)
        if pointer == ffi.NULL:
            raise _ConnectionError(f"ring attach refused: {ffi.string(error).decode()}")
        self.pointer = pointer
        self.cache = None      # a near_cache.NearCache reading this client: detached before it goes
        self.result = ffi.new("gr_result_t *")
        self.gone = False
        self.max_message = lib.gr_client_max_message(pointer)
        # never resized and kept as long as the client: C writes through its address
        self.plain = bytearray(PLAIN_CAPACITY)
        self._plain_pointer = ffi.from_buffer("uint8_t[]", self.plain)
        lib.gr_client_set_plain_output(pointer, self._plain_pointer, PLAIN_CAPACITY)
        self._layout_capacity = 0
        self._grow_layout(256)

    def plain_fallback(self) -> Any:
        """The value of a plain call whose reply was not written into `plain`: an error reply
        (raised), an array too large for it (written into a buffer of its size), or an array
        holding an error element (built by _reply_tree)."""
        result = self.result
        if result.template_id == _T_ARRAY:
            needed = lib.gr_plain_reply_write(result, 0, ffi.NULL, 0)
            if needed > 0:
                out = bytearray(needed)
                lib.gr_plain_reply_write(result, 0, ffi.from_buffer("uint8_t[]", out), needed)
                return plain_loads(out)
        return self.value(result)

    def _grow_layout(self, count: int) -> None:
        """Arrays gr_client_result_layout fills: one C call per array reply, not one per element."""
        capacity = max(count, self._layout_capacity * 2)
        self._kinds = ffi.new("uint8_t[]", capacity)
        self._integers = ffi.new("int64_t[]", capacity)
        self._offsets = ffi.new("uint64_t[]", capacity)
        self._lengths = ffi.new("uint64_t[]", capacity)
        self._layout_capacity = capacity

    def close(self) -> None:
        """Free the C client. The object stays, closed: its pointer NULL (a plain call on it
        answers GR_CLIENT_CLOSED) and its plain output Ellipsis, so a call after close raises
        ConnectionError through the same check as any failed call."""
        if self.cache is not None:
            self.cache.detach()
        if self.pointer:
            lib.gr_client_free(self.pointer)
            self.pointer = ffi.NULL
            self.plain[0] = ord(".")

    def forsake(self) -> None:
        """Drop the C client without freeing it or touching its rings (a forked child's copy
        of its parent's session); later calls answer GR_CLIENT_CLOSED."""
        if self.cache is not None:
            self.cache.detach()
        self.pointer = ffi.NULL
        self.plain[0] = ord(".")

    def set_wait(self, spin_iterations: int, timeout_s: float | None) -> None:
        lib.gr_client_set_wait(self.pointer, spin_iterations, -1 if timeout_s is None else int(timeout_s * 1e9))

    def check(self, status: int) -> None:
        if status:
            if not self.pointer or status == lib.GR_CLIENT_CLOSED:
                raise _ConnectionError("the client is closed")
            exception, message = _CLIENT_ERRORS.get(status, (ProtocolError, f"client status {status}"))
            if status == lib.GR_CLIENT_PEER_GONE:
                self.gone = True
            raise exception(message)

    def settle(self, status: int) -> Any:
        """A plain call whose plain output held Ellipsis: the failure its status names
        (raised), or the reply that was not written there (plain_fallback)."""
        if status:
            self.check(status)
        return self.plain_fallback()

    def value(self, r: Any) -> Any:
        """The Python value of a gr_result_t, or the ResponseError it carries (raised)."""
        template = r.template_id
        if template == _T_BULK:
            return None if r.is_nil else ffi.buffer(r.data, r.length)[:]
        if template == _T_INTEGER:
            return r.integer
        if template == _T_STATUS:
            return ffi.buffer(r.data, r.length)[:]
        if template == _T_ERROR:
            raise error_from_reply(ffi.buffer(r.data, r.length)[:].decode(errors="replace"), r.error_code)
        if template == _T_ARRAY:
            if r.is_nil:
                return None
            n = r.count
            if n > self._layout_capacity:
                self._grow_layout(n)
            used = lib.gr_client_result_layout(self.pointer, r, self._kinds, self._integers, self._offsets,
                                               self._lengths)
            arena = ffi.buffer(lib.gr_client_arena(self.pointer), used)[:] if used else b""
            offsets, lengths = ffi.unpack(self._offsets, n), ffi.unpack(self._lengths, n)
            kinds = ffi.unpack(self._kinds, n)
            if kinds[0] == _KIND_ARRAY and not any(kinds[1:]):   # a flat array of bulks: the common case
                return [arena[o:o + length] for o, length in zip(offsets[1:], lengths[1:])]
            return _reply_tree(kinds, ffi.unpack(self._integers, n), offsets, lengths, arena)
        raise ProtocolError(f"unexpected reply template {template}")

    def send_argv(self, argv: tuple) -> int:
        """Send one command (argv: bytes) without waiting: C builds, validates and encodes the
        typed request (gr_client_send_argv). Returns the client status, GR_CLIENT_RING_FULL
        included (a pipeline then reads replies and retries)."""
        data = b"".join(argv)
        status = lib.gr_client_send_argv(self.pointer, data, len(data), list(map(len, argv)), len(argv))
        if status == lib.GR_CLIENT_ENCODE and any(type(a) is memoryview for a in argv):
            argv = tuple(bytes(a) for a in argv)     # a memoryview whose len() is not its byte count
            data = b"".join(argv)
            status = lib.gr_client_send_argv(self.pointer, data, len(data), list(map(len, argv)), len(argv))
        return status

    def receive(self) -> Any:
        """The next reply's value; a ResponseError is returned (not raised) for pipelines."""
        self.check(lib.gr_client_receive(self.pointer, self.result))
        try:
            return self.value(self.result)
        except Exception as error:  # noqa: BLE001 - pipelines collect per-command errors
            return error

    def in_flight(self) -> int:
        return lib.gr_client_in_flight(self.pointer)

    def lindex_many(self, key: bytes, indexes: Any) -> list:
        import numpy

        array = numpy.ascontiguousarray(indexes, dtype=numpy.int64)
        count = len(array)
        offsets = numpy.empty(count, dtype=numpy.int64)
        lengths = numpy.empty(count, dtype=numpy.int64)
        self.check(lib.gr_client_lindex_many(
            self.pointer, key, len(key), ffi.cast("const int64_t *", ffi.from_buffer(array)), count,
            ffi.cast("int64_t *", ffi.from_buffer(offsets)), ffi.cast("int64_t *", ffi.from_buffer(lengths)),
            self.result))
        if self.result.template_id == _T_ERROR:
            self.value(self.result)
        arena = ffi.buffer(lib.gr_client_arena(self.pointer), int(offsets.max(initial=0) + lengths.max(initial=0)) + 1)
        return [None if length < 0 else arena[offset:offset + length]
                for offset, length in zip(offsets.tolist(), lengths.tolist())]

    def push_many(self, end: int, key: bytes, values: Any, per_message: int) -> int:
        import numpy

        if isinstance(values, numpy.ndarray) and values.dtype.kind == "S":
            width = values.dtype.itemsize
            data = numpy.ascontiguousarray(values).tobytes()
            count = len(values)
            offsets = numpy.arange(count, dtype=numpy.int64) * width
            lengths = numpy.full(count, width, dtype=numpy.int64)
        else:
            encoded = [v if isinstance(v, bytes) else bytes(v) for v in values]
            count = len(encoded)
            lengths = numpy.fromiter((len(v) for v in encoded), dtype=numpy.int64, count=count)
            offsets = numpy.zeros(count, dtype=numpy.int64)
            if count > 1:
                numpy.cumsum(lengths[:-1], out=offsets[1:])
            data = b"".join(encoded)
        self.check(lib.gr_client_push_many(
            self.pointer, end, key, len(key), ffi.from_buffer("uint8_t[]", data) if data else ffi.NULL,
            ffi.cast("const int64_t *", ffi.from_buffer(offsets)),
            ffi.cast("const int64_t *", ffi.from_buffer(lengths)), count, per_message, self.result))
        return self.value(self.result)

    def hset_many(self, key: bytes, fields: Any, values: Any, per_message: int) -> int:
        """HSET every field/value pair in one C call (client_batch.c); the fields added."""
        field_data, field_offsets, field_lengths, count = _pack_values(fields)
        value_data, value_offsets, value_lengths, value_count = _pack_values(values)
        if count != value_count:
            raise ValueError(f"hset_many: {count} fields but {value_count} values")
        self.check(lib.gr_client_hset_many(
            self.pointer, key, len(key), _buffer(field_data), _int64s(field_offsets), _int64s(field_lengths),
            _buffer(value_data), _int64s(value_offsets), _int64s(value_lengths), count, per_message, self.result))
        return self.value(self.result)

    def xadd_many(self, key: bytes, fields_list: Any, ids: Any) -> list:
        """XADD each entry of fields_list (dicts, or sequences of (field, value) pairs) in one C
        call (client_stream.c), at ids (a sequence, or None for "*"): the IDs added."""
        import numpy

        from .client.commands.core import encode

        fields, values, counts = [], [], []
        for entry in fields_list:
            pairs = entry.items() if isinstance(entry, dict) else entry
            n = 0
            for field, value in pairs:
                fields.append(field if type(field) is bytes else encode(field))
                values.append(value if type(value) is bytes else encode(value))
                n += 1
            if n == 0:
                raise ValueError("xadd_many: an entry needs at least one field")
            counts.append(n)
        count = len(counts)
        if count == 0:
            return []
        field_data, field_offsets, field_lengths, _ = _pack_values(fields)
        value_data, value_offsets, value_lengths, _ = _pack_values(values)
        pair_counts = numpy.asarray(counts, dtype=numpy.int64)
        if ids is not None:
            id_data, id_offsets, id_lengths, id_count = _pack_values(ids)
            if id_count != count:
                raise ValueError(f"xadd_many: {count} entries but {id_count} ids")
            id_args = (_buffer(id_data), _int64s(id_offsets), _int64s(id_lengths))
        else:
            id_args = (ffi.NULL, ffi.NULL, ffi.NULL)
        out_offsets = numpy.empty(count, dtype=numpy.int64)
        out_lengths = numpy.empty(count, dtype=numpy.int64)
        out_data, out_size = ffi.new("uint8_t **"), ffi.new("size_t *")
        self.check(lib.gr_client_xadd_many(
            self.pointer, key, len(key), _buffer(field_data), _int64s(field_offsets), _int64s(field_lengths),
            _buffer(value_data), _int64s(value_offsets), _int64s(value_lengths), _int64s(pair_counts), *id_args,
            count, _int64s(out_offsets), _int64s(out_lengths), out_data, out_size, self.result))
        return self._batch_values(out_offsets, out_lengths, out_data, out_size)

    def xack_many(self, key: bytes, group: bytes, ids: Any, per_message: int) -> int:
        """XACK every ID in one C call (client_stream.c): the entries acknowledged."""
        data, offsets, lengths, count = _pack_values(ids)
        self.check(lib.gr_client_xack_many(
            self.pointer, key, len(key), group, len(group), _buffer(data), _int64s(offsets), _int64s(lengths), count,
            per_message, self.result))
        return self.value(self.result)

    def _batch_values(self, out_offsets: Any, out_lengths: Any, out_data: Any, out_size: Any) -> list:
        """A values batch's ending (HMGET, ARMGET): an error reply raised, else bytes or None per
        item cut from the one malloc'd arena client_batch.c filled, which is freed here."""
        if self.result.template_id == _T_ERROR:
            self.value(self.result)
        try:
            arena = ffi.buffer(out_data[0], out_size[0])[:] if out_size[0] else b""
        finally:
            lib.gr_client_batch_free(out_data[0])
        return [None if length < 0 else arena[offset:offset + length]
                for offset, length in zip(out_offsets.tolist(), out_lengths.tolist())]

    def hmget_many(self, key: bytes, fields: Any, per_message: int) -> list:
        """HMGET every field in one C call (client_batch.c): bytes or None per field."""
        import numpy

        data, offsets, lengths, count = _pack_values(fields)
        out_offsets = numpy.empty(count, dtype=numpy.int64)
        out_lengths = numpy.empty(count, dtype=numpy.int64)
        out_data, out_size = ffi.new("uint8_t **"), ffi.new("size_t *")
        self.check(lib.gr_client_hmget_many(
            self.pointer, key, len(key), _buffer(data), _int64s(offsets), _int64s(lengths), count, per_message,
            _int64s(out_offsets), _int64s(out_lengths), out_data, out_size, self.result))
        return self._batch_values(out_offsets, out_lengths, out_data, out_size)

    def zadd_many(self, key: bytes, members: Any, scores: Any, per_message: int, flags: int) -> int:
        """ZADD every (score, member) pair in one C call (client_batch.c); the sum of the
        replies (members added, or changed with CH)."""
        import numpy

        data, offsets, lengths, count = _pack_values(members)
        score_array = numpy.ascontiguousarray(scores, dtype=numpy.float64)
        if score_array.ndim != 1 or len(score_array) != count:
            raise ValueError(f"zadd_many: {count} members but {score_array.size} scores")
        self.check(lib.gr_client_zadd_many(
            self.pointer, key, len(key), _buffer(data), _int64s(offsets), _int64s(lengths),
            ffi.cast("const double *", ffi.from_buffer(score_array)) if count else ffi.NULL, count, per_message,
            flags, self.result))
        return self.value(self.result)

    def zscore_many(self, key: bytes, members: Any, per_message: int) -> Any:
        """ZMSCORE every member in one C call (client_batch.c): a float64 array, NaN where a
        member has no score."""
        import numpy

        data, offsets, lengths, count = _pack_values(members)
        out = numpy.empty(count, dtype=numpy.float64)
        self.check(lib.gr_client_zscore_many(
            self.pointer, key, len(key), _buffer(data), _int64s(offsets), _int64s(lengths), count, per_message,
            ffi.cast("double *", ffi.from_buffer(out)), self.result))
        if self.result.template_id == _T_ERROR:
            self.value(self.result)
        return out

    def zrange_arrays(self, key: bytes, start: int, stop: int, reverse: bool) -> tuple:
        """ZRANGE key start stop WITHSCORES [REV] in one C call: (members as a list of bytes,
        scores as a float64 array)."""
        import numpy

        out_data, out_size, out_count = ffi.new("uint8_t **"), ffi.new("size_t *"), ffi.new("size_t *")
        self.check(lib.gr_client_zrange_arrays(self.pointer, key, len(key), start, stop, 1 if reverse else 0,
                                               out_data, out_size, out_count, self.result))
        if self.result.template_id == _T_ERROR:
            self.value(self.result)
        try:
            count = out_count[0]
            block = ffi.buffer(out_data[0], out_size[0])
            scores = numpy.frombuffer(block, dtype=numpy.float64, count=count).copy()
            members = plain_loads(block[8 * count:])
        finally:
            lib.gr_client_batch_free(out_data[0])
        return members, scores

    def armset_many(self, key: bytes, indexes: Any, values: Any, per_message: int) -> int:
        """ARMSET every index/value pair in one C call (client_array.c); the slots that were empty."""
        import numpy

        column = numpy.ascontiguousarray(indexes, dtype=numpy.uint64)
        data, offsets, lengths, count = _pack_values(values)
        if count != len(column):
            raise ValueError(f"armset_many: {len(column)} indexes but {count} values")
        self.check(lib.gr_client_armset_many(
            self.pointer, key, len(key), ffi.cast("uint64_t *", ffi.from_buffer(column)), _buffer(data),
            _int64s(offsets), _int64s(lengths), count, per_message, self.result))
        return self.value(self.result)

    def armget_many(self, key: bytes, indexes: Any, per_message: int) -> list:
        """ARMGET every index in one C call (client_array.c): bytes or None per index."""
        import numpy

        column = numpy.ascontiguousarray(indexes, dtype=numpy.uint64)
        count = len(column)
        out_offsets, out_lengths = numpy.empty(count, dtype=numpy.int64), numpy.empty(count, dtype=numpy.int64)
        out_data, out_size = ffi.new("uint8_t **"), ffi.new("size_t *")
        self.check(lib.gr_client_armget_many(
            self.pointer, key, len(key), ffi.cast("uint64_t *", ffi.from_buffer(column)), count, per_message,
            _int64s(out_offsets), _int64s(out_lengths), out_data, out_size, self.result))
        return self._batch_values(out_offsets, out_lengths, out_data, out_size)

    def execute_packed(self, packed: bytes, converts: list) -> list:
        """Run a packed pipeline of hot scalar commands in one C call (gr_client_execute_packed)."""
        from array import array

        count = len(converts)
        kinds = bytearray(count)
        integers, offsets, lengths = array("q", bytes(8 * count)), array("q", bytes(8 * count)), array("q", bytes(8 * count))
        cast, from_buffer = ffi.cast, ffi.from_buffer
        self.check(lib.gr_client_execute_packed(
            self.pointer, cast("uint8_t *", from_buffer(packed)), len(packed), count,
            cast("uint8_t *", from_buffer(kinds)), cast("int64_t *", from_buffer(integers)),
            cast("int64_t *", from_buffer(offsets)), cast("int64_t *", from_buffer(lengths))))
        # one copy of the arena into a bytes object; slicing bytes is cheaper than slicing cffi buffers
        arena = ffi.buffer(lib.gr_client_arena(self.pointer), max(offsets) + max(lengths) + 1)[:]
        if kinds.count(0) == count and converts.count(None) == count:   # all bulk values: the common case
            return [arena[o:o + n] for o, n in zip(offsets, lengths)]
        results = []
        append = results.append
        for kind, integer, offset, length, convert in zip(kinds, integers, offsets, lengths, converts):
            if kind == 0 or kind == 3:
                value = arena[offset:offset + length]
            elif kind == 2:
                value = integer
            elif kind == 1:
                value = None
            elif kind == 4:
                value = error_from_reply(arena[offset:offset + length].decode(errors="replace"))
            else:
                value = ProtocolError("unexpected reply shape in a packed pipeline")
            if convert is not None and not isinstance(value, Exception):
                value = convert(value)
            append(value)
        return results


def _pack_values(values: Any) -> tuple:
    """A batch's byte strings as (data, offsets, lengths, count): a numpy 'S' array as it is,
    anything else joined once (the batch calls' shared layout)."""
    import numpy

    if isinstance(values, numpy.ndarray) and values.dtype.kind == "S":
        width = values.dtype.itemsize
        count = len(values)
        return (numpy.ascontiguousarray(values).tobytes(), numpy.arange(count, dtype=numpy.int64) * width,
                numpy.full(count, width, dtype=numpy.int64), count)
    if type(values) is list or type(values) is tuple:
        # the common case, a sequence of bytes: joined and measured by C loops, no Python per item
        try:
            data = b"".join(values)
        except TypeError:                   # str items (or others): encoded one by one below
            pass
        else:
            count = len(values)
            lengths = numpy.fromiter(map(len, values), dtype=numpy.int64, count=count)
            if int(lengths.sum()) == len(data):   # else a memoryview whose len() is not its byte count
                offsets = numpy.zeros(count, dtype=numpy.int64)
                if count > 1:
                    numpy.cumsum(lengths[:-1], out=offsets[1:])
                return data, offsets, lengths, count
    encoded = [v if isinstance(v, bytes) else v.encode() if isinstance(v, str) else bytes(v) for v in values]
    count = len(encoded)
    lengths = numpy.fromiter((len(v) for v in encoded), dtype=numpy.int64, count=count)
    offsets = numpy.zeros(count, dtype=numpy.int64)
    if count > 1:
        numpy.cumsum(lengths[:-1], out=offsets[1:])
    return b"".join(encoded), offsets, lengths, count


def _buffer(data: bytes) -> Any:
    return ffi.from_buffer("uint8_t[]", data) if data else ffi.NULL


def _int64s(array: Any) -> Any:
    return ffi.cast("int64_t *", ffi.from_buffer(array))
