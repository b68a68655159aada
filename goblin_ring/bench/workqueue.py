"""workqueue.py — the work-queue scenario: the pops a queue is built on, blocking and not,
and park-to-wake latency, every engine side by side.

Throughput rows (ops/s; values/s for COUNT 8): LPOP, RPOP, LMOVE and RPOPLPUSH same-list
rotation, BLPOP/BRPOP ready on two keys (the first empty), BLMOVE ready rotation, LMPOP
COUNT 8 and BLMPOP COUNT 8 ready on two keys. Before each trial the queue is refilled
(untimed) so that the timed pops always find values; each row then checks what is left.

Park-to-wake: a consumer process blocks in BLPOP; once the server reports it parked
(INFO blocked_clients), the producer takes the time and RPUSHes; the consumer takes the
time when BLPOP returns. Both read CLOCK_MONOTONIC, so push-to-return is t1 - t0.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy

from . import drivers
from .engines import Column, columns, open_session, unavailable
from .scenarios import Method, _na, digest, percentiles_us, values

QUEUE = b"bench:queue"
EMPTY = b"bench:empty"
WAKE_KEY = b"bench:wake"
ROTATION_SIZE = 1000


def workqueue_rows(method: Method) -> list[dict]:
    n = method.n
    eighth = max(n // 8, 1)
    return [
        {"label": "LPOP", "cycle": [[("LPOP", QUEUE)]], "count": n, "refill": n, "left": 0},
        {"label": "RPOP", "cycle": [[("RPOP", QUEUE)]], "count": n, "refill": n, "left": 0},
        {"label": "LMOVE same-list rotation", "cycle": [[("LMOVE", QUEUE, QUEUE, "RIGHT", "LEFT")]], "count": n,
         "rotation": True},
        {"label": "RPOPLPUSH same-list rotation", "cycle": [[("RPOPLPUSH", QUEUE, QUEUE)]], "count": n,
         "rotation": True},
        {"label": "BLPOP ready (two keys)", "cycle": [[("BLPOP", EMPTY, QUEUE, 0)]], "count": n, "refill": n,
         "left": 0},
        {"label": "BRPOP ready (two keys)", "cycle": [[("BRPOP", EMPTY, QUEUE, 0)]], "count": n, "refill": n,
         "left": 0},
        {"label": "BLMOVE ready rotation", "cycle": [[("BLMOVE", QUEUE, QUEUE, "RIGHT", "LEFT", 0)]], "count": n,
         "rotation": True},
        {"label": "LMPOP COUNT 8 (two keys)", "cycle": [[("LMPOP", 2, EMPTY, QUEUE, "LEFT", "COUNT", 8)]],
         "count": eighth, "refill": 8 * eighth, "left": 0, "values_per_op": 8},
        {"label": "BLMPOP COUNT 8 ready (two keys)", "cycle": [[("BLMPOP", 0, 2, EMPTY, QUEUE, "LEFT", "COUNT", 8)]],
         "count": eighth, "refill": 8 * eighth, "left": 0, "values_per_op": 8},
    ]


def _refill(admin, items: list[bytes]) -> None:
    admin.delete(QUEUE, EMPTY)
    for start in range(0, len(items), 10_000):
        admin.rpush(QUEUE, *items[start:start + 10_000])


def _run_row(session, row: dict, method: Method, items: list[bytes], rotation: list[bytes],
             progress: Callable) -> tuple[dict, str]:
    """(result row, check failure text or '')."""
    column = session.column
    label = row["label"]
    reason = session.supports(row["cycle"])
    if reason:
        return _na("workqueue", column, label, reason), ""
    depth = method.pipeline if column.mode != "call" else 1
    driver = session.driver
    rates, problem = [], ""
    for trial in range(method.trials + 1):           # trial 0 is the warmup
        count = min(row["count"], method.warmup) if trial == 0 else row["count"]
        if row.get("rotation"):
            _refill(session.admin, rotation)
        else:
            _refill(session.admin, items[:row["refill"] if trial else min(row["refill"], 8 * count)])
        progress(f"workqueue {column.name}: {label} {'warmup' if trial == 0 else f'trial {trial}/{method.trials}'}")
        run = driver.run(row["cycle"], 0, count, depth)
        if run.errors:
            return _na("workqueue", column, label, f"server replied: {run.first_error}"), ""
        if trial == 0:
            continue
        rates.append(count / run.elapsed_s)
        length = session.admin.llen(QUEUE)
        if row.get("rotation"):
            turned = count % len(rotation)
            expected = rotation[-turned:] + rotation[:-turned] if turned else rotation
            final = session.admin.lrange(QUEUE, 0, -1)
            if final != expected:
                problem = problem or f"{label}: the rotation left the list out of order (LLEN {length})"
        elif length != row["left"]:
            problem = problem or f"{label}: LLEN {length} after the pops, expected {row['left']}"
    rate = statistics.median(rates)
    result = {"scenario": "workqueue", "engine": column.engine, "mode": column.mode, "column": column.name,
              "operation": label, "status": "ok", "ops_per_s": rate, "trials": [round(r, 1) for r in rates],
              "tool": type(driver).__name__ + (f".{column.mode}" if column.mode else "")}
    if row.get("values_per_op"):
        result["values_per_s"] = rate * row["values_per_op"]
    return result, problem


# ---------------------------------------------------------------- park-to-wake

CONSUMER = r"""
import sys, time
transport, name, runtime_dir, port, n, key = sys.argv[1:7]
from goblin_ring import RespClient, RingClient
client = (RingClient(name=name, runtime_dir=runtime_dir, timeout=60) if transport == "ring"
          else RespClient(port=int(port), socket_timeout=60))
clock = time.clock_gettime_ns
for _ in range(int(n)):
    print("ready", flush=True)
    client.blpop(key, 0)
    print(clock(time.CLOCK_MONOTONIC), flush=True)
client.close()
"""


def _park_to_wake(session, n: int, client_core: int | None) -> dict:
    column = session.column
    transport = "ring" if column.over_ring else "resp"
    server = session.server
    argv = [sys.executable, "-c", CONSUMER, transport, getattr(server, "name", ""),
            str(getattr(server, "runtime_dir", "")), str(server.port), str(n), WAKE_KEY.decode()]
    if client_core is not None:
        argv = ["taskset", "-c", str(client_core), *argv]
    producer = session.ring if column.over_ring else session.admin
    admin = session.admin
    latencies = numpy.empty(n, dtype=numpy.int64)
    clock = time.clock_gettime_ns
    consumer = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        for i in range(n):
            if consumer.stdout.readline().strip() != "ready":
                raise RuntimeError("the consumer process stopped")
            while admin.info("clients")["blocked_clients"] != 1:
                pass
            t0 = clock(time.CLOCK_MONOTONIC)
            producer.rpush(WAKE_KEY, b"job")
            t1 = int(consumer.stdout.readline())
            latencies[i] = t1 - t0
        consumer.wait(60)
    finally:
        if consumer.poll() is None:
            consumer.kill()
            consumer.wait()
        consumer.stdout.close()
    row = {"scenario": "workqueue", "engine": column.engine, "mode": column.mode, "column": column.name,
           "operation": f"park-to-wake: BLPOP woken by RPUSH ({transport})", "status": "ok", "n": n}
    row.update(percentiles_us(latencies))
    row.pop("ops_per_s", None)
    return row


def workqueue(method: Method, engines: list[str], progress: Callable) -> dict:
    rows_spec = workqueue_rows(method)
    items = values(max(r.get("refill", 0) for r in rows_spec), method.value_size)
    rotation = items[:ROTATION_SIZE]
    wake_n = 200 if method.quick else min(method.n, 5000)
    out: dict[str, Any] = {"scenario": "workqueue", "columns": [], "rows": [], "wake": [], "memory": [],
                           "checks": [], "notes": [], "versions": {}, "load": []}
    leftovers: list[str] = []
    digests = {}
    # batch mode has no helpers for these commands: its column would be n/a throughout
    for column in columns(engines, modes=("call", "pipeline")):
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"] += [_na("workqueue", column, r["label"], why) for r in rows_spec]
            continue
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            problems = []
            for row in rows_spec:
                result, problem = _run_row(session, row, method, items, rotation, progress)
                out["rows"].append(result)
                if problem:
                    problems.append(problem)
            out["checks"].append({"column": column.name, "check": "every pop found a value and rotations kept order",
                                  "ok": not problems, "detail": "; ".join(problems) or "LLEN and contents as expected"})
            _refill(session.admin, rotation)
            drivers_ok = session.driver.run([[("LMOVE", QUEUE, QUEUE, "RIGHT", "LEFT")]], 0, 7, 1)
            final = session.admin.lrange(QUEUE, 0, -1)
            digests[column.name] = digest(final) if not drivers_ok.errors else "error"
            if column.mode != "pipeline" and not column.native:
                progress(f"workqueue {column.name}: park-to-wake x{wake_n}")
                try:
                    wake = _park_to_wake(session, wake_n, method.client_core)
                except (RuntimeError, OSError, ValueError) as error:
                    wake = _na("workqueue", column, "park-to-wake", str(error))
                out["wake"].append(wake)
                if wake.get("status") == "ok":
                    out["checks"].append({"column": column.name, "check": "every push woke the parked consumer",
                                          "ok": session.admin.exists(WAKE_KEY) == 0,
                                          "detail": f"{wake_n} wakes, nothing left in the list"})
    if digests:
        out["checks"].append({"column": "all", "check": "digest after 7 LMOVE rotations equal across engines",
                              "ok": len(set(digests.values())) == 1,
                              "detail": ", ".join(f"{k} {v}" for k, v in digests.items())})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    out["notes"].append(f"RESP columns use one TCP connection pipelined at -P {method.pipeline} "
                        f"(the reference used a Unix socket at depth 64); goblin-ring call is one in flight")
    progress.done()
    return out


def workqueue_targets(result: dict) -> list[dict]:
    rows = {(r["column"], r["operation"]): r for r in result["rows"] if r.get("status") == "ok"}
    out = []
    for column in dict.fromkeys(r["column"] for r in result["rows"] if r["engine"].startswith("goblin")):
        for ready, plain, goal in (("BLPOP ready (two keys)", "LPOP", 0.8),
                                   ("BLMOVE ready rotation", "LMOVE same-list rotation", 0.9)):
            a, b = rows.get((column, ready)), rows.get((column, plain))
            ratio = a["ops_per_s"] / b["ops_per_s"] if a and b else None
            out.append({"target": f"{column}: {ready} >= {goal:.0%} of {plain}", "ratio": ratio,
                        "met": ratio is not None and ratio >= goal})
    # a counted pop on the PMA engine is one range mutation (command rates, same transport)
    for pma, segmented in (("goblin-pma native", "goblin-ring-native"), ("goblin-pma resp", "goblin-resp")):
        a, b = rows.get((pma, "LMPOP COUNT 8 (two keys)")), rows.get((segmented, "LMPOP COUNT 8 (two keys)"))
        if a and b:
            ratio = a["ops_per_s"] / b["ops_per_s"]
            out.append({"target": f"LMPOP COUNT 8: {pma} >= 4x {segmented}", "ratio": ratio, "met": ratio >= 4})
    wakes = {r["column"]: r for r in result.get("wake", []) if r.get("status") == "ok"}
    ring = next((r for c, r in wakes.items() if c.startswith("goblin-ring")), None)
    redis = wakes.get("redis")
    ratio = ring["p50_us"] / redis["p50_us"] if ring and redis else None
    out.append({"target": "park-to-wake p50 over the ring <= 1/5 of redis over TCP", "ratio": ratio,
                "met": ratio is not None and ratio <= 0.2})
    return out
