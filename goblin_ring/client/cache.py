"""cache.py — the ring client's near-cache: CacheConfig and the cache a session keeps.

RingClient(cache_config=CacheConfig(max_size=...)) (client/ring.py's CachedRingClient) turns
CLIENT TRACKING on for its session when it attaches and keeps the replies of allow-listed,
read-only, single-key commands here, keyed by the whole argv. The server writes an
InvalidateMessage per modified key into the session's reply ring before the writer's reply
(or bumps the ring's invalidation epoch when it cannot: then everything goes); before a cached
answer is served, one C call (gr_client_cache_check) looks at the ring's tail and epoch and
takes any invalidations waiting there. This module is pure Python: `from goblin_ring import
CacheConfig` works without the compiled extension.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from typing import Any

# Read-only commands of one key (argv[1]) whose reply depends only on that key's value (no
# clock: TTL and friends are left out), so that the key's invalidation covers the reply.
ALLOWED_COMMANDS = frozenset({
    b"GET", b"STRLEN", b"GETRANGE", b"SUBSTR", b"GETBIT", b"BITCOUNT", b"BITPOS",
    b"HGET", b"HGETALL", b"HMGET", b"HKEYS", b"HVALS", b"HLEN", b"HEXISTS", b"HSTRLEN",
    b"LRANGE", b"LINDEX", b"LLEN", b"LPOS",
    b"SMEMBERS", b"SISMEMBER", b"SMISMEMBER", b"SCARD",
    b"ZSCORE", b"ZMSCORE", b"ZRANGE", b"ZRANGEBYSCORE", b"ZRANGEBYLEX", b"ZREVRANGE",
    b"ZREVRANGEBYSCORE", b"ZREVRANGEBYLEX", b"ZRANK", b"ZREVRANK", b"ZCARD", b"ZCOUNT", b"ZLEXCOUNT",
    b"XLEN", b"XRANGE", b"XREVRANGE", b"TYPE", b"EXISTS",
})


class CacheConfig:
    """The near-cache's settings: max_size, the most replies kept (least recently used go
    first). RingClient also takes redis-py's redis.cache.CacheConfig (its max size is used)."""

    DEFAULT_MAX_SIZE = 10000

    def __init__(self, max_size: int = DEFAULT_MAX_SIZE):
        if type(max_size) is not int or max_size < 1:
            raise ValueError('"max_size" must be a positive integer')
        self.max_size = max_size

    def get_max_size(self) -> int:          # redis-py's CacheConfig's spelling
        return self.max_size

    @classmethod
    def of(cls, config: Any) -> "CacheConfig":
        """This module's CacheConfig for config: one of ours, redis-py's, or anything with
        get_max_size() or max_size."""
        if isinstance(config, CacheConfig):
            return config
        getter = getattr(config, "get_max_size", None)
        size = getter() if callable(getter) else getattr(config, "max_size", None)
        if size is None:
            raise TypeError(f"cache_config must be a CacheConfig, not {type(config).__name__}")
        return cls(int(size))


class CacheStats:
    __slots__ = ("hits", "misses", "invalidations", "flushes")

    def __init__(self) -> None:
        self.hits = self.misses = self.invalidations = self.flushes = 0

    def __repr__(self) -> str:
        return (f"CacheStats(hits={self.hits}, misses={self.misses}, invalidations={self.invalidations}, "
                f"flushes={self.flushes})")


class NearCache:
    """One session's cached replies: argv tuple -> reply, in LRU order, and key -> the argvs
    cached for it (what an invalidation removes). Used by its session's thread only (a
    RingClient's other threads have sessions, and caches, of their own)."""

    def __init__(self, config: CacheConfig):
        self.config = config
        self.max_size = config.max_size
        self.entries: OrderedDict = OrderedDict()
        self.by_key: dict = {}
        self.stats = CacheStats()

    def __len__(self) -> int:
        return len(self.entries)

    def clear(self) -> None:
        """Forget every cached reply (the server's tracking stays on)."""
        self.entries.clear()
        self.by_key.clear()

    def store(self, argv: tuple, key: bytes, value: Any) -> None:
        entries = self.entries
        if argv not in entries:
            self.by_key.setdefault(key, []).append(argv)
            if len(entries) >= self.max_size:
                old, _ = entries.popitem(last=False)
                self._unindex(old)
        entries[argv] = value

    def _unindex(self, argv: tuple) -> None:
        argvs = self.by_key.get(argv[1])
        if argvs is not None:
            try:
                argvs.remove(argv)
            except ValueError:
                pass
            if not argvs:
                del self.by_key[argv[1]]

    def invalidate(self, key: bytes) -> None:
        argvs = self.by_key.pop(key, None)
        self.stats.invalidations += 1
        if argvs:
            entries = self.entries
            for argv in argvs:
                entries.pop(argv, None)

    def invalidate_packed(self, packed: bytes) -> None:
        """Keys as gr_client_cache_take gives them: {u32 length, bytes} each."""
        at, end = 0, len(packed)
        while at < end:
            length = int.from_bytes(packed[at:at + 4], sys.byteorder)
            self.invalidate(bytes(packed[at + 4:at + 4 + length]))
            at += 4 + length

    def flush(self) -> None:
        self.stats.flushes += 1
        self.clear()
