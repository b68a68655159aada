"""repl_lag.py — issue 35's lag target: a goblin replica of a redis-server 7.0 primary while
redis-benchmark runs SET -c 50 against the primary; the lag is measured end to end by a probe:
SET lagprobe <n> on the primary, then GET lagprobe on the replica until it answers <n>; the time
between is the lag (an upper bound: it includes the probe's own round trips).

    python bench/repl_lag.py [--probes 300] [--requests 2000000] [--server-core 0] [--client-core 1]
                             [--drop-seconds 1]

Prints p50/p99/max of the probe lag and whether p99 <= 10 ms, and the worst probes with when
they ran (seconds after redis-benchmark started). --server-core pins the goblin replica,
--client-core the primary, redis-benchmark and this probe.

Then the link drop: the replica is pointed at the primary through a TCP proxy in this script
(a REPLICAOF to another address keeps the replication id and offset: PSYNC continues), the
proxy cuts the link and refuses connections for --drop-seconds while the load goes on, then lets
the replica back: the primary's sync_full must not move and sync_partial_ok must grow by one
(the primary's repl-backlog-size is 64mb here: one second of this load is several MB).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import threading
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from goblin_ring import RespClient  # noqa: E402
from repl_sync import goblin, redis, stop  # noqa: E402


class Proxy:
    """A TCP proxy to the primary whose links can be cut and refused for a while."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self.refuse_until = 0.0
        self.links: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if time.monotonic() < self.refuse_until:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.links += [client, upstream]
            self.accepted += 1
            threading.Thread(target=self.pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self.pump, args=(upstream, client), daemon=True).start()

    @staticmethod
    def pump(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(1 << 16):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self, seconds: float) -> None:
        self.refuse_until = time.monotonic() + seconds
        for s in self.links:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.links = []

    def close(self) -> None:
        self.listener.close()
        self.cut(0)


def stats(client) -> dict[str, str]:
    text = client.execute_command("INFO", "stats").decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def link_drop(r, p, primary_port: int, seconds: float) -> None:
    proxy = Proxy(primary_port)
    try:
        r.execute_command("REPLICAOF", "127.0.0.1", proxy.port)
        while b"master_link_status:up" not in r.execute_command("INFO", "replication"):
            time.sleep(0.01)
        before = stats(p)
        proxy.cut(seconds)
        cut_at = time.monotonic()
        while b"master_link_status:up" in r.execute_command("INFO", "replication"):
            time.sleep(0.005)
        time.sleep(max(0.0, seconds - (time.monotonic() - cut_at)))   # the drop's length is what is tested
        while b"master_link_status:up" not in r.execute_command("INFO", "replication"):
            time.sleep(0.005)
        back = time.monotonic() - cut_at
        after = stats(p)
        full = int(after["sync_full"]) - int(before["sync_full"])
        partial = int(after["sync_partial_ok"]) - int(before["sync_partial_ok"])
        print(f"link cut for {seconds:.1f} s under the load: link up again {back:.2f} s after the cut, "
              f"full syncs {full}, partial resyncs {partial} -> "
              f"{'MET (partial, no full sync)' if full == 0 and partial >= 1 else 'NOT MET'}")
    finally:
        proxy.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument("--requests", type=int, default=2_000_000)
    parser.add_argument("--server-core", default=None, help="pin the goblin replica to these cores (taskset list)")
    parser.add_argument("--client-core", default=None, help="pin the primary, redis-benchmark and the probe")
    parser.add_argument("--drop-seconds", type=float, default=1.0, help="the link drop step (0: skip it)")
    options = parser.parse_args()
    pin = (lambda core: ["taskset", "-c", core] if core is not None else [])
    if options.client_core is not None:
        os.sched_setaffinity(0, {int(c) for c in options.client_core.split(",")})
    with tempfile.TemporaryDirectory(prefix="repl-lag-") as temp:
        root = Path(temp)
        primary, primary_port = redis(root / "primary", "--repl-backlog-size", "64mb")
        replica, replica_port = goblin(root / "goblin")
        for process, core in ((primary, options.client_core), (replica, options.server_core)):
            if core is not None:
                subprocess.run(["taskset", "-apc", core, str(process.pid)], check=True, capture_output=True)
        load = None
        try:
            r = RespClient(port=replica_port, socket_timeout=30)
            p = RespClient(port=primary_port, socket_timeout=30)
            r.execute_command("REPLICAOF", "127.0.0.1", primary_port)
            while b"master_link_status:up" not in r.execute_command("INFO", "replication"):
                time.sleep(0.01)
            load = subprocess.Popen([*pin(options.client_core), shutil.which("redis-benchmark"), "-p", str(primary_port), "-c", "50", "-n",
                                     str(options.requests), "-t", "set", "-r", "100000", "-q"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            load_start = time.perf_counter()
            time.sleep(0.5)   # let the load reach its pace before probing
            lags = []
            when = []
            for n in range(options.probes):
                if load.poll() is not None:
                    break
                value = str(n).encode()
                p.execute_command("SET", "lagprobe", value)
                start = time.perf_counter()
                while r.execute_command("GET", "lagprobe") != value:
                    pass
                lags.append(time.perf_counter() - start)
                when.append((lags[-1], n, start - load_start))
            lags.sort()
            if not lags:
                print("the load ended before any probe")
                return 1
            p50, p99 = lags[len(lags) // 2], lags[min(len(lags) - 1, int(len(lags) * 0.99))]
            print(f"{len(lags)} probes under redis-benchmark SET -c 50: lag p50 {p50 * 1e3:.2f} ms, "
                  f"p99 {p99 * 1e3:.2f} ms, max {lags[-1] * 1e3:.2f} ms -> p99 <= 10 ms: {'MET' if p99 <= 0.010 else 'NOT MET'}")
            print("worst probes: " + ", ".join(f"#{n} {lag * 1e3:.1f} ms at {at:.2f} s" for lag, n, at in sorted(when)[-3:]))
            if options.drop_seconds > 0:
                if load.poll() is not None:
                    load = subprocess.Popen([*pin(options.client_core), shutil.which("redis-benchmark"), "-p",
                                             str(primary_port), "-c", "50", "-n", str(options.requests), "-t", "set",
                                             "-r", "100000", "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                link_drop(r, p, primary_port, options.drop_seconds)
        finally:
            if load and load.poll() is None:
                load.terminate()
                load.wait()
            stop(replica)
            stop(primary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
