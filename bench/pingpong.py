#!/usr/bin/env python3
"""pingpong.py — the transport floor, one request in flight, all rows in one run.

Rows, against one goblin-ring server started here (pinned to --server-core, busy polling):
  c-ring-floor      C-to-C ping-pong over two bare rings (native/tests/bench_ring.c), no server
  c-client-ring     a C loop of PINGs through the server's ring path (gr_client_ping_loop)
  python-ring       goblin_ring.RingClient.ping() from Python
  python-resp-tcp   goblin_ring.RespClient.ping() over RESP/TCP to the same server
The client runs on --client-core. Figures are ratios measured side by side; the machine is
shared, so only the ratios within one run mean anything.

    python bench/pingpong.py [-n 200000] [--server-core 0] [--client-core 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from goblin_ring import RespClient, RingClient, _native  # noqa: E402
from servers import GoblinServer  # noqa: E402


def summarise(name: str, latencies_ns) -> dict:
    values = numpy.asarray(latencies_ns, dtype=numpy.float64)
    percentiles = numpy.percentile(values, [50, 90, 99, 99.9, 99.99])
    return {"row": name, "n": len(values), "p50_us": percentiles[0] / 1e3, "p90_us": percentiles[1] / 1e3,
            "p99_us": percentiles[2] / 1e3, "p99.9_us": percentiles[3] / 1e3, "p99.99_us": percentiles[4] / 1e3,
            "rate_per_s": 1e9 / values.mean()}


def c_ring_floor(n: int, server_core: int, client_core: int) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        binary = Path(scratch) / "bench_ring"
        subprocess.run(["gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", f"-I{ROOT / 'native'}",
                        str(ROOT / "native" / "ring.c"), str(ROOT / "native" / "tests" / "bench_ring.c"),
                        "-o", str(binary), "-lrt"], check=True)
        out = subprocess.run([str(binary), "-n", str(n), "-m", "20000000", str(client_core), str(server_core)],
                             capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    ping = next(r for r in rows if r["bench"] == "ping_pong")
    stream = next(r for r in rows if r["bench"] == "stream")
    return {"row": "c-ring-floor", "n": ping["round_trips"], "p50_us": ping["p50_ns"] / 1e3,
            "p90_us": ping["p90_ns"] / 1e3, "p99_us": ping["p99_ns"] / 1e3, "p99.9_us": ping["p999_ns"] / 1e3,
            "p99.99_us": None, "rate_per_s": ping["round_trips_per_s"],
            "stream_32B_messages_per_s": stream["messages_per_s"]}


def timed_calls(call, n: int) -> list[int]:
    clock = time.perf_counter_ns
    latencies = [0] * n
    for i in range(n):
        start = clock()
        call()
        latencies[i] = clock() - start
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200_000, help="round trips per row")
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    parser.add_argument("--json", help="also write the rows here")
    arguments = parser.parse_args()
    if arguments.server_core == arguments.client_core:
        parser.error("--server-core and --client-core must differ")
    n = arguments.n
    rows = [c_ring_floor(n, arguments.server_core, arguments.client_core)]
    with tempfile.TemporaryDirectory(prefix="goblin-bench-") as runtime:
        server = GoblinServer(Path(runtime), "--server-core", str(arguments.server_core), "--poll", "busy").start()
        os.sched_setaffinity(0, {arguments.client_core})
        try:
            with RingClient(name=server.name, runtime_dir=runtime) as ring:
                for _ in range(1000):
                    ring.ping()
                latencies = numpy.empty(n, dtype=numpy.int64)
                core = ring._core
                core.check(_native.lib.gr_client_ping_loop(
                    core.pointer, n, _native.ffi.cast("int64_t *", _native.ffi.from_buffer(latencies))))
                rows.append(summarise("c-client-ring", latencies))
                rows.append(summarise("python-ring", timed_calls(ring.ping, n)))
            with RespClient(port=server.port) as resp:
                for _ in range(1000):
                    resp.ping()
                rows.append(summarise("python-resp-tcp", timed_calls(resp.ping, n)))
        finally:
            server.stop()
    floor = rows[0]["p50_us"]
    by_name = {row["row"]: row for row in rows}
    print(f"{'row':<18}{'p50 us':>9}{'p90':>9}{'p99':>9}{'p99.9':>9}{'p99.99':>9}{'rate/s':>12}")
    for row in rows:
        p9999 = f"{row['p99.99_us']:9.2f}" if row["p99.99_us"] is not None else f"{'-':>9}"
        print(f"{row['row']:<18}{row['p50_us']:9.2f}{row['p90_us']:9.2f}{row['p99_us']:9.2f}"
              f"{row['p99.9_us']:9.2f}{p9999}{row['rate_per_s']:12,.0f}")
    ratios = {
        "python_ring_p50_over_c_floor": by_name["python-ring"]["p50_us"] / floor,
        "python_ring_p50_over_c_client_ring": by_name["python-ring"]["p50_us"] / by_name["c-client-ring"]["p50_us"],
        "resp_tcp_p50_over_python_ring": by_name["python-resp-tcp"]["p50_us"] / by_name["python-ring"]["p50_us"],
        "c_stream_32B_messages_per_s": rows[0]["stream_32B_messages_per_s"],
    }
    for name, value in ratios.items():
        print(f"{name}: {value:,.2f}")
    if arguments.json:
        Path(arguments.json).write_text(json.dumps({"rows": rows, "ratios": ratios,
                                                    "server_core": arguments.server_core,
                                                    "client_core": arguments.client_core}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
