"""scenario_zset.py — the `zset` scenario: one big sorted set, every engine
side by side.

Population: one set filled to --zset-size members (default 1,000,000; 16-byte members, scores
scattered over [0, 1e6) with fractional parts), ZADD with 128 pairs per command, pipelined (the
Python ring column's batch mode: one zadd_many call). Then rows on that set: ZADD of a new
member, ZADD rescoring a member, ZINCRBY, ZSCORE, ZRANK, ZRANGE of 10 by rank from the middle,
ZRANGEBYSCORE LIMIT 0 10 from the middle score, and ZADD + ZPOPMIN (a pair: a member added
below every score, then popped, so the set keeps its size). Fixed rows against RESP servers are
timed by redis-benchmark (-P as given), as the hash and list100k scenarios do; the new-member
row is a cycle of distinct members, timed by each column's own pipelined driver.

Memory (first, on the fresh server): structure bytes per member (INFO used_memory delta) and
the RSS growth per member, for sets of half, one and two times --zset-size members. On the first
goblin column also the packed encoding (CONFIG SET zset-implementation packed): int32 decimal
members ("0", "1", ...) with the same scores rounded down to integers (exact in float32), and the
standard encoding on those same int32 members and scores, so packed is seen against standard
both on the 16-byte members above and on identical data. Their rss_delta is not a measure:
they run after the standard phases on the same server, whose allocator keeps the pages those
freed (used_memory_delta is the figure to read).

Write-path tail: 200,000 ZADDs (quick: --zset-size) growing one set from empty, each timed one
in flight (p50 ... p99.99 and max), per engine; the Python columns run with the garbage
collector off around the timed loop. Beside the client's figures, the server's own (SLOWLOG
with slowlog-log-slower-than 500 on goblin and redis alike: the slowest ZADD and how many took
over 0.5 ms and 1 ms) and the client's CPU time and context switches (scenarios.write_tail),
so a stall is told apart as server work or the machine's scheduling.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import numpy

from . import drivers
from .engines import columns, open_session, unavailable
from .scenarios import Method, _na, write_tail

ZSET_KEY = b"bench:zset"
TAIL_KEY = b"bench:zsettail"
PAIRS_PER_ZADD = 128
TAIL_WRITES = 200_000
POPULATION = f"population (ZADD x{PAIRS_PER_ZADD} pairs), members/s"
NEW_MEMBER = "ZADD (new member)"


def member_names(count: int, tag: bytes = b"m") -> list[bytes]:
    """count distinct 16-byte members."""
    return [tag + b"%015d" % i for i in range(count)]


def scattered_scores(count: int, seed: int = 7) -> numpy.ndarray:
    """count scores in [0, 1e6), scattered (no order relation to the member names), with
    fractional parts: splitmix64 draws, reproducible everywhere."""
    with numpy.errstate(over="ignore"):
        z = numpy.uint64(seed) + numpy.arange(1, count + 1, dtype=numpy.uint64) * numpy.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> numpy.uint64(30))) * numpy.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> numpy.uint64(27))) * numpy.uint64(0x94D049BB133111EB)
        z = z ^ (z >> numpy.uint64(31))
    # multiples of 1/1024 below 1e6: exact in a double, short as text
    return (z % numpy.uint64(1_000_000 * 1024)).astype(numpy.float64) / 1024.0


def score_text(score: float) -> bytes:
    """A score as RESP text that reads back as the same double."""
    return repr(float(score)).encode()


def population_cycle(key: bytes, names: list[bytes], texts: list[bytes]) -> list:
    cycle = []
    for start in range(0, len(names), PAIRS_PER_ZADD):
        pairs = [x for pair in zip(texts[start:start + PAIRS_PER_ZADD], names[start:start + PAIRS_PER_ZADD])
                 for x in pair]
        cycle.append([("ZADD", key, *pairs)])
    return cycle


def zset_rows(method: Method, names: list[bytes], scores: numpy.ndarray) -> list[dict]:
    n, size = method.n, len(names)
    mid = names[size // 2]
    middle_score = score_text(float(numpy.median(scores)))
    return [
        {"label": NEW_MEMBER, "kind": "fresh",
         "cycle": [[("ZADD", ZSET_KEY, score_text(1e6 + i / 8), b"n%015d" % i)] for i in range(n)], "count": n},
        {"label": "ZADD (rescore)", "kind": "fixed", "cycle": [[("ZADD", ZSET_KEY, b"424242.5", mid)]], "count": n},
        {"label": "ZINCRBY", "kind": "fixed", "cycle": [[("ZINCRBY", ZSET_KEY, 1, mid)]], "count": n},
        {"label": "ZSCORE", "kind": "fixed", "cycle": [[("ZSCORE", ZSET_KEY, mid)]], "count": n},
        {"label": "ZRANK", "kind": "fixed", "cycle": [[("ZRANK", ZSET_KEY, mid)]], "count": n},
        {"label": "ZRANGE 10 by rank (middle)", "kind": "fixed",
         "cycle": [[("ZRANGE", ZSET_KEY, size // 2, size // 2 + 9)]], "count": n, "values_per_op": 10},
        {"label": "ZRANGEBYSCORE LIMIT 10 (middle)", "kind": "fixed",
         "cycle": [[("ZRANGEBYSCORE", ZSET_KEY, middle_score, "+inf", "LIMIT", 0, 10)]], "count": n,
         "values_per_op": 10},
        {"label": "ZADD + ZPOPMIN (pair)", "kind": "compound",
         "cycle": [[("ZADD", ZSET_KEY, -1, b"p%015d" % i), ("ZPOPMIN", ZSET_KEY)] for i in range(4096)],
         "count": n},
    ]


def _is_batch(session) -> bool:
    return isinstance(session.driver, drivers.RingDriver) and session.driver.mode == "batch"


def _populate(session, key: bytes, names: list[bytes], scores: numpy.ndarray, texts: list[bytes],
              depth: int) -> drivers.Run:
    """Fill key with every (score, member): the column's own driver (zadd_many in batch mode)."""
    if _is_batch(session):
        members = numpy.array(names)          # a numpy 'S' array: packed once, outside the clock
        start = time.perf_counter()
        session.ring.zadd_many(key, members, scores, per_message=PAIRS_PER_ZADD)
        return drivers.Run(time.perf_counter() - start, (len(names) + PAIRS_PER_ZADD - 1) // PAIRS_PER_ZADD)
    cycle = population_cycle(key, names, texts)
    if isinstance(session.driver, drivers.RingDriver) and session.driver.mode == "call":
        depth = 1
    return session.driver.run(cycle, 0, len(cycle), depth)


def _run_row(session, row: dict, method: Method, offsets: dict) -> dict:
    column = session.column
    result = {"scenario": "zset", "engine": column.engine, "mode": column.mode, "column": column.name,
              "operation": row["label"]}
    batch = _is_batch(session)
    if batch and row["label"] != "ZSCORE":
        return _na("zset", column, row["label"], "no batch helper (batches: zadd_many, zscore_many, zrange_arrays)")
    depth = method.pipeline if column.mode != "call" else 1
    rates = []
    for trial in range(method.trials):
        if row["kind"] == "fresh" and trial:
            news = [c[3] for op in row["cycle"] for c in op]
            for start in range(0, len(news), 1000):
                session.admin.zrem(ZSET_KEY, *news[start:start + 1000])
        if row["kind"] == "fixed" and session.uses_redis_benchmark:
            count = -(-row["count"] // method.pipeline) * method.pipeline   # see scenario_hash: -n a multiple of -P
            try:
                rates.append(drivers.redis_benchmark(session.server.port, count, method.pipeline,
                                                     row["cycle"][0][0], method.client_core))
            except RuntimeError as error:
                return _na("zset", column, row["label"], str(error))
            continue
        at = offsets.get(row["label"], 0) if row["kind"] != "fresh" else 0
        if batch:
            members = numpy.array([row["cycle"][0][0][2]] * row["count"])
            start = time.perf_counter()
            found = session.ring.zscore_many(ZSET_KEY, members)
            run = drivers.Run(time.perf_counter() - start, row["count"], int(numpy.isnan(found).sum()),
                              "a member had no score" if numpy.isnan(found).any() else "")
        else:
            if row["kind"] != "fresh":
                session.driver.run(row["cycle"], at, min(method.warmup, row["count"]), depth)   # warm-up
            run = session.driver.run(row["cycle"], at, row["count"], depth)
        offsets[row["label"]] = at + row["count"]
        if run.errors:
            return _na("zset", column, row["label"], f"server replied: {run.first_error}")
        rates.append(row["count"] / run.elapsed_s)
    rate = statistics.median(rates)
    result.update(status="ok", ops_per_s=rate, trials=[round(r, 1) for r in rates],
                  tool="redis-benchmark" if row["kind"] == "fixed" and session.uses_redis_benchmark else
                  type(session.driver).__name__ + (f".{column.mode}" if column.mode else ""))
    if row.get("values_per_op"):
        result["values_per_s"] = rate * row["values_per_op"]
    return result


def int32_member_names(count: int) -> list[bytes]:
    """count distinct int32 decimal members, as the packed encoding holds them."""
    return [b"%d" % i for i in range(count)]


def float32_scores(count: int) -> numpy.ndarray:
    """scattered_scores rounded down: integers below 1e6, exact in float32."""
    return numpy.floor(scattered_scores(count))


# Extra memory phases on the first goblin column: (phase suffix, zset-implementation, members, scores).
PACKED_PHASES = (("packed, int32 members", "packed", int32_member_names, float32_scores),
                 ("standard, int32 members", "standard", int32_member_names, float32_scores))


def _memory(session, count: int, depth: int, fresh_rss: int, names_of=member_names, scores_of=scattered_scores) -> dict:
    """Bytes per member of a fresh set of count members: the used_memory delta from an empty
    server and the RSS growth from the server's RSS before anything was stored."""
    session.admin.flushall()
    base_used = session.info_memory()
    names, scores = names_of(count), scores_of(count)
    texts = [score_text(s) for s in scores.tolist()] if not _is_batch(session) else []
    run = _populate(session, ZSET_KEY, names, scores, texts, depth)
    if run.errors:
        return {}
    used, rss = session.info_memory(), session.rss()
    out = {"used_memory_delta": (used - base_used) / count, "rss_delta": (rss - fresh_rss) / count,
           "encoding": session.admin.execute_command("OBJECT", "ENCODING", ZSET_KEY)}
    session.admin.flushall()
    return out


def _memory_rows(column, phase: str, count: int, figures: dict) -> list[dict]:
    """The memory table's rows of one _memory measurement."""
    rows = []
    for metric in ("used_memory_delta", "rss_delta"):
        value = figures.get(metric)
        rows.append({"engine": column.engine, "mode": column.mode, "column": column.name, "phase": phase,
                     "metric": metric, "bytes": None if value is None else value * count, "bytes_per_item": value})
    return rows


def _tail(session, count: int) -> dict:
    """count ZADDs growing TAIL_KEY from empty, each timed one in flight (scenarios.write_tail:
    the client's timings, the server's SLOWLOG and the CPU figures beside them). The score of
    write i is i, so a SLOWLOG entry names its write."""
    names = member_names(count, b"t")
    calls = iter(enumerate(names))

    def one(client) -> bool:
        i, name = next(calls)
        return client.zadd(TAIL_KEY, {name: i}) == 1

    def index_of(argv: list) -> int | None:
        try:
            return int(float(argv[2]))
        except (IndexError, ValueError):
            return None
    return write_tail(session, count, lambda: [[("ZADD", TAIL_KEY, i, name)] for i, name in enumerate(names)],
                      one, b"zadd", index_of)


def zset_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    size = method.zset_size
    names, scores = member_names(size), scattered_scores(size)
    texts = [score_text(s) for s in scores.tolist()]
    rows_spec = zset_rows(method, names, scores)
    out: dict[str, Any] = {"scenario": "zset", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [f"{size} members of 16 bytes, scores scattered over [0, 1e6)"],
                           "versions": {}, "load": [], "tail": [], "zset_size": size}
    tail_count = min(TAIL_WRITES, size) if method.quick else TAIL_WRITES
    memory_sizes = (size // 2, size, 2 * size)
    leftovers: list[str] = []
    contents = {}
    packed_measured = False
    for column in columns(engines, python=True):
        out["columns"].append(column.name)
        why = unavailable(column.engine) or ("lists only (--list-implementation pma)"
                                             if column.engine == "goblin-pma" else "")
        if why:
            out["rows"] += [_na("zset", column, r, why) for r in [POPULATION] + [r["label"] for r in rows_spec]]
            out["notes"].append(f"{column.name}: n/a — {why}")
            continue
        progress(f"zset {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            depth = method.pipeline if column.mode != "call" else 1
            fresh_rss = session.rss()
            for count in memory_sizes:
                progress(f"zset {column.name}: memory at {count} members")
                figures = _memory(session, count, depth, fresh_rss)
                out["memory"] += _memory_rows(column, f"{count} members", count, figures)
            if column.engine.startswith("goblin") and not packed_measured:
                packed_measured = True
                for suffix, implementation, names_of, scores_of in PACKED_PHASES:
                    session.admin.config_set("zset-implementation", implementation)
                    for count in memory_sizes:
                        progress(f"zset {column.name}: memory at {count} members, {suffix}")
                        figures = _memory(session, count, depth, fresh_rss, names_of, scores_of)
                        encoding = figures.get("encoding")
                        out["checks"].append({"column": column.name, "check": f"{suffix}: OBJECT ENCODING",
                                              "ok": encoding == (b"packed" if implementation == "packed" else b"skiplist"),
                                              "detail": f"{count} members: {encoding!r}"})
                        out["memory"] += _memory_rows(column, f"{count} members, {suffix}", count, figures)
                session.admin.config_set("zset-implementation", "standard")
            rates, run = [], None
            for trial in range(method.trials):
                progress(f"zset {column.name}: population trial {trial + 1}/{method.trials}")
                session.admin.delete(ZSET_KEY)
                run = _populate(session, ZSET_KEY, names, scores, texts, depth)
                if run.errors:
                    break
                rates.append(size / run.elapsed_s)
            if rates:
                rate = statistics.median(rates)
                out["rows"].append({"scenario": "zset", "engine": column.engine, "mode": column.mode,
                                    "column": column.name, "operation": POPULATION, "status": "ok",
                                    "ops_per_s": rate, "values_per_s": rate, "trials": [round(r, 1) for r in rates]})
            else:
                out["rows"].append(_na("zset", column, POPULATION, f"server replied: {run.first_error}"))
                session.admin.delete(ZSET_KEY)
                for start in range(0, size, 1000):
                    session.admin.zadd(ZSET_KEY, dict(zip(names[start:start + 1000], scores[start:start + 1000])))
            population_ok = session.admin.zcard(ZSET_KEY) == size
            offsets: dict = {}
            for row in rows_spec:
                progress(f"zset {column.name}: {row['label']}")
                out["rows"].append(_run_row(session, row, method, offsets))
            card = session.admin.zcard(ZSET_KEY)
            expected = size + (method.n if any(r["operation"] == NEW_MEMBER and r["column"] == column.name
                                               and r.get("status") == "ok" for r in out["rows"]) else 0)
            out["checks"].append({"column": column.name, "check": "population held every member",
                                  "ok": population_ok, "detail": f"ZCARD after population {'=' if population_ok else '!='} {size}"})
            out["checks"].append({"column": column.name, "check": "set size as expected after every row",
                                  "ok": card == expected, "detail": f"ZCARD {card}, want {expected} "
                                  "(the population and the new members)"})
            if size <= 200_000:
                sample = session.admin.zrange(ZSET_KEY, 0, 99, withscores=True)
                contents[column.name] = [(m, s) for m, s in sample]
            progress(f"zset {column.name}: {tail_count} timed ZADDs growing a set")
            row = {"scenario": "zset", "engine": column.engine, "mode": column.mode, "column": column.name,
                   "operation": f"ZADD growing one set to {tail_count} members, depth 1", "status": "ok"}
            row.update(_tail(session, tail_count))
            good = row["replies"]
            out["tail"].append(row)
            out["checks"].append({"column": column.name, "check": "every timed ZADD added a member",
                                  "ok": good == tail_count, "detail": f"{good} of {tail_count}"})
    if contents:
        first = next(iter(contents.values()))
        same = all(value == first for value in contents.values())
        out["checks"].append({"column": "all", "check": "the 100 lowest (member, score) pairs equal across engines",
                              "ok": same, "detail": "equal" if same else ", ".join(contents)})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    out["targets"] = zset_targets(out)
    progress.done()
    return out


def zset_targets(result: dict) -> list[dict]:
    """The zset scenario's targets, measured in this run."""
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}

    def rate(column: str, operation: str) -> float | None:
        row = rows.get((column, operation))
        return row.get("ops_per_s") if row and row.get("status") == "ok" else None

    def ratio(column: str, operation: str) -> float | None:
        a, b = rate(column, operation), rate("redis", operation)
        return a / b if a is not None and b else None

    out = []
    size = result.get("zset_size")
    memory = {(m["column"], m["phase"], m["metric"]): m["bytes_per_item"] for m in result.get("memory", [])}
    goblin = memory.get(("goblin-ring-native", f"{size} members", "used_memory_delta"))
    if goblin is None:
        goblin = next((v for (c, p, m), v in memory.items() if c.startswith("goblin") and p == f"{size} members"
                       and m == "used_memory_delta" and v is not None), None)
    redis = memory.get(("redis", f"{size} members", "used_memory_delta"))
    if goblin is not None:
        out.append({"target": f"structure bytes per member at {size} members <= 49 (used_memory delta)",
                    "ratio": goblin, "met": goblin <= 49, "unit": " B/member"})
        if redis is not None:
            out.append({"target": "structure bytes per member below redis-server's (goblin / redis)",
                        "ratio": goblin / redis, "met": goblin < redis})
    packed = next((v for (c, p, m), v in memory.items() if p == f"{size} members, packed, int32 members"
                   and m == "used_memory_delta" and v is not None), None)
    if packed is not None:
        if goblin is not None:
            out.append({"target": f"packed structure bytes per member at {size} lower than standard's (packed / standard)",
                        "ratio": packed / goblin, "met": packed < goblin})
        same_data = next((v for (c, p, m), v in memory.items() if p == f"{size} members, standard, int32 members"
                          and m == "used_memory_delta" and v is not None), None)
        if same_data is not None:
            out.append({"target": "packed below standard on the same int32 data (packed / standard, not an issue target)",
                        "ratio": packed / same_data, "met": packed < same_data})
        if redis is not None:
            out.append({"target": "packed structure bytes per member below redis-server's (packed / redis)",
                        "ratio": packed / redis, "met": packed < redis})
    for operation, goal in (("ZADD (rescore)", 1.35), ("ZRANK", 1.2), ("ZSCORE", 1.2)):
        r = ratio("goblin-resp", operation)
        out.append({"target": f"goblin-resp {operation} >= {goal}x redis (redis-benchmark -c 1, this run's -P)",
                    "ratio": r, "met": r is not None and r >= goal})
    tails = {t["column"]: t for t in result.get("tail", [])}
    redis_tail = tails.get("redis")
    for column, tail in tails.items():
        if not column.startswith("goblin"):
            continue
        out.append({"target": f"{column}: growing-ZADD max latency < 1 ms", "ratio": tail["max_us"] / 1000,
                    "met": tail["max_us"] < 1000, "unit": " ms"})
        if redis_tail:
            r = tail["p99.99_us"] / redis_tail["p99.99_us"]
            out.append({"target": f"{column}: growing-ZADD p99.99 no worse than redis (goblin / redis)",
                        "ratio": r, "met": r <= 1})
    return out
