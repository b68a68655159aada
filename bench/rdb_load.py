"""rdb_load.py — issue 35's load target: a 1M-key mixed RDB written by redis-server, loaded by
goblin (--import-rdb) and by redis-server itself, side by side in one run.

    python bench/rdb_load.py [--keys 1000000] [--rounds 3] [--server-core 0]

The data (redis-server 7.0 writes it, then SAVEs): of every 20 keys, 14 strings (8-byte and
100-byte values, a few integers), 2 hashes of 10 fields, 2 lists of 10 elements, 1 set of 10
members, 1 sorted set of 10 members; 1 key in 10 with an expiry an hour away. It is sent with
`redis-cli --pipe`. Each server is started pinned to one core (taskset) with and without the
file; the figure is start-up time with the file minus start-up time without it (Popen to the
ready line: redis's "Ready to accept connections", goblin's "started:"), best of --rounds, and
each server's own logged load time. The target: goblin's figure <= redis-server's.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from goblin_ring.bench.servers import free_port, wait_for_line  # noqa: E402


def resp(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def workload(keys: int) -> bytes:
    buf = io.BytesIO()
    for i in range(keys):
        kind = i % 20
        key = f"k:{i}"
        if kind < 14:
            value = str(i) if kind == 0 else ("v" * 100 if kind % 2 else f"{i:08d}")
            buf.write(resp("SET", key, value))
        elif kind < 16:
            args = []
            for f in range(10):
                args += [f"f{f}", f"value-{i}-{f}"]
            buf.write(resp("HSET", key, *args))
        elif kind < 18:
            buf.write(resp("RPUSH", key, *[f"e{i}-{e}" for e in range(10)]))
        elif kind == 18:
            buf.write(resp("SADD", key, *[f"m{i}-{e}" for e in range(10)]))
        else:
            args = []
            for e in range(10):
                args += [e * 1.5, f"z{i}-{e}"]
            buf.write(resp("ZADD", key, *args))
        if i % 10 == 3:
            buf.write(resp("EXPIRE", key, 3600))
    return buf.getvalue()


def start_redis(directory: Path, core: int) -> tuple[subprocess.Popen, float, list[str]]:
    port = free_port()
    started = time.monotonic()
    process = subprocess.Popen(["taskset", "-c", str(core), shutil.which("redis-server"), "--port", str(port),
                                "--save", "", "--appendonly", "no", "--dir", str(directory)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = wait_for_line(process, process.stdout, "Ready to accept connections", timeout=120)
    return process, time.monotonic() - started, lines


def start_goblin(runtime: Path, rdb: Path | None, core: int) -> tuple[subprocess.Popen, float, list[str]]:
    args = ["taskset", "-c", str(core), sys.executable, "-m", "goblin_ring.server", "--name", f"rdbbench{os.getpid()}",
            "--runtime-dir", str(runtime), "--port", "0", "--save", "", "--dir", str(runtime)]
    if rdb:
        args += ["--import-rdb", str(rdb)]
    started = time.monotonic()
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines = wait_for_line(process, process.stderr, "started:", timeout=120)
    return process, time.monotonic() - started, lines


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=30)
    for stream in (process.stdout, process.stderr):
        if stream:
            stream.close()


def logged_seconds(lines: list[str], marker: str) -> float:
    for line in lines:
        if marker in line:
            found = re.search(r"([0-9]+\.[0-9]+) seconds", line)
            if found:
                return float(found.group(1))
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server-core", type=int, default=0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rdb-bench-") as temp:
        temp = Path(temp)
        data, empty, runtime = temp / "data", temp / "empty", temp / "runtime"
        for d in (data, empty, runtime):
            d.mkdir(mode=0o700)
        redis, _, _ = start_redis(data, options.server_core)
        # the port is in the command line; read it back
        port = int(redis.args[redis.args.index("--port") + 1])
        made = time.monotonic()
        subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=workload(options.keys), check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["redis-cli", "-p", str(port), "SAVE"], check=True, stdout=subprocess.DEVNULL)
        dbsize = subprocess.run(["redis-cli", "-p", str(port), "DBSIZE"], capture_output=True, text=True).stdout.strip()
        stop(redis)
        rdb = data / "dump.rdb"
        print(f"data: {dbsize} keys, {rdb.stat().st_size / 1e6:.1f} MB RDB, made in {time.monotonic() - made:.1f} s")
        results: dict[str, list[float]] = {"redis": [], "goblin": [], "redis_logged": [], "goblin_logged": []}
        for _ in range(options.rounds):
            p, bare, _ = start_redis(empty, options.server_core)
            stop(p)
            p, full, lines = start_redis(data, options.server_core)
            stop(p)
            results["redis"].append(full - bare)
            results["redis_logged"].append(logged_seconds(lines, "DB loaded from disk"))
            p, bare, _ = start_goblin(runtime, None, options.server_core)
            stop(p)
            p, full, lines = start_goblin(runtime, rdb, options.server_core)
            stop(p)
            results["goblin"].append(full - bare)
            results["goblin_logged"].append(logged_seconds(lines, "Redis RDB file"))
        best = {name: min(values) for name, values in results.items()}
        print(f"redis-server load (start-up with the file minus without): {best['redis']:.3f} s "
              f"(its log: {best['redis_logged']:.3f} s)")
        print(f"goblin --import-rdb load (likewise):                       {best['goblin']:.3f} s "
              f"(its log: {best['goblin_logged']:.3f} s)")
        ratio = best["redis"] / best["goblin"] if best["goblin"] > 0 else float("inf")
        print(f"goblin loads at {ratio:.2f}x redis-server's speed (target >= 1.00x: "
              f"{'met' if ratio >= 1 else 'not met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
