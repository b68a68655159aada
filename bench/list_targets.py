#!/usr/bin/env python3
"""list_targets.py — the list server's targets, goblin beside redis-server in one run.

1. Memory: N distinct V-byte values RPUSHed into one list; INFO used_memory delta and
   process RSS delta (psutil, server pid, baseline subtracted) per item, for both servers.
2. RESP fixed rows with redis-benchmark -P 256: LLEN, LINDEX 0 / N/2 / -1,
   LRANGE N/2-8 N/2+7, LSET N/2 — requests/s for goblin and redis, and the ratio.
3. Python per-call pipelined LINDEX N/2, depth 256: goblin RingClient pipeline against
   redis-py (+hiredis) pipeline to redis-server.
Servers are pinned to --server-core, clients (redis-benchmark, Python) to --client-core.

    python bench/list_targets.py [-n 200000] [--list-size 100000] [--value-size 16] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from goblin_ring import RespClient, RingClient  # noqa: E402
from servers import GoblinServer, free_port, wait_for_line  # noqa: E402

KEY = "mylist"


def values(count: int, size: int) -> list[bytes]:
    return [(b"%0*d" % (size, i))[-size:] for i in range(count)]


def rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def used_memory(client) -> int:
    return int(client.info("memory")["used_memory"])


def populate_and_measure(client, pid: int, items: list[bytes]) -> dict:
    client.delete(KEY)
    rss_before, used_before = rss(pid), used_memory(client)
    for start in range(0, len(items), 128):
        client.rpush(KEY, *items[start:start + 128])
    assert client.llen(KEY) == len(items)
    rss_after, used_after = rss(pid), used_memory(client)
    n = len(items)
    return {"info_bytes_per_item": (used_after - used_before) / n, "rss_bytes_per_item": (rss_after - rss_before) / n,
            "memory_usage_key": client.memory_usage(KEY)}


def redis_benchmark(port: int, n: int, pipeline: int, command: list[str], client_core: int) -> float:
    out = subprocess.run(["taskset", "-c", str(client_core), "redis-benchmark", "-p", str(port), "-n", str(n),
                          "-P", str(pipeline), "-c", "1", "--csv", *command],
                         capture_output=True, text=True, check=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    return float(rows[-1][1])


def python_pipelined_lindex(client, index: int, n: int, depth: int) -> float:
    start = time.perf_counter()
    for _ in range(n // depth):
        pipe = client.pipeline(transaction=False) if not isinstance(client, RingClient) else client.pipeline()
        for _ in range(depth):
            pipe.lindex(KEY, index)
        results = pipe.execute()
    elapsed = time.perf_counter() - start
    assert results[0] is not None
    return (n // depth) * depth / elapsed


def start_redis(server_core: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    process = subprocess.Popen(["taskset", "-c", str(server_core), "redis-server", "--port", str(port),
                                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", "/tmp"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    wait_for_line(process, process.stdout, "Ready to accept connections")
    return process, port


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200_000, help="requests per row")
    parser.add_argument("-P", type=int, default=256, dest="pipeline")
    parser.add_argument("--list-size", type=int, default=100_000)
    parser.add_argument("--value-size", type=int, default=16)
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    parser.add_argument("--json")
    arguments = parser.parse_args()
    if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
        sys.exit("needs redis-server and redis-benchmark (apt-get install redis-server redis-tools)")
    n, size = arguments.list_size, arguments.value_size
    items = values(n, size)
    middle = n // 2
    rows = [("LLEN", ["LLEN", KEY]), ("LINDEX 0", ["LINDEX", KEY, "0"]),
            (f"LINDEX {middle}", ["LINDEX", KEY, str(middle)]), ("LINDEX -1", ["LINDEX", KEY, "-1"]),
            (f"LRANGE {middle - 8} {middle + 7}", ["LRANGE", KEY, str(middle - 8), str(middle + 7)]),
            (f"LSET {middle}", ["LSET", KEY, str(middle), items[middle].decode()])]
    report: dict = {"list_size": n, "value_size": size, "requests": arguments.n, "pipeline": arguments.pipeline,
                    "server_core": arguments.server_core, "client_core": arguments.client_core}

    with tempfile.TemporaryDirectory(prefix="goblin-bench-") as runtime:
        goblin = GoblinServer(Path(runtime), "--server-core", str(arguments.server_core), "--poll", "busy").start()
        os.sched_setaffinity(0, {arguments.client_core})
        try:
            with RespClient(port=goblin.port) as resp, RingClient(name=goblin.name, runtime_dir=runtime) as ring:
                report["goblin_memory"] = populate_and_measure(resp, goblin.pid, items)
                report["goblin_resp"] = {label: redis_benchmark(goblin.port, arguments.n, arguments.pipeline,
                                                                command, arguments.client_core)
                                         for label, command in rows}
                report["goblin_ring_python_pipelined_lindex"] = python_pipelined_lindex(
                    ring, middle, arguments.n, arguments.pipeline)
        finally:
            goblin.stop()
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    redis_process, redis_port = start_redis(arguments.server_core)
    os.sched_setaffinity(0, {arguments.client_core})
    try:
        import redis

        with RespClient(port=redis_port) as resp:
            report["redis_memory"] = populate_and_measure(resp, redis_process.pid, items)
        report["redis_resp"] = {label: redis_benchmark(redis_port, arguments.n, arguments.pipeline, command,
                                                       arguments.client_core) for label, command in rows}
        report["redis_py_pipelined_lindex"] = python_pipelined_lindex(
            redis.Redis(port=redis_port), middle, arguments.n, arguments.pipeline)
        report["redis_version"] = redis.Redis(port=redis_port).info("server")["redis_version"]
    finally:
        redis_process.terminate()
        redis_process.wait()
        redis_process.stdout.close()

    print(f"list of {n} x {size} B; redis-benchmark -n {arguments.n} -P {arguments.pipeline}; "
          f"server core {arguments.server_core}, client core {arguments.client_core}; redis {report['redis_version']}")
    print(f"\n{'row':<24}{'goblin-resp/s':>15}{'redis/s':>15}{'ratio':>8}")
    for label, _ in rows:
        g, r = report["goblin_resp"][label], report["redis_resp"][label]
        print(f"{label:<24}{g:>15,.0f}{r:>15,.0f}{g / r:>8.2f}")
    g, r = report["goblin_ring_python_pipelined_lindex"], report["redis_py_pipelined_lindex"]
    print(f"\nPython pipelined LINDEX {middle} (depth {arguments.pipeline}): RingClient {g:,.0f}/s, "
          f"redis-py+hiredis {r:,.0f}/s, ratio {g / r:.2f}")
    print(f"\n{'memory per item':<24}{'goblin':>10}{'redis':>10}")
    for field in ("info_bytes_per_item", "rss_bytes_per_item"):
        print(f"{field:<24}{report['goblin_memory'][field]:>10.2f}{report['redis_memory'][field]:>10.2f}")
    print(f"{'MEMORY USAGE key':<24}{report['goblin_memory']['memory_usage_key']:>10}"
          f"{report['redis_memory']['memory_usage_key']:>10}")
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
