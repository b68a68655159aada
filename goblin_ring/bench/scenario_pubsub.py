"""scenario_pubsub.py — the `pubsub` scenario: publisher -> subscriber on every
engine side by side.

Latency (microseconds, p50 ... p99.99): one message in flight — the publisher sends PUBLISH
without waiting, the clock stops when the subscriber holds the message, then PUBLISH's reply
is read. goblin-ring python: RingClient sends, RingPubSub.get_message(timeout=None) takes it;
goblin-ring-native: the same in one C loop (gr_client_pubsub_latency_loop); goblin-resp,
redis, valkey: two raw sockets from Python (sendall, recv until the whole message is in),
one method for all three.

Throughput (messages delivered per second, summed over subscribers): 1 and 8 subscribers,
16- and 1024-byte payloads, the publisher keeping a window of -P PUBLISHes in flight, one
thread round-robin over publisher and subscribers. Subscribers: goblin-ring python drains
with RingPubSub.get_messages (one C call per batch), goblin-ring-native with
gr_client_pubsub_take_sequenced (C, no Python per message); the RESP columns read raw bytes
(recv into a buffer, framed afterwards), so that those rows time the server's fan-out. The
"Python subscriber" rows time what a Python program sees: RingPubSub.get_message per message
on the ring, redis-py's PubSub.get_message per message on the RESP columns.

Checks: every payload starts with its sequence number (10 digits); every subscriber of every
row must have received every message, in order (the native reader checks in C, the others
after the clock stops).
"""

from __future__ import annotations

import socket
import statistics
import time
from typing import Any, Callable

import numpy

from .engines import Column, columns, open_session, unavailable
from .scenarios import Method, _latency_row, _na

CHANNEL = b"bench:pubsub"
SEQUENCE_DIGITS = 10


def payload(sequence: int, size: int) -> bytes:
    head = b"%0*d" % (SEQUENCE_DIGITS, sequence)
    return head + b"x" * (size - len(head))


def _resp_command(*args: bytes) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def _message_frame(data: bytes) -> bytes:
    """The RESP2 bytes of one message a SUBSCRIBE'd connection receives."""
    return b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(CHANNEL), CHANNEL, len(data), data)


# ---------------------------------------------------------------- the RESP side (raw sockets)

class RawSubscriber:
    """A RESP connection subscribed to CHANNEL, read as raw bytes."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(_resp_command(b"SUBSCRIBE", CHANNEL))
        confirmation = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(CHANNEL), CHANNEL)
        self.buffer = bytearray()
        while len(self.buffer) < len(confirmation):
            self.buffer += self.sock.recv(65536)
        assert bytes(self.buffer[:len(confirmation)]) == confirmation, bytes(self.buffer[:80])
        del self.buffer[:len(confirmation)]
        self.sock.setblocking(False)

    def drain(self) -> None:
        while True:
            try:
                chunk = self.sock.recv(1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                raise ConnectionError("the server closed the subscriber")
            self.buffer += chunk

    def wait_for(self, length: int) -> None:
        self.sock.setblocking(True)
        while len(self.buffer) < length:
            self.buffer += self.sock.recv(1 << 20)
        self.sock.setblocking(False)

    def close(self) -> None:
        self.sock.close()


class RawPublisher:
    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = bytearray()

    def send(self, frames: bytes) -> None:
        self.sock.sendall(frames)

    def read_replies(self, count: int) -> None:
        """count integer replies (':n\\r\\n')."""
        while self.pending.count(b"\r\n") < count:
            self.pending += self.sock.recv(65536)
        cut = 0
        for _ in range(count):
            cut = self.pending.index(b"\r\n", cut) + 2
        del self.pending[:cut]

    def close(self) -> None:
        self.sock.close()


def _check_frames(buffer: bytes, messages: int, size: int) -> tuple[bool, str]:
    expected = b"".join(_message_frame(payload(i, size)) for i in range(messages))
    if buffer == expected:
        return True, f"{messages} messages in order"
    at = next((i for i in range(min(len(buffer), len(expected))) if buffer[i] != expected[i]), None)
    return False, f"{len(buffer)} bytes, expected {len(expected)}; first difference at byte {at}"


# ---------------------------------------------------------------- rows

def _latency(column: Column, session, n: int, size: int) -> dict:
    operation = f"PUBLISH -> subscriber, one in flight, {size} B"
    latencies = numpy.empty(n, dtype=numpy.int64)
    if column.over_ring:
        publisher = session.ring
        pubsub = publisher.pubsub()
        pubsub.subscribe(CHANNEL)
        assert pubsub.get_message(timeout=10)["type"] == "subscribe"
        data = payload(0, size)
        if column.native:
            from .. import _native
            status = _native.lib.gr_client_pubsub_latency_loop(
                publisher._live().pointer, pubsub.connection._live().pointer, CHANNEL, len(CHANNEL), data,
                len(data), n, _native.ffi.cast("int64_t *", latencies.ctypes.data))
            got = n if status == 0 else 0
        else:
            core = publisher._live()
            argv = (b"PUBLISH", CHANNEL, data)
            got = 0
            clock = time.perf_counter_ns
            for i in range(n):
                start = clock()
                core.send_argv(argv)
                message = pubsub.get_message(timeout=None)
                latencies[i] = clock() - start
                core.receive()
                got += message is not None and message["data"] == data
        pubsub.close()
    else:
        subscriber = RawSubscriber(session.server.port)
        publisher = RawPublisher(session.server.port)
        data = payload(0, size)
        frame = _resp_command(b"PUBLISH", CHANNEL, data)
        message = _message_frame(data)
        sock, buffer = subscriber.sock, subscriber.buffer
        sock.setblocking(True)
        got = 0
        clock = time.perf_counter_ns
        for i in range(n):
            start = clock()
            publisher.send(frame)
            while len(buffer) < len(message):
                buffer += sock.recv(65536)
            latencies[i] = clock() - start
            got += buffer[:len(message)] == message
            del buffer[:len(message)]
            publisher.read_replies(1)
        subscriber.close()
        publisher.close()
    row = _latency_row("pubsub", column, operation, latencies, got, n)
    row["kind"] = "latency"
    return row


def _ring_subscribers(publisher, count: int) -> list:
    subs = []
    for _ in range(count):
        pubsub = publisher.pubsub()
        pubsub.subscribe(CHANNEL)
        assert pubsub.get_message(timeout=10)["type"] == "subscribe"
        subs.append(pubsub)
    return subs


def _redis_py_subscribers(port: int, count: int) -> tuple[list, list]:
    import redis as redis_py
    clients = [redis_py.Redis(port=port) for _ in range(count)]
    subs = [c.pubsub() for c in clients]
    for pubsub in subs:
        pubsub.subscribe(CHANNEL)
        assert pubsub.get_message(timeout=10)["type"] == "subscribe"
    return clients, subs


def _ring_publish(publisher, size: int, first: int, count: int, window: int) -> None:
    """count PUBLISHes in one C call (gr_client_pubsub_publish_many), window in flight."""
    from .. import _native
    status = _native.lib.gr_client_pubsub_publish_many(publisher._live().pointer, CHANNEL, len(CHANNEL), size,
                                                       first, count, window)
    publisher._live().check(status)


def _resp_publish(publisher: RawPublisher, commands: list[bytes], first: int, count: int) -> None:
    publisher.send(b"".join(commands[first:first + count]))
    publisher.read_replies(count)


def _fanout(column: Column, session, messages: int, subscribers: int, size: int, window: int):
    """Publisher and subscribers at once (one thread, round robin): the server's fan-out."""
    frames = [payload(i, size) for i in range(messages)]
    checks: list[tuple[bool, str]] = []
    if column.over_ring:
        from .. import _native
        publisher = session.ring
        subs = _ring_subscribers(publisher, subscribers)
        native = column.native
        expected = [_native.ffi.new("uint64_t *") for _ in subs]
        disorder = [_native.ffi.new("uint64_t *") for _ in subs]
        received: list[list] = [[] for _ in subs]
        counts = [0] * subscribers
        take = _native.lib.gr_client_pubsub_take_sequenced
        pointers = [s.connection._live().pointer for s in subs]
        start = time.perf_counter()
        sent = 0
        while min(counts) < messages:
            if sent < messages:
                chunk = min(window, messages - sent)
                _ring_publish(publisher, size, sent, chunk, window)
                sent += chunk
            wait = 0 if sent < messages else 10
            for k, pubsub in enumerate(subs):
                if counts[k] == messages:
                    continue
                if native:
                    got = take(pointers[k], 1 << 20, int(wait * 1e9), expected[k], disorder[k])
                    if got < 0:
                        raise ConnectionError(f"subscriber {k}: client status {-got}")
                    counts[k] += got
                else:
                    batch = pubsub.get_messages(4096, timeout=wait)
                    received[k] += [m["data"] for m in batch]
                    counts[k] += len(batch)
        elapsed = time.perf_counter() - start
        for k in range(subscribers):
            if native:
                ok = expected[k][0] == messages and disorder[k][0] == 0
                checks.append((ok, f"subscriber {k}: {expected[k][0]} messages, {disorder[k][0]} out of order"))
            else:
                ok = received[k] == frames
                checks.append((ok, f"subscriber {k}: {len(received[k])} messages" + ("" if ok else ", NOT in order")))
        for pubsub in subs:
            pubsub.close()
    else:
        publisher = RawPublisher(session.server.port)
        subs = [RawSubscriber(session.server.port) for _ in range(subscribers)]
        want = len(_message_frame(frames[0])) * messages
        commands = [_resp_command(b"PUBLISH", CHANNEL, f) for f in frames]
        start = time.perf_counter()
        sent = 0
        while sent < messages:
            chunk = min(window, messages - sent)
            _resp_publish(publisher, commands, sent, chunk)
            sent += chunk
            for sub in subs:
                sub.drain()
        for sub in subs:
            sub.wait_for(want)
        elapsed = time.perf_counter() - start
        for k, sub in enumerate(subs):
            ok, detail = _check_frames(bytes(sub.buffer), messages, size)
            checks.append((ok, f"subscriber {k}: {detail}"))
            sub.close()
        publisher.close()
    return messages * subscribers / elapsed, checks


def _python_drain(column: Column, session, messages: int, subscribers: int, size: int, window: int,
                  batch: bool):
    """Every message published first (held in the subscribers' rings / output buffers), then
    the clock times the Python subscribers draining them: RingPubSub.get_message (or
    get_messages(1024) when batch) on the ring, redis-py's PubSub.get_message on RESP."""
    frames = [payload(i, size) for i in range(messages)]
    checks: list[tuple[bool, str]] = []
    received: list[list] = [[] for _ in range(subscribers)]
    if column.over_ring:
        publisher = session.ring
        subs = _ring_subscribers(publisher, subscribers)
        _ring_publish(publisher, size, 0, messages, window)
        start = time.perf_counter()
        for k, pubsub in enumerate(subs):
            out = received[k]
            if batch:
                while len(out) < messages:
                    out += [m["data"] for m in pubsub.get_messages(1024, timeout=10)]
            else:
                get = pubsub.get_message
                for _ in range(messages):
                    out.append(get(timeout=10)["data"])
        elapsed = time.perf_counter() - start
        for pubsub in subs:
            pubsub.close()
    else:
        clients, subs = _redis_py_subscribers(session.server.port, subscribers)
        publisher = RawPublisher(session.server.port)
        commands = [_resp_command(b"PUBLISH", CHANNEL, f) for f in frames]
        for first in range(0, messages, window):
            _resp_publish(publisher, commands, first, min(window, messages - first))
        start = time.perf_counter()
        for k, pubsub in enumerate(subs):
            out = received[k]
            get = pubsub.get_message
            for _ in range(messages):
                out.append(get(timeout=10)["data"])
        elapsed = time.perf_counter() - start
        for pubsub, client in zip(subs, clients):
            pubsub.close()
            client.close()
        publisher.close()
    for k in range(subscribers):
        ok = received[k] == frames
        checks.append((ok, f"subscriber {k}: {len(received[k])} messages" + ("" if ok else ", NOT in order")))
    return messages * subscribers / elapsed, checks


def _label(kind: str, size: int, subscribers: int) -> str:
    if kind == "latency":
        return f"PUBLISH -> subscriber, one in flight, {size} B"
    who = {"throughput": "throughput", "python get_message": "Python subscriber, get_message each",
           "python get_messages": "Python subscriber, get_messages(1024)"}[kind]
    return f"{who}, {subscribers} subscriber{'s' if subscribers > 1 else ''}, {size} B (msgs/s delivered)"


def pubsub_scenario(method: Method, engines: list[str], progress: Callable) -> dict:
    n_latency = 2000 if method.quick else 20000
    messages = {16: 2000 if method.quick else 100_000, 1024: 1000 if method.quick else 20_000}
    out: dict[str, Any] = {"scenario": "pubsub", "columns": [], "rows": [], "memory": [], "checks": [],
                           "notes": [f"latency: {n_latency} messages one in flight; throughput: "
                                     f"{messages[16]} messages of 16 B, {messages[1024]} of 1024 B, window {method.pipeline}"],
                           "versions": {}, "load": []}
    leftovers: list[str] = []
    plan = [("latency", 16, 1), ("throughput", 16, 1), ("throughput", 16, 8), ("throughput", 1024, 1),
            ("throughput", 1024, 8), ("python get_message", 16, 1), ("python get_messages", 16, 1)]
    for column in columns([e for e in engines if e != "goblin-pma"], modes=("python",)):
        out["columns"].append(column.name)
        why = unavailable(column.engine)
        if why:
            out["rows"] += [_na("pubsub", column, _label(kind, size, subs), why) for kind, size, subs in plan]
            continue
        progress(f"pubsub {column.name}: starting the server")
        with open_session(column, method.server_core, leftovers, out["load"]) as session:
            out["versions"][column.engine] = session.version
            for kind, size, subscribers in plan:
                label = _label(kind, size, subscribers)
                if kind.startswith("python") and column.native:
                    continue        # a Python subscriber: goblin-ring python is the ring's column
                if kind == "python get_messages" and not column.over_ring:
                    out["rows"].append(_na("pubsub", column, label, "redis-py has no batch read"))
                    continue
                progress(f"pubsub {column.name}: {label}")
                if kind == "latency":
                    out["rows"].append(_latency(column, session, n_latency, size))
                    continue
                rates, all_checks = [], []
                for _ in range(method.trials):
                    if kind == "throughput":
                        rate, checks = _fanout(column, session, messages[size], subscribers, size, method.pipeline)
                    else:
                        rate, checks = _python_drain(column, session, messages[size], subscribers, size,
                                                     method.pipeline, batch=kind.endswith("messages"))
                    rates.append(rate)
                    all_checks += checks
                out["rows"].append({"scenario": "pubsub", "engine": column.engine, "mode": column.mode,
                                    "column": column.name, "operation": label, "status": "ok",
                                    "ops_per_s": statistics.median(rates), "trials": [round(r, 1) for r in rates],
                                    "kind": kind, "subscribers": subscribers, "messages": messages[size]})
                bad = [detail for ok, detail in all_checks if not ok]
                out["checks"].append({"column": column.name, "check": f"{label}: every subscriber got every "
                                      "message in order", "ok": not bad, "detail": bad[0] if bad else all_checks[0][1]})
    out["checks"].append({"column": "all", "check": "nothing left in /dev/shm", "ok": not leftovers,
                          "detail": ", ".join(leftovers) or "none"})
    out["targets"] = pubsub_targets(out)
    progress.done()
    return out


def _find(result: dict, column: str, prefix: str) -> dict | None:
    return next((r for r in result["rows"] if r["column"] == column and r["operation"].startswith(prefix)
                 and r.get("status") == "ok"), None)


def pubsub_targets(result: dict) -> list[dict]:
    """The pubsub scenario's targets, measured in this run."""
    out = []
    redis_latency = _find(result, "redis", "PUBLISH -> subscriber")
    for column in ("goblin-ring-native", "goblin-ring python"):
        ring = _find(result, column, "PUBLISH -> subscriber")
        r = ring["p50_us"] / redis_latency["p50_us"] if ring and redis_latency else None
        out.append({"target": f"ring -> ring latency p50 <= 1/20 of redis-server's over TCP ({column}; "
                              "'ratio' is goblin / redis, met at <= 0.05)", "ratio": r,
                    "met": r is not None and r <= 0.05})
    redis_py = _find(result, "redis", "Python subscriber, get_message each, 1 subscriber, 16 B")
    for label, what in (("Python subscriber, get_message each", "RingPubSub.get_message each"),
                        ("Python subscriber, get_messages(1024)", "RingPubSub.get_messages(1024), one C call a batch")):
        ring = _find(result, "goblin-ring python", f"{label}, 1 subscriber, 16 B")
        r = ring["ops_per_s"] / redis_py["ops_per_s"] if ring and redis_py else None
        out.append({"target": f"Python ring subscriber msgs/s >= 5x redis-py's PubSub.get_message against "
                              f"redis-server, 16 B ({what})", "ratio": r, "met": r is not None and r >= 5})
    resp = _find(result, "goblin-resp", "throughput, 8 subscribers, 16 B")
    redis8 = _find(result, "redis", "throughput, 8 subscribers, 16 B")
    r = resp["ops_per_s"] / redis8["ops_per_s"] if resp and redis8 else None
    out.append({"target": "8 subscribers, 16 B: goblin RESP msgs/s >= 1.0x redis-server's", "ratio": r,
                "met": r is not None and r >= 1.0})
    return out


def pubsub_markdown(result: dict) -> list[str]:
    """The scenario's tables: latency (microseconds), then throughput (messages/s)."""
    columns = result["columns"]
    rows = {(r["column"], r["operation"]): r for r in result["rows"]}
    operations = list(dict.fromkeys(r["operation"] for r in result["rows"]))
    lines = ["Latency: one message in flight, publisher -> subscriber; microseconds.", "",
             "| operation | percentile | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for operation in (o for o in operations if o.startswith("PUBLISH ->")):
        for key in ("p50_us", "p90_us", "p99_us", "p99.9_us", "p99.99_us"):
            cells = []
            for column in columns:
                row = rows.get((column, operation))
                cells.append(f"{row[key]:.2f}" if row and row.get("status") == "ok" else "n/a")
            lines.append(f"| {operation} | {key[:-3]} | " + " | ".join(cells) + " |")
    lines += ["", "Throughput: messages delivered per second (summed over subscribers), median of trials.", "",
              "| operation | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for operation in (o for o in operations if not o.startswith("PUBLISH ->")):
        cells = []
        for column in columns:
            row = rows.get((column, operation))
            cells.append(f"{row['ops_per_s']:,.0f}" if row and row.get("status") == "ok" else
                         ("n/a" if row else "-"))
        lines.append(f"| {operation} | " + " | ".join(cells) + " |")
    lines += ["", "Targets (measured in this run):", ""]
    for goal in pubsub_targets(result):
        value = "n/a" if goal["ratio"] is None else f"{goal['ratio']:.3f}x"
        lines.append(f"- {'met' if goal['met'] else 'NOT met'}: {goal['target']} — {value}")
    return lines
