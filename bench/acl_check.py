#!/usr/bin/env python3
"""The ACL check's cost on the ring: GET and LLEN through the native RingClient as the default
user (+@all ~*: admission's one bit test) and as a restricted user (-@all +get +llen ~k*: the bit
test, then the key against its pattern), in alternating rounds on one server, best of 5 rounds
of 200,000 calls each. Server pinned to core 0, client to core 1. Target: <= 3% added.

    python bench/acl_check.py [calls-per-round]
"""
import os, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from servers import GoblinServer
from goblin_ring import RingClient

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
os.sched_setaffinity(0, {1})


def rate(client, command) -> float:
    t = time.perf_counter()
    for _ in range(CALLS):
        command(client)
    return CALLS / (time.perf_counter() - t)


with tempfile.TemporaryDirectory() as directory:
    server = GoblinServer(Path(directory), "--server-core", "0").start()
    try:
        admin = RingClient(name=server.name, runtime_dir=server.runtime_dir)
        admin.set("k1", "v")
        admin.rpush("k2", "a")
        admin.execute_command("ACL", "SETUSER", "bench", "on", ">pw", "-@all", "+get", "+llen", "~k*")
        restricted = RingClient(name=server.name, runtime_dir=server.runtime_dir, username="bench", password="pw")
        default = RingClient(name=server.name, runtime_dir=server.runtime_dir)   # made after: same footing
        sessions = (("default", default), ("restricted", restricted), ("default-2", admin))
        for name, command in (("GET", lambda c: c.get("k1")), ("LLEN", lambda c: c.llen("k2"))):
            best = {label: 0.0 for label, _ in sessions}
            for _ in range(5):
                for label, client in sessions:
                    best[label] = max(best[label], rate(client, command))
            added = (best["default"] / best["restricted"] - 1) * 100
            spread = abs(best["default"] / best["default-2"] - 1) * 100
            print(f"{name}: default {best['default']:,.0f}/s, restricted {best['restricted']:,.0f}/s, "
                  f"per-call cost added {added:+.1f}% (two default sessions differ by {spread:.1f}%)")
        restricted.close()
        default.close()
        admin.close()
    finally:
        server.stop()
