"""ring_pubsub.py — RingClient.pubsub(): redis-py's PubSub (client/pubsub.py's) over a ring session.

The subscription bookkeeping, handlers, listen() and run_in_thread are pubsub.py's PubSub, the
same object RespClient.pubsub() returns; this file is the ring's reading. The PubSub attaches
a session of its own at its first subscription (RingClient._new_connection). The server writes
each message for it straight into that session's reply ring as a typed PushMessage, between
the replies (ring/session.c), and native/client/client_pubsub.c drains the ring in one C call,
writing what it read as one marshal'd list: a message is already redis-py's dict, a reply
(a confirmation, PING's PONG) the value a plain call returns. So get_message is one C call and
one plain_loads (marshal.loads's subset, native/python/plain_loads.c), and get_messages(max_count)
the same for a whole batch:

    with RingClient(name="goblin") as r:
        p = r.pubsub()
        p.subscribe("news")
        p.get_message(timeout=1.0)          # {'type': 'subscribe', ..., 'data': 1}
        r.publish("news", "hello")
        p.get_messages(1000, timeout=1.0)   # [{'type': 'message', 'pattern': None, 'channel': b'news', 'data': b'hello'}]
"""

from __future__ import annotations

import collections
import threading
from typing import Any

from .. import _native
from ..errors import ConnectionError, error_from_reply
from .pubsub import PubSub

_lib, _ffi = _native.lib, _native.ffi
_loads = _native.plain_loads
_read = _lib.gr_client_pubsub_read
_BUFFER = 1 << 18
READ_AHEAD = 256            # items get_message takes from the ring per C call
_PUBLISH_TYPES = frozenset(("message", "pmessage", "smessage"))


class RingPubSub(PubSub):
    """pubsub.py's PubSub, reading its ring session with client_pubsub.c."""

    def __init__(self, client: Any, ignore_subscribe_messages: bool = False):
        super().__init__(client, ignore_subscribe_messages=ignore_subscribe_messages)
        self._read_lock = threading.Lock()      # the reply ring has one consumer
        self._buffer = bytearray(_BUFFER)
        self._buffer_pointer = _ffi.from_buffer("uint8_t[]", self._buffer)
        self._capacity = _BUFFER
        self._ahead: collections.deque = collections.deque()   # items read, not yet handed out
        self._count = _ffi.new("uint32_t *")
        self._status = _ffi.new("int *")

    @property
    def connection(self) -> Any:
        """The RingClient whose session subscribes (None before the first subscription)."""
        return self._connection

    def close(self) -> None:
        with self._read_lock:
            super().close()
            self._ahead.clear()

    reset = close

    def _items(self, max_count: int, timeout: float | None) -> list:
        """Up to max_count raw items in one C call — message dicts, ('reply', value),
        ('error', code, text) — waiting up to timeout seconds for the first (None: until one
        comes; the server's exit ends the wait with ConnectionError)."""
        timeout_ns = -1 if timeout is None else int(timeout * 1e9)
        with self._read_lock:
            connection = self._connection
            if connection is None:
                return []
            core = connection._live()
            while True:
                written = _read(core.pointer, max_count, timeout_ns, self._buffer_pointer, len(self._buffer),
                                self._count, self._status)
                if written >= 0:
                    break
                self._buffer = bytearray(max(-written - 1, 2 * len(self._buffer)))   # one item was larger
                self._buffer_pointer = _ffi.from_buffer("uint8_t[]", self._buffer)
                self._capacity = len(self._buffer)
            items = _loads(self._buffer) if self._count[0] else []
            status = self._status[0]
        if status and not items:        # what came before a failure first; the next read raises it
            core.check(status)
        return items

    @staticmethod
    def _raw(item: Any) -> Any:
        if item.__class__ is dict:
            return item
        if item[0] == "error":
            raise error_from_reply(item[2].decode(errors="replace"), item[1])
        return item[1]

    def _read(self, timeout: float | None) -> Any:
        if self._ahead:
            return self._raw(self._ahead.popleft())
        items = self._items(1, timeout)
        return self._raw(items[0]) if items else None

    def _has_handlers(self) -> bool:
        return any(h is not None for table in (self.channels, self.patterns, self.shard_channels)
                   for h in table.values())

    def handle_message(self, response: Any, ignore_subscribe_messages: bool = False) -> dict | None:
        if response.__class__ is not dict:      # a reply: pubsub.py builds its dict
            return super().handle_message(response, ignore_subscribe_messages)
        kind = response["type"]                 # a PushMessage: already redis-py's dict
        if kind == "pmessage":
            handler = self.patterns.get(response["pattern"])
        elif kind == "smessage":
            handler = self.shard_channels.get(response["channel"])
        else:
            handler = self.channels.get(response["channel"])
        if handler is not None:
            handler(response)
            return None
        return response

    def get_message(self, ignore_subscribe_messages: bool = False, timeout: float | None = 0.0) -> dict | None:
        """The next message (pubsub.py's get_message). Read ahead: one C call takes up to
        READ_AHEAD items already in the ring, and the next calls hand them out one by one (as
        redis-py parses replies out of the bytes one socket read brought)."""
        ahead = self._ahead
        if not ahead:
            if self._connection is None:
                return None
            items = self._items(READ_AHEAD, timeout)
            if not items:
                return None
            ahead.extend(items)
        return self.handle_message(self._raw(ahead.popleft()), ignore_subscribe_messages)

    def get_messages(self, max_count: int = 1024, timeout: float | None = 0.0,
                     ignore_subscribe_messages: bool = False) -> list[dict]:
        """Up to max_count messages drained in one C call, waiting up to timeout seconds
        (None: until one comes) for the first; each as get_message would return it, handlers
        run as get_message runs them."""
        ahead = self._ahead
        if ahead:                               # what get_message read ahead comes first
            items = [ahead.popleft() for _ in range(min(max_count, len(ahead)))]
            if len(items) < max_count and self._connection is not None:
                items += self._items(max_count - len(items), 0)
        elif self._connection is None:
            return []
        else:
            items = self._items(max_count, timeout)
        if not self._has_handlers():
            messages = [item for item in items if item.__class__ is dict]
            if len(messages) == len(items):
                return messages
        out = []
        for item in items:
            message = self.handle_message(self._raw(item), ignore_subscribe_messages)
            if message is not None:
                out.append(message)
        return out
