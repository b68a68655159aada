"""cache.py — the ring client's near-cache: CacheConfig and the allow-list.

RingClient(cache_config=CacheConfig(max_size=...)) (client/ring.py's CachedRingClient) turns
CLIENT TRACKING on for its session when it attaches and keeps the replies of allow-listed,
read-only, single-key commands (GET's by key, the others by the whole argv) in a NearCache, a C
object (native/python/near_cache.c). The server writes an InvalidateMessage per modified key into
the session's reply ring before the writer's reply (or bumps the ring's invalidation epoch when
it cannot: then everything goes); before a cached answer is served, the NearCache's call runs
gr_client_cache_check, which looks at the ring's tail and epoch and takes any invalidations
waiting there, applied in the same call. This module is pure Python: `from goblin_ring import
CacheConfig` works without the compiled extensions.
"""

from __future__ import annotations

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
