"""stream_quick.py — the stream measurements issue 33 asks for, side by side in one run, as a
standalone script (servers pinned to core 0, clients to core 1). goblin-ring-bench's `stream`
scenario (goblin_ring/bench/scenario_stream.py) measures the same and more — the native ring
column, valkey, a work queue of producer and consumer processes — and is the official figure;
this script stays as the quick single-process cross-check.

  1. bytes per entry after N XADD * of one 16-byte field and value (INFO used_memory delta / N,
     and MEMORY USAGE / N): goblin, redis-server 7.0, valkey 9.1;
  2. Python XADD rate: goblin RingClient vs redis-py over a Unix socket to redis-server;
  3. a Python work queue (a producer XADDs a batch, a consumer XREADGROUP COUNT 10 + XACK of the 10):
     goblin RingClient vs redis-py / redis-server (Unix socket), entries consumed per second;
  4. redis-benchmark, one client, -P 16: XADD and XREADGROUP COUNT 1 against goblin's RESP port
     and redis-server's.

    python bench/stream_quick.py [--entries 1000000] [--ops 100000] [--out bench/results/stream-DATE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from goblin_ring import RingClient
from goblin_ring.bench.servers import valkey_executable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from servers import free_port  # noqa: E402

FIELD, VALUE = b"f" * 16, b"0123456789abcdef"


def pinned(args: list[str], core: int) -> list[str]:
    return ["taskset", "-c", str(core), *args] if shutil.which("taskset") else args


class Server:
    def __init__(self, kind: str, scratch: Path):
        self.kind, self.port = kind, free_port()
        self.sock = str(scratch / f"{kind}.sock")
        self.name = f"sq{os.getpid()}{kind[:2]}"
        if kind == "goblin":
            args = [sys.executable, "-m", "goblin_ring.server", "--name", self.name, "--runtime-dir", str(scratch),
                    "--port", str(self.port), "--save", "", "--dir", str(scratch)]
        else:
            exe = "redis-server" if kind == "redis" else valkey_executable()[0]
            args = [exe, "--port", str(self.port), "--unixsocket", self.sock, "--save", "", "--appendonly", "no",
                    "--dir", str(scratch)]
        self.process = subprocess.Popen(pinned(args, 0), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis(port=self.port).ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, f"{kind} did not start"
                time.sleep(0.05)
        self.scratch = scratch

    def client(self) -> redis.Redis:
        if self.kind == "goblin":
            return redis.Redis(port=self.port)
        return redis.Redis(unix_socket_path=self.sock)

    def ring(self) -> RingClient:
        return RingClient(name=self.name, runtime_dir=str(self.scratch), timeout=30.0)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(20)


def bytes_per_entry(server: Server, n: int) -> tuple[float, float]:
    r = server.client()
    used0 = int(r.info("memory")["used_memory"])
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.execute_command("XADD", "mem", "*", FIELD, b"%016d" % i)
        if i % 5000 == 4999:
            p.execute()
    p.execute()
    used1 = int(r.info("memory")["used_memory"])
    usage = r.execute_command("MEMORY", "USAGE", "mem", "SAMPLES", "0")
    assert r.xlen("mem") == n
    r.delete("mem")
    r.close()
    return (used1 - used0) / n, usage / n


def xadd_rate(client, ops: int) -> float:
    start = time.perf_counter()
    for _ in range(ops):
        client.xadd("rate", {FIELD: VALUE})
    rate = ops / (time.perf_counter() - start)
    client.delete("rate")
    return rate


def work_queue_rate(client, ops: int) -> float:
    """A producer adds 100 entries, a consumer reads them 10 at a time and acks each batch;
    entries consumed per second (one process, one connection, the two roles alternating)."""
    client.delete("wq")
    client.xgroup_create("wq", "g", "$", mkstream=True)
    done = 0
    start = time.perf_counter()
    while done < ops:
        for _ in range(100):
            client.xadd("wq", {FIELD: VALUE})
        while True:
            got = client.xreadgroup("g", "c", {"wq": ">"}, count=10)
            if not got:
                break
            ids = [entry_id for entry_id, _ in got[0][1]]
            client.xack("wq", "g", *ids)
            done += len(ids)
    rate = done / (time.perf_counter() - start)
    client.delete("wq")
    return rate


def benchmark(port: int, n: int, *command: str) -> float:
    out = subprocess.run(pinned(["redis-benchmark", "-p", str(port), "-c", "1", "-P", "16", "-n", str(n), "-q",
                                 *command], 1), capture_output=True, text=True, timeout=600).stdout
    match = re.findall(r"([0-9.]+) requests per second", out)
    assert match, out
    return float(match[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    os.sched_setaffinity(0, {1}) if hasattr(os, "sched_setaffinity") and os.cpu_count() > 1 else None
    results: dict = {"entries": args.entries, "ops": args.ops, "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    with tempfile.TemporaryDirectory(prefix="goblin-streambench-") as scratch_name:
        scratch = Path(scratch_name)
        for kind in ("goblin", "redis", "valkey"):
            server = Server(kind, scratch)
            try:
                used, usage = bytes_per_entry(server, args.entries)
                results[f"{kind}_bytes_per_entry"] = round(used, 2)
                results[f"{kind}_memory_usage_per_entry"] = round(usage, 2)
                if kind == "valkey":
                    continue
                if kind == "goblin":
                    with server.ring() as ring:
                        results["goblin_ring_xadd_per_s"] = round(xadd_rate(ring, args.ops))
                        results["goblin_ring_work_queue_per_s"] = round(work_queue_rate(ring, args.ops))
                else:
                    with server.client() as client:
                        results["redispy_uds_xadd_per_s"] = round(xadd_rate(client, args.ops))
                        results["redispy_uds_work_queue_per_s"] = round(work_queue_rate(client, args.ops))
                n = 10 * args.ops
                results[f"{kind}_resp_xadd_P16_per_s"] = benchmark(server.port, n, "XADD", "rb", "*", "f" * 16,
                                                                   "0123456789abcdef")
                c = server.client()
                c.xgroup_create("rb", "g", "0")
                c.close()
                results[f"{kind}_resp_xreadgroup_P16_per_s"] = benchmark(server.port, n, "XREADGROUP", "GROUP", "g",
                                                                         "c", "COUNT", "1", "STREAMS", "rb", ">")
            finally:
                server.stop()
    r = results
    r["ratio_bytes_per_entry_goblin_over_redis"] = round(r["goblin_bytes_per_entry"] / r["redis_bytes_per_entry"], 3)
    r["ratio_ring_xadd_over_redispy"] = round(r["goblin_ring_xadd_per_s"] / r["redispy_uds_xadd_per_s"], 2)
    r["ratio_ring_work_queue_over_redispy"] = round(r["goblin_ring_work_queue_per_s"] / r["redispy_uds_work_queue_per_s"], 2)
    r["ratio_resp_xadd_P16"] = round(r["goblin_resp_xadd_P16_per_s"] / r["redis_resp_xadd_P16_per_s"], 2)
    r["ratio_resp_xreadgroup_P16"] = round(r["goblin_resp_xreadgroup_P16_per_s"] / r["redis_resp_xreadgroup_P16_per_s"], 2)
    text = json.dumps(r, indent=2)
    print(text)
    if args.out:
        Path(args.out + ".json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
