"""Issue 31's durability targets, measured: acknowledged-but-lost writes across the disk's
error paths and across kill -9, over many rounds, both transports.

    python bench/persist_faults.py --rounds 10 [--only disk-full,fsync-eio,bgsave,kill9]

Scenarios (each round: writers on RESP and on the ring, every acknowledged write recorded,
then a restart on the same files and a check that each one is there):
  disk-full   tests/test_persistence_errors.py's script (a 4 MiB tmpfs in a private mount
              namespace, filled but for 64 KiB) under appendfsync always / everysec / no;
              the space comes back, one more write, then SIGTERM or kill -9; the log must
              load with aof-load-truncated no.
  fsync-eio   appendfsync everysec and always with the LD_PRELOAD shim of the same test file:
              fsync fails with EIO from 0.3 s to 1.0 s into a stream of writes; then kill -9.
  bgsave      --save "3600 1", the dump file a directory so BGSAVE fails: writes are refused
              (-MISCONF) until the directory goes and a BGSAVE succeeds; then SIGTERM.
  kill9       kill -9 at a random moment 0.3-1.5 s into a stream of writes (always and
              everysec: the AOF; snapshot: BGSAVE while writing, only writes acked before the
              BGSAVE was asked count), the issue's no-regression check.
Prints one line per scenario: rounds, writes acknowledged, lost, and the log-load failures.
Needs unshare -m (root) for disk-full and gcc for the shim.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from goblin_ring import ConnectionError, RespClient, ResponseError, RingClient  # noqa: E402
from servers import GoblinServer  # noqa: E402
import test_persistence_errors as faults  # noqa: E402


def connect(server, transport):
    if transport == "ring":
        return RingClient(server.name, runtime_dir=server.runtime_dir, timeout=10.0)
    return RespClient(port=server.port, socket_timeout=10.0)


class Writer(threading.Thread):
    """SET <transport>:<i> i until stopped or the server goes; acked holds what was answered OK."""

    def __init__(self, server, transport):
        super().__init__(daemon=True)
        self.client = connect(server, transport)
        self.transport = transport
        self.acked: list[str] = []
        self.refused = 0
        self.stop = threading.Event()

    def run(self):
        i = 0
        while not self.stop.is_set():
            key = f"{self.transport}:{i}"
            try:
                self.client.set(key, str(i))
                self.acked.append(key)
            except ResponseError:
                self.refused += 1
                time.sleep(0.005)
            except Exception:
                return
            i += 1


def lost_after_restart(runtime, args, name, acked: list[str]) -> tuple[list[str], bool]:
    again = GoblinServer(runtime, *args, name=name)
    try:
        again.start()
    except RuntimeError:
        again.stop()
        return acked, False
    with RespClient(port=again.port, socket_timeout=10.0) as check:
        lost = []
        for start in range(0, len(acked), 1000):
            chunk = acked[start:start + 1000]
            values = check.mget(chunk) if chunk else []
            lost += [key for key, value in zip(chunk, values) if value is None or value.decode() != key.split(":")[1]]
    again.stop()
    return lost, True


def kill9(server) -> None:
    server.process.kill()
    server.process.wait()
    server.process.stderr.close()
    server.process = None


def run_writers(server, seconds, during=None):
    writers = [Writer(server, t) for t in ("resp", "ring")]
    for w in writers:
        w.start()
    if during:
        during()
    else:
        time.sleep(seconds)
    return writers


def finish(writers):
    for w in writers:
        w.stop.set()
    for w in writers:
        w.join(timeout=15)
        try:
            w.client.close()
        except Exception:
            pass
    return [key for w in writers for key in w.acked], sum(w.refused for w in writers)


# ---- scenarios ---------------------------------------------------------------------------------

def disk_full(round_index, work):
    out = []
    for mode, end in (("always", "exit"), ("everysec", "sigterm"), ("everysec", "kill9"),
                      ("no", "sigterm"), ("no", "kill9")):
        transport = ("resp", "ring")[round_index % 2]
        base = Path(tempfile.mkdtemp(dir=work))
        disk = base / "disk"
        disk.mkdir()
        script = faults.DISK_FULL_SCRIPT.format(tests=str(ROOT / "tests"), disk=str(disk), runtime=str(base / "run"),
                                                mode=mode, transport=transport, end=end)
        done = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", script],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            out.append({"case": f"{mode}/{end}", "acked": 0, "lost": -1, "load_failed": 1, "error": done.stderr[-500:]})
            continue
        seen = json.loads(done.stdout.strip().splitlines()[-1])
        out.append({"case": f"{mode}/{end}", "acked": seen["acked"] + (1 if mode != "always" else 0),
                    "lost": len(seen["lost"]), "load_failed": int(seen["exit_after"] != 0)})
    return out


def fsync_eio(round_index, work, shim):
    out = []
    for mode in ("everysec", "always"):
        base = Path(tempfile.mkdtemp(dir=work))
        flag = base / "fail-fsync"
        args = ("--appendonly", "yes", "--appendfsync", mode, "--aof-load-truncated", "no")
        import os
        os.environ["LD_PRELOAD"], os.environ["GOBLIN_TEST_FSYNC_FAIL"] = str(shim), str(flag)
        try:
            server = GoblinServer(base / "run", *args).start()
        finally:
            del os.environ["LD_PRELOAD"], os.environ["GOBLIN_TEST_FSYNC_FAIL"]

        def inject():
            time.sleep(0.3)
            flag.touch()
            time.sleep(0.7)
            flag.unlink()
            time.sleep(0.5 if mode == "everysec" else 0.0)
        writers = run_writers(server, 0, inject)
        if server.process.poll() is None:
            kill9(server)
        else:
            server.process.stderr.close()
            server.process = None
        acked, refused = finish(writers)
        lost, loaded = lost_after_restart(base / "run", args, server.name, acked)
        out.append({"case": mode, "acked": len(acked), "refused": refused, "lost": len(lost), "load_failed": int(not loaded)})
    return out


def bgsave(round_index, work):
    base = Path(tempfile.mkdtemp(dir=work))
    data = base / "data"
    data.mkdir()
    args = ("--dir", str(data), "--save", "3600 1")
    server = GoblinServer(base / "run", *args).start()
    admin = RespClient(port=server.port, socket_timeout=10.0)

    def fail_then_fix():
        (data / "dump.grdb").mkdir()
        time.sleep(0.2)
        admin.execute_command("BGSAVE")
        deadline = time.monotonic() + 10
        while admin.info("persistence")["rdb_bgsave_in_progress"] and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)                     # writes refused meanwhile
        (data / "dump.grdb").rmdir()
        admin.execute_command("BGSAVE")
        while admin.info("persistence")["rdb_last_bgsave_status"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
    writers = run_writers(server, 0, fail_then_fix)
    acked, refused = finish(writers)
    admin.close()
    code = server.stop()                    # SIGTERM: the shutdown save
    lost, loaded = lost_after_restart(base / "run", args, server.name, acked)
    return [{"case": "bgsave", "acked": len(acked), "refused": refused, "lost": len(lost),
             "load_failed": int(not loaded or code != 0)}]


def kill9_durability(round_index, work):
    out = []
    rng = random.Random(round_index)
    for mode in ("always", "everysec", "snapshot"):
        base = Path(tempfile.mkdtemp(dir=work))
        data = base / "data"
        data.mkdir()
        args = (("--appendonly", "yes", "--appendfsync", mode, "--dir", str(data)) if mode != "snapshot"
                else ("--dir", str(data), "--save", "")) + SERVER_CORE
        server = GoblinServer(base / "run", *args).start()
        admin = RespClient(port=server.port, socket_timeout=10.0)
        snapshot_marks = {}

        def wait_and_maybe_save():
            time.sleep(rng.uniform(0.3, 1.5))
            if mode == "snapshot":
                for w in writers_box[0]:
                    snapshot_marks[w.transport] = len(w.acked)
                admin.execute_command("BGSAVE")
                deadline = time.monotonic() + 10
                while admin.info("persistence")["rdb_saves"] < 1 and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(rng.uniform(0.0, 0.3))
        writers_box = [[]]
        writers = [Writer(server, t) for t in ("resp", "ring")]
        writers_box[0] = writers
        started = time.monotonic()
        for w in writers:
            w.start()
        wait_and_maybe_save()
        admin.close()
        kill9(server)
        elapsed = time.monotonic() - started
        every, _ = finish(writers)
        counted = every
        if mode == "snapshot":              # what a snapshot promises: the writes acked before BGSAVE
            counted = [key for w in writers for key in w.acked[:snapshot_marks[w.transport]]]
        lost, loaded = lost_after_restart(base / "run", args, server.name, counted)
        out.append({"case": mode, "acked": len(counted), "lost": len(lost), "load_failed": int(not loaded),
                    "rate": len(every) / elapsed})
    return out


SERVER_CORE: tuple[str, ...] = ()


def main() -> int:
    global SERVER_CORE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--only", default="disk-full,fsync-eio,bgsave,kill9")
    parser.add_argument("--server-core", type=int, help="kill9's servers pinned to this core (run the script "
                        "itself under taskset on another)")
    options = parser.parse_args()
    if options.server_core is not None:
        SERVER_CORE = ("--server-core", str(options.server_core))
    wanted = options.only.split(",")
    totals: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as work:
        shim = None
        if "fsync-eio" in wanted:
            shim = Path(work) / "fsync_shim.so"
            source = Path(work) / "fsync_shim.c"
            source.write_text(faults.FSYNC_SHIM)
            subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(shim), str(source), "-ldl"], check=True)
        for r in range(options.rounds):
            results = []
            if "disk-full" in wanted:
                results += [("disk-full " + x["case"], x) for x in disk_full(r, work)]
            if "fsync-eio" in wanted:
                results += [("fsync-eio " + x["case"], x) for x in fsync_eio(r, work, shim)]
            if "bgsave" in wanted:
                results += [("failed-bgsave", x) for x in bgsave(r, work)]
            if "kill9" in wanted:
                results += [("kill9 " + x["case"], x) for x in kill9_durability(r, work)]
            for label, x in results:
                t = totals.setdefault(label, {"rounds": 0, "acked": 0, "lost": 0, "load_failed": 0, "refused": 0,
                                              "worst_lost": 0, "rates": []})
                t["rounds"] += 1
                t["acked"] += x["acked"]
                t["lost"] += max(x["lost"], 0)
                t["worst_lost"] = max(t["worst_lost"], x["lost"])
                t["load_failed"] += x["load_failed"]
                t["refused"] += x.get("refused", 0)
                if "rate" in x:
                    t["rates"].append(x["rate"])
                if x.get("error"):
                    print(label, "error:", x["error"], file=sys.stderr)
            print(f"round {r + 1}/{options.rounds} done", file=sys.stderr, flush=True)
    sys.stderr.flush()
    for label, t in totals.items():
        rate = f"  acked writes/s {sum(t['rates']) / len(t['rates']):,.0f}" if t["rates"] else ""
        print(f"{label:28s} rounds {t['rounds']:3d}  acked {t['acked']:8d}  refused {t['refused']:6d}  "
              f"lost {t['lost']:5d} (worst round {t['worst_lost']})  log refused to load {t['load_failed']}{rate}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
