"""scenario_eviction.py — the `eviction` scenario (issue 34): writes under a full cache with
maxmemory-policy allkeys-lru and allkeys-lfu, side by side with redis-server and valkey, and the
hot-set retention the issue targets.

Per column and policy: maxmemory 20 MB, a 1,000-key hot set (100-byte values), the cache filled
with cold keys until it evicts; then each timed logical operation is SET of a new cold key plus
GET of the next hot key (so every hot key is read once per 1,000 writes, and every SET makes the
server evict about one key). After the trials: how many hot keys are left, and used_memory /
maxmemory. A row with no maxmemory (nothing evicted; memory grows) shows what eviction costs.

Targets (issue 34), printed met / NOT met:
  - allkeys-lru keeps >= 90% of the hot set while the cold keys pass (>= 200,000 of them in a
    full run: fill + trials), for each goblin column (redis-server 7.0 keeps 100%);
  - used_memory <= 1.05 x maxmemory after the run, for each goblin column.
Checks: the server evicted (evicted_keys > 0) under each policy.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from .engines import columns, open_session, unavailable
from .scenarios import Method, _na

LIMIT = 20 * 1024 * 1024
HOT = 1_000
VALUE = b"v" * 100
POLICIES = ("allkeys-lru", "allkeys-lfu")


def _label(policy: str | None) -> str:
    return f"SET new key + GET hot key, full 20 MB cache, {policy}" if policy else \
        "SET new key + GET hot key, no maxmemory (baseline)"


def _cycle(prefix: str, count: int) -> list:
    return [[("SET", f"{prefix}:{i}", VALUE), ("GET", f"hot:{i % HOT}")] for i in range(count)]


def _hot_kept(admin) -> int:
    return sum(int(admin.execute_command("EXISTS", f"hot:{i}")) for i in range(HOT))


def eviction_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    out: dict[str, Any] = {"scenario": "eviction", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [f"maxmemory {LIMIT // (1024 * 1024)} MB, {HOT} hot keys, {len(VALUE)}-byte values; "
                                     "one operation = SET of a new key + GET of the next hot key",
                                     "retention and used_memory / maxmemory are read after each policy's trials"],
                           "versions": {}, "load": [], "targets": [], "retention": []}
    leftovers: list[str] = []
    count = method.n
    fill = 150_000   # ~30 MB of keys: the cache is full (evicting) before the timed trials
    labels = [_label(p) for p in POLICIES] + [_label(None)]
    for column in columns(engines, modes=("pipeline",)):
        out["columns"].append(column.name)
        why = unavailable(column.engine) or ("not in this scenario" if column.engine == "goblin-pma" else "")
        if why:
            out["rows"] += [_na("eviction", column, label, why) for label in labels]
            continue
        progress(f"eviction {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            admin = session.admin
            depth = method.pipeline
            for policy in (*POLICIES, None):
                label = _label(policy)
                admin.execute_command("CONFIG", "SET", "maxmemory", 0)
                admin.flushall()
                admin.execute_command("CONFIG", "RESETSTAT")   # evicted_keys per policy
                admin.execute_command("CONFIG", "SET", "maxmemory-policy", policy or "noeviction")
                admin.mset({f"hot:{i}": VALUE for i in range(HOT)})
                if policy:
                    admin.execute_command("CONFIG", "SET", "maxmemory", LIMIT)
                    progress(f"eviction {column.name}: filling the cache ({policy})")
                    run = session.driver.run(_cycle("fill", fill), 0, fill, depth)
                    if run.errors:
                        out["rows"].append(_na("eviction", column, label, f"server replied: {run.first_error}"))
                        continue
                rates, failed = [], ""
                for trial in range(method.trials):
                    progress(f"eviction {column.name}: {policy or 'baseline'} trial {trial + 1}/{method.trials}")
                    run = session.driver.run(_cycle(f"cold{trial}", count), 0, count, depth)
                    if run.errors:
                        failed = f"server replied: {run.first_error}"
                        break
                    rates.append(count / run.elapsed_s)
                if failed:
                    out["rows"].append(_na("eviction", column, label, failed))
                    continue
                out["rows"].append({"scenario": "eviction", "engine": column.engine, "mode": column.mode,
                                    "column": column.name, "operation": label, "status": "ok",
                                    "ops_per_s": statistics.median(rates), "trials": [round(r, 1) for r in rates],
                                    "tool": type(session.driver).__name__ + (f".{column.mode}" if column.mode else "")})
                if not policy:
                    continue
                kept, used = _hot_kept(admin), session.info_memory()
                evicted = int(admin.info("stats")["evicted_keys"])
                out["retention"].append({"column": column.name, "policy": policy, "hot_kept": kept,
                                      "used_memory": used, "used_over_max": used / LIMIT, "evicted_keys": evicted})
                out["notes"].append(f"{column.name} {policy}: {kept}/{HOT} hot keys kept, used_memory "
                                    f"{used / LIMIT:.3f} x maxmemory, {evicted} keys evicted, "
                                    f"{fill + count * method.trials} cold keys written")
                out["checks"].append({"column": column.name, "check": f"{policy} evicted", "ok": evicted > 0,
                                      "detail": f"evicted_keys {evicted}"})
                if column.goblin and policy == "allkeys-lru":
                    out["targets"].append({"target": f"{column.name}: allkeys-lru keeps >= 90% of the {HOT}-key hot "
                                                     f"set (redis-server 7.0: 100%)", "ratio": 100.0 * kept / HOT,
                                           "unit": "%", "met": kept >= 0.9 * HOT})
                if column.goblin:
                    out["targets"].append({"target": f"{column.name} {policy}: used_memory <= 1.05 x maxmemory",
                                           "ratio": used / LIMIT, "met": used <= 1.05 * LIMIT})
            admin.execute_command("CONFIG", "SET", "maxmemory", 0)
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out
