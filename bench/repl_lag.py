"""repl_lag.py — issue 35's lag target: a goblin replica of a redis-server 7.0 primary while
redis-benchmark runs SET -c 50 against the primary; the lag is measured end to end by a probe:
SET lagprobe <n> on the primary, then GET lagprobe on the replica until it answers <n>; the time
between is the lag (an upper bound: it includes the probe's own round trips).

    python bench/repl_lag.py [--probes 300] [--requests 2000000]

Prints p50/p99/max of the probe lag and whether p99 <= 10 ms.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from goblin_ring import RespClient  # noqa: E402
from repl_sync import goblin, redis, stop  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument("--requests", type=int, default=2_000_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repl-lag-") as temp:
        root = Path(temp)
        primary, primary_port = redis(root / "primary")
        replica, replica_port = goblin(root / "goblin")
        load = None
        try:
            r = RespClient(port=replica_port, socket_timeout=30)
            p = RespClient(port=primary_port, socket_timeout=30)
            r.execute_command("REPLICAOF", "127.0.0.1", primary_port)
            while b"master_link_status:up" not in r.execute_command("INFO", "replication"):
                time.sleep(0.01)
            load = subprocess.Popen([shutil.which("redis-benchmark"), "-p", str(primary_port), "-c", "50", "-n",
                                     str(options.requests), "-t", "set", "-r", "100000", "-q"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)   # let the load reach its pace before probing
            lags = []
            for n in range(options.probes):
                if load.poll() is not None:
                    break
                value = str(n).encode()
                p.execute_command("SET", "lagprobe", value)
                start = time.perf_counter()
                while r.execute_command("GET", "lagprobe") != value:
                    pass
                lags.append(time.perf_counter() - start)
            lags.sort()
            if not lags:
                print("the load ended before any probe")
                return 1
            p50, p99 = lags[len(lags) // 2], lags[min(len(lags) - 1, int(len(lags) * 0.99))]
            print(f"{len(lags)} probes under redis-benchmark SET -c 50: lag p50 {p50 * 1e3:.2f} ms, "
                  f"p99 {p99 * 1e3:.2f} ms, max {lags[-1] * 1e3:.2f} ms -> p99 <= 10 ms: {'MET' if p99 <= 0.010 else 'NOT MET'}")
        finally:
            if load and load.poll() is None:
                load.terminate()
                load.wait()
            stop(replica)
            stop(primary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
