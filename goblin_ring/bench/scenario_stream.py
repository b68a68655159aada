"""scenario_stream.py — the `stream` scenario (issue 33): a stream's append rate, a short range
read, a consumer-group work queue and the bytes an entry costs, every engine side by side.

Rows (entries/s unless said):
  XADD * (1 field, 16 B value)        one call at a time for the Python columns (goblin ring's
                                      RingClient, redis-py over a Unix socket), pipelined at -P
                                      for the C columns (goblin ring native: gr_load_run over the
                                      typed XAddRequest; goblin RESP, redis, valkey: RESP windows)
  XRANGE - + COUNT 10                 reads of 10 entries (ops/s)
  work queue                          Python columns: N producer processes XADD, M consumer
                                      processes XREADGROUP COUNT 10 BLOCK 20 + XACK of what they
                                      got, until every entry is acknowledged (--producers,
                                      --consumers; 2 and 2 fit a 2-core machine), entries/s from
                                      the go signal to the last exit. C columns: one pipelined
                                      connection, each operation 10 XADDs with explicit IDs, an
                                      XREADGROUP COUNT 10 and an XACK of those 10 IDs
  XADD / XREADGROUP COUNT 1 -P 16     redis-benchmark, one client (RESP columns)
Memory: used_memory's growth per entry after 5 x -n XADDs (1M at the default -n 200000).

Targets (issue 33): bytes per entry below redis's; RingClient XADD >= 20x redis-py's; the
work queue over the ring (Python) >= 10x redis-py's; goblin RESP XADD and XREADGROUP
(redis-benchmark -c 1 -P 16) >= 1.2x redis-server's. bench/stream_quick.py is the same
measurement as a standalone script.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

from . import drivers
from .engines import Column, columns, open_session, unavailable
from .scenarios import Method, _na

KEY, QUEUE, MEMKEY, GROUP = b"bench:stream", b"bench:queue", b"bench:mem", b"g"
FIELD, VALUE = b"f", b"0123456789abcdef"
SKIPPED = ("redis-py-async", "goblin-ring-redispy", "goblin-ring-async", "goblin-pma")
XADD_LABEL, XRANGE_LABEL, QUEUE_LABEL = "XADD * (1 field, 16 B value)", "XRANGE - + COUNT 10", "work queue, entries/s"
BENCH_XADD, BENCH_XREADGROUP = "XADD (redis-benchmark -c 1 -P 16)", "XREADGROUP COUNT 1 (redis-benchmark -c 1 -P 16)"


def stream_columns(engines: list[str]) -> list[Column]:
    """goblin ring (Python, call), goblin ring native, goblin RESP, redis, valkey, redis-py (call)."""
    out = []
    for column in columns(engines, modes=("call",), python=True):
        if column.engine in SKIPPED or (column.engine == "redis-py" and column.mode != "call"):
            continue
        out.append(column)
    return out


def queue_cycle(operations: int) -> list[list[tuple]]:
    """The C columns' work queue: per operation 10 XADDs of explicit IDs, one XREADGROUP COUNT 10
    (which gets exactly those), one XACK of them."""
    cycle = []
    for k in range(operations):
        ids = [b"%d-1" % (10 * k + j + 1) for j in range(10)]
        cycle.append([*(("XADD", QUEUE, i, FIELD, VALUE) for i in ids),
                      ("XREADGROUP", "GROUP", GROUP, "c", "COUNT", 10, "STREAMS", QUEUE, ">"),
                      ("XACK", QUEUE, GROUP, *ids)])
    return cycle


WORKER = r"""
import sys
role, transport, name, runtime_dir, sock, key, count, producers, me = sys.argv[1:10]
if transport == "ring":
    from goblin_ring import RingClient
    client = RingClient(name=name, runtime_dir=runtime_dir, timeout=120)
else:
    import redis
    client = redis.Redis(unix_socket_path=sock, socket_timeout=120)
done_key = key + ":done"
print("ready", flush=True)
sys.stdin.readline()
total = 0
if role == "producer":
    fields = {b"f": b"0123456789abcdef"}
    for _ in range(int(count)):
        client.xadd(key, fields)
    client.incr(done_key)
else:
    finishing = False
    while True:
        got = client.xreadgroup("g", "c" + me, {key: ">"}, count=10, **({} if finishing else {"block": 20}))
        entries = got[0][1] if got else []
        if entries:
            ids = [entry_id for entry_id, _ in entries]
            client.xack(key, "g", *ids)
            total += len(ids)
        elif finishing:
            break
        elif int(client.get(done_key) or 0) == int(producers):
            finishing = True          # one more read: what was added before the last producer finished
print(total, flush=True)
client.close()
"""


def python_work_queue(session, method: Method, entries: int) -> tuple[float, str]:
    """(entries/s, problem or '') of N producer and M consumer processes on the client core."""
    column, server, admin = session.column, session.server, session.admin
    transport = "ring" if column.over_ring else "resp"
    admin.delete(QUEUE, QUEUE + b":done")
    admin.execute_command("XGROUP", "CREATE", QUEUE, GROUP, "$", "MKSTREAM")
    socket_path = os.path.join(str(getattr(server, "workdir", "")), "redis.sock")   # redis-py's (engines.py)
    share = [entries // method.producers + (1 if i < entries % method.producers else 0) for i in range(method.producers)]
    roles = [("producer", n, i) for i, n in enumerate(share)] + [("consumer", 0, i) for i in range(method.consumers)]
    processes = []
    try:
        for role, count, me in roles:
            argv = [sys.executable, "-c", WORKER, role, transport, getattr(server, "name", ""),
                    str(getattr(server, "runtime_dir", "")), socket_path, QUEUE.decode(), str(count),
                    str(method.producers), str(me)]
            if method.client_core is not None:
                argv = ["taskset", "-c", str(method.client_core), *argv]
            processes.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for process in processes:
            if process.stdout.readline().strip() != "ready":
                return 0.0, "a work-queue process did not start"
        start = time.perf_counter()
        for process in processes:
            process.stdin.write("go\n")
            process.stdin.flush()
        consumed = 0
        for (role, _, _), process in zip(roles, processes):
            line = process.stdout.readline().strip()
            consumed += int(line or 0) if role == "consumer" else 0
            process.wait(600)
        elapsed = time.perf_counter() - start
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            for stream in (process.stdin, process.stdout):
                stream.close()
    pending = admin.execute_command("XPENDING", QUEUE, GROUP)[0]
    length = admin.execute_command("XLEN", QUEUE)
    problem = "" if consumed == entries == length and pending == 0 else \
        f"work queue: {consumed} consumed, XLEN {length}, {pending} pending; want {entries}, {entries}, 0"
    return entries / elapsed, problem


def _row(column: Column, label: str, rates: list[float], tool: str, **extra: Any) -> dict:
    return {"scenario": "stream", "engine": column.engine, "mode": column.mode, "column": column.name,
            "operation": label, "status": "ok", "ops_per_s": statistics.median(rates),
            "trials": [round(r, 1) for r in rates], "tool": tool, **extra}


def _timed(session, method: Method, label: str, cycle, count: int, depth: int, before: Callable | None = None,
           progress: Callable = print) -> tuple[dict, str]:
    rates = []
    for trial in range(method.trials):
        progress(f"stream {session.column.name}: {label} trial {trial + 1}/{method.trials}")
        if before:
            before()
        run = session.driver.run(cycle, 0, count, depth)
        if run.errors:
            return _na("stream", session.column, label, f"server replied: {run.first_error}"), ""
        rates.append(count / run.elapsed_s)
    return _row(session.column, label, rates, type(session.driver).__name__), ""


def stream_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    n = method.n
    memory_entries = 5 * n
    queue_ops = max(n // 10, 1)
    out: dict[str, Any] = {"scenario": "stream", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [f"XADD and XRANGE rows: {n} operations; work queue: {10 * queue_ops} entries "
                                     f"({method.producers} producers x {method.consumers} consumers for the Python "
                                     f"columns); memory after {memory_entries} XADDs"],
                           "versions": {}, "load": []}
    leftovers: list[str] = []
    xadd_cycle = [[("XADD", KEY, "*", FIELD, VALUE)]]
    xrange_cycle = [[("XRANGE", KEY, "-", "+", "COUNT", 10)]]
    cycle_queue = queue_cycle(queue_ops)
    labels = (XADD_LABEL, XRANGE_LABEL, QUEUE_LABEL, BENCH_XADD, BENCH_XREADGROUP)
    for column in stream_columns(engines):
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"] += [_na("stream", column, label, why) for label in labels]
            continue
        progress(f"stream {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            python = column.mode == "call"
            depth = 1 if python else method.pipeline
            admin = session.admin
            problems: list[str] = []

            def fresh() -> None:
                admin.delete(KEY)

            row, _ = _timed(session, method, XADD_LABEL, xadd_cycle, n, depth, fresh, progress)
            out["rows"].append(row)
            if admin.execute_command("XLEN", KEY) != n:
                problems.append(f"XLEN {admin.execute_command('XLEN', KEY)} after {n} XADDs")
            row, _ = _timed(session, method, XRANGE_LABEL, xrange_cycle, n, depth, None, progress)
            out["rows"].append(row)
            # the work queue
            if python:
                rates = []
                for trial in range(method.trials):
                    progress(f"stream {column.name}: work queue trial {trial + 1}/{method.trials}")
                    rate, problem = python_work_queue(session, method, 10 * queue_ops)
                    if problem:
                        problems.append(problem)
                        break
                    rates.append(rate)
                out["rows"].append(_row(column, QUEUE_LABEL, rates,
                                        f"{method.producers}x{method.consumers} processes") if rates
                                   else _na("stream", column, QUEUE_LABEL, problems[-1]))
            else:
                def fresh_queue() -> None:
                    admin.delete(QUEUE)
                    admin.execute_command("XGROUP", "CREATE", QUEUE, GROUP, "0", "MKSTREAM")

                row, _ = _timed(session, method, QUEUE_LABEL, cycle_queue, queue_ops, depth, fresh_queue, progress)
                if row.get("status") == "ok":
                    row["values_per_s"] = 10 * row["ops_per_s"]
                out["rows"].append(row)
                pending = admin.execute_command("XPENDING", QUEUE, GROUP)[0]
                if row.get("status") == "ok" and (pending != 0 or admin.execute_command("XLEN", QUEUE) != 10 * queue_ops):
                    problems.append(f"work queue: {pending} pending after every XACK")
            # redis-benchmark rows, and the memory per entry (C columns: one server per engine)
            if session.uses_redis_benchmark:
                for label, command, prepare in (
                        (BENCH_XADD, ("XADD", KEY, "*", FIELD, VALUE), fresh),
                        (BENCH_XREADGROUP, ("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", KEY, ">"),
                         lambda: admin.execute_command("XGROUP", "CREATE", KEY, "g", "0"))):
                    rates = []
                    for trial in range(method.trials):
                        progress(f"stream {column.name}: {label} trial {trial + 1}/{method.trials}")
                        if label == BENCH_XREADGROUP:
                            admin.execute_command("XGROUP", "DESTROY", KEY, "g")
                        prepare()
                        rates.append(drivers.redis_benchmark(session.server.port, n, 16, command, method.client_core))
                    out["rows"].append(_row(column, label, rates, "redis-benchmark"))
            if not python and column.engine != "goblin-resp":   # goblin's figure comes from the native column
                progress(f"stream {column.name}: memory after {memory_entries} XADDs")
                admin.delete(MEMKEY)
                before = session.info_memory()
                session.driver.run([[("XADD", MEMKEY, "*", FIELD, VALUE)]], 0, memory_entries, method.pipeline)
                grown = session.info_memory() - before
                length = admin.execute_command("XLEN", MEMKEY)
                if length != memory_entries:
                    problems.append(f"memory: XLEN {length}, want {memory_entries}")
                out["memory"].append({"engine": column.engine, "mode": column.mode, "column": column.name,
                                      "phase": f"after {memory_entries} XADDs", "metric": "used_memory_delta",
                                      "bytes": grown, "bytes_per_item": grown / memory_entries})
                admin.delete(MEMKEY)
            out["checks"].append({"column": column.name, "check": "every XADD landed and the work queue drained",
                                  "ok": not problems, "detail": "; ".join(problems) or "XLEN and XPENDING as expected"})
    out["targets"] = stream_targets(out)
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


def stream_targets(result: dict) -> list[dict]:
    """Issue 33's targets, measured in this run (None where a column did not run)."""
    rate = {(r["column"], r["operation"]): r.get("values_per_s") or r.get("ops_per_s")
            for r in result["rows"] if r.get("status") == "ok"}
    memory = {m["column"]: m["bytes_per_item"] for m in result["memory"]}

    def ratio(a: str, b: str, label: str) -> float | None:
        x, y = rate.get((a, label)), rate.get((b, label))
        return x / y if x and y else None

    goblin_bytes, redis_bytes = memory.get("goblin-ring-native"), memory.get("redis")
    out = [{"target": "bytes per entry below redis's (used_memory growth per entry; 'ratio' is goblin / redis)",
            "ratio": goblin_bytes / redis_bytes if goblin_bytes and redis_bytes else None,
            "met": bool(goblin_bytes and redis_bytes and goblin_bytes < redis_bytes)}]
    for label, what, goal in ((XADD_LABEL, "RingClient XADD", 20), (QUEUE_LABEL, "work queue over the ring (Python)", 10)):
        r = ratio("goblin-ring call", "redis-py call", label)
        out.append({"target": f"{what} >= {goal}x redis-py over a Unix socket", "ratio": r,
                    "met": r is not None and r >= goal})
    for label in (BENCH_XADD, BENCH_XREADGROUP):
        r = ratio("goblin-resp", "redis", label)
        out.append({"target": f"goblin RESP {label} >= 1.2x redis-server", "ratio": r, "met": r is not None and r >= 1.2})
    return out
