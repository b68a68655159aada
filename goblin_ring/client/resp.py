"""resp.py — RespClient: the same typed API over RESP2, on TCP or a Unix socket.

It works against goblin-ring's RESP listener and equally against redis-server or
valkey-server, so code written for one machine can later point at Redis. Replies are
parsed by hiredis when it is installed (the [test] and [bench] extras bring it), else by
a small pure-Python parser. It does not need goblin-ring's compiled extension.
"""

from __future__ import annotations

import socket
from typing import Any

from ..errors import ConnectionError, ProtocolError, ResponseError, TimeoutError, WatchError, error_from_reply
from .commands import Commands, encode, raise_first_error

try:
    import hiredis
except ImportError:  # pragma: no cover - exercised only without the extras
    hiredis = None


class _ServerError(Exception):
    """hiredis builds this for a '-' reply; turned into ResponseError/WrongTypeError."""


def pack_command(argv: tuple) -> bytes:
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        if type(arg) is not bytes:     # a bytearray or memoryview value (commands/core.py encode_values)
            arg = encode(arg)
        parts.append(b"$%d\r\n" % len(arg))
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)


class _PythonReader:
    """Minimal RESP2 reader with hiredis.Reader's feed/gets interface."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self._buffer.extend(data)

    def gets(self) -> Any:
        result = self._parse(0)
        if result is None:
            return False
        value, end = result
        del self._buffer[:end]
        return value

    def _line(self, start: int) -> tuple[bytes, int] | None:
        end = self._buffer.find(b"\r\n", start)
        if end < 0:
            return None
        return bytes(self._buffer[start:end]), end + 2

    def _parse(self, start: int) -> tuple[Any, int] | None:
        line = self._line(start)
        if line is None:
            return None
        text, after = line
        kind, rest = text[:1], text[1:]
        if kind == b"+":
            return rest, after
        if kind == b"-":
            return _ServerError(rest.decode(errors="replace")), after
        if kind == b":":
            return int(rest), after
        if kind == b"$":
            length = int(rest)
            if length < 0:
                return None, after
            if len(self._buffer) < after + length + 2:
                return None
            return bytes(self._buffer[after:after + length]), after + length + 2
        if kind == b"*":
            count = int(rest)
            if count < 0:
                return None, after
            items = []
            position = after
            for _ in range(count):
                parsed = self._parse(position)
                if parsed is None:
                    return None
                item, position = parsed
                items.append(item)
            return items, position
        raise ProtocolError(f"unexpected RESP type byte {kind!r}")


def _reader() -> Any:
    if hiredis is not None:
        return hiredis.Reader(replyError=_ServerError, protocolError=ProtocolError)
    return _PythonReader()


def _check(value: Any) -> Any:
    if isinstance(value, _ServerError):
        raise error_from_reply(str(value))
    if isinstance(value, list):
        for item in value:
            if isinstance(item, _ServerError):
                raise error_from_reply(str(item))
    return value


class RespClient(Commands):
    """A RESP2 connection to goblin-ring (or Redis, or Valkey)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 6379, unix_socket_path: str | None = None,
                 socket_timeout: float | None = None, password: str | None = None,
                 username: str | None = None, db: int = 0, client_name: str | None = None):
        """password/username: AUTH on connect (a server started with --requirepass, or Redis
        with ACLs); db: SELECT on connect; client_name: CLIENT SETNAME on connect."""
        try:
            if unix_socket_path:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._sock.settimeout(socket_timeout)
                self._sock.connect(unix_socket_path)
            else:
                self._sock = socket.create_connection((host, port), timeout=socket_timeout)
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as error:
            where = unix_socket_path or f"{host}:{port}"
            raise ConnectionError(f"cannot connect to {where}: {error}") from error
        self._reader = _reader()
        self._closed = False
        self._connect_options = dict(host=host, port=port, unix_socket_path=unix_socket_path,
                                     socket_timeout=socket_timeout, password=password, username=username, db=db)
        try:
            if password is not None:
                self.execute_command(*(("AUTH", username, password) if username else ("AUTH", password)))
            if db:
                self.execute_command("SELECT", db)
            if client_name:
                self.execute_command("CLIENT", "SETNAME", client_name)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._sock.close()

    def __enter__(self) -> "RespClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _send(self, payload: bytes) -> None:
        if self._closed:
            raise ConnectionError("the client is closed")
        try:
            self._sock.sendall(payload)
        except socket.timeout as error:
            raise TimeoutError("timed out sending") from error
        except OSError as error:
            raise ConnectionError(f"send failed: {error}") from error

    def _read_reply(self) -> Any:
        while True:
            value = self._reader.gets()
            if value is not False:
                return value
            try:
                data = self._sock.recv(65536)
            except socket.timeout as error:
                raise TimeoutError("timed out waiting for a reply") from error
            except OSError as error:
                raise ConnectionError(f"receive failed: {error}") from error
            if not data:
                raise ConnectionError("the server closed the connection")
            self._reader.feed(data)

    def _execute(self, argv: tuple, convert=None) -> Any:
        self._send(pack_command(argv))
        value = _check(self._read_reply())
        return convert(value) if convert else value

    def pubsub(self, ignore_subscribe_messages: bool = False) -> "PubSub":
        """redis-py's PubSub object (client/pubsub.py), on a connection of its own."""
        from .pubsub import PubSub
        return PubSub(self, ignore_subscribe_messages=ignore_subscribe_messages)

    # PubSub's hooks: a new connection like this one, a command sent without reading its reply,
    # and one reply read within a timeout (None when none came).
    def _new_connection(self) -> "RespClient":
        return RespClient(**self._connect_options)

    def _send_command(self, argv: tuple) -> None:
        self._send(pack_command(argv))

    def _read_reply_within(self, timeout: float | None) -> Any:
        from .pubsub import read_reply_within
        if self._closed:
            raise ConnectionError("the client is closed")
        return read_reply_within(self, self._sock, self._reader, timeout)

    def pipeline(self, transaction: bool = False) -> "RespPipeline":
        """Queue commands and send them in one write. transaction=True wraps them in
        MULTI/EXEC (goblin-ring and Redis run them with nothing in between); a key WATCHed
        before and touched since makes execute() raise WatchError."""
        return RespPipeline(self, transaction)


class RespPipeline(Commands):
    def __init__(self, client: RespClient, transaction: bool = False):
        self._client = client
        self._transaction = transaction
        self._queue: list[tuple[tuple, Any]] = []

    def _execute(self, argv: tuple, convert=None) -> Any:
        if argv[0] in (b"WATCH", b"UNWATCH"):     # run now, as in redis-py's pipeline
            return self._client._execute(argv, convert)
        self._queue.append((argv, convert))
        return self

    def __enter__(self) -> "RespPipeline":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._queue.clear()

    def __len__(self) -> int:
        return len(self._queue)

    def execute(self, raise_on_error: bool = True) -> list:
        queue, self._queue = self._queue, []
        if self._transaction:
            return self._execute_transaction(queue, raise_on_error)
        self._client._send(b"".join(pack_command(argv) for argv, _ in queue))
        return self._convert([self._client._read_reply() for _ in queue], queue, raise_on_error)

    def _execute_transaction(self, queue: list, raise_on_error: bool) -> list:
        commands = [(b"MULTI",), *(argv for argv, _ in queue), (b"EXEC",)]
        self._client._send(b"".join(pack_command(argv) for argv in commands))
        queued = [self._client._read_reply() for _ in range(len(queue) + 1)]   # +OK, then +QUEUED each
        executed = self._client._read_reply()
        if isinstance(executed, _ServerError):      # EXECABORT: say which command was refused
            first = next((value for value in queued if isinstance(value, _ServerError)), executed)
            raise error_from_reply(f"{executed} ({first})" if first is not executed else str(executed))
        if executed is None:                        # a WATCHed key was touched: nothing ran
            raise WatchError("Watched variable changed.")
        return self._convert(executed, queue, raise_on_error)


    def _convert(self, values: list, queue: list, raise_on_error: bool) -> list:
        results = []
        for value, (_argv, convert) in zip(values, queue):
            try:
                value = _check(value)
                if convert is not None:
                    value = convert(value)
            except ResponseError as error:
                value = error
            results.append(value)
        return raise_first_error(results) if raise_on_error else results
