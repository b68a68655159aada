"""ring.py — RingClient: the typed client over a session's shared-memory rings.

Attach: connect to <runtime-dir>/<name>.sock, send an AttachRequest, receive the two
segment names and the server's eventfd doorbell, map both segments, confirm (the server
then unlinks the names). The control socket stays open: the server's EOF on it is how a
waiting call learns the server is gone (ConnectionError, within one 10 ms sleep slice).
Every command is then one cffi call into native/client/client.c.
"""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path
from typing import Any, Sequence

from .. import _native, control
from ..errors import ConnectionError
from .commands import LEFT, RIGHT, Commands, bool_ok, encode, raise_first_error

_T = _native.lib
_ping, _key_int, _key_value, _buffer = (_T.gr_client_ping, _T.gr_client_key_int, _T.gr_client_key_value,
                                       _native.ffi.buffer)
_PUSH, _POP, _GET, _SET, _LSET = _T.GR_T_PUSH, _T.GR_T_POP, _T.GR_T_GET, _T.GR_T_SET, _T.GR_T_LSET
_LINDEX, _LLEN, _BULK, _INTEGER = _T.GR_T_LINDEX, _T.GR_T_LLEN, _T.GR_T_BULK_REPLY, _T.GR_T_INTEGER_REPLY
_STATUS = _T.GR_T_STATUS_REPLY


class RingClient(Commands):
    """A session over shared memory with a goblin-ring server on this machine."""

    def __init__(self, name: str = "goblin", runtime_dir: str | os.PathLike | None = None,
                 ring_size: int = 0, timeout: float | None = None, spin_iterations: int = 20000,
                 client_name: str = ""):
        directory = Path(runtime_dir) if runtime_dir else control.default_runtime_dir()
        path = control.socket_path(directory, name)
        self._closed = True
        self._segments: list[_native.Segment] = []
        self._doorbell = -1
        self._core: _native.ClientCore | None = None
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(str(path))
        except OSError as error:
            self._sock.close()
            raise ConnectionError(f"no goblin-ring server named {name!r} at {path}: {error}") from error
        try:
            self._attach(ring_size, client_name)
        except BaseException:
            self._release()
            raise
        self._closed = False
        self._core.set_wait(spin_iterations, timeout)
        self.session_id: int

    def _attach(self, ring_size: int, client_name: str) -> None:
        request = _native.encode_attach(
            _T.GR_T_ATTACH, protocol_version=control.PROTOCOL_VERSION,
            ring_capacity=ring_size, pid=os.getpid(), client_name=client_name.encode())
        self._sock.sendall(control.frame(request))
        try:
            message, fds = control.receive_frame(self._sock, max_fds=1)
        except EOFError as error:
            raise ConnectionError("the server closed the control socket during attach") from error
        reply = _native.decode_attach(message)
        if reply["error_code"]:
            for fd in fds:
                os.close(fd)
            raise ConnectionError(f"attach refused: {reply['error_message'].decode(errors='replace')}")
        if len(fds) != 1:
            raise ConnectionError("attach reply came without the doorbell descriptor")
        self._doorbell = fds[0]
        self.session_id = reply["session_id"]
        self.ring_size = reply["ring_capacity"]
        self.server_pid = reply["pid"]
        requests = _native.Segment(reply["request_ring_name"].decode())
        self._segments.append(requests)
        replies = _native.Segment(reply["reply_ring_name"].decode())
        self._segments.append(replies)
        # Both sides have mapped both segments now: unlink the names at once, so nothing stays
        # in /dev/shm whoever dies next. (The server also unlinks on the confirm, as a fallback.)
        requests.unlink()
        replies.unlink()
        self._core = _native.ClientCore(requests, replies, self._doorbell, self._sock.fileno())
        self._sock.sendall(control.frame(_native.encode_attach(_T.GR_T_ATTACH_CONFIRM,
                                                               session_id=self.session_id)))

    # ---- lifecycle ----

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._release()

    def _release(self) -> None:
        if self._core is not None:
            self._core.close()
            self._core = None
        for segment in self._segments:
            segment.close()
        self._segments.clear()
        if self._doorbell >= 0:
            os.close(self._doorbell)
            self._doorbell = -1
        self._sock.close()

    def __enter__(self) -> "RingClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    @property
    def max_message(self) -> int:
        return self._live().max_message

    def _live(self) -> _native.ClientCore:
        if self._closed or self._core is None:
            raise ConnectionError("the client is closed")
        if self._core.gone:
            raise ConnectionError("the server closed the session")
        return self._core

    # ---- execution ----

    def _execute(self, template: int, argv: tuple, fields: dict | None, convert=None) -> Any:
        value = self._live().call(template, fields, argv)
        return convert(value) if convert else value

    # Hot paths: no field dicts, one cffi call, the reply read straight from the result.
    def ping(self, message: Any = None) -> Any:
        if message is not None:
            return super().ping(message)
        core = self._core
        if core is None or core.gone:
            core = self._live()
        result = core.result
        status = _ping(core.pointer, result)
        if status:
            core.check(status)
        if result.template_id == _STATUS and result.length == 4:    # +PONG, the only status PING gets
            return True
        return core.value(result) == b"PONG"

    def lindex(self, name: Any, index: int) -> bytes | None:
        core = self._core
        if core is None or core.gone:
            core = self._live()
        key = name if type(name) is bytes else encode(name)
        result = core.result
        status = _key_int(core.pointer, _LINDEX, key, len(key), index, result)
        if status:
            core.check(status)
        if result.template_id == _BULK:
            return None if result.is_nil else _buffer(result.data, result.length)[:]
        return core.value(result)

    def llen(self, name: Any) -> int:
        core = self._core
        if core is None or core.gone:
            core = self._live()
        key = name if type(name) is bytes else encode(name)
        result = core.result
        status = _key_int(core.pointer, _LLEN, key, len(key), 0, result)
        if status:
            core.check(status)
        if result.template_id == _INTEGER:
            return result.integer
        return core.value(result)

    def _key_value(self, template: int, end: int, flag: int, index: int, name: Any, value: Any) -> Any:
        """One cffi call for the hot key(+value) commands; the result read straight from C."""
        core = self._core
        if core is None or core.gone:
            core = self._live()
        key = name if type(name) is bytes else encode(name)
        result = core.result
        if value is None:
            status = _key_value(core.pointer, template, end, flag, index, key, len(key), _native.ffi.NULL, 0, result)
        else:
            data = value if type(value) is bytes else encode(value)
            status = _key_value(core.pointer, template, end, flag, index, key, len(key), data, len(data), result)
        if status:
            core.check(status)
        kind = result.template_id
        if kind == _INTEGER:
            return result.integer
        if kind == _BULK:
            return None if result.is_nil else _buffer(result.data, result.length)[:]
        return core.value(result)

    def rpush(self, name: Any, *values: Any) -> int:
        if len(values) != 1:
            return super().rpush(name, *values)
        return self._key_value(_PUSH, RIGHT, 0, 0, name, values[0])

    def lpush(self, name: Any, *values: Any) -> int:
        if len(values) != 1:
            return super().lpush(name, *values)
        return self._key_value(_PUSH, LEFT, 0, 0, name, values[0])

    def lpop(self, name: Any, count: int | None = None) -> Any:
        if count is not None:
            return super().lpop(name, count)
        return self._key_value(_POP, LEFT, 0, 0, name, None)

    def rpop(self, name: Any, count: int | None = None) -> Any:
        if count is not None:
            return super().rpop(name, count)
        return self._key_value(_POP, RIGHT, 0, 0, name, None)

    def get(self, name: Any) -> bytes | None:
        return self._key_value(_GET, 0, 0, 0, name, None)

    def set(self, name: Any, value: Any, *args: Any, **options: Any) -> Any:
        if args or any(v is not None and v is not False for v in options.values()):   # ex=0 is an option
            return super().set(name, value, *args, **options)
        return self._key_value(_SET, 0, 0, 0, name, value) == b"OK" or None

    def lset(self, name: Any, index: int, value: Any) -> bool:
        if type(index) is not int or not -2 ** 63 <= index < 2 ** 63:
            return super().lset(name, index, value)
        return self._key_value(_LSET, 0, 0, index, name, value) == b"OK"

    # ---- batches: one C call ----

    def lindex_many(self, name: Any, indexes: Sequence[int]) -> list:
        """LINDEX at every index (a sequence or numpy array), pipelined in one C call."""
        return self._live().lindex_many(encode(name), indexes)

    def rpush_many(self, name: Any, values: Sequence[bytes], per_message: int = 128) -> int:
        """RPUSH every value (a sequence of bytes or a numpy 'S' array) in one C call,
        per_message values to a request; returns the list's final length."""
        return self._live().push_many(RIGHT, encode(name), values, per_message)

    def lpush_many(self, name: Any, values: Sequence[bytes], per_message: int = 128) -> int:
        return self._live().push_many(LEFT, encode(name), values, per_message)

    def pipeline(self, transaction: bool = False) -> "RingPipeline":
        if transaction:
            raise NotImplementedError("MULTI/EXEC transactions are not supported; use pipeline()")
        return RingPipeline(self)


_PACKED_HEADER = struct.Struct("<HBBqIi")   # template, end, flag, a, key length, value length (-1: none)
_pack_header = _PACKED_HEADER.pack


class RingPipeline(Commands):
    """Commands queued, then sent with up to a full ring in flight; execute() returns the
    replies in order (a command's error is raised after all replies are read, or returned
    in place with raise_on_error=False, as in redis-py).

    While a pipeline holds only the hot scalar commands (PING, LLEN, LINDEX, LSET,
    single-value pushes, count-less pops) they are packed into one buffer as they are
    queued and executed by one C call (gr_client_execute_packed); the first other command
    turns the pipeline into the general path, one cffi call per command, order kept."""

    def __init__(self, client: RingClient):
        self._client = client
        self._queue: list[tuple] = []        # general entries: (template, fields, argv, convert)
        self._packed = bytearray()            # hot commands while _queue is empty
        self._packed_converts: list = []
        self._last_name: Any = None
        self._last_key = b""

    def _execute(self, template: int, argv: tuple, fields: dict | None, convert=None) -> "RingPipeline":
        if self._packed_converts:
            self._queue = self._unpack()
        self._queue.append((template, fields, argv, convert))
        return self

    def _pack(self, template: int, end: int, flag: int, a: int, key: bytes, value: bytes | None,
              convert: Any) -> bool:
        if self._queue:
            return False
        try:
            header = _PACKED_HEADER.pack(template, end, flag, a, len(key), -1 if value is None else len(value))
        except struct.error:
            return False                      # an index beyond int64: let the server word the error
        packed = self._packed
        packed += header
        packed += key
        if value is not None:
            packed += value
        self._packed_converts.append(convert)
        return True

    def _unpack(self) -> list[tuple]:
        entries, at, packed = [], 0, bytes(self._packed)
        for convert in self._packed_converts:
            template, end, flag, a, key_length, value_length = _PACKED_HEADER.unpack_from(packed, at)
            at += _PACKED_HEADER.size
            key = packed[at:at + key_length]
            at += key_length
            fields: dict = {} if template == _T.GR_T_PING else {"key": key, "end": end, "flag": flag, "index": a}
            if value_length >= 0:
                value = packed[at:at + value_length]
                at += value_length
                fields["items" if template == _T.GR_T_PUSH else "arg1"] = [value] if template == _T.GR_T_PUSH else value
            entries.append((template, fields, (), convert))
        self._packed.clear()
        self._packed_converts.clear()
        return entries

    # the hot commands
    def lindex(self, name: Any, index: int) -> "RingPipeline":
        # _pack inlined, and the last key's encoding reused: this is the per-call cost of the
        # pipelined hot path (a pipeline often reads one list many times)
        if name is self._last_name:
            key = self._last_key
        else:
            kind = type(name)
            key = name if kind is bytes else name.encode() if kind is str else encode(name)
            self._last_name, self._last_key = name, key
        if not self._queue:
            try:
                self._packed += _pack_header(_LINDEX, 0, 0, index, len(key), -1) + key
            except struct.error:          # an index beyond int64: let the server word the error
                super().lindex(name, index)
                return self
            self._packed_converts.append(None)
        else:
            super().lindex(name, index)
        return self

    def llen(self, name: Any) -> "RingPipeline":
        if not self._pack(_LLEN, 0, 0, 0, encode(name), None, None):
            super().llen(name)
        return self

    def lset(self, name: Any, index: int, value: Any) -> "RingPipeline":
        if not self._pack(_T.GR_T_LSET, 0, 0, index, encode(name), encode(value), bool_ok):
            super().lset(name, index, value)
        return self

    def _push(self, word: bytes, end: int, only_if_exists: int, name: Any, values: tuple) -> "RingPipeline":
        if len(values) != 1 or not self._pack(_T.GR_T_PUSH, end, only_if_exists, 0, encode(name),
                                              encode(values[0]), None):
            super()._push(word, end, only_if_exists, name, values)
        return self

    def _pop(self, word: bytes, end: int, name: Any, count: int | None) -> "RingPipeline":
        if count is not None or not self._pack(_T.GR_T_POP, end, 0, 0, encode(name), None, None):
            super()._pop(word, end, name, count)
        return self

    def __enter__(self) -> "RingPipeline":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._queue.clear()
        self._packed.clear()
        self._packed_converts.clear()

    def __len__(self) -> int:
        return len(self._queue) + len(self._packed_converts)

    def execute(self, raise_on_error: bool = True) -> list:
        core = self._client._live()
        if self._packed_converts:
            packed, converts = bytes(self._packed), self._packed_converts
            self._packed.clear()
            self._packed_converts = []
            converted = core.execute_packed(packed, converts)
            return raise_first_error(converted) if raise_on_error else converted
        queue, self._queue = self._queue, []
        results: list = []
        lib = _native.lib
        for template, fields, argv, _convert in queue:
            while True:
                status = core.send(template, fields, argv)
                if status != lib.GR_CLIENT_RING_FULL:
                    break
                results.append(core.receive())   # make room: the server waits for us to read
            core.check(status)
        while core.in_flight():
            results.append(core.receive())
        converted = []
        for (_template, _fields, _argv, convert), value in zip(queue, results):
            if convert is not None and not isinstance(value, Exception):
                value = convert(value)
            converted.append(value)
        return raise_first_error(converted) if raise_on_error else converted
