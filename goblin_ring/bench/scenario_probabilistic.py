"""scenario_probabilistic.py — the `hyperloglog` and `geo` scenarios: Redis's HLL and GEO commands
on every engine side by side.

hyperloglog: three HLLs (one dense of 100k elements, two sparse of 200), then rows of PFADD of a
new element, PFCOUNT of the dense key (the cached count), PFCOUNT of the three (a merge each time)
and PFMERGE; memory: the value's bytes (STRLEN: Redis's exact representation, 12304 bytes dense).
geo: an index of 1M points (--quick: --list-size) spread over a 10 x 10 degree square (about 36,000
points within 100 km of a point), population by GEOADD x128 batches, then GEOSEARCH BYRADIUS
100 km (COUNT-less, ASC) and BYBOX 200 x 200 km from points of the square, GEOPOS and GEODIST;
memory per point as the set scenario measures it.

Every column is driven by its own pipelined driver (-P deep windows; the Python columns one call
in flight in "call" mode), so one tool times both sides of a ratio. Targets (issue 36): PFCOUNT
over the ring from Python >= 20x redis-py's; GEOSEARCH 100 km over goblin's RESP >= 1.2x redis's.
"""

from __future__ import annotations

import random
import statistics
from typing import Any, Callable

from .engines import columns, open_session, unavailable
from .scenarios import Method, _na

GEO_KEY = b"bench:geo"
HLL_KEYS = (b"bench:hll:dense", b"bench:hll:a", b"bench:hll:b")
GEO_FULL_SIZE = 1_000_000


def _hll_population() -> list:
    dense = [[("PFADD", HLL_KEYS[0], *[b"e%08d" % j for j in range(i, i + 128)])] for i in range(0, 100_000, 128)]
    sparse = [[("PFADD", key, *[b"%s-%d" % (key, j) for j in range(200)])] for key in HLL_KEYS[1:]]
    return dense + sparse


def hll_rows(method: Method) -> list[dict]:
    n = method.n
    return [
        {"label": "population (PFADD x128 batches)", "cycle": _hll_population(), "population": True},
        {"label": "PFADD (one new element)", "cycle": [[("PFADD", HLL_KEYS[1], b"new-%d" % i)] for i in range(4096)],
         "count": n},
        {"label": "PFCOUNT (one dense key, cached)", "cycle": [[("PFCOUNT", HLL_KEYS[0])]], "count": n},
        {"label": "PFCOUNT (3 keys, merged)", "cycle": [[("PFCOUNT", *HLL_KEYS)]], "count": max(n // 20, 1000)},
        {"label": "PFMERGE (dense + sparse)", "cycle": [[("PFMERGE", b"bench:hll:m", HLL_KEYS[0], HLL_KEYS[1])]],
         "count": max(n // 20, 1000)},
    ]


def _geo_points(count: int) -> list[tuple[bytes, bytes, bytes]]:
    rng = random.Random(42)
    return [(b"%.6f" % rng.uniform(5, 15), b"%.6f" % rng.uniform(40, 50), b"p%08d" % i) for i in range(count)]


def geo_rows(method: Method, points: list) -> list[dict]:
    n = method.n
    rng = random.Random(7)
    centres = [(b"%.5f" % rng.uniform(6, 14), b"%.5f" % rng.uniform(41, 49)) for _ in range(1024)]
    population = [[("GEOADD", GEO_KEY, *[w for p in points[i:i + 128] for w in p])] for i in range(0, len(points), 128)]
    names = [p[2] for p in points[:: max(1, len(points) // 4096)]]
    searches = max(n // 20, 2000)
    return [
        {"label": "population (GEOADD x128 batches)", "cycle": population, "population": True},
        {"label": "GEOSEARCH BYRADIUS 100 km ASC",
         "cycle": [[("GEOSEARCH", GEO_KEY, "FROMLONLAT", x, y, "BYRADIUS", 100, "km", "ASC")] for x, y in centres],
         "count": searches},
        {"label": "GEOSEARCH BYBOX 200x200 km WITHDIST",
         "cycle": [[("GEOSEARCH", GEO_KEY, "FROMLONLAT", x, y, "BYBOX", 200, 200, "km", "WITHDIST")]
                   for x, y in centres], "count": searches},
        {"label": "GEOPOS (one member)", "cycle": [[("GEOPOS", GEO_KEY, m)] for m in names], "count": n},
        {"label": "GEODIST (two members)", "cycle": [[("GEODIST", GEO_KEY, names[i], names[i - 1], "km")]
                                                     for i in range(1, len(names))], "count": n},
    ]


def _run(name: str, method: Method, engines: list[str], progress: Callable, rows_spec: list[dict],
         memory_of: Callable, items: int, notes: list[str]) -> dict:
    out: dict[str, Any] = {"scenario": name, "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": notes, "versions": {}, "load": []}
    leftovers: list[str] = []
    for column in columns(engines, modes=("call", "pipeline"), python=True):
        out["columns"].append(column.name)
        why = unavailable(column.engine) or ("lists only (--list-implementation pma)"
                                             if column.engine == "goblin-pma" else "")
        if why:
            out["rows"] += [_na(name, column, r["label"], why) for r in rows_spec]
            continue
        progress(f"{name} {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            depth = method.pipeline if column.mode != "call" else 1
            base = {"used_memory": session.info_memory(), "rss": session.rss()}
            for row in rows_spec:
                label = row["label"]
                reason = session.supports(row["cycle"])
                if reason:
                    out["rows"].append(_na(name, column, label, reason))
                    continue
                count = len(row["cycle"]) if row.get("population") else row["count"]
                rates, failed = [], ""
                trials = 1 if row.get("population") else method.trials
                if not row.get("population"):
                    session.driver.run(row["cycle"], 0, min(method.warmup, count), depth)
                for trial in range(trials):
                    progress(f"{name} {column.name}: {label} trial {trial + 1}/{trials}")
                    run = session.driver.run(row["cycle"], 0, count, depth)
                    if run.errors:
                        failed = f"server replied: {run.first_error}"
                        break
                    rates.append(count / run.elapsed_s)
                if failed:
                    out["rows"].append(_na(name, column, label, failed))
                    continue
                rate = statistics.median(rates)
                result = {"scenario": name, "engine": column.engine, "mode": column.mode, "column": column.name,
                          "operation": label, "status": "ok", "ops_per_s": rate, "trials": [round(r, 1) for r in rates],
                          "tool": type(session.driver).__name__ + (f".{column.mode}" if column.mode else "")}
                if row.get("population"):
                    result["values_per_s"] = rate * sum(len(op[0]) - 2 for op in row["cycle"]) / count / (
                        3 if name == "geo" else 1)
                out["rows"].append(result)
                if row.get("population"):
                    now = {"used_memory": session.info_memory(), "rss": session.rss()}
                    for metric, value in (("used_memory_delta", now["used_memory"] - base["used_memory"]),
                                          ("rss_delta", now["rss"] - base["rss"]),
                                          *memory_of(session)):
                        out["memory"].append({"engine": column.engine, "mode": column.mode, "column": column.name,
                                              "phase": "after population", "metric": metric, "bytes": value,
                                              "bytes_per_item": None if value is None else value / items})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    progress.done()
    return out


def _rate(result: dict, column: str, label: str) -> float | None:
    for row in result["rows"]:
        if row.get("status") == "ok" and row["column"] == column and row["operation"] == label:
            return row["ops_per_s"]
    return None


def _target(result: dict, text: str, column: str, baseline: str, label: str, goal: float) -> dict:
    ours, theirs = _rate(result, column, label), _rate(result, baseline, label)
    ratio = ours / theirs if ours and theirs else None
    return {"target": text, "ratio": ratio, "met": ratio is not None and ratio >= goal}


def hyperloglog_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    def memory_of(session):
        return [("dense value (STRLEN)", session.admin.strlen(HLL_KEYS[0]))]
    out = _run("hyperloglog", method, engines, progress, hll_rows(method), memory_of, 1,
               ["three HLLs: one dense (100,000 elements), two sparse (200 each); bytes_per_item is per HLL key"])
    label = "PFCOUNT (one dense key, cached)"
    out["targets"] = [
        _target(out, "PFCOUNT over the ring from Python (RingClient, one call in flight) >= 20x redis-py (call)",
                "goblin-ring call", "redis-py call", label, 20),
        _target(out, "PFCOUNT over goblin's RESP >= 1.0x redis (pipelined)", "goblin-resp", "redis", label, 1.0),
    ]
    return out


def geo_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    size = method.list_size if method.quick else max(method.list_size, GEO_FULL_SIZE)
    points = _geo_points(size)

    def memory_of(session):
        try:
            usage = session.admin.execute_command("MEMORY", "USAGE", GEO_KEY, "SAMPLES", "0")
        except Exception:   # noqa: BLE001 - a server without SAMPLES: the default estimate
            usage = session.admin.execute_command("MEMORY", "USAGE", GEO_KEY)
        return [("memory_usage_key", usage)]
    out = _run("geo", method, engines, progress, geo_rows(method, points), memory_of, size,
               [f"{size} points over lon 5..15, lat 40..50 (about 36,000 within 100 km of a point: each search returns that many)"])
    out["targets"] = [
        _target(out, "GEOSEARCH BYRADIUS 100 km over goblin's RESP >= 1.2x redis (pipelined, one client)",
                "goblin-resp", "redis", "GEOSEARCH BYRADIUS 100 km ASC", 1.2),
    ]
    return out
