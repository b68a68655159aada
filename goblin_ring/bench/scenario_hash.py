"""scenario_hash.py — the `hash` scenario: one big hash, every engine side by side.

Population: one hash filled to --hash-size fields (default 1,000,000; 16-byte field names and
values), HSET with 128 pairs per command, pipelined (the Python ring column's batch mode: one
hset_many call). Then rows on that hash: HSET (overwrite), HGET, HMGET 8, HINCRBY, HEXISTS,
HDEL + HSET (pair: the hash keeps its size), HGETALL of a separate 100-field hash, HSCAN COUNT
100. Fixed rows against RESP servers are timed by redis-benchmark (-P as given), as list100k's.

Memory (measured first, on the fresh server): the structure's bytes per field (INFO
used_memory delta) and the RSS growth per field (RSS less shared memory, from the server's RSS
before anything was stored), for hashes of half, one and two times --hash-size fields.

Write-path tail: 200,000 HSETs (quick: --hash-size) growing one hash from empty, each timed
one in flight (p50 ... p99.99 and max), per engine: a table resize that stalls a command shows
in max. The Python columns run with the garbage collector off around the timed loop. The
server's SLOWLOG (over 0.5 ms) and the client's CPU time stand beside it (scenarios.write_tail).
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

import numpy

from . import drivers
from .engines import Column, columns, open_session, unavailable
from .scenarios import Method, _na, digest, write_tail

HASH_KEY = b"bench:hash"
SMALL_KEY = b"bench:hash100"
TAIL_KEY = b"bench:hashtail"
WARM_KEY = b"bench:hashwarm"
PAIRS_PER_HSET = 128
TAIL_WRITES = 200_000
POPULATION = f"population (HSET x{PAIRS_PER_HSET} pairs), fields/s"


def field_names(count: int, tag: bytes = b"f") -> list[bytes]:
    """count distinct 16-byte field names."""
    return [tag + b"%015d" % i for i in range(count)]


def field_values(count: int) -> list[bytes]:
    return [b"v%015d" % i for i in range(count)]


def population_cycle(key: bytes, fields: list[bytes], vals: list[bytes]) -> list:
    cycle = []
    for start in range(0, len(fields), PAIRS_PER_HSET):
        pairs = [x for pair in zip(fields[start:start + PAIRS_PER_HSET], vals[start:start + PAIRS_PER_HSET])
                 for x in pair]
        cycle.append([("HSET", key, *pairs)])
    return cycle


def hash_rows(method: Method, fields: list[bytes]) -> list[dict]:
    n, size = method.n, len(fields)
    mid = fields[size // 2]
    eight = fields[size // 3:size // 3 + 8]
    return [
        {"label": "HSET (overwrite)", "kind": "fixed", "cycle": [[("HSET", HASH_KEY, mid, b"w%015d" % 7)]], "count": n},
        {"label": "HGET", "kind": "fixed", "cycle": [[("HGET", HASH_KEY, mid)]], "count": n},
        {"label": "HMGET 8", "kind": "fixed", "cycle": [[("HMGET", HASH_KEY, *eight)]], "count": n,
         "values_per_op": 8},
        {"label": "HINCRBY", "kind": "fixed", "cycle": [[("HINCRBY", HASH_KEY, b"counter", 1)]], "count": n},
        {"label": "HEXISTS", "kind": "fixed", "cycle": [[("HEXISTS", HASH_KEY, mid)]], "count": n},
        {"label": "HDEL + HSET (pair)", "kind": "compound",
         "cycle": [[("HDEL", HASH_KEY, f), ("HSET", HASH_KEY, f, b"v%015d" % i)] for i, f in enumerate(fields)],
         "count": n},
        {"label": "HGETALL (100-field hash)", "kind": "fixed", "cycle": [[("HGETALL", SMALL_KEY)]],
         "count": max(n // 10, 100), "values_per_op": 200},
        {"label": "HSCAN COUNT 100", "kind": "fixed", "cycle": [[("HSCAN", HASH_KEY, 0, "COUNT", 100)]],
         "count": max(n // 10, 100)},
    ]


def _populate(session, key: bytes, fields: list[bytes], vals: list[bytes], depth: int) -> drivers.Run:
    """Fill key with every pair: the column's own driver (hset_many in batch mode)."""
    driver = session.driver
    if isinstance(driver, drivers.RingDriver) and driver.mode == "batch":
        import time
        # numpy 'S' arrays, as an application holding columns would pass them: built before the clock
        field_array, value_array = numpy.array(fields), numpy.array(vals)
        start = time.perf_counter()
        session.ring.hset_many(key, field_array, value_array, per_message=PAIRS_PER_HSET)
        return drivers.Run(time.perf_counter() - start, (len(fields) + PAIRS_PER_HSET - 1) // PAIRS_PER_HSET)
    cycle = population_cycle(key, fields, vals)
    if isinstance(driver, drivers.RingDriver) and driver.mode == "call":
        depth = 1
    return driver.run(cycle, 0, len(cycle), depth)


def _run_fixed_or_compound(session, row: dict, method: Method, offsets: dict) -> dict:
    column = session.column
    result = {"scenario": "hash", "engine": column.engine, "mode": column.mode, "column": column.name,
              "operation": row["label"]}
    if isinstance(session.driver, drivers.RingDriver) and session.driver.mode == "batch":
        names = {c[0] for op in row["cycle"] for c in op}
        if names != {"HMGET"}:
            return _na("hash", column, row["label"], "no batch helper (batches: hset_many, hmget_many)")
    depth = method.pipeline if column.mode != "call" else 1
    rates = []
    for trial in range(method.trials):
        if row["kind"] == "fixed" and session.uses_redis_benchmark:
            # -n a multiple of -P: redis-benchmark finishes its last window past -n otherwise, and a
            # short run then sometimes aborts with "All clients disconnected" (its timer sees no
            # client left and finished != -n)
            count = -(-row["count"] // method.pipeline) * method.pipeline
            try:
                rates.append(drivers.redis_benchmark(session.server.port, count, method.pipeline,
                                                     row["cycle"][0][0], method.client_core))
            except RuntimeError as error:
                return _na("hash", column, row["label"], str(error))
            continue
        at = offsets.get(row["label"], 0)
        if isinstance(session.driver, drivers.RingDriver) and session.driver.mode == "batch":
            import time
            fields = list(row["cycle"][0][0][2:]) * (row["count"])
            start = time.perf_counter()
            session.ring.hmget_many(HASH_KEY, fields)
            run = drivers.Run(time.perf_counter() - start, row["count"])
        else:
            run = session.driver.run(row["cycle"], at, row["count"], depth)
        offsets[row["label"]] = at + row["count"]
        if run.errors:
            return _na("hash", column, row["label"], f"server replied: {run.first_error}")
        rates.append(row["count"] / run.elapsed_s)
    rate = statistics.median(rates)
    result.update(status="ok", ops_per_s=rate, trials=[round(r, 1) for r in rates],
                  tool="redis-benchmark" if row["kind"] == "fixed" and session.uses_redis_benchmark else
                  type(session.driver).__name__ + (f".{column.mode}" if column.mode else ""))
    if row.get("values_per_op"):
        result["values_per_s"] = rate * row["values_per_op"]
    return result


def _memory(session, fields_count: int, depth: int, fresh_rss: int) -> dict:
    """Bytes per field of a fresh hash of fields_count fields: the used_memory delta from an
    empty server, and the RSS growth from the server's RSS before anything was stored (sizes
    are measured in ascending order, so freed pages are reused rather than counted twice)."""
    session.admin.flushall()
    base_used = session.info_memory()
    fields, vals = field_names(fields_count), field_values(fields_count)
    run = _populate(session, HASH_KEY, fields, vals, depth)
    if run.errors:
        return {}
    used, rss = session.info_memory(), session.rss()
    session.admin.flushall()
    return {"used_memory_delta": (used - base_used) / fields_count, "rss_delta": (rss - fresh_rss) / fields_count}


def _tail(session, count: int) -> dict:
    """count HSETs growing TAIL_KEY from empty, each timed one in flight (scenarios.write_tail:
    the client's timings, the server's SLOWLOG and the CPU figures beside them)."""
    fields = field_names(count, b"t")
    position = {f: i for i, f in enumerate(fields)}
    calls = iter(fields)

    def one(client) -> bool:
        f = next(calls)
        return client.hset(TAIL_KEY, f, f) == 1
    return write_tail(session, count, lambda: [[("HSET", TAIL_KEY, f, f)] for f in fields], one, b"hset",
                      lambda argv: position.get(argv[2]) if len(argv) > 2 else None)


def hash_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    size = method.hash_size
    fields, vals = field_names(size), field_values(size)
    rows_spec = hash_rows(method, fields)
    out: dict[str, Any] = {"scenario": "hash", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [], "versions": {}, "load": [], "tail": [], "hash_size": size}
    tail_count = min(TAIL_WRITES, size) if method.quick else TAIL_WRITES
    memory_sizes = (size // 2, size, 2 * size)
    leftovers: list[str] = []
    digests = {}
    for column in columns(engines, python=True):
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"] += [_na("hash", column, r, why) for r in [POPULATION] + [r["label"] for r in rows_spec]]
            out["notes"].append(f"{column.name}: n/a — {why}")
            continue
        progress(f"hash {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            depth = method.pipeline if column.mode != "call" else 1
            fresh_rss = session.rss()
            # memory at three sizes, each populated fresh
            for fields_count in memory_sizes:
                progress(f"hash {column.name}: memory at {fields_count} fields")
                figures = _memory(session, fields_count, depth, fresh_rss)
                for metric in ("used_memory_delta", "rss_delta"):
                    value = figures.get(metric)
                    out["memory"].append({"engine": column.engine, "mode": column.mode, "column": column.name,
                                          "phase": f"{fields_count} fields", "metric": metric,
                                          "bytes": None if value is None else value * fields_count,
                                          "bytes_per_item": value})
            # population, timed per trial from empty
            rates = []
            for trial in range(method.trials):
                progress(f"hash {column.name}: population trial {trial + 1}/{method.trials}")
                session.admin.delete(HASH_KEY)
                run = _populate(session, HASH_KEY, fields, vals, depth)
                if run.errors:
                    break
                rates.append(size / run.elapsed_s)
            if rates:
                rate = statistics.median(rates)
                out["rows"].append({"scenario": "hash", "engine": column.engine, "mode": column.mode,
                                    "column": column.name, "operation": POPULATION, "status": "ok",
                                    "ops_per_s": rate, "values_per_s": rate,
                                    "trials": [round(r, 1) for r in rates]})
            else:
                out["rows"].append(_na("hash", column, POPULATION, f"server replied: {run.first_error}"))
                session.admin.delete(HASH_KEY)
                for start in range(0, size, 1000):
                    session.admin.hset(HASH_KEY, items=[x for p in zip(fields[start:start + 1000],
                                                                       vals[start:start + 1000]) for x in p])
            small = field_names(100, b"s")
            session.admin.hset(SMALL_KEY, items=[x for f in small for x in (f, f)])
            offsets: dict = {}
            for row in rows_spec:
                progress(f"hash {column.name}: {row['label']}")
                out["rows"].append(_run_fixed_or_compound(session, row, method, offsets))
            length = session.admin.hlen(HASH_KEY)
            ran_every_row = all(r.get("status") == "ok" for r in out["rows"] if r["column"] == column.name)
            if ran_every_row and size <= 200_000:   # HINCRBY's counter: redis-benchmark -P may overshoot -n
                content = sorted(session.admin.hgetall(HASH_KEY).items())
                digests[column.name] = digest([x for pair in content if pair[0] != b"counter" for x in pair])
            out["checks"].append({"column": column.name, "check": "hash size kept after every row",
                                  "ok": length in (size, size + 1), "detail": f"HLEN {length} (+1: HINCRBY's counter)"})
            # write-path tail
            progress(f"hash {column.name}: {tail_count} timed HSETs growing a hash")
            row = {"scenario": "hash", "engine": column.engine, "mode": column.mode, "column": column.name,
                   "operation": f"HSET growing one hash to {tail_count} fields, depth 1", "status": "ok"}
            row.update(_tail(session, tail_count))
            good = row["replies"]
            out["tail"].append(row)
            out["checks"].append({"column": column.name, "check": "every timed HSET added a field",
                                  "ok": good == tail_count, "detail": f"{good} of {tail_count}"})
    if len(set(digests.values())) > 1:
        out["notes"].append("final contents differ across engines: " + ", ".join(f"{k} {v}" for k, v in digests.items()))
    out["checks"].append({"column": "all", "check": "final hash equal across engines",
                          "ok": len(set(digests.values())) <= 1,
                          "detail": ", ".join(f"{k} {v}" for k, v in digests.items())})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


def hash_targets(result: dict) -> list[dict]:
    """The hash scenario's targets, measured in this run (ratios against redis; bytes per field)."""
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}

    def rate(column: str, operation: str) -> float | None:
        row = rows.get((column, operation))
        return row.get("ops_per_s") if row and row.get("status") == "ok" else None

    def ratio(column: str, operation: str) -> float | None:
        a, b = rate(column, operation), rate("redis", operation)
        return a / b if a is not None and b else None

    out = []
    size = result.get("hash_size")
    memory = {(m["column"], m["phase"], m["metric"]): m["bytes_per_item"] for m in result.get("memory", [])}
    goblin = memory.get(("goblin-ring-native", f"{size} fields", "used_memory_delta"))
    if goblin is None:
        goblin = next((v for (c, p, m), v in memory.items() if c.startswith("goblin") and p == f"{size} fields"
                       and m == "used_memory_delta" and v is not None), None)
    redis = memory.get(("redis", f"{size} fields", "used_memory_delta"))
    if goblin is not None:
        out.append({"target": f"structure bytes per field at {size} fields <= 46 (used_memory delta)",
                    "ratio": goblin, "met": goblin <= 46, "unit": " B/field"})
        if redis is not None:
            out.append({"target": "structure bytes per field below redis-server's (goblin / redis)",
                        "ratio": goblin / redis, "met": goblin < redis})
    for operation in ("HSET (overwrite)", "HGET"):
        r = ratio("goblin-resp", operation)
        out.append({"target": f"goblin-resp {operation} >= 1.3x redis (redis-benchmark -c 1, this run's -P)",
                    "ratio": r, "met": r is not None and r >= 1.3})
        r = ratio("goblin-ring-native", operation)
        out.append({"target": f"ring {operation} >= 5x redis (goblin-ring-native)", "ratio": r,
                    "met": r is not None and r >= 5})
    r = ratio("goblin-ring batch", POPULATION)
    out.append({"target": "Python hset_many population >= 3x redis", "ratio": r, "met": r is not None and r >= 3})
    tails = {t["column"]: t for t in result.get("tail", [])}
    redis_tail = tails.get("redis")
    for column, tail in tails.items():
        if not column.startswith("goblin"):
            continue
        out.append({"target": f"{column}: growing-HSET max latency < 1 ms", "ratio": tail["max_us"] / 1000,
                    "met": tail["max_us"] < 1000, "unit": " ms"})
        if redis_tail:
            r = tail["p99.99_us"] / redis_tail["p99.99_us"]
            out.append({"target": f"{column}: growing-HSET p99.99 no worse than redis (goblin / redis)",
                        "ratio": r, "met": r <= 1})
    return out
