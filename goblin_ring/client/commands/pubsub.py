"""pubsub.py — PubSubCommands: PUBLISH, SPUBLISH and the PUBSUB introspection subcommands, with
redis-py's names and return shapes, written once for both transports (see core.py).

Subscribing needs a connection of its own that reads messages as they come: that is the
PubSub object (goblin_ring/client/pubsub.py), made by client.pubsub(), as in redis-py.
"""

from __future__ import annotations

from typing import Any

from .core import CommandsCore, encode, keys_of


def _pairs(reply: Any) -> list:
    """PUBSUB NUMSUB's flat [channel, count, ...] as redis-py's [(channel, count), ...]."""
    return list(zip(reply[::2], reply[1::2])) if reply else []


class PubSubCommands(CommandsCore):

    def publish(self, channel: Any, message: Any) -> int:
        """Post message to channel; returns how many subscriptions received it."""
        return self._execute((b"PUBLISH", encode(channel), encode(message)))

    def spublish(self, shard_channel: Any, message: Any) -> int:
        return self._execute((b"SPUBLISH", encode(shard_channel), encode(message)))

    def pubsub_channels(self, pattern: Any = "*") -> list:
        return self._execute((b"PUBSUB", b"CHANNELS", encode(pattern)))

    def pubsub_shardchannels(self, pattern: Any = "*") -> list:
        return self._execute((b"PUBSUB", b"SHARDCHANNELS", encode(pattern)))

    def pubsub_numpat(self) -> int:
        return self._execute((b"PUBSUB", b"NUMPAT"))

    def pubsub_numsub(self, *args: Any) -> list:
        return self._execute((b"PUBSUB", b"NUMSUB", *keys_of(args)), _pairs)

    def pubsub_shardnumsub(self, *args: Any) -> list:
        return self._execute((b"PUBSUB", b"SHARDNUMSUB", *keys_of(args)), _pairs)
