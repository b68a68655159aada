"""dump_restore.py — issue 35: DUMP and RESTORE throughput, goblin beside redis-server 7.0, now
that both speak Redis's payload format.

    python bench/dump_restore.py [--elements 1000] [--batch 200] [--rounds 7] [--server-core 0] [--client-core 1]

Each server in turn (pinned to --server-core; this client to --client-core) gets one key per
type of --elements elements (a hash, a sorted set; a list, a set and a stream too), then for
each key: a pipeline of --batch DUMPs, and a pipeline of --batch RESTORE ... REPLACE of the
server's own payload, best of --rounds. Printed: calls per second per server and goblin/redis.
Both servers are driven by the same redis-py client code, so the client's cost is the same.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import redis as redis_py

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from repl_sync import goblin, redis, stop  # noqa: E402


def populate(c, n: int) -> list[str]:
    c.hset("hash", mapping={f"field:{i}": f"value-{i}" for i in range(n)})
    c.zadd("zset", {f"member:{i}": i * 1.5 for i in range(n)})
    c.rpush("list", *[f"element-{i}" for i in range(n)])
    c.sadd("set", *[f"m{i}" for i in range(n)])
    for i in range(n):
        c.xadd("stream", {"n": str(i), "text": "payload"}, id=f"{i + 1}-0")
    return ["hash", "zset", "list", "set", "stream"]


def best(run, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(port: int, options) -> dict:
    c = redis_py.Redis(port=port, socket_timeout=120)
    keys = populate(c, options.elements)
    out = {}
    for key in keys:
        payload = c.dump(key)

        def dumps():
            p = c.pipeline(transaction=False)
            for _ in range(options.batch):
                p.dump(key)
            p.execute()

        def restores():
            p = c.pipeline(transaction=False)
            for i in range(options.batch):
                p.restore(f"copy:{i}", 0, payload, replace=True)
            p.execute()

        out[key] = (options.batch / best(dumps, options.rounds), options.batch / best(restores, options.rounds),
                    len(payload))
    c.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--elements", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    options = parser.parse_args()
    os.sched_setaffinity(0, {options.client_core})
    prefix = ("taskset", "-c", str(options.server_core))
    results = {}
    with tempfile.TemporaryDirectory(prefix="dump-restore-") as root:
        for name, start in (("redis", lambda d: redis(d, prefix=prefix)), ("goblin", lambda d: goblin(d, prefix=prefix))):
            process, port = start(Path(root) / name)
            try:
                results[name] = measure(port, options)
            finally:
                stop(process)
    print(f"{options.elements} elements per key, pipelines of {options.batch}, best of {options.rounds}; "
          f"server on core {options.server_core}, client on core {options.client_core}")
    print(f"{'key':8} {'payload B (redis/goblin)':>26} {'DUMP/s redis':>13} {'goblin':>9} {'ratio':>6} "
          f"{'RESTORE/s redis':>16} {'goblin':>9} {'ratio':>6}")
    for key in results["redis"]:
        rd, rr, rsize = results["redis"][key]
        gd, gr, gsize = results["goblin"][key]
        print(f"{key:8} {f'{rsize}/{gsize}':>26} {rd:13.0f} {gd:9.0f} {gd / rd:6.2f} {rr:16.0f} {gr:9.0f} {gr / rr:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
