"""client_rows.py — the `client` scenario: what one command costs from Python over the ring.

The Python RingClient, one request in flight, against one goblin server (pinned, busy
polling), every row in the same session so that the ratios between rows mean something on a
shared machine. The rows are the Python client's targets and their baselines:

    LPOP                        the baseline of the queue rows
    BLPOP / BRPOP ready         two keys, the first empty         >= 80% of LPOP
    LMOVE same-list rotation                                      >= 70% of LPOP
    LMPOP COUNT 8               two keys, the first empty         >= 70% of LPOP
    LLEN                        the baseline of LRANGE
    LRANGE of 16                                                  >= 50% of LLEN
    rpush(k, *128 values)       values/s                          >= 60% of rpush_many's
    rpush_many(k, values)       128 per message, one C call, values/s

Before each trial the queue is refilled (untimed) so the timed pops always find values, and
each row checks what it left behind. Trials run in rounds over all the rows, so a change in
the machine's load falls on every row alike.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

from .engines import Column, open_session, unavailable
from .scenarios import Method, _na, values

QUEUE = b"bench:queue"
EMPTY = b"bench:empty"
LIST = b"bench:list"
PUSHED = b"bench:pushed"
ROTATION_SIZE = 1000
PER_PUSH = 128
LIST_SIZE = 1000


def client_rows(method: Method) -> list[dict]:
    """Each row: label, the call (Python source over the client `c`; see timed_loop), how many
    calls a trial makes, what to set up before it, and what it must leave."""
    n = method.n
    eighth = max(n // 8, 1)
    pushes = max(n // PER_PUSH, 4)
    return [
        {"label": "LPOP", "call": "c.lpop(QUEUE)", "count": n, "refill": n, "left": 0},
        {"label": "BLPOP ready (two keys)", "call": "c.blpop([EMPTY, QUEUE], 0)", "count": n, "refill": n, "left": 0},
        {"label": "BRPOP ready (two keys)", "call": "c.brpop([EMPTY, QUEUE], 0)", "count": n, "refill": n, "left": 0},
        {"label": "LMOVE same-list rotation", "call": "c.lmove(QUEUE, QUEUE, 'RIGHT', 'LEFT')", "count": n,
         "rotation": True},
        {"label": "LMPOP COUNT 8 (two keys)", "call": "c.lmpop(2, EMPTY, QUEUE, direction='LEFT', count=8)",
         "count": eighth, "refill": 8 * eighth, "left": 0, "values_per_op": 8},
        {"label": "LLEN", "call": "c.llen(LIST)", "count": n, "list": True},
        {"label": "LRANGE of 16", "call": "c.lrange(LIST, 100, 115)", "count": n, "list": True, "values_per_op": 16},
        {"label": f"rpush(k, *{PER_PUSH} values)", "push": "call", "count": pushes, "values_per_op": PER_PUSH},
        {"label": f"rpush_many(k, values), {PER_PUSH} per message", "push": "many", "count": pushes,
         "values_per_op": PER_PUSH},
    ]


def timed_loop(call: str) -> Callable:
    """`loop(c, count)`: the row's call, written as a user writes it (`c.lmpop(2, EMPTY, QUEUE,
    direction='LEFT', count=8)`), made `count` times; so that every row pays what its own call
    costs and nothing else (no wrapper for keyword arguments, no argument unpacking)."""
    namespace = {"QUEUE": QUEUE, "EMPTY": EMPTY, "LIST": LIST}
    exec(f"def loop(c, count):\n    for _ in range(count):\n        {call}\n", namespace)
    return namespace["loop"]


TARGET_PAIRS = (  # (row, baseline, goal, measure): the Python client's targets
    ("BLPOP ready (two keys)", "LPOP", 0.8, "ops_per_s"),
    ("BRPOP ready (two keys)", "LPOP", 0.8, "ops_per_s"),
    ("LMOVE same-list rotation", "LPOP", 0.7, "ops_per_s"),
    ("LMPOP COUNT 8 (two keys)", "LPOP", 0.7, "ops_per_s"),
    ("LRANGE of 16", "LLEN", 0.5, "ops_per_s"),
    (f"rpush(k, *{PER_PUSH} values)", f"rpush_many(k, values), {PER_PUSH} per message", 0.6, "values_per_s"),
)


def _refill(admin, items: list[bytes]) -> None:
    admin.delete(QUEUE, EMPTY)
    for start in range(0, len(items), 10_000):
        admin.rpush(QUEUE, *items[start:start + 10_000])


def _run_trial(session, row: dict, trial: int, count: int, items: list[bytes]) -> tuple[float, str]:
    """One timed trial of one row: (calls per second, check failure text or '')."""
    ring, admin = session.ring, session.admin
    label = row["label"]
    rotation = items[:ROTATION_SIZE]
    problem = ""
    if "push" in row:
        admin.delete(PUSHED)
        chunk = items[:PER_PUSH]
        if row["push"] == "call":
            rpush = ring.rpush
            start = time.perf_counter()
            for _ in range(count):
                rpush(PUSHED, *chunk)
            elapsed = time.perf_counter() - start
        else:
            batch = chunk * count
            start = time.perf_counter()
            ring.rpush_many(PUSHED, batch, per_message=PER_PUSH)
            elapsed = time.perf_counter() - start
        length = admin.llen(PUSHED)
        if length != count * PER_PUSH:
            problem = f"{label}: LLEN {length}, expected {count * PER_PUSH}"
        admin.delete(PUSHED)
        return count / elapsed, problem
    if row.get("rotation"):
        _refill(admin, rotation)
    elif row.get("list"):
        if admin.llen(LIST) != LIST_SIZE:
            admin.delete(LIST)
            admin.rpush(LIST, *items[:LIST_SIZE])
    else:
        _refill(admin, items[:row["refill"] if trial else min(row["refill"], 8 * count)])
    loop = timed_loop(row["call"])
    start = time.perf_counter()
    loop(ring, count)
    elapsed = time.perf_counter() - start
    length = admin.llen(LIST if row.get("list") else QUEUE)
    if row.get("rotation"):
        turned = count % len(rotation)
        expected = rotation[-turned:] + rotation[:-turned] if turned else rotation
        if admin.lrange(QUEUE, 0, -1) != expected:
            problem = f"{label}: the rotation left the list out of order (LLEN {length})"
    elif row.get("list"):
        if length != LIST_SIZE:
            problem = f"{label}: LLEN {length}, expected {LIST_SIZE}"
    elif trial and length != row["left"]:
        problem = f"{label}: LLEN {length} after the pops, expected {row['left']}"
    return count / elapsed, problem


def _run_rows(session, rows_spec: list[dict], method: Method, items: list[bytes],
              progress: Callable) -> tuple[list[dict], list[str]]:
    """Every row, trial by trial in rounds (round 0 is the warmup), so that a change in the
    machine's load during the run falls on every row alike, not on a few."""
    column = session.column
    rates: dict[str, list[float]] = {row["label"]: [] for row in rows_spec}
    problems: list[str] = []
    for trial in range(method.trials + 1):
        for row in rows_spec:
            label = row["label"]
            count = row["count"] if trial else min(row["count"], max(method.warmup // row.get("values_per_op", 1), 1))
            progress(f"client {column.name}: {label} {'warmup' if trial == 0 else f'trial {trial}/{method.trials}'}")
            rate, problem = _run_trial(session, row, trial, count, items)
            if trial:
                rates[label].append(rate)
                if problem:
                    problems.append(problem)
    results = []
    for row in rows_spec:
        rate = statistics.median(rates[row["label"]])
        result = {"scenario": "client", "engine": column.engine, "mode": column.mode, "column": column.name,
                  "operation": row["label"], "status": "ok", "ops_per_s": rate,
                  "trials": [round(r, 1) for r in rates[row["label"]]],
                  "tool": "RingClient.rpush_many" if row.get("push") == "many" else "RingClient, one in flight"}
        if row.get("values_per_op"):
            result["values_per_s"] = rate * row["values_per_op"]
        results.append(result)
    return results, problems


def client(method: Method, engines: list[str], progress: Callable) -> dict:
    rows_spec = client_rows(method)
    column = Column("goblin-ring", "call")
    out: dict[str, Any] = {"scenario": "client", "columns": [column.name], "rows": [], "memory": [],
                           "checks": [], "notes": [], "versions": {}, "load": []}
    if "goblin-ring" not in engines:
        out["rows"] = [_na("client", column, r["label"], "the client scenario measures the goblin-ring engine")
                       for r in rows_spec]
        return out
    why = unavailable(column.engine)
    if why:
        out["rows"] = [_na("client", column, r["label"], why) for r in rows_spec]
        return out
    items = values(max(method.n, ROTATION_SIZE, LIST_SIZE, PER_PUSH), method.value_size)
    leftovers: list[str] = []
    with open_session(column, method.server_core, leftovers, out["load"]) as session:
        out["versions"][column.engine] = session.version
        results, problems = _run_rows(session, rows_spec, method, items, progress)
        out["rows"] += results
        out["checks"].append({"column": column.name, "check": "every call found its values and left the lists "
                              "as expected", "ok": not problems,
                              "detail": "; ".join(problems) or "LLEN and contents as expected"})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    out["notes"].append("Python RingClient, one request in flight (rpush_many: one C call for the whole batch); "
                        "server pinned and busy-polling, the client pinned to another core; the rows' trials are "
                        "interleaved (every row's trial 1, then every row's trial 2, ...), the median reported")
    progress.done()
    return out


def client_targets(result: dict) -> list[dict]:
    rows = {r["operation"]: r for r in result["rows"] if r.get("status") == "ok"}
    out = []
    for label, baseline, goal, measure in TARGET_PAIRS:
        a, b = rows.get(label), rows.get(baseline)
        ratio = a[measure] / b[measure] if a and b and b.get(measure) else None
        what = "values/s" if measure == "values_per_s" else "calls/s"
        out.append({"target": f"Python RingClient: {label} >= {goal:.0%} of {baseline} ({what})", "ratio": ratio,
                    "met": ratio is not None and ratio >= goal})
    return out
