"""aof_rows.py — the append-only log's write cost: RPUSH over RESP with
appendfsync everysec and always against the same server with persistence off, per engine
(goblin's RESP port, redis-server, valkey-server), every rate timed by redis-benchmark so one
tool measures both sides of each ratio.

Two shapes: 50 clients one command in flight each (redis-benchmark -c 50 -P 1: many small
batches, a log write per batch) and one client pipelining -P deep (few large writes). Each
(engine, policy) gets a fresh server in a fresh directory; the rate is the median of --trials.
The target: goblin's everysec rate >= 0.9x its rate with the log off. The `persistence`
scenario (snapshots) calls aof_write_cost for its AOF rows; `goblin-ring-bench aof` runs it alone.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Callable

from .drivers import redis_benchmark, redis_benchmark_available
from .engines import unavailable
from .scenarios import Method
from .servers import GoblinServer, RedisLikeServer, valkey_executable

POLICIES = ("off", "everysec", "always")
ENGINES = ("goblin-resp", "redis", "valkey")


def _server(engine: str, policy: str, core: int | None, workdir: Path):
    if engine == "goblin-resp":
        extra = ["--dir", str(workdir)]
        if policy != "off":
            extra += ["--appendonly", "yes", "--appendfsync", policy]
        return GoblinServer(workdir, core, *extra)
    executable = shutil.which("redis-server") if engine == "redis" else valkey_executable()[0]
    server = RedisLikeServer(executable, core, workdir)
    if policy != "off":
        base = server.argv

        def argv() -> list[str]:
            words = base()
            at = words.index("--appendonly")
            words[at + 1] = "yes"
            return [*words, "--appendfsync", policy, "--aof-use-rdb-preamble", "no"]

        server.argv = argv
    return server


def aof_write_cost(method: Method, engines: list[str], progress: Callable) -> dict:
    n = 20_000 if method.quick else 200_000
    shapes = [("RPUSH -c 50 -P 1", 50, 1), (f"RPUSH -c 1 -P {method.pipeline}", 1, method.pipeline)]
    out: dict = {"scenario": "aof", "columns": [], "rows": [], "checks": [], "notes": [
        f"{n} RPUSH of a 16-byte value per trial, timed by redis-benchmark; median of {method.trials}; "
        "a fresh server and directory per (engine, policy)"], "versions": {}, "targets": []}
    if not redis_benchmark_available():
        out["notes"].append("redis-benchmark is not installed: no rows")
        return out
    for engine in ENGINES:
        if engine not in engines and not (engine == "goblin-resp" and "goblin-ring" in engines):
            continue
        why = unavailable(engine)
        for policy in POLICIES:
            column = f"{engine} {policy}"
            out["columns"].append(column)
            if why:
                out["rows"] += [{"scenario": "aof", "engine": engine, "column": column, "operation": shape,
                                 "status": "n/a", "reason": why} for shape, _, _ in shapes]
                continue
            with tempfile.TemporaryDirectory(prefix="goblin-bench-aof-") as scratch:
                progress(f"aof {column}: starting the server")
                with _server(engine, policy, method.server_core, Path(scratch)) as server:
                    for shape, clients, depth in shapes:
                        rates = []
                        for trial in range(method.trials):
                            progress(f"aof {column}: {shape} trial {trial + 1}/{method.trials}")
                            rates.append(redis_benchmark(server.port, n, depth, ("RPUSH", "bench:aof", b"v" * 16),
                                                         method.client_core, clients))
                        out["rows"].append({"scenario": "aof", "engine": engine, "column": column,
                                            "operation": shape, "status": "ok", "ops_per_s": statistics.median(rates),
                                            "trials": [round(r, 1) for r in rates], "tool": "redis-benchmark"})
    rows = {(r["column"], r["operation"]): r for r in out["rows"] if r.get("status") == "ok"}
    for engine in ENGINES:
        for shape, _, _ in shapes:
            off = rows.get((f"{engine} off", shape))
            for policy in ("everysec", "always"):
                on = rows.get((f"{engine} {policy}", shape))
                if off and on:
                    ratio = on["ops_per_s"] / off["ops_per_s"]
                    goal = {"engine": engine, "shape": shape, "policy": policy, "ratio": ratio}
                    if engine == "goblin-resp" and policy == "everysec":
                        goal.update(target="goblin everysec RPUSH over RESP >= 0.9x off", met=ratio >= 0.9)
                    out["targets"].append(goal)
    return out


def aof_markdown(result: dict) -> list[str]:
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}
    shapes = list(dict.fromkeys(r["operation"] for r in result["rows"]))
    lines = ["| engine | policy | " + " | ".join(f"{s} ops/s | vs off" for s in shapes) + " |",
             "|---|---|" + "---:|---:|" * len(shapes)]
    for column in result["columns"]:
        engine, policy = column.rsplit(" ", 1)
        cells = []
        for shape in shapes:
            row, off = rows.get((column, shape)), rows.get((f"{engine} off", shape))
            if not row or row.get("status") != "ok":
                cells += ["X", ""]
                continue
            ratio = row["ops_per_s"] / off["ops_per_s"] if off and off.get("status") == "ok" else None
            cells += [f"{row['ops_per_s']:,.0f}", "" if ratio is None else f"{ratio:.2f}x"]
        lines.append(f"| {engine} | {policy} | " + " | ".join(cells) + " |")
    goals = [g for g in result.get("targets", []) if "target" in g]
    if goals:
        lines += ["", "Targets (measured in this run):", ""]
        lines += [f"- {'met' if g['met'] else 'NOT met'}: {g['target']} ({g['shape']}) — {g['ratio']:.2f}x"
                  for g in goals]
    return lines
