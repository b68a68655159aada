"""python_clients.py — what a Python service would run, side by side: GET through goblin's
RingClient (sync), redis.Redis over goblin_ring.redispy.RingConnectionPool, and
goblin_ring.asyncio.RingClient (1 task, and N concurrent tasks), beside redis-py's redis.Redis
and redis.asyncio.Redis (with hiredis when installed) over a Unix socket to redis-server. Each
ratio is stated against its like: a sync row against redis.Redis, an asyncio row against
redis.asyncio with the same number of tasks. The breakdown rows say where a redis.Redis GET
over the ring spends its time: the ring call alone (RingClient.get), RingConnection's
send_command + read_response (redis-py's connection interface, no client or pool above it),
and the whole redis.Redis.get (redis-py's command method, pool, retry and response callback).

    python -m goblin_ring.bench.python_clients [-n N] [--tasks 100] [--server-core 0] [--client-core 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from .servers import GoblinServer, RedisLikeServer


def _sync_rate(client, n: int) -> float:
    get = client.get
    start = time.perf_counter()
    for _ in range(n):
        get(b"key")
    return n / (time.perf_counter() - start)


def _connection_rate(connection, n: int) -> float:
    send, read = connection.send_command, connection.read_response
    start = time.perf_counter()
    for _ in range(n):
        send("GET", b"key")
        read()
    return n / (time.perf_counter() - start)


async def _async_rate(client, n: int, tasks: int) -> float:
    per_task = n // tasks

    async def worker():
        get = client.get
        for _ in range(per_task):
            await get(b"key")

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    return per_task * tasks / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50000, help="GETs per row and trial")
    parser.add_argument("--tasks", type=int, default=100, help="concurrent tasks of the many-task rows")
    parser.add_argument("--trials", type=int, default=3, help="trials per row; the median is reported")
    parser.add_argument("--server-core", type=int, default=None)
    parser.add_argument("--client-core", type=int, default=None)
    options = parser.parse_args(argv)
    import redis
    import redis.asyncio

    from .. import RingClient
    from ..asyncio import RingClient as AsyncRingClient
    from ..redispy import RingConnectionPool
    from ..redispy_asyncio import AsyncRingConnectionPool

    if options.client_core is not None:
        os.sched_setaffinity(0, {options.client_core})
    n, tasks = options.n, options.tasks
    rows: dict[str, list[float]] = {}

    def add(row: str, rate: float) -> None:
        rows.setdefault(row, []).append(rate)

    # One server at a time, each pinned to the server core: a busy-polling goblin beside an
    # idle redis-server on the same core would take redis's time slices.
    with tempfile.TemporaryDirectory() as scratch:
        socket_path = str(Path(scratch) / "redis.sock")
        for _ in range(options.trials):
            with RedisLikeServer("redis-server", options.server_core, Path(scratch), "--unixsocket", socket_path,
                                 "--unixsocketperm", "700"):
                uds = redis.Redis(unix_socket_path=socket_path)
                uds.set(b"key", b"x" * 16)
                add("redis.Redis UDS", _sync_rate(uds, n))
                uds.close()

                async def redis_async_rows() -> None:
                    auds = redis.asyncio.Redis(unix_socket_path=socket_path, max_connections=tasks + 1)
                    await asyncio.gather(*(auds.ping() for _ in range(tasks)))   # its connections made first
                    add("redis.asyncio UDS, 1 task", await _async_rate(auds, n, 1))
                    add(f"redis.asyncio UDS, {tasks} tasks", await _async_rate(auds, n, tasks))
                    await auds.aclose()

                asyncio.run(redis_async_rows())
            with GoblinServer(Path(scratch) / "run", options.server_core) as goblin:
                ring = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir)
                ring.set(b"key", b"x" * 16)
                add("RingClient", _sync_rate(ring, n))
                ring.close()
                over_ring = redis.Redis(connection_pool=RingConnectionPool(name=goblin.name,
                                                                          runtime_dir=goblin.runtime_dir))
                add("redis.Redis over RingConnectionPool", _sync_rate(over_ring, n))
                connection = over_ring.connection_pool.get_connection()
                add("  breakdown: RingConnection send_command + read_response", _connection_rate(connection, n))
                over_ring.connection_pool.release(connection)
                over_ring.connection_pool.disconnect()

                async def goblin_async_rows() -> None:
                    aring = AsyncRingClient(name=goblin.name, runtime_dir=goblin.runtime_dir)
                    add("asyncio RingClient, 1 task", await _async_rate(aring, n, 1))
                    add(f"asyncio RingClient, {tasks} tasks", await _async_rate(aring, n, tasks))
                    await aring.aclose()
                    twin = redis.asyncio.Redis(connection_pool=AsyncRingConnectionPool(
                        name=goblin.name, runtime_dir=goblin.runtime_dir, max_connections=tasks + 1))
                    await asyncio.gather(*(twin.ping() for _ in range(tasks)))   # its sessions attached first
                    add("redis.asyncio over AsyncRingConnectionPool, 1 task", await _async_rate(twin, n, 1))
                    add(f"redis.asyncio over AsyncRingConnectionPool, {tasks} tasks", await _async_rate(twin, n, tasks))
                    await twin.aclose()

                asyncio.run(goblin_async_rows())
    median = {row: statistics.median(values) for row, values in rows.items()}
    baseline = {"RingClient": "redis.Redis UDS", "redis.Redis over RingConnectionPool": "redis.Redis UDS",
                "asyncio RingClient, 1 task": "redis.asyncio UDS, 1 task",
                f"asyncio RingClient, {tasks} tasks": f"redis.asyncio UDS, {tasks} tasks",
                "redis.asyncio over AsyncRingConnectionPool, 1 task": "redis.asyncio UDS, 1 task",
                f"redis.asyncio over AsyncRingConnectionPool, {tasks} tasks": f"redis.asyncio UDS, {tasks} tasks"}
    try:
        import hiredis  # noqa: F401
        parser_name = "hiredis"
    except ImportError:
        parser_name = "redis-py's Python parser"
    print(f"GET of a 16-byte value, -n {n}, median of {options.trials}; server core {options.server_core}, "
          f"client core {options.client_core}; redis-py {redis.__version__} with {parser_name}\n")
    print("| row | GET/s | us/GET | ratio | baseline of the ratio |\n|---|---|---|---|---|")
    for row, rate in median.items():
        base = baseline.get(row)
        ratio = f"{rate / median[base]:.2f}x" if base else ""
        print(f"| {row} | {rate:,.0f} | {1e6 / rate:.1f} | {ratio} | {base or ''} |")
    print(f"\ntrials: " + "; ".join(f"{row.strip()}: " + ", ".join(f"{v:,.0f}" for v in values)
                                   for row, values in rows.items()))


if __name__ == "__main__":
    main()
