"""script_targets.py — issue 32's scripting targets, measured side by side in one run (the
goblin-ring-bench `script` scenario is not built yet):

    python bench/script_targets.py [-n 20000]

  1. RingClient.evalsha of a one-call script (INCR) against redis-py's EVALSHA to redis-server
     over a Unix socket (target >= 10x), and against the ring's plain INCR (target >= 0.5x);
  2. EVALSHA with redis-benchmark -P 16 -c 1 against goblin's RESP port and redis-server's
     (target >= 1.2x);
  3. the same two comparisons for FCALL of a one-call function (INCR): RingClient.fcall (a typed
     FCallRequest) against redis-py's FCALL over the Unix socket, and redis-benchmark FCALL.
Servers are started here (goblin: server core 0; clients on core 1 via taskset of this process)."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import redis  # noqa: E402

from goblin_ring import RingClient  # noqa: E402
from servers import GoblinServer, free_port, wait_for_line  # noqa: E402

SCRIPT = "return redis.call('incr', KEYS[1])"
LIBRARY = "#!lua name=bench\nredis.register_function('incr1', function(keys) return redis.call('incr', keys[1]) end)"


def rate(function, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        function()
    return n / (time.perf_counter() - start)


def benchmark(port: int, sha: str, n: int, command: str = "evalsha") -> float:
    out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(port), "-c", "1", "-P", "16", "-n", str(n),
                          "-q", command, sha, "1", "bk"], capture_output=True, text=True, check=True).stdout
    return float(re.findall(r"([\d.]+) requests per second", out)[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=20000)
    args = parser.parse_args()
    os.sched_setaffinity(0, {1})
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        socket_path = directory / "redis.sock"
        redis_port = free_port()
        redis_process = subprocess.Popen(
            ["taskset", "-c", "0", "redis-server", "--port", str(redis_port), "--unixsocket", str(socket_path),
             "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--dir", scratch],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for_line(redis_process, redis_process.stdout, "Ready to accept")
        goblin = GoblinServer(directory / "g", "--server-core", "0").start()
        try:
            ring = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir)
            sha = ring.script_load(SCRIPT)
            uds = redis.Redis(unix_socket_path=str(socket_path), protocol=2)
            assert uds.script_load(SCRIPT) == sha
            ring_evalsha = rate(lambda: ring.evalsha(sha, 1, "k"), args.n)
            ring_incr = rate(lambda: ring.incr("k2"), args.n)
            redispy_evalsha = rate(lambda: uds.evalsha(sha, 1, "k"), args.n)
            goblin_resp = benchmark(goblin.port, sha, args.n * 10)
            redis_resp = benchmark(redis_port, sha, args.n * 10)
            ring.function_load(LIBRARY, replace=True)
            uds.function_load(LIBRARY, replace=True)
            ring_fcall = rate(lambda: ring.fcall("incr1", 1, "k"), args.n)
            redispy_fcall = rate(lambda: uds.fcall("incr1", 1, "k"), args.n)
            goblin_resp_fcall = benchmark(goblin.port, "incr1", args.n * 10, "fcall")
            redis_resp_fcall = benchmark(redis_port, "incr1", args.n * 10, "fcall")
            print(f"ring evalsha (INCR script)        {ring_evalsha:12.0f}/s")
            print(f"ring plain INCR                   {ring_incr:12.0f}/s")
            print(f"redis-py EVALSHA, redis UDS       {redispy_evalsha:12.0f}/s")
            print(f"goblin RESP EVALSHA -P16 -c1      {goblin_resp:12.0f}/s")
            print(f"redis-server EVALSHA -P16 -c1     {redis_resp:12.0f}/s")
            print(f"ring evalsha / redis-py evalsha   {ring_evalsha / redispy_evalsha:6.2f}x (target >= 10)")
            print(f"ring evalsha / ring INCR          {ring_evalsha / ring_incr:6.2f}x (target >= 0.5)")
            print(f"goblin RESP / redis-server        {goblin_resp / redis_resp:6.2f}x (target >= 1.2)")
            print(f"ring fcall / redis-py fcall       {ring_fcall / redispy_fcall:6.2f}x ({ring_fcall:.0f}/s vs "
                  f"{redispy_fcall:.0f}/s)")
            print(f"ring fcall / ring INCR            {ring_fcall / ring_incr:6.2f}x")
            print(f"goblin RESP FCALL / redis-server  {goblin_resp_fcall / redis_resp_fcall:6.2f}x ({goblin_resp_fcall:.0f}/s "
                  f"vs {redis_resp_fcall:.0f}/s)")
            ring.close()
            uds.close()
        finally:
            goblin.stop()
            redis_process.terminate()
            redis_process.wait(10)


if __name__ == "__main__":
    main()
