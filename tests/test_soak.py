"""The soak: many RESP clients and ring sessions doing mixed list and string
commands while one client after another is killed with SIGKILL.

Each client is its own process (forked, so a kill takes exactly one session or connection
with it) working on its own keys, and logs every write the server acknowledged, one line per
write, before its next command. At the end: the server is alive and stops cleanly, every
surviving client saw zero errors, and every acknowledged write of every client, killed ones
included, is in the keyspace.

Short by default (a few seconds in the suite). The size flag:
    GOBLIN_SOAK_SECONDS=600 python -m pytest tests/test_soak.py        # or
    python tests/test_soak.py --seconds 600 [--resp 50 --ring 16 --kill-every 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from goblin_ring import RespClient, RingClient, control

sys.path.insert(0, str(Path(__file__).parent))
from servers import GoblinServer  # noqa: E402


def client_main(kind: str, index: int, server_name: str, runtime_dir: str, port: int, log_path: str) -> None:
    """One client's life: mixed commands on its own keys until SIGTERM (survivor) or SIGKILL."""
    stopping = False

    def stop(_signum, _frame):
        nonlocal stopping
        stopping = True
    signal.signal(signal.SIGTERM, stop)
    log = open(log_path, "w", buffering=1)      # line-buffered: a logged write reached the file
    tag = f"{kind}{index}"
    rng = random.Random(index * 7919 + (kind == "ring"))
    try:
        client = (RingClient(server_name, runtime_dir=runtime_dir, timeout=30.0) if kind == "ring"
                  else RespClient(port=port, socket_timeout=30.0))
        sequence = 0
        while not stopping:
            sequence += 1
            choice = rng.random()
            if choice < 0.35:
                client.rpush(f"{tag}:list", f"v{sequence}")
                log.write(f"rpush {sequence}\n")
            elif choice < 0.6:
                client.set(f"{tag}:s{sequence}", f"value-{sequence}")
                log.write(f"set {sequence}\n")
            elif choice < 0.7:
                log.write(f"incr {client.incr(f'{tag}:counter')}\n")
            elif choice < 0.8:
                client.lpush(f"{tag}:scratch", "a", "b", "c")
                client.rpop(f"{tag}:scratch")
                client.lrange(f"{tag}:scratch", 0, 10)
            elif choice < 0.9:
                client.llen(f"{tag}:list")
                client.get(f"{tag}:s{rng.randint(1, sequence)}")
            else:
                client.ping()
                client.exists(f"{tag}:list")
        client.close()
        log.write("clean exit\n")
    except Exception as error:  # noqa: BLE001 - a survivor's error is what the soak looks for
        log.write(f"ERROR {type(error).__name__}: {error}\n")
        os._exit(1)
    os._exit(0)


def check_acknowledged_writes(checker: RespClient, tag: str, log_path: Path) -> list[str]:
    """Every write the client logged as acknowledged is in the keyspace; returns what is missing."""
    pushed, sets, counter = [], [], 0
    for line in log_path.read_text().splitlines():
        word, _, value = line.partition(" ")
        if word == "rpush":
            pushed.append(f"v{value}".encode())
        elif word == "set":
            sets.append(int(value))
        elif word == "incr":
            counter = int(value)
    missing = []
    stored = checker.lrange(f"{tag}:list", 0, -1)
    if stored[:len(pushed)] != pushed:
        missing.append(f"{tag}:list holds {len(stored)} values, {len(pushed)} were acknowledged")
    for sequence in sets:
        if checker.get(f"{tag}:s{sequence}") != f"value-{sequence}".encode():
            missing.append(f"{tag}:s{sequence}")
    if counter and int(checker.get(f"{tag}:counter") or 0) < counter:
        missing.append(f"{tag}:counter below the acknowledged {counter}")
    return missing


def run_soak(workdir: Path, seconds: float, resp_clients: int, ring_clients: int, kill_every: float) -> dict:
    runtime_dir = workdir / "runtime"
    logs = workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    server = GoblinServer(runtime_dir, "--maxclients", str(resp_clients + ring_clients + 16)).start()
    fork = multiprocessing.get_context("fork")
    clients: dict[str, multiprocessing.Process] = {}
    killed: list[str] = []
    try:
        for kind, count in (("resp", resp_clients), ("ring", ring_clients)):
            for index in range(count):
                tag = f"{kind}{index}"
                process = fork.Process(target=client_main, args=(kind, index, server.name, str(runtime_dir),
                                                                 server.port, str(logs / f"{tag}.log")))
                process.start()
                clients[tag] = process
        rng = random.Random(15)
        end = time.monotonic() + seconds
        next_kill = time.monotonic() + kill_every
        while time.monotonic() < end:
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))
            assert server.process.poll() is None, "the server died"
            if time.monotonic() >= next_kill:
                alive = [tag for tag, process in clients.items() if tag not in killed and process.is_alive()]
                if len(alive) > 1:
                    victim = rng.choice(alive)
                    os.kill(clients[victim].pid, signal.SIGKILL)
                    killed.append(victim)
                next_kill += kill_every
        for tag, process in clients.items():
            if tag not in killed:
                process.terminate()             # SIGTERM: finish the command in hand, close, exit 0
        errors = {}
        for tag, process in clients.items():
            process.join(timeout=60)
            if tag not in killed and process.exitcode != 0:
                errors[tag] = (logs / f"{tag}.log").read_text().splitlines()[-1:]
        with RespClient(port=server.port, socket_timeout=30.0) as checker:
            missing = [gap for tag in clients for gap in check_acknowledged_writes(checker, tag, logs / f"{tag}.log")]
            writes = sum(len((logs / f"{tag}.log").read_text().splitlines()) for tag in clients)
            assert checker.ping()
    finally:
        for process in clients.values():
            if process.is_alive():
                process.kill()
                process.join()
        exit_code = server.stop()
    leftovers = [entry.name for entry in Path("/dev/shm").iterdir()
                 if (parsed := control.parse_segment_name(entry.name)) and parsed[0] == server.name]
    return {"errors": errors, "missing": missing, "killed": killed, "writes": writes, "exit": exit_code,
            "leftover_segments": leftovers, "runtime_dir": sorted(p.name for p in runtime_dir.iterdir()),
            "log": "".join(server.log)}


def test_a_soak_with_clients_killed_by_sigkill_loses_no_acknowledged_write(tmp_path):
    seconds = float(os.environ.get("GOBLIN_SOAK_SECONDS", "6"))
    result = run_soak(tmp_path, seconds, resp_clients=50, ring_clients=16, kill_every=max(0.5, min(3.0, seconds / 6)))
    assert result["exit"] == 0, result["log"]
    assert result["errors"] == {}, result["errors"]
    assert result["missing"] == [], result["missing"][:10]
    assert len(result["killed"]) >= 3 and result["writes"] > 1000, (result["killed"], result["writes"])
    assert result["leftover_segments"] == [] and result["runtime_dir"] == []


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="goblin-ring soak: clients killed with -9 under load")
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--resp", type=int, default=50)
    parser.add_argument("--ring", type=int, default=16)
    parser.add_argument("--kill-every", type=float, default=3.0)
    options = parser.parse_args()
    import tempfile
    with tempfile.TemporaryDirectory() as directory:
        outcome = run_soak(Path(directory), options.seconds, options.resp, options.ring, options.kill_every)
    outcome.pop("log")
    print({key: value if not isinstance(value, list) or len(value) < 20 else f"{len(value)} items"
           for key, value in outcome.items()})
    sys.exit(0 if not outcome["errors"] and not outcome["missing"] and outcome["exit"] == 0 else 1)
