"""scenario_cache.py — the `cache` scenario: client-side caching, read-mostly.

A read-mostly stream (95% GET, 5% SET; --value-size bytes) over 10,000 keys (--quick: 2,000)
picked with Zipf(1.1) popularity, one Python client doing both (its own writes invalidate its
own cached keys), driven one call at a time as an application does:
  - goblin ring: RingClient, and RingClient(cache_config=CacheConfig(max_size=keys)) — the
    near-cache of issue 34 (CLIENT TRACKING over the ring);
  - redis-server: redis-py, and redis-py with protocol=3 and its CacheConfig (its client-side
    cache). redis-py 8 enables its cache only for a server whose HELLO says version >= 7.4; the
    row is n/a, with that reason, against an older redis-server.
Besides the rates, a second client writes after every 100th read through the cache and the
cached client must then read the new value (the stale count reported must be 0), and the
plain GET row of the same run gives the target ratio: cached RingClient GET >= 5x uncached.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .scenarios import Method

KEYS_FULL, KEYS_QUICK = 10_000, 2_000
ZIPF_S = 1.1
WRITE_SHARE = 0.05


def _stream(keys: int, count: int, seed: int = 1) -> tuple[list[bytes], list[bool]]:
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** ZIPF_S for i in range(keys)]
    picks = rng.choices(range(keys), weights, k=count)
    return [b"k%d" % k for k in picks], [rng.random() < WRITE_SHARE for _ in range(count)]


def _drive(client: Any, names: list[bytes], writes: list[bool], value: bytes) -> float:
    get, set_ = client.get, client.set
    start = time.perf_counter()
    for name, write in zip(names, writes):
        if write:
            set_(name, value)
        else:
            get(name)
    return len(names) / (time.perf_counter() - start)


def _get_only(client: Any, names: list[bytes]) -> float:
    get = client.get
    start = time.perf_counter()
    for name in names:
        get(name)
    return len(names) / (time.perf_counter() - start)


def _stale_check(reader: Any, writer: Any, rounds: int) -> int:
    stale = 0
    for i in range(rounds):
        key = b"stale%d" % (i % 50)
        reader.get(key)
        writer.set(key, b"%d" % i)                       # acknowledged: the reader must see it now
        if reader.get(key) != b"%d" % i:
            stale += 1
    return stale


def cache_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    from .. import RespClient
    from ..client.cache import CacheConfig
    from ..client.ring import RingClient
    from .servers import GoblinServer, RedisLikeServer

    quick = method.n <= 5000
    keys = KEYS_QUICK if quick else KEYS_FULL
    count = max(method.n, 20_000)
    value = b"v" * method.value_size
    names, writes = _stream(keys, count)
    get_names = [n for n, w in zip(names, writes) if not w]
    out: dict[str, Any] = {"scenario": "cache", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [f"{count} ops, {keys} keys, Zipf({ZIPF_S}), {int(WRITE_SHARE * 100)}% SET, "
                                     f"one Python client, one call in flight; median of {method.trials} trials"],
                           "versions": {}, "load": []}
    if method.client_core is not None:
        os.sched_setaffinity(0, {method.client_core})

    def row(column: str, engine: str, operation: str, rates: list[float] | None, reason: str = "") -> None:
        out["columns"].append(column) if column not in out["columns"] else None
        if rates is None:
            out["rows"].append({"scenario": "cache", "engine": engine, "mode": "call", "column": column,
                                "operation": operation, "status": "n/a", "reason": reason})
        else:
            out["rows"].append({"scenario": "cache", "engine": engine, "mode": "call", "column": column,
                                "operation": operation, "status": "ok", "ops_per_s": statistics.median(rates),
                                "trials": [round(r, 1) for r in rates], "tool": "python"})

    def measure(make: Callable[[], Any], label: str, column: str, engine: str, loader: Any) -> None:
        mixed, plain_get = [], []
        for trial in range(method.trials):
            progress(f"cache {column}: trial {trial + 1}/{method.trials}")
            client = make()
            try:
                loader.flushall()
                for i in range(keys):
                    loader.set(b"k%d" % i, value)
                _drive(client, names[:4096], writes[:4096], value)          # warm-up
                mixed.append(_drive(client, names, writes, value))
                plain_get.append(_get_only(client, get_names))
            finally:
                client.close()
        row(column, engine, "read-mostly 95/5 Zipf", mixed)
        row(column, engine, "GET only (same keys)", plain_get)

    if "goblin-ring" in engines or "all" in engines:
        with tempfile.TemporaryDirectory() as scratch, GoblinServer(Path(scratch), method.server_core) as server:
            loader = RespClient(port=server.port)
            ring = dict(name=server.name, runtime_dir=scratch, timeout=120)
            measure(lambda: RingClient(**ring), "ring", "ring", "goblin-ring", loader)
            measure(lambda: RingClient(**ring, cache_config=CacheConfig(max_size=keys)), "ring+cache",
                    "ring+near-cache", "goblin-ring", loader)
            reader = RingClient(**ring, cache_config=CacheConfig(max_size=keys))
            writer = RingClient(**ring)
            stale = _stale_check(reader, writer, 2000)
            reader.close(), writer.close(), loader.close()
            out["checks"].append({"column": "ring+near-cache", "check": "0 stale reads after acknowledged writes "
                                  "(2000 rounds)", "ok": stale == 0, "detail": f"{stale} stale"})
            out["versions"]["goblin-ring"] = "this build"
            out["checks"].append({"column": "all", "check": "nothing left in /dev/shm",
                                  "ok": not server.leftovers(), "detail": ", ".join(server.leftovers()) or "none"})

    if "redis" in engines or "all" in engines:
        import redis
        from redis.cache import CacheConfig as RedisPyCacheConfig
        with tempfile.TemporaryDirectory() as scratch, RedisLikeServer("redis-server", method.server_core,
                                                                        Path(scratch)) as server:
            loader = redis.Redis(port=server.port)
            version = loader.info()["redis_version"]
            out["versions"]["redis"] = version
            measure(lambda: redis.Redis(port=server.port), "redis-py", "redis-py", "redis", loader)
            try:
                probe = redis.Redis(port=server.port, protocol=3, cache_config=RedisPyCacheConfig(max_size=keys))
                probe.get(b"k0")
                probe.close()
            except Exception as error:  # noqa: BLE001  (redis-py's refusal names the version it needs)
                reason = f"redis-py's client cache refused redis-server {version}: {error}"
                row("redis-py+cache", "redis", "read-mostly 95/5 Zipf", None, reason)
                row("redis-py+cache", "redis", "GET only (same keys)", None, reason)
            else:
                measure(lambda: redis.Redis(port=server.port, protocol=3,
                                            cache_config=RedisPyCacheConfig(max_size=keys)),
                        "redis-py+cache", "redis-py+cache", "redis", loader)
            loader.close()

    def rate(column: str, operation: str) -> float | None:
        for r in out["rows"]:
            if r["column"] == column and r["operation"] == operation and r["status"] == "ok":
                return r["ops_per_s"]
        return None

    cached, uncached = rate("ring+near-cache", "GET only (same keys)"), rate("ring", "GET only (same keys)")
    if cached and uncached:
        out["checks"].append({"column": "ring+near-cache", "check": "cached GET >= 5x uncached ring GET (same run)",
                              "ok": cached >= 5 * uncached, "detail": f"{cached / uncached:.1f}x"})
    progress.done()
    return out
