"""cli.py — goblin-ring-bench: argument parsing, pinning, the run's metadata, the outputs.

    goblin-ring-bench list100k [--engines goblin-ring,redis] [-n 200000] [-P 256] [--trials 3]
                               [--warmup 4096] [--list-size 100000] [--value-size 16] [--quick]
                               [--server-core 0] [--client-core 1] [--json F] [--csv F] [--plot F.png]
    goblin-ring-bench pingpong | latency | workqueue | client   (the same flags; client: the
                               Python RingClient's per-command rows and their targets)
    goblin-ring-bench hash | set | zset [--zset-size 1000000]
    goblin-ring-bench zset-replay [--replay-count 2000000]   (bench/zset_replay.py's stream)
    goblin-ring-bench cache [--engines goblin-ring,redis]   (client-side caching, read-mostly Zipf)

The Markdown report goes to stdout (or -o FILE); a progress line goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import asdict

from .._version import __version__
from . import report
from .engines import ENGINES, parse_engines
from .registry import SCENARIOS
from .scenarios import Method, Progress

QUICK = {"n": 5000, "list_size": 5000, "hash_size": 5000, "zset_size": 5000, "replay_count": 50_000, "trials": 1,
         "warmup": 4096}
FULL = {"n": 200_000, "list_size": 100_000, "hash_size": 1_000_000, "zset_size": 1_000_000, "replay_count": 2_000_000,
        "trials": 3, "warmup": 4096}


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_ticks() -> tuple[int, int]:
    """(steal, total) jiffies over all CPUs, from /proc/stat."""
    try:
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    steal = fields[7] if len(fields) > 7 else 0
    return steal, sum(fields[:8])


def tool_version(argv: list[str]) -> str:
    if not shutil.which(argv[0]):
        return "not installed"
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return f"unknown ({error})"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="goblin-ring-bench", description="goblin-ring beside redis and valkey, "
                                "measured side by side in one run")
    p.add_argument("scenario", choices=sorted(SCENARIOS), help=", ".join(sorted(SCENARIOS)))
    p.add_argument("--engines", default="all", help=f"comma list of {', '.join(ENGINES)} (default all)")
    p.add_argument("-n", type=int, default=None, help="requests per row (default 200000)")
    p.add_argument("-P", type=int, default=256, dest="pipeline", help="pipeline depth (default 256)")
    p.add_argument("--trials", type=int, default=None, help="trials per row; the median is reported (3)")
    p.add_argument("--warmup", type=int, default=None, help="untimed operations before each row (>= 4096)")
    p.add_argument("--list-size", type=int, default=None, help="values in the list (100000)")
    p.add_argument("--hash-size", type=int, default=None, help="fields in the hash scenario's hash (1000000)")
    p.add_argument("--zset-size", type=int, default=None, help="members in the zset scenario's set (1000000)")
    p.add_argument("--replay-count", type=int, default=None,
                   help="commands of the zset-replay stream (2000000; the stream's shape is tuned for that)")
    p.add_argument("--value-size", type=int, default=16, help="bytes per value (16)")
    p.add_argument("-t", dest="tests", default="", metavar="LIST",
                   help="comma list of the scenario's rows to run (persistence: its data sets, e.g. zset,set)")
    p.add_argument("--clients", type=int, default=1, metavar="N",
                   help="RESP columns (goblin-resp, redis, valkey): N clients with one request in flight each, "
                        "by redis-benchmark -c N -P 1 (pingpong: PING; list100k: the fixed rows); default 1")
    p.add_argument("--producers", type=int, default=2, metavar="N",
                   help="stream scenario: work-queue producer processes (2)")
    p.add_argument("--consumers", type=int, default=2, metavar="M",
                   help="stream scenario: work-queue consumer processes, XREADGROUP COUNT 10 + XACK (2)")
    p.add_argument("--quick", action="store_true", help="small sizes: the whole run in under a minute")
    p.add_argument("--server-core", type=int, default=0)
    p.add_argument("--client-core", type=int, default=1)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--csv", metavar="PATH")
    p.add_argument("--plot", metavar="PATH.png")
    p.add_argument("-o", "--output", metavar="PATH", help="write the Markdown here instead of stdout")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    error = parser().error
    cores = os.sched_getaffinity(0)
    if args.server_core == args.client_core:
        error("--server-core and --client-core must differ")
    for flag, core in (("--server-core", args.server_core), ("--client-core", args.client_core)):
        if core not in cores:
            error(f"{flag} {core}: this process may use cores {sorted(cores)}")
    try:
        engines = parse_engines(args.engines)
    except ValueError as problem:
        error(str(problem))
    defaults = QUICK if args.quick else FULL
    method = Method(n=args.n or defaults["n"], pipeline=args.pipeline, trials=args.trials or defaults["trials"],
                    warmup=args.warmup if args.warmup is not None else defaults["warmup"],
                    list_size=args.list_size or defaults["list_size"], value_size=args.value_size,
                    hash_size=args.hash_size or defaults["hash_size"],
                    zset_size=args.zset_size or defaults["zset_size"],
                    replay_count=args.replay_count or defaults["replay_count"],
                    server_core=args.server_core, client_core=args.client_core, quick=args.quick,
                    clients=args.clients, tests=tuple(t for t in args.tests.split(",") if t),
                    producers=args.producers, consumers=args.consumers)
    if method.warmup < 4096:
        error("--warmup must be at least 4096")
    if method.clients < 1:
        error("--clients must be at least 1")
    if method.producers < 1 or method.consumers < 1:
        error("--producers and --consumers must be at least 1")
    if method.pipeline < 1 or method.trials < 1 or method.n < 1 or method.list_size < 16:
        error("-P, --trials and -n must be positive, --list-size at least 16")
    os.sched_setaffinity(0, {args.client_core})
    steal0, total0 = cpu_ticks()
    started = time.time()
    progress = Progress(enabled=not args.no_progress)
    try:
        result = SCENARIOS[args.scenario](method, engines, progress)
    finally:
        os.sched_setaffinity(0, cores)
    steal1, total1 = cpu_ticks()
    meta = {
        "scenario": args.scenario, "goblin_ring_version": __version__, "python": platform.python_version(),
        "redis_benchmark": tool_version(["redis-benchmark", "--version"]),
        "servers": result.get("versions", {}), "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
        "kernel": platform.release(), "engines": engines, "method": asdict(method),
        "pinning": {"server_core": args.server_core, "client_core": args.client_core,
                    "server": "taskset; goblin also --server-core and --poll busy",
                    "client": "sched_setaffinity; redis-benchmark under taskset"},
        "steal": {"jiffies": steal1 - steal0, "percent": 100.0 * (steal1 - steal0) / max(total1 - total0, 1)},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "duration_s": round(time.time() - started, 1), "argv": sys.argv[1:] if argv is None else argv,
    }
    results = [result]
    text = report.markdown(results, meta)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    if args.json:
        report.write_json(args.json, report.to_json(results, meta))
    if args.csv:
        report.write_csv(args.csv, results)
    if args.plot:
        why = report.write_plot(args.plot, results)
        if why:
            print(f"goblin-ring-bench: no plot: {why}", file=sys.stderr)
    return 0 if all(c["ok"] for c in result["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
