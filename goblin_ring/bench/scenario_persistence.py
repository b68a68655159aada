"""scenario_persistence.py — the `persistence` scenario: snapshots of one big value per type
on goblin, redis and valkey, side by side.

The data sets (-t names a subset; --quick: --hash-size / --list-size elements each):
  zset    1,000,000 members of 16 bytes, scattered scores        (ZADD)
  hash    1,000,000 fields and values of 16 bytes                (HSET)
  set     1,000,000 members of 16 bytes                          (SADD)
  list    100,000 values of 16 bytes                             (RPUSH)
  list1m  1,000,000 values of 16 bytes                           (RPUSH)
  array   1,000,000 slots 0..n-1 of 16-byte values               (ARMSET; goblin only: redis 7.0
          and valkey have no array type)
Per engine and data set the server is populated over RESP, then
  * SAVE seconds: the SAVE command's round trip (median of --trials),
  * file bytes: the snapshot file's size (goblin's dump.grdb, redis's and valkey's dump.rdb),
  * load seconds: the time from starting the server to its ready line with the file present,
    minus the same without it (best of --trials each; the medians are in the JSON). Each trial
    starts every engine in turn (with its file, then without), and the load targets are judged
    on the median of the trials' own ratios (redis load / goblin load), the best-of-trials ratio
    beside it.
Each engine's DEBUG DIGEST (goblin, and redis/valkey started with --enable-debug-command) is
read before the save and after the reload and must agree — and, the digest being Redis's
algorithm, agree across engines. The targets: goblin's sorted-set load >= 8x faster than
redis's and every other type's >= 4x, its sorted-set SAVE no slower than redis's, its files
<= 1.5x redis's RDB.

The append-only log's rows (RPUSH rate with appendfsync everysec / always against off) are
the `aof` scenario (aof_rows.py). A further kind of row here is another function in SECTIONS.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from .. import RespClient
from .engines import unavailable
from .scenarios import Method
from .servers import free_port, pinned, valkey_executable, wait_for_line

FULL_ZSET = 1_000_000
FULL_HASH = 1_000_000
FULL_SET = 1_000_000
FULL_LIST = 100_000
FULL_BIG = 1_000_000   # list1m, array
DATASETS = ("zset", "hash", "set", "list", "list1m", "array")
# load >= this many times faster than redis's RDB load
LOAD_TARGET = {"zset": 8.0, "hash": 4.0, "set": 4.0, "list": 4.0, "list1m": 4.0}
BATCH = 128
ENGINES = ("goblin", "redis", "valkey")


def engines_of(requested: list[str]) -> list[str]:
    """goblin-* names mean goblin (the snapshot does not depend on the transport)."""
    out = []
    for name in requested:
        engine = "goblin" if name.startswith("goblin") else name
        if engine in ENGINES and engine not in out:
            out.append(engine)
    return out


def server_argv(engine: str, port: int, data_dir: Path, runtime_dir: Path) -> tuple[list[str], str, str]:
    """(argv, ready marker, snapshot file name) for one engine, persistence by SAVE only."""
    if engine == "goblin":
        return ([sys.executable, "-m", "goblin_ring.server", "--name", f"p{port}", "--runtime-dir", str(runtime_dir),
                 "--port", str(port), "--save", "", "--dir", str(data_dir)], "started:", "dump.grdb")
    executable = shutil.which("redis-server") if engine == "redis" else valkey_executable()[0]
    return ([executable, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(data_dir), "--enable-debug-command", "yes"],
            "Ready to accept connections", "dump.rdb")


class Running:
    """One started server: how long it took to be ready, its RESP client."""

    def __init__(self, engine: str, data_dir: Path, runtime_dir: Path, core: int | None):
        self.port = free_port()
        argv, marker, self.filename = server_argv(engine, self.port, data_dir, runtime_dir)
        started = time.perf_counter()
        self.process = subprocess.Popen(pinned(argv, core), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT)
        wait_for_line(self.process, self.process.stdout, marker, timeout=600)
        self.ready_seconds = time.perf_counter() - started
        self.client = RespClient(port=self.port, socket_timeout=600)

    def stop(self) -> None:
        self.client.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


def load_cores(method: Method) -> str | None:
    """The cores a server may use while it starts and loads: both the run's cores (the client only
    waits for the ready line meanwhile), the same for every engine; goblin's load checksums on
    one while it builds on the other, redis and valkey load on one thread."""
    cores = [c for c in (method.server_core, method.client_core) if c is not None]
    return ",".join(map(str, cores)) if cores else None


def datasets(method: Method) -> list[tuple[str, str, int]]:
    """(name, key, size) of the data sets -t asks for (all by default): sizes from --hash-size /
    --list-size when --quick."""
    if method.quick:
        sizes = {"zset": method.hash_size, "hash": method.hash_size, "set": method.hash_size,
                 "list": method.list_size, "list1m": method.hash_size, "array": method.hash_size}
    else:
        big = max(FULL_BIG, method.hash_size)
        sizes = {"zset": max(FULL_ZSET, method.hash_size), "hash": max(FULL_HASH, method.hash_size),
                 "set": max(FULL_SET, method.hash_size), "list": max(FULL_LIST, method.list_size),
                 "list1m": big, "array": big}
    chosen = [name for name in DATASETS if not method.tests or name in method.tests]
    return [(name, f"bench:{name}", sizes[name]) for name in chosen]


def populate(client: RespClient, kind: str, key: str, size: int) -> None:
    """The same data on every engine: 16-byte members/fields/values, deterministic scores."""
    for start in range(0, size, BATCH * 64):
        with client.pipeline(transaction=False) as pipe:
            for first in range(start, min(size, start + BATCH * 64), BATCH):
                last = min(size, first + BATCH)
                if kind == "zset":
                    pipe.execute_command("ZADD", key, *[part for i in range(first, last)
                                                        for part in (str((i * 7919) % 1_000_003 / 7), b"member:%09d" % i)])
                elif kind == "hash":
                    pipe.execute_command("HSET", key, *[part for i in range(first, last)
                                                        for part in (b"field:%010d" % i, b"value:%010d" % i)])
                elif kind == "set":
                    pipe.execute_command("SADD", key, *[b"member:%09d" % i for i in range(first, last)])
                elif kind == "array":
                    pipe.execute_command("ARMSET", key, *[part for i in range(first, last)
                                                          for part in (str(i), b"value:%010d" % i)])
                else:
                    pipe.execute_command("RPUSH", key, *[b"value:%010d" % i for i in range(first, last)])
            pipe.execute()


def digest(client: RespClient) -> str | None:
    try:
        reply = client.execute_command("DEBUG", "DIGEST")
    except Exception:   # noqa: BLE001 - a server that refuses DEBUG: no digest check
        return None
    return reply.decode() if isinstance(reply, bytes) else reply


def snapshot_rows(method: Method, engines: list[str], progress: Callable, out: dict) -> None:
    trials = max(1, method.trials)
    for kind, key, size in datasets(method):
        with tempfile.TemporaryDirectory(prefix="goblin-bench-persist-") as scratch:
            empty_dir = Path(scratch, "empty")
            empty_dir.mkdir()
            ready: dict[str, tuple[dict, Path]] = {}
            for engine in engines:   # each engine's file first, so that the start-ups can alternate
                row: dict[str, Any] = {"column": engine, "operation": f"{kind} of {size}", "dataset": kind,
                                       "size": size}
                out["rows"].append(row)
                why = unavailable(engine) or (kind == "array" and engine != "goblin" and f"{engine} has no array type")
                if why:
                    row.update(status="n/a", reason=why)
                    continue
                progress(f"persistence: {engine} {kind} {size}")
                data_dir = Path(scratch, f"data-{engine}")
                data_dir.mkdir()
                server = Running(engine, data_dir, Path(scratch, f"rt-{engine}"), method.server_core)
                try:
                    populate(server.client, kind, key, size)
                    before = digest(server.client)
                    saves = []
                    for _ in range(trials):
                        started = time.perf_counter()
                        server.client.execute_command("SAVE")
                        saves.append(time.perf_counter() - started)
                    row.update(save_seconds=statistics.median(saves), file_bytes=os.path.getsize(data_dir / server.filename),
                               digest=before)
                finally:
                    server.stop()
                row.update(with_file=[], without_file=[], after=None, loaded=None)
                ready[engine] = (row, data_dir)
            # each trial starts every engine with its file and without, one engine after the other,
            # so that a slow moment of the machine falls on both sides of a trial's ratio
            for trial in range(trials):
                for engine, (row, data_dir) in ready.items():
                    for directory, times in ((data_dir, row["with_file"]), (empty_dir, row["without_file"])):
                        again = Running(engine, directory, Path(scratch, f"rt{trial}{engine}{directory.name}"),
                                        load_cores(method))
                        try:
                            times.append(again.ready_seconds)
                            if directory is data_dir and row["after"] is None:
                                row["after"] = digest(again.client)
                                row["loaded"] = again.client.execute_command("DBSIZE")
                        finally:
                            again.stop()
            for engine, (row, _) in ready.items():
                with_file, without_file = row.pop("with_file"), row.pop("without_file")
                after, loaded, before = row.pop("after"), row.pop("loaded"), row["digest"]
                # best of the trials, as start-up noise only ever adds; and each trial's own load
                row.update(status="ok", load_seconds=min(with_file) - min(without_file),
                           startup_with_file=min(with_file), startup_without_file=min(without_file),
                           load_seconds_median=statistics.median(with_file) - statistics.median(without_file),
                           load_seconds_trials=[w - wo for w, wo in zip(with_file, without_file)],
                           startup_without_spread=max(without_file) - min(without_file),
                           startup_trials={"with": with_file, "without": without_file})
                out["checks"].append({"column": engine, "check": f"{kind}: reloaded equal (DEBUG DIGEST, DBSIZE 1)",
                                      "ok": loaded == 1 and (before is None or before == after),
                                      "detail": f"digest {before} -> {after}, DBSIZE {loaded}"})
        # goblin's digest is redis 7.0's algorithm (valkey prints sorted-set scores its own way)
        digests = {r["column"]: r.get("digest") for r in out["rows"]
                   if r.get("dataset") == kind and r.get("digest") and r["column"] in ("goblin", "redis")}
        if len(digests) > 1:
            out["checks"].append({"column": ", ".join(digests), "check": f"{kind}: the same data digests equal",
                                  "ok": len(set(digests.values())) == 1, "detail": ", ".join(
                                      f"{engine} {value[:12]}" for engine, value in digests.items())})


def load_ratios(goblin: dict, redis: dict) -> tuple[float | None, float | None, list[float]]:
    """redis load / goblin load: (best: the best start-ups' difference on each side; median of the
    per-trial ratios, each trial's two loads measured one after the other; those ratios). A load
    lost in the start-up's noise (zero or negative: --quick sizes) has no ratio."""
    loads = goblin["load_seconds"], redis["load_seconds"]
    best = loads[1] / loads[0] if min(loads) > 0 else None
    per_trial = [r / g for g, r in zip(goblin.get("load_seconds_trials", []), redis.get("load_seconds_trials", []))
                 if g > 0 and r > 0]
    median = statistics.median(per_trial) if per_trial and len(per_trial) == len(goblin["load_seconds_trials"]) else None
    return best, median, per_trial


def persistence_targets(result: dict) -> list[dict]:
    rows = {(r["column"], r.get("dataset")): r for r in result["rows"] if r.get("status") == "ok"}
    goblin, redis = rows.get(("goblin", "zset")), rows.get(("redis", "zset"))
    out = []

    def add(target: str, ratio: float | None, met: bool, unit: str = "x") -> None:
        out.append({"target": target, "ratio": ratio, "met": met, "unit": unit})

    for kind in DATASETS:
        g, r = rows.get(("goblin", kind)), rows.get(("redis", kind))
        if not (g and r and kind in LOAD_TARGET):
            continue
        # judged on the median of the per-trial ratios; the best-of-trials ratio is reported beside it
        best, median, _ = load_ratios(g, r)
        add(f"{kind} load >= {LOAD_TARGET[kind]:g}x faster than redis's RDB load (redis load s / goblin load s, "
            f"median of the trials' ratios; best of trials {'n/a' if best is None else f'{best:.2f}x'})",
            median, median is not None and median >= LOAD_TARGET[kind])
    if goblin and redis:
        save = redis["save_seconds"] / goblin["save_seconds"] if goblin["save_seconds"] > 0 else None
        add("sorted-set SAVE no slower than redis's (redis s / goblin s)", save, save is not None and save >= 1)
    for kind in DATASETS:
        g, r = rows.get(("goblin", kind)), rows.get(("redis", kind))
        if g and r:
            size = g["file_bytes"] / r["file_bytes"]
            add(f"{kind} snapshot file <= 1.5x redis's RDB (goblin bytes / redis bytes)", size, size <= 1.5)
    return out


def markdown(result: dict) -> list[str]:
    lines = ["Snapshots: SAVE seconds (median), file bytes, load seconds = start-up with the file minus "
             "start-up without it (best of the trials; in brackets the median of the trials' own differences). "
             "Each trial starts every engine in turn, with its file and without. 'without spread' is the "
             "start-up without a file's max - min over the trials: a load smaller than it is within the noise.", "",
             "| data set | engine | SAVE s | file bytes | bytes / element | load s (median) | start-up with / without s "
             "| without spread s |",
             "|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        if row.get("dataset") is None:
            continue
        if row.get("status") != "ok":
            lines.append(f"| {row['operation']} | {row['column']} | n/a | n/a | n/a | n/a | {row.get('reason', '')} | |")
            continue
        lines.append(f"| {row['operation']} | {row['column']} | {row['save_seconds']:.3f} | {row['file_bytes']:,} | "
                     f"{row['file_bytes'] / row['size']:.1f} | {row['load_seconds']:.3f} "
                     f"({statistics.median(row['load_seconds_trials']):.3f}) | "
                     f"{row['startup_with_file']:.3f} / {row['startup_without_file']:.3f} | "
                     f"{row['startup_without_spread']:.3f} |")
    rows = {(r["column"], r.get("dataset")): r for r in result["rows"] if r.get("status") == "ok"}
    ratio_lines = []
    for kind in DATASETS:
        g, r = rows.get(("goblin", kind)), rows.get(("redis", kind))
        if g and r:
            best, median, per_trial = load_ratios(g, r)
            ratio_lines.append(f"| {kind} | {'n/a' if median is None else f'{median:.2f}x'} | "
                               f"{'n/a' if best is None else f'{best:.2f}x'} | "
                               f"{', '.join(f'{x:.2f}' for x in per_trial) or 'n/a'} |")
    if ratio_lines:
        lines += ["", "Load, redis-server / goblin (the target is judged on the median of the trials' ratios):", "",
                  "| data set | median of trials | best of trials | each trial |", "|---|---|---|---|", *ratio_lines]
    for section in result.get("sections", []):
        lines += ["", *section]
    lines += ["", "Targets (measured in this run):", ""]
    for goal in persistence_targets(result) + result.get("extra_targets", []):
        value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.2f}{goal.get('unit', 'x')}"
        lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
    return lines


# Each section adds rows/checks/markdown to the result.
SECTIONS: list[Callable[[Method, list[str], Callable, dict], None]] = [snapshot_rows]


def persistence_scenario(method: Method, requested: list[str], progress: Callable) -> dict:
    engines = engines_of(requested)
    out: dict[str, Any] = {"scenario": "persistence", "columns": engines, "rows": [], "memory": [], "checks": [],
                           "notes": ["one server per engine and data set, populated over RESP; goblin with "
                                     "--save \"\", redis and valkey with --save \"\" --appendonly no "
                                     "--enable-debug-command yes; SAVE by the client",
                                     "start-ups (load s) run with both the server and the client core "
                                     "allowed, for every engine: goblin's load uses two threads"],
                           "versions": {}, "load": [], "sections": []}
    for section in SECTIONS:
        section(method, engines, progress, out)
    out["markdown"] = markdown(out)
    out["targets"] = persistence_targets(out) + out.get("extra_targets", [])   # report.to_json reads them
    return out
