"""scenario_array.py — the `array` scenario: sparse arrays on goblin's two
engines beside redis and valkey, side by side in one run.

Shapes: --array-size values (default 500,000; --quick 5,000) of 16 bytes, dense (indexes 0, 1,
2, ...) and sparse (stride 16: 0, 16, 32, ...). Each shape on a fresh server per column:
  population  ARMSET with 128 pairs per command, pipelined -P (256), timed per trial from an
              empty key (median of --trials); the first trial's RSS delta (RSS less shared
              memory, from the fresh server) and used_memory delta per value are the memory rows
  workflows   ARGET, ARMGET 8, ARGETRANGE 16 (16 consecutive indexes), ARCOUNT, ARLEN, ARSET
              (overwrite), ARDEL + ARSET restore (pair), ARINSERT (appends past the populated
              end: ARSEEK there first, untimed); median of --trials
Latency: 500,000 (quick: --array-size) ARSETs of the next index into a fresh array, one in
flight, each timed (P90 ... P99.99 and max): classic, rt, and rt-reserved (GOBLIN.RT.ARRESERVE
key max-index value-bytes LOCK before the clock; VmLck of the server read after), over RESP (a
raw socket, commands packed before the clock) and over the ring (the C load generator times each
request); redis-server's RPUSH measured the same way over RESP.

Columns: goblin classic and rt (the server started with --array-implementation) over RESP
(goblin-resp), over the native ring (goblin-ring-native) and from Python (goblin-ring, the
RingClient pipeline); redis and valkey show X for every AR* row — they have no arrays, and the
bench never substitutes another type. redis's LINDEX / LSET on a list of the same size (RESP,
redis-benchmark -P) are the baseline of the ring's ARGET / ARSET target.
"""

from __future__ import annotations

import socket
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy

from . import drivers
from .engines import Column, open_session, unavailable
from .scenarios import Method, _na, percentiles_us

ARRAY_KEY = b"bench:array"
APPEND_KEY = b"bench:arrayappend"
LIST_KEY = b"bench:arraylist"
PAIRS_PER_ARMSET = 128
SHAPES = (("dense", 1), ("sparse", 16))
ARRAY_SIZE = 500_000
LATENCY_APPENDS = 500_000
POPULATION = f"population (ARMSET x{PAIRS_PER_ARMSET} pairs), values/s"
NO_ARRAYS = "X: no AR* commands (the bench never substitutes another type)"
WORKFLOWS = ("ARGET", "ARMGET 8", "ARGETRANGE 16", "ARCOUNT", "ARLEN", "ARSET (overwrite)",
             "ARDEL + ARSET restore (pair)", "ARINSERT (append)")


@dataclass(frozen=True)
class ArrayColumn(Column):
    """A bench column plus the array engine its goblin server creates arrays with."""

    array_engine: str = ""

    @property
    def name(self) -> str:
        base = f"{self.engine} {self.mode}" if self.mode else self.engine
        return f"{base} {self.array_engine}" if self.array_engine else base

    @property
    def server_args(self) -> tuple[str, ...]:
        return ("--array-implementation", self.array_engine) if self.array_engine else ()


def array_columns(engines: list[str]) -> list[ArrayColumn]:
    out = []
    for engine in engines:
        if engine in ("goblin-resp", "goblin-ring-native"):
            out += [ArrayColumn(engine, "", kind) for kind in ("classic", "rt")]
        elif engine == "goblin-ring":
            out += [ArrayColumn(engine, "pipeline", kind) for kind in ("classic", "rt")]
        elif engine in ("redis", "valkey"):
            out.append(ArrayColumn(engine))
    return out


def value_of(i: int) -> bytes:
    return b"v%015d" % i


def shape_rows(size: int, stride: int) -> list[dict]:
    """The eight workflows on an array of `size` values at stride `stride`."""
    mid = (size // 2) * stride
    eight = [(size // 3 + j) * stride for j in range(8)]
    spread = range(0, size, max(size // 1024, 1))   # 1024 indexes across the array, restored in turn
    restore = [[("ARDEL", ARRAY_KEY, i * stride), ("ARSET", ARRAY_KEY, i * stride, value_of(i))] for i in spread]
    appends = [[("ARINSERT", ARRAY_KEY, value_of(size))]]
    return [
        {"label": "ARGET", "kind": "fixed", "cycle": [[("ARGET", ARRAY_KEY, mid)]]},
        {"label": "ARMGET 8", "kind": "fixed", "cycle": [[("ARMGET", ARRAY_KEY, *eight)]], "values_per_op": 8},
        {"label": "ARGETRANGE 16", "kind": "fixed", "cycle": [[("ARGETRANGE", ARRAY_KEY, mid, mid + 15)]]},
        {"label": "ARCOUNT", "kind": "fixed", "cycle": [[("ARCOUNT", ARRAY_KEY)]]},
        {"label": "ARLEN", "kind": "fixed", "cycle": [[("ARLEN", ARRAY_KEY)]]},
        {"label": "ARSET (overwrite)", "kind": "fixed", "cycle": [[("ARSET", ARRAY_KEY, mid, value_of(size // 2))]]},
        {"label": "ARDEL + ARSET restore (pair)", "kind": "compound", "cycle": restore},
        {"label": "ARINSERT (append)", "kind": "append", "cycle": appends},
    ]


def population_cycle(key: bytes, size: int, stride: int) -> list:
    cycle = []
    for start in range(0, size, PAIRS_PER_ARMSET):
        pairs = [x for i in range(start, min(start + PAIRS_PER_ARMSET, size)) for x in (i * stride, value_of(i))]
        cycle.append([("ARMSET", key, *pairs)])
    return cycle


def has_arrays(session) -> bool:
    reply = session.admin.execute_command("COMMAND", "INFO", "ARGET")
    return bool(reply) and reply[0] is not None


def _python_pipeline(ring, commands: list, depth: int) -> drivers.Run:
    """RingClient.pipeline() windows of `depth` execute_command calls (the Python ring column)."""
    pipe = ring.pipeline()
    windows = [commands[i:i + depth] for i in range(0, len(commands), depth)]
    errors, first_error, replies = 0, "", 0
    start = time.perf_counter()
    for window in windows:
        for command in window:
            pipe.execute_command(*command)
        results = pipe.execute(raise_on_error=False)
        replies += len(results)
        for r in results:
            if isinstance(r, Exception):
                errors += 1
                first_error = first_error or str(r)
    return drivers.Run(time.perf_counter() - start, replies, errors, first_error)


def _run(session, cycle: list, offset: int, count: int, depth: int) -> drivers.Run:
    if isinstance(session.driver, drivers.RingDriver):
        return _python_pipeline(session.ring, drivers.commands_of(cycle, offset, count), depth)
    return session.driver.run(cycle, offset, count, depth)


def _workflow(session, row: dict, method: Method, count: int, shape: str, end_index: int) -> dict:
    column = session.column
    operation = f"{shape}: {row['label']}"
    result = {"scenario": "array", "engine": column.engine, "mode": column.mode, "column": column.name,
              "operation": operation}
    depth = method.pipeline
    rates = []
    offset = 0
    for trial in range(method.trials):
        if row["kind"] == "append" and trial == 0:   # past the populated end; later trials follow on
            session.admin.execute_command("ARSEEK", ARRAY_KEY, end_index)
        if row["kind"] == "fixed" and session.uses_redis_benchmark:
            n = -(-count // depth) * depth
            try:
                rates.append(drivers.redis_benchmark(session.server.port, n, depth, row["cycle"][0][0],
                                                     method.client_core))
            except RuntimeError as error:
                return _na("array", column, operation, str(error))
            continue
        run = _run(session, row["cycle"], offset, count, depth)
        offset += count
        if run.errors:
            return _na("array", column, operation, f"server replied: {run.first_error}")
        rates.append(count / run.elapsed_s)
    rate = statistics.median(rates)
    result.update(status="ok", ops_per_s=rate, trials=[round(r, 1) for r in rates],
                  tool="redis-benchmark" if row["kind"] == "fixed" and session.uses_redis_benchmark else
                  type(session.driver).__name__)
    if row.get("values_per_op"):
        result["values_per_s"] = rate * row["values_per_op"]
    return result


def _populate_timed(session, cycle: list, depth: int) -> drivers.Run:
    return _run(session, cycle, 0, len(cycle), depth)


def _list_baseline(session, method: Method, size: int, out: dict) -> None:
    """redis/valkey (and nothing else): LINDEX and LSET in the middle of a list of `size` values,
    over RESP by redis-benchmark -P, the baseline of the ring's ARGET / ARSET target."""
    column = session.column
    cycle = [[("RPUSH", LIST_KEY, *[value_of(i) for i in range(s, min(s + 128, size))])] for s in range(0, size, 128)]
    session.driver.run(cycle, 0, len(cycle), method.pipeline)
    mid = size // 2
    for label, command in (("LINDEX N/2 (list baseline)", ("LINDEX", LIST_KEY, mid)),
                           ("LSET N/2 (list baseline)", ("LSET", LIST_KEY, mid, value_of(mid)))):
        rates = []
        for _ in range(method.trials):
            if session.uses_redis_benchmark:
                n = -(-method.n // method.pipeline) * method.pipeline
                rates.append(drivers.redis_benchmark(session.server.port, n, method.pipeline, command,
                                                     method.client_core))
            else:
                run = session.driver.run([[command]], 0, method.n, method.pipeline)
                rates.append(method.n / run.elapsed_s)
        out["rows"].append({"scenario": "array", "engine": column.engine, "mode": column.mode,
                            "column": column.name, "operation": label, "status": "ok",
                            "ops_per_s": statistics.median(rates), "trials": [round(r, 1) for r in rates],
                            "tool": "redis-benchmark" if session.uses_redis_benchmark else "RespPipeline"})


# ---------------------------------------------------------------- latency

def _resp_timed(port: int, commands: list) -> tuple[numpy.ndarray, int]:
    """One in flight over a raw socket: each command packed before the clock, each reply read
    whole (hiredis), each round trip timed."""
    from ..client.resp import pack_command
    packed = [pack_command(tuple(drivers.resp_bytes(a) for a in c)) for c in commands]
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader = drivers.hiredis.Reader() if drivers.hiredis is not None else None
    latencies = numpy.empty(len(packed), dtype=numpy.int64)
    clock, good = time.perf_counter_ns, 0
    error_type = drivers.hiredis.ReplyError if drivers.hiredis is not None else Exception
    try:
        send, recv = sock.sendall, sock.recv
        for i, blob in enumerate(packed):
            start = clock()
            send(blob)
            reply = False
            while reply is False:
                reader.feed(recv(65536))
                reply = reader.gets()
            latencies[i] = clock() - start
            if not isinstance(reply, error_type):
                good += 1
    finally:
        sock.close()
    return latencies, good


def _vm_locked_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmLck:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _latency(session, kind: str, count: int) -> dict:
    """count depth-1 appends into a fresh array (or RPUSHes into a fresh list for redis/valkey)."""
    column = session.column
    over_ring = column.native
    if kind == "rpush":
        commands = [("RPUSH", APPEND_KEY, value_of(i)) for i in range(count)]
        operation = f"RPUSH x{count} into a fresh list, depth 1"
    else:
        commands = [("ARSET", APPEND_KEY, i, value_of(i)) for i in range(count)]
        operation = f"ARSET next index x{count} into a fresh array, depth 1 ({kind})"
    session.admin.delete(APPEND_KEY)
    row = {"scenario": "array", "engine": column.engine, "mode": column.mode, "column": column.name,
           "operation": operation, "array_engine": kind, "transport": "ring" if over_ring else "resp",
           "n": count}
    if kind == "rt-reserved":
        reply = session.admin.execute_command("GOBLIN.RT.ARRESERVE", APPEND_KEY, count - 1, count * 16, "LOCK")
        row["reserve_reply"] = reply.decode() if isinstance(reply, bytes) else str(reply)
    if over_ring:
        latencies = numpy.empty(count, dtype=numpy.int64)
        run = session.driver.run([[c] for c in commands], 0, count, 1, latencies)
        good = run.replies - run.errors
    else:
        latencies, good = _resp_timed(session.server.port, commands)
    row.update(percentiles_us(latencies))
    row.update(status="ok", replies=good, max_us=float(numpy.max(latencies)) / 1e3)
    row["vmlck_kib"] = _vm_locked_kib(session.server.pid)
    if column.goblin:
        length = session.admin.execute_command("ARCOUNT", APPEND_KEY)
        row["count_after"] = length
    session.admin.delete(APPEND_KEY)
    return row


# ---------------------------------------------------------------- the scenario

def array_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    size = 5000 if method.quick else getattr(method, "array_size", ARRAY_SIZE)
    appends = size if method.quick else LATENCY_APPENDS
    n = method.n
    out: dict[str, Any] = {"scenario": "array", "columns": [], "rows": [], "memory": [], "checks": [], "notes": [],
                           "versions": {}, "load": [], "tail": [], "array_size": size}
    leftovers: list[str] = []
    for column in array_columns(engines):
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["notes"].append(f"{column.name}: n/a — {why}")
            continue
        for shape, stride in SHAPES:
            progress(f"array {column.name} {shape}: starting the server")
            with open_session(column, method.server_core, leftovers, out["load"]) as session:
                out["versions"][column.engine] = session.version
                arrays = has_arrays(session)
                rows = shape_rows(size, stride)
                if not arrays:
                    out["rows"] += [_na("array", column, f"{shape}: {label}", NO_ARRAYS)
                                    for label in (POPULATION, *WORKFLOWS)]
                    if shape == "dense":
                        progress(f"array {column.name}: list baseline")
                        _list_baseline(session, method, size, out)
                    continue
                fresh_rss, base_used = session.rss(), session.info_memory()
                cycle = population_cycle(ARRAY_KEY, size, stride)
                rates = []
                for trial in range(method.trials):
                    progress(f"array {column.name} {shape}: population trial {trial + 1}/{method.trials}")
                    session.admin.delete(ARRAY_KEY)
                    run = _populate_timed(session, cycle, method.pipeline)
                    if run.errors:
                        break
                    rates.append(size / run.elapsed_s)
                    if trial == 0:
                        rss, used = session.rss(), session.info_memory()
                        for metric, value in (("rss_delta", rss - fresh_rss), ("used_memory_delta", used - base_used)):
                            out["memory"].append({"engine": column.engine, "mode": column.mode, "column": column.name,
                                                  "phase": f"{shape} (stride {stride}), {size} values",
                                                  "metric": metric, "bytes": value, "bytes_per_item": value / size})
                if not rates:
                    out["rows"].append(_na("array", column, f"{shape}: {POPULATION}", f"server replied: {run.first_error}"))
                    continue
                out["rows"].append({"scenario": "array", "engine": column.engine, "mode": column.mode,
                                    "column": column.name, "operation": f"{shape}: {POPULATION}", "status": "ok",
                                    "ops_per_s": statistics.median(rates), "values_per_s": statistics.median(rates),
                                    "trials": [round(r, 1) for r in rates]})
                for row in rows:
                    progress(f"array {column.name} {shape}: {row['label']}")
                    count = max(n // 10, 100) if row["kind"] == "compound" else n
                    out["rows"].append(_workflow(session, row, method, count, shape, size * stride))
                expected = size + n * method.trials
                got = session.admin.execute_command("ARCOUNT", ARRAY_KEY)
                out["checks"].append({"column": column.name, "check": f"{shape}: ARCOUNT = values + appends",
                                      "ok": got == expected, "detail": f"ARCOUNT {got}, expected {expected}"})
                probe = (size // 4) * stride
                value = session.admin.execute_command("ARGET", ARRAY_KEY, probe)
                out["checks"].append({"column": column.name, "check": f"{shape}: ARGET {probe} holds its value",
                                      "ok": value == value_of(size // 4), "detail": repr(value)})
        # the latency rows: a fresh server per column
        if column.mode == "pipeline":
            continue   # Python's own overhead would be measured: the native and RESP columns carry these rows
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            kinds = (["rt", "rt-reserved"] if column.array_engine == "rt" else ["classic"]) if column.goblin \
                else ["rpush"]
            for kind in kinds:
                progress(f"array {column.name}: {appends} depth-1 appends ({kind})")
                row = _latency(session, kind, appends)
                out["tail"].append(row)
                if column.goblin:
                    out["checks"].append({"column": column.name, "check": f"{kind}: every append stored",
                                          "ok": row["replies"] == appends and row.get("count_after") == appends,
                                          "detail": f"{row['replies']} ok replies, ARCOUNT {row.get('count_after')}"})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


# ---------------------------------------------------------------- report

def _find(result: dict, column: str, operation: str) -> float | None:
    for r in result["rows"]:
        if r["column"] == column and r["operation"] == operation and r.get("status") == "ok":
            return r.get("ops_per_s")
    return None


def array_targets(result: dict) -> list[dict]:
    out = []
    size = result.get("array_size")
    memory = {(m["column"], m["phase"], m["metric"]): m["bytes_per_item"] for m in result.get("memory", [])}
    for shape, stride, bound in (("sparse", 16, 30), ("dense", 1, 24)):
        phase = f"{shape} (stride {stride}), {size} values"
        value = next((memory.get((c, phase, "rss_delta")) for c in ("goblin-ring-native classic", "goblin-resp classic",
                      "goblin-ring pipeline classic") if memory.get((c, phase, "rss_delta")) is not None), None)
        out.append({"target": f"Classic {shape} stride {stride}: <= {bound} RSS-delta bytes per value",
                    "ratio": value, "met": value is not None and value <= bound, "unit": " B/value"})
    tails = {(t["column"], t["array_engine"]): t for t in result.get("tail", [])}
    redis = tails.get(("redis", "rpush"))
    for transport, prefix in (("RESP", "goblin-resp"), ("ring", "goblin-ring-native")):
        reserved = tails.get((f"{prefix} rt", "rt-reserved"))
        classic = tails.get((f"{prefix} classic", "classic"))
        if reserved and classic:
            r = reserved["p99.99_us"] / classic["p99.99_us"]
            out.append({"target": f"rt-reserved P99.99 below classic's over {transport} (rt-reserved / classic)",
                        "ratio": r, "met": r < 1})
        else:
            out.append({"target": f"rt-reserved P99.99 below classic's over {transport}", "ratio": None, "met": False})
        if reserved and redis:
            r = reserved["p99.99_us"] / redis["p99.99_us"]
            out.append({"target": f"rt-reserved P99.99 over {transport} below redis RPUSH's (rt-reserved / redis)",
                        "ratio": r, "met": r < 1})
        else:
            out.append({"target": f"rt-reserved P99.99 over {transport} below redis RPUSH's", "ratio": None,
                        "met": False})
    for ar, lst in (("ARGET", "LINDEX N/2 (list baseline)"), ("ARSET (overwrite)", "LSET N/2 (list baseline)")):
        base = _find(result, "redis", lst)
        for kind in ("classic", "rt"):
            rate = _find(result, f"goblin-ring-native {kind}", f"dense: {ar}")
            r = rate / base if rate and base else None
            out.append({"target": f"native ring {ar} ({kind}, dense) >= 5x redis {lst.split()[0]} over RESP",
                        "ratio": r, "met": r is not None and r >= 5})
    return out


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def array_markdown(result: dict) -> list[str]:
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}
    operations = list(dict.fromkeys(r["operation"] for r in result["rows"]))
    columns = result["columns"]
    lines = [f"{result.get('array_size')} values of 16 bytes per shape; ops/s (population: values/s); "
             "X = the server has no AR* commands.", "",
             "| operation | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for operation in operations:
        cells = []
        for column in columns:
            row = rows.get((column, operation))
            if row is None:
                cells.append("")
            elif row.get("status") == "ok":
                cells.append(_rate(row.get("ops_per_s")))
            else:
                cells.append("X" if row.get("reason") == NO_ARRAYS else "n/a")
        lines.append(f"| {operation} | " + " | ".join(cells) + " |")
    if result.get("memory"):
        by = {(m["column"], m["phase"], m["metric"]): m for m in result["memory"]}
        mcols = list(dict.fromkeys(m["column"] for m in result["memory"]))
        keys = list(dict.fromkeys((m["phase"], m["metric"]) for m in result["memory"]))
        lines += ["", "Memory after the first population, bytes per value (deltas from the fresh server):", "",
                  "| shape | metric | " + " | ".join(mcols) + " |", "|---|---|" + "---|" * len(mcols)]
        for phase, metric in keys:
            cells = [f"{by[(c, phase, metric)]['bytes_per_item']:.2f}" if (c, phase, metric) in by else "X"
                     for c in mcols]
            lines.append(f"| {phase} | {metric} | " + " | ".join(cells) + " |")
    if result.get("tail"):
        lines += ["", "Depth-1 appends into a fresh array (redis: RPUSH into a fresh list), each timed; microseconds.",
                  "", "| column | engine | transport | P90 | P99 | P99.9 | P99.99 | max | VmLck after (KiB) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for t in result["tail"]:
            lines.append(f"| {t['column']} | {t['array_engine']} | {t['transport']} | {t['p90_us']:.1f} | "
                         f"{t['p99_us']:.1f} | {t['p99.9_us']:.1f} | {t['p99.99_us']:.1f} | {t['max_us']:.1f} | "
                         f"{t.get('vmlck_kib')} |")
    lines += ["", "Targets (measured in this run):", ""]
    for goal in array_targets(result):
        value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}{goal.get('unit', 'x')}"
        lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
    return lines
