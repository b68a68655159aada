"""scenarios.py — list100k, pingpong and latency: what each measures and how it checks itself;
and the helpers every scenario module shares (Method, the rows' timing, values, digests).
registry.py names the scenarios for the CLI.

Every scenario returns a dict {"scenario", "columns", "rows", "memory", "checks", "notes"}
that report.py turns into Markdown, JSON, CSV and a chart. Rates are the median over
--trials; each row is preceded by --warmup operations of the same kind (untimed).
"""

from __future__ import annotations

import gc
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy

from .. import _native
from . import drivers
from .engines import Column, Session, columns, open_session, unavailable

KEY = b"bench:list"
WARM_KEY = b"bench:warm"
LATENCY_KEY = b"bench:latency"
PERCENTILES = (50, 90, 99, 99.9, 99.99)


@dataclass
class Method:
    n: int = 200_000
    pipeline: int = 256
    trials: int = 3
    warmup: int = 4096
    list_size: int = 100_000
    value_size: int = 16
    server_core: int | None = 0
    client_core: int | None = 1
    quick: bool = False
    clients: int = 1          # RESP columns: this many one-in-flight clients (redis-benchmark -c N -P 1)
    hash_size: int = 1_000_000   # the hash scenario's fields
    zset_size: int = 1_000_000   # the zset scenario's members
    replay_count: int = 2_000_000   # the zset-replay scenario's commands
    tests: tuple = ()         # -t: the rows to run, where a scenario names them (empty: all)
    producers: int = 2        # the stream scenario's work queue: producer processes ...
    consumers: int = 2        # ... and consumer processes (XREADGROUP COUNT 10 + XACK)


def values(count: int, size: int) -> list[bytes]:
    """count distinct values of exactly size bytes (digits only, so no pushed value collides)."""
    if len(str(max(count - 1, 0))) > size:
        raise ValueError(f"--value-size {size} cannot hold {count} distinct decimal values")
    return [b"%0*d" % (size, i) for i in range(count)]


def foreign(tag: bytes, size: int, i: int = 0) -> bytes:
    """A value that is in no list values() made (it has a letter)."""
    return (tag + b"%0*d" % (max(size - len(tag), 1), i))[:max(size, len(tag) + 1)]


def digest(items: list[bytes]) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(b"%d:" % len(item))
        h.update(item)
    return h.hexdigest()[:16]


def percentiles_us(latencies_ns) -> dict:
    array = numpy.asarray(latencies_ns, dtype=numpy.float64)
    points = numpy.percentile(array, PERCENTILES)
    out = {f"p{p:g}_us": float(v) / 1e3 for p, v in zip(PERCENTILES, points)}
    out["ops_per_s"] = 1e9 / float(array.mean())
    return out


# ---------------------------------------------------------------- list100k

@dataclass
class Row:
    label: str
    kind: str                 # population, fixed, compound
    cycle: list               # logical operations, each a list of commands
    count: int                # logical operations per trial
    values_per_op: int = 0    # values moved per operation (values_per_s); 0: not reported
    rotates: bool = False     # RPUSH items[k] + LPOP: the list turns by one per operation


def list_rows(method: Method, items: list[bytes]) -> list[Row]:
    n, size, N = method.n, method.value_size, len(items)
    mid = N // 2
    push = foreign(b"P", size)
    eight = [foreign(b"Q", size, j) for j in range(8)]
    heavy = max(method.n // 100, 10)          # LINSERT + LREM scans half the list twice
    population = [[("RPUSH", KEY, *items[i:i + 128])] for i in range(0, N, 128)]
    rows = [Row(f"population (RPUSH x128 batches), items/s", "population", population, len(population), 128),
            Row("LLEN", "fixed", [[("LLEN", KEY)]], n)]
    for label, index in (("0", 0), ("N/4", N // 4), ("N/2", mid), ("3N/4", 3 * N // 4), ("-1", -1)):
        rows.append(Row(f"LINDEX {index}" if label in ("0", "-1") else f"LINDEX {index} ({label})", "fixed",
                        [[("LINDEX", KEY, index)]], n))
    rows += [
        Row(f"LRANGE {mid - 8} {mid + 7}", "fixed", [[("LRANGE", KEY, mid - 8, mid + 7)]], n, 16),
        Row(f"LSET {mid}", "fixed", [[("LSET", KEY, mid, items[mid])]], n),
        Row(f"LINSERT BEFORE pivot + LREM (pair; n/100 = {heavy})", "compound",
            [[("LINSERT", KEY, "BEFORE", items[mid], push), ("LREM", KEY, 1, push)]], heavy),
        Row("LPUSH + LPOP (pair)", "compound", [[("LPUSH", KEY, push), ("LPOP", KEY)]], n),
        Row("RPUSH + RPOP (pair)", "compound", [[("RPUSH", KEY, push), ("RPOP", KEY)]], n),
        Row("LPUSH 8 + LPOP 8 (pair)", "compound", [[("LPUSH", KEY, *eight), ("LPOP", KEY, 8)]], n, 8),
        Row("RPUSH + LPOP (pair, rotates)", "compound", [[("RPUSH", KEY, item), ("LPOP", KEY)] for item in items],
            n, rotates=True),
    ]
    return rows


class Progress:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.tty = enabled and os.isatty(2)
        self.last = 0.0

    def __call__(self, text: str) -> None:
        if not self.enabled:
            return
        if self.tty:
            os.write(2, f"\r\033[K{text[:150]}".encode())
        else:
            now = time.monotonic()
            if now - self.last > 1.0:
                os.write(2, f"{text}\n".encode())
                self.last = now

    def done(self) -> None:
        if self.tty:
            os.write(2, b"\r\033[K")


def _na(scenario: str, column: Column, operation: str, reason: str) -> dict:
    return {"scenario": scenario, "engine": column.engine, "mode": column.mode, "column": column.name,
            "operation": operation, "status": "n/a", "reason": reason}


def _memory_snapshot(session: Session) -> dict:
    usage = session.admin.memory_usage(KEY)
    goblin = session.goblin_memory()
    return {"rss": session.rss(), "used_memory": session.info_memory(), "memory_usage_key": usage,
            "goblin_memory_total": goblin["total"] if goblin else None}


def _memory_rows(column: Column, phase: str, base: dict, now: dict, items: int) -> list[dict]:
    out = []
    for metric, delta in (("rss_delta", True), ("used_memory_delta", True), ("memory_usage_key", False),
                          ("goblin_memory_total_delta", True)):
        source = metric.replace("_delta", "")
        value = now.get(source)
        if value is None:
            out.append({"engine": column.engine, "mode": column.mode, "column": column.name, "phase": phase,
                        "metric": metric, "bytes": None, "bytes_per_item": None})
            continue
        if delta:
            value -= base[source]
        out.append({"engine": column.engine, "mode": column.mode, "column": column.name, "phase": phase,
                    "metric": metric, "bytes": value, "bytes_per_item": value / items})
    return out


def _run_row(session: Session, row: Row, method: Method, offsets: dict, progress: Callable,
             on_population_trial: Callable[[int], None]) -> dict:
    column = session.column
    result = {"scenario": "list100k", "engine": column.engine, "mode": column.mode, "column": column.name,
              "operation": row.label}
    reason = session.supports(row.cycle)
    if reason:
        return _na("list100k", column, row.label, reason)
    many_clients = method.clients > 1 and not column.over_ring
    if many_clients and not (row.kind == "fixed" and session.uses_redis_benchmark):
        return _na("list100k", column, row.label,
                   f"--clients {method.clients}: only the fixed rows (redis-benchmark -c N -P 1) run on RESP columns")
    depth = method.pipeline if column.mode != "call" else 1
    driver = session.driver

    def timed(cycle, count) -> drivers.Run:
        at = offsets.get(row.label, 0)
        run = driver.run(cycle, at, count, depth)
        offsets[row.label] = at + count
        return run

    # warmup: same commands, untimed (population warms on another key, then drops it)
    if row.kind == "population":
        warm_cycle = [[(c[0], WARM_KEY, *c[2:]) for c in op] for op in row.cycle]
        warm = driver.run(warm_cycle, 0, min(len(warm_cycle), max(1, method.warmup // 128)), depth)
        session.admin.delete(WARM_KEY)
    else:
        warm_count = max(1, method.warmup // 100) if row.label.startswith("LINSERT") else method.warmup
        warm = timed(row.cycle, warm_count)
    if warm.errors:
        return _na("list100k", column, row.label, f"server replied: {warm.first_error}")
    rates = []
    for trial in range(method.trials):
        progress(f"list100k {column.name}: {row.label} trial {trial + 1}/{method.trials}")
        if row.kind == "population":
            session.admin.delete(KEY)
            on_population_trial(trial)
        if row.kind == "fixed" and session.uses_redis_benchmark:
            try:
                rates.append(drivers.redis_benchmark(session.server.port, row.count,
                                                     1 if many_clients else method.pipeline, row.cycle[0][0],
                                                     method.client_core, method.clients))
            except RuntimeError as error:      # reported as n/a with the tool's words, never a crash
                return _na("list100k", column, row.label, str(error))
            continue
        run = timed(row.cycle, row.count)
        if run.errors:
            return _na("list100k", column, row.label, f"server replied: {run.first_error}")
        rates.append(row.count / run.elapsed_s)
        if row.kind == "population":
            on_population_trial(-1 - trial)
    rate = statistics.median(rates)
    result.update(status="ok", ops_per_s=rate, trials=[round(r, 1) for r in rates],
                  tool=(f"redis-benchmark -c {method.clients} -P 1" if many_clients else "redis-benchmark")
                  if row.kind == "fixed" and session.uses_redis_benchmark else
                  type(driver).__name__ + (f".{column.mode}" if column.mode else ""))
    if row.kind == "population":
        total_values = sum(len(op[0]) - 2 for op in row.cycle)
        result["values_per_s"] = rate * total_values / row.count
    elif row.values_per_op:
        result["values_per_s"] = rate * row.values_per_op
    return result


def _record_internals(out: dict, session: Session, column: Column, phase: str) -> None:
    report = session.list_internals(KEY)
    if report is not None:
        out["internals"].append({"column": column.name, "phase": phase, "report": report})


def list100k(method: Method, engines: list[str], progress: Callable) -> dict:
    items = values(method.list_size, method.value_size)
    rows_spec = list_rows(method, items)
    out: dict[str, Any] = {"scenario": "list100k", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [], "versions": {}, "load": [], "internals": [], "clients": method.clients}
    if method.clients > 1:
        out["notes"].append(f"RESP columns: {method.clients} clients, one request in flight each (redis-benchmark "
                            f"-c {method.clients} -P 1), fixed rows only; ring columns as without --clients")
    leftovers: list[str] = []
    digests = {}
    for column in columns(engines, python=True):
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"] += [_na("list100k", column, r.label, why) for r in rows_spec]
            out["notes"].append(f"{column.name}: n/a — {why}")
            continue
        progress(f"list100k {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            offsets: dict = {}
            memory: dict = {}

            def on_population_trial(trial: int) -> None:
                if trial == 0:
                    memory["base"] = _memory_snapshot(session)
                elif trial == -1:
                    memory["populated"] = _memory_snapshot(session)
                    _record_internals(out, session, column, "after population")

            length_ok, first_bad = True, ""
            for row in rows_spec:
                result = _run_row(session, row, method, offsets, progress, on_population_trial)
                out["rows"].append(result)
                length = session.admin.llen(KEY)
                if length != len(items) and result.get("status") == "ok":
                    length_ok, first_bad = False, first_bad or f"{row.label}: LLEN {length}"
                if row.kind == "population" and result.get("status") != "ok":
                    session.admin.delete(KEY)      # could not populate over this transport: use RESP
                    for start in range(0, len(items), 1000):
                        session.admin.rpush(KEY, *items[start:start + 1000])
            if "populated" in memory:
                out["memory"] += _memory_rows(column, "after population", memory["base"], memory["populated"],
                                              len(items))
                out["memory"] += _memory_rows(column, "after operations", memory["base"],
                                              _memory_snapshot(session), len(items))
            _record_internals(out, session, column, "after operations")
            final = session.admin.lrange(KEY, 0, -1)
            turned = offsets.get(rows_spec[-1].label, 0) % len(items)
            expected = items[turned:] + items[:turned]
            contents_ok = final == expected
            canonical = final[len(final) - turned:] + final[:len(final) - turned] if turned else final
            digests[column.name] = digest(canonical)
            out["checks"].append({"column": column.name, "check": "list length kept after every row",
                                  "ok": length_ok, "detail": first_bad or f"LLEN {len(items)}"})
            out["checks"].append({"column": column.name, "check": "final contents as expected",
                                  "ok": contents_ok, "detail": f"rotated by {turned} (RPUSH+LPOP pairs); "
                                                               f"digest {digests[column.name]}"})
    if digests:
        same = len(set(digests.values())) == 1
        out["checks"].append({"column": "all", "check": "digest of the final contents equal across engines",
                              "ok": same, "detail": ", ".join(f"{k} {v}" for k, v in digests.items())})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


# ---------------------------------------------------------------- pingpong

def _ring_floor(n: int, server_core: int | None, client_core: int | None) -> dict:
    native = Path(__file__).resolve().parents[2] / "native"
    source = native / "tests" / "bench_ring.c"
    if not shutil.which("gcc") or not source.exists():
        raise FileNotFoundError("needs gcc and native/tests/bench_ring.c (a source checkout)")
    import json

    with tempfile.TemporaryDirectory() as scratch:
        binary = Path(scratch) / "bench_ring"
        subprocess.run(["gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", f"-I{native}", str(native / "ring" / "ring.c"),
                        str(source), "-o", str(binary), "-lrt"], check=True, capture_output=True)
        cores = [str(client_core if client_core is not None else 0), str(server_core if server_core is not None else 0)]
        stdout = subprocess.run([str(binary), "-n", str(n), "-m", "2000000", *cores],
                                capture_output=True, text=True, check=True, timeout=600).stdout
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    ping = next(r for r in rows if r["bench"] == "ping_pong")
    return {"p50_us": ping["p50_ns"] / 1e3, "p90_us": ping["p90_ns"] / 1e3, "p99_us": ping["p99_ns"] / 1e3,
            "p99.9_us": ping["p999_ns"] / 1e3, "p99.99_us": None, "ops_per_s": ping["round_trips_per_s"],
            "replies": ping["round_trips"]}


def _timed_calls(call: Callable, n: int) -> tuple[numpy.ndarray, int]:
    clock = time.perf_counter_ns
    latencies = numpy.empty(n, dtype=numpy.int64)
    good = 0
    for i in range(n):
        start = clock()
        if call():
            good += 1
        latencies[i] = clock() - start
    return latencies, good


def _timed_calls_with_cpu(call: Callable, n: int) -> tuple[numpy.ndarray, numpy.ndarray, int]:
    """_timed_calls, and the calling thread's CPU time around each call (read outside the wall
    clock's window): a call whose wall time is long but whose CPU time is short left the CPU
    (preempted, or asleep on the reply futex after its spin)."""
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    latencies = numpy.empty(n, dtype=numpy.int64)
    cpu = numpy.empty(n, dtype=numpy.int64)
    good = 0
    for i in range(n):
        cpu_start = cpu_clock()
        start = clock()
        if call():
            good += 1
        latencies[i] = clock() - start
        cpu[i] = cpu_clock() - cpu_start
    return latencies, cpu, good


SLOWLOG_THRESHOLD_US = 500     # the write-tail loops log every command slower than this, both servers


def _scheduling(pid: int) -> tuple[int, int]:
    """Over every thread of pid: how many times the scheduler took the CPU from it
    (nonvoluntary_ctxt_switches) and how long it waited, runnable, for a CPU (schedstat's
    run-queue nanoseconds)."""
    switches = waited_ns = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/status") as status:
                for line in status:
                    if line.startswith("nonvoluntary_ctxt_switches:"):
                        switches += int(line.split()[1])
            with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
                waited_ns += int(schedstat.read().split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return switches, waited_ns


def _thread_runqueue_wait_ns() -> int:
    """How long the calling thread has waited, runnable, for a CPU (schedstat)."""
    try:
        with open("/proc/thread-self/schedstat") as schedstat:
            return int(schedstat.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def write_tail(session: Session, count: int, native_cycle: Callable[[], list], one_call: Callable[[Any], bool],
               command: bytes, argument_index: Callable[[list], int | None]) -> dict:
    """The hash and zset scenarios' write-path tail: count writes, one in flight, each timed by
    the client (the native column: by the C load generator over native_cycle(); the others: by
    one_call(client) per write, the garbage collector off), with the server's side beside it:
    SLOWLOG (slowlog-log-slower-than SLOWLOG_THRESHOLD_US, on goblin and redis alike) gives the
    slowest `command` the server itself measured and how many were over 0.5 ms and 1 ms;
    argument_index(argv) says which write of the loop an entry was, so the client's latency of
    the server's slowest write, and the server's view of the client's slowest, are reported.
    Beside them: the client thread's CPU time over the loop and in its slowest call, and for
    the client thread and the server process the involuntary context switches and the time
    spent runnable but waiting for a CPU (preemption by other processes on a shared machine)."""
    column = session.column
    admin = session.admin
    admin.execute_command("CONFIG", "SET", "slowlog-max-len", str(max(count, 128)))
    admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", str(SLOWLOG_THRESHOLD_US))
    admin.execute_command("SLOWLOG", "RESET")
    server_switches, server_waited = _scheduling(session.server.pid)
    client_switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
    client_waited = _thread_runqueue_wait_ns()
    wall_start, cpu_start = time.perf_counter_ns(), time.thread_time_ns()
    cpu_per_call = None
    if column.native:
        latencies = numpy.empty(count, dtype=numpy.int64)
        run = session.driver.run(native_cycle(), 0, count, 1, latencies)
        good = run.replies - run.errors
    else:
        client = session.ring if column.over_ring else admin
        enabled = gc.isenabled()
        gc.disable()   # a stall left in max is the server's or the machine's, not the collector's
        try:
            latencies, cpu_per_call, good = _timed_calls_with_cpu(lambda: one_call(client), count)
        finally:
            if enabled:
                gc.enable()
    wall_ns, cpu_ns = time.perf_counter_ns() - wall_start, time.thread_time_ns() - cpu_start
    client_switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - client_switches
    client_waited = _thread_runqueue_wait_ns() - client_waited
    switches, waited = _scheduling(session.server.pid)
    server_switches, server_waited = switches - server_switches, waited - server_waited
    entries = admin.execute_command("SLOWLOG", "GET", "-1")
    admin.execute_command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    admin.execute_command("SLOWLOG", "RESET")
    server_us = {}      # loop index -> the server's duration, microseconds
    for entry in entries:
        argv = entry[3]
        if argv and argv[0].lower() == command:
            index = argument_index(argv)
            if index is not None:
                server_us[index] = int(entry[2])
    row = {"n": count, "replies": good, "max_us": float(numpy.max(latencies)) / 1e3}
    row.update(percentiles_us(latencies))
    slowest_call = int(numpy.argmax(latencies))
    slowest_logged = max(server_us, key=server_us.get) if server_us else None
    row.update({
        "server_max_us": server_us[slowest_logged] if server_us else None,
        "server_over_500us": sum(1 for us in server_us.values() if us >= 500),
        "server_over_1ms": sum(1 for us in server_us.values() if us >= 1000),
        "client_us_of_server_slowest": (float(latencies[slowest_logged]) / 1e3
                                        if slowest_logged is not None else None),
        "server_us_of_client_slowest": server_us.get(slowest_call),   # None: under the threshold
        "client_cpu_us_of_client_slowest": (float(cpu_per_call[slowest_call]) / 1e3
                                            if cpu_per_call is not None else None),
        "client_cpu_share": cpu_ns / wall_ns if wall_ns else None,
        "client_involuntary_switches": client_switches,
        "server_involuntary_switches": server_switches,
        "client_runqueue_wait_ms": client_waited / 1e6,
        "server_runqueue_wait_ms": server_waited / 1e6,
    })
    return row


def _latency_row(scenario: str, column: Column, operation: str, latencies, replies: int, n: int) -> dict:
    row = {"scenario": scenario, "engine": column.engine, "mode": column.mode, "column": column.name,
           "operation": operation, "status": "ok", "n": n, "replies": replies}
    row.update(percentiles_us(latencies))
    return row


IDLE_PAUSES_MS = (1, 10)


def _idle_rows(column: Column, ping: Callable, samples: int) -> list[dict]:
    """The `idle` rows: a PING after the server has been idle for 1 ms and 10 ms, so that an
    adaptive server has gone to sleep (the wake-up, not the steady state)."""
    rows = []
    for pause_ms in IDLE_PAUSES_MS:
        latencies = numpy.empty(samples, dtype=numpy.int64)
        good = 0
        for i in range(samples):
            time.sleep(pause_ms / 1000)
            start = time.perf_counter_ns()
            if ping():
                good += 1
            latencies[i] = time.perf_counter_ns() - start
        row = _latency_row("pingpong", column, f"PING after {pause_ms} ms idle", latencies, good, samples)
        row["idle_ms"] = pause_ms
        rows.append(row)
    return rows


def idle_targets(result: dict) -> list[dict]:
    """The idle target: a ring PING after 10 ms idle (adaptive server) has p50 <= 50 us and below RESP's."""
    rows = {row["column"]: row for row in result.get("idle", []) if row.get("idle_ms") == 10 and row["status"] == "ok"}
    ring, resp = rows.get("goblin-ring call"), rows.get("goblin-resp")
    if ring is None:
        return []
    goals = [{"target": "ring PING after 10 ms idle: p50 <= 50 us", "ratio": ring["p50_us"], "unit": " us",
              "met": ring["p50_us"] <= 50}]
    if resp is not None:
        goals.append({"target": "ring PING after 10 ms idle: p50 below goblin-resp's (ring / resp)",
                      "ratio": ring["p50_us"] / resp["p50_us"], "met": ring["p50_us"] < resp["p50_us"]})
    return goals


def pingpong(method: Method, engines: list[str], progress: Callable) -> dict:
    n = method.n
    out: dict[str, Any] = {"scenario": "pingpong", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [], "versions": {}, "load": [], "clients": method.clients, "idle": []}
    idle_samples = 50 if method.quick else 300
    leftovers: list[str] = []
    many = (f"PING, {method.clients} clients one in flight (redis-benchmark -c {method.clients} -P 1)"
            if method.clients > 1 else "")
    plan = []
    for engine in engines:
        if engine == "goblin-ring-native":
            plan[:0] = [(Column(engine, "floor"), "C ring-to-ring, no server (bench_ring.c)"),
                        (Column(engine), "C client through the server (gr_client_ping_loop)")]
        elif engine == "goblin-ring":
            plan.append((Column(engine, "call"), "Python RingClient.ping()"))
        else:
            plan.append((Column(engine), many or "Python RespClient.ping() over TCP"))
    for column, operation in plan:
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"].append(_na("pingpong", column, operation, why))
            continue
        progress(f"pingpong {column.name}: {operation}")
        if column.mode == "floor":
            try:
                figures = _ring_floor(n, method.server_core, method.client_core)
            except (OSError, subprocess.CalledProcessError) as error:
                out["rows"].append(_na("pingpong", column, operation, str(error)))
                continue
            row = {"scenario": "pingpong", "engine": column.engine, "mode": column.mode, "column": column.name,
                   "operation": operation, "status": "ok", "n": n}
            row.update(figures)
            out["rows"].append(row)
            out["checks"].append({"column": column.name, "check": "every ping answered",
                                  "ok": figures["replies"] == n, "detail": f"{figures['replies']} of {n}"})
            continue
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            if many and not column.over_ring:
                try:
                    drivers.redis_benchmark(session.server.port, method.warmup, 1, ("PING",), method.client_core,
                                            method.clients)
                    trials = [drivers.redis_benchmark_figures(session.server.port, n, 1, ("PING",),
                                                              method.client_core, method.clients)
                              for _ in range(method.trials)]
                except RuntimeError as error:      # n/a with the tool's words, never a crash
                    out["rows"].append(_na("pingpong", column, operation, str(error)))
                    continue
                figures = sorted(trials, key=lambda t: t["ops_per_s"])[len(trials) // 2]   # the median trial
                out["rows"].append({"scenario": "pingpong", "engine": column.engine, "mode": column.mode,
                                    "column": column.name, "operation": operation, "status": "ok", "n": n,
                                    "tool": f"redis-benchmark -c {method.clients} -P 1",
                                    "trials": [round(t["ops_per_s"], 1) for t in trials], **figures})
                continue
            if column.engine == "goblin-ring-native":
                core = session.ring._live()
                warm = numpy.empty(method.warmup, dtype=numpy.int64)
                core.check(_native.lib.gr_client_ping_loop(core.pointer, len(warm),
                                                            _native.ffi.cast("int64_t *", _native.ffi.from_buffer(warm))))
                latencies = numpy.empty(n, dtype=numpy.int64)
                core.check(_native.lib.gr_client_ping_loop(core.pointer, n,
                                                            _native.ffi.cast("int64_t *", _native.ffi.from_buffer(latencies))))
                replies = n          # the loop returns an error status on any bad reply
            else:
                client = session.ring if column.over_ring else session.admin
                _timed_calls(client.ping, method.warmup)
                latencies, replies = _timed_calls(client.ping, n)
            out["rows"].append(_latency_row("pingpong", column, operation, latencies, replies, n))
            out["checks"].append({"column": column.name, "check": "every ping answered PONG",
                                  "ok": replies == n, "detail": f"{replies} of {n}"})
        if column.engine != "goblin-ring-native":
            # A server of its own, never pinned: a pinned goblin busy-polls and never sleeps,
            # and the row is about the default adaptive mode's wake-up.
            progress(f"pingpong {column.name}: PING after {' and '.join(map(str, IDLE_PAUSES_MS))} ms idle")
            with open_session(column, None, leftovers, []) as session:
                client = session.ring if column.over_ring else session.admin
                _timed_calls(client.ping, 100)
                out["idle"] += _idle_rows(column, client.ping, idle_samples)
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


# ---------------------------------------------------------------- latency

def latency(method: Method, engines: list[str], progress: Callable) -> dict:
    n = method.n
    items = values(n, method.value_size)
    out: dict[str, Any] = {"scenario": "latency", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [], "versions": {}, "load": []}
    leftovers: list[str] = []
    digests = {}
    operation = f"RPUSH of one {method.value_size}-byte value to a fresh list, depth 1"
    for engine in engines:
        column = Column(engine, "call") if engine == "goblin-ring" else Column(engine)
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"].append(_na("latency", column, operation, why))
            continue
        progress(f"latency {column.name}: {n} RPUSH, one in flight")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            cycle = [[("RPUSH", LATENCY_KEY, item)] for item in items]
            warm_cycle = [[("RPUSH", WARM_KEY, item)] for item in items[:method.warmup]]
            if column.native:
                driver = session.driver
                driver.run(warm_cycle, 0, len(warm_cycle), 1, numpy.empty(len(warm_cycle), dtype=numpy.int64))
                latencies = numpy.empty(n, dtype=numpy.int64)
                run = driver.run(cycle, 0, n, 1, latencies)
                replies = run.replies - run.errors
            else:
                client = session.ring if column.over_ring else session.admin
                for item in items[:method.warmup]:
                    client.rpush(WARM_KEY, item)
                calls = iter(items)
                latencies, replies = _timed_calls(lambda: client.rpush(LATENCY_KEY, next(calls)), n)
            session.admin.delete(WARM_KEY)
            out["rows"].append(_latency_row("latency", column, operation, latencies, replies, n))
            final = session.admin.lrange(LATENCY_KEY, 0, -1)
            digests[column.name] = digest(final)
            out["checks"].append({"column": column.name, "check": "list holds every value in order",
                                  "ok": final == items, "detail": f"LLEN {len(final)}; digest {digests[column.name]}"})
    if digests:
        out["checks"].append({"column": "all", "check": "digest of the final contents equal across engines",
                              "ok": len(set(digests.values())) == 1,
                              "detail": ", ".join(f"{k} {v}" for k, v in digests.items())})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out
