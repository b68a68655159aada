"""scenario_script.py — the `script` scenario: EVALSHA of Lua scripts (issue 32) on every engine
side by side, and the issue's three targets.

Three scripts, loaded with SCRIPT LOAD on each server before its rows (the cache is the
server's; the SHA1 is the same everywhere):
    1 call   return redis.call('incr', KEYS[1])
    5 calls  INCR, HSET, HGET, SET, GET on three keys
    20 calls INCR and GET of one key, ten times each
Rows: EVALSHA of each (by the column's driver: RingClient call / pipeline, the C load generator,
redis-py, RESP pipelines of -P depth), plain INCR (the ring's own baseline for target 2), and
for the RESP servers (goblin-resp, redis, valkey) EVALSHA of the 1-call script by redis-benchmark
-P 16 -c 1 (target 3's method: one client, 16 in flight).

Targets (issue 32), printed met / NOT met:
  1. RingClient.evalsha of the 1-call script, one call in flight, >= 10x redis-py's EVALSHA to
     redis-server over a Unix socket (columns goblin-ring call / redis-py call);
  2. the same >= 0.5x the ring's plain INCR (goblin-ring call, two rows);
  3. goblin RESP EVALSHA by redis-benchmark -P 16 -c 1 >= 1.2x redis-server's.
Checks: each server's counter equals the INCRs its rows sent (nothing lost or doubled).
"""

from __future__ import annotations

import hashlib
import statistics
from typing import Any, Callable

from . import drivers
from .engines import columns, open_session, unavailable
from .scenarios import Method, _na

COUNTER = b"bench:script:n"
KEYS_5 = (b"bench:script:n5", b"bench:script:h5", b"bench:script:s5")
KEY_20 = b"bench:script:n20"
PLAIN = b"bench:script:plain"
SCRIPTS = {
    1: "return redis.call('incr', KEYS[1])",
    5: ("local n = redis.call('incr', KEYS[1]) redis.call('hset', KEYS[2], 'last', n) "
        "redis.call('hget', KEYS[2], 'last') redis.call('set', KEYS[3], n) return redis.call('get', KEYS[3])"),
    20: ("local total = 0 for i = 1, 10 do total = total + redis.call('incr', KEYS[1]) "
         "redis.call('get', KEYS[1]) end return total"),
}
LABEL_1 = "EVALSHA 1-call script (INCR)"
LABEL_5 = "EVALSHA 5-call script"
LABEL_20 = "EVALSHA 20-call script"
LABEL_INCR = "INCR (plain, the ring's baseline)"
LABEL_BENCH = "EVALSHA 1-call, redis-benchmark -P 16 -c 1"
BENCH_DEPTH = 16


def sha_of(body: str) -> str:
    return hashlib.sha1(body.encode()).hexdigest()


def script_rows(method: Method) -> list[dict]:
    n = method.n
    return [
        {"label": LABEL_1, "cycle": [[("EVALSHA", sha_of(SCRIPTS[1]), 1, COUNTER)]], "count": n, "incr": (COUNTER, 1)},
        {"label": LABEL_5, "cycle": [[("EVALSHA", sha_of(SCRIPTS[5]), 3, *KEYS_5)]], "count": max(n // 2, 1000),
         "incr": (KEYS_5[0], 1)},
        {"label": LABEL_20, "cycle": [[("EVALSHA", sha_of(SCRIPTS[20]), 1, KEY_20)]], "count": max(n // 5, 1000),
         "incr": (KEY_20, 10)},
        {"label": LABEL_INCR, "cycle": [[("INCR", PLAIN)]], "count": n, "incr": (PLAIN, 1)},
        # a multiple of the depth: redis-benchmark sends whole pipelines
        {"label": LABEL_BENCH, "cycle": [[("EVALSHA", sha_of(SCRIPTS[1]), 1, COUNTER)]],
         "count": -(-n * 5 // BENCH_DEPTH) * BENCH_DEPTH,
         "incr": (COUNTER, 1), "redis_benchmark": True},
    ]


def _measure(session, row: dict, method: Method, depth: int, progress: Callable, name: str) -> tuple[list, str, int]:
    """The row's rates (one per trial), why it failed (''), and the INCRs it sent."""
    sent, rates = 0, []
    if row.get("redis_benchmark"):
        if not session.uses_redis_benchmark:
            return [], "RESP servers only (redis-benchmark)", 0
        command = row["cycle"][0][0]
        for trial in range(method.trials):
            progress(f"script {name}: {row['label']} trial {trial + 1}/{method.trials}")
            try:
                rates.append(drivers.redis_benchmark(session.server.port, row["count"], BENCH_DEPTH, command,
                                                     method.client_core, 1))
            except RuntimeError as error:
                return [], str(error), 0
            sent += row["count"]
        return rates, "", sent
    warm = min(method.warmup, row["count"])
    run = session.driver.run(row["cycle"], 0, warm, depth)
    if run.errors:
        return [], f"server replied: {run.first_error}", 0
    sent += warm
    for trial in range(method.trials):
        progress(f"script {name}: {row['label']} trial {trial + 1}/{method.trials}")
        run = session.driver.run(row["cycle"], 0, row["count"], depth)
        if run.errors:
            return [], f"server replied: {run.first_error}", sent
        rates.append(row["count"] / run.elapsed_s)
        sent += row["count"]
    return rates, "", sent


def _rate(result: dict, column: str, label: str) -> float | None:
    for row in result["rows"]:
        if row.get("status") == "ok" and row["column"] == column and row["operation"] == label:
            return row["ops_per_s"]
    return None


def _target(text: str, ours: float | None, theirs: float | None, goal: float) -> dict:
    ratio = ours / theirs if ours and theirs else None
    return {"target": text, "ratio": ratio, "met": ratio is not None and ratio >= goal}


def script_targets(result: dict) -> list[dict]:
    ring_evalsha = _rate(result, "goblin-ring call", LABEL_1)
    return [
        _target("RingClient evalsha of a one-call INCR script (one in flight) >= 10x redis-py EVALSHA to "
                "redis-server over a Unix socket", ring_evalsha, _rate(result, "redis-py call", LABEL_1), 10),
        _target("RingClient evalsha of a one-call INCR script >= 0.5x the ring's plain INCR (one in flight)",
                ring_evalsha, _rate(result, "goblin-ring call", LABEL_INCR), 0.5),
        _target("goblin RESP EVALSHA (redis-benchmark -P 16, one client) >= 1.2x redis-server",
                _rate(result, "goblin-resp", LABEL_BENCH), _rate(result, "redis", LABEL_BENCH), 1.2),
    ]


def script_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    rows_spec = script_rows(method)
    out: dict[str, Any] = {"scenario": "script", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": ["scripts: " + "; ".join(f"{k} call{'s' if k > 1 else ''}: {v}"
                                                             for k, v in SCRIPTS.items()),
                                     f"'{LABEL_BENCH}' runs on the RESP servers only (issue 32's method)"],
                           "versions": {}, "load": []}
    leftovers: list[str] = []
    for column in columns(engines, modes=("call", "pipeline"), python=True):
        out["columns"].append(column.name)
        why = unavailable(column.engine) or ("lists only (--list-implementation pma)"
                                             if column.engine == "goblin-pma" else "")
        if not why and column.engine in ("redis-py-async", "goblin-ring-async"):
            why = "not in this scenario (the targets name the synchronous clients)"
        if why:
            out["rows"] += [_na("script", column, r["label"], why) for r in rows_spec]
            continue
        progress(f"script {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            for body in SCRIPTS.values():
                assert session.admin.script_load(body) == sha_of(body)
            depth = method.pipeline if column.mode != "call" else 1
            expected: dict[bytes, int] = {}
            for row in rows_spec:
                label = row["label"]
                reason = session.supports(row["cycle"])
                if reason:
                    out["rows"].append(_na("script", column, label, reason))
                    continue
                rates, failed, sent = _measure(session, row, method, depth, progress, column.name)
                key, per_call = row["incr"]
                expected[key] = expected.get(key, 0) + sent * per_call
                if failed:
                    out["rows"].append(_na("script", column, label, failed))
                    continue
                out["rows"].append({
                    "scenario": "script", "engine": column.engine, "mode": column.mode, "column": column.name,
                    "operation": label, "status": "ok", "ops_per_s": statistics.median(rates),
                    "trials": [round(r, 1) for r in rates],
                    "tool": f"redis-benchmark -P {BENCH_DEPTH} -c 1" if row.get("redis_benchmark")
                    else type(session.driver).__name__ + (f".{column.mode}" if column.mode else "")})
            counters = {key.decode(): int(session.admin.get(key) or 0) for key in expected}
            wanted = {key.decode(): value for key, value in expected.items()}
            out["checks"].append({"column": column.name, "check": "each counter equals the INCRs sent",
                                  "ok": counters == wanted, "detail": f"{counters} (sent {wanted})"})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    out["targets"] = script_targets(out)
    progress.done()
    return out
