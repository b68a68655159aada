"""report.py — Markdown (engines as columns, ratio columns against redis), JSON, CSV, chart.

The Markdown follows the reference tables in DESIGN.md: one row per operation, one column per
engine, then one "x redis" column per other engine (engine rate / redis rate; above 1 is
faster than redis). Latency tables put percentiles in rows; their ratios are engine / redis
(below 1 is faster). Cells that were not measured say n/a, and the reasons are listed below.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from .engines import INCUMBENTS

LATENCY_KEYS = ("p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us")


def _rate(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "n/a"
    return f"{value / base:.2f}x"


def _cell(rows: dict, column: str, operation: str) -> dict | None:
    return rows.get((column, operation))


def _headline(row: dict | None) -> float | None:
    if not row or row.get("status") != "ok":
        return None
    if row["operation"].startswith("population"):
        return row.get("values_per_s")
    return row.get("ops_per_s")


def _reasons(result: dict) -> list[str]:
    seen: dict[str, list[str]] = {}
    for row in result["rows"]:
        if row.get("status") == "n/a":
            seen.setdefault(f"{row['column']}: {row['reason']}", []).append(row["operation"])
    lines = []
    for text, operations in seen.items():
        what = "every row" if len(operations) > 6 else ", ".join(operations)
        lines.append(f"- n/a — {text} ({what})")
    return lines


def _checks(result: dict) -> list[str]:
    lines = ["", "Checks:", ""]
    for check in result["checks"]:
        mark = "ok" if check["ok"] else "FAILED"
        lines.append(f"- {mark}: {check['column']}: {check['check']} — {check['detail']}")
    return lines


def _method_line(meta: dict) -> str:
    m = meta["method"]
    pin = meta["pinning"]
    steal = meta.get("steal", {})
    return (f"-n {m['n']}, -P {m['pipeline']}, median of {m['trials']} trial(s), warmup {m['warmup']}, "
            f"list {m['list_size']} x {m['value_size']} B{' (--quick)' if m['quick'] else ''}; "
            f"server core {pin['server_core']}, client core {pin['client_core']}; "
            f"CPU {meta['cpu_model']}; steal during the run {steal.get('percent', 0):.2f}%")


# A Python column's like: what a Python user runs against redis-server (redis-py + hiredis over
# a Unix socket, the same shape of call). A C column's (and a RESP column's): redis, loaded by
# redis-benchmark or RespPipeline exactly as that column is.
PYTHON_BASELINES = {"goblin-ring call": "redis-py call", "goblin-ring pipeline": "redis-py pipeline",
                    "goblin-ring batch": "redis-py pipeline",
                    "goblin-ring-redispy call": "redis-py call", "goblin-ring-redispy pipeline": "redis-py pipeline",
                    "goblin-ring-async call": "redis-py-async call", "goblin-ring-async tasks": "redis-py-async tasks"}
BASELINES = ("redis", "redis-py call", "redis-py pipeline", "redis-py-async call", "redis-py-async tasks")


def baseline_of(column: str, columns: list[str]) -> str | None:
    """The column a column's ratio is taken against, if it is in this run: Python columns
    against the redis-py column of their kind (never against redis-benchmark's C client), the
    others against redis; baselines have none."""
    if column in BASELINES:
        return None
    if column in PYTHON_BASELINES or column.startswith("goblin-ring-redispy") or column.startswith("goblin-ring-async"):
        base = PYTHON_BASELINES.get(column)
    else:
        base = "redis"
    return base if base in columns else None


def throughput_table(result: dict) -> list[str]:
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}
    operations = list(dict.fromkeys(r["operation"] for r in result["rows"]))
    columns = result["columns"]
    ratios = [(c, baseline_of(c, columns)) for c in columns]
    ratios = [(c, base) for c, base in ratios if base]
    header = ["operation (ops/s; population in items/s)", *columns] + [f"{c} x {base}" for c, base in ratios]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for operation in operations:
        cells = [operation] + [_rate(_headline(_cell(rows, c, operation))) for c in columns]
        cells += [_ratio(_headline(_cell(rows, c, operation)), _headline(_cell(rows, base, operation)))
                  for c, base in ratios]
        lines.append("| " + " | ".join(cells) + " |")
    if any(base != "redis" for _, base in ratios):
        lines += ["", "Each ratio column names its baseline: a Python column (RingClient, redis-py over the ring, the "
                  "asyncio RingClient) is divided by the redis-py column of its kind (redis-py + hiredis over a Unix "
                  "socket to redis-server: call by call, pipeline by pipeline of the same depth, asyncio by "
                  "redis.asyncio with the same tasks); the C and RESP columns by redis (redis-benchmark's C client "
                  "or RespPipeline, the same depth)."]
    return lines


def memory_table(result: dict) -> list[str]:
    if not result["memory"]:
        return []
    by = {(m["column"], m["phase"], m["metric"]): m for m in result["memory"]}
    columns = list(dict.fromkeys(m["column"] for m in result["memory"]))
    keys = list(dict.fromkeys((m["phase"], m["metric"]) for m in result["memory"]))
    lines = ["", "Memory, bytes per item (deltas from the server's state before population):", "",
             "| phase | metric | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for phase, metric in keys:
        cells = []
        for column in columns:
            m = by.get((column, phase, metric))
            cells.append("n/a" if not m or m["bytes_per_item"] is None else f"{m['bytes_per_item']:.2f}")
        lines.append(f"| {phase} | {metric} | " + " | ".join(cells) + " |")
    return lines


def internals_table(result: dict) -> list[str]:
    """GOBLIN.LIST.INTERNALS of the benchmark list, per goblin column and phase."""
    reports = result.get("internals") or []
    if not reports:
        return []
    fields = list(dict.fromkeys(k for r in reports for k in r["report"]))
    heads = [f"{r['column']} {r['phase']}" for r in reports]
    lines = ["", "List internals (GOBLIN.LIST.INTERNALS of the benchmark list):", "",
             "| field | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for field in fields:
        lines.append(f"| {field} | " + " | ".join(str(r["report"].get(field, "")) for r in reports) + " |")
    return lines


def latency_table(result: dict, what: str) -> list[str]:
    rows = {r["column"]: r for r in result["rows"]}
    columns = result["columns"]
    others = [c for c in columns if c != "redis"]
    redis_row = rows.get("redis") if rows.get("redis", {}).get("status") == "ok" else None
    header = ["", *columns] + ([f"{c} / redis" for c in others] if redis_row else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key in (*LATENCY_KEYS, "ops_per_s"):
        label = key.replace("_us", " us").replace("ops_per_s", "rate /s")
        cells = [label]
        for column in columns:
            row = rows.get(column)
            value = row.get(key) if row and row.get("status") == "ok" else None
            cells.append("n/a" if value is None else (_rate(value) if key == "ops_per_s" else f"{value:.2f}"))
        if redis_row:
            for column in others:
                row = rows.get(column)
                value = row.get(key) if row and row.get("status") == "ok" else None
                cells.append(_ratio(value, redis_row.get(key)))
        lines.append("| " + " | ".join(cells) + " |")
    operations = {r["operation"] for r in result["rows"]}
    if len(operations) == 1:
        lines += ["", f"Every column: {operations.pop()}."]
    else:
        lines += ["", "Paths: " + "; ".join(f"{r['column']} = {r['operation']}" for r in result["rows"])]
    return lines


def tail_table(result: dict) -> list[str]:
    """A scenario's write-path tail rows (result["tail"]): percentiles and max, microseconds;
    then, for rows that carry them (scenarios.write_tail), the server's side (SLOWLOG) and the
    client's CPU and context switches beside the client's max."""
    if not result.get("tail"):
        return []
    lines = ["", "Write-path tail: " + result["tail"][0]["operation"] + "; microseconds.", "",
             "| column | p50 | p99 | p99.9 | p99.99 | max |", "|---|---|---|---|---|---|"]
    for row in result["tail"]:
        lines.append(f"| {row['column']} | {row['p50_us']:.1f} | {row['p99_us']:.1f} | "
                     f"{row['p99.9_us']:.1f} | {row['p99.99_us']:.1f} | {row['max_us']:.1f} |")
    rows = [row for row in result["tail"] if "server_over_500us" in row]
    if rows:
        def us(value) -> str:
            return "-" if value is None else f"{value:.0f}"
        lines += ["", "The same loops seen by the server (SLOWLOG, slowlog-log-slower-than 500 us: the slowest write "
                  "the server measured, how many took over 0.5 / 1 ms, and the client's latency of that write), "
                  "the server's time for the client's slowest write (- : under 500 us), the client thread's CPU "
                  "in its slowest call (Python columns) and over the loop, and for the client thread and the server "
                  "process the involuntary context switches and the milliseconds spent runnable but waiting for "
                  "a CPU (run queue).", "",
                  "| column | client max | server max | server >0.5 ms | server >1 ms | client us of server max | "
                  "server us of client max | client CPU in max call | client CPU / wall | client invol. switches | "
                  "server invol. switches | client run-queue ms | server run-queue ms |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in rows:
            share = row.get("client_cpu_share")
            lines.append(f"| {row['column']} | {row['max_us']:.0f} | {us(row['server_max_us'])} | "
                         f"{row['server_over_500us']} | {row['server_over_1ms']} | "
                         f"{us(row['client_us_of_server_slowest'])} | {us(row['server_us_of_client_slowest'])} | "
                         f"{us(row['client_cpu_us_of_client_slowest'])} | "
                         f"{'-' if share is None else f'{share:.2f}'} | {row['client_involuntary_switches']} | "
                         f"{row['server_involuntary_switches']} | {row.get('client_runqueue_wait_ms', 0):.1f} | "
                         f"{row.get('server_runqueue_wait_ms', 0):.1f} |")
    return lines


def targets(result: dict) -> list[dict]:
    """list100k's targets, measured (never bent): ratios against redis in this run."""
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}
    population = next((r["operation"] for r in result["rows"] if r["operation"].startswith("population")), None)

    def ratio(column: str, operation: str) -> float | None:
        a, b = _headline(rows.get((column, operation))), _headline(rows.get(("redis", operation)))
        return a / b if a is not None and b else None

    out = []
    if population:
        r = ratio("goblin-ring-native", population)
        out.append({"target": "ring population >= 5x redis (goblin-ring-native)", "ratio": r,
                    "met": r is not None and r >= 5})
    r = ratio("goblin-ring-native", "LLEN")
    out.append({"target": "ring LLEN >= 4x redis (goblin-ring-native)", "ratio": r, "met": r is not None and r >= 4})
    # the PMA engine against the segmented one, same transport (the C load generator)
    middle = next((r["operation"] for r in result["rows"] if r["operation"].endswith("(N/2)")), None)
    pma_row, seg_row = rows.get(("goblin-pma native", middle)), rows.get(("goblin-ring-native", middle))
    if middle and pma_row and seg_row:
        a, b = _headline(pma_row), _headline(seg_row)
        r = a / b if a is not None and b else None
        out.append({"target": f"{middle}: goblin-pma native >= goblin-ring-native", "ratio": r,
                    "met": r is not None and r >= 1})
    rss = next((m for m in result.get("memory", []) if m["column"] == "goblin-pma native"
                and m["phase"] == "after population" and m["metric"] == "rss_delta"), None)
    if rss and rss["bytes_per_item"] is not None:
        out.append({"target": "goblin-pma RSS growth <= 28 bytes/item (after population; 'ratio' is bytes/item)",
                    "ratio": rss["bytes_per_item"], "met": rss["bytes_per_item"] <= 28, "unit": " B/item"})
    fixed = [r["operation"] for r in result["rows"] if r["column"] == "goblin-resp" and
             (r["operation"].startswith(("LLEN", "LINDEX", "LRANGE", "LSET")))]
    clients = result.get("clients", 1)
    for operation in fixed:
        r = ratio("goblin-resp", operation)
        if clients > 1:      # many one-in-flight clients
            out.append({"target": f"goblin-resp {operation}, {clients} clients one in flight >= 1.5x redis",
                        "ratio": r, "met": r is not None and r >= 1.5})
        else:
            out.append({"target": f"goblin-resp {operation} >= 1.0x redis", "ratio": r,
                        "met": r is not None and r >= 1})
    return out


def pingpong_targets(result: dict) -> list[dict]:
    """With --clients N: goblin-resp's PING rate against redis's, both by redis-benchmark."""
    clients = result.get("clients", 1)
    if clients <= 1:
        return []
    rows = {r["column"]: r for r in result["rows"]}
    a, b = _headline(rows.get("goblin-resp")), _headline(rows.get("redis"))
    r = a / b if a is not None and b else None
    return [{"target": f"goblin-resp PING, {clients} clients one in flight >= 1.5x redis", "ratio": r,
             "met": r is not None and r >= 1.5}]


def markdown(results: list[dict], meta: dict) -> str:
    lines = [f"# goblin-ring-bench {meta['scenario']}", "", _method_line(meta), ""]
    versions = {}
    for result in results:
        versions.update(result.get("versions", {}))
    if versions:
        lines += ["Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()), ""]
    for result in results:
        if result.get("load"):
            lines += ["CPU used by other processes on this shared machine while each column ran (% of one core; "
                      "a high figure means that column was slowed by someone else): " +
                      ", ".join(f"{l['column']} {l['other_cpu_percent_of_a_core']:.0f}%" for l in result["load"]), ""]
        if result["scenario"] == "list100k":
            lines += throughput_table(result)
            lines += memory_table(result)
            lines += internals_table(result)
            goals = targets(result)
            if goals:
                lines += ["", "Targets (measured in this run):", ""]
                for goal in goals:
                    value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}{goal.get('unit', 'x')}"
                    lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
        elif result["scenario"] == "aof":
            from .aof_rows import aof_markdown
            lines += aof_markdown(result)
        elif result["scenario"] == "hash":
            from .scenario_hash import hash_targets
            lines += throughput_table(result)
            lines += memory_table(result)
            lines += tail_table(result)
            lines += ["", "Targets (measured in this run):", ""]
            for goal in hash_targets(result):
                value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}{goal.get('unit', 'x')}"
                lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
        elif result["scenario"] == "workqueue":
            from .workqueue import workqueue_targets
            lines += throughput_table(result)
            if result.get("wake"):
                lines += ["", "Park-to-wake: a consumer parked in BLPOP, a producer RPUSHes; microseconds from "
                          "the push to BLPOP returning.", ""]
                lines += latency_table({"columns": [r["column"] for r in result["wake"]], "rows": result["wake"]},
                                       "wake")
            lines += ["", "Targets (measured in this run):", ""]
            for goal in workqueue_targets(result):
                value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}x"
                lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
        elif result["scenario"] == "client":
            from .client_rows import client_targets
            lines += ["Python RingClient, one request in flight; every row from one session.", ""]
            lines += throughput_table(result)
            lines += ["", "Targets (ratios between rows of this run):", ""]
            for goal in client_targets(result):
                value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}x"
                lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
        elif result["scenario"] == "set":
            from .scenario_set import set_targets
            lines += throughput_table(result)
            lines += memory_table(result)
            lines += ["", "Targets (measured in this run):", ""]
            for goal in set_targets(result):
                value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}{goal.get('unit', 'x')}"
                lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
        elif result["scenario"] == "persistence":
            lines += result["markdown"]
        elif result["scenario"] == "cache":
            lines += ["One Python client, one call in flight; ops/s.", ""]
            lines += throughput_table(result)
        elif result["scenario"] == "pubsub":
            from .scenario_pubsub import pubsub_markdown
            lines += pubsub_markdown(result)
        elif result["scenario"] == "array":
            from .scenario_array import array_markdown
            lines += array_markdown(result)
        elif result["scenario"] == "pingpong":
            lines += ["One request in flight per client; microseconds per round trip.", ""]
            lines += latency_table(result, "ping")
            goals = pingpong_targets(result)
            if goals:
                lines += ["", "Targets (measured in this run):", ""]
                for goal in goals:
                    value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}x"
                    lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
            if result.get("idle"):
                from .scenarios import idle_targets
                lines += ["", "Idle: one PING after the server sat idle (adaptive mode sleeps after --spin-us); "
                          "microseconds.", "", "| column | idle | p50 us | p90 us | p99 us |", "|---|---|---|---|---|"]
                for row in result["idle"]:
                    if row["status"] == "ok":
                        lines.append(f"| {row['column']} | {row['idle_ms']} ms | {row['p50_us']:.1f} | "
                                     f"{row['p90_us']:.1f} | {row['p99_us']:.1f} |")
                goals = idle_targets(result)
                if goals:
                    lines += ["", "Targets (measured in this run):", ""]
                    for goal in goals:
                        lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — "
                                     f"{goal['ratio']:.2f}{goal.get('unit', 'x')}")
        elif "targets" in result:
            # a scenario that carries its own targets (and optionally a write-path tail and
            # extra Markdown lines): no branch of its own needed here
            lines += throughput_table(result)
            lines += memory_table(result)
            lines += tail_table(result)
            lines += result.get("extra_lines", [])
            lines += ["", "Targets (measured in this run):", ""]
            for goal in result["targets"]:
                value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}{goal.get('unit', 'x')}"
                lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
        else:
            lines += ["Pipeline depth 1; microseconds per RPUSH.", ""]
            lines += latency_table(result, "rpush")
        reasons = _reasons(result)
        if reasons:
            lines += ["", *reasons]
        lines += _checks(result)
        lines += [f"- note: {note}" for note in result.get("notes", [])]
    return "\n".join(lines) + "\n"


def to_json(results: list[dict], meta: dict) -> dict:
    rows, memory, checks = [], [], []
    for result in results:
        rows += result["rows"] + result.get("wake", []) + result.get("idle", []) + result.get("tail", [])
        memory += result.get("memory", [])      # scenarios without a memory table (aof) have none
        checks += [{"scenario": result["scenario"], **c} for c in result.get("checks", [])]
    meta = {**meta, "other_cpu": [load for result in results for load in result.get("load", [])]}
    document: dict[str, Any] = {"meta": meta, "rows": rows, "memory": memory, "checks": checks}
    targets_seen = [t for r in results if r["scenario"] == "list100k" for t in targets(r)]
    targets_seen += [t for r in results if r["scenario"] == "pingpong" for t in pingpong_targets(r)]
    if any(r["scenario"] == "workqueue" for r in results):
        from .workqueue import workqueue_targets
        targets_seen += [t for r in results if r["scenario"] == "workqueue" for t in workqueue_targets(r)]
    if any(r["scenario"] == "client" for r in results):
        from .client_rows import client_targets
        targets_seen += [t for r in results if r["scenario"] == "client" for t in client_targets(r)]
    if any(r["scenario"] == "set" for r in results):
        from .scenario_set import set_targets
        targets_seen += [t for r in results if r["scenario"] == "set" for t in set_targets(r)]
    if any(r["scenario"] == "pingpong" for r in results):
        from .scenarios import idle_targets
        targets_seen += [t for r in results if r["scenario"] == "pingpong" for t in idle_targets(r)]
    if any(r["scenario"] == "array" for r in results):
        from .scenario_array import array_targets
        targets_seen += [t for r in results if r["scenario"] == "array" for t in array_targets(r)]
    if any(r["scenario"] == "hash" for r in results):
        from .scenario_hash import hash_targets
        targets_seen += [t for r in results if r["scenario"] == "hash" for t in hash_targets(r)]
    targets_seen += [t for r in results if "targets" in r for t in r["targets"]]
    if targets_seen:
        document["targets"] = targets_seen
    return document


CSV_FIELDS = ("scenario", "engine", "mode", "column", "operation", "status", "ops_per_s", "values_per_s",
              *LATENCY_KEYS, "reason")


def write_csv(path: str, results: list[dict]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        for result in results:
            writer.writerows(result["rows"] + result.get("idle", []))


def write_plot(path: str, results: list[dict]) -> str:
    """A bar chart: every row as a ratio to the fastest incumbent (redis or valkey) on that row.
    Latency rows use the p50 (inverted, so that above 1 is better here too). Returns '' or why
    it could not be drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        return f"matplotlib is not installed ({error}); pip install matplotlib"
    bars: list[tuple[str, str, float]] = []
    for result in results:
        ok = [r for r in result["rows"] if r.get("status") == "ok"]
        by_rate = result["scenario"] in ("list100k", "workqueue", "client", "set")
        score = _headline if by_rate else (lambda r: 1.0 / r["p50_us"] if r.get("p50_us") else None)
        operations = list(dict.fromkeys(r["operation"] for r in ok)) if by_rate else ["p50"]
        for operation in operations:
            group = [r for r in ok if not by_rate or r["operation"] == operation]
            incumbents = [score(r) for r in group if r["engine"] in INCUMBENTS and score(r)]
            if not incumbents:
                continue
            best = max(incumbents)
            for r in group:
                if score(r):
                    bars.append((f"{result['scenario']}: {operation}", r["column"], score(r) / best))
    if not bars:
        return "no row had an incumbent (redis or valkey) to compare with"
    labels = list(dict.fromkeys(b[0] for b in bars))
    columns = list(dict.fromkeys(b[1] for b in bars))
    width = 0.8 / len(columns)
    figure, axes = plt.subplots(figsize=(max(8, len(labels) * 0.9), 6))
    for j, column in enumerate(columns):
        xs, ys = [], []
        for i, label in enumerate(labels):
            for b in bars:
                if b[0] == label and b[1] == column:
                    xs.append(i + j * width)
                    ys.append(b[2])
        axes.bar(xs, ys, width, label=column)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_yscale("log")
    axes.set_ylabel("ratio to the fastest incumbent (log)")
    axes.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
    axes.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return ""


def write_json(path: str, document: dict) -> None:
    Path(path).write_text(json.dumps(document, indent=2, default=str))
