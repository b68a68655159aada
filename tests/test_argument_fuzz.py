"""Edge numbers in every numeric argument of every command, against redis-server.

The commands come from the server's own table (COMMAND DOCS, subcommands included): each
command's argv is built from its documented arguments (optional ones included, the first
branch of a one-of, real keys of the type its group works on), then every integer, double
and unix-time position gets each edge value in turn: LLONG_MIN/MAX, 2^63, 2^64, -1, 0, nan,
inf, 1e308, 2^32 and huge counts. Every case runs on goblin over RESP (maxmemory 256mb) and on
redis-server 7 (its commands only), from the same seeded keys, and on goblin over the ring.

What must hold: the server answers every case (no crash, no hang: a reply within the socket
timeout), its peak RSS stays under 1 GiB, and where Redis refuses a number as out of range,
not an integer or not a float, goblin refuses it too. Error texts that differ otherwise are
counted and printed, not failed. GOBLIN_FUZZ_EDGES=all runs every edge value (the default
runs a quicker half of them on the ring pass).

A second pass sends typed ring requests (what RingClient builds from argv) with each numeric
field of gr_request_t set to its extremes: the server takes those fields as they come, with
no builder of its own, so each handler must hold on its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from goblin_ring import ConnectionError, RespClient, ResponseError, RingClient
from goblin_ring import TimeoutError as GoblinTimeout
from servers import GoblinServer, free_port, wait_for_line

EDGES = ["-9223372036854775808", "9223372036854775807", "9223372036854775808", "18446744073709551616",
         "-9223372036854775807", "-1", "0", "nan", "inf", "-inf", "1e308", "4294967296", "-4294967296",
         "1000000000000", "-1000000000000", "2147483648", "-2147483649", "17179869184"]
QUICK_EDGES = EDGES[:7] + ["nan", "inf", "1e308", "-1000000000000"]
ALL_EDGES = os.environ.get("GOBLIN_FUZZ_EDGES", "") == "all"

# Not fuzzed: they end or change the connection or the server (SHUTDOWN, QUIT, RESET, HELLO,
# SELECT, AUTH, MONITOR, the subscribe family, MULTI/EXEC/WATCH), the whole dataset (FLUSHALL,
# FLUSHDB, SWAPDB, DEBUG, SAVE, BGSAVE, BGREWRITEAOF, FAILOVER, REPLICAOF), the server's
# settings (CONFIG), other clients (CLIENT), or they block (the B* pops and WAIT take a timeout,
# and a huge one blocks by design).
EXCLUDED = {"shutdown", "quit", "reset", "hello", "select", "auth", "monitor", "subscribe", "psubscribe",
            "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe", "multi", "exec", "discard", "watch",
            "flushall", "flushdb", "swapdb", "debug", "save", "bgsave", "bgrewriteaof", "config", "client",
            "failover", "replicaof", "slaveof", "sync", "psync", "wait", "waitaof", "command", "acl",
            "script", "function", "cluster", "module", "latency", "lastsave"}

KEY_BY_GROUP = {"list": "L", "hash": "H", "set": "S", "sorted_set": "Z", "sorted-set": "Z", "string": "STR",
                "bitmap": "STR", "hyperloglog": "STR", "geo": "Z", "array": "ARR", "generic": "STR"}


def seed(client, goblin: bool) -> None:
    client.execute_command("SELECT", "0")         # a SELECT case may have moved the connection
    client.execute_command("FLUSHALL")
    client.execute_command("RPUSH", "L", "a", "b", "c")
    client.execute_command("HSET", "H", "f", "1", "g", "2")
    client.execute_command("SADD", "S", "a", "b", "c")
    client.execute_command("ZADD", "Z", "1", "a", "2", "b", "3", "c")
    client.execute_command("SET", "STR", "hello")
    if goblin:
        client.execute_command("ARSET", "ARR", "0", "a")


def pairs(flat) -> dict:
    return {flat[i].decode() if isinstance(flat[i], bytes) else flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def build(arguments, key: str, choices: dict | None = None, path: str = "",
          seen: dict | None = None) -> list[tuple[str, bool]]:
    """argv words for a documented argument list: (word, is a number). A one-of takes the
    branch choices[its path] names (by default its first valued branch); seen collects every
    one-of met on the way, path -> its number of branches."""
    choices = choices or {}
    words: list[tuple[str, bool]] = []
    for index, raw in enumerate(arguments):
        spec = pairs(raw)
        kind = spec["type"].decode()
        here = f"{path}/{index}"
        if spec.get("token") is not None and kind != "pure-token":
            words.append((spec["token"].decode(), False))
        if kind == "key":
            words.append((key, False))
        elif kind in ("integer", "unix-time"):
            words.append(("1", True))
        elif kind == "double":
            words.append(("1.5", True))
        elif kind == "pattern":
            words.append(("*", False))
        elif kind == "string":
            words.append(("a", False))
        elif kind == "pure-token":
            words.append((spec["token"].decode(), False))
        elif kind == "block":
            words += build(spec["arguments"], key, choices, here, seen)
        elif kind == "oneof":
            options = spec["arguments"]
            if seen is not None:
                seen[here] = len(options)
            if here in choices:
                chosen = options[choices[here]]
            else:
                valued = [o for o in options if pairs(o)["type"].decode() != "pure-token"]
                chosen = (valued or options)[0]
            words += build([chosen], key, choices, here, seen)
    return words


def variants(arguments, key: str) -> list[list[tuple[str, bool]]]:
    """The argument list as documented (each one-of's first valued branch), then once per
    other branch of every one-of (nested ones too), so that every numeric argument any branch
    carries is reached: SET's PX and EXAT as well as EX, BITFIELD's INCRBY as well as GET."""
    seen: dict = {}
    base = build(arguments, key, {}, "", seen)
    out, tried, pending = [base], set(), [({}, seen)]
    while pending:
        chosen, met = pending.pop()
        for where, count in met.items():
            for branch in range(count):
                choice = {**chosen, where: branch}
                signature = tuple(sorted(choice.items()))
                if signature in tried:
                    continue
                tried.add(signature)
                found: dict = {}
                words = build(arguments, key, choice, "", found)
                if words not in out:
                    out.append(words)
                nested = {w: c for w, c in found.items() if w not in met and w not in chosen}
                if nested and len(choice) < 3:
                    pending.append((choice, nested))
    return out


def cases(docs: dict) -> list[tuple[str, list[str]]]:
    """(command, argv) for every edge value in every numeric position of every command."""
    out = []
    for name, doc in docs.items():
        entries = [(name, [name], doc)]
        subcommands = doc.get("subcommands")
        if subcommands:
            entries = [(sub, [name, sub.split("|", 1)[1]], pairs(subdoc))
                       for sub, subdoc in pairs(subcommands).items()]
            entries = [(sub, argv, d) for sub, argv, d in entries if "help" not in sub]
        for label, prefix, command_doc in entries:
            if name in EXCLUDED:
                continue
            group = command_doc.get("group", b"generic")
            key = KEY_BY_GROUP.get(group.decode() if isinstance(group, bytes) else group, "STR")
            for words in variants(command_doc.get("arguments") or [], key):
                numeric = [i for i, (_, is_number) in enumerate(words) if is_number]
                out.append((label, prefix + [w for w, _ in words]))     # as documented, once
                for position in numeric:
                    for edge in EDGES:
                        argv = [w for w, _ in words]
                        argv[position] = edge
                        out.append((label, prefix + argv))
    return out


# Commands the table's walk leaves out (they change the connection, the server or other
# clients) but whose numbers are as client-supplied as any: each edge in each position, the
# connection put back by seed() (SELECT 0) or by restore() (a CONFIG SET's old value).
# CLIENT KILL takes IDs only (edges name no live client); MAXAGE 0 would kill the tester.
CONNECTION_CASES = [("select", ["SELECT", "{}"]), ("swapdb", ["SWAPDB", "{}", "0"]), ("swapdb", ["SWAPDB", "0", "{}"]),
                    ("hello", ["HELLO", "{}"]), ("client|list", ["CLIENT", "LIST", "ID", "{}"]),
                    ("client|unblock", ["CLIENT", "UNBLOCK", "{}"]), ("client|unblock", ["CLIENT", "UNBLOCK", "{}", "ERROR"]),
                    ("client|kill", ["CLIENT", "KILL", "ID", "{}"]),
                    ("client|kill", ["CLIENT", "KILL", "ID", "{}", "SKIPME", "yes"])]
# Settings that are not the server's to lose in a test: where it listens and its databases.
CONFIG_KEPT = {"port", "databases"}


def numeric_settings(client) -> dict[str, str]:
    flat = client.execute_command("CONFIG", "GET", "*")
    settings = {}
    for name, value in pairs(flat).items():
        text = value.decode() if isinstance(value, bytes) else str(value)
        if text.lstrip("-").isdigit() and name not in CONFIG_KEPT:
            settings[name] = text
    return settings


def extra_cases(settings: dict[str, str]) -> list[tuple[str, list[str]]]:
    out = []
    for label, template in CONNECTION_CASES:
        for edge in EDGES:
            out.append((label, [edge if word == "{}" else word for word in template]))
    for name in sorted(settings):
        for edge in EDGES:
            out.append(("config|set", ["CONFIG", "SET", name, edge]))
    return out


def restore(client, argv, result: str, settings: dict[str, str]) -> None:
    """Put back what a CONFIG SET case changed."""
    if result == "ok" and argv[:2] == ["CONFIG", "SET"] and argv[2] in settings:
        client.execute_command("CONFIG", "SET", argv[2], settings[argv[2]])


def outcome(client, argv) -> str:
    """'ok', or the error text; raises ConnectionError/TimeoutError for a server that is gone."""
    try:
        client.execute_command(*argv)
        return "ok"
    except ResponseError as error:
        return "error:" + str(error)


def peak_rss_bytes(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


# Redis itself would build an unbounded reply (or hang) for these, so they are not sent to it.
def unbounded_in_redis(argv: list[str]) -> bool:
    name = argv[0].lower()
    if argv[:3] == ["CONFIG", "SET", "maxclients"]:
        return True                            # redis-server 7.0 loops on a huge maxclients
    if name in ("srandmember", "zrandmember", "hrandfield") and len(argv) >= 3:
        try:
            return int(argv[2]) < -1000000
        except ValueError:
            return False
    return False


NUMBER_REFUSALS = ("out of range", "not an integer", "not a valid float", "is not a float", "overflow",
                   "must be positive", "can't be negative", "is negative", "not a number")


@pytest.fixture(scope="module")
def redis_port():
    if not shutil.which("redis-server"):
        pytest.skip("needs redis-server")
    port = free_port()
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--maxmemory", "256mb", "--dir", "/tmp", "--daemonize", "no"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wait_for_line(process, process.stdout, "Ready to accept connections")
    yield port
    process.kill()
    process.wait()
    process.stdout.close()


def test_edge_numbers_in_every_numeric_argument_never_crash_never_grow_and_refuse_as_redis(tmp_path, redis_port):
    server = GoblinServer(tmp_path / "run", "--maxmemory", "256mb").start()
    mismatched_texts: list[str] = []
    accepted_what_redis_refuses: list[str] = []
    try:
        goblin = RespClient(port=server.port, socket_timeout=20.0)
        docs = pairs(goblin.execute_command("COMMAND", "DOCS"))
        docs = {(k.decode() if isinstance(k, bytes) else k): pairs(v) for k, v in docs.items()}
        all_cases = cases(docs)
        assert len({label for label, _ in all_cases}) > 100
        redis_docs = pairs(RespClient(port=redis_port, socket_timeout=5.0).execute_command("COMMAND", "DOCS"))
        redis_names = set(redis_docs)
        redis = RespClient(port=redis_port, socket_timeout=5.0)
        settings = numeric_settings(goblin)
        redis_settings = numeric_settings(redis)
        all_cases += extra_cases(settings)
        ring = RingClient(server.name, runtime_dir=server.runtime_dir, timeout=20.0)
        ring_edges = set(EDGES if ALL_EDGES else QUICK_EDGES)
        for label, argv in all_cases:
            seed(goblin, True)
            try:
                mine = outcome(goblin, argv)
                restore(goblin, argv, mine, settings)
            except (ConnectionError, GoblinTimeout, OSError) as error:
                pytest.fail(f"{' '.join(argv)}: the server did not answer ({error})\n{''.join(server.log)}")
            redis_has = argv[0].lower() in redis_names and (argv[:2] != ["CONFIG", "SET"] or argv[2] in redis_settings)
            if redis_has and not unbounded_in_redis(argv):
                seed(redis, False)
                theirs = outcome(redis, argv)
                restore(redis, argv, theirs, redis_settings)
                if theirs != mine:
                    if theirs.startswith("error:") and mine == "ok" and \
                            any(text in theirs for text in NUMBER_REFUSALS):
                        accepted_what_redis_refuses.append(f"{' '.join(argv)}: redis {theirs}")
                    else:
                        mismatched_texts.append(f"{' '.join(argv)}: redis {theirs} | goblin {mine}")
            if any(word in ring_edges for word in argv):
                seed(ring, True)
                try:
                    on_ring = outcome(ring, argv)
                    restore(ring, argv, on_ring, settings)
                except (ConnectionError, GoblinTimeout, OSError) as error:
                    pytest.fail(f"{' '.join(argv)} over the ring: no answer ({error})\n{''.join(server.log)}")
                assert on_ring == mine, f"{' '.join(argv)}: ring {on_ring} | resp {mine}"
        peak = peak_rss_bytes(server.pid)
        assert goblin.ping() is True
        ring.close()
        goblin.close()
        redis.close()
    finally:
        server.stop()
    print(f"\n{len(all_cases)} cases over {len({label for label, _ in all_cases})} commands; peak RSS "
          f"{peak / 2**20:.0f} MiB; {len(mismatched_texts)} answers differ from redis's in text only")
    for line in mismatched_texts[:int(os.environ.get("GOBLIN_FUZZ_SHOW", "40"))]:
        print("  ", line)
    assert peak < 1 << 30
    assert accepted_what_redis_refuses == [], "\n".join(accepted_what_redis_refuses)


# ---- typed ring requests: the fields the server takes as they come --------------------------------

# A ring client may send typed requests (SBE) whose numeric fields no builder checked: the
# RingClient builds them with the same validation as RESP, but a hostile or buggy client can
# set any field to anything the encoder takes. Every command with a typed form, each numeric
# field of gr_request_t set to its extremes in turn.
TYPED_EDGES = {"count": [2**32 - 1, 1 << 24, 0], "max_len": [2**32 - 1, 0],
               "index": [-2**63, 2**63 - 1, 2**40], "index2": [-2**63, 2**63 - 1, -2**40],
               "cursor": [2**64 - 1], "timeout": [float("nan"), float("inf"), -1.0, 1e308],
               "flag": [1, 255], "end": [1, 255], "to_end": [1, 255], "engine": [1, 2, 255]}


def typed_request(argv: list[str]):
    """The typed request the ring client would send for argv, or None (no typed form)."""
    from goblin_ring._native import ffi, lib
    raw = [word.encode() for word in argv]
    keep = [ffi.from_buffer(word) for word in raw]
    pointers = ffi.new("const uint8_t *[]", [ffi.cast("const uint8_t *", k) for k in keep])
    lengths = ffi.new("size_t[]", [len(word) for word in raw])
    request = ffi.new("gr_request_t *")
    items = ffi.new("gr_bytes_t[]", max(1, len(raw)))
    error = ffi.new("gr_build_error_t *")
    if lib.gr_request_from_argv(len(raw), pointers, lengths, request, items, len(raw), error) < 0 or \
            request.template_id == lib.GR_T_COMMAND:
        return None
    return request, (raw, keep, pointers, lengths, items)


def test_typed_ring_requests_with_extreme_fields_never_crash_never_grow(tmp_path):
    from goblin_ring._native import ffi, lib
    server = GoblinServer(tmp_path / "run", "--maxmemory", "256mb").start()
    try:
        resp = RespClient(port=server.port, socket_timeout=20.0)
        docs = pairs(resp.execute_command("COMMAND", "DOCS"))
        docs = {(k.decode() if isinstance(k, bytes) else k): pairs(v) for k, v in docs.items()}
        ring = RingClient(server.name, runtime_dir=server.runtime_dir, timeout=20.0)
        core = ring._live()
        result = ffi.new("gr_result_t *")
        forms, sent, commands = set(), 0, set()
        for label, argv in cases(docs):
            if any(edge in argv for edge in EDGES) or tuple(argv) in forms:
                continue                           # the documented forms only: the fields vary here
            forms.add(tuple(argv))
            built = typed_request(argv)
            if built is None:
                continue
            request, _keep = built
            commands.add(label)
            base = {field: getattr(request, field) for field in TYPED_EDGES}
            for field, values in TYPED_EDGES.items():
                for value in values:
                    seed(resp, True)
                    for name, original in base.items():
                        setattr(request, name, original)
                    setattr(request, field, value)
                    status = lib.gr_client_call(core.pointer, request, result)
                    if status == lib.GR_CLIENT_ENCODE:      # the encoder refuses it: never sent
                        continue
                    assert status == lib.GR_CLIENT_OK, \
                        f"{' '.join(argv)} with {field}={value}: no answer ({status})\n{''.join(server.log)}"
                    sent += 1
        assert len(commands) > 50
        assert ring.ping() is True and resp.ping() is True
        peak = peak_rss_bytes(server.pid)
        ring.close()
        resp.close()
    finally:
        server.stop()
    print(f"\n{sent} typed requests over {len(commands)} commands; peak RSS {peak / 2**20:.0f} MiB")
    assert peak < 1 << 30
