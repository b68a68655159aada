"""repl_primary.py — issue 35, goblin as a primary: a full sync of N mixed keys (bench/rdb_load.py's
workload) from a goblin primary to a redis-server 7.0 replica, beside redis-server -> redis-server,
same run, same keys.

    python bench/repl_primary.py [--keys 1000000] [--rounds 3] [--no-pin]

Each figure: REPLICAOF sent to a fresh redis-server replica -> its INFO says master_link_status:up
(the primary's RDB, the transfer and the replica's load), best of --rounds. Each primary runs in
both forms of the full sync: diskless (repl-diskless-sync yes, Redis 7.0's default: the RDB
streamed from the fork through a pipe) and disk (repl-diskless-sync no: an RDB file, then sent);
all with repl-diskless-sync-delay 0. Primaries are pinned to core 1 and replicas to core 0
(taskset) unless --no-pin. Machine load changes every figure: read the ratios side by side.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from goblin_ring import RespClient  # noqa: E402
from rdb_load import workload  # noqa: E402
from repl_sync import goblin, redis, stop, sync_seconds  # noqa: E402  (the servers and the sync timing)

PIN: dict[str, tuple[str, ...]] = {"primary": (), "replica": ()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-pin", action="store_true")
    options = parser.parse_args()
    if not options.no_pin and shutil.which("taskset"):
        PIN["primary"], PIN["replica"] = ("taskset", "-c", "1"), ("taskset", "-c", "0")
    data = workload(options.keys)
    with tempfile.TemporaryDirectory(prefix="repl-primary-") as temp:
        root = Path(temp)
        primaries = {
            "goblin diskless": goblin(root / "goblin-diskless", prefix=PIN["primary"]),
            "goblin disk": goblin(root / "goblin-disk", prefix=PIN["primary"]),
            "redis diskless": redis(root / "redis-diskless", "--repl-diskless-sync", "yes", prefix=PIN["primary"]),
            "redis disk": redis(root / "redis-disk", "--repl-diskless-sync", "no", prefix=PIN["primary"]),
        }
        try:
            for name, form in (("goblin diskless", "yes"), ("goblin disk", "no")):
                RespClient(port=primaries[name][1]).execute_command(
                    "CONFIG", "SET", "repl-diskless-sync", form, "repl-diskless-sync-delay", "0")
            for name, (_, port) in primaries.items():
                subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=data, check=True, capture_output=True)
            figures: dict[str, list[float]] = {name: [] for name in primaries}
            for round_ in range(options.rounds):
                for name, (_, primary_port) in primaries.items():
                    process, port = redis(root / f"replica-{name.replace(' ', '-')}-{round_}", prefix=PIN["replica"])
                    try:
                        figures[name].append(sync_seconds(port, primary_port))
                        keys = RespClient(port=port).execute_command("DBSIZE")
                        assert keys == RespClient(port=primary_port).execute_command("DBSIZE"), (name, keys)
                    finally:
                        stop(process)
            best = {name: min(values) for name, values in figures.items()}
            for name, values in figures.items():
                print(f"{name:16s} -> redis-server replica, full sync of {options.keys} keys: best {best[name]:.3f} s"
                      f"  ({', '.join(f'{v:.3f}' for v in values)})")
            for ours, reference in (("goblin diskless", "redis diskless"), ("goblin disk", "redis disk"),
                                    ("goblin diskless", "goblin disk")):
                ratio = best[reference] / best[ours]
                print(f"{ours} primary at {ratio:.2f}x the speed of a {reference} primary "
                      f"({'no slower' if ratio >= 1 else 'slower'})")
        finally:
            for process, _ in primaries.values():
                stop(process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
