"""pubsub.py — PubSub: redis-py's Pub/Sub object for RespClient (client.pubsub()).

It holds a RESP connection of its own (opened at the first subscription, with the client's
address and credentials), because a subscribed RESP2 connection may run only the
(un)subscribe commands, PING, QUIT and RESET. The shape is redis-py's, so code written for
redis-py's PubSub runs unchanged:

    p = client.pubsub(ignore_subscribe_messages=True)
    p.subscribe("news", alerts=handler)         # handlers: called with the message dict
    p.psubscribe("news.*")
    message = p.get_message(timeout=1.0)        # None if nothing came in time
    for message in p.listen(): ...              # blocks; ends when nothing is subscribed
    worker = p.run_in_thread(sleep_time=0.1)    # every subscription needs a handler
    worker.stop()

A message is a dict {"type", "pattern", "channel", "data"}: type is "message", "pmessage",
"smessage", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
"sunsubscribe" or "pong"; channel, pattern and data are bytes (data is the subscription
count for the (un)subscribe types). It works against goblin-ring, redis-server and valkey.
"""

from __future__ import annotations

import select
import socket
import threading
from typing import Any, Callable, Iterator

from ..errors import ConnectionError, PubSubError, TimeoutError, error_from_reply
from .commands.core import encode

Handler = Callable[[dict], Any]

_PUBLISH_TYPES = frozenset((b"message", b"pmessage", b"smessage"))
_UNSUBSCRIBE_TYPES = frozenset((b"unsubscribe", b"punsubscribe", b"sunsubscribe"))
_UNDO = {b"subscribe": b"unsubscribe", b"psubscribe": b"punsubscribe", b"ssubscribe": b"sunsubscribe"}


class PubSub:
    """Subscriptions on a connection of their own; see the module's docstring."""

    def __init__(self, client: Any, ignore_subscribe_messages: bool = False):
        self._client = client
        self.ignore_subscribe_messages = ignore_subscribe_messages
        self.channels: dict[bytes, Handler | None] = {}
        self.patterns: dict[bytes, Handler | None] = {}
        self.shard_channels: dict[bytes, Handler | None] = {}
        self._pending_unsubscribe: dict[bytes, set[bytes]] = {b"unsubscribe": set(), b"punsubscribe": set(),
                                                              b"sunsubscribe": set()}
        self._connection: Any = None
        self._send_lock = threading.Lock()

    # ---- the connection ----

    def _connect(self) -> Any:
        if self._connection is None:
            self._connection = self._client._new_connection()
        return self._connection

    def close(self) -> None:
        """Drop the connection and every subscription (the server forgets them at once)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self.channels.clear()
        self.patterns.clear()
        self.shard_channels.clear()
        for pending in self._pending_unsubscribe.values():
            pending.clear()

    reset = close

    def __enter__(self) -> "PubSub":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    @property
    def subscribed(self) -> bool:
        """True while any channel, pattern or shard channel is subscribed (or being dropped)."""
        return bool(self.channels or self.patterns or self.shard_channels)

    def _send(self, *argv: Any) -> None:
        connection = self._connect()
        with self._send_lock:
            connection._send_command(tuple(encode(a) for a in argv))

    # ---- subscribing ----

    @staticmethod
    def _named(args: tuple, kwargs: dict) -> dict[bytes, Handler | None]:
        names: dict[bytes, Handler | None] = {}
        for arg in args:
            for name in (arg if isinstance(arg, (list, tuple, set)) else (arg,)):
                names[encode(name)] = None
        for name, handler in kwargs.items():
            names[encode(name)] = handler
        return names

    def _subscribe(self, command: bytes, table: dict, args: tuple, kwargs: dict) -> None:
        names = self._named(args, kwargs)
        if not names:
            raise PubSubError(f"{command.decode()} needs at least one name")
        self._send(command, *names)
        table.update(names)
        self._pending_unsubscribe[_UNDO[command]].difference_update(names)

    def subscribe(self, *args: Any, **kwargs: Handler) -> None:
        """Subscribe to channels; keyword arguments name a channel and its handler."""
        self._subscribe(b"subscribe", self.channels, args, kwargs)

    def psubscribe(self, *args: Any, **kwargs: Handler) -> None:
        """Subscribe to glob patterns; keyword arguments name a pattern and its handler."""
        self._subscribe(b"psubscribe", self.patterns, args, kwargs)

    def ssubscribe(self, *args: Any, **kwargs: Handler) -> None:
        """Subscribe to shard channels; keyword arguments name one and its handler."""
        self._subscribe(b"ssubscribe", self.shard_channels, args, kwargs)

    def _unsubscribe(self, command: bytes, table: dict, args: tuple) -> None:
        names = list(self._named(args, {})) if args else list(table)
        if self._connection is None:
            return
        self._send(command, *names)
        self._pending_unsubscribe[command].update(names)

    def unsubscribe(self, *args: Any) -> None:
        """Unsubscribe from the channels named, or from every channel."""
        self._unsubscribe(b"unsubscribe", self.channels, args)

    def punsubscribe(self, *args: Any) -> None:
        self._unsubscribe(b"punsubscribe", self.patterns, args)

    def sunsubscribe(self, *args: Any) -> None:
        self._unsubscribe(b"sunsubscribe", self.shard_channels, args)

    def ping(self, message: Any = None) -> None:
        """PING on the subscribed connection; its answer comes back as a "pong" message."""
        self._send(b"PING", *(() if message is None else (message,)))

    # ---- reading ----

    def _read(self, timeout: float | None) -> Any:
        """One reply from the connection, or None when none came within timeout (None: wait)."""
        connection = self._connection
        if connection is None:
            return None
        return connection._read_reply_within(timeout)

    def handle_message(self, response: Any, ignore_subscribe_messages: bool = False) -> dict | None:
        """The dict for one reply; None when a handler took it or it is an ignored confirmation."""
        if response is None:
            return None
        if isinstance(response, bytes):                      # RESP3-style +PONG outside subscribed mode
            response = [b"pong", b"" if response == b"PONG" else response]
        kind = response[0]
        if kind == b"pmessage":
            message = {"type": "pmessage", "pattern": response[1], "channel": response[2], "data": response[3]}
        elif kind == b"pong":
            message = {"type": "pong", "pattern": None, "channel": None, "data": response[1]}
        else:
            message = {"type": kind.decode(), "pattern": None, "channel": response[1], "data": response[2]}
        if kind in _UNSUBSCRIBE_TYPES:
            table = {b"unsubscribe": self.channels, b"punsubscribe": self.patterns,
                     b"sunsubscribe": self.shard_channels}[kind]
            name = response[1]
            pending = self._pending_unsubscribe[kind]
            if name in pending:
                pending.discard(name)
                table.pop(name, None)
        if kind in _PUBLISH_TYPES:
            if kind == b"pmessage":
                handler = self.patterns.get(message["pattern"])
            elif kind == b"smessage":
                handler = self.shard_channels.get(message["channel"])
            else:
                handler = self.channels.get(message["channel"])
            if handler is not None:
                handler(message)
                return None
        elif kind != b"pong" and (ignore_subscribe_messages or self.ignore_subscribe_messages):
            return None
        return message

    def get_message(self, ignore_subscribe_messages: bool = False, timeout: float | None = 0.0) -> dict | None:
        """The next message, waiting up to timeout seconds (0: only what has arrived; None:
        wait for one). None when nothing came, or a handler took it, or it was an ignored
        confirmation."""
        if self._connection is None:
            return None
        return self.handle_message(self._read(timeout), ignore_subscribe_messages)

    def get_sharded_message(self, ignore_subscribe_messages: bool = False, timeout: float | None = 0.0) -> dict | None:
        return self.get_message(ignore_subscribe_messages, timeout)

    def listen(self) -> Iterator[dict]:
        """Every message as it comes, until nothing is subscribed."""
        while self.subscribed:
            message = self.handle_message(self._read(None))
            if message is not None:
                yield message

    def run_in_thread(self, sleep_time: float = 0.0, daemon: bool = False,
                      exception_handler: Callable[[BaseException, "PubSub", "PubSubWorkerThread"], None] | None = None
                      ) -> "PubSubWorkerThread":
        """Read in a thread that hands each message to its handler; every subscription must
        have one. stop() ends it (within sleep_time, or 50 ms) and closes the connection."""
        for table in (self.channels, self.patterns, self.shard_channels):
            for name, handler in table.items():
                if handler is None:
                    raise PubSubError(f"Channel: '{name!r}' has no handler registered")
        thread = PubSubWorkerThread(self, sleep_time, daemon=daemon, exception_handler=exception_handler)
        thread.start()
        return thread


class PubSubWorkerThread(threading.Thread):
    def __init__(self, pubsub: PubSub, sleep_time: float, daemon: bool = False, exception_handler=None):
        super().__init__(daemon=daemon)
        self.pubsub = pubsub
        self.sleep_time = sleep_time
        self.exception_handler = exception_handler
        self._running = threading.Event()

    def run(self) -> None:
        if self._running.is_set():
            return
        self._running.set()
        wait = self.sleep_time if self.sleep_time and self.sleep_time > 0 else 0.05
        while self._running.is_set():
            try:
                self.pubsub.get_message(ignore_subscribe_messages=True, timeout=wait)
            except BaseException as error:
                if self.exception_handler is None:
                    raise
                self.exception_handler(error, self.pubsub, self)
        self.pubsub.close()

    def stop(self) -> None:
        self._running.clear()


def read_reply_within(connection: Any, sock: socket.socket, reader: Any, timeout: float | None) -> Any:
    """RespClient's helper for PubSub: one parsed reply, or None when none arrives in timeout."""
    value = reader.gets()
    while value is False:
        if timeout is not None:
            ready, _, _ = select.select([sock], [], [], timeout)
            if not ready:
                return None
        try:
            data = sock.recv(65536)
        except socket.timeout as error:
            raise TimeoutError("timed out waiting for a message") from error
        except OSError as error:
            raise ConnectionError(f"receive failed: {error}") from error
        if not data:
            raise ConnectionError("the server closed the connection")
        reader.feed(data)
        value = reader.gets()
    if isinstance(value, Exception) and not isinstance(value, (bytes, list)):
        raise error_from_reply(str(value))
    return value
