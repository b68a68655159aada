"""scenario_set.py — the `set` scenario: a set of 16-byte members (1M; --quick: --list-size),
populated and probed on every engine side by side, and what each server's memory grew by.

Rows (ops/s, median of --trials): the population (SADD x128 batches, members/s), SADD of one
new member, SISMEMBER of a member, SISMEMBER of a non-member, SCARD, and SADD + SREM of the
same new member (a pair). Every column is driven by its own pipelined driver (NativeDriver
over the ring's C loop, RingClient call/pipeline, raw RESP windows for goblin-resp, redis
and valkey), so one tool times both sides of a ratio. The target ratio is
goblin-ring-native's SADD and SISMEMBER over redis's.

Memory (after the population): used_memory's growth, the RSS growth, and MEMORY USAGE of the
key (SAMPLES 0: every member), each per member; goblin columns add GOBLIN.MEMORY's `set`
category, the structure bytes the set engine holds. Checks: SCARD equals the member count
after every row, and a sample of members answers SISMEMBER 1.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from .engines import Column, columns, open_session, unavailable
from .scenarios import Method, _na

KEY = b"bench:set"
MEMBER_SIZE = 16
FULL_SIZE = 1_000_000


def members(count: int) -> list[bytes]:
    """count distinct 16-byte members, none an integer (so no engine keeps them as one)."""
    return [b"member:%09d" % i for i in range(count)]


def outsider(i: int) -> bytes:
    return b"absent:%09d" % i


def set_rows(method: Method, items: list[bytes]) -> list[dict]:
    n, size = method.n, len(items)
    probe = [items[(i * 7919) % size] for i in range(min(size, 4096))]
    population = [[("SADD", KEY, *items[i:i + 128])] for i in range(0, size, 128)]
    return [
        {"label": "population (SADD x128 batches), members/s", "cycle": population, "count": len(population),
         "values_per_op": 128, "population": True},
        {"label": "SADD (one new member)", "cycle": [[("SADD", KEY, b"new:%012d" % i)] for i in range(n)],
         "count": n, "adds": n},
        {"label": "SISMEMBER (a member)", "cycle": [[("SISMEMBER", KEY, m)] for m in probe], "count": n},
        {"label": "SISMEMBER (not a member)", "cycle": [[("SISMEMBER", KEY, outsider(i))] for i in range(4096)],
         "count": n},
        {"label": "SCARD", "cycle": [[("SCARD", KEY)]], "count": n},
        {"label": "SADD + SREM (pair)", "cycle": [[("SADD", KEY, outsider(i)), ("SREM", KEY, outsider(i))]
                                                  for i in range(4096)], "count": n},
    ]


def _memory(session) -> dict:
    out = {"used_memory": session.info_memory(), "rss": session.rss()}
    try:
        out["memory_usage_key"] = session.admin.execute_command("MEMORY", "USAGE", KEY, "SAMPLES", "0")
    except Exception:   # noqa: BLE001 - a server without SAMPLES: the default estimate
        out["memory_usage_key"] = session.admin.execute_command("MEMORY", "USAGE", KEY)
    goblin = session.goblin_memory()
    out["set_structure"] = goblin.get("set") if goblin else None
    return out


def set_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    size = method.list_size if method.quick else max(method.list_size, FULL_SIZE)
    items = members(size)
    rows_spec = set_rows(method, items)
    out: dict[str, Any] = {"scenario": "set", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [f"{size} members of {MEMBER_SIZE} bytes; every column timed by its own "
                                     "pipelined driver (-P deep windows), redis and valkey included"],
                           "versions": {}, "load": []}
    leftovers: list[str] = []
    for column in columns(engines, modes=("call", "pipeline"), python=True):
        out["columns"].append(column.name)
        why = unavailable(column.engine) or ("lists only (--list-implementation pma)"
                                             if column.engine == "goblin-pma" else "")
        if why:
            out["rows"] += [_na("set", column, r["label"], why) for r in rows_spec]
            continue
        progress(f"set {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            depth = method.pipeline if column.mode != "call" else 1
            expected = 0
            base = _memory(session)
            card_ok, first_bad = True, ""
            for row in rows_spec:
                result = {"scenario": "set", "engine": column.engine, "mode": column.mode, "column": column.name,
                          "operation": row["label"]}
                reason = session.supports(row["cycle"])
                if reason:
                    out["rows"].append(_na("set", column, row["label"], reason))
                    continue
                rates, failed = [], ""
                for trial in range(method.trials):
                    progress(f"set {column.name}: {row['label']} trial {trial + 1}/{method.trials}")
                    if row.get("population") or row.get("adds"):
                        if row.get("adds") and trial:
                            session.admin.execute_command("SREM", KEY, *[c[2] for op in row["cycle"] for c in op])
                        if row.get("population"):
                            session.admin.delete(KEY)
                    else:
                        session.driver.run(row["cycle"], 0, min(method.warmup, row["count"]), depth)   # warm-up
                    run = session.driver.run(row["cycle"], 0, row["count"], depth)
                    if run.errors:
                        failed = f"server replied: {run.first_error}"
                        break
                    rates.append(row["count"] / run.elapsed_s)
                if failed:
                    out["rows"].append(_na("set", column, row["label"], failed))
                    continue
                rate = statistics.median(rates)
                result.update(status="ok", ops_per_s=rate, trials=[round(r, 1) for r in rates],
                              tool=type(session.driver).__name__ + (f".{column.mode}" if column.mode else ""))
                if row.get("values_per_op"):
                    result["values_per_s"] = rate * row["values_per_op"]
                out["rows"].append(result)
                if row.get("population"):
                    expected = size
                    now = _memory(session)
                    for metric, value in (("used_memory_delta", now["used_memory"] - base["used_memory"]),
                                          ("rss_delta", now["rss"] - base["rss"]),
                                          ("memory_usage_key", now["memory_usage_key"]),
                                          ("set_structure", now["set_structure"])):
                        out["memory"].append({"engine": column.engine, "mode": column.mode, "column": column.name,
                                              "phase": "after population", "metric": metric, "bytes": value,
                                              "bytes_per_item": None if value is None else value / size})
                if row.get("adds"):
                    expected += row["adds"]
                card = session.admin.scard(KEY)
                if card != expected:
                    card_ok, first_bad = False, first_bad or f"{row['label']}: SCARD {card}, want {expected}"
            sample = items[:: max(1, size // 1000)]
            found = sum(session.admin.smismember(KEY, sample))
            out["checks"].append({"column": column.name, "check": "SCARD as expected after every row",
                                  "ok": card_ok, "detail": first_bad or f"SCARD {expected}"})
            out["checks"].append({"column": column.name, "check": "a sample of members is found",
                                  "ok": found == len(sample), "detail": f"{found}/{len(sample)}"})
    ratios = _target_ratios(out["rows"])
    out["notes"] += ratios
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


def _target_ratios(rows: list[dict]) -> list[str]:
    """goblin-ring-native over redis for every row, as notes."""
    rate = {(r["column"], r["operation"]): r.get("values_per_s") or r.get("ops_per_s")
            for r in rows if r.get("status") == "ok"}
    notes = []
    for label in dict.fromkeys(r["operation"] for r in rows):
        native, redis = rate.get(("goblin-ring-native", label)), rate.get(("redis", label))
        if native and redis:
            notes.append(f"{label}: goblin-ring-native / redis = {native / redis:.2f}x")
    return notes


def set_targets(result: dict) -> list[dict]:
    """The set targets, measured in this run: the native ring's SADD and SISMEMBER rates
    over redis's (>= 5x), and the set's structure bytes per member (GOBLIN.MEMORY's set
    category, <= 40) below redis's (its used_memory growth per member)."""
    rate = {(r["column"], r["operation"]): r.get("ops_per_s") for r in result["rows"] if r.get("status") == "ok"}
    out = []
    for label in ("SADD (one new member)", "SISMEMBER (a member)"):
        native, redis = rate.get(("goblin-ring-native", label)), rate.get(("redis", label))
        r = native / redis if native and redis else None
        out.append({"target": f"native ring {label} >= 5x redis (goblin-ring-native)", "ratio": r,
                    "met": r is not None and r >= 5})
    memory = {(m["column"], m["metric"]): m["bytes_per_item"] for m in result["memory"]}
    structure = memory.get(("goblin-ring-native", "set_structure"))
    redis_bytes = memory.get(("redis", "used_memory_delta"))
    out.append({"target": "set structure bytes per member <= 40 (goblin-ring-native, GOBLIN.MEMORY set; "
                          "'ratio' is bytes/member)", "ratio": structure,
                "met": structure is not None and structure <= 40, "unit": " B/member"})
    out.append({"target": "set structure bytes per member below redis's used_memory growth per member "
                          "('ratio' is goblin / redis)",
                "ratio": structure / redis_bytes if structure is not None and redis_bytes else None,
                "met": structure is not None and redis_bytes is not None and structure < redis_bytes})
    return out
