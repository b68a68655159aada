"""repl_sync.py — issue 35's full-sync target: a goblin replica and a redis-server replica of the
same redis-server 7.0 primary holding N mixed keys (bench/rdb_load.py's workload), side by side.

    python bench/repl_sync.py [--keys 1000000] [--rounds 2] [--server-core 0] [--client-core 1]

The figure for each replica: REPLICAOF sent -> INFO replication says master_link_status:up, best
of --rounds (each round a fresh replica process, the primary the same; diskless sync, no delay).
The target: goblin's figure <= redis-server's. Machine load changes both: read them side by side.
--server-core pins each replica (all its threads: goblin loads the payload on a second thread),
--client-core the primary and this script (taskset lists, e.g. 0 or 0,1).
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
from goblin_ring.bench.servers import free_port, wait_for_line  # noqa: E402
from rdb_load import workload  # noqa: E402


def redis(directory: Path, *extra: str, prefix: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    """A redis-server in directory, diskless sync with no delay (extra options come last and
    override); prefix runs it under e.g. taskset."""
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([*prefix, shutil.which("redis-server"), "--port", str(port), "--save", "", "--dir", str(directory),
                                "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    wait_for_line(process, process.stdout, "Ready to accept connections")
    return process, port


def goblin(directory: Path, prefix: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([*prefix, sys.executable, "-m", "goblin_ring.server", "--name", f"rs{port}", "--runtime-dir",
                                str(directory), "--dir", str(directory), "--port", str(port), "--save", ""],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    wait_for_line(process, process.stderr, "started:")
    return process, port


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def sync_seconds(replica_port: int, primary_port: int) -> float:
    c = RespClient(port=replica_port, socket_timeout=120)
    start = time.perf_counter()
    c.execute_command("REPLICAOF", "127.0.0.1", primary_port)
    while b"master_link_status:up" not in c.execute_command("INFO", "replication"):
        time.sleep(0.005)
    seconds = time.perf_counter() - start
    c.close()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--server-core", default=None, help="pin the replicas to these cores")
    parser.add_argument("--client-core", default=None, help="pin the primary and this script to these cores")
    options = parser.parse_args()

    def pin(process: subprocess.Popen, core: str | None) -> None:
        if core is not None:
            subprocess.run(["taskset", "-apc", core, str(process.pid)], check=True, capture_output=True)
    if options.client_core is not None:
        import os
        os.sched_setaffinity(0, {int(c) for c in options.client_core.split(",")})
    with tempfile.TemporaryDirectory(prefix="repl-sync-") as temp:
        root = Path(temp)
        primary, primary_port = redis(root / "primary")
        pin(primary, options.client_core)
        try:
            subprocess.run(["redis-cli", "-p", str(primary_port), "--pipe"], input=workload(options.keys), check=True,
                           capture_output=True)
            figures: dict[str, list[float]] = {"redis-server": [], "goblin": []}
            for round_ in range(options.rounds):
                for name, start in (("redis-server", lambda d: redis(d)), ("goblin", goblin)):
                    process, port = start(root / f"{name}-{round_}")
                    pin(process, options.server_core)
                    try:
                        figures[name].append(sync_seconds(port, primary_port))
                    finally:
                        stop(process)
            best = {name: min(values) for name, values in figures.items()}
            for name, values in figures.items():
                print(f"{name:13s} full sync of {options.keys} keys: best {best[name]:.3f} s  ({', '.join(f'{v:.3f}' for v in values)})")
            ratio = best["redis-server"] / best["goblin"]
            print(f"goblin's full sync at {ratio:.2f}x redis-server's speed: {'MET' if ratio >= 1 else 'NOT MET'}")
        finally:
            stop(primary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
