"""redispy.py — redis-py over the ring: RingConnectionPool and RingConnection.

    import redis
    from goblin_ring.redispy import RingConnectionPool

    r = redis.Redis(connection_pool=RingConnectionPool(name="goblin"))
    r.set("k", "v"); r.get("k")              # every redis-py method, over shared memory

A RingConnection is a redis-py Connection whose commands travel over a ring session (a
goblin_ring.RingClient of its own) instead of a socket, so any library that takes a
`redis.Redis` (or its pool) reaches goblin through shared memory: redis-py's methods, response
callbacks, pipelines, transactions with WATCH, PubSub, Lock. redis-py's connect path runs as
for a socket (AUTH, CLIENT SETNAME, SELECT, CLIENT SETINFO, PubSub's resubscribe callback).

What is not redis-py's: the reply is decoded in C from the ring's typed reply into the Python
object redis-py's RESP2 parser would give (bytes, int, None, list; a status as bytes; an error
as the exception class redis-py's parser names for its text), so RESP bytes are never made on
either side. A command is executed when it is sent (send_command makes the ring call; its
reply waits for read_response); a pipeline's commands go out together with up to a full ring
in flight. In subscribed mode commands are sent unanswered and replies and messages are read
from the ring as they come (can_read/read_response with a timeout).

Limits: RESP2 only (protocol=3 is refused: the ring's replies are RESP2-shaped); Lua scripts
(Script, and Lock.release/extend, which run scripts) need EVALSHA, which goblin does not have
yet. redis-py's URL parser has no hook for new schemes, so a URL is taken by
`RingConnectionPool.from_url("goblin+ring://NAME?runtime_dir=/run/goblin&db=0")`.
Fork: redis-py's pool notices the pid change and makes new connections in the child; a
connection carried into a child is dropped there without touching the parent's rings.

redis-py is an optional dependency (`pip install goblin-ring[redis]`): only this module and
goblin_ring.redispy_asyncio import it.
"""

from __future__ import annotations

import collections
import os
import time
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import redis
from redis import exceptions as redis_errors
from redis.connection import AbstractConnection, ConnectionPool

from . import _native
from . import errors as goblin_errors
from .client.ring import RingClient

__all__ = ["RingConnection", "RingConnectionPool", "SCHEME"]

SCHEME = "goblin+ring"
_lib, _ffi = _native.lib, _native.ffi
_loads = _native.plain_loads
_pubsub_read, _receive_plain = _lib.gr_client_pubsub_read, _lib.gr_client_receive_plain
_RING_FULL = _lib.GR_CLIENT_RING_FULL
_SUBSCRIBING = frozenset((b"SUBSCRIBE", b"PSUBSCRIBE", b"SSUBSCRIBE", b"subscribe", b"psubscribe", b"ssubscribe"))
_RING_OPTIONS = ("name", "runtime_dir", "ring_size", "spin_iterations")


class _RingSocket:
    """What a RingConnection keeps where a socket connection keeps its socket: the ring session.
    shutdown/close as redis-py's disconnect calls them (close in a forked child drops the
    parent's session without a write to its rings: RingClient.close)."""

    __slots__ = ("session",)

    def __init__(self, session: RingClient):
        self.session = session

    def shutdown(self, how: int) -> None:
        pass

    def close(self) -> None:
        self.session.close()

    def settimeout(self, timeout: float | None) -> None:   # a parser's on_connect may call it
        pass


def _redis_error(error: goblin_errors.GoblinError, parser: Any) -> Exception:
    """redis-py's exception for a goblin error: a server error by redis-py's own table (its
    parser's parse_error: ExecAbortError, NoScriptError, ...), transport failures as redis-py's."""
    if isinstance(error, goblin_errors.ResponseError):
        return parser.parse_error(str(error))
    if isinstance(error, goblin_errors.TimeoutError):
        return redis_errors.TimeoutError(str(error))
    if isinstance(error, (goblin_errors.ConnectionError, goblin_errors.RingFullError)):
        return redis_errors.ConnectionError(str(error))
    if isinstance(error, goblin_errors.DataError):
        return redis_errors.DataError(str(error))
    return redis_errors.RedisError(str(error))


def _fixed(value: Any, parser: Any) -> Any:
    """An array reply with goblin error elements (EXEC's) made redis-py's."""
    out = []
    for item in value:
        kind = type(item)
        if kind is list:
            item = _fixed(item, parser)
        elif isinstance(item, goblin_errors.GoblinError):
            item = _redis_error(item, parser)
        out.append(item)
    return out


def _needs_fixing(value: list) -> bool:
    for item in value:
        if type(item) is list or isinstance(item, BaseException):
            return True
    return False


def _decoded(value: Any, decode: Any) -> Any:
    kind = type(value)
    if kind is bytes:
        return decode(value)
    if kind is list:
        return [_decoded(item, decode) for item in value]
    return value


def _message_as_reply(message: dict) -> list:
    """A PushMessage (client_pubsub.c's dict) as redis-py's parser gives a message."""
    kind = message["type"]
    if kind == "pmessage":
        return [b"pmessage", message["pattern"], message["channel"], message["data"]]
    return [kind.encode(), message["channel"], message["data"]]


class RingConnection(AbstractConnection):
    """A redis-py connection over a goblin-ring session. Arguments: the ring's (name,
    runtime_dir, ring_size, spin_iterations, as goblin_ring.RingClient) and redis-py's
    connection arguments (db, password, client_name, encoding, decode_responses,
    socket_timeout: the wait for a reply, None for ever, ...)."""

    def __init__(self, name: str = "goblin", runtime_dir: Any = None, ring_size: int = 0,
                 spin_iterations: int = 20000, socket_timeout: float | None = None, **kwargs: Any):
        if kwargs.get("protocol") not in (None, 2, "2"):
            raise redis_errors.ConnectionError("a ring connection speaks RESP2 only (protocol=2)")
        kwargs.pop("socket_connect_timeout", None)
        kwargs["protocol"] = 2
        super().__init__(socket_timeout=socket_timeout, **kwargs)
        self.name = name
        self.runtime_dir = runtime_dir
        self.ring_size = ring_size
        self.spin_iterations = spin_iterations
        self._replies: collections.deque = collections.deque()   # replies read, not yet handed out
        self._subscribed = False
        self._pubsub_buffer: bytearray | None = None

    def repr_pieces(self) -> list:
        pieces = [("name", self.name), ("db", self.db)]
        if self.client_name:
            pieces.append(("client_name", self.client_name))
        return pieces

    def _host_error(self) -> str:
        return f"goblin ring {self.name!r}"

    def _connect(self) -> _RingSocket:
        try:
            session = RingClient(name=self.name, runtime_dir=self.runtime_dir, ring_size=self.ring_size,
                                 timeout=self.socket_timeout, spin_iterations=self.spin_iterations,
                                 username=self.username, password=self.password)
        except goblin_errors.AuthenticationError as error:
            raise redis_errors.AuthenticationError(str(error)) from error
        except goblin_errors.ConnectionError as error:
            raise redis_errors.ConnectionError(str(error)) from error
        # redis-py's pool hands a connection to one thread at a time, different ones over its life
        session._any_thread = True
        _lib.gr_client_set_any_thread(session._core.pointer, 1)
        return _RingSocket(session)

    def disconnect(self, *args: Any, **kwargs: Any) -> None:
        self._replies.clear()
        self._subscribed = False
        super().disconnect(*args, **kwargs)

    # ---- sending: the command runs now, its reply is kept for read_response ----

    def pack_command(self, *args: Any) -> list:
        return [self._argv(args)]

    def pack_commands(self, commands: Any) -> list:
        return [self._argv(args) for args in commands]

    def _argv(self, args: tuple) -> tuple:
        first = args[0]
        if type(first) is str and " " in first:        # "CONFIG GET": two words, as redis-py packs it
            args = (*first.split(), *args[1:])
        encoder = self.encoder
        argv = []
        for arg in args:                                # redis-py's Encoder.encode, its common cases inline
            kind = type(arg)
            if kind is bytes:
                argv.append(arg)
            elif kind is str:
                argv.append(arg.encode(encoder.encoding, encoder.encoding_errors))
            else:
                argv.append(encoder.encode(arg))
        return tuple(argv)

    def send_command(self, *args: Any, **kwargs: Any) -> None:
        sock = self._sock
        if sock is None:
            self.connect()
            sock = self._sock
        argv = self._argv(args)
        if self._subscribed or argv[0] in _SUBSCRIBING or argv[0].upper() in _SUBSCRIBING:
            self._send_unanswered(sock.session, [argv])
            return
        try:
            value = sock.session._execute(argv)
        except goblin_errors.ResponseError as error:
            value = self._parser.parse_error(str(error))
        except goblin_errors.GoblinError as error:
            self.disconnect()
            raise _redis_error(error, self._parser) from error
        self._replies.append(value)

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if isinstance(command, (bytes, str, memoryview)):
            raise redis_errors.DataError("a ring connection sends commands as argv (pack_command), not RESP bytes")
        sock = self._sock
        if sock is None:
            self.connect()
            sock = self._sock
        argvs = list(command)
        if self._subscribed or any(argv[0].upper() in _SUBSCRIBING for argv in argvs):
            self._send_unanswered(sock.session, argvs)
            return
        try:
            core = sock.session._live()
            replies = self._replies
            send, take = core.send_argv, self._take
            for argv in argvs:
                while True:
                    status = send(argv)
                    if status != _RING_FULL:
                        break
                    replies.append(take(core))         # make room: the server waits for us to read
                core.check(status)
            for _ in range(core.in_flight()):
                replies.append(take(core))
        except goblin_errors.GoblinError as error:
            self.disconnect()
            raise _redis_error(error, self._parser) from error

    def _take(self, core: Any) -> Any:
        """The next reply of a pipeline, decoded in C into core.plain (an error reply as the
        exception redis-py's parser names, kept in its place)."""
        status = _receive_plain(core.pointer, core.result)
        if status:
            core.check(status)
        value = _loads(core.plain)
        if value is ...:
            try:
                value = core.settle(0)
            except goblin_errors.ResponseError as error:
                value = self._parser.parse_error(str(error))
        return value

    def _send_unanswered(self, session: RingClient, argvs: list) -> None:
        """Subscribed mode: replies and messages come as they come, read by read_response."""
        self._subscribed = True
        try:
            for argv in argvs:
                session._send_command(argv)
        except goblin_errors.GoblinError as error:
            self.disconnect()
            raise _redis_error(error, self._parser) from error

    # ---- receiving ----

    def _read_pushed(self, timeout: float | None) -> bool:
        """Subscribed mode: take what the ring holds (waiting up to timeout seconds, None: until
        something comes) into _replies; True when something was taken."""
        sock = self._sock
        if sock is None:
            raise redis_errors.ConnectionError("the connection is closed")
        if self._pubsub_buffer is None:
            self._pubsub_buffer = bytearray(1 << 16)
        count, status = _ffi.new("uint32_t *"), _ffi.new("int *")
        try:
            core = sock.session._live()
            while True:
                buffer = self._pubsub_buffer
                written = _pubsub_read(core.pointer, 256, -1 if timeout is None else int(timeout * 1e9),
                                       _ffi.from_buffer("uint8_t[]", buffer), len(buffer), count, status)
                if written >= 0:
                    break
                self._pubsub_buffer = bytearray(max(-written - 1, 2 * len(buffer)))
            items = _loads(buffer) if count[0] else []
            if status[0] and not items:
                core.check(status[0])
        except goblin_errors.GoblinError as error:
            self.disconnect()
            raise _redis_error(error, self._parser) from error
        for item in items:
            if item.__class__ is dict:
                self._replies.append(_message_as_reply(item))
            elif item[0] == "error":
                self._replies.append(self._parser.parse_error(item[2].decode(errors="replace")))
            else:
                self._replies.append(item[1])
        return bool(items)

    def can_read(self, timeout: float | None = 0) -> bool:
        if self._sock is None:
            self.connect()
        if self._replies:
            return True
        if self._subscribed:
            return self._read_pushed(timeout)
        return False

    def read_response(self, disable_decoding: bool = False, *, timeout: Any = ...,
                      disconnect_on_error: bool = True, push_request: bool = False, **kwargs: Any) -> Any:
        replies = self._replies
        if not replies:
            if not self._subscribed:
                raise redis_errors.ConnectionError("no reply is owed on this ring connection")
            wait = timeout if timeout is None or isinstance(timeout, (int, float)) else self.socket_timeout
            if not self._read_pushed(wait):
                raise redis_errors.TimeoutError(f"Timeout reading from {self._host_error()}")
        response = replies.popleft()
        kind = type(response)
        if kind is list:
            if _needs_fixing(response):
                response = _fixed(response, self._parser)
        elif isinstance(response, BaseException):
            try:
                raise response
            finally:
                del response
        if not disable_decoding and self.encoder.decode_responses:
            response = _decoded(response, self.encoder.decode)
        if self.health_check_interval:
            self.next_health_check = time.monotonic() + self.health_check_interval
        return response


class RingConnectionPool(ConnectionPool):
    """redis-py's ConnectionPool of RingConnections: `redis.Redis(connection_pool=
    RingConnectionPool(name="goblin"))`. Keyword arguments are RingConnection's."""

    def __init__(self, connection_class: type = RingConnection, max_connections: int | None = None,
                 **connection_kwargs: Any):
        if connection_kwargs.get("protocol") not in (None, 2, "2"):
            raise redis_errors.ConnectionError("a ring connection speaks RESP2 only (protocol=2)")
        connection_kwargs["protocol"] = 2      # redis-py picks its RESP2 response callbacks by it
        super().__init__(connection_class=connection_class, max_connections=max_connections, **connection_kwargs)

    # get_connection and release are redis-py's, less what a ring connection cannot need: no
    # socket can hold unread bytes (a reply never read is dropped with its session), and no
    # per-call metrics are recorded (redis-py's observability counters cost more than the ring
    # call itself). The fork check, the lock, the idle stack and the cap are redis-py's.
    def get_connection(self, command_name: Any = None, *keys: Any, **options: Any) -> RingConnection:
        if self.pid != os.getpid():
            self._checkpid()
        with self._lock:
            try:
                connection = self._available_connections.pop()
            except IndexError:
                connection = self.make_connection()
            self._in_use_connections.add(connection)
        try:
            if connection._sock is None:
                connection.connect()
            elif connection._replies:            # a reply left unread: start the session afresh
                connection.disconnect()
                connection.connect()
        except BaseException:
            self.release(connection)
            raise
        return connection

    def release(self, connection: RingConnection) -> None:
        if self.pid != os.getpid():
            self._checkpid()
        with self._lock:
            try:
                self._in_use_connections.remove(connection)
            except KeyError:
                return
            if connection.pid == self.pid:
                self._available_connections.append(connection)
                return
        connection.disconnect()                  # made before a fork: dropped, never reused here

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "RingConnectionPool":
        """goblin+ring://NAME[?runtime_dir=...&db=N&client_name=...&decode_responses=true]"""
        parsed = urlparse(url)
        if parsed.scheme != SCHEME:
            raise ValueError(f"a ring URL starts with {SCHEME}:// (got {url!r})")
        options: dict[str, Any] = {}
        if parsed.hostname or parsed.netloc:
            options["name"] = unquote(parsed.netloc)
        for key, values in parse_qs(parsed.query).items():
            value: Any = values[0]
            if key in ("db", "ring_size", "spin_iterations", "max_connections"):
                value = int(value)
            elif key in ("socket_timeout",):
                value = float(value)
            elif key in ("decode_responses",):
                value = value.lower() in ("1", "true", "yes", "on")
            options[key] = value
        if parsed.path and parsed.path not in ("", "/") and "db" not in options:
            options["db"] = int(parsed.path.lstrip("/"))
        if parsed.password:
            options["password"] = unquote(parsed.password)
        options.update(kwargs)
        return cls(**options)


def from_url(url: str, **kwargs: Any) -> "redis.Redis":
    """redis.Redis over the ring for a goblin+ring:// URL (redis.Redis.from_url cannot take it)."""
    return redis.Redis(connection_pool=RingConnectionPool.from_url(url, **kwargs))
