#!/usr/bin/env python3
"""The ACL check's cost on the ring: LPOP and LLEN (the issue's client-bench rows) and GET
through the native RingClient as the default user (+@all ~*: admission's one bit test) and as a
restricted user (-@all +get +llen +lpop ~k*: the bit test, then the key against its pattern).

Honest measurement: one session's rate differs from another's by far more than 3% (previous
runs saw up to 2.7x between sessions whose server path is identical), so a single pair of
sessions says nothing. Here SESSIONS sessions of each user are made interleaved (d r d r ...),
every round measures every session once in a rotated order, each session's figure is its
median over the rounds, and the result compares the median of the default sessions with the
median of the restricted ones, printing the session-to-session spread inside each group (the
noise floor the 3% target must be read against). Server pinned to core 0, client to core 1.

    python bench/acl_check.py [calls-per-round] [sessions-per-user] [rounds]
"""
import os, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from servers import GoblinServer
from goblin_ring import RingClient

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
SESSIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
os.sched_setaffinity(0, {1})


def rate(client, command) -> float:
    t = time.perf_counter()
    for _ in range(CALLS):
        command(client)
    return CALLS / (time.perf_counter() - t)


COMMANDS = (("LPOP", lambda c: c.lpop("k3")), ("LLEN", lambda c: c.llen("k2")), ("GET", lambda c: c.get("k1")))

with tempfile.TemporaryDirectory() as directory:
    server = GoblinServer(Path(directory), "--server-core", "0").start()
    clients = []
    try:
        admin = RingClient(name=server.name, runtime_dir=server.runtime_dir)
        clients.append(admin)
        admin.set("k1", "v")
        admin.rpush("k2", "a")
        admin.execute_command("ACL", "SETUSER", "bench", "on", ">pw", "-@all", "+get", "+llen", "+lpop", "~k*")
        sessions = []
        for i in range(SESSIONS):
            for label, kwargs in (("default", {}), ("restricted", {"username": "bench", "password": "pw"})):
                client = RingClient(name=server.name, runtime_dir=server.runtime_dir, **kwargs)
                clients.append(client)
                sessions.append((label, i, client))
        print(f"{CALLS:,} calls per measurement, {SESSIONS} sessions per user, {ROUNDS} rounds; load "
              f"{os.getloadavg()[0]:.2f}")
        for name, command in COMMANDS:
            rates = {(label, i): [] for label, i, _ in sessions}
            for _ in range(2):   # warm every session's path first
                for label, i, client in sessions:
                    rate(client, command) if CALLS <= 20_000 else [command(client) for _ in range(20_000)]
            for r in range(ROUNDS):
                order = sessions[r % len(sessions):] + sessions[:r % len(sessions)]
                for label, i, client in order:
                    rates[(label, i)].append(rate(client, command))
            per_session = {key: statistics.median(v) for key, v in rates.items()}
            groups = {label: sorted(v for (l, _), v in per_session.items() if l == label)
                      for label in ("default", "restricted")}
            medians = {label: statistics.median(v) for label, v in groups.items()}
            added = (medians["default"] / medians["restricted"] - 1) * 100
            spreads = {label: (max(v) / min(v) - 1) * 100 for label, v in groups.items()}
            print(f"{name}: default median {medians['default']:,.0f}/s, restricted median "
                  f"{medians['restricted']:,.0f}/s, per-call cost added {added:+.1f}%; session spread "
                  f"default {spreads['default']:.1f}%, restricted {spreads['restricted']:.1f}%")
            print("    sessions: " + ", ".join(f"{label[0]}{i} {per_session[(label, i)]:,.0f}"
                                               for label, i, _ in sessions))
        print(f"load after {os.getloadavg()[0]:.2f}")
    finally:
        for client in clients:
            client.close()
        server.stop()
