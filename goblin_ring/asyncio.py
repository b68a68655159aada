"""asyncio.py — goblin_ring.asyncio.RingClient: redis.asyncio.Redis's shape over ring sessions.

`await client.get(key)`, `client.pipeline()` with `await pipe.execute()`, `await client.aclose()`.
Every command method is the typed client's (client/commands/), returning an awaitable.

One session (a _Channel) carries the commands of every task: a request is written to the
ring at once, so many tasks have requests in flight together, and replies, which come in
order, are matched to their futures in order. Waiting never blocks the loop for long: after
sending, the channel spins for a bounded few microseconds (SPIN_ITERATIONS pause
instructions, in C) for the reply; if none came, it sets the reply ring's sleeper flag and
waits on an eventfd the client gave the server at attach (loop.add_reader), which the server
writes with the next reply, beside its futex wake. A lone task whose reply comes within the
spin gets it without a trip through the loop.

Commands that hold a session — blocking pops (BLPOP ... ), XREAD/XREADGROUP with BLOCK, and
transactions (MULTI/EXEC, WATCH)
— run on a session of their own taken from a small pool of idle ones (made on first need,
kept for reuse), so they never stall the other tasks' commands. A task cancelled while its
request is in flight leaves the session usable: its reply is read and dropped in turn.
"""

from __future__ import annotations

import asyncio
import collections
import os
from typing import Any

from . import _native
from .client.commands import Commands, raise_first_error
from .client.ring import RingClient as _RingSession
from .client.commands.scripting import Script as _Script
from .errors import ConnectionError, NoScriptError, WatchError, error_from_reply

_T = _native.lib
_loads = _native.plain_loads
_send_argv, _reply_ready, _arm, _disarm, _receive_plain = (
    _T.gr_client_send_argv, _T.gr_client_reply_ready, _T.gr_client_arm_reply_doorbell,
    _T.gr_client_disarm_reply_doorbell, _T.gr_client_receive_plain)
_RING_FULL = _T.GR_CLIENT_RING_FULL
_join = b"".join

SPIN_ITERATIONS = 400          # pause instructions spun for a reply before the loop waits (a few us)
_HOLDS_SESSION = frozenset((b"BLPOP", b"BRPOP", b"BLMOVE", b"BRPOPLPUSH", b"BLMPOP", b"BZPOPMIN", b"BZPOPMAX",
                            b"BZMPOP", b"WATCH", b"MULTI", b"EXEC", b"DISCARD", b"UNWATCH"))
# ... and these when given BLOCK (XREAD / XREADGROUP BLOCK ms park their session)
_HOLDS_SESSION_WITH_BLOCK = frozenset((b"XREAD", b"XREADGROUP"))


class _LoopSession(_RingSession):
    """A ring session whose client gave the server an eventfd to write with its replies."""

    def __init__(self, **options: Any):
        self._reply_doorbell = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        try:
            super().__init__(**options)
        except BaseException:
            os.close(self._reply_doorbell)
            raise
        self._any_thread = True                   # the loop's thread; a fork's child must not use it
        _T.gr_client_set_any_thread(self._core.pointer, 1)

    def close(self) -> None:
        super().close()
        if self._reply_doorbell >= 0:
            os.close(self._reply_doorbell)
            self._reply_doorbell = -1


class _Channel:
    """One session driven from the event loop: requests sent at once, replies matched to futures
    in order (native/client/client.h, "An event loop's waiting")."""

    def __init__(self, options: dict, loop: asyncio.AbstractEventLoop):
        self.session = _LoopSession(**options)
        self.core = self.session._core
        self.pointer = self.core.pointer
        self.loop = loop
        self.waiters: collections.deque = collections.deque()   # (future, convert) per request in flight
        self.room: list = []                   # senders waiting for request-ring room
        self.armed = False
        self.pumping = False
        self.failed: BaseException | None = None
        loop.add_reader(self.session._reply_doorbell, self._on_doorbell)

    def close(self) -> None:
        if self.session._reply_doorbell >= 0:
            self.loop.remove_reader(self.session._reply_doorbell)
        self._fail(ConnectionError("the client is closed"))
        self.session.close()

    # ---- sending ----

    async def _send(self, argv: tuple) -> None:
        if self.failed is not None:
            raise self.failed
        data = _join(argv)
        lengths = list(map(len, argv))
        while True:
            status = _send_argv(self.pointer, data, len(data), lengths, len(argv))
            if status != _RING_FULL or not self.waiters:
                break
            room = self.loop.create_future()       # the server waits for us to read replies
            self.room.append(room)
            self._schedule()
            await room
        if status == _T.GR_CLIENT_ENCODE and any(type(a) is memoryview for a in argv):
            argv = tuple(bytes(a) for a in argv)
            data = _join(argv)
            status = _send_argv(self.pointer, data, len(data), list(map(len, argv)), len(argv))
        self.core.check(status)

    async def call(self, argv: tuple, convert: Any) -> Any:
        await self._send(argv)
        if not self.waiters and _reply_ready(self.pointer, SPIN_ITERATIONS):
            return self._take(convert)             # the only request, answered within the spin
        future = self.loop.create_future()
        self.waiters.append((future, convert))
        self._schedule()
        return await future

    async def call_many(self, argvs: list) -> list:
        """Every argv sent, then every reply (an error reply returned in its place)."""
        futures = []
        for argv in argvs:
            await self._send(argv)
            future = self.loop.create_future()
            self.waiters.append((future, None))
            futures.append(future)
        self._schedule()
        results = []
        for future in futures:
            try:
                results.append(await future)
            except (ConnectionError, asyncio.CancelledError):
                raise
            except Exception as error:  # noqa: BLE001 - pipelines collect per-command errors
                results.append(error)
        return results

    # ---- receiving ----

    def _take(self, convert: Any) -> Any:
        """The next reply, which is there (or its fragments are coming)."""
        core = self.core
        status = _receive_plain(self.pointer, core.result)
        if status:
            core.check(status)
        value = _loads(core.plain)
        if value is ...:
            value = core.settle(0)                 # an error reply: raised
        return value if convert is None else convert(value)

    def _schedule(self) -> None:
        if not self.pumping:
            self.pumping = True
            self.loop.call_soon(self._pump)

    def _pump(self) -> None:
        self.pumping = False
        self._drain()

    def _on_doorbell(self) -> None:
        try:
            os.read(self.session._reply_doorbell, 8)
        except BlockingIOError:
            pass
        self._drain()

    def _drain(self) -> None:
        """Read every reply that is there (spinning briefly for the next), resolving futures in
        order; when replies are still owed, arm the doorbell and return to the loop."""
        if self.armed:
            _disarm(self.pointer)
            self.armed = False
        waiters = self.waiters
        while waiters:
            if not _reply_ready(self.pointer, SPIN_ITERATIONS):
                if _arm(self.pointer):             # a reply came as we armed
                    continue
                self.armed = True
                break
            future, convert = waiters.popleft()
            try:
                value = self._take(convert)
            except ConnectionError as error:       # the session is gone: every waiter learns it
                waiters.appendleft((future, convert))
                self._fail(error)
                return
            except Exception as error:  # noqa: BLE001 - the awaiting task's to raise
                if not future.done():
                    future.set_exception(error)
            else:
                if not future.done():              # a cancelled task's reply is dropped
                    future.set_result(value)
            self._release_room()
        self._release_room()

    def _release_room(self) -> None:
        room, self.room = self.room, []
        for future in room:
            if not future.done():
                future.set_result(None)

    def _fail(self, error: BaseException) -> None:
        self.failed = error
        while self.waiters:
            future, _ = self.waiters.popleft()
            if not future.done():
                future.set_exception(error)
        self._release_room()


class RingClient(Commands):
    """redis.asyncio.Redis's shape over a goblin-ring server's shared-memory rings.

    Made in a running loop (or use `await RingClient.connect(...)` - the attach is a short
    exchange on a Unix socket); the client belongs to that loop. Arguments as for
    goblin_ring.RingClient."""

    def __init__(self, name: str = "goblin", runtime_dir: Any = None, ring_size: int = 0,
                 timeout: float | None = None, spin_iterations: int = 20000, client_name: str = "",
                 max_connections: int | None = None, username: str | None = None, password: str | None = None):
        self._options = dict(name=name, runtime_dir=runtime_dir, ring_size=ring_size, timeout=timeout,
                             spin_iterations=spin_iterations, client_name=client_name,
                             username=username, password=password)
        self.max_connections = max_connections
        self._loop = asyncio.get_running_loop()
        self._main = _Channel(self._options, self._loop)
        self._idle: list[_Channel] = []           # sessions for commands that hold one
        self._held = 0
        self._closed = False

    def register_script(self, script: Any) -> "AsyncScript":
        """A Script whose call is awaited: EVALSHA, then SCRIPT LOAD and EVALSHA on NOSCRIPT."""
        return AsyncScript(self, script)

    def lock(self, name: Any, timeout: float | None = None, sleep: float = 0.1, blocking: bool = True,
             blocking_timeout: float | None = None, thread_local: bool = True) -> Any:
        """redis.asyncio's Lock over this client (the [redis] extra), its scripts run by this server."""
        return _async_lock_class()(self, name, timeout=timeout, sleep=sleep, blocking=blocking,
                                   blocking_timeout=blocking_timeout, thread_local=thread_local)

    @classmethod
    async def connect(cls, *args: Any, **kwargs: Any) -> "RingClient":
        return cls(*args, **kwargs)

    @property
    def session_id(self) -> int:
        return self._main.session.session_id

    async def __aenter__(self) -> "RingClient":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for channel in [self._main, *self._idle]:
            channel.close()
        self._idle.clear()

    close = aclose

    # ---- sessions ----

    def _take_channel(self) -> _Channel:
        if self._closed:
            raise ConnectionError("the client is closed")
        if self._idle:
            channel = self._idle.pop()
        else:
            if self.max_connections is not None and self._held + 1 >= self.max_connections:
                raise ConnectionError("Too many connections")
            channel = _Channel(self._options, self._loop)
        self._held += 1
        return channel

    def _give_back(self, channel: _Channel) -> None:
        self._held -= 1
        if self._closed or channel.failed is not None or channel.waiters:
            channel.close()                        # cancelled mid-call, or broken: not reused
        else:
            self._idle.append(channel)

    # ---- execution ----

    def _execute(self, argv: tuple, convert: Any = None) -> Any:
        if self._closed:
            return self._refuse()
        name = argv[0].upper()
        if name in _HOLDS_SESSION or (name in _HOLDS_SESSION_WITH_BLOCK and
                                      any(type(a) is bytes and a.upper() == b"BLOCK" for a in argv[1:])):
            return self._on_own_session(argv, convert)
        return self._main.call(argv, convert)

    async def _refuse(self) -> None:
        raise ConnectionError("the client is closed")

    async def _on_own_session(self, argv: tuple, convert: Any) -> Any:
        channel = self._take_channel()
        try:
            return await channel.call(argv, convert)
        finally:
            self._give_back(channel)

    def pipeline(self, transaction: bool = True) -> "Pipeline":
        """redis.asyncio's default: transaction=True wraps the commands in MULTI/EXEC."""
        return Pipeline(self, transaction)

    def pubsub(self, ignore_subscribe_messages: bool = False) -> "PubSub":
        return PubSub(self, ignore_subscribe_messages)


class AsyncScript(_Script):
    """redis-py's asyncio Script shape: `await script(keys=..., args=...)`."""

    async def __call__(self, keys: Any = (), args: Any = (), client: Any = None) -> Any:
        client = self.registered_client if client is None else client
        keys = tuple(keys)
        arguments = (*keys, *tuple(args))
        try:
            return await client.evalsha(self.sha, len(keys), *arguments)
        except NoScriptError:
            self.sha = await client.script_load(self.script)
            return await client.evalsha(self.sha, len(keys), *arguments)


_async_lock = None


def _async_lock_class():
    """redis.asyncio's Lock with script slots of its own (see client/commands/scripting.py)."""
    global _async_lock
    if _async_lock is None:
        from redis.asyncio.lock import Lock

        class GoblinAsyncLock(Lock):
            lua_release = None
            lua_extend = None
            lua_reacquire = None

        _async_lock = GoblinAsyncLock
    return _async_lock


class Pipeline(Commands):
    """Commands queued, sent together by `await execute()`; a transaction (MULTI/EXEC, with any
    keys WATCHed by `await pipe.watch(...)` first) runs on a session of its own."""

    def __init__(self, client: RingClient, transaction: bool):
        self._client = client
        self._transaction = transaction
        self._queue: list = []
        self._channel: _Channel | None = None       # held from watch() to execute()/reset()

    def _execute(self, argv: tuple, convert: Any = None) -> Any:
        self._queue.append((argv, convert))
        return self

    async def watch(self, *names: Any) -> bool:
        if self._channel is None:
            self._channel = self._client._take_channel()
        from .client.commands.core import keys_of
        return await self._channel.call((b"WATCH", *keys_of(names)), lambda v: v == b"OK")

    async def reset(self) -> None:
        self._queue.clear()
        if self._channel is not None:
            channel, self._channel = self._channel, None
            try:
                await channel.call((b"UNWATCH",), None)
            finally:
                self._client._give_back(channel)

    def __len__(self) -> int:
        return len(self._queue)

    async def __aenter__(self) -> "Pipeline":
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.reset()

    async def execute(self, raise_on_error: bool = True) -> list:
        queue, self._queue = self._queue, []
        if not self._transaction:
            values = await self._client._main.call_many([argv for argv, _ in queue])
            return self._converted(queue, values, raise_on_error)
        channel, self._channel = self._channel, None
        if channel is None:
            channel = self._client._take_channel()
        try:
            replies = await channel.call_many([(b"MULTI",), *(argv for argv, _ in queue), (b"EXEC",)])
        finally:
            self._client._give_back(channel)
        queued, executed = replies[:-1], replies[-1]
        if isinstance(executed, Exception):
            first = next((value for value in queued if isinstance(value, Exception)), None)
            raise error_from_reply(f"{executed} ({first})" if first is not None else str(executed),
                                   getattr(executed, "code", None))
        if executed is None:
            raise WatchError("Watched variable changed.")
        return self._converted(queue, executed, raise_on_error)

    @staticmethod
    def _converted(queue: list, values: list, raise_on_error: bool) -> list:
        converted = []
        for (_argv, convert), value in zip(queue, values):
            if convert is not None and not isinstance(value, Exception):
                value = convert(value)
            converted.append(value)
        return raise_first_error(converted) if raise_on_error else converted


class PubSub:
    """redis.asyncio's PubSub over a ring session of its own: `await subscribe(...)`,
    `await get_message(timeout=...)`, `async for message in listen()`. The wait for a message
    is the session's doorbell, not a spin."""

    def __init__(self, client: RingClient, ignore_subscribe_messages: bool = False):
        from .client.ring_pubsub import RingPubSub
        self._client = client
        self._session = _LoopSession(**client._options)
        host = _HostOf(self._session)
        self._sync = RingPubSub(host, ignore_subscribe_messages=ignore_subscribe_messages)
        self._loop = client._loop
        self._readable: asyncio.Event = asyncio.Event()
        self._loop.add_reader(self._session._reply_doorbell, self._readable.set)

    async def subscribe(self, *channels: Any, **handlers: Any) -> None:
        self._sync.subscribe(*channels, **handlers)

    async def unsubscribe(self, *channels: Any) -> None:
        self._sync.unsubscribe(*channels)

    async def psubscribe(self, *patterns: Any, **handlers: Any) -> None:
        self._sync.psubscribe(*patterns, **handlers)

    async def punsubscribe(self, *patterns: Any) -> None:
        self._sync.punsubscribe(*patterns)

    async def get_message(self, ignore_subscribe_messages: bool = False, timeout: float | None = 0.0) -> Any:
        deadline = None if timeout is None else self._loop.time() + timeout
        pointer = self._session._core.pointer
        while True:
            message = self._sync.get_message(ignore_subscribe_messages, timeout=0)
            if message is not None:
                return message
            if deadline is not None and self._loop.time() >= deadline:
                return None
            self._readable.clear()
            if _arm(pointer):                      # something came as we armed
                continue
            try:
                if deadline is None:
                    await self._readable.wait()
                else:
                    await asyncio.wait_for(self._readable.wait(), max(deadline - self._loop.time(), 0))
            except asyncio.TimeoutError:
                pass
            finally:
                _disarm(pointer)
                try:
                    os.read(self._session._reply_doorbell, 8)
                except BlockingIOError:
                    pass

    async def listen(self) -> Any:
        while True:
            message = await self.get_message(timeout=None)
            if message is not None:
                yield message

    async def aclose(self) -> None:
        if self._session._reply_doorbell >= 0:
            self._loop.remove_reader(self._session._reply_doorbell)
        self._sync.close()
        self._session.close()

    close = reset = aclose


class _HostOf:
    """RingPubSub's client side for an asyncio PubSub: its session is the one given."""

    def __init__(self, session: _LoopSession):
        self._session = session

    def _new_connection(self) -> _LoopSession:
        return self._session
