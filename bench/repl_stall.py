"""repl_stall.py — issue 35: how long a ring client on a goblin replica waits while the replica
takes a full sync of N mixed keys (bench/rdb_load.py's workload) from a redis-server 7.0 primary.

    python bench/repl_stall.py [--keys 1000000] [--server-core 0] [--client-core 1]

A ring client GETs one key of the replica's old data in a loop (one call at a time, each timed)
from REPLICAOF until INFO replication says the link is up; printed: its longest wait, p99.9,
and how many GETs were answered. Two rounds side by side: the payload loaded ON THE LOOP
(GOBLIN_REPL_LOAD_IN_PLACE=1, the way before the load aside) and loaded aside by a thread
(the default), each with a fresh replica holding the same small old dataset.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from goblin_ring import RespClient, RingClient  # noqa: E402
from goblin_ring.bench.servers import free_port, wait_for_line  # noqa: E402
from rdb_load import workload  # noqa: E402
from repl_sync import redis, stop  # noqa: E402


def pinned(core: int | None) -> list[str]:
    return ["taskset", "-c", str(core)] if core is not None else []


def goblin(directory: Path, core: int | None, env: dict[str, str]) -> tuple[subprocess.Popen, int, str]:
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    name = f"st{port}"
    process = subprocess.Popen([*pinned(core), sys.executable, "-m", "goblin_ring.server", "--name", name,
                                "--runtime-dir", str(directory), "--dir", str(directory), "--port", str(port),
                                "--save", ""],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env={**os.environ, **env})
    wait_for_line(process, process.stderr, "started:")
    return process, port, name


def one_round(root: Path, label: str, env: dict[str, str], primary_port: int, options) -> dict:
    process, port, name = goblin(root / label, options.server_core, env)
    try:
        c = RespClient(port=port, socket_timeout=120)
        for i in range(1000):
            c.execute_command("SET", f"old:{i}", "x" * 16)
        ring = RingClient(name=name, runtime_dir=str(root / label), timeout=120.0)
        waits = []
        start = time.perf_counter()
        c.execute_command("REPLICAOF", "127.0.0.1", primary_port)
        n = 0
        while True:
            t0 = time.perf_counter()
            ring.get("old:7")
            waits.append(time.perf_counter() - t0)
            n += 1
            if n % 200 == 0 and ring.info("replication").get("master_link_status") == "up":
                break
        seconds = time.perf_counter() - start
        ring.close()
        c.close()
        waits.sort()
        return {"label": label, "sync": seconds, "gets": len(waits), "max": waits[-1],
                "p999": waits[min(len(waits) - 1, int(len(waits) * 0.999))]}
    finally:
        stop(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--server-core", default=None, help="pin the goblin replica (all its threads) to these cores, e.g. 0 or 0,1")
    parser.add_argument("--client-core", type=int, default=None, help="pin this client and the primary to this core")
    options = parser.parse_args()
    if options.client_core is not None:
        os.sched_setaffinity(0, {options.client_core})
    with tempfile.TemporaryDirectory(prefix="repl-stall-") as temp:
        root = Path(temp)
        primary, primary_port = redis(root / "primary")
        try:
            if options.client_core is not None:
                subprocess.run(["taskset", "-pc", str(options.client_core), str(primary.pid)], check=True,
                               capture_output=True)
            subprocess.run(["redis-cli", "-p", str(primary_port), "--pipe"], input=workload(options.keys), check=True,
                           capture_output=True)
            results = [one_round(root, "on-the-loop", {"GOBLIN_REPL_LOAD_IN_PLACE": "1"}, primary_port, options),
                       one_round(root, "aside", {}, primary_port, options)]
            for r in results:
                print(f"{r['label']:12s} full sync of {options.keys} keys {r['sync']:.3f} s; ring GETs answered meanwhile "
                      f"{r['gets']}, longest wait {r['max'] * 1e3:.2f} ms, p99.9 {r['p999'] * 1e3:.3f} ms")
            print(f"longest ring wait: {results[0]['max'] * 1e3:.1f} ms on the loop -> {results[1]['max'] * 1e3:.1f} ms "
                  f"aside ({results[0]['max'] / results[1]['max']:.0f}x shorter)")
        finally:
            stop(primary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
