"""drivers.py — the clients that put load on a server, one per way of talking to it.

A workload is a list of commands, each a tuple (NAME, *args) with bytes, str or int args in
RESP order. Every driver turns the same tuples into its own form *before* the clock starts,
then sends `count` logical operations (a logical operation is one or two commands) taken
cyclically from a cycle, starting at `offset`, and returns a Run: elapsed seconds, replies
and error replies.

    RespPipeline   raw socket, hiredis reader: windows of `depth` commands, send all, read all
    RingDriver     goblin_ring.RingClient: per call (one in flight), pipeline(), or batch helpers
    NativeDriver   native/client/bench_load.c's gr_load_run: a C loop, a sliding window of `depth`
    redis_benchmark  the Debian tool for fixed rows, as the reference measured them
"""

from __future__ import annotations

import csv
import io
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Any, Sequence

from .. import _native
from ..client.resp import pack_command
from ..errors import ResponseError

try:
    import hiredis
except ImportError:  # pragma: no cover - hiredis is in the bench extra
    hiredis = None

Command = tuple
Cycle = Sequence[Sequence[Command]]     # logical operations, each a list of commands


@dataclass
class Run:
    elapsed_s: float
    replies: int
    errors: int = 0
    first_error: str = ""


def resp_bytes(arg: Any) -> bytes:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, int):
        return b"%d" % arg
    return str(arg).encode()


def commands_of(cycle: Cycle, offset: int, count: int) -> list[Command]:
    size = len(cycle)
    out: list[Command] = []
    for k in range(offset, offset + count):
        out.extend(cycle[k % size])
    return out


class RespPipeline:
    """Windows of `depth` commands over one TCP connection: send a window, read its replies."""

    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        self.sock.close()

    def _reader(self):
        if hiredis is not None:
            return hiredis.Reader()
        from ..client.resp import _PythonReader
        return _PythonReader()

    def run(self, cycle: Cycle, offset: int, count: int, depth: int) -> Run:
        commands = commands_of(cycle, offset, count)
        windows = [(b"".join(pack_command(tuple(resp_bytes(a) for a in c)) for c in commands[i:i + depth]),
                    len(commands[i:i + depth])) for i in range(0, len(commands), depth)]
        reader, sock = self._reader(), self.sock
        recv, feed, gets = sock.recv, reader.feed, reader.gets
        error_type = hiredis.ReplyError if hiredis is not None else Exception
        errors, first_error, replies = 0, "", 0
        start = time.perf_counter()
        for blob, expected in windows:
            sock.sendall(blob)
            got = 0
            while got < expected:
                data = recv(1 << 20)
                if not data:
                    raise ConnectionError("the server closed the connection")
                feed(data)
                reply = gets()
                while reply is not False:
                    got += 1
                    if isinstance(reply, error_type):
                        errors += 1
                        first_error = first_error or str(reply)
                    reply = gets()
            replies += got
        return Run(time.perf_counter() - start, replies, errors, first_error)


def _lmpop_call(target: Any, blocking: bool, args: list) -> tuple:
    """LMPOP numkeys key.. dir [COUNT n] / BLMPOP timeout numkeys ... as the typed methods take them."""
    timeout = args.pop(0) if blocking else None
    numkeys = int(args[0])
    keys, direction, rest = args[1:1 + numkeys], args[1 + numkeys], args[2 + numkeys:]
    count = int(rest[1]) if rest else 1
    method = target.blmpop if blocking else target.lmpop
    lead = (timeout, numkeys) if blocking else (numkeys,)
    return (lambda *a: method(*a, direction=direction, count=count)), (*lead, *keys)


def _geosearch_call(target: Any, args: list) -> Callable:
    """GEOSEARCH key FROMLONLAT x y (BYRADIUS r unit | BYBOX w h unit) [ASC|DESC] [WITHDIST] as a
    redis-py geosearch() call."""
    key, _from, x, y, by, *rest = args
    kwargs: dict = {"longitude": x, "latitude": y}
    if str(by).upper() == "BYRADIUS":
        kwargs.update(radius=rest[0], unit=rest[1])
        rest = rest[2:]
    else:
        kwargs.update(width=rest[0], height=rest[1], unit=rest[2])
        rest = rest[3:]
    for word in rest:
        word = str(word).upper()
        if word in ("ASC", "DESC"):
            kwargs["sort"] = word
        else:
            kwargs[word.lower()] = True
    return lambda: target.geosearch(key, **kwargs)


def _method_call(target: Any, command: Command) -> tuple:
    """The typed client method for a RESP-ordered command tuple, and its arguments."""
    name, *args = command
    if name in ("BLPOP", "BRPOP"):
        return getattr(target, name.lower()), (list(args[:-1]), args[-1])
    if name == "BLMOVE":                 # BLMOVE src dst from to timeout -> blmove(src, dst, timeout, from, to)
        return target.blmove, (args[0], args[1], args[4], args[2], args[3])
    if name in ("LMPOP", "BLMPOP"):
        return _lmpop_call(target, name == "BLMPOP", list(args))
    if name == "HSET" and len(args) > 3:   # HSET key f v f v ... -> hset(key, items=[...])
        return (lambda key, *items: target.hset(key, items=list(items))), tuple(args)
    if name == "ZADD":                     # ZADD key s m [s m ...] -> zadd(key, {m: s, ...})
        return (lambda key, *pairs: target.zadd(key, dict(zip(pairs[1::2], pairs[::2])))), tuple(args)
    if name in ("ZRANGEBYSCORE", "ZREVRANGEBYSCORE") and len(args) == 6:   # ... LIMIT offset count
        method = getattr(target, name.lower())
        return (lambda key, low, high, _limit, offset, count: method(key, low, high, offset, count)), tuple(args)
    if name == "GEOADD":                   # GEOADD key lon lat m ... -> geoadd(key, [lon, lat, m, ...])
        return (lambda key, *values: target.geoadd(key, list(values))), tuple(args)
    if name == "GEODIST" and len(args) == 4:   # GEODIST key a b unit -> geodist(key, a, b, unit=...)
        return (lambda key, a, b, unit: target.geodist(key, a, b, unit=unit)), tuple(args)
    if name == "GEOSEARCH":                # the scenario's forms: FROMLONLAT x y BYRADIUS r u ASC / BYBOX w h u WITHDIST
        return _geosearch_call(target, list(args)), ()
    if name == "XADD" and len(args) >= 4:   # XADD key id f v ... -> xadd(key, {f: v, ...}, id=id)
        return (lambda key, entry_id, *pairs: target.xadd(key, dict(zip(pairs[::2], pairs[1::2])), id=entry_id)), \
            tuple(args)
    if name in ("XRANGE", "XREVRANGE") and len(args) == 5:   # ... COUNT n -> xrange(key, a, b, count=n)
        method = getattr(target, name.lower())
        return (lambda key, a, b, _count_word, count: method(key, a, b, count=count)), tuple(args)
    if name == "XREADGROUP" and len(args) == 8:   # GROUP g c COUNT n STREAMS key id
        return (lambda _g, group, consumer, _c, count, _s, key, entry_id:
                target.xreadgroup(group, consumer, {key: entry_id}, count=count)), tuple(args)
    if name == "HSCAN":                    # HSCAN key cursor COUNT n -> hscan(key, cursor, count=n)
        return (lambda key, cursor, _count_word, count: target.hscan(key, cursor, count=count)), tuple(args)
    return getattr(target, name.lower()), tuple(args)


def _run_pipelined(pipe: Any, commands: list, depth: int) -> Run:
    """commands through a pipeline (RingClient's or redis-py's), depth per execute; the methods
    are looked up before the clock starts."""
    calls = [_method_call(pipe, c) for c in commands]
    windows = [calls[i:i + depth] for i in range(0, len(calls), depth)]
    errors, first_error, replies = 0, "", 0
    execute = pipe.execute
    start = time.perf_counter()
    for window in windows:
        for method, args in window:
            method(*args)
        results = execute(raise_on_error=False)
        replies += len(results)
        for r in results:
            if isinstance(r, Exception):
                errors += 1
                first_error = first_error or str(r)
    return Run(time.perf_counter() - start, replies, errors, first_error)


class RingDriver:
    """goblin_ring.RingClient in one of three modes: call, pipeline, batch."""

    def __init__(self, client, mode: str):
        self.client, self.mode = client, mode

    def supports(self, cycle: Cycle) -> str:
        """'' if this mode can run the cycle, else the reason it cannot."""
        if self.mode != "batch":
            return ""
        names = {c[0] for op in cycle for c in op}
        if names <= {"RPUSH"} or names <= {"LINDEX"}:
            return ""
        return f"no batch helper for {'+'.join(sorted(names))} (batches: rpush_many, lindex_many)"

    def run(self, cycle: Cycle, offset: int, count: int, depth: int) -> Run:
        commands = commands_of(cycle, offset, count)
        if self.mode == "call":
            calls = [_method_call(self.client, c) for c in commands]
            errors, first_error = 0, ""
            start = time.perf_counter()
            for method, args in calls:
                try:                      # free in 3.11 unless raised
                    method(*args)
                except ResponseError as error:
                    errors += 1
                    first_error = first_error or str(error)
            return Run(time.perf_counter() - start, len(calls), errors, first_error)
        if self.mode == "pipeline":
            return _run_pipelined(self.client.pipeline(), commands, depth)
        # batch: one C call for the whole run
        names = {c[0] for c in commands}
        key = commands[0][1]
        if names == {"RPUSH"}:
            import numpy

            values = numpy.array([v for c in commands for v in c[2:]])
            start = time.perf_counter()
            self.client.rpush_many(key, values, per_message=len(commands[0]) - 2)
            return Run(time.perf_counter() - start, len(commands))
        import numpy

        indexes = numpy.array([c[2] for c in commands], dtype=numpy.int64)
        start = time.perf_counter()
        self.client.lindex_many(key, indexes)
        return Run(time.perf_counter() - start, len(commands))


class NativeDriver:
    """The C load generator over a RingClient's session: each command's argv built once into a
    typed request by gr_request_from_argv (the function the RESP path and RingClient use, so
    the bench has no argv -> request mapping of its own), then gr_load_run sends them with a
    sliding window of `depth` and counts the replies. A command with no typed form travels as
    a CommandRequest."""

    def __init__(self, ring_client):
        self.core = ring_client._live()
        self._cache: dict[int, tuple] = {}

    def supports(self, cycle: Cycle) -> str:
        return ""

    def _build(self, cycle: Cycle) -> tuple:
        """(requests array, commands per op, keep-alive) for a cycle, cached by identity."""
        cached = self._cache.get(id(cycle))
        if cached is not None and cached[0] is cycle:
            return cached[1:]
        ffi, lib = _native.ffi, _native.lib
        per_op = len(cycle[0])
        if any(len(op) != per_op for op in cycle):
            raise ValueError("every operation of a cycle must have the same number of commands")
        argvs = [[resp_bytes(a) for a in command] for op in cycle for command in op]
        blob = b"".join(arg for argv in argvs for arg in argv)
        data = ffi.from_buffer("uint8_t[]", blob) if blob else ffi.new("uint8_t[]", 1)
        base = ffi.cast("const uint8_t *", data)
        total = sum(len(argv) for argv in argvs)
        pointers = ffi.new("const uint8_t *[]", total)
        lengths = ffi.new("size_t[]", total)
        items = ffi.new("gr_bytes_t[]", total)
        requests = ffi.new("gr_request_t[]", len(argvs))
        error = ffi.new("gr_build_error_t *")
        at = k = 0
        for i, argv in enumerate(argvs):
            first = k
            for arg in argv:
                pointers[k], lengths[k] = base + at, len(arg)
                at, k = at + len(arg), k + 1
            if lib.gr_request_from_argv(len(argv), pointers + first, lengths + first, requests + i, items + first,
                                        len(argv), error) < 0:
                raise ValueError(f"{argv[0].decode(errors='replace')}: {ffi.string(error.text).decode()}")
        built = (requests, per_op, (data, pointers, lengths, items, blob))
        self._cache = {id(cycle): (cycle, *built)}
        return built

    def run(self, cycle: Cycle, offset: int, count: int, depth: int, latencies=None) -> Run:
        ffi, lib = _native.ffi, _native.lib
        requests, per_op, _keep = self._build(cycle)
        stats = ffi.new("gr_load_stats_t *")
        pointer = ffi.NULL if latencies is None else ffi.cast("int64_t *", ffi.from_buffer(latencies))
        self.core.check(lib.gr_load_run(self.core.pointer, requests, len(requests), offset * per_op,
                                        count * per_op, depth, pointer, stats))
        first_error = f"error code {stats.first_error_code}" if stats.errors else ""
        return Run(stats.elapsed_ns / 1e9, stats.replies, stats.errors, first_error)


def redis_benchmark_available() -> bool:
    return shutil.which("redis-benchmark") is not None


def redis_benchmark(port: int, n: int, depth: int, command: Command, client_core: int | None,
                    clients: int = 1) -> float:
    """Requests per second of one fixed command, as redis-benchmark -c clients -P depth reports it."""
    return redis_benchmark_figures(port, n, depth, command, client_core, clients)["ops_per_s"]


def redis_benchmark_figures(port: int, n: int, depth: int, command: Command, client_core: int | None,
                            clients: int = 1) -> dict:
    """redis-benchmark -c clients -P depth on one fixed command: ops_per_s, and p50_us / p99_us
    as the tool reports them (its CSV gives milliseconds)."""
    argv = ["redis-benchmark", "-p", str(port), "-n", str(n), "-P", str(depth), "-c", str(clients), "--csv",
            *(resp_bytes(a).decode() for a in command)]
    if client_core is not None and shutil.which("taskset"):
        argv = ["taskset", "-c", str(client_core), *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"redis-benchmark exited {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-300:] or 'no output'}")
    rows = [r for r in csv.reader(io.StringIO(done.stdout)) if r]
    header, last = rows[0], rows[-1]
    figures = {"ops_per_s": float(last[1])}
    for name, key in (("p50_latency_ms", "p50_us"), ("p99_latency_ms", "p99_us")):
        if name in header and len(last) == len(header):
            figures[key] = float(last[header.index(name)]) * 1000.0
    return figures


# ---- Python clients a service would run: redis-py, redis.asyncio, goblin's asyncio client ----

ORDERED_LIST_WRITES = frozenset(("RPUSH", "LPUSH", "LPOP", "RPOP", "LMOVE", "RPOPLPUSH", "LINSERT", "LREM"))


class RedisPyDriver:
    """A redis.Redis (over a Unix socket to redis-server, or over goblin_ring.redispy's
    RingConnectionPool): call (one in flight, its own method per command) or pipeline
    (pipeline(transaction=False), windows of `depth`), as RingDriver's two modes."""

    def __init__(self, client, mode: str):
        from redis.exceptions import ResponseError as RedisResponseError
        self.client, self.mode, self.errors = client, mode, RedisResponseError
        client.ping()                      # connected before any clock starts, as the other drivers are

    def supports(self, cycle: Cycle) -> str:
        return ""

    def run(self, cycle: Cycle, offset: int, count: int, depth: int) -> Run:
        commands = commands_of(cycle, offset, count)
        errors, first_error = 0, ""
        if self.mode == "call":
            calls = [_method_call(self.client, c) for c in commands]
            start = time.perf_counter()
            for method, args in calls:
                try:
                    method(*args)
                except self.errors as error:
                    errors += 1
                    first_error = first_error or str(error)
            return Run(time.perf_counter() - start, len(calls), errors, first_error)
        return _run_pipelined(self.client.pipeline(transaction=False), commands, depth)

    def close(self) -> None:
        self.client.close()
        self.client.connection_pool.disconnect()


class AsyncDriver:
    """An asyncio client (redis.asyncio.Redis over a Unix socket, or goblin_ring.asyncio's
    RingClient) driven from an event loop of the driver's own: call (one task, one request in
    flight) or tasks (TASKS concurrent tasks, the operations dealt out among them, each task
    one in flight). Tasks do not keep the order of operations across tasks, so a cycle of list
    writes whose order the scenario checks is refused in that mode."""

    TASKS = 100

    def __init__(self, make_client, mode: str, errors: tuple):
        import asyncio
        self.mode, self.errors = mode, errors
        self.loop = asyncio.new_event_loop()

        async def made():
            return make_client()

        self.client = self.loop.run_until_complete(made())
        # connected before any clock starts: as many connections as the mode keeps busy
        tasks = self.TASKS if mode == "tasks" else 1

        async def connect() -> None:
            await asyncio.gather(*(self.client.ping() for _ in range(tasks)))

        self.loop.run_until_complete(connect())

    def supports(self, cycle: Cycle) -> str:
        if self.mode != "tasks" or len(cycle) <= 1:
            return ""
        names = {c[0] for op in cycle for c in op}
        if names & ORDERED_LIST_WRITES:
            return (f"{self.TASKS} tasks do not keep the order of {'+'.join(sorted(names & ORDERED_LIST_WRITES))} "
                    f"across operations, which this row's check depends on")
        return ""

    def run(self, cycle: Cycle, offset: int, count: int, depth: int) -> Run:
        import asyncio
        size = len(cycle)
        operations = [[_method_call(self.client, c) for c in cycle[k % size]] for k in range(offset, offset + count)]
        tasks = self.TASKS if self.mode == "tasks" else 1
        tally = {"replies": 0, "errors": 0, "first_error": ""}
        errors = self.errors

        async def worker(share: list) -> None:
            replies = 0
            for operation in share:
                for method, args in operation:
                    try:
                        await method(*args)
                    except errors as error:
                        tally["errors"] += 1
                        tally["first_error"] = tally["first_error"] or str(error)
                    replies += 1
            tally["replies"] += replies

        async def all_tasks() -> float:
            start = time.perf_counter()
            await asyncio.gather(*(worker(operations[i::tasks]) for i in range(tasks)))
            return time.perf_counter() - start

        elapsed = self.loop.run_until_complete(all_tasks())
        return Run(elapsed, tally["replies"], tally["errors"], tally["first_error"])

    def close(self) -> None:
        close = getattr(self.client, "aclose", None) or self.client.close
        self.loop.run_until_complete(close())
        self.loop.close()
