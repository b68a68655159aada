"""scenario_zset_replay.py — the `zset-replay` scenario: a page-edit counter's
stream of ZINCRBY 1 (bench/zset_replay.py: 2,000,000 commands on one key, about 280,000
members, the largest count near 11,800, fixed seed) replayed by every engine with one reply
per command, and the final state verified equal everywhere.

Lanes:
    redis, valkey, goblin-resp     redis-cli -s <unix socket> < stream: one command a line, each
                                   reply read before the next command (what redis-cli does
                                   with commands on stdin), pinned on the client core
    goblin-ring call               the Python RingClient, ring.zincrby(key, 1, member) per command
    goblin-ring-native             the C load generator (NativeDriver), one request in flight
Each goblin lane runs twice when the server has --zset-implementation packed: standard, and
packed (the set kept in the packed int32/float32 encoding; the page ids are int32 texts and the
counts whole numbers). Reported per lane: feed seconds, commands/s and the server's final RSS
(less shared memory). One replay per lane (no trials: the stream is long and each replay
starts from an empty server).

Verified per lane, from a full ZRANGE 0 -1 WITHSCORES over RESP: member count, score sum,
largest score and a digest of the member -> score mapping, each equal to what the generator
says the stream must leave (and so equal across lanes).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import drivers
from .engines import Column, open_session, unavailable
from .scenarios import Method, _na
from .servers import pinned

OPERATION = "replay (ZINCRBY 1 stream), commands/s"
NATIVE_CHUNK = 200_000      # commands built into typed requests at a time for the C loop


@dataclass(frozen=True)
class ReplayColumn(Column):
    """A replay lane: an engine, how it is fed, and the server flags it needs."""
    feed: str = ""            # "redis-cli", "python", "native"
    packed: bool = False
    extra: tuple = ()

    @property
    def name(self) -> str:
        return self.engine + (" packed" if self.packed else "") + (f" {self.mode}" if self.mode else "")

    @property
    def server_args(self) -> tuple[str, ...]:
        return (*super().server_args, *self.extra, *(("--zset-implementation", "packed") if self.packed else ()))


def load_generator() -> Any:
    """bench/zset_replay.py of this checkout (the workload generators live in the top-level
    bench/ folder), or None when the package runs without its source tree."""
    path = Path(__file__).resolve().parents[2] / "bench" / "zset_replay.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("goblin_bench_zset_replay", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def packed_supported() -> bool:
    """Whether this goblin server takes --zset-implementation packed."""
    try:
        done = subprocess.run([sys.executable, "-m", "goblin_ring.server", "--help"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--zset-implementation" in done.stdout and "packed" in done.stdout


def replay_columns(engines: list[str], socket_dir: Path, packed: bool) -> list[ReplayColumn]:
    out = []
    for engine in engines:
        sock = ("--unixsocket", str(socket_dir / f"{engine}.sock"))
        if engine in ("redis", "valkey"):
            out.append(ReplayColumn(engine, feed="redis-cli", extra=sock))
        elif engine == "goblin-resp":
            out.append(ReplayColumn(engine, feed="redis-cli", extra=sock))
            if packed:
                out.append(ReplayColumn(engine, feed="redis-cli", packed=True,
                                        extra=("--unixsocket", str(socket_dir / "goblin-packed.sock"))))
        elif engine == "goblin-ring":
            out.append(ReplayColumn(engine, "call", feed="python"))
            if packed:
                out.append(ReplayColumn(engine, "call", feed="python", packed=True))
        elif engine == "goblin-ring-native":
            out.append(ReplayColumn(engine, feed="native"))
            if packed:
                out.append(ReplayColumn(engine, feed="native", packed=True))
    return out


def _feed_redis_cli(column: ReplayColumn, stream: Path, client_core: int | None) -> float:
    sock = column.extra[column.extra.index("--unixsocket") + 1]
    argv = pinned(["redis-cli", "-s", sock], client_core) if client_core is not None else ["redis-cli", "-s", sock]
    with open(stream, "rb") as source:
        start = time.perf_counter()
        done = subprocess.run(argv, stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=3600)
        elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"redis-cli exited {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}")
    return elapsed


def _feed_python(session, key: bytes, members: list[bytes]) -> float:
    zincrby = session.ring.zincrby
    start = time.perf_counter()
    for member in members:
        zincrby(key, 1, member)
    return time.perf_counter() - start


def _feed_native(session, key: bytes, members: list[bytes]) -> float:
    driver, elapsed = session.driver, 0.0
    for start in range(0, len(members), NATIVE_CHUNK):
        cycle = [[("ZINCRBY", key, b"1", m)] for m in members[start:start + NATIVE_CHUNK]]
        run = driver.run(cycle, 0, len(cycle), 1)
        if run.errors:
            raise RuntimeError(f"server replied: {run.first_error}")
        elapsed += run.elapsed_s
    return elapsed


def _final_state(session, key: bytes, generator: Any) -> dict:
    pairs = session.admin.zrange(key, 0, -1, withscores=True)
    scores = [score for _, score in pairs]
    return {"members": len(pairs), "score_sum": int(round(sum(scores))),
            "max_score": int(max(scores, default=0)), "digest": generator.state_digest(pairs)}


def zset_replay_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    out: dict[str, Any] = {"scenario": "zset-replay", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [], "versions": {}, "load": [], "extra_lines": []}
    generator = load_generator()
    if generator is None:
        for engine in engines:
            out["rows"].append(_na("zset-replay", Column(engine), OPERATION,
                                   "bench/zset_replay.py not found (run from a source checkout)"))
        out["targets"] = []
        return out
    count = method.replay_count
    progress(f"zset-replay: generating {count} commands")
    ids = generator.page_ids(count)
    members = generator.members(ids)
    expected = generator.expected_state(ids)
    key = generator.KEY
    out["notes"].append(f"stream: {count} ZINCRBY {key.decode()} 1 <page id>, seed {generator.SEED}; expected "
                        + ", ".join(f"{k} {v}" for k, v in expected.items()))
    packed = any(e.startswith("goblin") for e in engines) and packed_supported()
    if not packed:
        out["notes"].append("no packed lanes: this goblin server has no --zset-implementation packed")
    leftovers: list[str] = []
    figures: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="gzr-") as scratch:
        scratch_dir = Path(scratch)
        stream = scratch_dir / "stream.txt"
        if any(e in ("redis", "valkey", "goblin-resp") for e in engines):
            generator.write_stream(ids, str(stream), key)
        for column in replay_columns(engines, scratch_dir, packed):
            out["columns"].append(column.name)
            why = unavailable(column.engine)
            if column.feed == "redis-cli" and not shutil.which("redis-cli"):
                why = why or "redis-cli is not installed (apt-get install redis-tools)"
            if why:
                out["rows"].append(_na("zset-replay", column, OPERATION, why))
                continue
            progress(f"zset-replay {column.name}: replaying {count} commands")
            with open_session(column, method.server_core, leftovers, out["load"]) as session:
                out["versions"][column.engine] = session.version
                try:
                    if column.feed == "redis-cli":
                        elapsed = _feed_redis_cli(column, stream, method.client_core)
                    elif column.feed == "python":
                        elapsed = _feed_python(session, key, members)
                    else:
                        elapsed = _feed_native(session, key, members)
                except (RuntimeError, subprocess.SubprocessError) as error:
                    out["rows"].append(_na("zset-replay", column, OPERATION, str(error)))
                    continue
                rss = session.rss()
                state = _final_state(session, key, generator)
                encoding = session.admin.execute_command("OBJECT", "ENCODING", key)
            rate = count / elapsed
            out["rows"].append({"scenario": "zset-replay", "engine": column.engine, "mode": column.mode,
                                "column": column.name, "operation": OPERATION, "status": "ok", "ops_per_s": rate,
                                "feed_s": elapsed, "final_rss": rss, "state": state,
                                "encoding": encoding.decode() if isinstance(encoding, bytes) else str(encoding),
                                "tool": column.feed})
            figures.append([column.name, f"{elapsed:.2f}", f"{rate:,.0f}", f"{rss / 2 ** 20:.1f}",
                            str(state["members"]), str(state["score_sum"]), str(state["max_score"]), state["digest"],
                            out["rows"][-1]["encoding"]])
            if column.packed:
                out["checks"].append({"column": column.name, "check": "the set is packed at the end",
                                      "ok": out["rows"][-1]["encoding"] == "packed",
                                      "detail": f"OBJECT ENCODING {out['rows'][-1]['encoding']}"})
            out["checks"].append({"column": column.name, "check": "final state as the stream makes it",
                                  "ok": state == expected,
                                  "detail": ", ".join(f"{k} {v}" for k, v in state.items())})
    out["extra_lines"] = ["", "Per lane: feed seconds, commands/s, final RSS (MiB, less shared memory) and the "
                          "final state read back over RESP.", "",
                          "| lane | feed s | commands/s | RSS MiB | members | score sum | max | digest | encoding |",
                          "|---|---|---|---|---|---|---|---|---|"]
    out["extra_lines"] += ["| " + " | ".join(cells) + " |" for cells in figures]
    digests = {r["column"]: r["state"]["digest"] for r in out["rows"] if r.get("status") == "ok"}
    out["checks"].append({"column": "all", "check": "final state equal across lanes",
                          "ok": len(set(digests.values())) <= 1,
                          "detail": ", ".join(f"{k} {v}" for k, v in digests.items()) or "no lane ran"})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    out["targets"] = zset_replay_targets(out)
    progress.done()
    return out


def zset_replay_targets(result: dict) -> list[dict]:
    """The replay's targets, measured in this run."""
    rate = {r["column"]: r["ops_per_s"] for r in result["rows"] if r.get("status") == "ok"}
    redis = rate.get("redis")

    def against(column: str, base: float | None) -> float | None:
        return rate[column] / base if column in rate and base else None

    out = []
    r = against("goblin-resp", redis)
    out.append({"target": "goblin standard over the Unix socket (redis-cli) >= 1.0x redis's commands/s",
                "ratio": r, "met": r is not None and r >= 1.0})
    r = against("goblin-ring call", redis)
    out.append({"target": "goblin over the ring (Python, one call per command) >= 5x redis's commands/s",
                "ratio": r, "met": r is not None and r >= 5})
    for standard in ("goblin-resp", "goblin-ring call", "goblin-ring-native"):
        engine, _, mode = standard.partition(" ")
        packed_name = f"{engine} packed" + (f" {mode}" if mode else "")
        if packed_name in rate or packed_name in result["columns"]:
            r = against(packed_name, rate.get(standard))
            out.append({"target": f"{packed_name} no slower than 1.5x {standard} (packed / standard rate >= 0.67)",
                        "ratio": r, "met": r is not None and r >= 1 / 1.5})
    return out
