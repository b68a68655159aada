"""redispy_asyncio.py — redis.asyncio over the ring: AsyncRingConnectionPool and AsyncRingConnection.

    import redis.asyncio
    from goblin_ring.redispy_asyncio import AsyncRingConnectionPool

    r = redis.asyncio.Redis(connection_pool=AsyncRingConnectionPool(name="goblin"))
    await r.set("k", "v"); await r.get("k")

The twin of goblin_ring.redispy for redis.asyncio.Redis: an AsyncRingConnection is a
redis.asyncio connection whose commands travel over a ring session driven from the event loop
as goblin_ring.asyncio.RingClient drives its own (goblin_ring/asyncio.py's _Channel): a
request is written to the ring at once, its reply awaited on a future; the wait spins a few
microseconds, then sleeps on an eventfd the server writes (loop.add_reader), so the loop is
never blocked. Replies are decoded in C into the objects redis-py's RESP2 parser gives, errors
mapped by redis-py's own parser table, as in goblin_ring.redispy. In subscribed mode (PubSub)
messages are read from the ring as they come, the wait again the eventfd.

RESP2 only; Lua scripts need EVALSHA (not in goblin yet). redis-py is an optional dependency.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from redis import exceptions as redis_errors
from redis.asyncio.connection import AbstractConnection, ConnectionPool

from . import _native
from . import errors as goblin_errors
from .asyncio import SPIN_ITERATIONS, _Channel
from .redispy import _SUBSCRIBING, _decoded, _fixed, _message_as_reply, _needs_fixing, _redis_error

__all__ = ["AsyncRingConnection", "AsyncRingConnectionPool"]

_lib, _ffi = _native.lib, _native.ffi
_loads = _native.plain_loads
_pubsub_read, _arm, _disarm = _lib.gr_client_pubsub_read, _lib.gr_client_arm_reply_doorbell, \
    _lib.gr_client_disarm_reply_doorbell
_reply_ready = _lib.gr_client_reply_ready


class AsyncRingConnection(AbstractConnection):
    """A redis.asyncio connection over a goblin-ring session. Arguments: the ring's (name,
    runtime_dir, ring_size, spin_iterations) and redis.asyncio's connection arguments (db,
    password, client_name, encoding, decode_responses, socket_timeout: the wait for a reply)."""

    def __init__(self, *, name: str = "goblin", runtime_dir: Any = None, ring_size: int = 0,
                 spin_iterations: int = 20000, **kwargs: Any):
        if kwargs.get("protocol") not in (None, 2, "2"):
            raise redis_errors.ConnectionError("a ring connection speaks RESP2 only (protocol=2)")
        kwargs["protocol"] = 2
        super().__init__(**kwargs)
        self.name, self.runtime_dir = name, runtime_dir
        self.ring_size, self.spin_iterations = ring_size, spin_iterations
        self._channel: _Channel | None = None
        self._pending: collections.deque = collections.deque()   # a future per reply owed, in order
        self._pushed: collections.deque = collections.deque()    # subscribed mode: read, not handed out
        self._subscribed = False
        self._readable: asyncio.Event | None = None

    def repr_pieces(self) -> list:
        pieces = [("name", self.name), ("db", self.db)]
        if self.client_name:
            pieces.append(("client_name", self.client_name))
        return pieces

    def _host_error(self) -> str:
        return f"goblin ring {self.name!r}"

    @property
    def is_connected(self) -> bool:
        return self._channel is not None

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            self._channel = _Channel(dict(name=self.name, runtime_dir=self.runtime_dir, ring_size=self.ring_size,
                                          timeout=self.socket_timeout, spin_iterations=self.spin_iterations,
                                          client_name=""), loop)
        except goblin_errors.ConnectionError as error:
            raise redis_errors.ConnectionError(str(error)) from error
        # one reader on the doorbell: the channel's replies, and subscribed mode's messages
        channel = self._channel
        self._readable = asyncio.Event()
        doorbell = channel.session._reply_doorbell
        loop.remove_reader(doorbell)

        def on_doorbell() -> None:
            self._readable.set()
            channel._on_doorbell()

        loop.add_reader(doorbell, on_doorbell)

    async def disconnect(self, nowait: bool = False, **kwargs: Any) -> None:
        channel, self._channel = self._channel, None
        self._subscribed = False
        self._pushed.clear()
        pending, self._pending = self._pending, collections.deque()
        for future in pending:
            if not future.done():
                future.cancel()
        try:
            self._parser.on_disconnect()
        except Exception:  # noqa: BLE001 - the parser never saw a socket
            pass
        if channel is not None:
            channel.close()

    # ---- sending ----

    def pack_command(self, *args: Any) -> list:
        return [self._argv(args)]

    def pack_commands(self, commands: Any) -> list:
        return [self._argv(args) for args in commands]

    def _argv(self, args: tuple) -> tuple:
        first = args[0]
        if type(first) is str and " " in first:
            args = (*first.split(), *args[1:])
        encoder = self.encoder
        return tuple(arg if type(arg) is bytes else
                     arg.encode(encoder.encoding, encoder.encoding_errors) if type(arg) is str else
                     encoder.encode(arg) for arg in args)

    async def send_command(self, *args: Any, **kwargs: Any) -> None:
        await self.send_packed_command([self._argv(args)], check_health=kwargs.get("check_health", True))

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if isinstance(command, (bytes, str, memoryview)):
            raise redis_errors.DataError("a ring connection sends commands as argv (pack_command), not RESP bytes")
        if self._channel is None:
            await self.connect()
        channel = self._channel
        argvs = list(command)
        subscribing = self._subscribed or any(argv[0].upper() in _SUBSCRIBING for argv in argvs)
        if not subscribing and len(argvs) == 1 and not channel.waiters:
            # a lone command: its reply is often there within the spin (no trip through the loop)
            try:
                await channel._send(argvs[0])
            except goblin_errors.GoblinError as error:
                await self.disconnect()
                raise _redis_error(error, self._parser) from error
            future = channel.loop.create_future()
            self._pending.append(future)
            if _reply_ready(channel.pointer, SPIN_ITERATIONS):
                try:
                    future.set_result(channel._take(None))
                except Exception as error:  # noqa: BLE001 - read_response raises it in its turn
                    future.set_exception(error)
            else:
                channel.waiters.append((future, None))
                channel._schedule()
            return
        try:
            for argv in argvs:
                if subscribing:
                    self._subscribed = True
                    channel.session._send_command(argv)
                    continue
                await channel._send(argv)
                future = channel.loop.create_future()
                channel.waiters.append((future, None))
                self._pending.append(future)
        except goblin_errors.GoblinError as error:
            await self.disconnect()
            raise _redis_error(error, self._parser) from error
        if not subscribing:
            channel._schedule()

    # ---- receiving ----

    def _take_pushed(self) -> bool:
        """Subscribed mode: whatever the ring holds, into _pushed (no wait)."""
        channel = self._channel
        buffer = bytearray(1 << 16)
        count, status = _ffi.new("uint32_t *"), _ffi.new("int *")
        core = channel.core
        while True:
            written = _pubsub_read(core.pointer, 256, 0, _ffi.from_buffer("uint8_t[]", buffer), len(buffer),
                                   count, status)
            if written >= 0:
                break
            buffer = bytearray(max(-written - 1, 2 * len(buffer)))
        items = _loads(buffer) if count[0] else []
        if status[0] and not items:
            core.check(status[0])
        for item in items:
            if item.__class__ is dict:
                self._pushed.append(_message_as_reply(item))
            elif item[0] == "error":
                self._pushed.append(self._parser.parse_error(item[2].decode(errors="replace")))
            else:
                self._pushed.append(item[1])
        return bool(items)

    async def _wait_pushed(self, timeout: float | None) -> bool:
        """Subscribed mode: wait up to timeout seconds (None: for ever) for something pushed."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        pointer = self._channel.core.pointer
        while True:
            if self._pushed or self._take_pushed():
                return True
            if deadline is not None and loop.time() >= deadline:
                return False
            self._readable.clear()
            if _arm(pointer):                      # something came as we armed
                continue
            try:
                if deadline is None:
                    await self._readable.wait()
                else:
                    await asyncio.wait_for(self._readable.wait(), max(deadline - loop.time(), 0))
            except asyncio.TimeoutError:
                pass
            finally:
                if self._channel is not None:
                    _disarm(pointer)

    async def can_read(self) -> bool:
        if self._channel is None:
            return False
        if self._pending:
            return True
        if self._subscribed:
            try:
                return bool(self._pushed) or self._take_pushed()
            except goblin_errors.GoblinError as error:
                raise _redis_error(error, self._parser) from error
        return False

    can_read_destructive = can_read

    async def read_response(self, disable_decoding: bool = False, timeout: float | None = None, *,
                            disconnect_on_error: bool = True, push_request: bool | None = False,
                            **kwargs: Any) -> Any:
        if self._channel is None:
            raise redis_errors.ConnectionError("the connection is closed")
        if self._pending:
            future = self._pending.popleft()
            try:
                response = await future
            except goblin_errors.ResponseError as error:
                response = self._parser.parse_error(str(error))
            except goblin_errors.GoblinError as error:
                if disconnect_on_error:
                    await self.disconnect()
                raise _redis_error(error, self._parser) from error
        elif self._subscribed:
            wait = None if timeout == float("inf") else (timeout if timeout is not None else self.socket_timeout)
            try:
                if not await self._wait_pushed(wait):
                    if timeout is not None:            # a read with its own timeout: nothing came (redis.asyncio's)
                        return None
                    raise redis_errors.TimeoutError(f"Timeout reading from {self._host_error()}")
            except goblin_errors.GoblinError as error:
                raise _redis_error(error, self._parser) from error
            response = self._pushed.popleft()
        else:
            raise redis_errors.ConnectionError("no reply is owed on this ring connection")
        if type(response) is list:
            if _needs_fixing(response):
                response = _fixed(response, self._parser)
        elif isinstance(response, BaseException):
            raise response
        if not disable_decoding and self.encoder.decode_responses:
            response = _decoded(response, self.encoder.decode)
        return response


class AsyncRingConnectionPool(ConnectionPool):
    """redis.asyncio's ConnectionPool of AsyncRingConnections:
    `redis.asyncio.Redis(connection_pool=AsyncRingConnectionPool(name="goblin"))`."""

    def __init__(self, connection_class: type = AsyncRingConnection, max_connections: int | None = None,
                 **connection_kwargs: Any):
        if connection_kwargs.get("protocol") not in (None, 2, "2"):
            raise redis_errors.ConnectionError("a ring connection speaks RESP2 only (protocol=2)")
        connection_kwargs["protocol"] = 2
        super().__init__(connection_class=connection_class, max_connections=max_connections, **connection_kwargs)
